#!/usr/bin/env python3
"""peers: kgate beside the other agent sandboxes, on the same machine in
the same run (issue 28, target 5).

Each launcher runs the same two commands in its default box (network
off where it has a switch for it):
  true     /bin/true, the launch itself
  output   256 MiB of ordinary text written to stdout and read through a
           pipe (kgate's masking on)
and each is paired with bwrap alone (the argv `kgate run --dry-run`
prints, the same layout kgate's box has), alternating, so that load and
drift hit both alike.  A figure is the median of the per-pair ratios:
wall time over bwrap's for `true`, throughput over bwrap's for `output`
(above 1 is faster than bwrap).

Peers: firejail (Debian's package, --noprofile), Codex's Linux sandbox
(`codex sandbox`, the native binary of the npm package, no node start),
Anthropic's sandbox-runtime (`srt`, npm; a node program).  --install
installs what is missing (apt-get for firejail, and for srt's ripgrep
and socat, as root; npm into ~/.cache/kgate-peers for the others, at
the versions below).  A peer
that is missing, cannot be installed or fails its first run is reported
with the reason, never left out silently.

Usage: peers.py [--install] [PAIRS_TRUE [PAIRS_OUTPUT]] (20 and 5)."""
import glob
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import common

CODEX_VERSION = "0.171.0"
SRT_VERSION = "0.0.83"
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "kgate-peers")
OUTPUT_BYTES = 256 << 20
PIPE_SIZE = common.PIPE_SIZE
GEN = ["sh", "-c", "yes 'cc -O2 -c src/module.c -o build/module.o  # ordinary output "
       "0123456789' | head -c %d" % OUTPUT_BYTES]

args = [a for a in sys.argv[1:] if a != "--install"]
INSTALL = "--install" in sys.argv[1:]
PAIRS_TRUE = int(args[0]) if args else 20
PAIRS_OUTPUT = int(args[1]) if len(args) > 1 else 5


def npm_install(pkg, version, where):
    """npm install of pkg@version under CACHE/where; None or the reason."""
    if not shutil.which("npm"):
        return "npm is not installed"
    r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix",
                        os.path.join(CACHE, where), "%s@%s" % (pkg, version)],
                       capture_output=True, text=True)
    return None if r.returncode == 0 else "npm install failed: " + r.stderr.strip()[-200:]


def find_firejail():
    if shutil.which("firejail"):
        return shutil.which("firejail"), None
    if not INSTALL:
        return None, "not installed (peers.py --install, or apt-get install firejail)"
    if os.geteuid() != 0:
        return None, "not installed, and installing it needs root (apt-get install firejail)"
    r = subprocess.run(["apt-get", "install", "-y", "firejail"], capture_output=True, text=True)
    if r.returncode != 0 or not shutil.which("firejail"):
        return None, "apt-get install firejail failed: " + r.stderr.strip()[-200:]
    return shutil.which("firejail"), None


def find_codex():
    pattern = os.path.join(CACHE, "codex", "node_modules", "@openai", "codex-linux-*",
                           "vendor", "*", "bin", "codex")
    found = glob.glob(pattern)
    if not found and INSTALL:
        why = npm_install("@openai/codex", CODEX_VERSION, "codex")
        if why:
            return None, why
        found = glob.glob(pattern)
    if not found:
        return None, "not installed (peers.py --install: npm @openai/codex@%s)" % CODEX_VERSION
    return found[0], None


def srt_tools():
    """What srt needs beside bwrap on Linux (its first run names them):
    ripgrep and socat, from apt-get as root; None or the reason."""
    missing = [p for p, cmd in (("ripgrep", "rg"), ("socat", "socat")) if not shutil.which(cmd)]
    if not missing or not INSTALL:
        return None
    if os.geteuid() != 0:
        return "needs %s, and installing it needs root" % " and ".join(missing)
    r = subprocess.run(["apt-get", "install", "-y"] + missing, capture_output=True, text=True)
    return None if r.returncode == 0 else "apt-get install %s failed: %s" % (
        " ".join(missing), r.stderr.strip()[-200:])


def find_srt():
    path = os.path.join(CACHE, "srt", "node_modules", ".bin", "srt")
    if not os.access(path, os.X_OK) and INSTALL:
        why = npm_install("@anthropic-ai/sandbox-runtime", SRT_VERSION, "srt")
        if why:
            return None, why
    why = srt_tools()
    if why:
        return None, why
    if not os.access(path, os.X_OK):
        return None, ("not installed (peers.py --install: npm "
                      "@anthropic-ai/sandbox-runtime@%s)" % SRT_VERSION)
    return path, None


def launchers(bwrap_prefix):
    """name -> (function of the command giving the argv, None) or
    (None, why it is missing)."""
    out = {
        "bwrap": (lambda cmd: bwrap_prefix + cmd, None),
        "kgate": (lambda cmd: [common.KGATE, "run", "--no-pty", "--"] + cmd, None),
    }
    fj, why = find_firejail()
    out["firejail"] = ((lambda cmd: [fj, "--quiet", "--noprofile", "--net=none", "--"] + cmd)
                       if fj else None, why)
    cx, why = find_codex()
    out["codex"] = ((lambda cmd: [cx, "sandbox", "--"] + cmd) if cx else None, why)
    srt, why = find_srt()
    out["srt"] = ((lambda cmd: [srt, "-c", shlex.join(cmd)]) if srt else None, why)
    return out


def first_run(argv, env, cwd):
    """None when argv runs and exits 0, else the reason."""
    try:
        r = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=60)
    except subprocess.TimeoutExpired:
        return "its first run took over 60 s"
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["(no message)"])[-1]
        return "its first run failed (%d): %s" % (r.returncode, last[:160])
    return None


def throughput(argv, env, cwd, buf):
    """MB/s of OUTPUT_BYTES read from argv's stdout."""
    return common.pipe_throughput(argv, env, cwd, OUTPUT_BYTES, buf)[0]


def measure_true(make, base, env, cwd):
    a, b = make(["/bin/true"]), base(["/bin/true"])
    ta, tb = common.paired(a, b, PAIRS_TRUE, env, cwd, warmup=3)
    return statistics.median(ta), statistics.median(tb), \
        statistics.median(x / y for x, y in zip(ta, tb))


def measure_output(make, base, env, cwd, buf):
    a, b = make(GEN), base(GEN)
    ra, rb = [], []
    for _ in range(PAIRS_OUTPUT):
        ra.append(throughput(a, env, cwd, buf))
        rb.append(throughput(b, env, cwd, buf))
    return statistics.median(ra), statistics.median(rb), \
        statistics.median(x / y for x, y in zip(ra, rb))


def main():
    common.require_built()
    env, proj = common.sandbox_env("network: off\n")
    # Codex refuses a home under /tmp for its helper binaries.
    home = tempfile.mkdtemp(prefix="kgate-peers.", dir="/var/tmp")
    shutil.copytree(os.path.join(env["HOME"], ".kgate"), os.path.join(home, ".kgate"))
    env["HOME"] = home
    try:
        bwrap_argv = common.dry_run_argv(env, proj)
        prefix = bwrap_argv[:bwrap_argv.index("--") + 1]
        table = launchers(prefix)
        base = table["bwrap"][0]
        buf = memoryview(bytearray(PIPE_SIZE))
        with open("/proc/loadavg") as f:
            print("load average before: %s, %d CPUs, uid %d"
                  % (" ".join(f.read().split()[:3]), os.cpu_count(), os.geteuid()))
        for name, (make, why) in table.items():
            if name == "bwrap":
                continue
            why = why or first_run(make(["/bin/true"]), env, proj)
            if why:
                print("%-9s not measured: %s" % (name, why))
                continue
            ta, tb, rt = measure_true(make, base, env, proj)
            ma, mb, ro = measure_output(make, base, env, proj, buf)
            print("%-9s true %.1f ms (bwrap %.1f), ratio %.2f (n=%d); "
                  "output %.0f MB/s (bwrap %.0f), ratio %.2f (n=%d)"
                  % (name, ta, tb, rt, PAIRS_TRUE, ma, mb, ro, PAIRS_OUTPUT))
            sys.stdout.flush()
        with open("/proc/loadavg") as f:
            print("load average after: %s" % " ".join(f.read().split()[:3]))
    finally:
        shutil.rmtree(home, ignore_errors=True)


main()
