#!/bin/sh
# Run the benchmarks (make bench).  Each prints its own table.
set -eu
BUILD=${BUILD:-build/release}
# analyze_bench HOSTS SAMPLES SKA_HOSTS SKA_SAMPLES
"$BUILD/bench/analyze_bench" "${PM_BENCH_HOSTS:-64}" "${PM_BENCH_SAMPLES:-86400}" \
    "${PM_BENCH_SKA_HOSTS:-16}" "${PM_BENCH_SKA_SAMPLES:-3600}"
