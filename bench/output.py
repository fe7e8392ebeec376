#!/usr/bin/env python3
"""output: a program writing 1 GB of ordinary text through kgate (masking
on) against the same program under bwrap alone.  Both write into a pipe
that this script drains.  Target: kgate at least 80% of bwrap alone."""
import shlex
import subprocess
import sys
import time

import common

total = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000_000
gen = ["sh", "-c", "yes 'cc -O2 -c src/module.c -o build/module.o  # ordinary output 0123456789' "
       "| head -c %d" % total]
env, proj = common.sandbox_env("network: off\n")
bwrap = common.dry_run_argv(env, proj)
bwrap = bwrap[:bwrap.index("--") + 1] + gen
kgate = [common.KGATE, "run", "--no-pty", "--"] + gen


def throughput(argv):
    p = subprocess.Popen(argv, env=env, cwd=proj, stdout=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    got = 0
    t0 = time.perf_counter()
    while True:
        b = p.stdout.read1(1 << 20)
        if not b:
            break
        got += len(b)
    p.wait()
    dt = time.perf_counter() - t0
    if got != total:
        raise SystemExit("expected %d bytes, got %d from %s" % (total, got, shlex.join(argv)))
    return got / dt / 1e6


rounds = 3
b = max(throughput(bwrap) for _ in range(rounds))
k = max(throughput(kgate) for _ in range(rounds))
print("output  bwrap alone: %.0f MB/s (best of %d)" % (b, rounds))
print("output  kgate run:   %.0f MB/s (best of %d)" % (k, rounds))
print("output  kgate/bwrap = %.2f" % (k / b))
