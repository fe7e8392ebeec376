#!/usr/bin/env bash
# Runs every benchmark against the build in ./build (or $KGATE_BUILD_ROOT),
# building the benchmark programs first.  Not part of the test suite's
# verdict: figures, not pass/fail.  Sizes: LAUNCH_RUNS, RESTRICTED_RUNS,
# OUTPUT_PAIRS, OUTPUT_BYTES (sizes, space-separated), DENY_RUNS, PLUGIN_RUNS, NET_ROUNDS,
# NET_SCALE (allowed-name counts, space-separated), LANDLOCK_PAIRS, PROJECTS_ROUNDS,
# PEERS_TRUE, PEERS_OUTPUT; PEERS_INSTALL=1 lets peers.py install the
# other sandboxes it compares with (apt-get, npm).  Before each benchmark
# it waits for the one-minute load average to fall below QUIET_LOAD (1 by
# default: each benchmark keeps the CPUs busy, and the next would start on
# its load) for at most QUIET_WAIT seconds (300), and says what it was.
set -euo pipefail
cd "$(dirname "$0")"
B=$(realpath "${KGATE_BUILD_ROOT:-../build}")
export KGATE_BUILD_ROOT=$B
ninja -C "$B" all \
    bench/bench_denyexec bench/bench_plugins >/dev/null
PLUGINS=
for d in "$B"/plugins/*/; do PLUGINS=${PLUGINS:+$PLUGINS:}${d%/}; done
export KGATE_PLUGIN_PATH=$PLUGINS
uname -srm; nproc | sed 's/^/cpus: /'; uptime
# Waits (bounded) for a quiet machine; prints the load the next figure
# starts from.
quiet() {
    local waited=0 load
    while :; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        awk -v l="$load" -v q="${QUIET_LOAD:-1}" 'BEGIN { exit !(l < q) }' && break
        [ "$waited" -ge "${QUIET_WAIT:-300}" ] && break
        sleep 5
        waited=$((waited + 5))
    done
    echo "quiet: load average $load after waiting ${waited} s (wanted below ${QUIET_LOAD:-1})"
}
quiet
python3 launch.py "${LAUNCH_RUNS:-200}"
quiet
python3 restricted.py "${RESTRICTED_RUNS:-40}"
# The allow list on the network: the lab's namespaces need root.
if [ "$(id -u)" -eq 0 ]; then
    quiet
    # shellcheck disable=SC2086 # NET_SCALE: one count a word
    ./restricted_net.sh "${NET_ROUNDS:-5}" ${NET_SCALE:-10000}
else
    echo "restricted_net  skipped: builds network namespaces, needs root"
fi
quiet
# shellcheck disable=SC2086 # OUTPUT_BYTES: one size a word
python3 output.py "${OUTPUT_PAIRS:-10}" ${OUTPUT_BYTES:-}
quiet
"$B/bench/bench_denyexec" "${DENY_RUNS:-2000}"
quiet
"$B/bench/bench_plugins" "${PLUGIN_RUNS:-2000}"
quiet
python3 landlock_work.py "${LANDLOCK_PAIRS:-7}"
quiet
./projects.sh "${PROJECTS_ROUNDS:-1}"
quiet
python3 peers.py ${PEERS_INSTALL:+--install} "${PEERS_TRUE:-20}" "${PEERS_OUTPUT:-5}"
