#!/bin/sh
# make demo: sample the bundled workload on this machine, then analyse it.
# Output goes to out/demo/ (profiles) and out/ (report, statistics).
set -eu
BUILD=${BUILD:-build/release}
BIN="$BUILD/bin"
OUT=out/demo
rm -rf "$OUT"
mkdir -p out
echo "== perfmon-sample: 0.2 s interval, matmul-io with 2 threads and disk I/O"
"$BIN/perfmon-sample" -o "$OUT" -i 0.2 --job-id demo -- \
    "$BUILD/examples/matmul-io" -n 1400 -t 2 -r 8 -d "$OUT"
ls -l "$OUT"
if [ -x "$BIN/perfmon-analyze" ]; then
    echo "== perfmon-analyze --stats"
    "$BIN/perfmon-analyze" "$OUT" --stats
    if "$BIN/perfmon-analyze" --help 2>/dev/null | grep -q -- --pdf; then
        echo "== perfmon-analyze --pdf out/demo-report.pdf"
        "$BIN/perfmon-analyze" "$OUT" --pdf out/demo-report.pdf --plots out/demo-plots
    fi
    if "$BIN/perfmon-analyze" --help 2>/dev/null | grep -q -- --data; then
        "$BIN/perfmon-analyze" "$OUT" --data out/demo-data --csv out/demo.csv
        echo "data files in out/demo-data, CSV in out/demo.csv"
    fi
else
    echo "(perfmon-analyze is not built yet; the profile above is the result)"
    "$BUILD/bench/sampler_cost" "$OUT"/*.pmp 2>/dev/null || true
fi
