#!/bin/bash
# faults.sh: faults of the environment that kgate must survive (issue 18),
# as root and as an unprivileged uid.
#
#  - slirp4netns killed during a run: the program has lost its network;
#    kgate ends the run, says so in one kgate: line, and leaves nothing.
#  - the audit log on a full filesystem: nothing starts (125, one line).
#    Control: the same with room runs.
#  - a plugin directory, or a plugin in it, that cannot be read: one refused
#    line in `kgate plugins`, and `run` goes on with the other directories.
#  - /tmp full: kgate and the program run (the program's /tmp is its own).
#    Control: the host's /tmp is really full.
#  - a plugin whose probe never returns: kgate gives up after 10 s, says so
#    in one line and starts nothing (125).  Control: without it, it runs.
# The filesystems are small tmpfs mounts in a private mount namespace of
# the whole test (root only; the checks say so when they cannot run).

if [ -z "${KG_FAULTS_INNER:-}" ] && [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null &&
    unshare --mount --propagation private true 2>/dev/null; then
    KG_FAULTS_INNER=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd pgrep timeout

# Live (not zombie) processes whose command line holds "sleep MARK".
alive_count() {
    ps -eo stat=,args= | grep -v '^Z' | grep -c -- "[s]leep $1"
}

slirp_ready
MOUNTS=${KG_FAULTS_INNER:-}
# Never on the machine's own mounts: a full /tmp there would be every
# process's.  The namespace must differ from init's (when it can be read).
if [ -n "$MOUNTS" ] && [ -r /proc/1/ns/mnt ] &&
    [ "$(readlink /proc/self/ns/mnt)" = "$(readlink /proc/1/ns/mnt)" ]; then
    echo "# the mount namespace is the machine's: no mounts"
    MOUNTS=
fi
# Checks that need their own mounts: run, or say why not.
can_mount() {
    [ -n "$MOUNTS" ] && return 0
    if [ -n "${KGATE_MUST_WORK:-}" ]; then
        check "root and unshare for $1" false
    else
        echo "# not root or no unshare: $1 not checked"
    fi
    return 1
}

# slirp4netns SIGKILLed while the program runs.
slirp_killed() {
    local mark=10171 out=$KG_TMP/slirp.out err=$KG_TMP/slirp.err
    : >"$out"
    kg run -- sh -c "echo ready; sleep $mark" >"$out" 2>"$err" &
    local bg=$!
    poll 150 file_has ready "$out"
    local k s
    k=$(pgrep -o -f "^$KGATE_BIN run -- sh -c echo ready; sleep $mark")
    s=$(pgrep -P "$k" -x slirp4netns)
    if [ -z "$k" ] || [ -z "$s" ]; then
        echo "kgate or slirp4netns not found"
        kill -KILL "$bg"
        return 1
    fi
    kill -KILL "$s"
    wait_bounded 20 "$bg" "$k"
    local rc=$? left
    sleep 0.5
    left=$(alive_count "$mark")
    echo "# exit $rc, $left processes left: $(cat "$err")"
    [ "$rc" -eq 143 ] && [ "$left" -eq 0 ] &&
        grep -q "^kgate: the backend's helper slirp4netns (pid $s) died of signal 9" "$err" &&
        [ "$(grep -c . "$err")" -eq 1 ]
}

# ~/.kgate on a tmpfs of 256 KiB, full (FILL=yes) or not.
small_kgate_dir() {
    local dir=$KG_HOME/.kgate
    cp -a "$dir" "$KG_TMP/kgate-dir.saved"
    mount -t tmpfs -o size=256k,mode=0700 tmpfs "$dir"
    cp -a "$KG_TMP/kgate-dir.saved/." "$dir/"
    rm -rf "$KG_TMP/kgate-dir.saved"
    chown "$KG_UID:$KG_GID" "$dir"
    if [ "$1" = yes ]; then
        dd if=/dev/zero of="$dir/fill" bs=4k 2>/dev/null || true
    fi
}

# audit_small_fs FILL: rc and stderr of a run that leaves a marker file.
audit_small_fs() {
    rm -f "$KG_PROJ/ran"
    small_kgate_dir "$1"
    kg run -- sh -c 'echo yes > ran' >/dev/null 2>"$KG_TMP/audit.err"
    AUDIT_RC=$?
    umount "$KG_HOME/.kgate"
}

audit_full_refused() {
    audit_small_fs yes
    echo "# exit $AUDIT_RC: $(cat "$KG_TMP/audit.err")"
    [ "$AUDIT_RC" -eq 125 ] && [ ! -e "$KG_PROJ/ran" ] &&
        grep -q "^kgate: audit log .*: nothing was started" "$KG_TMP/audit.err" &&
        [ "$(grep -c . "$KG_TMP/audit.err")" -eq 1 ]
}

audit_room_runs() {
    audit_small_fs no
    [ "$AUDIT_RC" -eq 0 ] && [ -e "$KG_PROJ/ran" ]
}

# A plugin directory that cannot be read, first in the path.
plugin_dir_unreadable() {
    local bad=$KG_HOME/badplugins
    mkdir -p "$bad"
    cp "${KGATE_PLUGIN_PATH%%:*}"/*.so "$bad/"
    chown -R "$KG_UID:$KG_GID" "$bad"
    chmod "$1" "$bad"
    [ "$1" = 0700 ] && chmod 0000 "$bad"/*.so
    local out
    out=$(KGATE_PLUGIN_PATH=$bad:$KGATE_PLUGIN_PATH kg plugins 2>&1)
    echo "$out" | grep "^refused:" | sed 's/^/# /'
    KGATE_PLUGIN_PATH=$bad:$KGATE_PLUGIN_PATH kg run -- sh -c 'echo RAN$((1+1))' \
        >"$KG_TMP/plug.out" 2>&1
    local rc=$?
    chmod -R 0755 "$bad"
    rm -rf "$bad"
    [ "$rc" -eq 0 ] && grep -q '^RAN2$' "$KG_TMP/plug.out" &&
        echo "$out" | grep -q "^refused: $bad.*Permission denied"
}

# /tmp on a full tmpfs of 512 KiB; the test's own files (under /tmp) stay
# reachable through a bind mount at the same path.
tmp_full() {
    local full=$KG_TMP/full
    mkdir -p "$full"
    mount -t tmpfs -o size=512k,mode=1777 tmpfs "$full"
    # What the test runs must stay visible through the full /tmp: its own
    # files, and the build when the clone itself lies under /tmp (a CI
    # clone in /tmp/ci-check).
    local p top seen=" "
    IFS=: read -r -a kg_need <<<"$KG_TMP:$KGATE_BIN:$KGATE_PLUGIN_PATH:${KGATE_BUILD_ROOT:-}"
    for p in "${kg_need[@]}"; do
        case $p in /tmp/?*) ;; *) continue ;; esac
        top=${p#/tmp/}
        top=${top%%/*}
        case $seen in *" $top "*) continue ;; esac
        seen="$seen$top "
        mkdir -p "$full/$top"
        mount --bind "/tmp/$top" "$full/$top"
    done
    mount --rbind "$full" /tmp
    dd if=/dev/zero of=/tmp/fill bs=4k 2>/dev/null
    # The machine's /tmp (init's view) is not the full one.
    local private=yes
    [ -r /proc/1/root/tmp ] && [ -e /proc/1/root/tmp/fill ] && private=no
    local control=no
    as_user sh -c 'echo x > /tmp/kg-faults-probe' 2>/dev/null || control=yes
    kg run -- sh -c 'echo inside > /tmp/own && cat /tmp/own' >"$KG_TMP/tmp.out" 2>&1
    local rc=$?
    umount -R /tmp
    umount -R "$full"
    echo "# host /tmp full: $control; only in this namespace: $private; exit $rc: $(tr '\n' ' ' <"$KG_TMP/tmp.out")"
    [ "$private" = yes ] && [ "$control" = yes ] && [ "$rc" -eq 0 ] && grep -q '^inside$' "$KG_TMP/tmp.out"
}

# A plugin whose probe never returns (tests/unit/plugins, TP_HANG) in the
# path: kgate gives up after the bound and starts nothing.
HANG_SO=${KGATE_BUILD_ROOT:-}/tests/unit/plugins/hang/tp_hang.so
probe_hangs() {
    local dir=$KG_HOME/hangplugin out rc start=$SECONDS
    mkdir -p "$dir"
    cp "$HANG_SO" "$dir/"
    chmod -R a+rX "$dir"
    out=$(KGATE_PLUGIN_PATH=$dir:$KGATE_PLUGIN_PATH kg run -- sh -c 'echo started' 2>&1)
    rc=$?
    local took=$((SECONDS - start)) control
    control=$(kg run -- sh -c 'echo started' 2>&1)
    rm -rf "$dir"
    echo "# exit $rc after $took s: $out; without it: $control"
    [ "$rc" -eq 125 ] && [ "$took" -lt 30 ] && [ "$control" = started ] &&
        [ "$out" = "kgate: plugin hang: its probe did not finish within 10 s: nothing was started" ]
}

for who in $(test_users); do
    use_user "$who"
    printf 'network: off\n' | write_config
    if can_mount "the full-filesystem checks"; then
        check "audit log on a full filesystem: nothing starts (125, one kgate: line)" \
            audit_full_refused
        check "control: the same filesystem with room: the program runs" \
            audit_room_runs
        check "/tmp full on the host: kgate runs, the program writes its own /tmp" \
            tmp_full
    fi
    if [ -f "$HANG_SO" ]; then
        check "a plugin whose probe never returns: 125 after 10 s, one kgate: line; control runs" \
            probe_hangs
    elif [ -n "${KGATE_MUST_WORK:-}" ]; then
        check "the test plugin tp_hang is built (meson -Dtests=true)" false
    fi
    if [ "$KG_UID" -ne 0 ]; then
        check "a plugin directory that cannot be read: refused in plugins, run goes on" \
            plugin_dir_unreadable 0000
        check "a plugin that cannot be read: refused in plugins, run goes on" \
            plugin_dir_unreadable 0700
    else
        echo "# [root] reads any directory: the unreadable-plugin checks run as the user"
    fi
    if [ -z "$SLIRP" ]; then
        if [ -n "${KGATE_MUST_WORK:-}" ]; then
            check "slirp4netns, nft, dnsmasq and /dev/net/tun for the restricted checks" false
        else
            echo "# slirp4netns, nft, dnsmasq or /dev/net/tun missing: restricted checks not run"
        fi
        continue
    fi
    printf 'network: restricted\nallow_hosts: [example.test]\n' | write_config
    check "slirp4netns killed mid-run: the run ends (143), one kgate: line, nothing left" \
        slirp_killed
done
finish
