#!/bin/bash
# pty.sh: interactive use (issue 8, docs/interactive.md).  A program run
# from a terminal gets a pseudo-terminal of its own inside the sandbox.
# ptydrive.py plays the user's terminal: it starts kgate on a pty of its
# own, types into it and reads the screen.  As root and as an unprivileged
# uid.
. "$(dirname "$0")/lib.sh"

need_bwrap
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "$PY is not installed"
# The driver runs as the test user, who may not reach the source tree.
DRIVE=$KG_TMP/ptydrive.py
cp "$(dirname "$0")/ptydrive.py" "$DRIVE"
chmod 0644 "$DRIVE"

# The slirp-filter backend runs the bubblewrap plan from its own helper: its
# pty mode is checked too, with a host list of one name nobody looks up
# (no traffic): slirp_ready (lib.sh) opens /dev/net/tun for the run.
slirp_ready

# drive SCENARIO [RUN_ARGS...]: one scenario of ptydrive.py, as the user.
drive() {
    as_user "$PY" "$DRIVE" "$1" "$KGATE_BIN" "${@:2}"
}

# A copy of the plugin directories in $1 (made for the test user), with or
# without the pty shim.
copy_plugins() {
    local dest=$1 with_shim=$2 d
    mkdir -p "$dest"
    IFS=: read -r -a dirs <<<"$KGATE_PLUGIN_PATH"
    for d in "${dirs[@]}"; do
        cp "$d"/*.so "$dest/" 2>/dev/null || true
        [ "$with_shim" = yes ] && cp "$d"/kgate-pty-shim "$dest/" 2>/dev/null
    done
    chown -R "$KG_UID:$KG_GID" "$dest"
}

# with_plugins DIR CMD...: CMD with only the plugins in DIR.
with_plugins() {
    (
        KGATE_PLUGIN_PATH=$1
        export KGATE_PLUGIN_PATH
        "${@:2}"
    )
}

# Not a terminal (the agent-harness case): pipes, as before.
pipes_without_terminal() {
    local out
    out=$(kg run -- sh -c '[ -t 0 ] || [ -t 1 ] || [ -t 2 ] || echo pipes' \
        </dev/null 2>&1 | cat)
    [ "$out" = pipes ] || { echo "got: $out"; return 1; }
}

# kgate run -- cmd | cat at a terminal (no pty: stdout is a pipe): the
# program's fd 0 is not the terminal.  The driver's pty plays the terminal.
nopty_by_pipe() {
    local out
    out=$(as_user "$PY" -c '
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp("sh", ["sh", "-c", sys.argv[1] + " run -- sh -c \"[ -t 0 ] && echo STDIN_IS_TTY || echo STDIN_NOT_TTY\" | cat"])
out = b""
while True:
    try:
        d = os.read(fd, 4096)
    except OSError:
        break
    if not d:
        break
    out += d
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
' "$KGATE_BIN" 2>&1)
    [[ $out == *STDIN_NOT_TTY* ]] || { echo "got: $out"; return 1; }
}

# --pty without a terminal on stdin is refused before anything starts.
forced_pty_needs_terminal() {
    local out rc
    out=$(kg run --pty -- sh -c 'echo started' </dev/null 2>&1)
    rc=$?
    [ "$rc" -eq 125 ] && [[ $out == *"--pty needs a terminal"* ]] &&
        [[ $out != *started* ]] || { echo "rc=$rc: $out"; return 1; }
}

# --dry-run shows the pty plan: a new session, the shim before the command.
dry_run_shows_shim() {
    local out
    out=$(kg run --pty --dry-run -- true </dev/null) || return 1
    [[ $out == *"--new-session"* ]] &&
        [[ $out =~ --\ /[^\ ]*/kgate-pty-shim\ /[^\ ]*true ]] ||
        { echo "$out"; return 1; }
}

# An installed kgate (KGATE_TEST_PREFIX): no shim beside the installed
# plugins, and the plan names the one under libexecdir, the path compiled
# in from meson's options (a /usr/local or --prefix install once looked in
# /usr/libexec only, and every pty run failed).
installed_shim_used() {
    local inst out
    inst=$(KGATE_PLUGIN_PATH= "$KGATE_BIN" plugins 2>/dev/null |
        sed -n 's/^searched: //p' | awk '{print $NF}')
    out=$(kg run --pty --dry-run -- true </dev/null) || return 1
    echo "# plugins in $inst; plan: $(grep -o -- '-- /[^ ]*kgate-pty-shim' <<<"$out")"
    [ -n "$inst" ] && ls "$inst"/*.so >/dev/null 2>&1 && [ ! -e "$inst/kgate-pty-shim" ] &&
        [[ $out == *"-- $KGATE_TEST_PREFIX/libexec/kgate/kgate-pty-shim "* ]]
}

for who in $(test_users); do
    use_user "$who"
    printf 'network: off\n' | write_config

    check "an interactive shell takes a typed command and prints its result" \
        drive shell
    check "Ctrl-C interrupts sleep inside, the shell survives; Ctrl-Z and fg work" \
        drive ctrlc
    check "Ctrl-C reaches a program's own SIGINT handler (exit 3, not 130)" \
        drive trap
    check "a window resize reaches the program (stty size, SIGWINCH)" \
        drive winch
    check "terminal raw while running, as before after a normal exit" \
        drive sane-exit
    check "terminal restored after the program is killed by a signal (137)" \
        drive sane-killed
    check "SIGTERM to kgate reaches the program's handler; terminal restored" \
        drive sane-term
    check "SIGHUP to kgate kills the program (129); terminal restored" \
        drive sane-hup
    check "every signal that ends kgate (but SIGKILL) restores the terminal; the sandbox goes too" \
        drive sane-signals
    check "a program that stopped itself: Ctrl-C ends it at once (130); terminal restored" \
        drive stopped-ctrlc
    check "a program that stopped itself: SIGTERM to kgate ends it at once (143)" \
        drive stopped-term
    check "a secret printed in an interactive shell is masked on the screen" \
        drive mask
    check "control: without kgate, tokens with a UTF-8 C1 control inside reach the terminal" \
        drive mask-c1-control
    check "a token with a UTF-8 C1 control inside (C2 9B, split across reads) is masked" \
        drive mask-c1
    if [ "$(landlock_abi)" -ge 1 ]; then
        check "the Landlock box (forced): a token with a UTF-8 C1 control inside is masked" \
            drive mask-c1 --backend landlock
    else
        echo "# Landlock is not enabled in this kernel: the forced Landlock box is not tested"
    fi
    check "control: without kgate, every terminal query reaches the terminal" \
        drive termq-control
    check "terminal queries and OSC 52 never reach the terminal; drawing sequences do, intact" \
        drive termq
    check "sh -c 'exit 7' under a pty returns 7" drive exit7
    check "a program killed by SIGKILL inside returns 137" drive sigkill
    check "--no-pty at a terminal: pipes, terminal untouched" drive no-pty
    check "TIOCSTI inside reaches only the program's own pty (control: it works without kgate)" \
        drive tiocsti
    check "--no-pty: stty, tcsetattr, TIOCSTI and a write to fd 0 reach no terminal (control: all work without kgate)" \
        drive nopty-attack
    check "--no-pty: the same, program killed (137), terminal as before" \
        drive nopty-attack-killed
    check "--no-pty: typed input reaches the program through a pipe; Ctrl-D ends it" \
        drive nopty-stdin
    check "stdout a pipe at a terminal: the program gets no terminal on fd 0" \
        nopty_by_pipe
    check "not a terminal: pipes, as before" pipes_without_terminal
    check "--pty without a terminal on stdin: refused (125)" forced_pty_needs_terminal
    check "--dry-run in pty mode: --new-session and the shim" dry_run_shows_shim

    if [ -n "${KGATE_TEST_PREFIX:-}" ]; then
        # The shim checks below move the build's plugins around; an
        # installed kgate also finds its own, and its shim under libexecdir.
        check "installed: pty mode uses the shim under libexecdir" installed_shim_used
    else
        # The shim beside a plugin in the hidden home is bound into the sandbox.
        copy_plugins "$KG_HOME/.kgplugins" yes
        check "shim in the hidden home: bound in, the pty works" \
            with_plugins "$KG_HOME/.kgplugins" drive exit7
        copy_plugins "$KG_HOME/.kgplugins-noshim" no
        check "no shim: pty mode refused (125), terminal untouched" \
            with_plugins "$KG_HOME/.kgplugins-noshim" drive no-shim
        check "no shim: --no-pty still runs" \
            with_plugins "$KG_HOME/.kgplugins-noshim" drive no-pty
    fi

    if [ -z "$SLIRP" ]; then
        if [ -n "${KGATE_MUST_WORK:-}" ]; then
            check "slirp4netns, iptables and /dev/net/tun for the slirp-filter checks" false
        else
            echo "# slirp4netns, iptables or /dev/net/tun missing: slirp-filter pty checks not run"
        fi
        continue
    fi
    printf 'network: restricted\nallow_hosts: [example.test]\n' | write_config
    check "slirp-filter: Ctrl-C reaches the program's own SIGINT handler" \
        drive trap --backend slirp-filter
    check "slirp-filter: a shell inside has job control; Ctrl-C, Ctrl-Z, fg" \
        drive ctrlc --backend slirp-filter
    check "slirp-filter: SIGTERM to kgate reaches the program's handler" \
        drive sane-term --backend slirp-filter
done
finish
