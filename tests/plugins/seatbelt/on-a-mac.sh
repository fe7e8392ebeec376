#!/bin/sh
# What only a Mac can show about kgate run with the seatbelt backend (the
# Linux tests check the same decisions from given facts):
#   1. kgate started under another Seatbelt profile: doctor says BLOCKED
#      and names the cause (sandbox_check answered 1), run refuses with 125
#      and one line, and the program does not run.  Control: the same
#      commands outside any profile are not BLOCKED and run the program.
#   2. No orphans: kgate SIGKILLed while the program and a background child
#      run; the kqueue watcher kills both.  Control: the child was running
#      before the kill.
# Registered only on macOS; without sandbox-exec it skips, unless
# KGATE_MUST_WORK=1 (CI).
set -u
if [ "$(uname -s)" != Darwin ]; then
    echo "skip: macOS only"
    exit 77
fi
if [ ! -x /usr/bin/sandbox-exec ]; then
    echo "no /usr/bin/sandbox-exec"
    [ "${KGATE_MUST_WORK:-0}" = 1 ] && exit 1
    exit 77
fi
: "${KGATE_BIN:?}"
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }

# A home and a project of our own, resolved as the kernel spells them.
base="$(cd "$(mktemp -d)" && pwd -P)"
export HOME="$base/home"
proj="$HOME/proj"
mkdir -p "$proj"
cd "$proj" || exit 1
outer='(version 1)(allow default)'

# ---- 1. nested -------------------------------------------------------------
out=$("$KGATE_BIN" doctor --backend seatbelt 2>&1); rc=$?
if [ "$rc" = 0 ] && ! printf '%s\n' "$out" | tail -n 1 | grep -q '^BLOCKED'; then
    ok "control: doctor outside a sandbox is not BLOCKED"
else
    bad "control: doctor outside a sandbox: exit $rc: $out"
fi
out=$("$KGATE_BIN" run --backend seatbelt -- /bin/echo ran-outside 2>&1); rc=$?
[ "$rc" = 0 ] && [ "$out" = ran-outside ] && ok "control: run outside a sandbox" ||
    bad "control: run outside a sandbox: exit $rc: $out"

out=$(/usr/bin/sandbox-exec -p "$outer" "$KGATE_BIN" doctor --backend seatbelt 2>&1); rc=$?
last=$(printf '%s\n' "$out" | tail -n 1)
case "$rc:$last" in
1:BLOCKED*"already runs inside a Seatbelt sandbox"*) ok "doctor inside a sandbox: BLOCKED, cause named" ;;
*) bad "doctor inside a sandbox: exit $rc: $last" ;;
esac
out=$(/usr/bin/sandbox-exec -p "$outer" "$KGATE_BIN" run --backend seatbelt -- /bin/echo SHOULD-NOT-RUN 2>&1); rc=$?
lines=$(printf '%s\n' "$out" | wc -l | tr -d ' ')
case "$rc:$lines:$out" in
*SHOULD-NOT-RUN*) bad "run inside a sandbox ran the program" ;;
125:1:"kgate: backend seatbelt cannot enforce this policy: kgate already runs inside a Seatbelt sandbox"*)
    ok "run inside a sandbox: 125, one line" ;;
*) bad "run inside a sandbox: exit $rc: $out" ;;
esac

# ---- 2. no orphans ---------------------------------------------------------
# The program writes its own pid ($$, kept by exec) and its child's.
rm -f pids
"$KGATE_BIN" run --no-pty --backend seatbelt -- \
    /bin/sh -c 'sleep 300 & echo "$$ $!" > pids.tmp && mv pids.tmp pids; exec sleep 301' \
    >/dev/null 2>&1 &
kg=$!
i=0
while [ ! -s pids ] && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
read -r prog bg < pids 2>/dev/null || { prog=; bg=; }
if [ -n "$prog" ] && [ -n "$bg" ] && kill -0 "$prog" 2>/dev/null && kill -0 "$bg" 2>/dev/null; then
    ok "control: the program and its background child run before kgate is killed"
    kill -KILL "$kg"
    wait "$kg" 2>/dev/null
    for p in "$prog" "$bg"; do
        i=0
        while kill -0 "$p" 2>/dev/null && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        if kill -0 "$p" 2>/dev/null; then
            bad "pid $p outlived a SIGKILLed kgate"
            kill -KILL "$p"
        else
            ok "no orphans: pid $p died with kgate"
        fi
    done
else
    bad "the program did not start (no pids)"
    kill -KILL "$kg" 2>/dev/null
fi
rm -rf "$base"
exit $fail
