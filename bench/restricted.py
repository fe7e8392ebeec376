#!/usr/bin/env python3
"""restricted launch: a run with a host allow list (slirp4netns + iptables
in the sandbox's namespace) against a network-off run.  The allowed name is
localhost, so nothing leaves the machine."""
import statistics
import sys

import common

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 40
env, proj = common.sandbox_env("network: restricted\nallow_hosts: [localhost]\n")
off_env, off_proj = common.sandbox_env("network: off\n")
restricted = [common.KGATE, "run", "--no-pty", "--", "true"]
tr, to = [], []
for _ in range(runs):  # interleaved, so drift hits both alike
    tr += common.series(restricted, env, proj, 1, warmup=0)
    to += common.series(restricted, off_env, off_proj, 1, warmup=0)
mr, mo = statistics.median(tr), statistics.median(to)
print("restricted  network off: " + common.describe(to))
print("restricted  host list:   " + common.describe(tr))
print("restricted  restricted/off = %.2f (+%.1f ms)" % (mr / mo, mr - mo))
