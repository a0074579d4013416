#!/bin/sh
# Run the benchmarks (make bench).  Each prints its own table.
set -eu
BUILD=${BUILD:-build/release}
"$BUILD/bench/analyze_bench" "${PM_BENCH_HOSTS:-64}" "${PM_BENCH_SAMPLES:-86400}"
