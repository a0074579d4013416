#!/bin/sh
# The rerun protocol of perfmon-archive check (docs/archive.md,
# "Confirmation") through examples/ci-archive.sh with RERUN, on a test of 4
# TensorFlow benchmarks with 16 runs of history (2 % jitter, three +15 %
# hits of one entry):
#   - the same work: green, no rerun;
#   - one entry hit once (+15 %), its reruns at the usual speed: check says
#     SUSPECT (exit 6), the script reruns and the rerun clears it (exit 0);
#   - one entry 10 % slower, and so are its reruns: suspect, then confirmed
#     by the reruns (exit 1), the entry named with its size.
# And `check` alone: exit 6 and the SUSPECT line ending "rerun to confirm".
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
S="$PM_ROOT/examples/ci-archive.sh"
B="${PM_WRAP:-} $PM_BIN/perfmon-archive"

# One run: mk.sh RUN FILE FACTOR_OF_BM_c (start one day per run; a fixed
# jitter of up to 2 % per entry and run, and three neighbour's hits of
# +15 % in the history, so that its tail is measured).
cat >"$T/mk.sh" <<'EOF'
awk -v r="$1" -v f="$3" 'BEGIN {
    split("BM_a BM_b BM_c BM_d", n, " "); split("2.5 0.04 13 0.7", b, " ")
    printf "{\"name\":\"gated\",\"startTime\":\"%d\",\"entries\":{\"entry\":[", 1700000000 + r * 86400
    for (e = 1; e <= 4; e++) {
        j = 1 + 0.02 * sin(r * 7.3 + e * 3.1)
        if ((r == 5 && e == 1) || (r == 8 && e == 3) || (r == 11 && e == 4)) j *= 1.15
        printf "%s{\"name\":\"%s\",\"wallTime\":%.9g}", (e > 1 ? "," : ""), n[e], b[e] * j * (e == 3 ? f : 1)
    }
    printf "]}}\n" }' >"$2"
EOF
# The RERUN command: rerun.sh DIR FACTOR writes the next run into DIR/incoming.
cat >"$T/rerun.sh" <<EOF
n=\$(cat "\$1/next"); echo \$((n + 1)) >"\$1/next"
sh '$T/mk.sh' "\$n" "\$1/incoming/rerun\$n.json" "\$2"
EOF
run() { sh "$T/mk.sh" "$@"; }
# A results directory with the 16 runs of history archived.
history() { # $1: results directory
    mkdir -p "$1/incoming"
    echo 17 >"$1/next"
    i=0
    while [ $i -lt 16 ]; do
        run $i "$1/incoming/r$i.json" 1
        touch -d "@$((1700000000 + i))" "$1/incoming/r$i.json"
        i=$((i + 1))
    done
    RESULTS="$1" TEST=gated PERFMON_BIN="$PM_BIN" sh "$S" >/dev/null 2>&1
}

for case in same tail slow; do
    R="$T/$case"
    history "$R"
    case $case in
    same) f=1 rf=1 ;;
    tail) f=1.15 rf=1 ;;
    slow) f=1.10 rf=1.10 ;;
    esac
    run 16 "$R/incoming/r16.json" $f
    RESULTS="$R" TEST=gated PERFMON_BIN="$PM_BIN" RERUN="sh '$T/rerun.sh' '$R' $rf" sh "$S" >"$T/$case.out" 2>&1
    echo $? >"$T/$case.rc"
    sed 's/^/    /' "$T/$case.out"
done

check "same work: green (exit 0)" [ "$(cat "$T/same.rc")" -eq 0 ]
check "same work: no rerun" sh -c "! grep -q rerunning '$T/same.out'"
check "same work: no regression said" has "$T/same.out" "^ci-archive: gated: no regression$"

check "one tail: green after the rerun (exit 0)" [ "$(cat "$T/tail.rc")" -eq 0 ]
check "one tail: BM_c suspect, with its size, and rerun" has "$T/tail.out" "^ci-archive: SUSPECT: BM_c +1[0-9].[0-9]%; rerunning$"
check "one tail: check said SUSPECT" has "$T/tail.out" "^SUSPECT  *BM_c: latest .*: rerun to confirm$"
check "one tail: the rerun is judged ok" has "$T/tail.out" "^gated: 4 entries checked, 0 regressions$"
check "one tail: the rerun is archived" [ -f "$T/tail/archived/rerun17.json" ]

check "slowed entry: red (exit 1)" [ "$(cat "$T/slow.rc")" -eq 1 ]
check "slowed entry: suspect first, and rerun" has "$T/slow.out" "^ci-archive: SUSPECT: BM_c +[0-9.]*%; rerunning$"
check "slowed entry: confirmed by the reruns" has "$T/slow.out" "^REGRESSION  BM_c: latest .*; the previous run was beyond too$"
check "slowed entry: the script names it and by how much" has "$T/slow.out" "^ci-archive: REGRESSION: BM_c +[0-9.]*%$"
check "slowed entry: the other entries are not regressions" sh -c "! grep -q '^REGRESSION  BM_[abd]' '$T/slow.out'"

# check alone on a suspect run: exit 6, not 1
R="$T/alone"
history "$R"
run 16 "$R/incoming/r16.json" 1.15
$B add --db "$R/archive.sqlite" --datadir "$R/incoming" --archivedir "$R/archived" >/dev/null 2>&1
$B check --db "$R/archive.sqlite" gated >"$T/out" 2>&1
check "check on one entry's hit exits 6" [ $? -eq 6 ]
check "and prints its SUSPECT line" has "$T/out" "^SUSPECT  *BM_c: .*: rerun to confirm$"
check "and counts it" has "$T/out" "^gated: 4 entries checked, 0 regressions, 1 suspect$"

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
