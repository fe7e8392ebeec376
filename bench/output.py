#!/usr/bin/env python3
"""output (issue 28, target 2): a program writing ordinary compiler-like
text through kgate (masking on) against the same program under bwrap alone
(the argv kgate's --dry-run prints) piped through cat: kgate reads the
program's output and writes it on, so the baseline that does the same work
without the mask is `bwrap ... | cat`.  The pipe between bwrap and cat is
grown to the size kgate gives its own (1 MiB, core/supervise/supervise.c),
and the last pipe, into the benchmark's reader, is the same for all: so no
launcher gets a bigger pipe than another.  The benchmark makes both pipes
itself (common.pipe_throughput): no shell stands between.  bwrap alone straight into the
reader (no relay at all) is printed too, for reference, without a target.

Sizes 256 MiB and 1 GiB by default, 10 alternating pairs each; a figure
is the median of the per-pair throughput ratios.  Target: kgate at least
0.95 of `bwrap | cat`.  The relay's CPU per GiB is kgate's CPU minus
bwrap alone's in the same pairs (the program and the sandbox count in
both, common.pipe_throughput), printed beside cat's.

Usage: output.py [PAIRS [BYTES...]]"""
import os
import statistics
import subprocess
import sys

import common

PIPE_SIZE = common.PIPE_SIZE
GIB = 1 << 30


def gen(total):
    return ["sh", "-c", "yes 'cc -O2 -c src/module.c -o build/module.o  # ordinary output "
            "0123456789' | head -c %d" % total]


def measure(total, pairs, env, proj, prefix, view):
    argvs = {
        "kgate": [common.KGATE, "run", "--no-pty", "--"] + gen(total),
        "bwrap|cat": prefix + gen(total),
        "bwrap": prefix + gen(total),
    }
    relay = {"bwrap|cat": ["cat"]}
    rate = {k: [] for k in argvs}
    cpu = {k: [] for k in argvs}
    for _ in range(pairs):  # alternating, so drift on the machine hits all alike
        for name, argv in argvs.items():
            r, c = common.pipe_throughput(argv, env, proj, total, view, relay.get(name))
            rate[name].append(r)
            cpu[name].append(c)
    return rate, cpu


def report(total, pairs, rate, cpu):
    size = "%d MiB" % (total >> 20)
    for name in rate:
        v = rate[name]
        print("output  %s %-9s median %5.0f MB/s (best %.0f, worst %.0f, n=%d)"
              % (size, name, statistics.median(v), max(v), min(v), len(v)))
    for base, target in (("bwrap|cat", "; target >= 0.95"), ("bwrap", " (reference)")):
        r = [k / b for k, b in zip(rate["kgate"], rate[base])]
        print("output  %s kgate/%s throughput: median of pair ratios %.3f (min %.3f, max %.3f)%s"
              % (size, base, statistics.median(r), min(r), max(r), target))
    # What relaying costs: each side's CPU over bwrap alone's in the same
    # pairs (the program and the sandbox count in all three).
    for name in ("kgate", "bwrap|cat"):
        d = [(x - b) * GIB / total for x, b in zip(cpu[name], cpu["bwrap"])]
        print("output  %s %-9s CPU over bwrap alone: %.2f s per GiB (median of pairs)"
              % (size, name, statistics.median(d)))


def main():
    common.require_built()
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    sizes = [int(a) for a in sys.argv[2:]] or [256 << 20, GIB]
    env, proj = common.sandbox_env("network: off\n")
    argv = common.dry_run_argv(env, proj)
    prefix = argv[:argv.index("--") + 1]
    view = memoryview(bytearray(PIPE_SIZE))
    print("output  load average before: %.2f %.2f %.2f, %d CPUs" % (*os.getloadavg(), os.cpu_count()))
    for total in sizes:
        rate, cpu = measure(total, pairs, env, proj, prefix, view)
        report(total, pairs, rate, cpu)
        sys.stdout.flush()
    print("output  load average after: %.2f %.2f %.2f" % os.getloadavg())


main()
