#!/usr/bin/python3
"""ignoring.py: runs a command with some signals ignored and every other
one at its default, the way nohup or a script's background job starts it,
for tests/integration/run_signals.sh.

    ignoring.py SIGNALS [--pty] -- COMMAND [ARG...]

SIGNALS is a comma-separated list of names without SIG (HUP,TERM), or "-"
for none.  With --pty the command runs as a session leader on a new
pseudo-terminal (kgate's pty mode); its output is printed without the
carriage returns.  Exits with the command's status (128+N for a signal).
"""
import os
import pty
import signal
import sys


def child(ignored, argv):
    # Python itself ignores SIGPIPE and SIGXFSZ: every signal back to its
    # default first, then exactly the ones asked for.
    for s in signal.valid_signals():
        if s in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(s, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    for s in ignored:
        signal.signal(s, signal.SIG_IGN)
    os.execvp(argv[0], argv)


def main():
    names = sys.argv[1]
    rest = sys.argv[2:]
    use_pty = rest[:1] == ["--pty"]
    if use_pty:
        rest = rest[1:]
    if rest[:1] != ["--"] or len(rest) < 2:
        sys.exit("usage: ignoring.py SIGNALS [--pty] -- COMMAND [ARG...]")
    argv = rest[1:]
    ignored = [] if names == "-" else [getattr(signal, "SIG" + n) for n in names.split(",")]
    if use_pty:
        pid, fd = pty.fork()
        if pid == 0:
            child(ignored, argv)
        out = b""
        while True:
            try:
                d = os.read(fd, 4096)
            except OSError:
                break
            if not d:
                break
            out += d
        sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
    else:
        pid = os.fork()
        if pid == 0:
            child(ignored, argv)
    _, st = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(st) if not os.WIFSIGNALED(st)
             else 128 + os.WTERMSIG(st))


main()
