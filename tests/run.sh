#!/bin/sh
# Run the unit test binaries given as arguments, then every tests/cli/*.sh.
# Environment: BUILD (build directory), SAN=1 (sanitizer build),
# VALGRIND=1 (run the programs under valgrind memcheck), PM_JOBS (tests run
# at once; default: the processors this process may use).
#
# Tests run PM_JOBS at a time, the slowest first so that the last finishes
# close to the others; a test script that says "# pm-test: alone" in its
# first lines (it creates cgroups, reads the kernel log, or times itself)
# runs after the others, by itself.  Each test's log is $BUILD/NAME.log
# (unit) or $BUILD/cli-NAME.log; each PASS or FAIL line gives its seconds,
# so a slow one shows in the log.  Exits 1 when any test failed.
set -u
# The tests run as from a shell: a make they start is not a sub-make of
# the one that started them (no jobserver, no inherited -j or -n).
unset MAKEFLAGS MFLAGS MAKELEVEL
BUILD=${BUILD:-build/release}
export PM_BIN="$(cd "$BUILD/bin" 2>/dev/null && pwd)"
export PM_BUILD="$(cd "$BUILD" && pwd)"
export PM_ROOT="$(pwd)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PM_ROOT/tests/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ "${VALGRIND:-0}" = 1 ]; then
    export PM_WRAP="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --num-callers=30 --suppressions=$PM_ROOT/tests/valgrind.supp"
else
    export PM_WRAP=""
fi
jobs=${PM_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in '' | *[!0-9]* | 0) echo "tests/run.sh: PM_JOBS must be a positive number, not '$jobs'" >&2; exit 2 ;; esac

# The tests that take longest (a minute or more natively or under
# valgrind, measured 2026-11-28) start first.
slow="unit/test_report cli/analyze_report cli/archive unit/test_archive_gate cli/mpi cli/analyze_memory"

R="$PM_BUILD/test-results"

# run1 NAME PATH: one test; its PASS/FAIL line (one write, so lines of
# parallel tests do not mix) and a result file for the count below.
run1() {
    name=$1
    path=$2
    case $name in
    unit/*) log="$PM_BUILD/${name#unit/}.log" ;;
    *) log="$PM_BUILD/cli-${name#cli/}.log" ;;
    esac
    t0=$(date +%s.%N)
    case $name in
    unit/*) $PM_WRAP "$path" >"$log" 2>&1 ;;
    *) sh "$path" >"$log" 2>&1 ;;
    esac
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%6.1f s", b - a }')
    if [ "$rc" -eq 0 ]; then
        out="PASS  $name  $secs"
        skips=$(grep '^SKIP' "$log")
        [ -n "$skips" ] && out="$out
$skips"
        echo pass >"$R/done/$(echo "$name" | tr / _)"
    else
        out="FAIL  $name  $secs"
        echo "$log" >"$R/done/$(echo "$name" | tr / _).fail"
    fi
    printf '%s\n' "$out"
}

if [ "${RUN1:-0}" = 1 ]; then
    run1 "$1" "$2"
    exit 0
fi

rm -rf "$R"
mkdir -p "$R/done"

# One line per test: KIND/NAME PATH.
list="$R/list"
: >"$list"
for t in "$@"; do echo "unit/$(basename "$t") $t" >>"$list"; done
for s in tests/cli/*.sh; do [ -f "$s" ] && echo "cli/$(basename "$s" .sh) $s" >>"$list"; done
alone() { head -n 12 "$1" | grep -q '^# pm-test: alone'; }
: >"$R/first"
: >"$R/rest"
: >"$R/alone"
while read -r name path; do
    case " $slow " in
    *" $name "*) echo "$name $path" >>"$R/first" ;;
    *)
        if [ "${name%%/*}" = cli ] && alone "$path"; then
            echo "$name $path" >>"$R/alone"
        else
            echo "$name $path" >>"$R/rest"
        fi
        ;;
    esac
done <"$list"

# run_all FILE N: the tests in FILE, N at a time.
run_all() {
    [ -s "$1" ] || return 0
    if [ "$2" -le 1 ]; then
        while read -r name path; do run1 "$name" "$path"; done <"$1"
    else
        # xargs starts this script again with RUN1 set: one test each.
        RUN1=1 xargs -P "$2" -L 1 sh "$0" <"$1"
    fi
}

cat "$R/first" "$R/rest" >"$R/together"
run_all "$R/together" "$jobs"
run_all "$R/alone" 1

pass=$(find "$R/done" -type f ! -name '*.fail' | wc -l)
fail=$(find "$R/done" -type f -name '*.fail' | wc -l)
failed=""
for f in "$R"/done/*.fail; do
    [ -f "$f" ] || continue
    name=$(basename "$f" .fail | sed 's/_/\//')
    failed="$failed $name"
    log=$(cat "$f")
    echo "--- $name: the last 40 lines of $log"
    tail -n 40 "$log"
done
echo "tests: $pass passed, $fail failed ($jobs at a time)"
[ "$fail" -eq 0 ] || { echo "failed:$failed"; exit 1; }
