#!/usr/bin/python3
"""mount_racer.py NAME OTHER STOPFILE: swaps the directory entries NAME and
OTHER (renameat2 RENAME_EXCHANGE) until STOPFILE exists.
Run inside one sandbox while others launch in the same project: NAME is a
path kgate checks before it launches (a protected path, a deny_read entry)
and OTHER a symlink the attacker wants bwrap to follow instead.

It races in bursts (a few milliseconds of swaps as fast as it can) with
rests between them, NAME back in its true place, of random length.  A
racer that never rests makes kgate refuse every launch, and a run where
every launch was refused proves nothing about leaks: a leak needs a launch
that got past every check.  On a loaded two-CPU machine a racer without
rests saw 0 of 600 launches run.  The bursts still straddle launches at
every step, which is where a leak would be."""
import ctypes
import os
import platform
import random
import sys
import time

NR = {"x86_64": 316, "aarch64": 276, "riscv64": 276, "i686": 353,
      "armv7l": 382, "ppc64le": 357, "s390x": 347}
nr = NR.get(platform.machine())
if nr is None:
    sys.exit("mount_racer: no renameat2 number for " + platform.machine())
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
name, other, stop = (a.encode() for a in sys.argv[1:4])


def swap():
    return libc.syscall(nr, AT_FDCWD, name, AT_FDCWD, other,
                        RENAME_EXCHANGE) == 0


swaps = 0
print("racing", flush=True)
while not os.path.exists(stop):
    burst_end = time.monotonic() + random.uniform(0.005, 0.030)
    while time.monotonic() < burst_end:
        for _ in range(200):
            swaps += swap()
    # An odd count leaves NAME the symlink: one more puts it back.
    if swaps % 2 and swap():
        swaps += 1
    time.sleep(random.uniform(0.005, 0.040))
print("swaps", swaps, flush=True)
