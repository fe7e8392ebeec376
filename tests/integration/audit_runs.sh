#!/usr/bin/env bash
# audit_runs.sh: one run id on every record of a `kgate run`, an end record
# for every launch (also when kgate was SIGKILLed: the next kgate writes
# it), and `kgate audit runs | show | refusals` reading them back (issue
# 31, part 2), as root and as an unprivileged uid.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd python3 git pgrep

LOG() { printf '%s' "$KG_HOME/.kgate/audit.log"; }
r() {
    RC=0
    kg "$@" >"$KG_TMP/out" 2>"$KG_TMP/err" || RC=$?
}
out_has() { grep -q -- "$1" "$KG_TMP/out"; }
# audit EXPR: a python expression over the log's records L; R(tag) is the
# records whose argv holds tag.
audit() {
    python3 - "$(LOG)" "$1" <<'PY'
import json, sys
L = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8", errors="surrogateescape")]
def R(tag):
    return [x for x in L if tag in x["argv"]]
def one_run(tag):
    ids = {x.get("run") for x in R(tag)}
    return len(ids) == 1 and None not in ids and len(next(iter(ids))) == 32
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

EV_DIR=${KGATE_BUILD_ROOT:-}/tests/unit/plugins/events
[ -f "$EV_DIR/tp_events.so" ] || skip_all "the test backend tp_events is not built"

for who in $(test_users); do
    use_user "$who"
    printf 'network: off\n' | write_config
    evp=$KG_HOME/evplugins
    mkdir -p "$evp"
    cp "$EV_DIR/tp_events.so" "$evp/"
    chmod -R a+rX "$evp"
    as_user git init -q .
    as_user git config core.worktree "$KG_PROJ"

    r run -- true kgrun-ok
    check "a run: exit 0" [ "$RC" -eq 0 ]
    r run -- sh -c 'exit 3' kgrun-three
    check "a run that exits 3: exit 3" [ "$RC" -eq 3 ]
    r run -- curl kgrun-blocked
    check "a blocked run: 126" [ "$RC" -eq 126 ]
    r run -- kgrun-no-such-command
    check "a refused run: 127" [ "$RC" -eq 127 ]
    r run -- sh -c 'echo x > .git/commondir; echo ran > marker' kgrun-git
    check "a run that plants git config: it ran, and kgate said so" \
        sh -c '[ -e "$1/marker" ] && grep -q "kgate: git: " "$2"' _ "$KG_PROJ" "$KG_TMP/err"
    KGATE_PLUGIN_PATH=$evp:$KGATE_PLUGIN_PATH r run --backend events -- echo kgrun-net
    check "a run whose backend refused two things: exit 0" [ "$RC" -eq 0 ]

    for tag in kgrun-ok kgrun-three kgrun-blocked kgrun-git kgrun-net; do
        check "$tag: every record carries one run id" audit "one_run('$tag')"
    done
    check "refused: its one record has a run id" audit "one_run('kgrun-no-such-command')"
    check "every run has its own id" \
        audit "len({x['run'] for x in L}) == 6"
    check "the kinds: launch, end, block, refuse, git and net all carry it" \
        audit "{x['kind'] for x in L} == {'launch', 'end', 'block', 'refuse', 'git', 'net'} and all('run' in x for x in L)"
    check "git run: launch, git, end in that order" \
        audit "[x['kind'] for x in R('kgrun-git')] == ['launch', 'git', 'end']"
    check "net run: launch, its net records, end last" \
        audit "[x['kind'] for x in R('kgrun-net')] == ['launch', 'net', 'net', 'net', 'end']"
    check "every launch has exactly one end" \
        audit "all(sum(1 for y in L if y['kind'] == 'end' and y['run'] == x['run']) == 1 for x in L if x['kind'] == 'launch')"
    check "the end of exit 3: exit 3, a duration" \
        audit "R('kgrun-three')[-1]['exit'] == 3 and type(R('kgrun-three')[-1]['duration_ms']) is int and R('kgrun-three')[-1]['duration_ms'] >= 0 and 'recovered' not in R('kgrun-three')[-1]"
    check "blocked and refused runs have no end (nothing launched)" \
        audit "[x['kind'] for x in R('kgrun-blocked')] == ['block'] and [x['kind'] for x in R('kgrun-no-such-command')] == ['refuse']"

    # SIGKILL: the run's end comes from the next kgate.
    as_user "$KGATE_BIN" run -- sh -c 'sleep 30' kgrun-killed >/dev/null 2>&1 &
    job=$!
    poll 100 grep -q kgrun-killed "$(LOG)"
    kpid=$(pgrep -f -x "$KGATE_BIN run -- sh -c sleep 30 kgrun-killed" | head -1)
    check "the run to kill is launched (kgate pid ${kpid:-none})" [ -n "$kpid" ]
    [ -n "$kpid" ] && kill -KILL "$kpid"
    wait "$job" 2>/dev/null
    check "killed: no end yet, and its marker waits in ~/.kgate/runs" \
        sh -c 'python3 - "$1" <<PY
import json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
K = [x for x in L if "kgrun-killed" in x["argv"]]
sys.exit(0 if [x["kind"] for x in K] == ["launch"] else 1)
PY
[ -e "$2/.kgate/runs/$(grep kgrun-killed "$1" | sed "s/.*\"run\":\"\([0-9a-f]*\)\".*/\1/")" ]' _ "$(LOG)" "$KG_HOME"
    r audit runs
    check "audit runs: the killed run shows no end yet" \
        sh -c 'grep "kgrun-killed" "$1" | grep -q "no end yet"' _ "$KG_TMP/out"
    r run -- true kgrun-after
    check "the next run: exit 0" [ "$RC" -eq 0 ]
    check "killed: the next kgate wrote its end, marked recovered" \
        audit "[x['kind'] for x in R('kgrun-killed')] == ['launch', 'end'] and R('kgrun-killed')[1]['recovered'] is True and 'exit' not in R('kgrun-killed')[1] and one_run('kgrun-killed')"
    check "written before the next run's own launch" \
        audit "[x['kind'] for x in L][-3:] == ['end', 'launch', 'end'] and 'kgrun-killed' in L[-3]['argv']"
    check "and the marker is gone" [ -z "$(ls -A "$KG_HOME/.kgate/runs")" ]
    r run -- true kgrun-after2
    check "recovered once only" audit "len(R('kgrun-killed')) == 2"

    # Reading it back.
    r audit runs
    check "audit runs: exit 0" [ "$RC" -eq 0 ]
    check "audit runs: a header and one line per run" \
        [ "$(wc -l <"$KG_TMP/out")" -eq 10 ]
    check "audit runs: exit 3 with a duration" \
        sh -c 'grep "kgrun-three" "$1" | grep -qE "exit 3 +[0-9.]+s"' _ "$KG_TMP/out"
    check "audit runs: blocked, refused, killed" \
        sh -c 'grep kgrun-blocked "$1" | grep -q blocked && grep kgrun-no-such "$1" | grep -q refused && grep kgrun-killed "$1" | grep -q killed' _ "$KG_TMP/out"
    check "audit runs: the net and git counts" \
        sh -c 'grep kgrun-net "$1" | grep -q "2 net refused" && grep kgrun-git "$1" | grep -q "1 git"' _ "$KG_TMP/out"
    r audit runs --since 1h
    check "audit runs --since 1h: all of them" [ "$(wc -l <"$KG_TMP/out")" -eq 10 ]
    r audit runs --since 2099-01-01
    check "audit runs --since a future date: none" [ "$(wc -l <"$KG_TMP/out")" -eq 1 ]
    r audit runs --since yesterday
    check "audit runs --since nonsense: a usage error" [ "$RC" -eq 2 ]
    id=$(grep kgrun-git "$(LOG)" | head -1 | sed 's/.*"run":"\([0-9a-f]*\)".*/\1/')
    r audit show "${id:0:8}"
    check "audit show: the git run's three records" \
        sh -c '[ "$1" -eq 0 ] && [ "$(wc -l <"$2")" -eq 4 ] && grep -q "launch .*kgrun-git" "$2" && grep -q "git .*commondir was planted" "$2" && grep -q "end .*exit 0" "$2"' \
        _ "$RC" "$KG_TMP/out"
    r audit show ffffffffffff
    check "audit show of no such run: exit 1, one kgate: line" \
        sh -c '[ "$1" -eq 1 ] && [ "$(wc -l <"$2")" -eq 1 ] && grep -q "^kgate: run ffffffffffff: no such run" "$2"' \
        _ "$RC" "$KG_TMP/err"
    r audit refusals
    check "audit refusals: the counts by kind" \
        sh -c 'grep -qE "^blocked \(exec deny list\) +1$" "$1" && grep -qE "^refused before launch +1$" "$1" && grep -qE "^network refused +2$" "$1" && grep -qE "^git neutralised after the run +1$" "$1" && grep -qE "^killed \(end recovered\) +1$" "$1"' \
        _ "$KG_TMP/out"
    check "audit refusals: with what was refused" \
        sh -c 'grep -q "curl is on the deny list" "$1" && grep -q "name evil.example" "$1"' _ "$KG_TMP/out"
    r audit verify
    check "and the whole log is one intact chain" \
        sh -c '[ "$1" -eq 0 ] && grep -q "^intact, " "$2"' _ "$RC" "$KG_TMP/out"
done
finish
