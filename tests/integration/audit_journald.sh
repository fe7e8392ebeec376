#!/usr/bin/env bash
# audit_journald.sh: audit_sink journald against the real journal (issue
# 31, part 3): a run's records are journal entries with kgate's native
# fields, found by journalctl -o json.  Needs journald running; a machine
# or container without it (no /run/systemd/journal/socket) skips with that
# reason, and the skip stays a skip under KGATE_MUST_WORK: CI fails it only
# where journald is there (then every check below must pass).  The fail-
# closed case (journald absent) is in audit_sinks.sh.
. "$(dirname "$0")/lib.sh"
if [ ! -S /run/systemd/journal/socket ] || ! command -v journalctl >/dev/null; then
    echo "SKIP: journald is not running here (no /run/systemd/journal/socket or journalctl)"
    exit 77
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
done
finish
