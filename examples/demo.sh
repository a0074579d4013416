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
echo "== perfmon-sample: 0.2 s interval; the job (examples/demo-job.sh): phase solve, matmul-io"
echo "   with 2 threads and a result file per round, then phase checkpoint, 256 MiB written"
"$BIN/perfmon-sample" -o "$OUT" -i 0.2 --job-id demo -- \
    examples/demo-job.sh "$BIN" "$BUILD" "$OUT"
ls -l "$OUT"
echo "== perfmon-analyze --stats"
"$BIN/perfmon-analyze" "$OUT" --stats
echo "== perfmon-analyze --pdf out/demo-report.pdf --plots out/demo-plots"
"$BIN/perfmon-analyze" "$OUT" --pdf out/demo-report.pdf --plots out/demo-plots
"$BIN/perfmon-analyze" "$OUT" --data out/demo-data --csv out/demo.csv
echo
echo "report:      out/demo-report.pdf ($(ls out/demo-plots | wc -l) plots in out/demo-plots)"
echo "data files:  out/demo-data (gnuplot), out/demo.csv"
