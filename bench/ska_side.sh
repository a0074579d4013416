#!/bin/sh
# ska_side.sh: SKA SDP perfmon's own post-processing (bench/ska_pipeline.py,
# pandas and matplotlib) beside perfmon-analyze on the same merged
# cpu_metrics.json, in one run, alternating, best of 3 (PM_BENCH_SKA_RUNS).
#
#   SKA compute (JSON, DataFrame, rates, repairs, figures)  vs  --stats --data
#   SKA pipeline (the compute, the plots and the PDF)       vs  --pdf
#
# Wall, CPU (user + system) and peak RSS come from /usr/bin/time -v; each
# figure is the best of the runs.  Targets (issue 28): --stats --data at
# least 20x faster and 10x leaner than SKA's compute, --pdf at least 10x
# leaner than SKA's pipeline.  Prints a SKIP line and exits 0 where no
# python3 has pandas and matplotlib, or /usr/bin/time is missing.
#
# Environment: BUILD (build/release), TMP (a fresh directory when unset),
# PM_BENCH_SKA_HOSTS (16), PM_BENCH_SKA_SAMPLES (3600), PM_BENCH_SKA_RUNS (3),
# PM_BENCH_SKA_PARTS (all; "compute": only SKA's compute beside
# --stats --data, without the minutes of SKA's plots and PDF).
set -eu
BUILD=${BUILD:-build/release}
HOSTS=${PM_BENCH_SKA_HOSTS:-16}
SAMPLES=${PM_BENCH_SKA_SAMPLES:-3600}
RUNS=${PM_BENCH_SKA_RUNS:-3}
PARTS=${PM_BENCH_SKA_PARTS:-all}
case $PARTS in
all | compute) ;;
*)
    echo "ska_side: PM_BENCH_SKA_PARTS must be all or compute, not $PARTS" >&2
    exit 2
    ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)

PY=
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import pandas, matplotlib, PIL' 2>/dev/null; then
        PY=$p
        break
    fi
done
if [ -z "$PY" ]; then
    echo "   SKIP SKA side by side: no python3 with pandas, matplotlib and PIL (Debian: apt-get install --no-install-recommends python3-pandas python3-matplotlib)"
    exit 0
fi
if [ ! -x /usr/bin/time ]; then
    echo "   SKIP SKA side by side: /usr/bin/time (GNU time) is not installed"
    exit 0
fi
if [ -z "${TMP:-}" ]; then
    TMP=$(mktemp -d)
    trap 'rm -rf "$TMP"' EXIT
fi
mkdir -p "$TMP/in"
"$BUILD/bench/ska_gen" "$TMP/in/cpu_metrics.json" "$HOSTS" "$SAMPLES"
cat "$TMP/in/cpu_metrics.json" >/dev/null
echo "   $HOSTS hosts x $SAMPLES samples, $(($(wc -c <"$TMP/in/cpu_metrics.json") / 1048576)) MiB of JSON; $("$PY" -c 'import sys, pandas, matplotlib; print("Python %d.%d, pandas %s, matplotlib %s" % (sys.version_info[0], sys.version_info[1], pandas.__version__, matplotlib.__version__))'); best of $RUNS, alternating"

# measure NAME COMMAND...: append "NAME wall cpu rss_kib" to $TMP/runs.
measure() {
    name=$1
    shift
    if ! /usr/bin/time -v -o "$TMP/time" "$@" >"$TMP/stdout" 2>"$TMP/stderr"; then
        echo "ska_side: $name failed:" >&2
        cat "$TMP/stderr" "$TMP/time" >&2
        exit 1
    fi
    awk -v n="$name" '
        /User time \(seconds\)/ { u = $NF }
        /System time \(seconds\)/ { s = $NF }
        /Maximum resident set size/ { m = $NF }
        /Elapsed \(wall clock\)/ {
            k = split($NF, t, ":"); w = 0
            for (i = 1; i <= k; i++) w = w * 60 + t[i]
        }
        END { printf "%s %.3f %.3f %d\n", n, w, u + s, m }' "$TMP/time" >>"$TMP/runs"
}

: >"$TMP/runs"
i=0
while [ "$i" -lt "$RUNS" ]; do
    rm -rf "$TMP/ska" "$TMP/data"
    measure ska_compute "$PY" "$HERE/ska_pipeline.py" compute "$TMP/in"
    measure stats_data "$BUILD/bin/perfmon-analyze" "$TMP/in" --stats --data "$TMP/data"
    if [ "$PARTS" = all ]; then
        measure ska_all "$PY" "$HERE/ska_pipeline.py" all "$TMP/in" "$TMP/ska"
        measure pdf "$BUILD/bin/perfmon-analyze" "$TMP/in" --pdf "$TMP/report.pdf"
    fi
    i=$((i + 1))
done

ska_pdf=0 pm_pdf=0
if [ "$PARTS" = all ]; then
    ska_pdf=$(($(wc -c <"$TMP/ska/job-report.pdf") / 1024))
    pm_pdf=$(($(wc -c <"$TMP/report.pdf") / 1024))
fi
awk -v parts="$PARTS" -v ska_pdf="$ska_pdf" -v pm_pdf="$pm_pdf" '
    function best(k, v) { if (!(k in b) || v < b[k]) b[k] = v }
    { best($1 " w", $2); best($1 " c", $3); best($1 " m", $4) }
    function row(label, k) {
        printf "  %-46s %8.3f %8.3f %9.1f\n", label, b[k " w"], b[k " c"], b[k " m"] / 1024
    }
    function ratio(label, a, p, tw, tm) {
        rw = b[a " w"] / b[p " w"]; rc = b[a " c"] / b[p " c"]; rm = b[a " m"] / b[p " m"]
        printf "  %-46s %7.1fx %7.1fx %8.1fx", label, rw, rc, rm
        miss = ""
        if (tw && rw < tw) miss = miss sprintf(" wall %.1fx < %dx;", rw, tw)
        if (tm && rm < tm) miss = miss sprintf(" memory %.1fx < %dx;", rm, tm)
        printf "  (targets:%s%s)%s\n", tw ? " " tw "x faster," : "", " " tm "x leaner", miss == "" ? " met" : " MISSED:" miss
    }
    END {
        printf "  %-46s %8s %8s %9s\n", "command", "wall s", "cpu s", "peak MiB"
        row("SKA compute (ska_pipeline.py compute)", "ska_compute")
        row("perfmon-analyze DIR --stats --data DIR", "stats_data")
        if (parts == "all") {
            row("SKA pipeline (compute, plots, PDF " ska_pdf " KiB)", "ska_all")
            row("perfmon-analyze DIR --pdf (PDF " pm_pdf " KiB)", "pdf")
        }
        printf "  %-46s %8s %8s %9s\n", "ratio, SKA / perfmon", "wall", "cpu", "memory"
        ratio("compute / --stats --data", "ska_compute", "stats_data", 20, 10)
        if (parts == "all")
            ratio("pipeline / --pdf", "ska_all", "pdf", 0, 10)
    }' "$TMP/runs"
