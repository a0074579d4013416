#!/bin/sh
# A nightly CI step: run the benchmarks, archive their results, and fail
# the pipeline when one got worse than its history.
#
#   ARCHIVE_DB=postgresql://ci@db.example.org/bench examples/ci-archive.sh
#
# Results land in $RESULTS (TensorFlow TestResults JSON files, and the
# perfmon statistics of a profiled run); perfmon-archive stores each one,
# moves it to $RESULTS/archived, and `check` is the gate (exit 1 on a
# regression).  Without ARCHIVE_DB an SQLite file in $RESULTS is used.
#
# What is gated is the table of figure semantics, templates/compare.json
# (shared with perfmon-analyze --compare): benchmark timings and
# throughputs are; perfmon's job figures are informational except the wall
# time; the sampler's own figures never are.  GATE and NO_GATE add to it
# (comma-separated entry names).  The first runs of a new pipeline are a
# baseline: green, "baseline: 2 of 5 runs, no verdict yet".
#
# PERFMON_BIN is the directory of the perfmon programs, with or without a
# trailing slash; unset, they are found on PATH.
set -eu
RESULTS=${RESULTS:-$PWD/bench-results}
DB=${ARCHIVE_DB:-$RESULTS/archive.sqlite}
TEST=${TEST:-nightly-solver}
BIN=${PERFMON_BIN:-}
case $BIN in
"" | */) ;;
*) BIN=$BIN/ ;;
esac
mkdir -p "$RESULTS/incoming" "$RESULTS/archived" "$RESULTS/plots"

# A half-written statistics file never stays behind, whatever fails.
TMP="$RESULTS/incoming/.stats.$$.tmp"
trap 'rm -f "$TMP"' EXIT
trap 'rm -f "$TMP"; exit 130' INT
trap 'rm -f "$TMP"; exit 143' TERM

# 1. The benchmarks write their TestResults here (e.g. TensorFlow's
#    run_and_gather_logs --test_log_output_dir "$RESULTS/incoming").
#    A profiled job adds its statistics (write, then rename into place,
#    so that an archiver never sees a half-written file):
if [ -n "${PROFILE_DIR:-}" ]; then
    "${BIN}perfmon-analyze" "$PROFILE_DIR" --stats --json >"$TMP"
    mv "$TMP" "$RESULTS/incoming/stats-$(date +%s).json"
fi

# 2. Archive (several runners may do this at once on a shared directory).
status=0
"${BIN}perfmon-archive" add --db "$DB" --datadir "$RESULTS/incoming" \
    --archivedir "$RESULTS/archived" --test "$TEST" || status=$?
if [ "$status" -ne 0 ]; then
    echo "some result files could not be archived (see $RESULTS/archived/failed)" >&2
fi

# 3. Gate: exit 1 when the latest run of a gated entry is worse than its
#    last 10 runs beyond 3 robust standard deviations and the table's
#    minimum effect (5 % for benchmark timings).
set -- --window 10 --threshold 3
[ -n "${GATE:-}" ] && set -- "$@" --gate "$GATE"
[ -n "${NO_GATE:-}" ] && set -- "$@" --no-gate "$NO_GATE"
gate=0
"${BIN}perfmon-archive" check --db "$DB" "$TEST" "$@" >"$RESULTS/check.txt" || gate=$?
cat "$RESULTS/check.txt"
# Name each regressed entry and by how much, with a picture for the CI
# artefacts.
if [ "$gate" -eq 1 ]; then
    awk '$1 == "REGRESSION" { sub(":$", "", $2); print $2 }' "$RESULTS/check.txt" |
        while IFS= read -r entry; do
            change=$(awk -v e="$entry:" '$1 == "REGRESSION" && $2 == e {
                for (i = 3; i <= NF; i++) if ($i ~ /^\([+-][0-9.]+%,$/) { sub("^\\(", "", $i); sub(",$", "", $i); print $i } }' \
                "$RESULTS/check.txt")
            echo "ci-archive: REGRESSION: $entry $change" >&2
            "${BIN}perfmon-archive" plot --db "$DB" "$TEST" "$entry" "$@" \
                -o "$RESULTS/plots/$(printf '%s' "$entry" | tr -c 'A-Za-z0-9._-' _).png" || true
        done
elif [ "$gate" -eq 0 ]; then
    echo "ci-archive: $TEST: no regression" >&2
fi
exit "$gate"
