#!/usr/bin/env bash
# fallback.sh: a stronger box that loses for want of a tool alone is said
# (issue 43.3).  The tool is hidden in a mount namespace of this suite's
# own, by an empty, non-executable file bound over it: kgate looks tools up
# in fixed directories (kgate-tool.h), never on PATH, so no PATH trick
# would hide one.  Hidden, doctor has core.fallback naming the tool and
# where kgate looked, and run prints one kgate: line before the program
# starts (its marker shows it ran); present, neither appears.  As root and
# as the unprivileged uid.
if [ -z "${FB_NS:-}" ] && [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
    export FB_NS=1
    exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "hiding a tool needs root (a mount namespace of the suite's own)"
[ -n "${FB_NS:-}" ] || skip_all "unshare is not installed"
need_bwrap
need_nouserns
need_cmd python3 mount umount
slirp_ready
[ "$SLIRP" = yes ] || skip_all "slirp4netns, nft, dnsmasq or /dev/net/tun missing"
[ "$(landlock_abi)" -ge 1 ] || skip_all "this kernel has no Landlock"

OUT=$KG_TMP/out
ERR=$KG_TMP/err
EMPTY=$KG_TMP/empty-tool
: >"$EMPTY"
chmod 0644 "$EMPTY"
has() { grep -q -- "$1" "$2" || { echo "no '$1' in:"; cat "$2"; return 1; }; }
hasnt() { ! grep -q -- "$1" "$2" || { echo "'$1' in:"; cat "$2"; return 1; }; }
json() { python3 -c "import json,sys; d=json.load(open('$OUT')); sys.exit(0 if ($1) else 1)" ||
    { echo "not ($1) in:"; cat "$OUT"; return 1; }; }
finding() { echo "any(f['id'] == '$1' and f['verdict'] == '$2' for f in d['findings'])"; }
one_line() { [ "$(wc -l <"$ERR")" -eq 1 ] && grep -q '^kgate: ' "$ERR" || { cat "$ERR"; return 1; }; }

# hide TOOL: every copy kgate could find (KGATE_TOOL_DIRS, /bin and
# /usr/bin may be one) is bound over; unhide puts them back.
TOOL_DIRS="/usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin"
HIDDEN=()
hide() {
    local d
    for d in $TOOL_DIRS; do
        [ -f "$d/$1" ] || continue
        mount --bind "$EMPTY" "$d/$1" && HIDDEN+=("$d/$1")
    done
}
unhide() {
    local f
    for f in "${HIDDEN[@]}"; do umount "$f" || echo "# umount $f failed"; done
    HIDDEN=()
    # A bind mount changes neither the tool directory's times nor the
    # mount namespace, the probe cache's key (docs/plugins.md): an
    # install or removal does, so the cache is dropped as one would.
    rm -rf "${KG_HOME:?}/.kgate/cache"
}
# back TOOL: kgate can run TOOL again (the controls below mean nothing
# while it is still hidden).
back() { [ -x "/usr/bin/$1" ] || [ -x "/usr/sbin/$1" ] || { findmnt | grep "$1"; return 1; }; }
at_exit unhide

restricted() {
    write_config <<EOF
network: restricted
allow_hosts: ["example.org"]
EOF
}
off() { printf 'network: off\n' | write_config; }

for who in $(test_users); do
    use_user "$who"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"

    # --- slirp4netns hidden, a host list: landlock runs, and says why ---
    restricted
    hide slirp4netns
    check "$who: slirp4netns is hidden (no trusted copy for kgate)" \
        sh -c '[ ! -x /usr/bin/slirp4netns ]'
    RC=0
    kg doctor >"$OUT" 2>"$ERR" || RC=$?
    check "$who: slirp hidden: doctor picks landlock" has '^backend: landlock' "$OUT"
    check "$who: slirp hidden: doctor's core.fallback row names slirp4netns and the box" \
        has '^  DEGRADED  picked landlock, a weaker box: bubblewrap+slirp-filter would give the stronger one but lacks a tool (slirp-filter: network restricted needs slirp4netns, ' "$OUT"
    check "$who: slirp hidden: the row says where kgate looked" \
        has 'picked landlock.*/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' "$OUT"
    check "$who: slirp hidden: the row says what landlock lacks" \
        has 'what landlock lacks: .*no PID namespace (proc.visible)' "$OUT"
    check "$who: slirp hidden: doctor exits 0 (DEGRADED)" [ "$RC" -eq 0 ]
    RC=0
    kg doctor --json >"$OUT" 2>"$ERR" || RC=$?
    check "$who: slirp hidden: doctor --json: core.fallback DEGRADED" json "$(finding core.fallback DEGRADED)"
    RC=0
    kg run -- sh -c 'echo launched' >"$OUT" 2>"$ERR" || RC=$?
    check "$who: slirp hidden: run ran (marker, exit 0)" sh -c "[ $RC -eq 0 ] && grep -q '^launched\$' '$OUT'"
    check "$who: slirp hidden: run says it, in one kgate: line" one_line
    check "$who: slirp hidden: the line names slirp4netns, the box and what is lacked" \
        has '^kgate: picked landlock, a weaker box: bubblewrap+slirp-filter .*needs slirp4netns, .*what landlock lacks: .*(proc.visible)' "$ERR"

    # --- the same, where bubblewrap is also BLOCKED for its user
    # namespace: a tool would not make it run, so no such line ---
    RC=0
    in_disable_userns "$KGATE_BIN" run -- sh -c 'echo launched' >"$OUT" 2>"$ERR" || RC=$?
    check "$who: slirp hidden, no userns: run ran (marker)" sh -c "[ $RC -eq 0 ] && grep -q '^launched\$' '$OUT'"
    check "$who: slirp hidden, no userns: no fallback line" hasnt 'picked' "$ERR"
    unhide
    check "$who: slirp4netns is back" back slirp4netns

    # --- control: slirp4netns there: bubblewrap+slirp-filter, no line ---
    RC=0
    kg doctor --json >"$OUT" 2>"$ERR" || RC=$?
    check "control $who: doctor --json: bubblewrap+slirp-filter, no core.fallback" \
        json "d['backend'] == 'bubblewrap+slirp-filter' and not any(f['id'] == 'core.fallback' for f in d['findings'])"
    RC=0
    kg run -- sh -c 'echo launched' >"$OUT" 2>"$ERR" || RC=$?
    check "control $who: run ran (marker)" sh -c "[ $RC -eq 0 ] && grep -q '^launched\$' '$OUT'"
    check "control $who: run printed nothing on stderr" sh -c "[ ! -s '$ERR' ] || { cat '$ERR'; false; }"

    # --- bwrap hidden, network off: the same for the box's own tool ---
    off
    hide bwrap
    RC=0
    kg run -- sh -c 'echo launched' >"$OUT" 2>"$ERR" || RC=$?
    check "$who: bwrap hidden: run ran in landlock (marker)" sh -c "[ $RC -eq 0 ] && grep -q '^launched\$' '$OUT'"
    check "$who: bwrap hidden: one kgate: line" one_line
    check "$who: bwrap hidden: the line names bwrap and bubblewrap" \
        has '^kgate: picked landlock, a weaker box: bubblewrap would give the stronger one but lacks a tool (bubblewrap: bwrap: ' "$ERR"
    RC=0
    kg doctor --json >"$OUT" 2>"$ERR" || RC=$?
    check "$who: bwrap hidden: doctor --json: core.fallback DEGRADED" json "$(finding core.fallback DEGRADED)"
    unhide
    check "$who: bwrap is back" back bwrap
    RC=0
    kg run -- sh -c 'echo launched' >"$OUT" 2>"$ERR" || RC=$?
    check "control $who: bwrap there, network off: run ran, nothing on stderr" \
        sh -c "[ $RC -eq 0 ] && grep -q '^launched\$' '$OUT' && [ ! -s '$ERR' ] || { cat '$ERR'; false; }"
done
finish
