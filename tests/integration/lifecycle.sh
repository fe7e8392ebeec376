#!/bin/bash
# lifecycle.sh: what is left when kgate ends, however it ends (issue 18),
# as root and as an unprivileged uid.
#
#  - No zombies, whatever PID 1 does: under a parent that is subreaper and
#    waits only for its own child (a container's agent as PID 1 without an
#    init), 20 runs leave no zombie.  Control: 20 plain bwrap runs leave
#    some, so the check can fail.
#  - Nothing survives kgate, whatever the moment: kgate SIGKILLed at random
#    moments of its start-up, many times, with the network off and
#    restricted; no process of any of those sandboxes is left.
#  - max_processes bounds a fork bomb inside (ordinary users: RLIMIT_NPROC;
#    root: doctor says no bound applies); a project file only lowers it.
#  - A program that stops itself (kill -STOP $$) no longer wedges kgate:
#    SIGTERM or SIGINT ends it at once; a program that ignores SIGTERM is
#    killed after the grace period (docs/exit-codes.md).
# The terminal side (every ending signal restores it, Ctrl-C to a stopped
# program) is in pty.sh, through ptydrive.py.
#
# Processes are found by marker arguments (sleep durations nothing else on
# the machine uses); every wait is bounded.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd pgrep timeout
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "$PY is not installed"

# Many launches, each a few processes: be nice to the rest of the machine.
renice -n 10 $$ >/dev/null 2>&1 || true

# KILL_TRIES: kills per mode and user (the report's figures came from
# larger runs of the same loop).
KILL_TRIES=${KGATE_KILL_TRIES:-150}

slirp_ready

# The parent of everything a test starts here: subreaper (so orphans come
# to it, as they would to a PID 1), waits for its own child only, then
# says how many of its children are zombies and how many still live.
REAPER=$KG_TMP/reaper.py
cat >"$REAPER" <<'EOF'
import ctypes, os, sys, time
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    sys.exit("prctl failed")
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
os.waitpid(pid, 0)
time.sleep(0.5)  # what is still dying, dies
zombies = live = 0
for d in os.listdir("/proc"):
    if not d.isdigit():
        continue
    try:
        with open("/proc/%s/stat" % d) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    if int(fields[1]) == os.getpid():
        if fields[0] == "Z":
            zombies += 1
        else:
            live += 1
print(zombies, live)
EOF
chmod 0644 "$REAPER"

# The bwrap options kgate uses for pid 1, without kgate: the control.
PLAIN_BWRAP='bwrap --die-with-parent --new-session --unshare-user --unshare-pid --ro-bind / / --dev /dev --proc /proc -- /bin/true'

# Processes (not zombies) whose command line holds "sleep MARK".
alive_count() {
    ps -eo stat=,args= | grep -v '^Z' | grep -c "[s]leep $1\$"
}
# Ends leftovers of a failed check.
cleanup_marker() {
    local p
    for p in $(pgrep -f "sleep $1\$"); do kill -KILL "$p" 2>/dev/null; done
}

no_zombies_after_20_runs() {
    local got
    got=$(as_user "$PY" "$REAPER" sh -c \
        'for i in $(seq 20); do "$0" run -- true || exit 1; done' "$KGATE_BIN") ||
        { echo "runs failed: $got"; return 1; }
    echo "# 20 kgate runs: zombies and live children left: $got"
    [ "$got" = "0 0" ]
}

control_plain_bwrap_leaves_zombies() {
    local got
    got=$(as_user "$PY" "$REAPER" sh -c \
        "for i in \$(seq 20); do $PLAIN_BWRAP || exit 1; done") ||
        { echo "runs failed: $got"; return 1; }
    echo "# control, 20 plain bwrap runs: zombies and live children left: $got"
    [ "${got%% *}" -gt 0 ]
}

# kill_storm MARK MAXDELAY_MS: KILL_TRIES starts of kgate, each SIGKILLed
# after a random delay below MAXDELAY_MS (start-up takes longer than that,
# so the kills land all over it); then no sandbox process may be left.
kill_storm() {
    local mark=$1 maxms=$2 left
    as_user bash -c '
        for i in $(seq "$1"); do
            "$0" run -- sleep "$2" </dev/null >/dev/null 2>&1 &
            k=$!
            sleep "0.$(printf %03d $((RANDOM % $3)))"
            kill -KILL "$k"
            wait "$k" 2>/dev/null
        done' "$KGATE_BIN" "$KILL_TRIES" "$mark" "$maxms"
    # --die-with-parent and the guard act at once; give a slow machine
    # time anyway.
    sleep 1
    poll 30 [ "$(alive_count "$mark")" -eq 0 ]
    left=$(alive_count "$mark")
    echo "# $KILL_TRIES kills at random moments: $left sandbox processes left"
    cleanup_marker "$mark"
    [ "$left" -eq 0 ]
}

# A program that stops itself; kgate gets SIG and must end at once with
# CODE (the program's death of SIG, once continued).
stopped_then() {
    local sig=$1 code=$2 mark=$3 out=$KG_TMP/stopped.out
    : >"$out"
    kg run -- sh -c "echo ready; kill -STOP \$\$; sleep $mark" >"$out" 2>&1 &
    local bg=$!
    poll 100 file_has ready "$out"
    local pid
    pid=$(pgrep -o -f "^$KGATE_BIN run -- sh -c echo ready; kill -STOP")
    [ -n "$pid" ] || { echo "kgate not found"; kill -KILL $bg; return 1; }
    # The program has stopped once its shell shows T.
    poll 100 sh -c "ps -eo stat=,args= | grep -q '^T.*[s]h -c echo ready; kill -STOP'"
    local start=$SECONDS rc
    kill "-$sig" "$pid"
    wait_bounded 20 "$bg" "$pid"
    rc=$?
    echo "# SIG$sig to kgate with the program stopped: exit $rc after $((SECONDS - start)) s"
    cleanup_marker "$mark"
    [ "$rc" -eq "$code" ] && [ $((SECONDS - start)) -lt 5 ]
}

# A program that ignores SIGTERM: killed after the grace period (137), and
# kgate says so in one line.
term_ignored_grace() {
    local out=$KG_TMP/grace.out err=$KG_TMP/grace.err
    : >"$out"
    kg run -- sh -c 'trap "" TERM; echo ready; while :; do sleep 0.1; done' \
        >"$out" 2>"$err" &
    local bg=$!
    poll 100 file_has ready "$out"
    local pid
    pid=$(pgrep -o -f "^$KGATE_BIN run -- sh -c trap \"\" TERM")
    [ -n "$pid" ] || { echo "kgate not found"; kill -KILL $bg; return 1; }
    local start=$SECONDS rc
    kill -TERM "$pid"
    sleep 2
    # Still running during the grace period: the program may clean up.
    kill -0 "$bg" 2>/dev/null || { echo "ended before the grace period"; return 1; }
    wait_bounded 30 "$bg" "$pid"
    rc=$?
    echo "# SIGTERM ignored: exit $rc after $((SECONDS - start)) s: $(cat "$err")"
    [ "$rc" -eq 137 ] && [ $((SECONDS - start)) -ge 9 ] &&
        grep -q "^kgate: the program did not end within 10 s" "$err"
}

# A bounded fork bomb: the program forks up to 100 children that sleep.
FORKER='import os, time
n = 0
for i in range(100):
    try:
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)
        n += 1
    except OSError:
        pass
print("forked", n, flush=True)'

# max_processes 30: the box gets at most 30 more processes than the user
# had (kgate's own helpers and bwrap's pid 1 among them), and the user can
# still fork outside while the box is full.
fork_bomb_bounded() {
    local out=$KG_TMP/bomb.out
    printf 'network: off\nmax_processes: 30\n' | write_config
    kg run -- "$PY" -c "$FORKER" >"$out" 2>&1 &
    local bg=$!
    sleep 1
    local outside=no
    as_user sh -c 'sleep 0 & wait' && outside=yes
    wait "$bg"
    local n
    n=$(sed -n 's/^forked //p' "$out")
    echo "# max_processes 30: the program forked $n of 100; the user forked outside: $outside"
    [ -n "$n" ] && [ "$n" -le 30 ] && [ "$n" -ge 10 ] && [ "$outside" = yes ]
}

fork_bomb_control() {
    local n
    printf 'network: off\nmax_processes: unlimited\n' | write_config
    n=$(kg run -- "$PY" -c "$FORKER" 2>&1 | sed -n 's/^forked //p')
    echo "# control, max_processes unlimited: the program forked $n of 100"
    [ "$n" = 100 ]
}

project_cannot_raise_bound() {
    local out rc
    printf 'network: off\nmax_processes: 30\n' | write_config
    # The user's own file: another uid's is refused unread (docs/config.md).
    printf 'max_processes: 100\n' >"$KG_PROJ/.kgate.yaml"
    chown "$KG_UID:$KG_GID" "$KG_PROJ/.kgate.yaml"
    out=$(kg run -- sh -c 'echo started' 2>&1)
    rc=$?
    printf 'max_processes: 20\n' >"$KG_PROJ/.kgate.yaml"
    local lower
    lower=$(kg run -- sh -c 'echo started' 2>&1)
    rm -f "$KG_PROJ/.kgate.yaml"
    [ "$rc" -eq 125 ] && [[ $out == *"max_processes: '100' is wider"* ]] &&
        [[ $out != *started* ]] && [ "$lower" = started ] ||
        { echo "rc=$rc: $out / $lower"; return 1; }
}

doctor_says_bound() {
    local out
    printf 'network: off\nmax_processes: 30\n' | write_config
    out=$(kg doctor 2>&1 | grep '^process bound:')
    echo "# $out"
    if [ "$KG_UID" -eq 0 ]; then
        [[ $out == *"none: root is not bound"* ]]
    else
        [[ $out == *"RLIMIT_NPROC"*"+ max_processes 30"* ]]
    fi
}

for who in $(test_users); do
    use_user "$who"
    printf 'network: off\n' | write_config
    check "20 runs under a subreaper that reaps only its own child: no zombie" \
        no_zombies_after_20_runs
    check "control: 20 plain bwrap runs there leave zombies" \
        control_plain_bwrap_leaves_zombies
    check "kgate SIGKILLed at random moments of start-up: nothing survives (network off)" \
        kill_storm 10141 120
    check "a stopped program: SIGTERM to kgate ends the run at once (143)" \
        stopped_then TERM 143 10142
    check "a stopped program: SIGINT to kgate ends the run at once (130)" \
        stopped_then INT 130 10143
    check "a program ignoring SIGTERM is killed after the grace period (137, one kgate: line)" \
        term_ignored_grace
    check "doctor says which process bound applies" doctor_says_bound
    check "a project file cannot raise max_processes, may lower it" \
        project_cannot_raise_bound
    if [ "$KG_UID" -ne 0 ]; then
        check "a fork bomb inside stops at max_processes; the user still forks outside" \
            fork_bomb_bounded
        check "control: with max_processes unlimited the same program forks all 100" \
            fork_bomb_control
    fi
    printf 'network: off\n' | write_config

    if [ -z "$SLIRP" ]; then
        if [ -n "${KGATE_MUST_WORK:-}" ]; then
            check "slirp4netns, nft, dnsmasq and /dev/net/tun for the restricted checks" false
        else
            echo "# slirp4netns, nft, dnsmasq or /dev/net/tun missing: restricted checks not run"
        fi
        continue
    fi
    printf 'network: restricted\nallow_hosts: [example.test]\n' | write_config
    check "restricted: 20 runs under a subreaper: no zombie" \
        no_zombies_after_20_runs
    check "restricted: kgate SIGKILLed at random moments of start-up: nothing survives" \
        kill_storm 10144 250
    check "restricted: a stopped program: SIGTERM to kgate ends the run at once" \
        stopped_then TERM 143 10145
done
finish
