#!/bin/bash
# outlive.sh: nothing of a run outlives it (issue 25, section 5).  Where
# kgate uses its Landlock box there is no PID namespace: the core must
# find and kill every process the program left, however it hid (setsid,
# a double fork, SIGTERM ignored, a fork loop that changes its pid all the
# time), before the end-of-run checks, and the private TMPDIR must go
# whatever the program put in it (a tree deeper than the open-file limit,
# links out, directories of mode 0), without following a link.
#
# Each case is its attacker, from inside the box, in the three places
# landlock.sh uses (forced on the host, inside bwrap --disable-userns,
# under a Docker-like seccomp filter), as root and as an unprivileged uid,
# and once more in the bubblewrap box (a PID namespace), where the host
# allows it.  Every survivor writes a file into the project a few seconds
# later; every check of a refusal has a marker that shows the run (and the
# survivor) existed.
. "$(dirname "$0")/lib.sh"
need_nouserns
need_cmd python3 setsid

# How long the survivors wait before they write: longer than kgate's end
# of run takes, shorter than the test's wait after it.
LATE=6

# The processes whose working directory is the project: the run's (kgate
# itself has ended when this is asked).  Zombies have no cwd and are not
# counted: they cannot write.
survivors() {
    local p
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/cwd" 2>/dev/null)" = "$KG_PROJ" ] && echo "${p#/proc/}"
    done
}
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
no_survivor() {
    local s
    s=$(survivors)
    [ -z "$s" ] || { echo "alive: $s"; ps -o pid,ppid,stat,args -p "$(echo $s | tr ' ' ,)"; return 1; }
}
# Kills what a failed check left (by pid, never by name).
clean_survivors() { local p; for p in $(survivors); do kill -KILL "$p" 2>/dev/null; done; }

# The attackers, as files in the project's w/ (the root itself may be
# split, docs/landlock.md: nothing is created directly in it).  Each writes
# its pid, then, after $LATE seconds, a file into the project.
#  setsid.sh: a daemon in a session of its own that ignores SIGTERM and HUP
#    and stays, with a child that does the same: the child is reparented
#    to kgate only once the daemon is killed.
#  dfork.sh: the classic double fork: the middle exits at once, the
#    grandchild (SIGTERM ignored) is reparented at once.
#  hopper.py: a fork loop in a session of its own: it forks and its parent
#    exits, over and over, so its pid changes all the time, also while the
#    run ends.
#  fanout.sh: a loop in a session of its own that starts a sleeping child
#    every 10 ms while the run ends.
write_attackers() {
    local w=$KG_PROJ/w
    mkdir -p "$w"
    cat >"$w/setsid.sh" <<EOF
trap '' TERM HUP
sh -c 'trap "" TERM HUP; echo \$\$ >w/b.pid; sleep $LATE; echo late >w/late-setsid-child.txt' &
echo \$\$ >w/a.pid
while :; do sleep 1; done
EOF
    cat >"$w/dfork.sh" <<EOF
sh -c 'trap "" TERM HUP; echo \$\$ >w/d.pid; sleep $LATE; echo late >w/late-dfork.txt' &
exit 0
EOF
    cat >"$w/hopper.py" <<EOF
import os, time
os.setsid()
t0 = time.time()
open("w/h.started", "w").write(str(os.getpid()))
while True:
    if time.time() - t0 > $LATE:
        open("w/late-hopper.txt", "w").write("late")
        os._exit(0)
    if os.fork() > 0:
        os._exit(0)
EOF
    cat >"$w/fanout.sh" <<EOF
trap '' TERM HUP
echo \$\$ >w/f.pid
n=0
while :; do
    sleep 60 &
    n=\$((n + 1))
    [ \$n -eq 20 ] && echo \$n >w/f.twenty
    sleep 0.01
done
EOF
    cat >"$w/main.sh" <<'EOF'
echo M-start
setsid sh w/setsid.sh </dev/null >/dev/null 2>&1 &
sh w/dfork.sh </dev/null >/dev/null 2>&1
/usr/bin/python3 w/hopper.py </dev/null >/dev/null 2>&1 &
setsid sh w/fanout.sh </dev/null >/dev/null 2>&1 &
i=0
until [ -s w/a.pid ] && [ -s w/b.pid ] && [ -s w/d.pid ] && [ -s w/h.started ] &&
    [ -s w/f.twenty ] || [ $i -ge 100 ]; do
    sleep 0.05
    i=$((i + 1))
done
echo M-end
EOF
}

force_for() {
    case $1 in
    host) echo --backend landlock ;;
    bwrap) echo --backend bubblewrap ;;
    esac
}

test_procs() {
    local where=$1 force
    force=$(force_for "$where")
    use_user "$2"
    printf 'network: off\n' | write_config
    write_attackers
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"
    local out=$KG_TMP/procs.$where.$2.out err=$KG_TMP/procs.$where.$2.err rc=0
    # shellcheck disable=SC2086
    in_where "$where" timeout 60 "$KGATE_BIN" run $force -- sh w/main.sh >"$out" 2>"$err" || rc=$?
    # Right when kgate has returned, before any grace: nothing is left.
    local left
    left=$(survivors)
    touch "$KG_TMP/returned.$where.$2"
    check "$where: the run happened (first and last marker, exit 0, got $rc)" \
        sh -c "[ $rc -eq 0 ] && grep -qx M-start '$out' && grep -qx M-end '$out'"
    local a b d h f
    a=$(cat "$KG_PROJ/w/a.pid" 2>/dev/null)
    b=$(cat "$KG_PROJ/w/b.pid" 2>/dev/null)
    d=$(cat "$KG_PROJ/w/d.pid" 2>/dev/null)
    h=$(cat "$KG_PROJ/w/h.started" 2>/dev/null)
    f=$(cat "$KG_PROJ/w/f.pid" 2>/dev/null)
    check "$where: the attackers ran (setsid daemon, its child, double fork, hopper, fan-out)" \
        sh -c "[ -n '$a' ] && [ -n '$b' ] && [ -n '$d' ] && [ -n '$h' ] && [ -s '$KG_PROJ/w/f.twenty' ]"
    check "$where: no process of the run is left when kgate returns" [ -z "$left" ]
    # (The pids are the box's own in bubblewrap's PID namespace.)
    if [ "$where" != bwrap ]; then
        check "$where: the setsid daemon and its SIGTERM-ignoring child are gone" \
            sh -c "! kill -0 '$a' 2>/dev/null && ! kill -0 '$b' 2>/dev/null"
        check "$where: the double-forked grandchild is gone" sh -c "! kill -0 '$d' 2>/dev/null"
    fi
    sleep $((LATE + 1))
    # A survivor may have written while the run lasted (the grace), never
    # after kgate returned.
    check "$where: no survivor wrote into the project after the run" \
        sh -c "[ -z \"\$(find '$KG_PROJ/w' -name 'late-*' -newer '$KG_TMP/returned.$where.$2')\" ]"
    check "$where: no process of the run exists $((LATE + 2)) s later" no_survivor
    check "$where: nothing about the run's end on stderr" \
        sh -c "! grep -q . '$err' || { cat '$err'; false; }"
    clean_survivors
}

# The private TMPDIR, with kgate's open-file limit at 64: a tree 200 deep,
# links to a directory and a file outside (both must survive, the
# directory's mode unchanged), directories of mode 0 at the top and at the
# bottom.
TMPPROG='
echo M-start
echo "TMP $TMPDIR"
t=${TMPDIR:-/tmp}
cd "$t" || exit 3
ln -s "$OUTSIDE" link-dir && ln -s "$OUTSIDE/file" link-file
mkdir zero && echo z >zero/f && chmod 0 zero
i=0
while [ $i -lt 200 ] && mkdir d && cd d; do i=$((i+1)); done
ln -s "$OUTSIDE" deep-link-dir
mkdir zero && echo z >zero/f && chmod 0 zero
echo "DEPTH $i"
echo M-end
'

test_tmpdir() {
    local where=$1 force
    force=$(force_for "$where")
    use_user "$2"
    printf 'network: off\n' | write_config
    local outside=$KG_TMP/outside.$where.$2
    mkdir -p "$outside"
    echo keep >"$outside/file"
    chmod 0755 "$outside"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME" "$outside"
    local out=$KG_TMP/tmp.$where.$2.out err=$KG_TMP/tmp.$where.$2.err rc=0
    # A descriptor limit well below the tree's 200 levels: the cleaner must
    # not hold one per level.  96, not 64: since the box's home files (issue
    # 41: its .gitconfig and excludes, bound into the home) kgate and bwrap
    # need 66 descriptors under bubblewrap.
    # shellcheck disable=SC2086
    in_where "$where" env OUTSIDE="$outside" sh -c 'ulimit -n 96 && exec "$@"' sh \
        timeout 60 "$KGATE_BIN" run $force -- sh -c "$TMPPROG" >"$out" 2>"$err" || rc=$?
    check "$where: TMPDIR: the run happened with ulimit -n 96 (exit 0, got $rc)" \
        sh -c "[ $rc -eq 0 ] && grep -qx M-start '$out' && grep -qx M-end '$out'"
    check "$where: TMPDIR: the tree is 200 deep" grep -qx 'DEPTH 200' "$out"
    local tmp
    tmp=$(sed -n 's/^TMP //p' "$out")
    if [ "$where" != bwrap ]; then
        check "$where: TMPDIR: a private one was given ($tmp)" \
            sh -c "case '$tmp' in /tmp/kgate-landlock.*) true;; *) false;; esac"
        check "$where: TMPDIR: removed after the run, deep tree and all" [ ! -e "$tmp" ]
    fi
    check "$where: TMPDIR: the file behind the links is still there" \
        sh -c "[ \"\$(cat '$outside/file')\" = keep ]"
    check "$where: TMPDIR: the directory behind the links keeps its mode 755" \
        sh -c "[ \"\$(stat -c %a '$outside')\" = 755 ]"
    check "$where: TMPDIR: nothing on stderr" sh -c "! grep -q . '$err' || { cat '$err'; false; }"
}

# Issue 40, defect 5: a process whose main thread exited while another
# thread goes on writing.  Its leader is a zombie in /proc (state Z) that
# its parent cannot reap until the other threads end; kgate once took it
# for ended, never killed it, failed the run with "though killed" and
# skipped the git check, while the thread kept writing into the project
# and the host's git ran what the run planted.  Here the writer is
# double-forked into a session of its own, and the same run plants a .git
# that runs a marker on the host's git: the writer must be dead when
# kgate returns, the run end as usual, and the plant be caught.
# A project that records a gitlink "nested" that is not checked out (as
# git_check.sh's): a .git the run makes there runs what it says on the
# host's git, unless the check after the run moves it aside.
MARKS=$KG_TMP/marks
mkdir -p "$MARKS"
chmod 1777 "$MARKS"
GITENV=(GIT_AUTHOR_NAME=kg GIT_AUTHOR_EMAIL=kg@example.org GIT_COMMITTER_NAME=kg
    GIT_COMMITTER_EMAIL=kg@example.org GIT_CONFIG_NOSYSTEM=1)
git_project() {
    as_user env "${GITENV[@]}" sh -e -c '
        git init -q . && git commit -q --allow-empty -m one
        git init -q ../n && git -C ../n commit -q --allow-empty -m n
        git update-index --add --cacheinfo 160000,$(git -C ../n rev-parse HEAD),nested
        git commit -q -m nested && mkdir nested' >/dev/null
}
# The plant, in the program: a git directory with core.fsmonitor set to
# $FSM, linked as nested/.git (the Landlock box cannot create in the
# project root).
PLANT='git init -q w/evil && git -C w/evil config core.fsmonitor "$FSM" &&
    git -C w/evil commit -q --allow-empty -m x && mv w/evil/.git w/gd &&
    ln -s ../w/gd nested/.git && echo PLANTED'
host_git() { (as_user env GIT_CONFIG_NOSYSTEM=1 git status && as_user git diff) >/dev/null 2>&1; }

write_zombie_leader() {
    local w=$KG_PROJ/w
    mkdir -p "$w"
    cat >"$w/zl.py" <<'EOF'
import ctypes, os, platform, threading, time
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
open("w/z.pid", "w").write(str(os.getpid()))
# Opened once: a write on an open descriptor is never the supervisor's
# (an open is, and fails once it has ended with the program).
f = open("w/grow", "a", buffering=1)
def grow():
    n = 0
    while True:
        f.write("x\n")
        n += 1
        if n == 20:
            open("w/z.twenty", "w").write("20")
        time.sleep(0.02)
threading.Thread(target=grow).start()
# The main thread alone ends (SYS_exit, not exit_group): the leader is a
# zombie, the writer thread runs on.
nr = {"x86_64": 60, "aarch64": 93, "i686": 1, "armv7l": 1}[platform.machine()]
ctypes.CDLL(None).syscall(nr, 0)
EOF
    cat >"$w/zmain.sh" <<'EOF'
echo M-start
/usr/bin/python3 w/zl.py </dev/null >/dev/null 2>&1
i=0
until [ -s w/z.twenty ] || [ $i -ge 200 ]; do sleep 0.05; i=$((i + 1)); done
[ "$(sed 's/.*) //' /proc/$(cat w/z.pid)/stat | cut -d' ' -f1)" = Z ] && echo ZOMBIE-LEADER
EOF
    printf '%s\necho M-end\n' "$PLANT" >>"$w/zmain.sh"
}

test_zombie_leader() {
    local where=$1 force
    force=$(force_for "$where")
    use_user "$2"
    printf 'network: off\n' | write_config
    local mark=$MARKS/zl.$where.$2
    git_project
    write_zombie_leader
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"
    local out=$KG_TMP/zl.$where.$2.out err=$KG_TMP/zl.$where.$2.err rc=0
    # shellcheck disable=SC2086
    in_where "$where" env FSM="touch $mark; false" "${GITENV[@]}" \
        timeout 60 "$KGATE_BIN" run $force -- sh w/zmain.sh >"$out" 2>"$err" || rc=$?
    local left z size1 size2
    left=$(survivors)
    z=$(cat "$KG_PROJ/w/z.pid" 2>/dev/null)
    size1=$(stat -c %s "$KG_PROJ/w/grow" 2>/dev/null || echo 0)
    check "$where: zombie leader: the run happened (markers, the writer wrote)" \
        sh -c "grep -qx M-start '$out' && grep -qx M-end '$out' && [ -s '$KG_PROJ/w/z.twenty' ]"
    [ "$where" = bwrap ] ||
        check "$where: zombie leader: its leader was a zombie while its thread wrote" \
            grep -qx ZOMBIE-LEADER "$out"
    check "$where: zombie leader: the run ends as usual (0, got $rc)" [ "$rc" -eq 0 ]
    check "$where: zombie leader: no process of the run is left when kgate returns" [ -z "$left" ]
    [ "$where" = bwrap ] ||
        check "$where: zombie leader: the writer's process is gone" \
            sh -c "[ -n '$z' ] && ! kill -0 '$z' 2>/dev/null"
    check "$where: zombie leader: no \"though killed\" said" \
        sh -c "! grep -q 'though killed\|never killed' '$err'"
    check "$where: zombie leader: the .git planted in the same run is caught" \
        sh -c "grep -qx PLANTED '$out' && grep -q 'kgate: git: .*nested.* was planted' '$err' || { cat '$err'; false; }"
    sleep 1
    size2=$(stat -c %s "$KG_PROJ/w/grow" 2>/dev/null || echo 0)
    check "$where: zombie leader: the file stops growing once kgate returned ($size1, $size2)" \
        [ "$size1" = "$size2" ]
    host_git
    check "$where: zombie leader: the host's git does not run the plant" [ ! -e "$mark" ]
    clean_survivors
    [ -z "$z" ] || kill -KILL "$z" 2>/dev/null || true
}

# A program that would blind kgate: lower kgate's open-file limit to 3 with
# prlimit (same uid, and no PID namespace hides kgate's pid), so that kgate
# cannot list the run's processes at its end.  The shared seccomp table
# refuses prlimit64 on any process but the caller (pid 0), so the attack
# fails inside every box, while ulimit on the program itself still works;
# the run then ends as usual.  What kgate does when it is blinded all the
# same, by a process of the same user outside the box, is checked on the
# host only (its pid is the one the program sees): one kgate: line, 125, no
# check, and the end record says why.
kgate_pid_of_program='p=$PPID
         # kgate is the topmost of the kgate processes above the program:
         # the Landlock box'"'"'s filesystem supervisor and its reaper,
         # forks of kgate, may be in between.
         while q=$(cut -d" " -f4 /proc/$p/stat) && [ "$q" -gt 1 ] &&
             case $(cat /proc/$q/comm) in kgate | kgate-reaper) true ;; *) false ;; esac; do p=$q; done'
test_blind() {
    local where=$1 force
    force=$(force_for "$where")
    use_user "$2"
    printf 'network: off\n' | write_config
    mkdir -p "$KG_PROJ/w"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"
    local out=$KG_TMP/blind.$where.$2.out err=$KG_TMP/blind.$where.$2.err rc=0
    # shellcheck disable=SC2086
    in_where "$where" timeout 60 "$KGATE_BIN" run $force -- sh -c \
        'echo M-start; '"$kgate_pid_of_program"'
         if prlimit --pid "$p" --nofile=3:3 2>w/blind.err; then echo lowered >w/blind
         else echo refused >w/blind; fi
         ulimit -n 32 && [ "$(ulimit -n)" = 32 ] && echo own >w/own' \
        >"$out" 2>"$err" || rc=$?
    check "$where: blind: the run happened (marker)" grep -qx M-start "$out"
    check "$where: blind: prlimit on kgate is refused from inside" \
        sh -c "[ \"\$(cat '$KG_PROJ/w/blind')\" = refused ] && grep -q 'Operation not permitted' '$KG_PROJ/w/blind.err'"
    check "$where: blind: the program's own limit still changes (ulimit -n 32)" \
        [ -s "$KG_PROJ/w/own" ]
    check "$where: blind: the run ends as usual (0, got $rc)" [ "$rc" -eq 0 ]
    check "$where: blind: nothing on stderr" sh -c "! grep -q . '$err' || { cat '$err'; false; }"
    [ "$where" = host ] || return 0
    rm -f "$KG_PROJ/w/kpid" "$KG_PROJ/w/go"
    rc=0
    # The same run plants a .git: an unclean end must still check (issue
    # 40, defect 5: the check was skipped, and the host's git ran it).
    local mark=$MARKS/blind.$where.$2
    git_project
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"
    # shellcheck disable=SC2086
    in_where "$where" env FSM="touch $mark; false" "${GITENV[@]}" \
        timeout 60 "$KGATE_BIN" run $force -- sh -c \
        'echo M-start; '"$kgate_pid_of_program"'
         '"$PLANT"'
         echo "$p" >w/kpid
         while [ ! -e w/go ]; do sleep 0.05; done' \
        >"$out" 2>"$err" &
    local runner=$! kpid=
    for _ in $(seq 200); do [ -s "$KG_PROJ/w/kpid" ] && break; sleep 0.05; done
    kpid=$(cat "$KG_PROJ/w/kpid" 2>/dev/null || true)
    check "$where: blinded from outside: kgate's limit lowered by the same user" \
        sh -c "[ -n '$kpid' ] && setpriv --reuid=$KG_UID --regid=$KG_GID --clear-groups prlimit --pid '$kpid' --nofile=3:3"
    touch "$KG_PROJ/w/go"
    wait "$runner" || rc=$?
    check "$where: blinded: the run happened (marker)" grep -qx M-start "$out"
    check "$where: blinded: kgate fails closed (125, got $rc)" [ "$rc" -eq 125 ]
    check "$where: blinded: a kgate: line that says the checks were made all the same" \
        sh -c "grep -q '^kgate: .*the end-of-run checks were made, but one may still write after them' '$err' || { cat '$err'; false; }"
    check "$where: blinded: the .git planted in that run is caught" \
        sh -c "grep -qx PLANTED '$out' && grep -q '^kgate: git: .*nested.* was planted' '$err' || { cat '$err'; false; }"
    # Blinded, kgate cannot open a descriptor to move it aside: the finding
    # then says not to run git there, and nothing more can be asked of it.
    if ! grep -q 'do not run git there' "$err"; then
        host_git
        check "$where: blinded: the host's git does not run the plant" [ ! -e "$mark" ]
    fi
    check "$where: blinded: the end record has 125 and the reason" \
        python3 -c 'import json,sys; e=[json.loads(l) for l in open(sys.argv[1])][-1]; sys.exit(0 if e["kind"]=="end" and e["exit"]==125 and "may still write" in e.get("reason","") else 1)' "$KG_HOME/.kgate/audit.log"
}

BWRAP=
if command -v bwrap >/dev/null &&
    { [ "$(id -u)" -ne 0 ] || setpriv --reuid="$KG_TEST_UID" --regid="$KG_TEST_GID" --clear-groups \
        bwrap --ro-bind / / --unshare-user --unshare-pid -- /bin/true 2>/dev/null; } &&
    bwrap --ro-bind / / --unshare-user --unshare-pid -- /bin/true 2>/dev/null; then
    BWRAP=yes
fi

places="host disable seccomp"
[ -n "$BWRAP" ] && places="$places bwrap"
for who in $(test_users); do
    for where in $places; do
        test_procs "$where" "$who"
        test_zombie_leader "$where" "$who"
        test_tmpdir "$where" "$who"
        test_blind "$where" "$who"
    done
done
finish
