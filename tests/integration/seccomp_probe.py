#!/usr/bin/python3
"""seccomp_probe.py: one call of each family of the shared seccomp table
(sdk/linux/kgl-seccomp.c), made the way an attacker inside the box would,
for tests/integration/landlock.sh.  Prints one line per call:

    SC <family> <call> <errno name, or OK>

Each call is harmless whatever the answer: bad descriptors, read-only
queries, a persona change of this process only.  Arguments are chosen so
that without the filter the kernel answers something other than EPERM
wherever that is possible (a read-only adjtimex succeeds; fsconfig on fd -1
is EBADF); landlock.sh compares with a control run outside the box.
"""
import ctypes
import errno
import os
import platform

NR = {  # x86-64 and arm64 system call numbers
    "x86_64": dict(keyctl=250, add_key=248, unshare=272, clone3=435, fsconfig=431,
                   open_tree=428, mount_setattr=442, finit_module=313,
                   perf_event_open=298, userfaultfd=323, adjtimex=159,
                   personality=135, ioctl=16),
    "aarch64": dict(keyctl=219, add_key=217, unshare=97, clone3=435, fsconfig=431,
                    open_tree=428, mount_setattr=442, finit_module=273,
                    perf_event_open=241, userfaultfd=282, adjtimex=171,
                    personality=92, ioctl=29),
}[platform.machine()]

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def call(family, name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(NR[name]), *args)
    e = ctypes.get_errno()
    print("SC %s %s %s" % (family, name, "OK" if r >= 0 else errno.errorcode.get(e, str(e))),
          flush=True)


c = ctypes
devnull = os.open("/dev/null", os.O_RDWR)
# KEYCTL_GET_KEYRING_ID (0) of the session keyring (-3), not created
call("keyring", "keyctl", c.c_long(0), c.c_long(-3), c.c_long(0))
call("keyring", "add_key", c.c_char_p(b"user"), c.c_char_p(b"kgt-probe"),
     c.c_char_p(b"x"), c.c_long(1), c.c_long(-1234))  # no such keyring
call("user-namespaces", "unshare", c.c_long(0x10000000))  # CLONE_NEWUSER
call("user-namespaces", "clone3", c.c_void_p(None), c.c_long(0))
call("mount-API", "fsconfig", c.c_long(-1), c.c_long(6), None, None, c.c_long(0))
call("mount-API", "open_tree", c.c_long(-1), c.c_char_p(b""), c.c_long(0))
call("mount-API", "mount_setattr", c.c_long(-1), c.c_char_p(b""), c.c_long(0),
     None, c.c_long(0))
call("kernel-modules", "finit_module", c.c_long(-1), c.c_char_p(b""), c.c_long(0))
call("kernel-interfaces", "perf_event_open", None, c.c_long(0), c.c_long(-1),
     c.c_long(-1), c.c_long(0))
call("kernel-interfaces", "userfaultfd", c.c_long(0x7fff0000))  # no such flags
buf = ctypes.create_string_buffer(512)  # struct timex, modes 0: read only
call("clock", "adjtimex", buf)
call("personality", "personality", c.c_ulong(0x0040000))  # ADDR_NO_RANDOMIZE
call("terminal", "ioctl", c.c_long(devnull), c.c_ulong(0x541C), c.c_void_p(None))  # TIOCLINUX
