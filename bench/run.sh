#!/bin/sh
# make bench: benchmarks that generate their own inputs and print tables.
# Not part of `make check`: they measure, they do not pass or fail.
set -eu
BUILD=${BUILD:-build/release}
BIN="$BUILD/bin"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "== perfmon-sample cost per sample (targets: <= 0.3 ms CPU, <= 2.4 MiB peak RSS)"
echo "   10-process tree (sh + 9 children), -i 0.05 for 20 s, binary format"
"$BIN/perfmon-sample" -o "$TMP/tree" -i 0.05 -d 20 -- \
    sh -c 'for i in 1 2 3 4 5 6 7 8 9; do sleep 21 & done; wait'
echo "   system-wide only, -i 0.05 for 10 s"
"$BIN/perfmon-sample" -o "$TMP/sys" -i 0.05 -d 10
echo "   the same writing profile format version 1 (PERFMON_PROFILE_VERSION=1)"
PERFMON_PROFILE_VERSION=1 "$BIN/perfmon-sample" -o "$TMP/sys1" -i 0.05 -d 10
echo "   10-process tree, JSON Lines format, -i 0.05 for 10 s"
"$BIN/perfmon-sample" -o "$TMP/json" -f json -i 0.05 -d 10 -- \
    sh -c 'for i in 1 2 3 4 5 6 7 8 9; do sleep 11 & done; wait'
"$BUILD/bench/sampler_cost" "$TMP"/tree/*.pmp "$TMP"/sys/*.pmp "$TMP"/sys1/*.pmp "$TMP"/json/*.jsonl

echo "== profile format: bytes per sample, versions 1, 2 and 3 (target: v3 <= 1/4 of v1; <= 8.7 MB per day at 1 s for 32 columns)"
echo "   the runs above written again in each version, and a generated 24-hour 32-column profile"
"$BUILD/bench/format_bench" "$TMP"/tree/*.pmp "$TMP"/sys/*.pmp

echo "== perfmon-analyze: ${PM_BENCH_HOSTS:-64} hosts x ${PM_BENCH_SAMPLES:-86400} samples; SKA JSON ${PM_BENCH_SKA_HOSTS:-16} x ${PM_BENCH_SKA_SAMPLES:-3600}"
"$BUILD/bench/analyze_bench" "${PM_BENCH_HOSTS:-64}" "${PM_BENCH_SAMPLES:-86400}" \
    "${PM_BENCH_SKA_HOSTS:-16}" "${PM_BENCH_SKA_SAMPLES:-3600}"

echo "== perfmon-analyze --stats, the program (peak RSS from wait4): ${PM_BENCH_HOSTS:-64} hosts x ${PM_BENCH_SAMPLES:-86400} samples"
PM_BENCH_STATS_ONLY=1 "$BUILD/bench/report_bench" "$BIN" "${PM_BENCH_HOSTS:-64}" "${PM_BENCH_SAMPLES:-86400}"

echo "== perfmon-analyze --pdf / --plots: ${PM_BENCH_REPORT_HOSTS:-16} hosts x ${PM_BENCH_REPORT_SAMPLES:-86400} samples; SKA JSON 16 x 3600 --pdf and --stats"
"$BUILD/bench/report_bench" "$BIN" "${PM_BENCH_REPORT_HOSTS:-16}" "${PM_BENCH_REPORT_SAMPLES:-86400}" 16 3600
