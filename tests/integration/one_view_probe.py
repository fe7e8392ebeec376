#!/usr/bin/env python3
# one_view_probe.py: what a program in the box sees of one place, the same
# probe in every box (one_view.sh).  Each argument is ID=OPS:PATH, OPS from
# s (stat), l (list), r (read a file), w (write: a new file in a directory,
# an append to a file), t (tar a directory, as a tool that walks the
# project does: ok, or EXIT and tar's status).  Prints "ROW ID op=RESULT ..." with RESULT "ok" or
# the errno's name.  A file this made is removed again.
import errno
import os
import subprocess
import sys


def result(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    except Tool as e:
        return "EXIT%d" % e.args[0]


def write(path):
    if os.path.isdir(path):
        made = os.path.join(path, "kgt-ov-%d" % os.getpid())
        fd = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        os.unlink(made)
    else:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        os.close(fd)


def read(path):
    with open(path, "rb") as f:
        f.read()


def tar(path):
    rc = subprocess.call(["tar", "-cf", "/dev/null", "-C", path, "."], stderr=subprocess.DEVNULL)
    if rc:
        raise Tool(rc)


class Tool(Exception):
    pass


OPS = {"s": os.stat, "l": os.listdir, "r": read, "w": write, "t": tar}
NAMES = {"s": "stat", "l": "list", "r": "read", "w": "write", "t": "tar"}

print("PROBE-START", flush=True)
for spec in sys.argv[1:]:
    ident, rest = spec.split("=", 1)
    ops, path = rest.split(":", 1)
    print("ROW %s %s" % (ident, " ".join("%s=%s" % (NAMES[o], result(lambda: OPS[o](path))) for o in ops)))
print("PROBE-END", flush=True)
