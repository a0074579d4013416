#!/bin/sh
# Run libFuzzer targets, PM_JOBS at a time (default: the processors this
# process may use; make fuzz / make fuzz-ci).
#   tests/fuzz/run.sh SECONDS NAME...
# Each target starts from its committed seeds (fixtures/fuzz/NAME/) and
# its working corpus (build/fuzz/corpus/NAME/, where new inputs go); a
# crashing input is written to fixtures/fuzz/crashes/NAME/ so that it can
# be committed as a regression input (replayed by make check).  Prints
# per target the executions, coverage (cov: edges, ft: features) and
# corpus size; exits 1 when any target failed.
set -u
secs=$1
shift
FUZZ_BUILD=${FUZZ_BUILD:-build/fuzz}
jobs=${PM_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in '' | *[!0-9]* | 0) echo "tests/fuzz/run.sh: PM_JOBS must be a positive number, not '$jobs'" >&2; exit 2 ;; esac
R="$FUZZ_BUILD/results"

# fuzz1 NAME: one target; its summary line goes to $R/NAME (and .fail).
fuzz1() {
    name=$1
    bin="$FUZZ_BUILD/fuzz_$name"
    corpus="$FUZZ_BUILD/corpus/$name"
    crashes="fixtures/fuzz/crashes/$name"
    log="$FUZZ_BUILD/fuzz_$name.log"
    mkdir -p "$corpus" "$crashes" "fixtures/fuzz/$name"
    echo "fuzz  $name: $secs s"
    # -timeout: one input taking longer is a finding (a hang); -rss_limit_mb
    # catches unbounded allocation.
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$crashes/" "$corpus" "fixtures/fuzz/$name" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -E '^#[0-9]+' "$log" | grep -o 'cov: [0-9]*' | tail -n 1 | cut -d' ' -f2)
    ft=$(grep -E '^#[0-9]+' "$log" | grep -o 'ft: [0-9]*' | tail -n 1 | cut -d' ' -f2)
    n=$(find "$corpus" -type f | wc -l)
    line=$(printf '%-10s %12s %8s %8s %8s' "$name" "${runs:-?}" "${cov:-?}" "${ft:-?}" "$n")
    if [ "$rc" -ne 0 ]; then
        line="$line  FAILED (exit $rc, see $log; input in $crashes/)"
        grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -n 5
        : >"$R/$name.fail"
    fi
    echo "$line" >"$R/$name"
}

if [ "${FUZZ1:-0}" = 1 ]; then
    fuzz1 "$1"
    exit 0
fi

# PM_JOBS targets at a time (xargs starts this script again, one target each).
rm -rf "$R"
mkdir -p "$R"
for name in "$@"; do echo "$name"; done | FUZZ1=1 FUZZ_BUILD="$FUZZ_BUILD" xargs -P "$jobs" -L 1 sh "$0" "$secs"
printf '\n%-10s %12s %8s %8s %8s\n' target execs cov ft corpus
for name in "$@"; do cat "$R/$name" 2>/dev/null || echo "$name: no result"; done
[ -z "$(find "$R" -name '*.fail')" ] && [ "$(find "$R" -type f | wc -l)" -eq $# ]
