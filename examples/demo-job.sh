#!/bin/sh
# The job that `make demo` samples, shaped like a batch job script: a solve
# phase (matmul-io: two threads multiplying matrices, a result file written
# with fsync and read back each round) and a checkpoint phase (256 MiB
# written with fsync), each marked with `perfmon-sample mark` as a job
# script marks its own phases.  Arguments: BIN BUILD OUT.
set -eu
BIN=$1 BUILD=$2 OUT=$3
"$BIN/perfmon-sample" mark -o "$OUT" solve start
"$BUILD/examples/matmul-io" -n 1400 -t 2 -r 6 -d "$OUT"
"$BIN/perfmon-sample" mark -o "$OUT" solve end
"$BIN/perfmon-sample" mark -o "$OUT" checkpoint start
dd if=/dev/zero of="$OUT/checkpoint.tmp" bs=1M count=256 conv=fsync status=none
rm -f "$OUT/checkpoint.tmp"
"$BIN/perfmon-sample" mark -o "$OUT" checkpoint end
