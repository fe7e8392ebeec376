#!/usr/bin/env python3
"""output: a program writing 1 GB of ordinary text through kgate (masking
on) against the same program under bwrap alone (the argv kgate's --dry-run
prints).  Fair by construction: both write into the same kind of pipe, of
the same size (kgate would otherwise grow its stdout pipe to 1 MiB and
bwrap alone would get the default 64 KiB), drained by the same reader into
one reused buffer; the runs alternate.  Target: kgate at least 80% of bwrap
alone."""
import os
import statistics
import subprocess
import sys

import common

PIPE_SIZE = common.PIPE_SIZE

common.require_built()
total = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000_000
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
gen = ["sh", "-c", "yes 'cc -O2 -c src/module.c -o build/module.o  # ordinary output 0123456789' "
       "| head -c %d" % total]
env, proj = common.sandbox_env("network: off\n")
bwrap = common.dry_run_argv(env, proj)
bwrap = bwrap[:bwrap.index("--") + 1] + gen
kgate = [common.KGATE, "run", "--no-pty", "--"] + gen
buf = bytearray(PIPE_SIZE)
view = memoryview(buf)


def throughput(argv):
    return common.pipe_throughput(argv, env, proj, total, view)


b, k, cb, ck = [], [], [], []
for _ in range(rounds):  # alternating, so drift on the machine hits both alike
    for argv, mbs, cpu in ((bwrap, b, cb), (kgate, k, ck)):
        rate, secs = throughput(argv)
        mbs.append(rate)
        cpu.append(secs)


def show(v):
    return "median %.0f MB/s (best %.0f, worst %.0f, n=%d)" % (statistics.median(v), max(v),
                                                              min(v), len(v))


print("output  %d bytes, each run into a %d KiB pipe drained by the same reader"
      % (total, PIPE_SIZE >> 10))
print("output  bwrap alone: " + show(b))
print("output  kgate run:   " + show(k))
print("output  kgate/bwrap = %.2f (medians; target >= 0.80), best/best = %.2f"
      % (statistics.median(k) / statistics.median(b), max(k) / max(b)))
# CPU time, which the load of the machine moves far less than wall time.
# wait4 counts what the process reaped, and the benchmark adopts and reaps
# what bwrap's outer process leaves (common.reap_adopted), so the sandbox and
# the generator count in both rows and the difference is kgate's own CPU:
# the relay and the mask.
print("output  cpu: bwrap outer process %.2f s, kgate run %.2f s: kgate's relay %.2f s per GB"
      % (statistics.median(cb), statistics.median(ck),
         (statistics.median(ck) - statistics.median(cb)) * 1e9 / total))
