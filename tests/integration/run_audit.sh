#!/usr/bin/env bash
# run_audit.sh: the audit log of `kgate run` (issue 3 "Audit and exit",
# spec "Audit log"), as root and as an unprivileged uid.  The fields of each
# kind, the one-shot flags, withheld environment names (never values), the
# launch line on disk before the program starts, 40 concurrent launches
# with long command lines giving 40 whole lines, an audit log that cannot be
# written (nothing starts, exit 125), and --dry-run writing nothing.
# (Each launch's end record, issue 31, is checked in audit_runs.sh.)
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd python3 mkfifo timeout pgrep

LOG() { printf '%s' "$KG_HOME/.kgate/audit.log"; }

# r ARGS...: kgate ARGS as the test user; RC, stdout and stderr in files.
r() {
    RC=0
    kg "$@" >"$KG_TMP/out" 2>"$KG_TMP/err" || RC=$?
}
rc_is() { [ "$RC" -eq "$1" ]; }
out_empty() { [ ! -s "$KG_TMP/out" ]; }
one_kgate_line() {
    [ "$(wc -l <"$KG_TMP/err")" -eq 1 ] && grep -q '^kgate: ' "$KG_TMP/err"
}
lines() { if [ -e "$(LOG)" ]; then wc -l <"$(LOG)"; else echo 0; fi; }

# audit EXPR: a python expression over the log: L is every line parsed,
# e the last one, raw the bytes.  Fails on any line that is not one JSON
# object.
audit() {
    python3 - "$(LOG)" "$1" <<'PY'
import datetime, json, re, sys
raw = open(sys.argv[1], "rb").read()
L = [json.loads(l.decode("utf-8")) for l in raw.split(b"\n")[:-1]]
assert raw.endswith(b"\n")
assert all(isinstance(x, dict) for x in L)
# The end records (issue 31) are checked in audit_runs.sh; here only that
# every launch has exactly one, and the other kinds are what L holds.
ends = [x for x in L if x["kind"] == "end"]
assert all(sum(1 for y in ends if y["run"] == x["run"]) == 1
           for x in L if x["kind"] == "launch"), "a launch without its end"
L = [x for x in L if x["kind"] != "end"]
e = L[-1] if L else {}
def rfc3339_utc_now(t):
    m = re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", t)
    if not m:
        return False
    when = datetime.datetime.strptime(t[:19], "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=datetime.timezone.utc)
    now = datetime.datetime.now(datetime.timezone.utc)
    return abs((now - when).total_seconds()) < 600
def common(x, kind, argv, cwd):
    return (rfc3339_utc_now(x["time"]) and x["kind"] == kind and x["argv"] == argv
            and x["cwd"] == cwd and type(x["pid"]) is int and x["pid"] > 1)
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

for who in $(test_users); do
    use_user "$who"
    # A fresh home without ~/.kgate: the spec's defaults, and the log is
    # created private.
    r run -- true kgaudit-fresh
    check "no config at all: exit 0" rc_is 0
    check "~/.kgate created 0700" [ "$(stat -c %a "$KG_HOME/.kgate")" = 700 ]
    check "audit.log created 0600, owned by the user" \
        [ "$(stat -c '%a %u' "$(LOG)")" = "600 $KG_UID" ]
    check "the default network (restricted, no hosts) is logged as off" \
        audit "len(L) == 1 and common(e, 'launch', ['true', 'kgaudit-fresh'], '$KG_PROJ') and e['network'] == 'off'"
    r run -- curl http://198.18.0.9/
    check "the default deny list blocks curl (126)" rc_is 126
    check "with a block line" audit "len(L) == 2 and e['kind'] == 'block'"
    rm -rf "$KG_HOME/.kgate"

    write_config <<'EOF'
network: off
deny_exec: [curl, kgaudit-denied]
pass_env: [KGAUDIT_PASSED_TOKEN]
EOF
    mkdir -p "$KG_PROJ/outside-a" "$KG_PROJ/outside-b"
    chown -R "$KG_UID:$KG_GID" "$KG_PROJ"
    P=$KG_PROJ

    # launch: every field, and a command line that needs escaping.
    r run -- sh -c 'exit 0' kgaudit-a1 'q"uote \back' $'tab\tnl\nend' $'bad\xffbyte'
    check "launch: exit 0" rc_is 0
    check "launch: one line, every field" \
        audit "len(L) == 1 and common(e, 'launch', ['sh', '-c', 'exit 0', 'kgaudit-a1', 'q\"uote \\\\back', 'tab\\tnl\\nend', 'bad\\udcffbyte'], '$P')"
    # Bytes that are not UTF-8 are lone surrogates (surrogateescape): the
    # exact argv bytes come back, and caf\xe9 is not café.
    r run -- true $'caf\xe9' 'café' $'\xed\xa0\x80' $'\xc0\xaf' $'\xf0\x9f\x98\x80'
    check "non-UTF-8 argv: exit 0" rc_is 0
    check "non-UTF-8 argv: the exact bytes round-trip" \
        audit "[a.encode('utf-8', 'surrogateescape') for a in e['argv']] == [b'true', b'caf\\xe9', 'café'.encode(), b'\\xed\\xa0\\x80', b'\\xc0\\xaf', b'\\xf0\\x9f\\x98\\x80']"
    check "non-UTF-8 argv: a byte is told from the character" \
        audit "e['argv'][1] != e['argv'][2] and e['argv'][1] == 'caf\\udce9'"
    r run -- sh -c 'exit 0' kgaudit-a1b
    check "launch: backend and network" \
        audit "e['backend'] == 'bubblewrap' and e['network'] == 'off'"
    check "launch: no reason, no one-shot keys" \
        audit "not {'reason', 'allow_paths', 'allow_hosts'} & set(e)"

    # block and refuse.
    r run -- curl http://198.18.0.9/
    check "block: exit 126" rc_is 126
    check "block: every field and a reason, no backend" \
        audit "common(e, 'block', ['curl', 'http://198.18.0.9/'], '$P') and 'curl' in e['reason'] and 'backend' not in e"
    r run -- kgaudit-no-such-command-5521
    check "not found: exit 127" rc_is 127
    check "not found: a refuse line with a reason" \
        audit "common(e, 'refuse', ['kgaudit-no-such-command-5521'], '$P') and 'not found' in e['reason']"
    KG_CWD=$KG_HOME r run -- true kgaudit-home
    check "home as the project: exit 125" rc_is 125
    check "home as the project: a refuse line with the home as cwd" \
        audit "common(e, 'refuse', ['true', 'kgaudit-home'], '$KG_HOME') and 'home' in e['reason'] and 'backend' not in e"
    printf 'network: [off\n' >"$P/.kgate.yaml"
    chown "$KG_UID:$KG_GID" "$P/.kgate.yaml"
    r run -- true kgaudit-badcfg
    check "broken project file: exit 125" rc_is 125
    check "broken project file: a refuse line naming the file" \
        audit "common(e, 'refuse', ['true', 'kgaudit-badcfg'], '$P') and '.kgate.yaml:1:' in e['reason']"
    rm -f "$P/.kgate.yaml"

    # One-shot flags.
    r run --allow-path "$P/outside-a" --allow-path "$P/outside-b" -- true kgaudit-flags
    check "--allow-path twice: exit 0" rc_is 0
    check "launch records both --allow-path" \
        audit "e['kind'] == 'launch' and e['allow_paths'] == ['$P/outside-a', '$P/outside-b']"
    r run --backend bubblewrap --allow-net 198.18.0.61 --allow-net 198.18.0.62 -- true
    check "--allow-net refused by bubblewrap: 125" rc_is 125
    check "the refuse line records both --allow-net" \
        audit "e['kind'] == 'refuse' and e['allow_hosts'] == ['198.18.0.61', '198.18.0.62']"
    r run --allow-path "$P/outside-a" -- curl http://198.18.0.9/
    check "a blocked run records its one-shot flags too" \
        audit "e['kind'] == 'block' and e['allow_paths'] == ['$P/outside-a']"

    # Withheld environment: names recorded, values nowhere, program blind.
    RC=0
    KGAUDIT_SECRET_TOKEN=kgval-9f8e7d1 MY_API_KEY=kgval-1a2b3c4 \
        KGAUDIT_PASSED_TOKEN=kgval-passed5 kg run -- sh -c \
        'echo "${KGAUDIT_SECRET_TOKEN:-absent} ${MY_API_KEY:-absent} ${KGAUDIT_PASSED_TOKEN:-absent}"' \
        >"$KG_TMP/out" 2>"$KG_TMP/err" || RC=$?
    check "withheld env: exit 0" rc_is 0
    check "the program sees neither withheld value, but the pass_env one" \
        [ "$(cat "$KG_TMP/out")" = "absent absent kgval-passed5" ]
    check "withheld_env names both" \
        audit "{'KGAUDIT_SECRET_TOKEN', 'MY_API_KEY'} <= set(e['withheld_env']) and e['withheld_env'] == sorted(e['withheld_env'])"
    check "a pass_env name is not listed as withheld" \
        audit "'KGAUDIT_PASSED_TOKEN' not in e['withheld_env']"
    check "no value appears anywhere in the log" \
        bash -c "! grep -q 'kgval-' '$(LOG)'"

    # Every line so far is one JSON object with the common fields.
    check "all lines valid, each with time, kind, argv, cwd, pid" \
        audit "len(L) == 11 and all(rfc3339_utc_now(x['time']) and x['kind'] in ('launch', 'block', 'refuse') and type(x['argv']) is list and x['cwd'] and x['pid'] > 1 for x in L)"
    check "launch lines, and only they, have backend and network" \
        audit "all(('backend' in x and 'network' in x) == (x['kind'] == 'launch') for x in L)"
    check "block and refuse lines, and only they, have a reason" \
        audit "all(('reason' in x) == (x['kind'] != 'launch') for x in L)"

    # --dry-run writes nothing, neither a launch nor a refuse line.
    n=$(lines)
    r run --dry-run -- true kgaudit-dry
    check "--dry-run: exit 0" rc_is 0
    r run --dry-run --backend bubblewrap --allow-net 198.18.0.63 -- true
    check "--dry-run refused: exit 125" rc_is 125
    r run --dry-run -- curl http://198.18.0.9/
    check "--dry-run of a blocked command: 126" rc_is 126
    check "--dry-run of a blocked command: one kgate: line, no plan" one_kgate_line
    check "--dry-run of a blocked command: nothing on stdout" out_empty
    check "--dry-run wrote no audit line" [ "$(lines)" -eq "$n" ]

    # pid is kgate's own: a program that waits for a go file in the project.
    rm -f "$P/go"
    kg run -- sh -c 'for i in $(seq 400); do [ -e go ] && exit 0; sleep 0.05; done; exit 9' \
        kgaudit-pid-6612 >/dev/null 2>&1 &
    bg=$!
    pid=
    for _ in $(seq 100); do
        pid=$(pgrep -f "^$KGATE_BIN run .*kgaudit-pid-6612" | head -n1)
        [ -n "$pid" ] && grep -q kgaudit-pid-6612 "$(LOG)" 2>/dev/null && break
        sleep 0.1
    done
    touch "$P/go"
    rc=0
    wait "$bg" || rc=$?
    check "the waiting program ran (exit 0)" [ "$rc" -eq 0 ]
    check "the launch line's pid is kgate's ($pid)" \
        audit "e['argv'][-1] == 'kgaudit-pid-6612' and e['pid'] == int('${pid:-0}')"

    # 40 concurrent launches with 20 KB command lines: 40 whole lines.
    rm -f "$(LOG)" "$(LOG).head"
    for i in $(seq 1 40); do
        big=$(printf "kgpar-$i-%.0s0123456789" $(seq 1 1000))
        (
            rc=0
            kg run -- true "kgpar-$i" "$big" >/dev/null 2>"$KG_TMP/parerr-$i" || rc=$?
            echo "$rc" >"$KG_TMP/par-$i"
        ) &
    done
    wait
    # A run that did not exit 0 says why: its kgate: line, in the check's
    # name (a rare refusal under concurrency has shown here in CI only).
    why=$(for i in $(seq 1 40); do
        [ "$(cat "$KG_TMP/par-$i")" = 0 ] || printf ' [run %s: exit %s: %s]' "$i" \
            "$(cat "$KG_TMP/par-$i")" "$(tr '\n' ' ' <"$KG_TMP/parerr-$i" | cut -c1-300)"
    done)
    check "40 concurrent runs all exited 0$why" \
        [ "$(cat "$KG_TMP"/par-* | sort -u)" = 0 ]
    check "40 concurrent runs: exactly 40 valid, whole lines" \
        audit "len(L) == 40 and sorted(x['argv'][1] for x in L) == sorted('kgpar-%d' % i for i in range(1, 41)) and all(x['kind'] == 'launch' and x['argv'][2] == (x['argv'][1] + '-0123456789') * 1000 for x in L)"
    r audit verify
    check "40 concurrent runs: one unbroken chain (kgate audit verify: $(cat "$KG_TMP/out"))" \
        [ "$RC" -eq 0 -a "$(cat "$KG_TMP/out")" = "intact, 80 records" ]
    rm -f "$KG_TMP"/par-* "$KG_TMP"/parerr-*

    # The launch line is on disk before the program starts: the program
    # itself finds it (the log given back read-only).
    write_config <<'EOF'
network: off
read_paths: [~/.kgate/audit.log]
EOF
    r run -- sh -c 'grep -c kgaudit-self-7731 ~/.kgate/audit.log' kgaudit-self-7731
    check "the program reads its own launch line" [ "$RC" -eq 0 -a "$(cat "$KG_TMP/out")" = 1 ]
    r run -- sh -c 'echo x >> ~/.kgate/audit.log'
    check "and cannot write the log (it is read-only inside)" \
        sh -c '[ "$1" -ne 0 ] && grep -q "Read-only file system" "$2"' _ "$RC" "$KG_TMP/err"
    check "the log is still valid" audit "e['kind'] == 'launch'"
    printf 'network: off\n' | write_config

    # An audit log that cannot be written: nothing starts, exit 125.
    # broken DESC: the program would print a marker and leave a file.
    broken() {
        rm -f "$P/kgaudit-ran"
        RC=0
        as_user timeout 30 "$KGATE_BIN" run -- sh -c 'echo kgaudit-ran; touch kgaudit-ran' \
            >"$KG_TMP/out" 2>"$KG_TMP/err" || RC=$?
        check "$1: exit 125 (got $RC)" rc_is 125
        check "$1: one kgate: line" one_kgate_line
        check "$1: the line names the audit log" grep -q 'audit' "$KG_TMP/err"
        check "$1: no output from the program" out_empty
        check "$1: the program did not run" [ ! -e "$P/kgaudit-ran" ]
    }
    rm -f "$(LOG)"
    mkdir "$(LOG)"
    broken "audit.log is a directory"
    rmdir "$(LOG)"
    echo kgaudit-elsewhere >"$KG_HOME/elsewhere.log"
    ln -s "$KG_HOME/elsewhere.log" "$(LOG)"
    broken "audit.log is a symlink to a file"
    check "the symlink's target is unchanged" \
        [ "$(cat "$KG_HOME/elsewhere.log")" = kgaudit-elsewhere ]
    rm -f "$(LOG)"
    ln -s "$KG_HOME/nowhere.log" "$(LOG)"
    broken "audit.log is a dangling symlink"
    check "the dangling symlink's target was not created" [ ! -e "$KG_HOME/nowhere.log" ]
    rm -f "$(LOG)"
    mkfifo "$(LOG)"
    chown -h "$KG_UID:$KG_GID" "$(LOG)"
    broken "audit.log is a FIFO (and kgate does not hang on it)"
    rm -f "$(LOG)"
    if [ "$KG_UID" -ne 0 ]; then
        # Modes mean nothing to root: only for the unprivileged uid.
        touch "$(LOG)"
        chown "$KG_UID:$KG_GID" "$(LOG)"
        chmod 000 "$(LOG)"
        broken "audit.log mode 000"
        rm -f "$(LOG)"
        chmod 0500 "$KG_HOME/.kgate"
        broken "~/.kgate not writable, no audit.log yet"
        chmod 0700 "$KG_HOME/.kgate"
    fi

    # A refusal with a broken log is still the same refusal, in one line.
    printf 'network: off\ndeny_exec: [curl]\n' | write_config
    mkdir "$(LOG)"
    r run -- curl http://198.18.0.9/
    check "blocked with a broken log: still 126" rc_is 126
    check "blocked with a broken log: one kgate: line" one_kgate_line
    check "blocked with a broken log: no output" out_empty
    rmdir "$(LOG)"
    r run -- true kgaudit-after
    check "a repaired log works again" audit "len(L) == 1 and e['argv'] == ['true', 'kgaudit-after']"

    # Kind net: what a backend refused while the program ran, through
    # kgate_launch.events_fd (ABI 2.1).  The test backend tp_events writes
    # two records and one that does not parse, then runs the program as a
    # plain child that says which descriptor the backend got and whether
    # the program inherited it.  tp_events0 declares ABI 2.0: it must get
    # none, and then nothing is logged (the control).
    EV_DIR=${KGATE_BUILD_ROOT:-}/tests/unit/plugins/events
    if [ -f "$EV_DIR/tp_events.so" ] && [ -f "$EV_DIR/tp_events0.so" ]; then
        evp=$KG_HOME/evplugins
        mkdir -p "$evp"
        cp "$EV_DIR/tp_events.so" "$EV_DIR/tp_events0.so" "$evp/"
        chmod -R a+rX "$evp"
        printf 'network: off\n' | write_config
        rm -f "$(LOG)"
        KGATE_PLUGIN_PATH=$evp:$KGATE_PLUGIN_PATH r run --backend events -- echo kgnet-ran-5120
        check "events: the program ran (exit 0, its marker)" \
            sh -c '[ "$1" -eq 0 ] && grep -qx kgnet-ran-5120 "$2"' _ "$RC" "$KG_TMP/out"
        check "events: the backend got a descriptor" grep -qE '^events_fd=[0-9]+$' "$KG_TMP/out"
        check "events: the program did not inherit it" \
            sh -c '! grep -q events_fd_inherited "$1"' _ "$KG_TMP/out"
        check "events: launch, two net lines, then the count of the unreadable one" \
            audit "[x['kind'] for x in L] == ['launch', 'net', 'net', 'net']"
        check "events: the refused name" \
            audit "common(L[1], 'net', ['echo', 'kgnet-ran-5120'], '$P') and L[1]['backend'] == 'events' and L[1]['verdict'] == 'refused' and L[1]['name'] == 'evil.example' and 'addr' not in L[1] and L[1]['port'] == 0"
        check "events: the refused connection with its name" \
            audit "L[2]['verdict'] == 'refused' and L[2]['name'] == 'api.example' and L[2]['addr'] == '198.18.0.9' and L[2]['port'] == 80"
        check "events: the unreadable record is counted, not logged" \
            audit "'verdict' not in L[3] and '1 unreadable' in L[3]['reason'] and all(x.get('name') in (None, 'evil.example', 'api.example') for x in L)"
        check "events: one summary line on stderr" \
            [ "$(cat "$KG_TMP/err")" = "kgate: refused 1 name: evil.example; 1 connection: 198.18.0.9:80 (api.example); 1 unreadable event record from the backend ignored" ]
        rm -f "$(LOG)"
        KGATE_PLUGIN_PATH=$evp:$KGATE_PLUGIN_PATH r run --quiet --backend events -- echo kgnet-ran-5121
        check "--quiet: the program ran" \
            sh -c '[ "$1" -eq 0 ] && grep -qx kgnet-ran-5121 "$2"' _ "$RC" "$KG_TMP/out"
        check "--quiet: no summary line" [ ! -s "$KG_TMP/err" ]
        check "--quiet: the net lines are written all the same" \
            audit "[x['kind'] for x in L] == ['launch', 'net', 'net', 'net']"
        rm -f "$(LOG)"
        KGATE_PLUGIN_PATH=$evp:$KGATE_PLUGIN_PATH r run --backend events0 -- echo kgnet-ran-5122
        check "ABI 2.0 backend: the program ran" \
            sh -c '[ "$1" -eq 0 ] && grep -qx kgnet-ran-5122 "$2"' _ "$RC" "$KG_TMP/out"
        check "ABI 2.0 backend: no descriptor handed to it" grep -qx 'events_fd=-1' "$KG_TMP/out"
        check "ABI 2.0 backend: no net line, no summary" \
            sh -c '[ ! -s "$1" ]' _ "$KG_TMP/err"
        check "ABI 2.0 backend: only the launch line" audit "[x['kind'] for x in L] == ['launch']"

        # A backend that commits (ABI 2.1) has the launch line written from
        # inside its launch, once all that can fail is in place (the name
        # filter's nft set and resolver): a launch that fails before then
        # leaves one refuse line and no launch line.
        cp "$EV_DIR/tp_commit.so" "$evp/"
        chmod a+r "$evp/tp_commit.so"
        rm -f "$(LOG)"
        KGATE_PLUGIN_PATH=$evp:$KGATE_PLUGIN_PATH r run --backend commit -- \
            sh -c 'echo kgcommit-ran; grep -c "\"kind\":\"launch\"" "$1"' _ "$(LOG)"
        check "commit: the program ran (exit 0, its marker)" \
            sh -c '[ "$1" -eq 0 ] && grep -qx kgcommit-ran "$2"' _ "$RC" "$KG_TMP/out"
        check "commit: the launch line was on disk when the program started" \
            sh -c 'sed -n 2p "$1" | grep -qx 1' _ "$KG_TMP/out"
        check "commit: one launch line" audit "[x['kind'] for x in L] == ['launch'] and L[0]['backend'] == 'commit'"
        rm -f "$(LOG)"
        KGATE_PLUGIN_PATH=$evp:$KGATE_PLUGIN_PATH r run --backend commit -- \
            sh -c 'echo kgcommit-ran-2' kg-fail-before-commit
        check "failed before commit: exit 125, one line naming the failure" \
            sh -c '[ "$1" -eq 125 ] && [ "$(wc -l < "$2")" -eq 1 ] && grep -q "^kgate: .*the test filter could not be loaded" "$2"' _ "$RC" "$KG_TMP/err"
        check "failed before commit: the program did not run" \
            sh -c '! grep -q kgcommit-ran-2 "$1"' _ "$KG_TMP/out"
        check "failed before commit: a refuse line, no launch line" \
            audit "[x['kind'] for x in L] == ['refuse'] and 'the test filter could not be loaded' in L[0]['reason'] and L[0]['backend'] == 'commit'"
        rm -f "$(LOG)"
        KGATE_PLUGIN_PATH=$evp:$KGATE_PLUGIN_PATH r run --backend commit -- \
            sh -c 'sleep 3; echo kgcommit-late' kg-skip-commit
        check "no commit: the core stops it (exit 125, says why)" \
            sh -c '[ "$1" -eq 125 ] && grep -q "^kgate: .*without writing the audit launch line" "$2"' _ "$RC" "$KG_TMP/err"
        check "no commit: the program was killed before its marker" \
            sh -c '! grep -q kgcommit-late "$1"' _ "$KG_TMP/out"
        check "no commit: a refuse line, no launch line" \
            audit "[x['kind'] for x in L] == ['refuse'] and 'without writing the audit launch line' in L[0]['reason']"
    elif [ -n "${KGATE_MUST_WORK:-}" ]; then
        check "the test plugins tp_events and tp_events0 are built (meson -Dtests=true)" false
    fi
done
finish
