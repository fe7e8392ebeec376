#!/usr/bin/env python3
"""A minimal agent shell tool wired through kgate.

A model proposes shell commands; the harness runs each one as
`kgate run -- /bin/sh -c COMMAND` in the project directory and hands back
what the model is allowed to see: the exit status and the (masked) output.
The model never types `kgate`: the harness puts it in front of every
command, so forgetting it is not possible.  kgate's refusal channel
(--events-fd) tells the harness why something was refused; the harness
passes that on as "why", so the model can correct course instead of
retrying the command some other way.

Usage:  agent-harness.py [--kgate PATH] [--json] COMMAND...
        (each COMMAND is one proposed shell command line)
"""
import argparse
import json
import os
import subprocess
import sys
import threading

# What the harness tells the model each exit status means.  125-127 come
# from kgate itself; anything else is the program's own status.
MEANINGS = {
    0: "ok",
    125: "refused by kgate before the program ran (policy, audit, backend)",
    126: "blocked: the command is on the exec deny list, nothing ran",
    127: "command not found",
}


def explain(obj):
    """One sentence for the model from a blocked or refused object."""
    rule = obj.get("rule") or {}
    if rule.get("key"):
        entry = rule.get("entry")
        return "%s (rule: %s%s)" % (obj.get("description", ""), rule["key"],
                                    ": " + entry if entry else "")
    return obj.get("description", "")


def read_events(fd, into):
    """Reads the channel to its end: one JSON object a line.  Types this
    harness does not know are kept but not explained (kgate adds kinds
    without a new version)."""
    with os.fdopen(fd, "rb") as f:
        for line in f:
            try:
                into.append(json.loads(line))
            except ValueError:
                pass


def run_tool(kgate, command, timeout=120):
    """Runs one proposed command in the sandbox; returns what the model sees."""
    r, w = os.pipe()
    events = []
    # Read while the command runs: kgate drops what a full pipe cannot take.
    reader = threading.Thread(target=read_events, args=(r, events))
    reader.start()
    try:
        proc = subprocess.run(
            [kgate, "run", "--no-pty", "--events-fd", str(w), "--", "/bin/sh", "-c", command],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
            pass_fds=(w,),
        )
    finally:
        os.close(w)
        reader.join()
    status = proc.returncode
    if status < 0:  # the harness's child died of a signal
        status = 128 - status
    meaning = MEANINGS.get(status)
    if meaning is None:
        meaning = ("killed by signal %d" % (status - 128)) if status > 128 else "program failed"
    blocked = [e for e in events if e.get("type") == "blocked"]
    refused = [e for e in events if e.get("type") == "refused"]
    why = [explain(e) for e in blocked] or [explain(e) for e in refused]
    return {
        "command": command,
        "exit": status,
        "meaning": meaning,
        "why": why,
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
            print("$ %s\n[exit %d: %s]\n%s%s%s" % (
                r["command"], r["exit"], r["meaning"], r["stdout"], r["stderr"],
                "".join("[why: %s]\n" % w for w in r["why"])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
