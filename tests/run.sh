#!/bin/sh
# Run the unit test binaries given as arguments, then every tests/cli/*.sh.
# Environment: BUILD (build directory), SAN=1 (sanitizer build),
# VALGRIND=1 (run the programs under valgrind memcheck).
set -u
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
pass=0
fail=0
failed=""
# Each test's wall time in seconds, so a slow one shows in the log.
now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%6.1f s", b - a }'; }
for t in "$@"; do
    name=$(basename "$t")
    t0=$(now)
    if $PM_WRAP "$t" >"$PM_BUILD/$name.log" 2>&1; then
        pass=$((pass + 1))
        echo "PASS  unit/$name  $(took "$t0")"
        grep '^SKIP' "$PM_BUILD/$name.log" || true
    else
        fail=$((fail + 1))
        failed="$failed unit/$name"
        echo "FAIL  unit/$name  $(took "$t0")"
        tail -n 40 "$PM_BUILD/$name.log"
    fi
done
for s in tests/cli/*.sh; do
    [ -f "$s" ] || continue
    name=$(basename "$s" .sh)
    t0=$(now)
    if sh "$s" >"$PM_BUILD/cli-$name.log" 2>&1; then
        pass=$((pass + 1))
        echo "PASS  cli/$name  $(took "$t0")"
        grep '^SKIP' "$PM_BUILD/cli-$name.log" || true
    else
        fail=$((fail + 1))
        failed="$failed cli/$name"
        echo "FAIL  cli/$name  $(took "$t0")"
        tail -n 40 "$PM_BUILD/cli-$name.log"
    fi
done
echo "tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ] || { echo "failed:$failed"; exit 1; }
