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
#
# A single entry slower than its noise but within the tail of the test's
# history, or above its usual level, is `suspect` (check exits 6): one run
# cannot tell a neighbour's hit from a regression.  With RERUN (a shell
# command that runs the benchmarks again, writing their results as step 1
# does; for a profiled job, into PROFILE_DIR again) the script reruns,
# archives the rerun and checks again, while suspect and at most RERUNS
# times (default 2): the reruns confirm the slowdown (exit 1) or clear it
# (exit 0).  Without RERUN a suspect run passes with a warning, and the
# next runs confirm or clear it.
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
collect() {
    if [ -n "${PROFILE_DIR:-}" ]; then
        "${BIN}perfmon-analyze" "$PROFILE_DIR" --stats --json >"$TMP"
        mv "$TMP" "$RESULTS/incoming/stats-$(date +%s)-$$-$1.json"
    fi
}

# 2. Archive (several runners may do this at once on a shared directory).
archive() {
    status=0
    "${BIN}perfmon-archive" add --db "$DB" --datadir "$RESULTS/incoming" \
        --archivedir "$RESULTS/archived" --test "$TEST" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "some result files could not be archived (see $RESULTS/archived/failed)" >&2
    fi
}

# 3. Gate: exit 1 when the latest run of a gated entry is worse than its
#    last 10 runs beyond 3 robust standard deviations and the table's
#    minimum effect (5 % for benchmark timings) and the evidence is
#    enough (the whole test moved, beyond anything in its history, or
#    confirmed by the run before); 6 when it is suspect.
set -- --window 10 --threshold 3
[ -n "${GATE:-}" ] && set -- "$@" --gate "$GATE"
[ -n "${NO_GATE:-}" ] && set -- "$@" --no-gate "$NO_GATE"
run_check() {
    gate=0
    "${BIN}perfmon-archive" check --db "$DB" "$TEST" "$@" >"$RESULTS/check.txt" || gate=$?
    cat "$RESULTS/check.txt"
}
# The entries of one verdict (REGRESSION or SUSPECT) with their change.
named() {
    awk -v v="$1" '$1 == v && index($0, " (whole test): ") == 0 {
        e = $2; sub(":$", "", e); c = ""
        for (i = 3; i <= NF; i++) if ($i ~ /^\([+-][0-9.]+%,$/) { c = $i; sub("^\\(", "", c); sub(",$", "", c); break }
        print e " " c }' "$RESULTS/check.txt"
}

collect 1
archive
run_check "$@"
# The rerun protocol: while suspect, rerun (at most RERUNS times, default
# 2: one rerun cannot tell a one-entry slowdown of 3 sd from a neighbour's
# hit often enough; docs/archive.md, "Confirmation").
reruns=0
while [ "$gate" -eq 6 ] && [ -n "${RERUN:-}" ] && [ "$reruns" -lt "${RERUNS:-2}" ]; do
    reruns=$((reruns + 1))
    named SUSPECT | while IFS= read -r line; do echo "ci-archive: SUSPECT: $line; rerunning" >&2; done
    sh -c "$RERUN"
    collect "r$reruns"
    archive
    run_check "$@"
done
# Name each regressed entry and by how much, with a picture for the CI
# artefacts.
if [ "$gate" -eq 1 ]; then
    named REGRESSION | while IFS=' ' read -r entry change; do
        echo "ci-archive: REGRESSION: $entry $change" >&2
        "${BIN}perfmon-archive" plot --db "$DB" "$TEST" "$entry" "$@" \
            -o "$RESULTS/plots/$(printf '%s' "$entry" | tr -c 'A-Za-z0-9._-' _).png" || true
    done
elif [ "$gate" -eq 6 ]; then
    named SUSPECT | while IFS= read -r line; do
        echo "ci-archive: SUSPECT: $line; the next run confirms or clears it" >&2
    done
    gate=0
elif [ "$gate" -eq 0 ]; then
    echo "ci-archive: $TEST: no regression" >&2
fi
exit "$gate"
