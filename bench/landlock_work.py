#!/usr/bin/env python3
"""landlock_work: the Landlock box against the bubblewrap box on open-heavy
work (issue 25, section 6), in alternating pairs on the same machine in the
same run, so that load and drift hit both alike.

Workloads, each one `kgate run --no-pty --backend B -- sh -c ...` in a
project made once for the run:
  libyaml   building libyaml 0.2.5's library from its source (make -j2 of
            its src/*.c, cleaned first), taken from the macOS cross build's
            cache (scripts/macos-cross) or from LIBYAML_SRC
  status    `git status` in a repository of 10,000 files
  commit    appending to 100 of those files and `git commit -a`
  npm       `npm install` of a local tarball holding 500 files, offline,
            node_modules removed first

Prints each workload's medians and the median of the per-pair ratio
(landlock / bubblewrap); the target is at most 1.3.  Also `true`, the
launch itself.  Usage: landlock_work.py [PAIRS] (default 7; `status` and
`true` take 4 times as many).  Run as an ordinary user or root; the
Landlock box is forced with --backend landlock, as on a host where user
namespaces exist (its file-system supervisor runs the same way)."""
import glob
import os
import shutil
import statistics
import subprocess
import sys

import common

PAIRS = int(sys.argv[1]) if len(sys.argv) > 1 else 7
FILES = 10000
NPM_FILES = 500


def sh(cmd, cwd, env=None):
    subprocess.run(["sh", "-c", cmd], cwd=cwd, env=env, check=True,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)


def make_repo(proj):
    repo = os.path.join(proj, "repo")
    os.mkdir(repo)
    for d in range(100):
        sub = os.path.join(repo, "d%02d" % d)
        os.mkdir(sub)
        for f in range(FILES // 100):
            with open(os.path.join(sub, "f%03d.txt" % f), "w") as fh:
                fh.write("line %d %d\n" % (d, f))
    sh("git init -q && git -c user.name=b -c user.email=b@example.test add -A && "
       "git -c user.name=b -c user.email=b@example.test commit -qm init", repo)
    return repo


def make_tarball(proj, env):
    pkg = os.path.join(proj, "pkgsrc")
    os.makedirs(os.path.join(pkg, "lib"))
    with open(os.path.join(pkg, "package.json"), "w") as fh:
        fh.write('{"name": "kgbench-pkg", "version": "1.0.0", "main": "lib/f000.js"}\n')
    for i in range(NPM_FILES - 1):
        with open(os.path.join(pkg, "lib", "f%03d.js" % i), "w") as fh:
            fh.write("module.exports = %d;\n" % i)
    sh("npm pack --silent >/dev/null", pkg, env)
    app = os.path.join(proj, "app")
    os.makedirs(app, exist_ok=True)
    # Inside the project: the box shows the program its project, not the
    # directory beside it.
    tgz = shutil.move(glob.glob(os.path.join(pkg, "*.tgz"))[0], app)
    with open(os.path.join(app, "package.json"), "w") as fh:
        fh.write('{"name": "kgbench-app", "version": "1.0.0"}\n')
    return app, tgz


def make_libyaml(proj):
    src = os.environ.get("LIBYAML_SRC") or next(iter(sorted(glob.glob(
        os.path.expanduser("~/.cache/kgate-macos-cross/src/libyaml-*/")))), None)
    if not src or not os.path.isdir(os.path.join(src, "src")):
        return None
    dst = os.path.join(proj, "libyaml")
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".pc", "debian"))
    with open(os.path.join(dst, "kgbench.mk"), "w") as fh:
        fh.write("""CFLAGS = -O2 -Iinclude -DYAML_VERSION_MAJOR=0 -DYAML_VERSION_MINOR=2 \\
  -DYAML_VERSION_PATCH=5 '-DYAML_VERSION_STRING="0.2.5"'
OBJ = $(patsubst %.c,%.o,$(wildcard src/*.c))
libyaml.a: $(OBJ)
\tar rcs $@ $(OBJ)
clean:
\trm -f src/*.o libyaml.a
""")
    return dst


def main():
    common.require_built()
    env, proj = common.sandbox_env("network: off\n")
    # npm's cache inside the project: the Landlock box has no writable
    # home of its own (docs/landlock.md), bubblewrap's is a throwaway tmpfs.
    env = dict(env, npm_config_cache=os.path.join(proj, "app", ".npm-cache"),
               npm_config_update_notifier="false")
    work = []
    yaml = make_libyaml(proj)
    if yaml:
        work.append(("libyaml", yaml, "make -s -f kgbench.mk clean && make -s -j2 -f kgbench.mk",
                     PAIRS))
    else:
        print("libyaml: no source (run scripts/macos-cross once, or set LIBYAML_SRC): skipped")
    repo = make_repo(proj)
    work.append(("status", repo, "git status --porcelain >/dev/null", PAIRS * 4))
    work.append(("commit", repo,
                 "for f in d0[0-9]/f00[0-9].txt; do echo x >> $f; done; "
                 "git -c user.name=b -c user.email=b@example.test commit -qam w", PAIRS))
    if shutil.which("npm"):
        app, tgz = make_tarball(proj, env)
        work.append(("npm", app, "rm -rf node_modules package-lock.json && "
                     "npm install --offline --no-audit --no-fund --silent ./%s" % os.path.basename(tgz), PAIRS))
    else:
        print("npm: not installed: skipped")
    work.append(("true", proj, "true", PAIRS * 4))
    print("load average before: %.2f %.2f %.2f, %d CPUs" % (*os.getloadavg(), os.cpu_count()))
    for name, cwd, cmd, n in work:
        def argv(backend):
            return [common.KGATE, "run", "--no-pty", "--backend", backend, "--", "sh", "-c", cmd]
        tb, tl = common.paired(argv("bubblewrap"), argv("landlock"), n, env, cwd, warmup=1)
        r = [y / x for x, y in zip(tb, tl)]
        print("%-8s bubblewrap %.1f ms, landlock %.1f ms; landlock/bubblewrap per-pair "
              "median %.2f (n=%d)" % (name, statistics.median(tb), statistics.median(tl),
                                      statistics.median(r), n))
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
