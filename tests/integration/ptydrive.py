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


SCENARIOS = {
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
