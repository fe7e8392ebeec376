#!/usr/bin/env python3
"""launch: `kgate run -- true` against the identical bwrap command line run
directly (the one `kgate run --dry-run` prints).  Target: kgate adds under
15%, a few milliseconds at most."""
import statistics
import sys

import common

common.require_built()
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
env, proj = common.sandbox_env("network: off\n")
bwrap = common.dry_run_argv(env, proj)
kgate = [common.KGATE, "run", "--no-pty", "--", "true"]
ck, cb = [], []
tk, tb = common.paired(kgate, bwrap, runs, env, proj, cpu_a=ck, cpu_b=cb)


def compare(what, k, b):
    mk, mb = statistics.median(k), statistics.median(b)
    print("launch  %s bwrap alone:  %s" % (what, common.describe(b)))
    print("launch  %s kgate run:    %s" % (what, common.describe(k)))
    print("launch  %s kgate/bwrap = %.3f (%+.2f ms, %+.1f%%; target < +15%%)"
          % (what, mk / mb, mk - mb, 100 * (mk / mb - 1)))


compare("wall", tk, tb)
# CPU: bwrap's outer process alone, against kgate and that same process.
compare("cpu ", ck, cb)
