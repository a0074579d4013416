#!/bin/sh
# perfmon-archive under stress: 4 archivers started at once on the same
# 1,000 files and one SQLite database (every file archived exactly once,
# none lost, none left), and an archiver killed with SIGKILL mid-run (no
# half-stored run; a rerun finishes the job, storing nothing twice).
set -u
B="${PM_WRAP:-} $PM_BIN/perfmon-archive"
# On tmpfs where there is one: fsync costs nothing there, and what is tested
# is who stores and moves what, not the disk (a commit is an fsync).
if [ -d /dev/shm ] && [ -w /dev/shm ]; then T=$(mktemp -d -p /dev/shm); else T=$(mktemp -d); fi
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"

# gen DIR N TEST: N TestResults files r0.json ... with 3 entries each,
# modified one second apart in that order.
gen() {
    i=0
    while [ "$i" -lt "$2" ]; do
        printf '{"name":"%s","startTime":"%d","entries":{"entry":[{"name":"a","iters":"10","wallTime":%d},{"name":"b","wallTime":%d.25},{"name":"c","wallTime":%d.5}]}}\n' \
            "$3" $((1700000000 + i)) "$i" "$i" "$i" >"$1/r$i.json"
        i=$((i + 1))
    done
}

# stored DB TEST: "runs entries" as the archive sees them.
stored() {
    runs=$($B list --db "$1" | awk -v t="$2" '$1 == t { print $2 }')
    rows=$($B history --db "$1" "$2" 2>/dev/null | grep -vc '^change point ')
    echo "${runs:-0} $rows"
}

# --- 4 archivers, 1,000 files --------------------------------------------------
D="$T/data" A="$T/archive" DB="$T/db.sqlite"
mkdir "$D" "$A"
gen "$D" 1000 conc
pids=""
for k in 1 2 3 4; do
    $B add --db "$DB" --datadir "$D" --archivedir "$A" >"$T/out$k" 2>"$T/err$k" &
    pids="$pids $!"
done
st=0
for p in $pids; do wait "$p" || st=1; done
check "4 concurrent archivers exit 0" [ "$st" -eq 0 ]
check "no error messages" [ -z "$(cat "$T"/err1 "$T"/err2 "$T"/err3 "$T"/err4)" ]
check "none left in the data directory" [ "$(ls "$D" | wc -l)" -eq 0 ]
check "1,000 files in the archive, none twice" [ "$(ls "$A" | wc -l)" -eq 1000 ] && [ -z "$(ls "$A" | grep -v '^r[0-9]*\.json$')" ]
check "the archivers' counts add up to 1,000, none stored twice" [ "$(cat "$T"/out1 "$T"/out2 "$T"/out3 "$T"/out4 |
    awk '{ n += $2; a += $7; f += $(NF - 1) } END { print n, a, f }')" = "1000 0 0" ]
check "1,000 runs and 3,000 entries stored" [ "$(stored "$DB" conc)" = "1000 3000" ]
cat "$T"/out1 "$T"/out2 "$T"/out3 "$T"/out4

# --- kill -9 mid-run -----------------------------------------------------------
K="$T/kdata" KA="$T/karchive" KDB="$T/k.sqlite"
mkdir "$K" "$KA"
gen "$K" 1000 killed
$B add --db "$KDB" --datadir "$K" --archivedir "$KA" >/dev/null 2>&1 &
pid=$!
# Kill it once it is well under way (a tenth of the files moved).
n=0
while [ "$n" -lt 1000 ] && [ "$(ls "$KA" | wc -l)" -lt 100 ]; do sleep 0.01; n=$((n + 1)); done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
left=$(ls "$K" | wc -l)
moved=$(ls "$KA" | wc -l)
echo "killed with $left files left and $moved moved"
[ "$left" -gt 0 ] || echo "note: the archiver had finished before the kill"
check "after the kill every file is in exactly one place" [ $((left + moved)) -eq 1000 ] && [ -z "$(ls "$K" "$KA" | grep json | sort | uniq -d)" ]
set -- $(stored "$KDB" killed)
runs=$1 rows=$2
check "no half-stored run (3 entries per run stored)" [ "$rows" -eq $((runs * 3)) ]
check "every moved file is stored (at most one stored but not moved)" [ "$runs" -ge "$moved" ] && [ "$runs" -le $((moved + 1)) ]
$B add --db "$KDB" --datadir "$K" --archivedir "$KA" >"$T/out" 2>"$T/err"
check "the rerun exits 0" [ $? -eq 0 ]
check "the rerun leaves nothing" [ "$(ls "$K" | wc -l)" -eq 0 ]
check "1,000 files archived under their own names" [ "$(ls "$KA" | grep -c '^r[0-9]*\.json$')" -eq 1000 ] && [ "$(ls "$KA" | wc -l)" -eq 1000 ]
check "1,000 runs and 3,000 entries, none twice" [ "$(stored "$KDB" killed)" = "1000 3000" ]
cat "$T/out"

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
