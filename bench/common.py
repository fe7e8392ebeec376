"""Shared by the kgate benchmarks: a throwaway HOME and project, paired
timing, and the summary line each benchmark prints."""
import atexit
import fcntl
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("KGATE_BUILD_ROOT", os.path.join(ROOT, "build"))
# KGATE overrides the binary (to compare two builds with the same plugins).
KGATE = os.environ.get("KGATE", os.path.join(BUILD, "core", "kgate"))
# The plugins an installed kgate has here: seatbelt is installed on macOS
# only (plugins/seatbelt/meson.build).
PLUGIN_PATH = ":".join(os.path.join(BUILD, "plugins", p)
                       for p in (("seatbelt",) if sys.platform == "darwin" else
                                 ("bubblewrap", "slirp-filter", "landlock")))


def sandbox_env(config_text):
    """A temporary HOME holding config_text as its kgate config, and a
    project directory inside it.  Returns (env, project_dir)."""
    home = tempfile.mkdtemp(prefix="kgate-bench.")
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    os.makedirs(os.path.join(home, ".kgate"), mode=0o700)
    with open(os.path.join(home, ".kgate", "config.yaml"), "w") as f:
        f.write(config_text)
    proj = os.path.join(home, "proj")
    os.mkdir(proj)
    env = dict(os.environ, HOME=home, KGATE_PLUGIN_PATH=PLUGIN_PATH)
    return env, proj


def dry_run_argv(env, cwd, extra=()):
    """The exact argv `kgate run --no-pty --dry-run` prints (its first
    line).  --no-pty because the benchmarks run on pipes, and a plan for a
    terminal has another session layout.  bubblewrap's launch adds
    --info-fd and --block-fd to this argv (docs/bubblewrap.md): that cost
    is kgate's, so the baseline is the printed argv as it is."""
    out = subprocess.run([KGATE, "run", "--no-pty", "--dry-run", *extra, "--", "true"],
                         env=env, cwd=cwd, check=True, capture_output=True,
                         stdin=subprocess.DEVNULL, text=True).stdout
    # A dry run names the box's home files and makes none: stand-ins, as
    # small as kgate's, so that bwrap alone can run the plan.
    box = tempfile.mkdtemp(prefix="kgate-bench-box.")
    for name in ("gitconfig", "excludes", "empty"):
        open(os.path.join(box, name), "w").close()
    return [a.replace("/tmp/kgate-box.XXXXXX", box) for a in shlex.split(out.splitlines()[0])]


def _become_subreaper():
    """The benchmarks' process adopts what a launcher leaves behind.
    bwrap's outer process does not reap the sandbox's pid 1 (it is
    reparented when bwrap exits), while kgate, a subreaper, reaps it:
    without this, kgate's CPU would count the sandbox's processes and
    bwrap alone's would not.  Linux only; elsewhere nothing is adopted."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


SUBREAPER = _become_subreaper()


def reap_adopted():
    """CPU milliseconds of the processes a launcher left to us, waited
    for until none is left (the sandbox's pid 1 dies with its bwrap), or
    for at most 2 s: a peer's daemon that stays is not waited for."""
    total = 0.0
    give_up = time.monotonic() + 2
    while SUBREAPER:
        try:
            pid, _, ru = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if time.monotonic() > give_up:
                break
            time.sleep(0.001)
            continue
        total += (ru.ru_utime + ru.ru_stime) * 1e3
    return total


def time_once(argv, env, cwd, cpu=None):
    """Wall milliseconds of one run.  When cpu is a list, the CPU time
    (user + system, milliseconds) of the process and of what it reaped is
    appended to it: CPU time, unlike wall time, hardly moves with the load
    of the machine.  What the command left behind is adopted and reaped
    here (reap_adopted) and counts too: kgate reaps the sandbox's
    processes itself, bwrap alone leaves them, and so the difference of
    the two is kgate's own."""
    t0 = time.perf_counter_ns()
    p = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    t1 = time.perf_counter_ns()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit("benchmark command failed (%d): %s" % (p.returncode, shlex.join(argv)))
    adopted = reap_adopted()
    if cpu is not None:
        cpu.append((ru.ru_utime + ru.ru_stime) * 1e3 + adopted)
    return (t1 - t0) / 1e6


def paired(a, b, runs, env, cwd, warmup=5, cpu_a=None, cpu_b=None):
    """Alternates a and b so drift on the machine hits both alike.
    Returns two lists of milliseconds."""
    for _ in range(warmup):
        time_once(a, env, cwd)
        time_once(b, env, cwd)
    ta, tb = [], []
    for _ in range(runs):
        ta.append(time_once(a, env, cwd, cpu_a))
        tb.append(time_once(b, env, cwd, cpu_b))
    return ta, tb


def series(argv, env, cwd, runs, warmup=2):
    for _ in range(warmup):
        time_once(argv, env, cwd)
    return [time_once(argv, env, cwd) for _ in range(runs)]


def require_built():
    if not os.access(KGATE, os.X_OK):
        raise SystemExit("no kgate at %s: build first (ninja -C build)" % KGATE)


def describe(ms):
    q = statistics.quantiles(ms, n=10)
    return "median %.2f ms (p10 %.2f, p90 %.2f, n=%d)" % (statistics.median(ms), q[0], q[-1],
                                                          len(ms))


F_SETPIPE_SZ = 1031
PIPE_SIZE = 1 << 20


def pipe_throughput(argv, env, cwd, total, buf, relay=None):
    """(MB/s, CPU seconds) of argv writing total bytes to its stdout: a
    pipe of PIPE_SIZE (the same for every launcher, so that none gets a
    bigger one than another), drained into buf (a memoryview, reused).
    With relay (an argv, such as ["cat"]), argv writes into a pipe of
    PIPE_SIZE that relay reads, and relay writes into the drained one.
    CPU is what wait4 counts for argv (and relay) and what they reaped,
    and what they left for us to reap."""
    r, w = os.pipe()
    fcntl.fcntl(r, F_SETPIPE_SZ, PIPE_SIZE)
    t0 = time.perf_counter()
    procs = []
    if relay:
        mid_r, mid_w = os.pipe()
        fcntl.fcntl(mid_r, F_SETPIPE_SZ, PIPE_SIZE)
        procs.append(subprocess.Popen(relay, env=env, cwd=cwd, stdin=mid_r, stdout=w,
                                      stderr=subprocess.DEVNULL))
        os.close(mid_r)
        procs.append(subprocess.Popen(argv, env=env, cwd=cwd, stdout=mid_w,
                                      stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        os.close(mid_w)
    else:
        procs.append(subprocess.Popen(argv, env=env, cwd=cwd, stdout=w,
                                      stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    os.close(w)
    got = 0
    while True:
        n = os.readv(r, [buf])
        if n == 0:
            break
        got += n
    os.close(r)
    rc, cpu = 0, 0.0
    for p in procs:
        _, status, ru = os.wait4(p.pid, 0)
        rc = rc or os.waitstatus_to_exitcode(status)
        cpu += ru.ru_utime + ru.ru_stime
    dt = time.perf_counter() - t0
    adopted = reap_adopted() / 1e3
    if got != total or rc != 0:
        raise SystemExit("expected %d bytes and status 0, got %d and %d from %s"
                         % (total, got, rc, shlex.join(argv)))
    return got / dt / 1e6, cpu + adopted
