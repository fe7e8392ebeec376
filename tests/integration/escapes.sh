#!/usr/bin/env bash
# escapes.sh: issue 6 on Linux (bubblewrap), as root and as an unprivileged
# uid.  Each escape is tried from inside the sandbox and must fail, next to
# a control that shows the same attempt works outside (so the test can
# fail), and next to ordinary tools that must keep working: git init and
# commit, make, cc, python3.  docs/escapes.md describes each item.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kcalls.sh"
need_bwrap
need_cmd git make cc

# /usr/bin/python3, not whatever PATH finds: a python under /root (pyenv)
# is not visible to the unprivileged uid, nor inside the sandbox.
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "$PY is not installed"

fails() { ! "$@" >/dev/null 2>&1; }
has() { # has PATTERN CMD...: CMD's stdout+stderr matches PATTERN
    local pat=$1 out
    shift
    out=$("$@" 2>&1)
    printf '%s\n' "$out" | grep -q -- "$pat" || {
        printf 'no "%s" in:\n%s\n' "$pat" "$out" | head -20
        return 1
    }
}
# ran_lacks PATTERN CMD...: CMD printed kg-ran (its run happened; a run
# kgate refused prints nothing either) and not PATTERN.
ran_lacks() {
    local pat=$1 out
    shift
    out=$("$@" 2>&1)
    printf '%s\n' "$out" | grep -q kg-ran && ! printf '%s\n' "$out" | grep -q -- "$pat" || {
        printf 'want kg-ran and no "%s" in:\n%s\n' "$pat" "$out" | head -20
        return 1
    }
}
lacks() { # lacks PATTERN CMD...
    local pat=$1 out
    shift
    out=$("$@" 2>&1)
    ! printf '%s\n' "$out" | grep -q -- "$pat" || {
        printf 'unexpected "%s" in:\n%s\n' "$pat" "$out" | head -20
        return 1
    }
}

# ---- a Unix socket server on the host, under /run --------------------------
# Under /run when we may (root, as CI runs it), else in our own runtime
# directory, /run/user/UID, which the sandbox hides just the same.
RUNDIR=$(mktemp -d /run/kgate-test-XXXXXX 2>/dev/null) ||
    { [ -n "${XDG_RUNTIME_DIR:-}" ] && RUNDIR=$(mktemp -d "$XDG_RUNTIME_DIR/kgate-test-XXXXXX"); } ||
    skip_all "cannot create a directory in /run or \$XDG_RUNTIME_DIR"
chmod 0755 "$RUNDIR"
SOCK=$RUNDIR/sock
cat >"$KG_TMP/server.py" <<'EOF'
import os, socket, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o777)
s.listen(8)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    c.sendall(b"pong-from-host\n")
    c.close()
EOF
cat >"$KG_TMP/client.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
print(s.recv(100).decode().strip())
EOF
chmod 0644 "$KG_TMP/server.py" "$KG_TMP/client.py"
"$PY" "$KG_TMP/server.py" "$SOCK" >"$KG_TMP/server.out" 2>&1 &
SERVER=$!
cleanup_all() {
    kill "$SERVER" 2>/dev/null
    wait "$SERVER" 2>/dev/null
    rm -rf "$RUNDIR"
}
at_exit cleanup_all
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
[ -S "$SOCK" ] || skip_all "the test socket server did not start: $(cat "$KG_TMP/server.out")"

# ---- a pseudo-terminal driver for the TIOCSTI test --------------------------
# ptyrun.py CMD...: runs CMD on a new pty (its controlling terminal), then
# reads whatever is left in the pty's input queue: bytes pushed with TIOCSTI
# land there, where the user's shell would read them as typed.  Prints the
# pty's output, then PENDING=<bytes>.
cat >"$KG_TMP/ptyrun.py" <<'EOF'
import os, pty, subprocess, sys, termios, select
pid, fd = pty.fork()
if pid == 0:
    attrs = termios.tcgetattr(0)
    attrs[3] &= ~(termios.ECHO | termios.ICANON)
    termios.tcsetattr(0, termios.TCSANOW, attrs)
    subprocess.run(sys.argv[1:])
    attrs = termios.tcgetattr(0)
    attrs[6][termios.VMIN] = 0
    attrs[6][termios.VTIME] = 2
    termios.tcsetattr(0, termios.TCSANOW, attrs)
    pending = os.read(0, 1000)
    print("PENDING=%r" % pending, flush=True)
    os._exit(0)
out = b""
while True:
    try:
        r, _, _ = select.select([fd], [], [], 30)
        if not r:
            break
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
EOF
INJECT='import fcntl, termios
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"Z")
    print("TIOCSTI-WORKED")
except OSError as e:
    print("TIOCSTI-REFUSED errno=%d" % e.errno)'

# ---- raw system calls for the seccomp test ----------------------------------
cat >"$KG_TMP/calls.py" <<'EOF'
import ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {"keyctl": 250, "personality": 135, "unshare": 272, "add_key": 248}
def call(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(NR[name], *args)
    return "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
what = sys.argv[1]
if what == "keyctl":  # KEYCTL_GET_KEYRING_ID of the session keyring
    print("keyctl", call("keyctl", 0, ctypes.c_long(-3), 0))
elif what == "personality":  # ADDR_NO_RANDOMIZE
    print("personality", call("personality", ctypes.c_ulong(0x0040000)))
elif what == "personality-query":
    print("personality-query", call("personality", ctypes.c_ulong(0xffffffff)))
elif what == "userns":  # CLONE_NEWUSER
    print("userns", call("unshare", 0x10000000))
EOF
chmod 0644 "$KG_TMP/ptyrun.py" "$KG_TMP/calls.py"

# The attempts to plant a git hook (section 2), each a shell line.
HOOK_ATTEMPTS=(
    'mkdir -p .git/hooks'
    'rmdir .git/hooks; mkdir .git/hooks'
    'mv .git/hooks .git/hooks.moved; mkdir -p .git/hooks'
)
# plant_hooks LABEL: every attempt, with .git/hooks present and missing.
# LABEL "protected" expects refusals; anything else expects the hook to
# land (the control).
plant_hooks() {
    local label=$1 state attempt out hook=$KG_PROJ/.git/hooks/pre-commit
    for state in present missing; do
        for attempt in "${HOOK_ATTEMPTS[@]}"; do
            rm -rf "$KG_PROJ/.git/hooks" "$KG_PROJ/.git/hooks.moved" "$KG_PROJ/hook-ran"
            if [ "$state" = present ]; then
                mkdir "$KG_PROJ/.git/hooks"
                chown "$KG_UID:$KG_GID" "$KG_PROJ/.git/hooks"
            fi
            out=$(kg run -- sh -c "echo kg-tried; $attempt 2>&1; printf '#!/bin/sh\necho ran > hook-ran\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo kg-planted" 2>&1)
            check "hooks $state, $label: the attempt ran ($attempt)" \
                has kg-tried printf '%s\n' "$out"
            if [ "$label" = protected ]; then
                check "hooks $state: '$attempt' then a pre-commit fails inside" \
                    lacks kg-planted printf '%s\n' "$out"
                check "hooks $state: ... and no hook landed on the host" \
                    test -z "$(find "$KG_PROJ/.git/hooks" "$KG_PROJ/.git/hooks.moved" -mindepth 1 2>/dev/null)"
            else
                check "hooks $state, $label: the same attempt plants the hook" \
                    has kg-planted printf '%s\n' "$out"
                check "hooks $state, $label: ... and it landed on the host" test -x "$hook"
            fi
        done
    done
    # What the hook is for: the user's next commit runs it.
    as_user git add -A >/dev/null 2>&1
    as_user git -c user.name=kg -c user.email=kg@example.org commit -q --allow-empty -m "after $label" >/dev/null 2>&1
    if [ "$label" = protected ]; then
        check "the user's next commit ran no planted hook" test ! -e "$KG_PROJ/hook-ran"
    else
        check "$label: the user's next commit ran the planted hook" test -e "$KG_PROJ/hook-ran"
    fi
    rm -rf "$KG_PROJ/.git/hooks" "$KG_PROJ/.git/hooks.moved" "$KG_PROJ/hook-ran"
}

# Copies a helper script into the project, where the sandbox can read it.
helper() { cp "$KG_TMP/$1" "$KG_PROJ/$1" && chown "$KG_UID:$KG_GID" "$KG_PROJ/$1"; }

for who in $(test_users); do
    use_user "$who"
    write_config <<EOF
network: off
EOF
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"
    helper client.py
    helper calls.py

    # ---- 1. host Unix sockets ----------------------------------------------
    check "control: the host socket answers this user outside the sandbox" \
        has pong-from-host as_user "$PY" "$KG_PROJ/client.py" "$SOCK"
    # The client ran and found no socket there (not: did not start).
    check "a host socket under /run is unreachable inside" \
        has FileNotFoundError kg run -- "$PY" client.py "$SOCK"
    check "inside, /run holds only the private runtime directory" \
        test "$(kg run -- ls -A /run)" = user
    check "inside, \$XDG_RUNTIME_DIR is private and writable" \
        kg run -- sh -c "touch /run/user/$KG_UID/x"
    write_config <<EOF
network: off
allow_sockets: [$SOCK, $RUNDIR/not-running.sock]
EOF
    check "allow_sockets brings that one socket back" \
        has pong-from-host kg run -- "$PY" client.py "$SOCK"
    check "a missing allow_sockets entry is a note, not a failure" \
        has "not-running.sock does not exist" kg run --dry-run -- /bin/true
    check "doctor names the allowed socket" has "only allow_sockets (.*$SOCK" kg doctor
    write_config <<EOF
network: open
EOF
    check "network open: still no host socket" \
        has FileNotFoundError kg run -- "$PY" client.py "$SOCK"
    check "doctor: network open leaves abstract sockets reachable (DEGRADED)" \
        has "DEGRADED  abstract Unix sockets: network open" kg doctor
    write_config <<EOF
network: off
EOF
    check "doctor: host sockets line" has "READY     host Unix sockets: none reachable" kg doctor
    check "doctor: abstract sockets unreachable in network off" \
        has "READY     abstract Unix sockets: unreachable" kg doctor

    # DNS where /etc/resolv.conf is a link into /run (systemd-resolved):
    # made so in a private mount namespace, the host's /etc is not touched.
    if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
        echo "nameserver 198.18.0.53" >"$RUNDIR/stub-resolv.conf"
        chmod 0644 "$RUNDIR/stub-resolv.conf"
        cat >"$KG_TMP/fake-etc.sh" <<EOF
set -e
mount -t tmpfs tmpfs "$KG_TMP/etc"
cp -a /etc/. "$KG_TMP/etc/"
rm -f "$KG_TMP/etc/resolv.conf"
ln -s "$RUNDIR/stub-resolv.conf" "$KG_TMP/etc/resolv.conf"
mount --bind "$KG_TMP/etc" /etc
cd "$KG_PROJ"
exec "\$@"
EOF
        mkdir -p "$KG_TMP/etc"
        if [ "$KG_WHO" = user ]; then
            as=(setpriv --reuid="$KG_TEST_UID" --regid="$KG_TEST_GID" --clear-groups
                env HOME="$KG_HOME" KGATE_PLUGIN_PATH="$KGATE_PLUGIN_PATH")
        else
            as=(env HOME="$KG_HOME")
        fi
        in_fake_etc() { unshare -m --propagation private bash "$KG_TMP/fake-etc.sh" "${as[@]}" "$@"; }
        check "control: in the fake /etc, resolv.conf is a link into /run" \
            has "$RUNDIR/stub-resolv.conf" in_fake_etc readlink /etc/resolv.conf
        check "resolv.conf linked into /run: the link target is given back" \
            has "nameserver 198.18.0.53" in_fake_etc "$KGATE_BIN" run -- cat /etc/resolv.conf
        check "resolv.conf linked into /run: the socket beside it stays hidden" \
            test "$(in_fake_etc "$KGATE_BIN" run -- ls -A "$RUNDIR")" = stub-resolv.conf
        rm -f "$RUNDIR/stub-resolv.conf"
    else
        echo "# not root: the resolv.conf link into /run is not built (needs unshare -m)"
    fi

    # ---- 2. planted hooks ----------------------------------------------------
    as_user git init -q .
    as_user sh -c 'echo "#!/bin/sh" > .git/hooks/pre-commit'
    echo 'export X=1' >"$KG_PROJ/.envrc"
    printf 'network: off\nprotect_paths: [tools]\n' >"$KG_PROJ/.kgate.yaml"
    mkdir -p "$KG_PROJ/.vscode" "$KG_PROJ/.idea" "$KG_PROJ/tools"
    echo '{}' >"$KG_PROJ/.vscode/tasks.json"
    echo 'echo tool' >"$KG_PROJ/tools/run.sh"
    printf 'all:\n\t@echo made-it > made.txt\n' >"$KG_PROJ/Makefile"
    printf '#include <stdio.h>\nint main(void){puts("hello-cc");return 0;}\n' >"$KG_PROJ/hello.c"
    chown -R "$KG_UID:$KG_GID" "$KG_PROJ"
    for f in .git/hooks/pre-commit .git/config .kgate.yaml .envrc .vscode/tasks.json; do
        check "writing $f fails read-only inside" \
            has "Read-only file system" kg run -- sh -c "echo planted >> $f"
        check "and $f on the host is untouched" lacks planted cat "$KG_PROJ/$f"
    done
    check "a new file in .vscode fails too" \
        has "Read-only file system" kg run -- touch .vscode/launch.json
    check "a new file in .idea fails too" \
        has "Read-only file system" kg run -- touch .idea/workspace.xml
    check "protect_paths from the project file: tools/ is read-only" \
        has "Read-only file system" kg run -- sh -c 'echo planted >> tools/run.sh'
    check "control: the rest of the project is writable" \
        kg run -- sh -c 'echo fine > notes.txt'
    check "git commit works inside (.git/config read-only)" \
        kg run -- sh -c 'git add notes.txt && git -c user.name=kg -c user.email=kg@example.org commit -qm inside'
    check "and the commit is in the real repository" \
        has inside as_user git log --format=%s -1
    check "make works inside" kg run -- make -s
    check "and wrote into the project" grep -qx made-it "$KG_PROJ/made.txt"
    check "cc compiles and runs hello.c inside" \
        has hello-cc kg run -- sh -c 'cc -o hello hello.c && ./hello'
    check "python3 runs inside" has py-ok kg run -- "$PY" -c 'print("py-ok")'
    check "doctor: protected paths line" has "READY     planted hooks:" kg doctor

    # A hook planted the way an attacker would: make the directory, or take
    # the read-only one out of the way first, then write an executable
    # pre-commit.  Tried with .git/hooks present and missing (the sandbox
    # then gets an empty read-only one).  Each attempt prints kg-tried
    # first (its run happened) and kg-planted only if the hook was written;
    # the control runs the same attempts with the protection switched off
    # (unprotect_paths) and must plant the hook, so the checks can fail.
    plant_hooks "protected"
    write_config <<EOF
network: off
unprotect_paths: [.git/hooks]
EOF
    plant_hooks "control, unprotected"
    write_config <<EOF
network: off
EOF
    # unprotect_paths opts a built-in one out (user config only).
    write_config <<EOF
network: off
unprotect_paths: [.envrc]
EOF
    check "unprotect_paths: .envrc is writable again" \
        kg run -- sh -c 'echo "# edited" >> .envrc'
    check "and the edit reached the project" grep -q edited "$KG_PROJ/.envrc"
    check "unprotect_paths leaves the other protections" \
        has "Read-only file system" kg run -- sh -c 'echo planted >> .git/config'
    rm -f "$KG_PROJ/.kgate.yaml"
    write_config <<EOF
network: off
EOF

    # ---- 3. terminal injection ----------------------------------------------
    if [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1)" = 0 ]; then
        # Linux 6.2+ can refuse TIOCSTI to everyone: then the control shows
        # that, and the checks below still must hold.
        echo "# dev.tty.legacy_tiocsti is 0: TIOCSTI is refused outside kgate too"
        check "control: TIOCSTI is refused by this kernel outside kgate too" \
            has "TIOCSTI-REFUSED" as_user "$PY" "$KG_TMP/ptyrun.py" "$PY" -c "$INJECT"
    else
        check "control: TIOCSTI into its own terminal works outside kgate" \
            has "PENDING=b'Z'" as_user "$PY" "$KG_TMP/ptyrun.py" "$PY" -c "$INJECT"
    fi
    for mode in --no-pty --pty; do
        out=$(as_user "$PY" "$KG_TMP/ptyrun.py" "$KGATE_BIN" run "$mode" -- "$PY" -c "$INJECT" 2>&1)
        check "TIOCSTI refused inside ($mode)" \
            has "TIOCSTI-REFUSED errno=1" printf '%s\n' "$out"
        check "nothing reached the outer terminal's input ($mode)" \
            has "PENDING=b''" printf '%s\n' "$out"
    done
    check "TIOCSETD (a new line discipline) is refused inside" \
        has "TIOCSETD-REFUSED errno=1" kg run -- "$PY" -c 'import fcntl, os, termios
fd = os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY)
try:
    fcntl.ioctl(fd, termios.TIOCSETD, (13).to_bytes(4, "little"))
    print("TIOCSETD-WORKED")
except OSError as e:
    print("TIOCSETD-REFUSED errno=%d" % e.errno)'
    check "doctor: terminal line" has "READY     terminal: " kg doctor

    # ---- 4. secrets in the environment --------------------------------------
    export GITHUB_TOKEN=ghp_kgatetestvalue0000000000000000000001
    export MY_API_KEY=kgate-test-api-key-value-2
    export AWS_SECRET_ACCESS_KEY=kgate-test-aws-value-3
    export KG_HARMLESS=visible-value
    check "no secret-looking name reaches the program" \
        ran_lacks "GITHUB_TOKEN\|MY_API_KEY\|AWS_SECRET_ACCESS_KEY" kg run -- sh -c 'echo kg-ran; env'
    check "a harmless variable does" has KG_HARMLESS=visible-value kg run -- env
    envout=$(kg run -- env 2>&1)
    check "PATH and HOME do" \
        sh -c 'printf "%s\n" "$1" | grep -q ^PATH= && printf "%s\n" "$1" | grep -q ^HOME=' _ "$envout"
    LOG=$KG_HOME/.kgate/audit.log
    # The launch record: the last one but the run's "end" (issue 31).
    last_launch() { grep '"kind":"launch"' "$1" | tail -n 1; }
    check "the audit line names the withheld variables" \
        has '"withheld_env":\["AWS_SECRET_ACCESS_KEY","GITHUB_TOKEN","MY_API_KEY"\]' last_launch "$LOG"
    check "the audit log never holds a value" \
        lacks "kgatetestvalue\|kgate-test-api-key\|kgate-test-aws" cat "$LOG"
    check "doctor: environment line" \
        has "environment: 3 secret-looking variables will be withheld: AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, MY_API_KEY" kg doctor
    write_config <<EOF
network: off
pass_env: [MY_API_KEY]
deny_env: [KG_HARM*]
EOF
    check "pass_env brings one back" has MY_API_KEY=kgate-test-api-key-value-2 kg run -- env
    check "deny_env withholds an extra one" \
        ran_lacks KG_HARMLESS kg run -- sh -c 'echo kg-ran; env'
    check "and the audit line says so" has '"withheld_env":\["AWS_SECRET_ACCESS_KEY","GITHUB_TOKEN","KG_HARMLESS"\]' last_launch "$LOG"
    unset GITHUB_TOKEN MY_API_KEY AWS_SECRET_ACCESS_KEY KG_HARMLESS
    write_config <<EOF
network: off
EOF

    # ---- 5. seccomp ----------------------------------------------------------
    check "control: keyctl works outside" has "keyctl ok" as_user "$PY" calls.py keyctl
    check "control: personality(ADDR_NO_RANDOMIZE) works outside" \
        has "personality ok" as_user "$PY" calls.py personality
    check "keyctl is refused inside (EPERM)" has "keyctl EPERM" kg run -- "$PY" calls.py keyctl
    check "personality(ADDR_NO_RANDOMIZE) is refused inside" \
        has "personality EPERM" kg run -- "$PY" calls.py personality
    check "the personality query still works inside" \
        has "personality-query ok" kg run -- "$PY" calls.py personality-query
    check "unshare(CLONE_NEWUSER) is refused inside" has "userns EPERM" kg run -- "$PY" calls.py userns
    check "the filter is installed" has "Seccomp:.2" kg run -- grep Seccomp: /proc/self/status
    check "threads and processes still start (clone3 falls back to clone)" \
        has "thread-ok" kg run -- "$PY" -c 'import threading, subprocess; t = threading.Thread(target=lambda: None); t.start(); t.join(); subprocess.run(["true"], check=True); print("thread-ok")'
    # strace is in scripts/deps.sh: where the suite must work, it is there.
    if command -v strace >/dev/null || [ -n "${KGATE_MUST_WORK:-}" ]; then
        check "ptrace of its own children works (strace)" \
            kg run -- strace -f -o /dev/null /bin/true
    fi
    check "doctor: seccomp line" has "READY     seccomp filter: " kg doctor

    # ---- 5b. kernel surface: io_uring, AF_ALG, twins of refused calls ------
    # kcalls makes each call with arguments the kernel refuses with another
    # errno (nothing changes on the host); docs/escapes.md, section 5.
    kcalls_setup
    check "control: outside, no kernel-surface call gets the filter's errno" kcalls_control
    check "io_uring, AF_ALG and the twins are refused inside (native, i386, x32)" \
        kcalls_refused kg run -- ./kcalls inside
    check "doctor: the seccomp line names io_uring and AF_ALG" \
        has "READY     seccomp filter: .*io_uring.*AF_ALG" kg doctor
done
finish
