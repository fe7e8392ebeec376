#!/bin/sh
# run-fuzz.sh EXE WORKDIR SEEDS SECONDS: a short, bounded fuzzing run from
# the seeds, new inputs kept in WORKDIR/corpus, a crash in WORKDIR/crash-*.
set -eu
exe="$1" work="$2" seeds="$3" secs="$4"
mkdir -p "$work/corpus"
max_len=4096
case "$exe" in *fuzz-denyexec) max_len=16384 ;; *fuzz-json) max_len=8192 ;; esac
# -error_exitcode=1: libFuzzer's default, 77, is what meson reads as a skip.
exec "$exe" -error_exitcode=1 -max_total_time="$secs" -max_len="$max_len" -timeout=20 \
    -artifact_prefix="$work/" -print_final_stats=1 "$work/corpus" "$seeds"
