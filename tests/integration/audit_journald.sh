#!/usr/bin/env bash
# audit_journald.sh: audit_sink journald against the real journal (issue
# 31, part 3): a run's records are journal entries with kgate's native
# fields, found by journalctl -o json.
#
# Where journald runs (/run/systemd/journal/socket), the records go to it.
# Where it does not (a container, a CI machine without systemd as PID 1),
# the test starts the real systemd-journald itself, as root, in a private
# mount namespace with its own /run/systemd, /run/log and /var/log/journal
# (tmpfs), so nothing else on the machine sees it or writes to it; kgate is
# the same client of the same daemon either way.  Only a machine with
# neither (no root, no systemd-journald binary) skips, and CI fails that
# skip (KGATE_MUST_WORK).  The fail-closed case (journald absent) is in
# audit_sinks.sh.
JOURNALD=
for j in /lib/systemd/systemd-journald /usr/lib/systemd/systemd-journald; do
    [ -x "$j" ] && JOURNALD=$j && break
done
if [ -z "${KG_JOURNAL_READY:-}" ] && ! [ -S /run/systemd/journal/socket ] &&
    [ "$(id -u)" -eq 0 ] && [ -n "$JOURNALD" ] && command -v journalctl >/dev/null; then
    if [ -z "${KG_JOURNAL_PRIVATE:-}" ]; then
        exec unshare -m --propagation private env KG_JOURNAL_PRIVATE=1 bash "$0" "$@"
    fi
    mkdir -p /run/systemd /run/log
    mount -t tmpfs -o mode=0755 kgjournal /run/systemd
    mount -t tmpfs -o mode=0755 kgjournal /run/log
    [ -d /var/log/journal ] && mount -t tmpfs -o mode=0755 kgjournal /var/log/journal
    mkdir -p /run/systemd/journal
    jlog=$(mktemp /tmp/kgate-journald.XXXXXX)
    "$JOURNALD" </dev/null >"$jlog" 2>&1 &
    jpid=$!
    for _ in $(seq 100); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done
    sleep 0.2
    if ! kill -0 "$jpid" 2>/dev/null; then
        # It needs what a systemd machine has (cgroup2 mounted, for one).
        echo "# systemd-journald exited at once: $(tr '\n' ' ' <"$jlog")"
        rm -f "$jlog"
        if [ -n "${KGATE_MUST_WORK:-}" ]; then
            echo "FAIL: would skip, but KGATE_MUST_WORK is set: journald cannot run here"
            exit 1
        fi
        echo "SKIP: journald cannot run here"
        exit 77
    fi
    rm -f "$jlog"
    echo "# started a private systemd-journald (pid $jpid) in this test's mount namespace"
    rc=0
    KG_JOURNAL_READY=1 bash "$0" "$@" || rc=$?
    kill "$jpid" 2>/dev/null
    wait "$jpid" 2>/dev/null
    exit $rc
fi
. "$(dirname "$0")/lib.sh"
if [ ! -S /run/systemd/journal/socket ] || ! command -v journalctl >/dev/null; then
    skip_all "no journald here, and no systemd-journald and root to start one"
fi
need_bwrap
"$KGATE_BIN" --version >/dev/null
for who in $(test_users); do
    use_user "$who"
    printf 'network: off\naudit_sink: journald\n' | write_config
    tag=kgjournal-$$-$who
    RC=0
    kg run -- sh -c 'exit 4' "$tag" >/dev/null 2>"$KG_TMP/err" || RC=$?
    check "the run ran (exit 4, got $RC)" [ "$RC" -eq 4 ]
    check "no line on stderr" [ ! -s "$KG_TMP/err" ]
    check "its records are in the journal with native fields" \
        poll 50 sh -c 'journalctl -o json --no-pager SYSLOG_IDENTIFIER=kgate 2>/dev/null | python3 -c "
import json, sys
R = [json.loads(l) for l in sys.stdin if \"$1\" in l]
K = [r[\"KGATE_KIND\"] for r in R]
ok = K == [\"launch\", \"end\"] and R[1][\"KGATE_EXIT\"] == \"4\" and R[0][\"KGATE_RUN\"] == R[1][\"KGATE_RUN\"]
ok = ok and json.loads(R[0][\"KGATE_ARGV\"])[-1] == \"$1\" and json.loads(R[1][\"KGATE_RECORD\"])[\"kind\"] == \"end\"
sys.exit(0 if ok else 1)"' _ "$tag"
    # A refusal is a journal entry too, under its own run id, with the
    # reason the person at the terminal was given.
    RC=0
    kg run -- curl "http://$tag.invalid/" >/dev/null 2>&1 || RC=$?
    check "curl is blocked (exit 126, got $RC)" [ "$RC" -eq 126 ]
    check "the block is in the journal with its reason and its own run id" \
        poll 50 sh -c 'journalctl -o json --no-pager SYSLOG_IDENTIFIER=kgate 2>/dev/null | python3 -c "
import json, sys
R = [json.loads(l) for l in sys.stdin if \"$1\" in l]
B = [r for r in R if r[\"KGATE_KIND\"] == \"block\"]
ok = len(B) == 1 and \"curl\" in B[0][\"KGATE_REASON\"] and json.loads(B[0][\"KGATE_ARGV\"])[-1].startswith(\"http://$1\")
ok = ok and B[0][\"KGATE_RUN\"] not in [r[\"KGATE_RUN\"] for r in R if r[\"KGATE_KIND\"] != \"block\"]
sys.exit(0 if ok else 1)"' _ "$tag"
done
finish
