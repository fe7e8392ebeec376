#!/usr/bin/env python3
"""A minimal agent shell tool wired through kgate.

A model proposes shell commands; the harness runs each one as
`kgate run -- /bin/sh -c COMMAND` in the project directory and hands back
what the model is allowed to see: the exit status and the (masked) output.
The model never types `kgate`: the harness puts it in front of every
command, so forgetting it is not possible.

Usage:  agent-harness.py [--kgate PATH] [--json] COMMAND...
        (each COMMAND is one proposed shell command line)
"""
import argparse
import json
import subprocess
import sys

# What the harness tells the model each exit status means.  125-127 come
# from kgate itself; anything else is the program's own status.
MEANINGS = {
    0: "ok",
    125: "refused by kgate before the program ran (policy, audit, backend)",
    126: "blocked: the command is on the exec deny list, nothing ran",
    127: "command not found",
}


def run_tool(kgate, command, timeout=120):
    """Runs one proposed command in the sandbox; returns what the model sees."""
    proc = subprocess.run(
        [kgate, "run", "--no-pty", "--", "/bin/sh", "-c", command],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    status = proc.returncode
    if status < 0:  # the harness's child died of a signal
        status = 128 - status
    meaning = MEANINGS.get(status)
    if meaning is None:
        meaning = ("killed by signal %d" % (status - 128)) if status > 128 else "program failed"
    return {
        "command": command,
        "exit": status,
        "meaning": meaning,
        "stdout": proc.stdout.decode("utf-8", "replace"),
        "stderr": proc.stderr.decode("utf-8", "replace"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kgate", default="kgate")
    ap.add_argument("--json", action="store_true", help="one JSON object per command")
    ap.add_argument("commands", nargs="+")
    args = ap.parse_args()
    for cmd in args.commands:
        r = run_tool(args.kgate, cmd)
        if args.json:
            print(json.dumps(r), flush=True)
        else:
            print("$ %s\n[exit %d: %s]\n%s%s" % (r["command"], r["exit"], r["meaning"],
                                                r["stdout"], r["stderr"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
