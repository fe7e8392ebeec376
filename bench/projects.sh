#!/usr/bin/env bash
# projects: the wall time of each real project of the integration suite
# real_projects.sh (tests/integration/projects.sh: zlib, libyaml both ways,
# jq, a Python venv, an npm project), built and tested plainly, in the
# bubblewrap box and in the Landlock box (forced with --backend landlock,
# as landlock_work.py does: its supervisor runs the same way), each in a
# fresh copy, one after the other per round so that load hits all three
# alike.  Target (issue 41): the Landlock box at most 1.3x bubblewrap on
# each project.  Usage: projects.sh [ROUNDS] (default 1; each round is a
# real build of every project three times).  The sources come from
# scripts/fetch-projects; as kgate init's defaults, with a .env at the root.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
B=$(realpath "${KGATE_BUILD_ROOT:-build}")
KGATE=$B/core/kgate
PLUGINS=
for d in "$B"/plugins/*/; do PLUGINS=${PLUGINS:+$PLUGINS:}${d%/}; done
export KGATE_PLUGIN_PATH=$PLUGINS
ROUNDS=${1:-1}
CACHE=$(scripts/fetch-projects)
. tests/integration/projects.sh
read -r -a PROJECTS <<<"${KGATE_PROJECTS_ONLY:-${PROJECTS[*]}}"
W=$(mktemp -d /tmp/kgate-bench-projects.XXXXXX)
trap 'rm -rf "$W"' EXIT
export HOME=$W/home
mkdir -p "$HOME"
"$KGATE" init >/dev/null

# time_ms WHERE NAME: one fresh copy of NAME built and tested WHERE
# (plain, bubblewrap, landlock); prints the wall time in ms, or "fail".
time_ms() {
    local where=$1 name=$2 dir start end steps
    dir=$W/$where-$name
    rm -rf "$dir"
    project_unpack "$name" "$CACHE" "$dir"
    printf 'API_KEY=bench\n' >"$dir/.env"
    steps=$(project_steps "$name")
    start=$(date +%s%N)
    case $where in
    plain) (cd "$dir" && /bin/sh -c "$steps") ;;
    *) (cd "$dir" && "$KGATE" run --no-pty --backend "$where" -- /bin/sh -c "$steps") ;;
    esac >"$W/$where-$name.log" 2>&1 || {
        # The log outlives the scratch directory: a failure must be readable.
        cp "$W/$where-$name.log" "${TMPDIR:-/tmp}/kgate-bench-$where-$name.log"
        echo "fail(${TMPDIR:-/tmp}/kgate-bench-$where-$name.log)"
        return 0
    }
    end=$(date +%s%N)
    echo $(((end - start) / 1000000))
    rm -rf "$dir"
}

echo "projects  load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, $ROUNDS round(s)"
printf 'projects  %-18s %10s %10s %10s %9s %9s\n' project plain-ms bwrap-ms landlock-ms bwrap/pl ll/bwrap
for name in "${PROJECTS[@]}"; do
    for ((r = 0; r < ROUNDS; r++)); do
        p=$(time_ms plain "$name")
        b=$(time_ms bubblewrap "$name")
        l=$(time_ms landlock "$name")
        awk -v n="$name" -v p="$p" -v b="$b" -v l="$l" 'BEGIN {
            rb = (p + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", b / p) : "-"
            rl = (b + 0 > 0 && l + 0 > 0) ? sprintf("%.2f", l / b) : "-"
            printf "projects  %-18s %10s %10s %10s %9s %9s\n", n, p, b, l, rb, rl }'
    done
done
