#!/usr/bin/env bash
# Runs every benchmark against the build in ./build (or $KGATE_BUILD_ROOT).
# Not part of the test suite's verdict: figures, not pass/fail.
set -euo pipefail
cd "$(dirname "$0")"
B=${KGATE_BUILD_ROOT:-../build}
python3 launch.py "${LAUNCH_RUNS:-200}"
python3 restricted.py "${RESTRICTED_RUNS:-40}"
python3 output.py "${OUTPUT_BYTES:-1000000000}"
"$B/bench/bench_denyexec" "${DENY_RUNS:-2000}"
"$B/bench/bench_plugins" "${PLUGIN_RUNS:-2000}"
