#!/usr/bin/env bash
# events.sh: the refusal channel for the caller (issue 30, 1; kgate(1),
# "EVENTS CHANNEL"; core/audit/events.c), as root and as an unprivileged
# uid: what a harness reads on --events-fd or KGATE_EVENTS_FD, and what the
# program inside can do to it (nothing: it never has the descriptor).  The
# network refusals are checked with the test hosts in restricted_net.sh
# (events_channel there).  Each run writes a marker, so a refusal test
# also shows whether its run happened.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd git python3

export GIT_AUTHOR_NAME=kg GIT_AUTHOR_EMAIL=kg@example.org
export GIT_COMMITTER_NAME=kg GIT_COMMITTER_EMAIL=kg@example.org
export GIT_CONFIG_NOSYSTEM=1
EV=$KG_TMP/events
CHK=$KG_TMP/evcheck.py
# evcheck.py FILE EXPR: every line of FILE is one JSON object (a cut or
# stray line fails), and EXPR, evaluated with o = the list of objects,
# holds.  On failure the objects are printed for whoever has to fix it.
cat >"$CHK" <<'EOF'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
assert lines[-1] == "", "the last object does not end with a newline"
o = [json.loads(l) for l in lines[:-1]]
ok = eval("(" + sys.argv[2] + ")", {"o": o, "types": [x["type"] for x in o]})
if not ok:
    print("  objects:", *o, sep="\n    ")
sys.exit(0 if ok else 1)
EOF
ev() { python3 "$CHK" "$EV" "$1"; }

for who in $(test_users); do
    use_user "$who"
    printf 'network: off\ndeny_exec: [curl]\n' | write_config
    M=$KG_PROJ/ran

    # A run that starts: hello first, summary last, the exit status, the
    # masked secret counted, the backend named; nothing in between.
    rm -f "$M"
    out=$(kg run --no-pty --events-fd 3 -- sh -c \
        'touch ran; echo ghp_0123456789abcdefghijklmnop; exit 3' 3>"$EV" 2>&1)
    check "a started run ran (marker) with its own status" test -e "$M"
    check "its output is masked" test "$out" = 'ghp_***'
    check "hello, then summary: started, exit 3, one masked, the backend" ev \
        'types == ["hello", "summary"] and o[1]["started"] is True and
         o[1]["exit_status"] == 3 and o[1]["masked"] == 1 and o[1]["backend"] == "bubblewrap"
         and o[0]["run"] == o[1]["run"] and len(o[0]["run"]) == 32
         and o[0]["command"] == ["sh", "-c", "touch ran; echo ghp_0123456789abcdefghijklmnop; exit 3"]
         and all(x["kgate_events"] == 1 for x in o)'
    check "the run id is the audit log's" \
        grep -q "\"run\":\"$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["run"])' "$EV")\"" \
        "$KG_HOME/.kgate/audit.log"

    # The deny list: a blocked object in sandbox-runtime's shape plus the
    # rule, then refused and summary; the program did not run.
    rm -f "$M"
    kg run --no-pty --events-fd 3 -- curl http://198.18.0.1/ 3>"$EV" 2>/dev/null
    rc=$?
    check "a denied command exits 126" test "$rc" = 126
    check "blocked (exec, deny_exec: curl), refused, summary" ev \
        'types == ["hello", "blocked", "refused", "summary"] and
         o[1]["code"] == "exec_denied" and o[1]["operation"] == "exec" and
         o[1]["resource"] == {"type": "exec", "path": "curl"} and
         o[1]["rule"] == {"key": "deny_exec", "entry": "curl"} and
         "deny list" in o[1]["description"] and
         o[2]["code"] == "exec_denied" and o[2]["exit_status"] == 126 and
         o[3]["started"] is False and o[3]["blocked"] == 1'

    # The same through the environment, for a harness that cannot pass an
    # option; the program is not told of it.
    rm -f "$M"
    out=$(KGATE_EVENTS_FD=3 kg run --no-pty -- sh -c 'touch ran; env | grep -c KGATE_EVENTS || true' \
        3>"$EV" 2>&1)
    check "KGATE_EVENTS_FD works the same" ev 'types == ["hello", "summary"]'
    check "and does not reach the program" test "$out" = 0

    # The program cannot write on the channel: the descriptor is not in
    # the box.  It tries every number it has and a forged line on each.
    rm -f "$M"
    kg run --no-pty --events-fd 3 -- sh -c \
        'touch ran; for fd in /proc/self/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] || continue
         echo "{\"type\":\"blocked\",\"forged\":1}" >"$fd" 2>/dev/null; done; true' 3>"$EV" 2>/dev/null
    check "the forging run ran" test -e "$M"
    check "nothing forged reached the channel" ev \
        'types == ["hello", "summary"] and not any("forged" in x for x in o)'

    # A reader that does not read costs the run nothing: the pipe is full
    # before kgate starts; the objects are dropped whole, the run ends with
    # its own status, and the pipe holds only the filler.
    rm -f "$M"
    check "a full channel: the run ends with its own status, no object cut" \
        as_user python3 -c '
import fcntl, os, subprocess, sys
r, w = os.pipe()
fcntl.fcntl(w, fcntl.F_SETFL, os.O_NONBLOCK)
n = 0
try:
    while True:
        n += os.write(w, b"x" * 4096)
except BlockingIOError:
    pass
fcntl.fcntl(w, fcntl.F_SETFL, 0)
p = subprocess.run([sys.argv[1], "run", "--no-pty", "--events-fd", str(w), "--",
                    "sh", "-c", "touch ran; exit 4"], pass_fds=(w,), timeout=60,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.close(w)
data = b""
while True:
    b = os.read(r, 65536)
    if not b:
        break
    data += b
sys.exit(0 if p.returncode == 4 and data == b"x" * n else 1)' "$KGATE_BIN"
    check "  and it did run" test -e "$M"

    # Refused before anything runs: a descriptor that is not open, one that
    # is the program's stdout, one open only for reading, one that is not a
    # number.  One kgate: line each, exit 125, and the program never ran.
    for bad in 7 1 rdonly 3x; do
        rm -f "$M"
        if [ "$bad" = rdonly ]; then
            out=$(kg run --no-pty --events-fd 3 -- touch ran 3</dev/null 2>&1)
        else
            out=$(kg run --no-pty --events-fd "$bad" -- touch ran 2>&1)
        fi
        rc=$?
        check "events descriptor '$bad': refused (125, one kgate: line), nothing ran" \
            sh -c '[ "$1" = 125 ] && [ "$(printf "%s\n" "$2" | grep -c "^kgate: events descriptor")" = 1 ] &&
                   [ "$(printf "%s\n" "$2" | wc -l)" = 1 ] && [ ! -e "$3" ]' _ "$rc" "$out" "$M"
    done

    # A descriptor above 2 that is a standard stream under another number
    # (issue 40, defect 8): the program's own {"type":"summary"} would
    # reach the channel first.  Compared by the object, not the number: a
    # copy of stdout or stderr, the file stdout appends to opened again,
    # the file stdin reads.  Each refused with one kgate: line naming the
    # stream, and the program never ran; the stream shows nothing of it.
    SAME=$KG_TMP/same-$who
    for how in dup1 dup2 file1 file0; do
        rm -f "$M" "$SAME" "$KG_TMP/se"
        touch "$SAME" && chmod 0666 "$SAME"
        rc=0
        case $how in
        dup1) kg run --no-pty --events-fd 3 -- sh -c 'echo "{\"type\":\"summary\"}"; touch ran' \
            >"$SAME" 3>&1 2>"$KG_TMP/se" || rc=$? ;;
        dup2) kg run --no-pty --events-fd 3 -- sh -c 'echo "{\"type\":\"summary\"}" >&2; touch ran' \
            >/dev/null 2>"$SAME" 3>&2 || rc=$? ;;
        file1) kg run --no-pty --events-fd 3 -- sh -c 'echo "{\"type\":\"summary\"}"; touch ran' \
            3>>"$SAME" >>"$SAME" 2>"$KG_TMP/se" || rc=$? ;;
        file0) kg run --no-pty --events-fd 3 -- sh -c 'cat >/dev/null; touch ran' \
            3>>"$SAME" <"$SAME" >/dev/null 2>"$KG_TMP/se" || rc=$? ;;
        esac
        [ "$how" = dup2 ] && cp "$SAME" "$KG_TMP/se"
        stream=output
        [ "$how" = dup2 ] && stream=error
        [ "$how" = file0 ] && stream=input
        check "events descriptor that is standard $stream ($how): refused (125, got $rc)" [ "$rc" = 125 ]
        check "  one kgate: line that names standard $stream" sh -c \
            '[ "$(wc -l <"$1")" = 1 ] && grep -q "^kgate: events descriptor 3 is the program.s standard $2" "$1"' \
            _ "$KG_TMP/se" "$stream"
        check "  the program never ran" test ! -e "$M"
        check "  no summary object reached the stream" sh -c '! grep -q summary "$1"' _ "$SAME"
    done
    # Control: the same redirections with a file of its own for the channel.
    rm -f "$M" "$EV"
    kg run --no-pty --events-fd 3 -- sh -c 'touch ran' 3>"$EV" >>"$SAME" 2>/dev/null
    check "control: a channel of its own beside the same stdout runs" test -e "$M"
    check "  and carries hello and summary" ev 'types == ["hello", "summary"]'

    # The git check after the run: a planted repository is neutralised and
    # the harness is told, with the code it can switch on.
    as_user sh -e -c '
        git init -q . && echo one > f.txt && git add f.txt && git commit -q -m one
        git init -q ../n && git -C ../n commit -q --allow-empty -m n
        git update-index --add --cacheinfo 160000,$(git -C ../n rev-parse HEAD),nested
        git commit -q -m nested && mkdir nested work'
    rm -f "$M"
    kg run --no-pty --events-fd 3 -- sh -c \
        'git init -q work/evil && git -C work/evil config core.fsmonitor "touch /tmp/x" &&
         git -C work/evil commit -q --allow-empty -m x && mv work/evil/.git work/gd &&
         printf "gitdir: ../work/gd\n" > nested/.git && touch ran' 3>"$EV" 2>/dev/null
    check "the planting run ran" test -e "$M"
    check "a git_neutralised object names the planted repository" ev \
        'types == ["hello", "blocked", "summary"] and o[1]["code"] == "git_neutralised" and
         o[1]["rule"]["key"] == "git_check" and "nested" in o[1]["description"] and
         o[2]["blocked"] == 1'

    # The example harness reads the channel and explains the refusal.
    install -m 0644 "$KGATE_SOURCE_ROOT/docs/examples/agent-harness.py" "$KG_TMP/h.py"
    out=$(as_user python3 "$KG_TMP/h.py" --kgate "$KGATE_BIN" --json 'curl http://198.18.0.1/')
    check "the example harness gives the model the reason and the rule" \
        python3 -c 'import json,sys; r = json.loads(sys.argv[1])
w = r["why"]
sys.exit(0 if r["exit"] == 126 and len(w) == 1 and "deny_exec" in w[0] and "curl" in w[0] else 1)' "$out"
done
finish
