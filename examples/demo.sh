#!/bin/sh
# make demo: sample the bundled workload on this machine, then analyse it:
# statistics, the PDF job report, PNG plots, data files and CSV.
# Output: out/demo/ (the profile) and out/ (everything derived from it).
set -eu
BUILD=${BUILD:-build/release}
BIN="$BUILD/bin"
OUT=out/demo
rm -rf "$OUT" out/demo-plots out/demo-data
mkdir -p out
echo "== perfmon-sample: 0.2 s interval, matmul-io with 2 threads and disk I/O"
"$BIN/perfmon-sample" -o "$OUT" -i 0.2 --job-id demo -- \
    "$BUILD/examples/matmul-io" -n 1400 -t 2 -r 8 -d "$OUT"
ls -l "$OUT"
echo "== perfmon-analyze --stats"
"$BIN/perfmon-analyze" "$OUT" --stats
echo "== perfmon-analyze --pdf out/demo-report.pdf --plots out/demo-plots"
"$BIN/perfmon-analyze" "$OUT" --pdf out/demo-report.pdf --plots out/demo-plots
"$BIN/perfmon-analyze" "$OUT" --data out/demo-data --csv out/demo.csv
echo
echo "report:      out/demo-report.pdf ($(ls out/demo-plots | wc -l) plots in out/demo-plots)"
echo "data files:  out/demo-data (gnuplot), out/demo.csv"
