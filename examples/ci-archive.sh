#!/bin/sh
# A nightly CI step: run the benchmarks, archive their results, and fail
# the pipeline when one got slower than its history.
#
#   ARCHIVE_DB=postgresql://ci@db.example.org/bench examples/ci-archive.sh
#
# Results land in $RESULTS (TensorFlow TestResults JSON files, and the
# perfmon statistics of a profiled run); perfmon-archive stores each one,
# moves it to $RESULTS/archived, and `check` is the gate (exit 1 on a
# regression).  Without ARCHIVE_DB an SQLite file in $RESULTS is used.
set -eu
RESULTS=${RESULTS:-$PWD/bench-results}
DB=${ARCHIVE_DB:-$RESULTS/archive.sqlite}
TEST=${TEST:-nightly-solver}
BIN=${PERFMON_BIN:-}
mkdir -p "$RESULTS/incoming" "$RESULTS/archived" "$RESULTS/plots"

# 1. The benchmarks write their TestResults here (e.g. TensorFlow's
#    run_and_gather_logs --test_log_output_dir "$RESULTS/incoming").
#    A profiled job adds its statistics (write, then rename into place,
#    so that an archiver never sees a half-written file):
if [ -n "${PROFILE_DIR:-}" ]; then
    "${BIN}perfmon-analyze" "$PROFILE_DIR" --stats --json >"$RESULTS/incoming/.stats.tmp"
    mv "$RESULTS/incoming/.stats.tmp" "$RESULTS/incoming/stats-$(date +%s).json"
fi

# 2. Archive (several runners may do this at once on a shared directory).
status=0
"${BIN}perfmon-archive" add --db "$DB" --datadir "$RESULTS/incoming" \
    --archivedir "$RESULTS/archived" --test "$TEST" || status=$?
if [ "$status" -ne 0 ]; then
    echo "some result files could not be archived (see $RESULTS/archived/failed)" >&2
fi

# 3. Gate: exit 1 when the latest run of an entry is slower than its last
#    10 runs beyond 3 robust standard deviations and 5 %.
"${BIN}perfmon-archive" check --db "$DB" "$TEST" --window 10 --threshold 3 --min-change 5 ||
    gate=$?
# A picture of each regressed entry for the CI artefacts.
if [ "${gate:-0}" -eq 1 ]; then
    "${BIN}perfmon-archive" check --db "$DB" "$TEST" | awk '$1 == "REGRESSION" { sub(":$", "", $2); print $2 }' |
        while IFS= read -r entry; do
            "${BIN}perfmon-archive" plot --db "$DB" "$TEST" "$entry" \
                -o "$RESULTS/plots/$(printf '%s' "$entry" | tr -c 'A-Za-z0-9._-' _).png"
        done
fi
exit "${gate:-0}"
