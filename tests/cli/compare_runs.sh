#!/bin/sh
# perfmon-analyze --compare where a side's directory holds several runs of
# one job (reruns): the job figures by the rules of perfmon-archive check's
# gate (docs/analysis.md, "Several runs of each side").  Real sampler runs
# of `sleep`: A three runs of 0.4 s; B two runs of 1.2 s (worse, every run
# beyond: exit 1), one of 1.2 s and one of 0.4 s (suspect: exit 6), two of
# 0.4 s (not worse: exit 0); one run of each (worse, marked suspect: exit 1
# as before).  --threshold 50 keeps a loaded machine's delays of a sleep
# from counting.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
rec() { # rec DIR SECONDS: one sampler run of sleep SECONDS into DIR
    "$PM_BIN/perfmon-sample" -o "$1" -i 0.05 -f json -- sleep "$2" >/dev/null 2>&1
}
for i in 1 2 3; do rec "$T/A" 0.4; done
rec "$T/slow" 1.2
rec "$T/slow" 1.2
rec "$T/once" 1.2
rec "$T/once" 0.4
rec "$T/same" 0.4
rec "$T/same" 0.4
rec "$T/A1" 0.4
rec "$T/B1" 1.2
if [ "$(ls "$T/A" | wc -l)" -ne 3 ]; then
    echo "SKIP  perfmon-sample did not record three runs here"
    exit 0
fi
cmp() { # cmp NAME DIR_A DIR_B [options]: output in $T/NAME.out, status in $T/NAME.rc
    n=$1
    shift
    $A --compare "$@" --threshold 50 >"$T/$n.out" 2>"$T/$n.err"
    echo $? >"$T/$n.rc"
}
cmp slow "$T/A" "$T/slow"
cmp once "$T/A" "$T/once"
cmp same "$T/A" "$T/same"
cmp single "$T/A1" "$T/B1"
cmp json "$T/A" "$T/once" --json
rc() { cat "$T/$1.rc"; }

check "several runs: the table says so" has "$T/slow.out" "^Job figures (A and B: the medians of 3 and 2 runs;"
check "every run of B slower: worse (exit 1)" [ "$(rc slow)" -eq 1 ]
check "every run of B slower: wall_time_s worse" grep -q "^  wall_time_s .* lower  worse$" "$T/slow.out"
check "one run of two slower: suspect (exit 6)" [ "$(rc once)" -eq 6 ]
check "one run of two slower: the row says 1 of 2" grep -q "^  wall_time_s .* suspect (1 of 2 runs of B)$" "$T/once.out"
check "one run of two slower: the verdict asks for a rerun" has "$T/once.out" "^Verdict: B is not worse than A; suspect: wall_time_s .*(1 of 2 runs of B beyond A's noise): rerun B to confirm"
check "the same work: exit 0" [ "$(rc same)" -eq 0 ]
check "the same work: nothing suspect" sh -c "! grep -q -e 'suspect (' -e '; suspect:' '$T/same.out'"
check "one run of each: worse, exit 1 as before" [ "$(rc single)" -eq 1 ]
check "one run of each: marked suspect" grep -q "^  wall_time_s .* worse (suspect: one run of each)$" "$T/single.out"
check "JSON: verdict suspect" grep -q '"verdict":[[:space:]]*"suspect"' "$T/json.out"
check "JSON: the row's runs" grep -q '"runs_b":[[:space:]]*2' "$T/json.out"
check "JSON: the row is suspect" grep -q '"suspect":[[:space:]]*true' "$T/json.out"

[ "$fails" -eq 0 ] || { for n in slow once same single; do sed "s/^/    $n: /" "$T/$n.out" | grep -E "wall_time_s|Verdict"; done; echo "$fails failed"; exit 1; }
echo "all passed"
