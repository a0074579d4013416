#!/bin/sh
# make bench: benchmarks that generate their own inputs and print tables.
# Not part of `make check`: they measure, they do not pass or fail.
set -eu
BUILD=${BUILD:-build/release}
BIN="$BUILD/bin"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "== perfmon-sample cost per sample (targets: <= 0.25 ms CPU and <= 0.3x sadc's beside it, <= 2.4 MiB peak RSS; 512 processes: <= 5 ms)"
echo "   10-process tree (sh + 9 children), -i 0.05 for 20 s, binary format; sadc -S DISK 1 20 (sysstat) beside it where installed"
SADC=$(command -v sadc || true)
[ -z "$SADC" ] && [ -x /usr/lib/sysstat/sadc ] && SADC=/usr/lib/sysstat/sadc
[ -z "$SADC" ] && [ -x /usr/lib64/sa/sadc ] && SADC=/usr/lib64/sa/sadc
if [ -n "$SADC" ]; then
    "$BUILD/bench/sampler_cost_cpu" 20 "$SADC" -S DISK 1 20 "$TMP/sa" >"$TMP/sadc.ms" &
    SADC_PID=$!
fi
"$BIN/perfmon-sample" -o "$TMP/tree" -i 0.05 -d 20 -- \
    sh -c 'for i in 1 2 3 4 5 6 7 8 9; do sleep 21 & done; wait'
if [ -n "$SADC" ]; then wait "$SADC_PID" || rm -f "$TMP/sadc.ms"; fi
echo "   512 processes of 2 threads, sleeping (bench/sampler_cost_tree), -i 0.05 for 10 s"
"$BIN/perfmon-sample" -o "$TMP/t512" -i 0.05 -d 10 -- "$BUILD/bench/sampler_cost_tree" 512 11
echo "   system-wide only, -i 0.05 for 10 s"
"$BIN/perfmon-sample" -o "$TMP/sys" -i 0.05 -d 10
echo "   the same writing profile format version 1 (PERFMON_PROFILE_VERSION=1)"
PERFMON_PROFILE_VERSION=1 "$BIN/perfmon-sample" -o "$TMP/sys1" -i 0.05 -d 10
echo "   10-process tree, JSON Lines format, -i 0.05 for 10 s"
"$BIN/perfmon-sample" -o "$TMP/json" -f json -i 0.05 -d 10 -- \
    sh -c 'for i in 1 2 3 4 5 6 7 8 9; do sleep 11 & done; wait'
"$BUILD/bench/sampler_cost" "$TMP"/tree/*.pmp "$TMP"/sys/*.pmp "$TMP"/sys1/*.pmp "$TMP"/json/*.jsonl "$TMP"/t512/*.pmp
if [ -s "$TMP/sadc.ms" ]; then
    "$BUILD/bench/sampler_cost" "$TMP"/tree/*.pmp | awk -v s="$(cat "$TMP/sadc.ms")" \
        'NR == 2 { printf "   sadc -S DISK beside the tree run: %.3f ms CPU a sample; the sampler %.3f ms, %.2fx sadc\n", s, $3, $3 / s }'
fi

echo "== profile format: bytes per sample, versions 1, 2 and 3 (target: v3 <= 1/4 of v1; <= 8.7 MB per day at 1 s for 32 columns)"
echo "   the runs above written again in each version, and a generated 24-hour 32-column profile"
"$BUILD/bench/format_bench" "$TMP"/tree/*.pmp "$TMP"/sys/*.pmp

echo "== perfmon-analyze: ${PM_BENCH_HOSTS:-64} hosts x ${PM_BENCH_SAMPLES:-86400} samples; SKA JSON ${PM_BENCH_SKA_HOSTS:-16} x ${PM_BENCH_SKA_SAMPLES:-3600}"
"$BUILD/bench/analyze_bench" "${PM_BENCH_HOSTS:-64}" "${PM_BENCH_SAMPLES:-86400}" \
    "${PM_BENCH_SKA_HOSTS:-16}" "${PM_BENCH_SKA_SAMPLES:-3600}"

echo "== perfmon-analyze --stats, the program (peak RSS from wait4): ${PM_BENCH_HOSTS:-64} hosts x ${PM_BENCH_SAMPLES:-86400} samples, in memory and --stream"
PM_BENCH_STREAM=1 PM_BENCH_STATS_ONLY=1 "$BUILD/bench/report_bench" "$BIN" "${PM_BENCH_HOSTS:-64}" "${PM_BENCH_SAMPLES:-86400}"
echo "== perfmon-analyze --stats --pdf, the program: ${PM_BENCH_HOSTS:-64} hosts x ${PM_BENCH_SAMPLES:-86400} samples, in memory and --stream"
PM_BENCH_PDF=1 PM_BENCH_STREAM=1 PM_BENCH_STATS_ONLY=1 "$BUILD/bench/report_bench" "$BIN" "${PM_BENCH_HOSTS:-64}" "${PM_BENCH_SAMPLES:-86400}"
# The big jobs of issue 18, --stream only (in memory they need 25 GB):
# generating 1,024 x 86,400 takes minutes and 5.5 GB of /tmp, removed after.
if [ -n "${PM_BENCH_BIG:-}" ]; then
    echo "== perfmon-analyze --stats --pdf --stream: 1024 hosts x 86400 samples (targets <= 40 s, <= 300 MB)"
    PM_BENCH_PDF=1 PM_BENCH_STREAM=only PM_BENCH_STATS_ONLY=1 "$BUILD/bench/report_bench" "$BIN" 1024 86400
    echo "== perfmon-analyze --stats --pdf --stream: 10000 hosts x 8640 samples (targets <= 50 s, <= 1 GB)"
    PM_BENCH_PDF=1 PM_BENCH_STREAM=only PM_BENCH_STATS_ONLY=1 "$BUILD/bench/report_bench" "$BIN" 10000 8640
fi

echo "== perfmon-analyze --pdf / --plots: ${PM_BENCH_REPORT_HOSTS:-16} hosts x ${PM_BENCH_REPORT_SAMPLES:-86400} samples; SKA JSON 16 x 3600 --pdf and --stats"
"$BUILD/bench/report_bench" "$BIN" "${PM_BENCH_REPORT_HOSTS:-16}" "${PM_BENCH_REPORT_SAMPLES:-86400}" 16 3600

echo "== SKA SDP perfmon's own post-processing beside perfmon-analyze: SKA JSON ${PM_BENCH_SKA_HOSTS:-16} x ${PM_BENCH_SKA_SAMPLES:-3600} (bench/ska_side.sh; pandas and matplotlib, skipped without them)"
mkdir -p "$TMP/skaside"
TMP="$TMP/skaside" BUILD="$BUILD" sh bench/ska_side.sh
rm -rf "$TMP/skaside"

echo "== perfmon-analyze --html beside --pdf: SKA 16 x 3600, 512 x ${PM_BENCH_BIG:+86400}${PM_BENCH_BIG:-3600} and 10000 x 120 (bench/bigjob.c); the first screen and a zoom in headless Chromium (bench/html.sh)"
mkdir -p "$TMP/html"
TMP="$TMP/html" BUILD="$BUILD" sh bench/html.sh
rm -rf "$TMP/html"

N10K=${PM_BENCH_BIG_HOSTS:-10000}
S10K=${PM_BENCH_BIG_SAMPLES:-120}
echo "== the report at scale: perfmon-analyze DIR --pdf --stats on $N10K hosts x $S10K samples at 1 s (three groups of nodes, idle, short and late nodes; bench/bigjob.c)"
"$BUILD/bench/bigjob" "$TMP/big" "$N10K" "$S10K"
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "   %e s wall, %U s user + %S s system CPU, %M KiB peak RSS" \
        "$BIN/perfmon-analyze" "$TMP/big" --pdf "$TMP/big.pdf" --stats -q >/dev/null
else
    time "$BIN/perfmon-analyze" "$TMP/big" --pdf "$TMP/big.pdf" --stats -q >/dev/null
fi
echo "   PDF $(($(wc -c <"$TMP/big.pdf") / 1024)) KiB$(command -v pdfinfo >/dev/null 2>&1 && pdfinfo "$TMP/big.pdf" | awk '/^Pages:/ {print ", " $2 " pages"}')"
rm -rf "$TMP/big" "$TMP/big.pdf"

echo "== perfmon-archive check: the gate's false failures and detection on ${PM_BENCH_GATE_SEEDS:-1000} simulated histories of each kind (docs/archive.md, \"How often it cries wolf\")"
"$BUILD/bench/gate_rates" "${PM_BENCH_GATE_SEEDS:-1000}"
