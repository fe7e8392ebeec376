#!/usr/bin/env python3
"""restricted launch: `kgate run -- true` with a host allow list
(network: restricted, served by the slirp-filter backend: slirp4netns and
iptables in the sandbox's namespace) against the same with network: off.
The allowed name is a .test name that nothing is asked for, so nothing
leaves the machine.  When no backend can enforce the allow list here, says
why and skips.

Issue 28, target 3: the host list at most +20 ms of wall time over
network off (median of the pairs' differences, 40 pairs by default), and a
list of 10,000 entries (9,000 names and 1,000 wildcards) no slower than a
list of one (median of the pairs' ratios at most 1.10; SCALE_PAIRS pairs,
10 by default, SCALE_NAMES entries).

Usage: restricted.py [PAIRS]"""
import os
import statistics
import subprocess
import sys

import common

common.require_built()
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 40
env, proj = common.sandbox_env("network: restricted\nallow_hosts: [example.test]\n")
off_env, off_proj = common.sandbox_env("network: off\n")
probe = subprocess.run([common.KGATE, "run", "--no-pty", "--dry-run", "--", "true"], env=env,
                       cwd=proj, stdin=subprocess.DEVNULL, capture_output=True, text=True)
if probe.returncode != 0:
    print("restricted  skipped: no backend enforces an allow list here: "
          + (probe.stderr.strip().splitlines() or ["?"])[-1])
    sys.exit(0)
restricted = [common.KGATE, "run", "--no-pty", "--", "true"]
print("restricted  load average before: %.2f %.2f %.2f, %d CPUs"
      % (*os.getloadavg(), os.cpu_count()))
for _ in range(3):  # warm up both
    common.time_once(restricted, env, proj)
    common.time_once(restricted, off_env, off_proj)
tr, to, cr, co = [], [], [], []
for _ in range(runs):  # interleaved, so drift hits both alike
    tr.append(common.time_once(restricted, env, proj, cr))
    to.append(common.time_once(restricted, off_env, off_proj, co))
for what, r, o in (("wall", tr, to), ("cpu ", cr, co)):
    mr, mo = statistics.median(r), statistics.median(o)
    print("restricted  %s network off: %s" % (what, common.describe(o)))
    print("restricted  %s host list:   %s" % (what, common.describe(r)))
    print("restricted  %s restricted/off = %.2f (%+.1f ms)" % (what, mr / mo, mr - mo))
    # The figure the target is on: the median of each pair's difference,
    # which drift between pairs moves less than a difference of two medians.
    d = [a - b for a, b in zip(r, o)]
    print("restricted  %s paired difference: %s%s"
          % (what, common.describe(d), "; target <= +20 ms" if what == "wall" else ""))


def scale_config(n):
    """n entries: nine in ten names, one in ten wildcards."""
    wild = n // 10
    lines = ["network: restricted", "allow_hosts:"]
    lines += ["  - s%d.scale.test" % i for i in range(n - wild)]
    lines += ['  - "*.w%d.test"' % i for i in range(wild)]
    return "\n".join(lines) + "\n"


# The list's size: the same launch with one entry and with many, paired.
n_big = int(os.environ.get("SCALE_NAMES", "10000"))
scale_pairs = int(os.environ.get("SCALE_PAIRS", "10"))
big_env, big_proj = common.sandbox_env(scale_config(n_big))
for _ in range(2):
    common.time_once(restricted, big_env, big_proj)
one, big = [], []
for _ in range(scale_pairs):
    one.append(common.time_once(restricted, env, proj))
    big.append(common.time_once(restricted, big_env, big_proj))
print("restricted  wall 1 entry:       %s" % common.describe(one))
print("restricted  wall %d entries: %s" % (n_big, common.describe(big)))
print("restricted  wall %d entries / 1: median of pair ratios %.2f; target <= 1.10"
      % (n_big, statistics.median(b / a for a, b in zip(one, big))))
print("restricted  load average after: %.2f %.2f %.2f" % os.getloadavg())
