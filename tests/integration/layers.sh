#!/usr/bin/env bash
# layers.sh: the protections that stand on two layers, one layer at a time
# (issue 19), as root and as an unprivileged uid.
#
# From inside a full kgate run the layers are indistinguishable: seccomp
# refuses unshare(CLONE_NEWUSER) before bwrap's --disable-userns is asked,
# and a TIOCSTI is refused by the filter and by --new-session alike.  So
# this test replays kgate's own plan (the argv `kgate run --dry-run`
# prints) with bwrap directly, with one layer taken out at a time:
#
#   - the seccomp filter is not in the plan (launch adds --seccomp FD), so
#     a replay runs without it unless handed the same program, which the
#     test tool bwrap_filter_dump writes out (never installed: kgate itself
#     has no way to start without its filter);
#   - a flag is taken out of the replayed argv.
#
# Each protection gets: the full kgate run, each layer alone, and the
# control with both layers out, where the attack must work (so the checks
# above it can fail).  Capabilities and mounts are checked as root, where
# --cap-drop ALL is what removes them; an unprivileged uid gets none from
# bwrap in any case (checked, without a control that could show otherwise).
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd unshare mount
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "$PY is not installed"
: "${KGATE_BUILD_ROOT:?run through meson test}"
DUMP=$KGATE_BUILD_ROOT/tests/plugins/bubblewrap/bwrap_filter_dump
[ -x "$DUMP" ] || skip_all "the bubblewrap backend is not built (no $DUMP)"

FILTER=$KG_TMP/filter.bpf
"$DUMP" >"$FILTER" || { echo "FAIL: cannot write the seccomp filter"; exit 1; }
chmod 0644 "$FILTER"

has() { # has PATTERN CMD...: CMD's stdout+stderr matches PATTERN
    local pat=$1 out
    shift
    out=$("$@" 2>&1)
    printf '%s\n' "$out" | grep -q -- "$pat" || {
        printf 'no "%s" in:\n%s\n' "$pat" "$out" | head -20
        return 1
    }
}

# ---- helpers run inside ------------------------------------------------------
# calls.py: one raw system call, prints its name and "ok" or the errno name.
cat >"$KG_TMP/calls.py" <<'EOF'
import ctypes, errno, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR_UNSHARE = {"x86_64": 272, "aarch64": 97, "i686": 310}[platform.machine()]
CLONE_NEWUSER = 0x10000000
ctypes.set_errno(0)
r = libc.syscall(NR_UNSHARE, CLONE_NEWUSER)
print("userns", "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?"))
EOF
# ptyrun.py CMD...: CMD on a new pty that is its controlling terminal, then
# what was left in the pty's input queue (bytes pushed with TIOCSTI land
# there, where a shell would read them as typed): PENDING=<bytes>.
cat >"$KG_TMP/ptyrun.py" <<'EOF'
import os, pty, select, subprocess, sys, termios
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
    print("PENDING=%r" % os.read(0, 1000), flush=True)
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
# inject.py: one TIOCSTI into its own standard input.
cat >"$KG_TMP/inject.py" <<'EOF'
import fcntl, termios
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"Z")
    print("TIOCSTI-WORKED")
except OSError as e:
    print("TIOCSTI-REFUSED errno=%d" % e.errno)
EOF
chmod 0644 "$KG_TMP/calls.py" "$KG_TMP/ptyrun.py" "$KG_TMP/inject.py"

# ---- the replay ----------------------------------------------------------------
# plan_of CMD...: PLAN becomes the argv kgate would run CMD with (the first
# line of --dry-run, split as the shell would).
plan_of() {
    local line
    line=$(kg run --dry-run -- "$@" 2>/dev/null | head -n 1)
    PLAN=()
    [ -n "$line" ] || return 1
    mapfile -d '' PLAN < <("$PY" -c 'import shlex, sys
sys.stdout.write("".join(a + "\0" for a in shlex.split(sys.argv[1])))' "$line")
    # A dry run names the box's home files and makes none
    # (/tmp/kgate-box.XXXXXX/...): the replay gets stand-ins of its own.
    local i box=$KG_TMP/boxfiles
    if [ ! -d "$box" ]; then
        mkdir -p "$box" && : >"$box/gitconfig" && : >"$box/excludes" && : >"$box/empty" &&
            chmod 0755 "$box" && chmod 0444 "$box"/* || return 1
    fi
    for i in "${!PLAN[@]}"; do PLAN[i]=${PLAN[i]//\/tmp\/kgate-box.XXXXXX/$box}; done
}

# replay [--filter] [--without FLAG]... [--wrap CMD...  --]: runs PLAN as the
# test user.  --filter hands bwrap the seccomp program as kgate's launch
# does; --without drops FLAG (and, for --cap-drop, its value); --wrap runs
# the whole thing under CMD (the pty driver).
replay() {
    local filter=0 wrap=() drop=() a=() skip=0 x d
    while [ $# -gt 0 ]; do
        case $1 in
        --filter) filter=1; shift ;;
        --without) drop+=("$2"); shift 2 ;;
        --wrap)
            shift
            while [ "$1" != -- ]; do wrap+=("$1"); shift; done
            shift ;;
        *) echo "replay: $1?"; return 2 ;;
        esac
    done
    a=("${PLAN[0]}")
    [ "$filter" = 1 ] && a+=(--seccomp 9)
    for x in "${PLAN[@]:1}"; do
        if [ "$skip" -gt 0 ]; then skip=$((skip - 1)); continue; fi
        for d in "${drop[@]}"; do
            if [ "$x" = "$d" ]; then
                [ "$x" = --cap-drop ] && skip=1
                continue 2
            fi
        done
        a+=("$x")
    done
    # The descriptor is opened by a shell inside the wrapper, which (python's
    # subprocess) would close one opened outside.
    as_user "${wrap[@]}" sh -c 'f=$1; shift; exec "$@" 9<"$f"' sh "$FILTER" "${a[@]}"
}

# tried_not BAD WHY CMD...: CMD's run happened (it printed kg-tried), did
# not print BAD, and its output names WHY (case-insensitive).
tried_not() {
    local bad=$1 why=$2 out
    shift 2
    out=$("$@" 2>&1)
    printf '%s\n' "$out" | grep -q kg-tried && ! printf '%s\n' "$out" | grep -q -- "$bad" &&
        printf '%s\n' "$out" | grep -qi -- "$why" || {
        printf 'want kg-tried, no "%s", "%s"; got:\n%s\n' "$bad" "$why" "$out" | head -20
        return 1
    }
}

# A plan that lacks the flag a check is about proves nothing.
plan_has() { local x; for x in "${PLAN[@]}"; do [ "$x" = "$1" ] && return 0; done; return 1; }

CAPS='CapInh|CapPrm|CapEff|CapBnd|CapAmb'
# caps_zero CMD...: CMD printed /proc/self/status; all five sets read zero.
caps_zero() {
    local out
    out=$("$@" 2>&1)
    [ "$(printf '%s\n' "$out" | grep -Ec "^($CAPS):[[:space:]]+0+$")" -eq 5 ] || {
        printf 'not all zero:\n%s\n' "$(printf '%s\n' "$out" | grep -E "^($CAPS):")"
        return 1
    }
}
# caps_full CMD...: CapEff, CapPrm and CapBnd read nonzero.
caps_full() {
    local out
    out=$("$@" 2>&1)
    [ "$(printf '%s\n' "$out" | grep -Ec '^(CapPrm|CapEff|CapBnd):[[:space:]]+0*[1-9a-f][0-9a-f]*$')" -eq 3 ] || {
        printf 'not nonzero:\n%s\n' "$(printf '%s\n' "$out" | grep -E "^($CAPS):")"
        return 1
    }
}

for who in $(test_users); do
    use_user "$who"
    write_config <<EOF
network: off
EOF
    cp "$KG_TMP/calls.py" "$KG_TMP/inject.py" "$KG_TMP/ptyrun.py" "$KG_PROJ/"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"

    # ---- user namespaces: --disable-userns and the filter ---------------------
    # The two layers answer with different errors: the filter EPERM before
    # the kernel is asked, --disable-userns ENOSPC (the namespace count of
    # the sandbox's user namespace is 0).
    plan_of "$PY" calls.py
    check "the plan has --disable-userns" plan_has --disable-userns
    check "kgate run: unshare(CLONE_NEWUSER) refused by the filter (EPERM)" \
        has "userns EPERM" kg run -- "$PY" calls.py
    check "--disable-userns alone (no filter): refused (ENOSPC)" \
        has "userns ENOSPC" replay
    check "the filter alone (no --disable-userns): refused (EPERM)" \
        has "userns EPERM" replay --filter --without --disable-userns
    check "control: with neither, the same call makes a user namespace" \
        has "userns ok" replay --without --disable-userns
    # The same with the util-linux tool an attacker would reach for.
    plan_of /bin/sh -c 'echo kg-tried; unshare -U true && echo kg-unshared'
    check "--disable-userns alone: unshare -U fails (No space left on device)" \
        tried_not kg-unshared "No space left on device" replay
    check "control: with neither, unshare -U works" has kg-unshared replay --without --disable-userns

    # ---- capabilities: --cap-drop ALL ------------------------------------------
    check "kgate run: no capability in any set (/proc/self/status)" \
        caps_zero kg run -- grep -E "^($CAPS):" /proc/self/status
    plan_of grep -E "^($CAPS):" /proc/self/status
    check "the plan has --cap-drop ALL" plan_has --cap-drop
    check "the plan replayed with the filter: no capability either" \
        caps_zero replay --filter
    if [ "$KG_UID" -eq 0 ]; then
        check "control: the same plan without --cap-drop ALL keeps root's capabilities" \
            caps_full replay --filter --without --cap-drop

        # Mounts: refused by the filter and by the missing capabilities.
        # (The sandbox's own mount namespace belongs to a user namespace
        # above the program's, so a mount there fails even with
        # capabilities: the attack makes a mount namespace of its own.)
        mkdir -p "$KG_PROJ/mnt"
        MOUNT="echo kg-tried; unshare -m sh -c 'mount -t tmpfs kgtest mnt && echo kg-mounted'"
        plan_of /bin/sh -c "$MOUNT"
        check "no capability alone (no filter): a mount namespace and mount fail" \
            tried_not kg-mounted "not permitted\|permission denied" replay
        check "the filter alone (capabilities kept): the mount fails" \
            tried_not kg-mounted "not permitted\|permission denied" \
            replay --filter --without --cap-drop
        check "control: with neither, the same mount works" \
            has kg-mounted replay --without --cap-drop
        check "kgate run: the mount fails" \
            tried_not kg-mounted "not permitted\|permission denied" kg run -- /bin/sh -c "$MOUNT"
    else
        echo "# [$KG_WHO] mounts and the capability control need root: bwrap gives this uid none anyway"
    fi

    # ---- TIOCSTI: --new-session and the filter ---------------------------------
    # Without a pty of kgate's own (--no-pty), the program shares the
    # caller's terminal: --new-session takes it out of that terminal's
    # session, the filter refuses the ioctl.
    plan_of "$PY" inject.py
    check "the plan has --new-session" plan_has --new-session
    PTY=(--wrap "$PY" "$KG_PROJ/ptyrun.py" --)
    out=$(replay "${PTY[@]}" 2>&1)
    check "--new-session alone (no filter): TIOCSTI refused" \
        has "TIOCSTI-REFUSED errno=1" printf '%s\n' "$out"
    check "--new-session alone: nothing reached the terminal's input" \
        has "PENDING=b''" printf '%s\n' "$out"
    out=$(replay --filter --without --new-session "${PTY[@]}" 2>&1)
    check "the filter alone (same session): TIOCSTI refused" \
        has "TIOCSTI-REFUSED errno=1" printf '%s\n' "$out"
    check "the filter alone: nothing reached the terminal's input" \
        has "PENDING=b''" printf '%s\n' "$out"
    out=$(replay --without --new-session "${PTY[@]}" 2>&1)
    if [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1)" = 0 ]; then
        echo "# dev.tty.legacy_tiocsti is 0: this kernel refuses TIOCSTI to everyone"
        check "control: with neither, TIOCSTI is refused by this kernel" \
            has "TIOCSTI-REFUSED" printf '%s\n' "$out"
    else
        check "control: with neither, the byte is pushed into the terminal" \
            has "PENDING=b'Z'" printf '%s\n' "$out"
    fi
done
finish
