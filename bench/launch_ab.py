#!/usr/bin/env python3
"""launch_ab: two kgate builds against each other, `kgate run -- true` in
alternating pairs (KGATE_A, then KGATE_B; the plugins of KGATE_BUILD_ROOT).
Prints each one's wall and CPU medians, and the medians of the per-pair
ratio (wall) and difference (CPU): what a change bought, with drift on a
shared machine hitting both alike."""
import os
import statistics
import sys

import common

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 100
a, b = os.environ["KGATE_A"], os.environ["KGATE_B"]
env, proj = common.sandbox_env("network: off\n")
ca, cb = [], []
ta, tb = common.paired([a, "run", "--no-pty", "--", "true"],
                       [b, "run", "--no-pty", "--", "true"], runs, env, proj,
                       cpu_a=ca, cpu_b=cb)
print("A %s\n  wall %s\n  cpu  %s" % (a, common.describe(ta), common.describe(ca)))
print("B %s\n  wall %s\n  cpu  %s" % (b, common.describe(tb), common.describe(cb)))
r = [y / x for x, y in zip(ta, tb)]
d = [y - x for x, y in zip(ca, cb)]
print("B/A wall per-pair ratio: median %.3f; B-A cpu per-pair: median %+.2f ms (n=%d)"
      % (statistics.median(r), statistics.median(d), runs))
