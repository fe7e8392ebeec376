#!/usr/bin/env bash
# audit_sinks.sh: audit_sink (issue 31, part 3), as root and as an
# unprivileged uid.  syslog: the records reach a listener on /dev/log as
# RFC 5424 messages (the listener binds /dev/log inside a private mount
# namespace with its own /dev, made by root with unshare -m, so nothing
# outside the test sees it).  Fail closed for every sink: no /dev/log, no
# journald socket, a full disk for the file: exit 125, one kgate: line, and
# the command did not run (it would leave a marker).  A project file may
# not change the sink.  The journal itself: audit_journald.sh.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd python3 unshare mount
[ "$(id -u)" -eq 0 ] || skip_all "needs root for unshare -m (a private /dev, a small tmpfs)"

# in_ns SCRIPT: runs bash SCRIPT in a private mount namespace where /dev is
# a tmpfs holding the host's devices (bind-mounted back) but no log socket.
# The test user's command line is in KGRUN (an array exported as a string).
in_ns() {
    unshare -m --propagation private bash -c '
        set -e
        old=$(mktemp -d)
        mount --rbind /dev "$old"
        mount -t tmpfs -o mode=0755 kgdev /dev
        for e in "$old"/* "$old"/.[!.]*; do
            [ -e "$e" ] || [ -L "$e" ] || continue
            n=/dev/${e##*/}
            [ "${e##*/}" = log ] && continue
            if [ -L "$e" ]; then cp -P "$e" "$n"
            elif [ -d "$e" ]; then mkdir -p "$n" && mount --rbind "$e" "$n"
            else touch "$n" && mount --bind "$e" "$n"; fi
        done
        set +e
        eval "$1"' _ "$1"
}

# The command kgate runs as the test user, with a marker.
kgrun() {
    if [ "$KG_WHO" = user ]; then
        printf 'cd %q && setpriv --reuid=%s --regid=%s --clear-groups env HOME=%q KGATE_PLUGIN_PATH=%q %q run -- sh -c "echo ran > marker" %s' \
            "$KG_PROJ" "$KG_TEST_UID" "$KG_TEST_GID" "$KG_HOME" "$KGATE_PLUGIN_PATH" "$KGATE_BIN" "$1"
    else
        printf 'cd %q && env HOME=%q KGATE_PLUGIN_PATH=%q %q run -- sh -c "echo ran > marker" %s' \
            "$KG_PROJ" "$KG_HOME" "$KGATE_PLUGIN_PATH" "$KGATE_BIN" "$1"
    fi
}
ran() { [ -e "$KG_PROJ/marker" ]; }
one_kgate_line() {
    [ "$(wc -l <"$KG_TMP/err")" -eq 1 ] && grep -q "^kgate: .*$1" "$KG_TMP/err"
}

for who in $(test_users); do
    use_user "$who"

    # syslog: a listener on /dev/log gets every record of the run.
    printf 'network: off\naudit_sink: syslog\n' | write_config
    rm -f "$KG_PROJ/marker" "$KG_TMP/syslog"
    RC=0
    in_ns "python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(\"/dev/log\")
import os; os.chmod(\"/dev/log\", 0o666)
open(\"$KG_TMP/listening\", \"w\").close()
s.settimeout(20)
with open(\"$KG_TMP/syslog\", \"wb\") as f:
    for _ in range(2):
        f.write(s.recv(1 << 20) + b\"\\n\"); f.flush()
' & for i in \$(seq 100); do [ -e $KG_TMP/listening ] && break; sleep 0.1; done
$(kgrun kgsink-syslog) >$KG_TMP/out 2>$KG_TMP/err; echo \$? >$KG_TMP/rc; wait" 
    rm -f "$KG_TMP/listening"
    RC=$(cat "$KG_TMP/rc" 2>/dev/null || echo none)
    check "syslog: the run ran (exit $RC)" sh -c '[ "$1" = 0 ] && [ -e "$2/marker" ]' _ "$RC" "$KG_PROJ"
    check "syslog: two RFC 5424 messages, launch and end, one run id" python3 - "$KG_TMP/syslog" <<'PY'
import json, re, sys
msgs = [l for l in open(sys.argv[1], "rb").read().split(b"\n") if l]
assert len(msgs) == 2, msgs
recs = []
for m in msgs:
    g = re.fullmatch(rb"<(\d+)>1 (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (\S+) kgate (\d+) (\w+) - (\{.*\})", m)
    assert g, m
    r = json.loads(g.group(6))
    assert g.group(5).decode() == r["kind"] and int(g.group(4)) == r["pid"]
    assert int(g.group(1)) == 10 * 8 + 6  # authpriv.info
    assert "prev" not in r and "kgsink-syslog" in r["argv"]
    recs.append(r)
assert [r["kind"] for r in recs] == ["launch", "end"] and recs[1]["exit"] == 0
assert recs[0]["run"] == recs[1]["run"] and len(recs[0]["run"]) == 32
PY
    check "syslog: nothing went to the file" [ ! -e "$KG_HOME/.kgate/audit.log" ]

    # Fail closed: no /dev/log.
    rm -f "$KG_PROJ/marker"
    in_ns "$(kgrun kgsink-nolog) >$KG_TMP/out 2>$KG_TMP/err; echo \$? >$KG_TMP/rc"
    RC=$(cat "$KG_TMP/rc")
    check "syslog gone: exit 125 (got $RC)" [ "$RC" = 125 ]
    check "syslog gone: one kgate: line naming /dev/log" one_kgate_line "/dev/log"
    check "syslog gone: the command did not run" sh -c '! [ -e "$1/marker" ]' _ "$KG_PROJ"

    # Fail closed: no journald (its socket hidden when the machine has one).
    printf 'network: off\naudit_sink: journald\n' | write_config
    rm -f "$KG_PROJ/marker"
    hide=
    [ -e /run/systemd/journal/socket ] && hide="mount --bind /dev/null /run/systemd/journal/socket;"
    in_ns "$hide $(kgrun kgsink-nojournal) >$KG_TMP/out 2>$KG_TMP/err; echo \$? >$KG_TMP/rc"
    RC=$(cat "$KG_TMP/rc")
    check "journald absent: exit 125 (got $RC)" [ "$RC" = 125 ]
    check "journald absent: one kgate: line naming journald" one_kgate_line "journald"
    check "journald absent: the command did not run" sh -c '! [ -e "$1/marker" ]' _ "$KG_PROJ"

    # Fail closed: the file on a full disk (a 64 KiB tmpfs, filled).
    printf 'network: off\n' | write_config
    cp -a "$KG_HOME/.kgate" "$KG_TMP/kgate-copy"
    rm -f "$KG_PROJ/marker"
    in_ns "mount -t tmpfs -o size=64k,mode=0700 kgfull $KG_HOME/.kgate &&
        cp -a $KG_TMP/kgate-copy/. $KG_HOME/.kgate/ && chown -R $KG_UID:$KG_GID $KG_HOME/.kgate &&
        (dd if=/dev/zero of=$KG_HOME/.kgate/filler bs=4k 2>/dev/null; true) &&
        $(kgrun kgsink-full) >$KG_TMP/out 2>$KG_TMP/err; echo \$? >$KG_TMP/rc"
    RC=$(cat "$KG_TMP/rc")
    check "disk full: exit 125 (got $RC)" [ "$RC" = 125 ]
    check "disk full: one kgate: line naming the audit log" one_kgate_line "audit"
    check "disk full: the command did not run" sh -c '! [ -e "$1/marker" ]' _ "$KG_PROJ"
    rm -rf "$KG_TMP/kgate-copy"
    # Control: the same run with room on the disk runs.
    RC=0
    kg run -- sh -c 'echo ran > marker' kgsink-room >/dev/null 2>&1 || RC=$?
    check "control: with room, the same run runs" sh -c '[ "$1" = 0 ] && [ -e "$2/marker" ]' _ "$RC" "$KG_PROJ"

    # A project file may not change the sink.
    printf 'audit_sink: syslog\n' >"$KG_PROJ/.kgate.yaml"
    chown "$KG_UID:$KG_GID" "$KG_PROJ/.kgate.yaml"
    rm -f "$KG_PROJ/marker"
    RC=0
    kg run -- sh -c 'echo ran > marker' >/dev/null 2>"$KG_TMP/err" || RC=$?
    check "a project file that changes the sink: 125, one line naming audit_sink" \
        sh -c '[ "$1" = 125 ] && [ "$(wc -l <"$2")" -eq 1 ] && grep -q "audit_sink: .syslog. is not the user config" "$2"' \
        _ "$RC" "$KG_TMP/err"
    check "and the command did not run" sh -c '! [ -e "$1/marker" ]' _ "$KG_PROJ"
    printf 'audit_sink: file\n' >"$KG_PROJ/.kgate.yaml"
    RC=0
    kg run -- true >/dev/null 2>&1 || RC=$?
    check "repeating the user's sink is fine" [ "$RC" = 0 ]
    rm -f "$KG_PROJ/.kgate.yaml"
done
finish
