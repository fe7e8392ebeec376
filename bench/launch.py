#!/usr/bin/env python3
"""launch: `kgate run -- true` against the identical bwrap command line run
directly (the one `kgate run --dry-run` prints).  Target (issue 28): the
median of the per-pair ratios at most 1.10, and no run's own CPU more than
1 ms above bwrap's (kgate's CPU in a pair less bwrap's in the same pair)."""
import os
import statistics
import sys

import common

common.require_built()
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
env, proj = common.sandbox_env("network: off\n")
bwrap = common.dry_run_argv(env, proj)
kgate = [common.KGATE, "run", "--no-pty", "--", "true"]
print("launch  load average before: %.2f %.2f %.2f, %d CPUs" % (*os.getloadavg(), os.cpu_count()))
ck, cb = [], []
tk, tb = common.paired(kgate, bwrap, runs, env, proj, cpu_a=ck, cpu_b=cb)


def compare(what, k, b):
    mk, mb = statistics.median(k), statistics.median(b)
    print("launch  %s bwrap alone:  %s" % (what, common.describe(b)))
    print("launch  %s kgate run:    %s" % (what, common.describe(k)))
    print("launch  %s kgate/bwrap = %.3f (%+.2f ms, %+.1f%%)"
          % (what, mk / mb, mk - mb, 100 * (mk / mb - 1)))


compare("wall", tk, tb)
# CPU: bwrap and the sandbox it leaves (reaped by the benchmark), against
# kgate, which reaps them itself.
compare("cpu ", ck, cb)
# The target's own figures: each pair is a ratio (drift between pairs
# cancels), and each pair's CPU difference is kgate's own CPU in that run.
ratios = [k / b for k, b in zip(tk, tb)]
extra = sorted(k - b for k, b in zip(ck, cb))
q = statistics.quantiles(ratios, n=10)
print("launch  wall per-pair ratio: median %.3f (p10 %.3f, p90 %.3f, n=%d); target <= 1.10"
      % (statistics.median(ratios), q[0], q[-1], len(ratios)))
print("launch  cpu per-pair kgate-bwrap: median %+.2f ms, max %+.2f ms, %d of %d runs above "
      "+1 ms; target: none above +1 ms"
      % (statistics.median(extra), extra[-1], sum(1 for e in extra if e > 1.0), len(extra)))
print("launch  load average after: %.2f %.2f %.2f" % os.getloadavg())
