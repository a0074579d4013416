#!/bin/sh
# make bench's HTML report section (bench/run.sh): perfmon-analyze --html
# beside --pdf on the same inputs (docs/report.md, "Where the bytes go"):
# the file's size and the time to write it, then in headless Chromium the
# report's first screen and a zoom's redraw (bench/html_browser.py).
# Targets (issue 25): SKA 16 x 3,600 at most 4 MB and written within the
# --pdf time, first screen within 1 s; 512 x 86,400 at most 40 MB, first
# screen within 3 s (PM_BENCH_BIG=1; by default 512 x 3,600); a zoom
# within 50 ms; 10,000 nodes at most 40 MB.
set -eu
BUILD=${BUILD:-build/release}
BIN="$BUILD/bin"
TMP=${TMP:-$(mktemp -d)}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1700000000}

# best IN OUT ARGS...: the least wall time of 3 runs of perfmon-analyze.
best() {
    b=""
    for i in 1 2 3; do
        s=$(date +%s.%N)
        "$BIN/perfmon-analyze" -q "$@"
        e=$(date +%s.%N)
        b=$(echo "$s $e ${b:-1e9}" | awk '{d = $2 - $1; print (d < $3 ? d : $3)}')
    done
    echo "$b"
}

# row NAME INPUT MAX_MB [--stream]
row() {
    name=$1 in=$2 max=$3
    shift 3
    th=$(best "$in" "$@" --html "$TMP/$name.html")
    tp=$(best "$in" "$@" --pdf "$TMP/$name.pdf")
    sh=$(wc -c <"$TMP/$name.html")
    sp=$(wc -c <"$TMP/$name.pdf")
    echo "$name $th $tp $sh $sp $max" | awk '{
        printf "   %-22s HTML %7.2f MB in %5.2f s | PDF %5.2f MB in %5.2f s | HTML <= %d MB: %s%s\n",
            $1, $4 / 1e6, $2, $5 / 1e6, $3, $6, ($4 <= $6 * 1e6 ? "ok" : "OVER"),
            ($1 ~ /^ska/ ? (", written within the --pdf time: " ($2 <= $3 ? "ok" : "NO")) : "")
    }'
}

echo "   (best of 3 runs each; SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH)"
"$BUILD/bench/ska_gen" "$TMP/cpu_metrics.json" 16 3600
row ska-16x3600 "$TMP/cpu_metrics.json" 4
S512=3600
[ -n "${PM_BENCH_BIG:-}" ] && S512=86400
"$BUILD/bench/bigjob" "$TMP/j512" 512 $S512 >/dev/null
row "bigjob-512x$S512" "$TMP/j512" 40 --stream
rm -rf "$TMP/j512"
"$BUILD/bench/bigjob" "$TMP/j10k" 10000 120 >/dev/null
row bigjob-10000x120 "$TMP/j10k" 40 --stream
rm -rf "$TMP/j10k"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROMIUM" ] && command -v python3 >/dev/null 2>&1; then
    python3 "$(dirname "$0")/html_browser.py" "$CHROMIUM" 3 "$TMP/ska-16x3600.html:1000" \
        "$TMP/bigjob-512x$S512.html:3000" "$TMP/bigjob-10000x120.html:3000"
else
    echo "   (no chromium: the browser's figures not measured)"
fi
