#!/usr/bin/env bash
# run_signals.sh: signals and the end of a run (issue 3, "Audit and exit"),
# as root and as an unprivileged uid.  SIGINT, SIGTERM, SIGHUP and SIGQUIT
# sent to kgate reach the program; a signal death is 128+N; when kgate is
# SIGKILLed nothing of the sandbox survives; a background child does not
# outlive the program, and kgate does not wait for it.
#
# Every wait is a bounded poll: a failure shows as a failed check, never as
# a hung test.  Processes are found by unusual sleep durations (marker
# arguments nothing else on the machine uses).
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd pgrep timeout python3
IGNORING=$(kg_reachable "$(dirname "$0")/ignoring.py")

# Processes whose command line starts with "sleep MARKER".
alive() { pgrep -f "^sleep $1\$" >/dev/null; }
gone() { ! alive "$1"; }
# kgate's own pid, found by a marker in its command line.
kgate_pid() { pgrep -f "^$KGATE_BIN run .*$1" | head -n1; }
# Ends leftovers of a failed check, by pid.
reap() { for p in $(pgrep -f "^sleep $1\$"); do kill -KILL "$p" 2>/dev/null; done; }
# No running (non-zombie) bwrap whose command line names marker $1.
no_live_bwrap() {
    ! ps -eo stat=,args= | grep -v '^Z' | grep -q "[b]wrap .*sleep $1"
}

# signal_reaches SIG CODE: the program traps SIG and exits CODE; kgate gets
# SIG and must exit CODE.
signal_reaches() {
    local sig=$1 code=$2 mark="kgsig-$1-$KG_WHO-$$"
    local out=$KG_TMP/sig-$sig.out
    : >"$out"
    kg run -- sh -c "trap 'echo $mark-trapped; exit $code' $sig; echo $mark-ready; \
        while :; do sleep 0.05; done" >"$out" 2>/dev/null &
    local bg=$!
    poll 100 file_has "$mark-ready" "$out"
    local pid
    pid=$(kgate_pid "$mark")
    check "SIG$sig: kgate is running" [ -n "$pid" ]
    [ -n "$pid" ] && kill -s "$sig" "$pid"
    local rc=0 waited=0
    # wait is not bounded: if kgate ignored the signal, end it ourselves.
    poll 100 bash -c "! kill -0 $pid 2>/dev/null" || {
        kill -KILL "$pid" 2>/dev/null
        waited=1
    }
    wait "$bg" || rc=$?
    check "SIG$sig: kgate ended by itself" [ "$waited" -eq 0 ]
    check "SIG$sig: the program's trap ran" file_has "$mark-trapped" "$out"
    check "SIG$sig: kgate exits with the program's code $code (got $rc)" [ "$rc" -eq "$code" ]
}

# death SIGNAL N: the program kills itself with SIGNAL; kgate exits 128+N.
death() {
    local rc=0
    kg run -- sh -c "echo kgsig-before-death; kill -$1 \$\$; echo kgsig-after-death" \
        >"$KG_TMP/out" 2>/dev/null || rc=$?
    check "a program killed by SIG$1 gives 128+$2 (got $rc)" [ "$rc" -eq $((128 + $2)) ]
    check "SIG$1: its output before the death arrived, nothing after" \
        [ "$(cat "$KG_TMP/out")" = kgsig-before-death ]
}

for who in $(test_users); do
    use_user "$who"
    printf 'network: off\n' | write_config

    signal_reaches INT 71
    signal_reaches TERM 72
    signal_reaches HUP 73
    signal_reaches QUIT 74

    # Ctrl-C at a terminal signals kgate's whole process group: the
    # program must get that SIGINT once (forwarded), not twice.
    mark="kgsig-group-$who-$$"
    : >"$KG_TMP/group.out"
    as_user setsid "$KGATE_BIN" run -- sh -c "n=0; trap 'n=\$((n+1))' INT; echo $mark-ready; \
        while [ \$n -eq 0 ]; do sleep 0.05; done; sleep 0.5; exit \$((80+n))" \
        >"$KG_TMP/group.out" 2>/dev/null &
    bg=$!
    poll 100 file_has "$mark-ready" "$KG_TMP/group.out"
    pid=$(kgate_pid "$mark")
    check "setsid kgate found, leading its own group" \
        [ -n "$pid" -a "$(ps -o pgid= -p "${pid:-0}" | tr -d ' ')" = "${pid:-x}" ]
    [ -n "$pid" ] && kill -INT -- "-$pid"
    poll 100 bash -c "! kill -0 ${pid:-0} 2>/dev/null" || kill -KILL "${pid:-0}" 2>/dev/null
    rc=0
    wait "$bg" || rc=$?
    check "SIGINT to kgate's process group reaches the program exactly once (81, got $rc)" \
        [ "$rc" -eq 81 ]

    death KILL 9
    death SEGV 11
    death TERM 15
    death ABRT 6

    # kgate's stdout closed by its reader: the program sees EPIPE (or
    # SIGPIPE) as if it wrote to the closed pipe itself; kgate survives and
    # returns the program's status.
    kg run -- sh -c 'trap "" PIPE; while echo kgsig-y; do :; done; exit 67' 2>/dev/null |
        head -n1 >/dev/null
    rc=${PIPESTATUS[0]}
    check "a program ignoring SIGPIPE gets EPIPE, and its status 67 comes back (got $rc)" \
        [ "$rc" -eq 67 ]
    kg run -- sh -c 'while echo kgsig-y; do :; done; exit 67' 2>/dev/null | head -n1 >/dev/null
    rc=${PIPESTATUS[0]}
    check "a program dying of SIGPIPE gives 141 (got $rc)" [ "$rc" -eq 141 ]

    # kgate SIGKILLed: --die-with-parent must take the whole sandbox,
    # background children included, and one that left with setsid and a
    # double fork (issue 43.4: the PID namespace takes it, whatever the
    # machine's PID 1 does; run_signals_pid1 runs this under one that
    # reaps nothing).
    m1=1001.$((RANDOM % 90 + 10))1
    m2=1001.$((RANDOM % 90 + 10))2
    m3=1001.$((RANDOM % 90 + 10))3
    kg run -- sh -c "setsid sh -c 'sleep $m3 </dev/null >/dev/null 2>&1 &' </dev/null >/dev/null 2>&1
        sleep $m1 & sleep $m2 & echo kgsig-orphan-ready; wait" \
        >/dev/null 2>&1 &
    bg=$!
    poll 100 alive "$m1"
    poll 100 alive "$m2"
    poll 100 alive "$m3"
    check "before the kill: the background sleep runs" alive "$m1"
    check "before the kill: the foreground sleep runs" alive "$m2"
    check "before the kill: the setsid double-forked sleep runs" alive "$m3"
    pid=$(kgate_pid "sleep $m1")
    check "kgate found" [ -n "$pid" ]
    [ -n "$pid" ] && kill -KILL "$pid"
    rc=0
    wait "$bg" || rc=$?
    check "kgate died of SIGKILL (137, got $rc)" [ "$rc" -eq 137 ]
    poll 50 gone "$m1"
    poll 50 gone "$m2"
    poll 50 gone "$m3"
    check "after kgate's SIGKILL no background child survives" gone "$m1"
    check "after kgate's SIGKILL no foreground child survives" gone "$m2"
    check "after kgate's SIGKILL no setsid double-forked orphan survives" gone "$m3"
    poll 50 no_live_bwrap "$m1"
    check "no bwrap of that run survives (zombies aside: pid 1 may not reap)" \
        no_live_bwrap "$m1"
    reap "$m1"
    reap "$m2"
    reap "$m3"

    # The program exits normally and leaves a background child behind: the
    # sandbox ends with it, and kgate does not wait for the child.
    m3=1002.$((RANDOM % 90 + 10))3
    rc=0
    as_user timeout 30 "$KGATE_BIN" run -- sh -c "sleep $m3 & exit 0" \
        >/dev/null 2>&1 || rc=$?
    check "a program leaving a background child: exit 0, no hang (got $rc)" [ "$rc" -eq 0 ]
    poll 50 gone "$m3"
    check "the background child did not survive the program" gone "$m3"

    # The same with the child holding stdout and stderr open, and a status.
    m4=1002.$((RANDOM % 90 + 10))4
    rc=0
    as_user timeout 30 "$KGATE_BIN" run -- sh -c "sleep $m4 & echo kgsig-bg-out; exit 5" \
        >"$KG_TMP/out" 2>&1 || rc=$?
    check "a background child holding the output: status 5, no hang (got $rc)" \
        [ "$rc" -eq 5 ]
    check "the output written before the exit arrived" \
        [ "$(cat "$KG_TMP/out")" = kgsig-bg-out ]
    poll 50 gone "$m4"
    check "that background child did not survive either" gone "$m4"

    # A signal reaches the program's children too (the sandbox's process
    # group), so a shell waiting on a child is not left behind.
    m5=1003.$((RANDOM % 90 + 10))5
    kg run -- sh -c "sleep $m5 & wait" >/dev/null 2>&1 &
    bg=$!
    poll 100 alive "$m5"
    pid=$(kgate_pid "sleep $m5")
    [ -n "$pid" ] && kill -TERM "$pid"
    rc=0
    poll 100 bash -c "! kill -0 ${pid:-0} 2>/dev/null" || kill -KILL "${pid:-0}" 2>/dev/null
    wait "$bg" || rc=$?
    check "SIGTERM to kgate while the program waits on a child: 143 (got $rc)" \
        [ "$rc" -eq 143 ]
    poll 50 gone "$m5"
    check "and the child is gone" gone "$m5"
    reap "$m5"

    # A signal kgate's caller ignores stays ignored in the program, as it
    # would without kgate (a script's background job ignores SIGINT; nohup
    # ignores SIGHUP).  The control without the ignore shows it can fail.
    for sig in INT HUP; do
        out=$(as_user sh -c 'trap "" '"$sig"'; exec "$0" run --no-pty -- sh -c "kill -'"$sig"' \$\$; echo survived-'"$sig"'"' \
            "$KGATE_BIN" 2>&1)
        check "SIG$sig ignored by kgate's caller stays ignored in the program" \
            [ "$out" = "survived-$sig" ]
    done
    rc=0
    as_user "$KGATE_BIN" run --no-pty -- sh -c 'kill -INT $$; echo survived' >/dev/null 2>&1 || rc=$?
    check "control: without the ignore, the program dies of SIGINT (130, got $rc)" [ "$rc" -eq 130 ]

    # The program gets exactly the dispositions kgate was started with, in
    # both boxes, with a pty and without: the ignored set of
    # /proc/self/status inside equals the one the same command sees
    # without kgate.  SIGWINCH and SIGTTIN are caught by kgate itself (so
    # a child reset from kgate's state, not the caller's, loses them);
    # SIGCHLD is the documented exception (sigstart.c).
    plain=$(as_user python3 "$IGNORING" HUP,TERM,WINCH,TTIN,USR2 -- \
        sed -n 's/^SigIgn:[[:space:]]*//p' /proc/self/status)
    none=$(as_user python3 "$IGNORING" - -- sed -n 's/^SigIgn:[[:space:]]*//p' /proc/self/status)
    check "control: the ignored set differs from none ($plain, $none)" \
        [ -n "$plain" -a "$plain" != "$none" -a "$none" = 0000000000000000 ]
    for box in bubblewrap landlock; do
        for mode in --no-pty --pty; do
            got=$(as_user python3 "$IGNORING" HUP,TERM,WINCH,TTIN,USR2 ${mode/--no-pty/} -- \
                "$KGATE_BIN" run --backend "$box" -- \
                sed -n 's/^SigIgn:[[:space:]]*//p' /proc/self/status 2>&1)
            check "$box $mode: the program ignores what kgate's caller ignored ($plain, got $got)" \
                [ "$got" = "$plain" ]
            got=$(as_user python3 "$IGNORING" - ${mode/--no-pty/} -- \
                "$KGATE_BIN" run --backend "$box" -- \
                sed -n 's/^SigIgn:[[:space:]]*//p' /proc/self/status 2>&1)
            check "$box $mode: nothing ignored when nothing was (got $got)" [ "$got" = "$none" ]
        done
    done
done
finish
