#!/bin/sh
# pm-test: alone (its benchmark is a real job whose wall times the gate judges: another test beside it slows the reruns)
# examples/ci-archive.sh end to end: a real workload profiled by
# perfmon-sample four times (same work: green, a baseline then ok), a
# sixth run doing four times the work once whose rerun (RERUN) does the
# usual work (suspect, cleared by the rerun: green), then a seventh doing
# four times the work, rerun the same (suspect, confirmed: red, the script
# names wall_time_s and by how much).  perfmon's other job figures (CPU utilisation, memory, the
# sampler's lateness) move between runs but are informational: they must
# not fail the gate.  Also: PERFMON_BIN with and without a trailing slash
# and from PATH, and no temporary file left when a step fails.  The
# sampler runs bare (not under PM_WRAP): the workload's timing matters.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
S="$PM_ROOT/examples/ci-archive.sh"
R="$T/results"

# The work: a shell loop (CPU-bound, a few tenths of a second).
work() { # $1: iterations
    rm -rf "$T/prof"
    "$PM_BIN/perfmon-sample" -o "$T/prof" -i 0.05 -f json -- \
        sh -c "i=0; while [ \$i -lt $1 ]; do i=\$((i + 1)); done" >/dev/null 2>&1
}
run_ci() { # $1: PERFMON_BIN; sets rc, output in $T/out
    RESULTS="$R" TEST=nightly PROFILE_DIR="$T/prof" PERFMON_BIN="$1" sh "$S" >"$T/out" 2>&1
    rc=$?
}

n=0
for bin in "$PM_BIN" "$PM_BIN/" "$PM_BIN" "$PM_BIN/"; do
    n=$((n + 1))
    work 300000
    run_ci "$bin"
    check "run $n (PERFMON_BIN=${bin#"$PM_BIN"}...): green" [ "$rc" -eq 0 ]
    check "run $n: nothing left in incoming/" [ -z "$(ls -A "$R/incoming")" ]
    cp "$T/out" "$T/out$n"
done
check "run 1: a baseline" has "$T/out1" "^nightly: baseline: 1 of 5 runs, no verdict yet"
check "run 4: a baseline" has "$T/out4" "^nightly: baseline: 4 of 5 runs, no verdict yet"
check "no regression said" has "$T/out4" "ci-archive: nightly: no regression"

# The same work, on PATH: judged now, and green.
work 300000
PATH="$PM_BIN:$PATH" RESULTS="$R" TEST=nightly PROFILE_DIR="$T/prof" sh "$S" >"$T/out" 2>&1
rc=$?
cp "$T/out" "$T/out5"
# Judged now: the job figures that moved between the runs (CPU
# utilisation, memory, the sampler's lateness) are informational; only
# the wall time is gated.  (Its verdict is not asserted: on a loaded
# machine a 0.3 s job can be slowed by more than 5 % and 3 robust sd.)
check "run 5, programs from PATH: judged" grep -q "^[A-Za-z]*  *wall_time_s: latest .* of 4 runs" "$T/out5"
check "run 5: one gated entry, the job figures informational" grep -q "^nightly: 1 entries checked, [01] regressions\(, 1 suspect\)\{0,1\} ([0-9]* informational entries not gated)" "$T/out5"
check "run 5: no other entry can fail" sh -c "! grep '^REGRESSION' '$T/out5' | grep -v ' wall_time_s: '"
check "run 5: the sampler's figures are not shown" sh -c "! grep -q 'sampler_' '$T/out5'"
grep -q "^ok  *wall_time_s: " "$T/out5" ||
    echo "NOTE  run 5 was slower than its history (exit $rc): $(grep wall_time_s "$T/out5")"

# Four times the work once (a neighbour's hit): one gated entry with a
# young history is suspect, the rerun does the usual work and clears it.
work 1200000
RESULTS="$R" TEST=nightly PROFILE_DIR="$T/prof" PERFMON_BIN="$PM_BIN" \
    RERUN="rm -rf '$T/prof'; '$PM_BIN/perfmon-sample' -o '$T/prof' -i 0.05 -f json -- sh -c 'i=0; while [ \$i -lt 300000 ]; do i=\$((i + 1)); done' >/dev/null 2>&1" \
    sh "$S" >"$T/out" 2>&1
rc=$?
cp "$T/out" "$T/out6"
# The rerun's own wall time against its history's median: a rerun that a
# loaded machine slowed by a fifth is a slow run, which the gate rightly
# confirms (it confirms three values each beyond 0.8 robust sd of this
# young, noisy history: a rerun at +33 % after the spike did, with a build
# running beside the test); the protocol is asserted when the rerun took
# its usual time.
rerun_slow=$(awk '/^(ok|REGRESSION) +wall_time_s: latest / { l = $4; m = $7 }
    END { print (m > 0 && l > 1.2 * m) ? 1 : 0 }' "$T/out6")
if grep -q "^ok  *wall_time_s: " "$T/out5" && [ "$rerun_slow" = 0 ]; then
    check "run 6, four times the work once: green after the rerun (exit 0)" [ "$rc" -eq 0 ]
    check "run 6: suspect, with its size, and rerun" grep -q "^ci-archive: SUSPECT: wall_time_s +[0-9.]*%; rerunning$" "$T/out6"
    check "run 6: check said suspect" grep -q "^SUSPECT  *wall_time_s: latest .*: rerun to confirm$" "$T/out6"
    check "run 6: the rerun is archived and judged" grep -q "^nightly: 1 entries checked, 0 regressions" "$T/out6"
else
    # run 5, or run 6's rerun, slower than its noise (a loaded machine):
    # run 6 confirms it
    echo "NOTE  run 5 or run 6's rerun was slow: run 6's verdict not asserted (exit $rc)"
    sed 's/^/    /' "$T/out5"
fi
sed 's/^/    /' "$T/out6"

# Four times the work, and so is the rerun: confirmed, red, naming the
# entry and by how much.
work 1200000
RESULTS="$R" TEST=nightly PROFILE_DIR="$T/prof" PERFMON_BIN="$PM_BIN" \
    RERUN="rm -rf '$T/prof'; '$PM_BIN/perfmon-sample' -o '$T/prof' -i 0.05 -f json -- sh -c 'i=0; while [ \$i -lt 1200000 ]; do i=\$((i + 1)); done' >/dev/null 2>&1" \
    sh "$S" >"$T/out" 2>&1
rc=$?
cp "$T/out" "$T/out7"
check "run 7, four times the work twice: red (exit 1)" [ "$rc" -eq 1 ]
check "run 7: wall_time_s is the regression, confirmed" grep -q "^REGRESSION  wall_time_s: latest .* runs (+[0-9.]*%.*; the previous run was beyond too$" "$T/out7"
check "run 7: the script names it and by how much" grep -q "^ci-archive: REGRESSION: wall_time_s +[0-9.]*%$" "$T/out7"
pct=$(sed -n 's/^ci-archive: REGRESSION: wall_time_s +\([0-9]*\).*/\1/p' "$T/out7")
# About +300 % on a quiet machine; at least +50 % when other builds load
# it while the history's runs are timed (+80 % was seen under a concurrent
# make valgrind).
check "run 7: by about +300 % (${pct:-?} %), at least +50 %" [ "${pct:-0}" -ge 50 ]
check "run 7: the only regression" grep -q "^nightly: 1 entries checked, 1 regressions" "$T/out7"
check "run 7: its plot" [ -s "$R/plots/wall_time_s.png" ]
sed 's/^/    /' "$T/out7"

# A failing step: no temporary file left behind, a non-zero exit.
RESULTS="$R" TEST=nightly PROFILE_DIR="$T/none" PERFMON_BIN="$PM_BIN" sh "$S" >"$T/out" 2>&1
rc=$?
check "a failing perfmon-analyze fails the script" [ "$rc" -ne 0 ]
check "and leaves no temporary file" [ -z "$(ls -A "$R/incoming")" ]

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
