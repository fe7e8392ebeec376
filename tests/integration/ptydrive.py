#!/usr/bin/python3
"""ptydrive.py: drives `kgate run` through a real pseudo-terminal, the way a
person at a terminal would, for tests/integration/pty.sh.

    ptydrive.py SCENARIO KGATE [KGATE_RUN_ARGS...]

The driver opens a pty (the "outer" terminal: it plays the user's terminal
emulator), starts kgate on its slave side as a session leader with that pty
as its controlling terminal (like a login shell would), types into the
master and reads the screen from it.  Each scenario prints its transcript
on failure and exits 0 (pass) or 1 (fail).  Waits are for expected output,
never for time; the deadlines only turn a hang into a failure.
"""
import errno
import fcntl
import os
import re
import select
import signal
import struct
import sys
import termios
import time

DEADLINE = 30.0  # seconds before an expected output counts as missing


class Fail(Exception):
    pass


class Term:
    def __init__(self, argv, rows=24, cols=80, pty=None):
        self.master, self.slave = pty or os.openpty()
        self.resize(rows, cols)
        self.before = termios.tcgetattr(self.slave)
        self.out = b""
        self.status = None
        self.pid = os.fork()
        if self.pid == 0:
            try:
                os.setsid()
                # Python ignores SIGXFSZ for itself; a login shell does not.
                signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
                fcntl.ioctl(self.slave, termios.TIOCSCTTY, 0)
                for fd in (0, 1, 2):
                    os.dup2(self.slave, fd)
                os.closerange(3, 4096)
                os.execv(argv[0], argv)
            finally:
                os._exit(127)
        # The slave stays open here: the terminal's settings outlive kgate,
        # and reads of the master never end in EIO.

    def attr(self):
        return termios.tcgetattr(self.slave)

    def resize(self, rows, cols):
        # On the master as a terminal emulator does; the kernel sends
        # SIGWINCH to the foreground group (kgate) itself.
        fcntl.ioctl(self.master, termios.TIOCSWINSZ,
                    struct.pack("HHHH", rows, cols, 0, 0))

    def send(self, data):
        os.write(self.master, data)

    def _pump(self, timeout):
        r, _, _ = select.select([self.master], [], [], timeout)
        if r:
            try:
                d = os.read(self.master, 65536)
            except OSError as e:
                if e.errno != errno.EIO:
                    raise
                d = b""
            self.out += d
            return bool(d)
        return False

    def expect(self, pattern, start=0):
        """Waits until pattern (a regex on bytes) appears after offset
        start; returns the match."""
        rx = re.compile(pattern)
        end = time.monotonic() + DEADLINE
        while True:
            m = rx.search(self.out, start)
            if m:
                return m
            if self.status is None:
                self.poll_exit()
            left = end - time.monotonic()
            if left <= 0 or (self.status is not None and not self._pump(0)):
                raise Fail("expected %r, got %r (status %r)"
                           % (pattern, self.out[start:], self.status))
            self._pump(min(left, 0.5))

    def poll_exit(self):
        if self.status is None:
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.status = os.waitstatus_to_exitcode(st)
        return self.status

    def wait(self):
        """The exit code of kgate (negative: killed by that signal)."""
        end = time.monotonic() + DEADLINE
        while self.poll_exit() is None:
            if time.monotonic() > end:
                os.kill(self.pid, signal.SIGKILL)
                raise Fail("kgate did not exit; output %r" % self.out)
            self._pump(0.2)
        while self._pump(0):
            pass
        return self.status

    def close(self):
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.wait()
        os.close(self.master)
        os.close(self.slave)


def wait_for_process(cmdline):
    """Waits until a process runs this command (argv[0] compared by its
    last component: the sandbox runs the resolved path); returns its pid as
    seen from here.  Proves that a command typed into the sandbox runs."""
    name = os.path.basename(cmdline[0]).encode()
    rest = [a.encode() for a in cmdline[1:]]
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    argv = f.read().split(b"\0")[:-1]
            except OSError:
                continue
            if (argv and os.path.basename(argv[0]) == name and
                    argv[1:] == rest):
                return int(d)
        time.sleep(0.05)
    raise Fail("no process %r appeared" % (cmdline,))


def wait_for_foreground(pid):
    """Waits until pid runs (not stopped) as the foreground job of its
    terminal.  After `fg` the shell prints the job before it hands the
    terminal over and continues it: a Ctrl-C sent in between goes to the
    shell, not to the job."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            raise Fail("process %d went away" % pid)
        state, pgrp, tpgid = fields[0], int(fields[2]), int(fields[5])
        if state != "T" and tpgid == pgrp:
            return
        time.sleep(0.02)
    raise Fail("process %d never became the foreground job" % pid)


def process_gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split()[2] == "Z"
    except OSError:
        return True


def check(cond, what):
    if not cond:
        raise Fail(what)


PROMPT = b"KGP> "


def shell(kg):
    return kg + ["--", "/bin/bash", "--norc", "--noprofile", "-i"]


def start_shell(kg, **kw):
    """An interactive bash in kgate, once it shows its first prompt."""
    os.environ["PS1"] = PROMPT.decode()
    t = Term(shell(kg), **kw)
    t.expect(re.escape(PROMPT))
    return t


# ---------------------------------------------------------------- scenarios

def sc_shell(kg):
    """An interactive shell takes a typed command and prints its result; it
    has the pty as its controlling terminal (job control on)."""
    t = start_shell(kg)
    try:
        t.send(b"echo $((6*7))RESULT\r")
        t.expect(rb"42RESULT")
        t.send(b"tty; [ -t 0 ] && [ -t 1 ] && echo TERM$((1+1))OK\r")
        t.expect(rb"TERM2OK")
        t.send(b"exit 5\r")
        check(t.wait() == 5, "exit status %r, not 5" % t.status)
        check(b"no job control" not in t.out,
              "the shell says it has no job control")
        check(b"kgate-pty-shim:" not in t.out, "the shim complained")
    finally:
        t.close()
    return t


def sc_ctrlc(kg):
    """Ctrl-C interrupts a running sleep inside; the shell survives and takes
    the next command.  Ctrl-Z stops a job, fg resumes it."""
    t = start_shell(kg)
    try:
        t.send(b"sleep 1007\r")
        pid = wait_for_process(["sleep", "1007"])
        t.send(b"\x03")
        mark = len(t.out)
        t.send(b"echo $?X\r")
        t.expect(rb"130X", mark)
        check(process_gone(pid), "sleep 1007 is still running")
        t.send(b"echo $((2+3))AFTER\r")
        t.expect(rb"5AFTER")
        # Job control: Ctrl-Z, then fg, then Ctrl-C.
        t.send(b"sleep 1008\r")
        pid = wait_for_process(["sleep", "1008"])
        t.send(b"\x1a")
        t.expect(rb"Stopped")
        t.send(b"fg\r")
        t.expect(rb"sleep 1008\r\n", len(t.out) - 2)
        wait_for_foreground(pid)
        t.send(b"\x03")
        mark = len(t.out)
        t.send(b"echo $?Y\r")
        t.expect(rb"130Y", mark)
        check(process_gone(pid), "sleep 1008 is still running")
        t.send(b"exit 0\r")
        check(t.wait() == 0, "exit status %r, not 0" % t.status)
    finally:
        t.close()
    return t


def sc_trap(kg):
    """A Ctrl-C reaches the program's own SIGINT handler, which runs, and its
    exit status comes back (bwrap's outer process is not killed first)."""
    prog = ('trap "echo TRAPPED; exit 3" INT; echo R$((1+1))DY; '
            'while :; do sleep 1; done')
    t = Term(kg + ["--", "/bin/sh", "-c", prog])
    try:
        t.expect(rb"R2DY")
        t.send(b"\x03")
        t.expect(rb"TRAPPED")
        check(t.wait() == 3, "exit status %r, not 3" % t.status)
    finally:
        t.close()
    return t


def sc_winch(kg):
    """A window resize reaches the program: its size changes and it gets
    SIGWINCH."""
    t = start_shell(kg, rows=24, cols=80)
    try:
        t.send(b"stty size\r")
        t.expect(rb"[\r\n]24 80\r")
        # A program that is certainly waiting for SIGWINCH when the resize
        # comes: its handler is in place before it says READY.  (A bash
        # trap is not: between two commands bash may hold a WINCH trap
        # until the next line is typed, which made this check flaky.)
        mark = len(t.out)
        # The handler writes with os.write: a print there can land while
        # the main thread is still inside print("READY") and raise
        # "reentrant call" (seen once on a loaded machine).
        t.send(b"python3 -c 'import os, signal; "
               b"signal.signal(signal.SIGWINCH, lambda *a: (os.write(1, b\"W\" + b\"1INCH\\n\"), os._exit(0))); "
               b"os.write(1, b\"RE\" + b\"ADY\\n\"); signal.pause()'\r")
        t.expect(rb"READY", mark)
        mark = len(t.out)
        t.resize(30, 100)
        t.expect(rb"W1INCH", mark)
        t.send(b"stty size\r")
        t.expect(rb"[\r\n]30 100\r", mark)
        t.send(b"exit 0\r")
        check(t.wait() == 0, "exit status %r" % t.status)
    finally:
        t.close()
    return t


def restored(t):
    after = t.attr()
    check(after == t.before,
          "terminal settings differ after kgate: before %r, after %r"
          % (t.before, after))


def raw_now(t):
    now = t.attr()
    check(now != t.before, "kgate did not put the terminal in raw mode")
    check(not (now[3] & termios.ICANON) and not (now[3] & termios.ECHO),
          "terminal still canonical or echoing while kgate runs")


def sc_sane_exit(kg):
    """Normal exit: raw while running, as before afterwards."""
    t = Term(kg + ["--", "/bin/sh", "-c", "echo U$((1))P; read x; exit 4"])
    try:
        t.expect(rb"U1P")
        raw_now(t)
        t.send(b"\r")
        check(t.wait() == 4, "exit status %r, not 4" % t.status)
        restored(t)
    finally:
        t.close()
    return t


def sc_sane_killed(kg):
    """The program killed by a signal: 137, and the terminal restored."""
    t = Term(kg + ["--", "/bin/sh", "-c",
                   "echo U$((1))P; read x; kill -KILL $$"])
    try:
        t.expect(rb"U1P")
        raw_now(t)
        t.send(b"\r")
        check(t.wait() == 137, "exit status %r, not 137" % t.status)
        restored(t)
    finally:
        t.close()
    return t


def sc_sane_term(kg):
    """kgate gets SIGTERM: forwarded to the program, whose handler runs; its
    exit status comes back and the terminal is restored."""
    prog = ('trap "echo GOT_TERM; exit 3" TERM; echo R$((1+1))DY; '
            'while :; do sleep 1; done')
    t = Term(kg + ["--", "/bin/sh", "-c", prog])
    try:
        t.expect(rb"R2DY")
        raw_now(t)
        os.kill(t.pid, signal.SIGTERM)
        t.expect(rb"GOT_TERM")
        check(t.wait() == 3, "exit status %r, not 3" % t.status)
        restored(t)
    finally:
        t.close()
    return t


def sc_sane_hup(kg):
    """kgate gets SIGHUP: forwarded, the program dies of it, kgate exits
    129 after restoring the terminal."""
    t = Term(kg + ["--", "/bin/sleep", "1009"])
    try:
        wait_for_process(["/bin/sleep", "1009"])
        raw_now(t)
        os.kill(t.pid, signal.SIGHUP)
        check(t.wait() == 129, "exit status %r, not 129" % t.status)
        restored(t)
    finally:
        t.close()
    return t


# Every signal whose default action ends a process, but SIGKILL (which no
# one can catch) and SIGSTOP (which does not end it).  SIGINT, SIGTERM,
# SIGHUP and SIGQUIT are forwarded to the program instead (other scenarios);
# SIGPIPE is kgate's own to survive (a closed output, docs/exit-codes.md).
ENDING = [getattr(signal, n) for n in (
    "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF", "SIGIO",
    "SIGXCPU", "SIGXFSZ", "SIGSTKFLT", "SIGPWR", "SIGTRAP", "SIGSYS",
    "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT")
    if hasattr(signal, n)] + list(range(signal.SIGRTMIN, signal.SIGRTMAX + 1))


def sc_sane_signals(kg):
    """kgate killed by each signal that ends a process: the terminal is
    restored (stty -g the same before and after), kgate dies of that very
    signal, and the sandbox is gone."""
    bad = []
    for sig in ENDING:
        mark = str(3000 + int(sig))
        t = Term(kg + ["--", "/bin/sleep", mark])
        try:
            pid = wait_for_process(["/bin/sleep", mark])
            raw_now(t)
            os.kill(t.pid, sig)
            st = t.wait()
            if t.attr() != t.before:
                bad.append("%s: terminal left changed" % signal.Signals(sig).name
                           if sig < signal.SIGRTMIN else "RT%d: terminal left changed" % sig)
            elif st not in (-sig, 128 + sig):
                bad.append("signal %d: status %r" % (sig, st))
            end = time.monotonic() + DEADLINE
            while not process_gone(pid) and time.monotonic() < end:
                time.sleep(0.05)
            if not process_gone(pid):
                bad.append("signal %d: sleep %s survived" % (sig, mark))
                os.kill(pid, signal.SIGKILL)
        finally:
            t.close()
    print("signals tried:", len(ENDING))
    check(not bad, "; ".join(bad))
    return t


STOPPER = 'echo R$((1))DY; kill -STOP $$; echo CONTINUED; sleep 1013'


def stopped_program(kg):
    """kgate running a shell that has stopped itself."""
    t = Term(kg + ["--", "/bin/bash", "-c", STOPPER])
    t.expect(rb"R1DY")
    pid = wait_for_process(["/bin/bash", "-c", STOPPER])
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                return t, pid
        time.sleep(0.02)
    raise Fail("the program never stopped")


def sc_stopped_ctrlc(kg):
    """A program that stopped itself (kill -STOP $$): Ctrl-C still ends it
    (130), at once, and the terminal is restored."""
    t, pid = stopped_program(kg)
    try:
        start = time.monotonic()
        t.send(b"\x03")
        st = t.wait()
        check(st == 130, "exit status %r, not 130" % st)
        check(time.monotonic() - start < 5, "took %.1f s" % (time.monotonic() - start))
        check(process_gone(pid), "the stopped program survived")
        restored(t)
    finally:
        t.close()
    return t


def sc_stopped_term(kg):
    """A program that stopped itself: SIGTERM to kgate ends it (143) at
    once; the terminal is restored."""
    t, pid = stopped_program(kg)
    try:
        start = time.monotonic()
        os.kill(t.pid, signal.SIGTERM)
        st = t.wait()
        check(st == 143, "exit status %r, not 143" % st)
        check(time.monotonic() - start < 5, "took %.1f s" % (time.monotonic() - start))
        check(process_gone(pid), "the stopped program survived")
        restored(t)
    finally:
        t.close()
    return t


def sc_mask(kg):
    """A secret printed by an interactive program is masked on the screen.
    The typed line is echoed unmasked ("$(("... is no token), the output
    ghp_ + 19 digits + abc is not."""
    t = start_shell(kg)
    try:
        t.send(b"echo ghp_$((2**62))abc; echo D$((1))NE\r")
        t.expect(rb"D1NE")
        t.send(b"exit 0\r")
        t.wait()
        check(b"ghp_***" in t.out, "no ghp_*** on the screen")
        check(b"4611686018427387904" not in t.out, "the secret reached the screen")
    finally:
        t.close()
    return t


def sc_exit7(kg):
    t = Term(kg + ["--", "/bin/sh", "-c", "[ -t 0 ] && [ -t 1 ] && exit 7; exit 1"])
    try:
        check(t.wait() == 7, "exit status %r, not 7" % t.status)
    finally:
        t.close()
    return t


def sc_sigkill(kg):
    t = Term(kg + ["--", "/bin/sh", "-c", "[ -t 0 ] && kill -KILL $$; exit 1"])
    try:
        check(t.wait() == 137, "exit status %r, not 137" % t.status)
    finally:
        t.close()
    return t


def sc_forced_nopty(kg):
    """--no-pty at a terminal: pipes (output), and the terminal is left as
    it was (no raw mode)."""
    t = Term(kg[:2] + ["--no-pty"] + kg[2:] +
             ["--", "/bin/sh", "-c", "[ -t 1 ] || echo PIPE$((1))D"])
    try:
        t.expect(rb"PIPE1D")
        check(t.wait() == 0, "exit status %r" % t.status)
        restored(t)
    finally:
        t.close()
    return t


def sc_no_shim(kg):
    """The plugin's pty shim is missing: refused before anything starts
    (125, the shim named), and the terminal never left its modes."""
    t = Term(kg + ["--", "/bin/true"])
    try:
        check(t.wait() == 125, "exit status %r, not 125" % t.status)
        check(b"kgate-pty-shim" in t.out, "the message does not name the shim")
        restored(t)
    finally:
        t.close()
    return t


# The program inside: pushes a command line into every terminal it can
# reach with TIOCSTI, and says which terminals those are (their device
# numbers), then reads back what landed in its own.
INJECT = r'''
import fcntl, os, sys, termios
outer = int(sys.argv[1])
seen = set()
fds = [0, 1, 2]
try:
    fds.append(os.open("/dev/tty", os.O_RDWR))
except OSError as e:
    print("no /dev/tty:", e)
n = 0
for fd in fds:
    try:
        st = os.fstat(fd)
    except OSError:
        continue
    seen.add(st.st_rdev)
    try:
        for c in b"echo INJECTED\n":
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
        n += 1
    except OSError as e:
        print("TIOCSTI on fd", fd, "refused:", e)
print("OUTER_REACHABLE" if outer in seen else "OUTER_NOT_REACHABLE")
print("INJECTED_INTO", n)
sys.stdout.flush()
# Nothing to read back when every TIOCSTI was refused (a seccomp filter).
line = sys.stdin.readline() if n else "none"
print("READ_BACK", line.strip().replace("INJECTED", "INJ-ECTED"))
'''


def outer_queue(t):
    """What is waiting in the outer terminal's input queue: what the user's
    shell would read next."""
    fl = fcntl.fcntl(t.slave, fcntl.F_GETFL)
    fcntl.fcntl(t.slave, fcntl.F_SETFL, fl | os.O_NONBLOCK)
    attr = t.attr()
    raw = list(attr)
    raw[3] &= ~termios.ICANON  # partial lines too
    raw[6] = list(raw[6])
    raw[6][termios.VMIN] = 0
    raw[6][termios.VTIME] = 0
    termios.tcsetattr(t.slave, termios.TCSANOW, raw)
    try:
        return os.read(t.slave, 4096)
    except BlockingIOError:
        return b""
    finally:
        termios.tcsetattr(t.slave, termios.TCSANOW, attr)
        fcntl.fcntl(t.slave, fcntl.F_SETFL, fl)


def sc_tiocsti(kg):
    """TIOCSTI from inside the sandbox lands in the program's own pty, never
    in the user's terminal.  Control first: the same program run without
    kgate does reach the outer terminal, so the check can fail."""
    for under_kgate in (False, True):
        # The program is told the outer terminal's device number, so the
        # pty is opened before the command line is made.
        pty = os.openpty()
        argv = ["/usr/bin/python3", "-c", INJECT, str(os.fstat(pty[1]).st_rdev)]
        t = Term(kg + ["--"] + argv if under_kgate else argv, pty=pty)
        try:
            t.expect(rb"READ_BACK")
            t.wait()
            left = outer_queue(t)
            if not under_kgate:
                check(b"OUTER_REACHABLE" in t.out,
                      "control: the injector did not see its own terminal")
                check(b"INJECTED_INTO 0" not in t.out,
                      "control: TIOCSTI does not work here at all")
                check(b"INJECTED" in left,
                      "control: nothing waits in the outer terminal")
            else:
                check(t.status == 0, "exit status %r" % t.status)
                check(b"OUTER_NOT_REACHABLE" in t.out,
                      "the program holds the user's terminal")
                # TIOCSTI either lands in the program's own pty, or is
                # refused altogether (a seccomp filter may forbid it).
                if b"INJECTED_INTO 0" not in t.out:
                    check(b"READ_BACK echo INJ-ECTED" in t.out,
                          "the injection did not land in the program's own pty")
                check(left == b"", "the outer terminal has %r waiting" % left)
        finally:
            t.close()
    return t

# Without a pty (--no-pty, or stdout not a terminal) the program must not
# hold the user's terminal (issue 12, section 5).  It tries what a program
# with the terminal on fd 0 can do: change its settings (stty, tcsetattr
# on fd 0 and /dev/tty), push input (TIOCSTI), and write a secret to the
# screen through fd 0, past the mask.
NOPTY_ATTACK = r"""
import fcntl, os, sys, termios
res = []
fds = [0, 1, 2]
try:
    fds.append(os.open("/dev/tty", os.O_RDWR))
except OSError:
    res.append("NO_DEVTTY")
for fd in fds:
    try:
        a = termios.tcgetattr(fd)
        a[3] &= ~(termios.ECHO | termios.ICANON | termios.ISIG)
        termios.tcsetattr(fd, termios.TCSANOW, a)
        res.append("TCSETATTR_OK_%d" % fd)
    except (OSError, termios.error):
        pass
    try:
        for c in b"echo INJECTED\n":
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
        res.append("TIOCSTI_OK_%d" % fd)
    except OSError:
        pass
try:
    os.write(0, b"ghp_" + b"NOPTYSECRETTOKEN" + b"0123456789abcdefghij\r\n")
    res.append("WRITE0_OK")
except OSError:
    res.append("WRITE0_REFUSED")
sys.stdout.write("stdout ghp_" + "NOPTYSECRETTOKEN" + "0123456789abcdefghij\n")
print("RESULT", " ".join(res))
print("ATTACK_DONE")
sys.stdout.flush()
if sys.argv[1:] == ["kill"]:
    os.kill(os.getpid(), 9)
"""


def nopty_attack(kg, mode):
    for under_kgate in (False, True):
        prog = ['/bin/sh', '-c',
                'if stty raw -echo 2>/dev/null; then echo STTY_OK; else echo STTY_REFUSED; fi; '
                'exec /usr/bin/python3 -c "$0" "$@"', NOPTY_ATTACK, mode]
        argv = kg[:2] + ["--no-pty"] + kg[2:] + ["--"] + prog if under_kgate else prog
        t = Term(argv)
        try:
            t.expect(rb"ATTACK_DONE")
            t.wait()
            left = outer_queue(t)
            changed = t.attr() != t.before
            if not under_kgate:
                # The control: on the terminal, every attack works.
                check(b"STTY_OK" in t.out, "control: stty did not work")
                check(changed, "control: the settings did not stay changed")
                check(b"NOPTYSECRETTOKEN" in t.out,
                      "control: the secret written to fd 0 is not on the screen")
                check(b"INJECTED" in left or b"TIOCSTI_OK" not in t.out,
                      "control: TIOCSTI worked but nothing waits")
                termios.tcsetattr(t.slave, termios.TCSANOW, t.before)
            else:
                want = 137 if mode == "kill" else 0
                check(t.status == want, "exit status %r, not %r" % (t.status, want))
                check(b"STTY_REFUSED" in t.out, "stty changed the user's terminal")
                check(b"TCSETATTR_OK" not in t.out, "tcsetattr reached a terminal")
                check(b"TIOCSTI_OK" not in t.out, "TIOCSTI reached a terminal")
                check(b"WRITE0_REFUSED" in t.out, "the program could write to fd 0")
                check(b"NOPTYSECRETTOKEN" not in t.out,
                      "a secret reached the screen unmasked: %r" % t.out)
                check(b"stdout ghp_***" in t.out, "stdout was not masked")
                check(not changed, "terminal settings changed: before %r, after %r"
                      % (t.before, t.attr()))
                check(left == b"", "the outer terminal has %r waiting" % left)
        finally:
            t.close()
    return t


def sc_nopty_attack(kg):
    """--no-pty at a terminal: the program holds no descriptor of it."""
    return nopty_attack(kg, "exit")


def sc_nopty_attack_killed(kg):
    """The same, and the program dies of SIGKILL afterwards (137)."""
    return nopty_attack(kg, "kill")


def sc_nopty_stdin(kg):
    """--no-pty at a terminal: typed input still reaches the program (through
    kgate's pipe), Ctrl-D ends it, and the program sees no terminal."""
    t = Term(kg[:2] + ["--no-pty"] + kg[2:] +
             ["--", "/bin/sh", "-c",
              '[ -t 0 ] || echo NOT$((1))TTY; read x; echo "GOT:$x"; '
              'cat >/dev/null; echo E$((1))OF'])
    try:
        t.expect(rb"NOT1TTY")
        t.send(b"hello kgate\r")
        t.expect(rb"GOT:hello kgate")
        t.send(b"more\r\x04")
        t.expect(rb"E1OF")
        check(t.wait() == 0, "exit status %r" % t.status)
        restored(t)
    finally:
        t.close()
    return t


# Issue 13 §4: what the program may say to the user's terminal.  Each item
# is written between markers <N| and |>; the outer terminal (this driver)
# must see nothing between the markers of a query, and the exact bytes of
# a sequence terminal programs need.
TERM_QUERIES = [
    b"\x1b[c", b"\x1b[>c", b"\x1b[=c", b"\x1bZ", b"\x1b[5n", b"\x1b[6n",
    b"\x1b[?6n", b"\x1bP$qm\x1b\\", b"\x1bP+q544e\x1b\\", b"\x1b[>0q",
    b"\x1b[21t", b"\x1b[18t", b"\x1b[14t", b"\x1b]10;?\x07", b"\x1b]11;?\x1b\\",
    b"\x1b]4;1;?\x07", b"\x1b]52;c;aGVsbG8=\x07", b"\x1b]52;c;?\x07",
    b"\x1b[?2004$p", b"\x1b_Gi=1,a=q;\x1b\\", b"\x05", b"\xc2\x9b6n",
]
TERM_NEEDED = [
    b"\x1b[1;31m", b"\x1b[0m", b"\x1b[10;5H", b"\x1b[2A", b"\x1b[2J", b"\x1b[K",
    b"\x1b[5;20r", b"\x1b[?1049h", b"\x1b[?1049l", b"\x1b[?2004h", b"\x1b[?2004l",
    b"\x1b]0;kgate title\x07", b"\x1b[2 q", b"\x1b7", b"\x1b8", b"\x1b(B",
    b"\x1b]8;;http://example.invalid/\x1b\\link\x1b]8;;\x1b\\",
]


def term_payload():
    items = [(q, True) for q in TERM_QUERIES] + [(n, False) for n in TERM_NEEDED]
    data = b"".join(b"<%d|" % i + seq + b"|>\n" for i, (seq, _) in enumerate(items))
    return items, data + b"<END>\n"


def term_emitter(data):
    """A program that writes data one byte per write (so sequences are
    split across the relay's reads), then exits."""
    code = ("import os,sys\nd=bytes.fromhex(sys.argv[1])\n"
            "for i in range(len(d)): os.write(1, d[i:i+1])\n")
    return ["/usr/bin/python3", "-c", code, data.hex()]


def between(out, i):
    m = re.search(rb"<%d\|(.*?)\|>" % i, out, re.S)
    return None if m is None else m.group(1)


def sc_termq(kg):
    """Queries never reach the outer terminal; what programs need does."""
    items, data = term_payload()
    t = Term(kg + ["--"] + term_emitter(data))
    try:
        t.expect(rb"<END>")
        check(t.wait() == 0, "kgate exited %r" % t.status)
        for i, (seq, query) in enumerate(items):
            got = between(t.out, i)
            check(got is not None, "marker %d missing" % i)
            if query:
                check(got == b"", "query %r reached the terminal as %r" % (seq, got))
            else:
                check(got == seq, "needed %r arrived as %r" % (seq, got))
    finally:
        t.close()
    return t


def sc_termq_control(kg):
    """Control: the same program on the same kind of terminal without
    kgate: every query does reach it (so sc_termq can fail)."""
    items, data = term_payload()
    t = Term(term_emitter(data))
    try:
        t.expect(rb"<END>")
        t.wait()
        for i, (seq, query) in enumerate(items):
            check(between(t.out, i) == seq, "without kgate, %r did not arrive" % seq)
    finally:
        t.close()
    return t


# (issue 26, 5) Tokens with a UTF-8 C1 control inside, which a terminal in
# UTF-8 mode reads as its ESC form: CSI (C2 9B) in the token, in the prefix,
# a dropped query (DSR) in the token, IND (C2 84).  Written one byte per
# write, so the C1 control and the token are split across reads.
C1_TAILS = [b"BBBBBBBBBBBB", b"DDDDDDDDDDDD", b"EEEEEEEEEEEE", b"FFFFFFFFFFFF"]
C1_PAYLOAD = (b"ghp_AAAAAAAA\xc2\x9bm" + C1_TAILS[0] + b"\n"
              b"gh\xc2\x9b31mp_DDDD" + C1_TAILS[1] + b"\n"
              b"ghp_EEEEEEEE\xc2\x9b6n" + C1_TAILS[2] + b"\n"
              b"ghp_FFFFFFFF\xc2\x84" + C1_TAILS[3] + b"\n<END>\n")


def sc_mask_c1(kg):
    """The mask reads what the terminal will be shown, C1 controls included."""
    t = Term(kg + ["--"] + term_emitter(C1_PAYLOAD))
    try:
        t.expect(rb"<END>")
        check(t.wait() == 0, "kgate exited %r" % t.status)
        for tail in C1_TAILS:
            check(tail not in t.out, "%r reached the screen: %r" % (tail, t.out))
        check(t.out.count(b"p_***") == 4, "not four masked tokens: %r" % t.out)
        check(b"\xc2\x9b" not in t.out, "a C1 form reached the screen: %r" % t.out)
    finally:
        t.close()
    return t


def sc_mask_c1_control(kg):
    """Control: without kgate the same bytes reach the terminal, tails and all."""
    t = Term(term_emitter(C1_PAYLOAD))
    try:
        t.expect(rb"<END>")
        t.wait()
        for tail in C1_TAILS:
            check(tail in t.out, "without kgate, %r did not arrive" % tail)
    finally:
        t.close()
    return t


SCENARIOS = {
    "mask-c1": sc_mask_c1,
    "mask-c1-control": sc_mask_c1_control,
    "termq": sc_termq,
    "termq-control": sc_termq_control,
    "shell": sc_shell,
    "ctrlc": sc_ctrlc,
    "trap": sc_trap,
    "winch": sc_winch,
    "sane-exit": sc_sane_exit,
    "sane-killed": sc_sane_killed,
    "sane-term": sc_sane_term,
    "sane-hup": sc_sane_hup,
    "mask": sc_mask,
    "exit7": sc_exit7,
    "sigkill": sc_sigkill,
    "no-pty": sc_forced_nopty,
    "tiocsti": sc_tiocsti,
    "no-shim": sc_no_shim,
    "sane-signals": sc_sane_signals,
    "stopped-ctrlc": sc_stopped_ctrlc,
    "stopped-term": sc_stopped_term,
    "nopty-attack": sc_nopty_attack,
    "nopty-attack-killed": sc_nopty_attack_killed,
    "nopty-stdin": sc_nopty_stdin,
}


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in SCENARIOS:
        sys.exit("usage: ptydrive.py {%s} KGATE [RUN_ARGS...]"
                 % "|".join(SCENARIOS))
    kg = [sys.argv[2], "run"] + sys.argv[3:]
    try:
        SCENARIOS[sys.argv[1]](kg)
    except Fail as e:
        print("FAIL:", e)
        sys.exit(1)
    sys.exit(0)


if __name__ == "__main__":
    main()
