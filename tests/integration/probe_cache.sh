#!/usr/bin/env bash
# probe_cache.sh: the quick probes kept in ~/.kgate/cache (core/plugins/
# probecache.c).  A second run uses them; every input that could change
# their answer makes the next run probe afresh (the plugin file replaced, a
# user-namespace sysctl, another uid, a place without user namespaces); a
# file that is not the user's private one is ignored; a program inside
# either box cannot change what the next launch reads; a launch that fails
# drops the entry.  Hits and misses are read from KGATE_DEBUG's lines
# ("kgate: probe cache: NAME: hit"), and each "miss" check has its "hit"
# control just before.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd cmp stat

OUT=$KG_TMP/out
ERR=$KG_TMP/err
has() { grep -q -- "$1" "$2" || { echo "no '$1' in:"; cat "$2"; return 1; }; }
hasnt() { ! grep -q -- "$1" "$2" || { echo "'$1' in:"; cat "$2"; return 1; }; }
dbg() { RC=0; as_user env KGATE_DEBUG=1 "$KGATE_BIN" "$@" >"$OUT" 2>"$ERR" || RC=$?; }
hit() { has "^kgate: probe cache: $1: hit$" "$ERR"; }
not_hit() { hasnt "^kgate: probe cache: $1: hit$" "$ERR" && has "^kgate: probe cache: $1: " "$ERR"; }

# A copy of the plugins in a directory only root can write, so one can be
# replaced (the build's own are left alone).
# Not $KG_TMP/plugins: lib.sh already keeps its copies there when the
# clone is one the unprivileged uid cannot read (/root/...).
PLUG=$KG_TMP/plugcopy
mkdir -p "$PLUG"
IFS=: read -r -a dirs <<<"$KGATE_PLUGIN_PATH"
n=0
for d in "${dirs[@]}"; do n=$((n + 1)); cp -r "$d" "$PLUG/$n"; done
KGATE_PLUGIN_PATH=$(printf '%s:' "$PLUG"/* | sed 's/:$//')
chmod -R go-w,a+rX "$PLUG"
BW=$(ls "$PLUG"/*/*bubblewrap*.so | head -1)
[ -f "$BW" ] || { echo "not ok - no bubblewrap plugin in $KGATE_PLUGIN_PATH"; exit 1; }

for who in $(test_users); do
    use_user "$who"
    C=$KG_HOME/.kgate/cache
    E=$C/probe.bubblewrap

    dbg run --dry-run -- true
    check "before the first launch: nothing kept, ~/.kgate not made" \
        sh -c "grep -q 'bubblewrap: not written' '$ERR' && [ ! -e '$KG_HOME/.kgate' ]"
    dbg run -- true
    check "first launch: exit 0" [ "$RC" -eq 0 ]
    dbg run -- true
    check "second launch: probed and written" has '^kgate: probe cache: bubblewrap: written$' "$ERR"
    check "the directory is the user's, 0700" \
        [ "$(stat -c '%u %a' "$C")" = "$KG_UID 700" ]
    check "the entry is the user's, 0600" [ "$(stat -c '%u %a' "$E")" = "$KG_UID 600" ]
    dbg run -- true
    check "third launch: bubblewrap from the cache" hit bubblewrap
    check "third launch: not written again" hasnt 'bubblewrap: written' "$ERR"
    check "third launch: exit 0" [ "$RC" -eq 0 ]

    # The plugin file replaced (same bytes, a new inode).
    cp "$BW" "$BW.new" && mv "$BW.new" "$BW"
    dbg run -- true
    check "plugin replaced: probed afresh" has 'bubblewrap: miss (the plugin file changed)' "$ERR"
    dbg run -- true
    check "plugin replaced: the run after hits" hit bubblewrap

    # A place without user namespaces: another agent's bwrap
    # --disable-userns (its HOME is ours, so the cache file is the same).
    if bwrap --help 2>&1 | grep -q -- '--disable-userns'; then
        RC=0
        in_disable_userns env KGATE_DEBUG=1 "$KGATE_BIN" run --dry-run -- true >"$OUT" 2>"$ERR" || RC=$?
        check "inside bwrap --disable-userns: not taken from the cache" not_hit bubblewrap
        check "inside bwrap --disable-userns: bubblewrap is not the plan" hasnt '^/usr/bin/bwrap' "$OUT"
        dbg run -- true
        check "back outside: probed afresh (the inside entry is not ours)" not_hit bubblewrap
        check "back outside: exit 0" [ "$RC" -eq 0 ]
        dbg run -- true
        check "back outside: the run after hits" hit bubblewrap
    fi
    # unshare: a user namespace of its own, where bwrap may well work, but
    # an entry made outside it must not be trusted.
    if [ "$who" = root ]; then
        RC=0
        (cd "$KG_PROJ" && HOME=$KG_HOME KGATE_DEBUG=1 unshare -U -r "$KGATE_BIN" run --dry-run -- true) \
            >"$OUT" 2>"$ERR" || RC=$?
        check "under unshare -U: not taken from the cache" not_hit bubblewrap
        dbg run -- true
        dbg run -- true
        check "after unshare: hits again" hit bubblewrap
    fi

    # A file that is not the user's private one is ignored, and replaced.
    chmod 0644 "$E"
    dbg run -- true
    check "mode 0644: ignored" has 'bubblewrap: ignored (not a 0600 file' "$ERR"
    check "mode 0644: rewritten 0600" [ "$(stat -c '%a' "$E")" = 600 ]
    printf 'kgate-probes\n garbage' >"$E.x" && chmod 0600 "$E.x" && mv "$E.x" "$E"
    dbg run -- true
    check "garbage: ignored, exit 0" sh -c "grep -q 'bubblewrap: ignored' '$ERR' && [ $RC -eq 0 ]"
    dbg run -- true
    check "garbage: the run after hits" hit bubblewrap

    # The attacker inside the box: replace the entry, plant one that would
    # send the next run to a weaker box.  The host's entry is unchanged and
    # the next launch still hits.
    cp -p "$E" "$KG_TMP/saved"
    ATTACK='echo inside; mkdir -p "$1"; for f in bubblewrap landlock; do
            echo forged >"$1/probe.$f" && echo "wrote $f"; done; true'
    dbg run -- sh -c "$ATTACK" sh "$C"
    check "bubblewrap box: the attack ran (marker)" has '^inside$' "$OUT"
    check "bubblewrap box: the host's entry unchanged" cmp -s "$E" "$KG_TMP/saved"
    check "bubblewrap box: no forged entry on the host" \
        sh -c "! grep -qs forged '$C'/probe.*"
    dbg run -- true
    check "after the bubblewrap box's attack: hit" hit bubblewrap
    if [ -e "$PLUG/landlock" ]; then
        dbg run --backend landlock -- sh -c "$ATTACK" sh "$C"
        if has '^inside$' "$OUT" >/dev/null; then
            check "landlock box: no write reached the cache" hasnt '^wrote' "$OUT"
            check "landlock box: the host's entry unchanged" cmp -s "$E" "$KG_TMP/saved"
            check "landlock box: no forged entry on the host" \
                sh -c "! grep -qs forged '$C'/probe.*"
            dbg run -- true
            check "after the landlock box's attack: hit" hit bubblewrap
        else
            echo "# the Landlock box cannot run here: its attack is not tried"
        fi
    fi

    # A launch that fails drops the entry, whatever the cache said: the
    # unprivileged user's fork is refused (RLIMIT_NPROC; root is exempt).
    if [ "$who" = user ]; then
        dbg run -- true
        check "control: hit before the failing launch" hit bubblewrap
        RC=0
        as_user env KGATE_DEBUG=1 prlimit --nproc=1:1 "$KGATE_BIN" run -- echo launched \
            >"$OUT" 2>"$ERR" || RC=$?
        check "failing launch: taken from the cache" hit bubblewrap
        check "failing launch: refused (125), nothing ran" \
            sh -c "[ $RC -eq 125 ] && ! grep -q launched '$OUT'"
        check "failing launch: the entry dropped" has 'bubblewrap: dropped' "$ERR"
        dbg run -- true
        check "after the failing launch: probed afresh" has 'bubblewrap: miss (no entry)' "$ERR"
    fi
done

# Another uid: root's entries, handed to the unprivileged user as its own
# files, are not trusted (the key holds the uid).
if [ "$(id -u)" -eq 0 ]; then
    use_user root
    dbg run -- true # makes ~/.kgate (the audit log)
    dbg run -- true
    dbg run -- true
    check "control: root's entry hits for root" hit bubblewrap
    ROOTC=$KG_HOME/.kgate/cache
    use_user user
    mkdir -p "$KG_HOME/.kgate/cache"
    cp "$ROOTC"/probe.* "$KG_HOME/.kgate/cache/"
    chmod 0700 "$KG_HOME/.kgate" "$KG_HOME/.kgate/cache"
    chmod 0600 "$KG_HOME/.kgate/cache"/*
    chown -R "$KG_UID:$KG_GID" "$KG_HOME/.kgate"
    dbg run -- true
    check "another uid: root's entry not used" not_hit bubblewrap
    check "another uid: exit 0" [ "$RC" -eq 0 ]

    # A user-namespace sysctl changed: the real one where /proc/sys can be
    # written (and put back), and always through the tests' stand-ins,
    # which the key reads beside the real ones.
    use_user root
    FAKE=$KG_TMP/sysctl
    mkdir -p "$FAKE/user" "$FAKE/kernel"
    echo 1000 >"$FAKE/user/max_user_namespaces"
    echo 1 >"$FAKE/kernel/unprivileged_userns_clone"
    export KGATE_TEST_PROBECACHE_SYSCTLS=$FAKE
    dbg run -- true # makes ~/.kgate (the audit log)
    dbg run -- true
    dbg run -- true
    check "control: hit before a sysctl changes" hit bubblewrap
    for f in user/max_user_namespaces kernel/unprivileged_userns_clone \
        kernel/apparmor_restrict_unprivileged_userns; do
        echo 0 >"$FAKE/$f"
        dbg run -- true
        check "$f changed: probed afresh" has 'bubblewrap: miss (made in another situation)' "$ERR"
        dbg run -- true
        check "$f changed: the run after hits" hit bubblewrap
    done
    unset KGATE_TEST_PROBECACHE_SYSCTLS
    S=/proc/sys/user/max_user_namespaces
    V=$(cat "$S")
    dbg run -- true
    dbg run -- true
    check "control: hit before the real sysctl changes" hit bubblewrap
    if echo $((V - 1)) 2>/dev/null >"$S"; then
        dbg run -- true
        echo "$V" >"$S"
        check "max_user_namespaces changed: probed afresh" \
            has 'bubblewrap: miss (made in another situation)' "$ERR"
    else
        echo "# $S is read-only here: only the stand-ins were changed"
    fi
fi
finish
