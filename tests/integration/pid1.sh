#!/bin/bash
# pid1.sh SUITE [VAR=VALUE...]: tests/integration/SUITE.sh, with the
# variables set, in a PID namespace of its own whose PID 1 reaps nothing
# but the suite (issue 43.4).  Containers often have such a PID 1 (a shell
# or a small launcher that waits for its one child), and they are where
# the Landlock box is picked: a process of a run that kgate's own
# processes leave to init stays there for good, a zombie if it ended, and
# alive if nothing killed it.  The suite's kill checks must hold there as
# on an ordinary host.
set -u
suite=$1
shift
# In a PID namespace of our own: unshare needs root here (an ordinary
# user's would need a user namespace, and the suite's uid switch with it).
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null ||
    ! unshare --pid --fork --mount-proc true 2>/dev/null; then
    if [ -n "${KGATE_MUST_WORK:-}" ]; then
        echo "FAIL: would skip, but KGATE_MUST_WORK is set: no PID namespace here (root and unshare needed)"
        exit 1
    fi
    echo "SKIP: no PID namespace here (root and unshare needed)"
    exit 77
fi
# PID 1 waits for its one child (the suite) by pid, and reaps nothing
# else; its own exit (the suite's status) ends the namespace, and with it
# anything a failed check left (KG_PID1 tells the suite it may start what
# only that end can stop: a fork loop).
exec unshare --pid --fork --mount-proc /usr/bin/python3 -c '
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp("env", ["env"] + sys.argv[1:])
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st) & 0xff)' KG_PID1=1 "$@" bash "$(dirname "$0")/$suite.sh"
