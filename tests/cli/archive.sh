#!/bin/sh
# perfmon-archive end to end on SQLite: add (both input kinds, oldest
# first, bad files to failed/, exit status), list, history (--since,
# --json), check (a regression found and its size printed, exit 1), plot
# (PNG and PDF), help and usage errors, hostile input.
set -u
B="${PM_WRAP:-} $PM_BIN/perfmon-archive"
F="$PM_ROOT/fixtures/archive"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
if command -v python3 >/dev/null 2>&1; then py() { python3 "$@"; }; else
    echo "SKIP  python3 not installed: JSON contents not checked"; py() { true; }; fi

# One TestResults file: tf NAME START FILE ENTRY=TIMING... (split at the last =)
tf() {
    name=$1 start=$2 file=$3
    shift 3
    sep=""
    {
        printf '{"name":"%s","startTime":"%s","entries":{"entry":[' "$name" "$start"
        for e in "$@"; do
            printf '%s{"name":"%s","iters":"10","wallTime":%s}' "$sep" "${e%=*}" "${e##*=}"
            sep=,
        done
        printf ']}}\n'
    } >"$file"
}

# --- help and usage ------------------------------------------------------------
for c in "" add list history check plot; do
    $B $c --help >"$T/out" 2>&1
    check "${c:-main} --help exits 0" [ $? -eq 0 ]
    check "${c:-main} --help documents the exit status" has "$T/out" "exit status: 0 ok"
done
$B >/dev/null 2>&1
check "no command exits 2" [ $? -eq 2 ]
$B frobnicate 2>"$T/err"
check "an unknown command exits 2" [ $? -eq 2 ]
check "the unknown command is named" has "$T/err" 'unknown command "frobnicate"'
env -u PERFMON_ARCHIVE_DB $B list 2>"$T/err"
check "no database exits 2" [ $? -eq 2 ]
check "no database is explained" has "$T/err" "give --db DB"
$B add --db "$T/db" --datadir "$T" 2>"$T/err"
check "add without --archivedir exits 2" [ $? -eq 2 ]
$B check --db "$T/db" t --window zero 2>"$T/err"
check "a bad --window exits 2" [ $? -eq 2 ]
check "the bad --window is named" has "$T/err" "window zero"
$B list --db "$T/db" --bogus 2>"$T/err"
check "an unknown option exits 2" [ $? -eq 2 ]
check "the unknown option is named" has "$T/err" "unknown option --bogus"
$B add --db "$T/db" --datadir "$T/none" --archivedir "$T" 2>"$T/err"
check "a missing data directory exits 3" [ $? -eq 3 ]
check "the data directory is named" has "$T/err" "$T/none"
$B list --db "$T" 2>"$T/err"
check "an unopenable database (a directory) exits 3" [ $? -eq 3 ]
# A database that does not exist: every reading command exits 2 and
# creates nothing (a typo must not leave an empty archive behind).
for c in "list" "list t" "history t" "check t" "plot t e -o $T/typo.png"; do
    $B $c --db "$T/typo.sqlite" >"$T/out" 2>"$T/err"
    check "$c on a missing database exits 2" [ $? -eq 2 ]
    check "$c on a missing database says so" has "$T/err" "typo.sqlite: no such archive"
    check "$c on a missing database creates nothing" [ ! -e "$T/typo.sqlite" -a ! -e "$T/typo.png" ]
done

# --- add -----------------------------------------------------------------------
D="$T/data" A="$T/archive" DB="$T/db.sqlite"
mkdir "$D" "$A"
cp "$F/tf-results.json" "$D/a.json"
cp "$F/perfmon-stats.json" "$D/b.json"
printf '{"name":"broken",' >"$D/c.json"
printf '{"name":"t","startTime":1,"entries":{"entry":[{"name":"x","wallTime":"NaN"}]}}' >"$D/d.json"
ln -s "$D/a.json" "$D/link.json"
mkdir "$D/subdir"
printf '{"name":"hidden","startTime":1}' >"$D/.partial.json"
touch -d '2026-01-01 00:00:03' "$D/a.json"
touch -d '2026-01-01 00:00:01' "$D/b.json"
touch -d '2026-01-01 00:00:02' "$D/c.json" "$D/d.json"
$B add --db "$DB" --datadir "$D" --archivedir "$A" --test nightly -v >"$T/out" 2>"$T/err"
check "add with bad files exits 1" [ $? -eq 1 ]
check "the summary counts" has "$T/out" "archived 2 files (37 entries), 0 already stored, 0 skipped, 2 failed"
check "the broken file is reported" has "$T/err" "cannot process $D/c.json:1:.*not valid JSON"
check "the NaN timing is reported" has "$T/err" "cannot process $D/d.json: entry \"x\": \"wallTime\" is missing or not a finite number"
check "bad files go to failed/" [ -f "$A/failed/c.json" ] && [ -f "$A/failed/d.json" ]
check "stored files are moved" [ -f "$A/a.json" ] && [ -f "$A/b.json" ]
check "the data directory keeps what is not a regular file" [ -L "$D/link.json" ] && [ -d "$D/subdir" ]
check "hidden files are left" [ -f "$D/.partial.json" ]
check "nothing else is left" [ "$(ls "$D" | wc -l)" -eq 2 ]
check "oldest first" py -c '
import sys
lines = [l for l in open(sys.argv[1]) if "json" in l]
order = [l.split("/data/")[1][:1] for l in lines]
assert order == ["b", "c", "d", "a"], order
' "$T/err"

mkdir "$D/keep"
printf 'not json' >"$D/bad.json"
$B add --db "$DB" --datadir "$D" --archivedir "$A" --keep-failed 2>"$T/err" >/dev/null
check "--keep-failed exits 1" [ $? -eq 1 ]
check "--keep-failed leaves the file" [ -f "$D/bad.json" ]
rm "$D/bad.json"

# A file locked by someone else (flock(1) holds it while add runs) is
# skipped and left; the next run takes it.
if command -v flock >/dev/null 2>&1; then
    tf locked 1700000000 "$D/locked.json" "x=1"
    flock -n "$D/locked.json" $B add --db "$DB" --datadir "$D" --archivedir "$A" -v >"$T/out" 2>"$T/err"
    check "a locked file: exit 0" [ $? -eq 0 ]
    check "a locked file is skipped" has "$T/out" "archived 0 files (0 entries), 0 already stored, 1 skipped"
    check "and said so with -v" has "$T/err" "skipped $D/locked.json: locked by another archiver"
    check "and left in place" [ -f "$D/locked.json" ]
    $B add --db "$DB" --datadir "$D" --archivedir "$A" >"$T/out" 2>&1
    check "once unlocked it is archived" has "$T/out" "archived 1 files (1 entries)"
else
    echo "SKIP  flock(1) not installed: locked file not checked"
fi
$B list --db "$DB" -x 2>"$T/err"
check "an unknown short option is named" has "$T/err" "unknown option -x"
$B plot --db "$DB" -o 2>"$T/err"
check "a missing value is named" has "$T/err" "-o needs a value"

# The same file again (e.g. copied back by hand): stored once, moved aside.
cp "$F/tf-results.json" "$D/a.json"
$B add --db "$DB" --datadir "$D" --archivedir "$A" >"$T/out" 2>"$T/err"
check "a rerun of a stored file exits 0" [ $? -eq 0 ]
check "it counts as already stored" has "$T/out" "archived 0 files (0 entries), 1 already stored"
check "it does not replace the archived copy" [ -f "$A/a.json.1" ]

# --- list and history ---------------------------------------------------------
$B list --db "$DB" >"$T/out"
check "list exits 0" [ $? -eq 0 ]
check "list shows the TensorFlow test" grep -q "^//tensorflow/core/kernels:matmul_op_test  *1  *3 " "$T/out"
check "list shows the perfmon job" grep -q "^nightly  *1  *34 " "$T/out"
$B list --db "$DB" --json >"$T/json"
check "list --json" py -c '
import json, sys
d = {t["test"]: t for t in json.load(open(sys.argv[1]))}
assert d["nightly"]["runs"] == 1 and d["nightly"]["entries"] == 34, d
assert d["nightly"]["first"] == "2023-11-14T22:13:19.700000Z", d
' "$T/json"
$B list --db "$DB" //tensorflow/core/kernels:matmul_op_test >"$T/out"
check "list TEST names its entries" [ "$(cat "$T/out" | tr '\n' ' ')" = "BM_Conv2D/3x3 BM_MatMul/1024 BM_Reduce " ]
$B list --db "$DB" nosuch 2>"$T/err"
check "list of an unknown test exits 2" [ $? -eq 2 ]
$B list --db "mysql://x/y" 2>"$T/err"
check "an unknown URL scheme exits 2" [ $? -eq 2 ]
check "the URL is refused with a reason" has "$T/err" "not a postgresql:// URL nor an SQLite file path"
$B add --db "$DB" --datadir "$A" --archivedir "$A/" 2>"$T/err"
check "archiving a directory into itself exits 2" [ $? -eq 2 ]
if [ -w /dev/full ]; then
    for c in "list" "list --json" "history nightly" "history nightly --json" "check nightly --json"; do
        $B $c --db "$DB" >/dev/full 2>"$T/err"
        check "$c on a full disk exits 3" [ $? -eq 3 ]
        check "$c on a full disk says so" has "$T/err" "standard output: write failed: No space left on device"
    done
fi
$B history --db "$DB" nightly phase:solve >"$T/out"
check "history of an entry" grep -q "^2023-11-14T22:13:19.700000Z  phase:solve  61.5$" "$T/out"
$B history --db "$DB" nightly --json >"$T/json"
check "history --json of a test" py -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d) == 34
e = {x["entry"]: x["timing"] for x in d}
assert abs(e["wall_time_s"] - 39.700000047683716) < 1e-12 and e["phase:checkpoint"] == 2.25
' "$T/json"
$B history --db "$DB" nosuch 2>"$T/err"
check "history of an unknown test exits 2" [ $? -eq 2 ]
check "the unknown test is named" has "$T/err" 'no test "nosuch"'
$B history --db "$DB" nightly --since 2024-01-01 >"$T/out"
check "--since after the last run: nothing, exit 0" [ $? -eq 0 ] && [ ! -s "$T/out" ]
$B history --db "$DB" nightly --since 2023-13-45 2>"$T/err"
check "a bad --since exits 2" [ $? -eq 2 ]

# --- check and plot -----------------------------------------------------------
H="$T/hist" HA="$T/hist-archive" HDB="$T/hist.sqlite"
mkdir "$H" "$HA"
i=0
for v in 1.00 1.02 0.99 1.01 0.98 1.00 1.03 0.99 1.01 1.00; do
    tf bench $((1700000000 + i * 86400)) "$H/run$i.json" "steady=$v" "noisy=$v" "stays=2.0"
    i=$((i + 1))
done
$B add --db "$HDB" --datadir "$H" --archivedir "$HA" >/dev/null
check "ten runs stored" [ "$(ls "$HA" | wc -l)" -eq 10 ]
$B check --db "$HDB" bench >"$T/out"
check "check of a steady history exits 0" [ $? -eq 0 ]
check "three entries checked" has "$T/out" "bench: 3 entries checked, 0 regressions"
tf bench $((1700000000 + 10 * 86400)) "$H/run10.json" "steady=1.30" "noisy=1.02" "stays=2.0"
$B add --db "$HDB" --datadir "$H" --archivedir "$HA" >/dev/null
$B check --db "$HDB" bench >"$T/out"
check "one entry 30% slower, the others flat: suspect, exit 6" [ $? -eq 6 ]
check "the suspect entry, its size and the protocol are printed" grep -q \
    "^SUSPECT  *steady: latest 1.3 vs median 1 of 10 runs (+30.0%,.*: rerun to confirm$" "$T/out"
check "the others are ok" grep -q "^ok  *noisy: latest 1.02" "$T/out"
check "the count says suspect" has "$T/out" "bench: 3 entries checked, 0 regressions, 1 suspect"
check "the whole test is ok" grep -q "^ok  *bench (whole test): lower median of 3 entries' changes +" "$T/out"
# The rerun in the same pipeline confirms it: two consecutive runs beyond.
tf bench $((1700000000 + 10 * 86400 + 600)) "$H/run10b.json" "steady=1.31" "noisy=1.00" "stays=2.0"
$B add --db "$HDB" --datadir "$H" --archivedir "$HA" >/dev/null
$B check --db "$HDB" bench >"$T/out"
check "the rerun confirms it: exit 1" [ $? -eq 1 ]
check "the slower entry, its size and why are printed" grep -q \
    "^REGRESSION  steady: latest 1.31 vs median 1.005 of 10 runs (+30.3%,.*; the previous run was beyond too$" "$T/out"
check "the count" has "$T/out" "bench: 3 entries checked, 1 regressions"
$B check --db "$HDB" bench --json >"$T/json"
check "check --json exits 1 too" [ $? -eq 1 ]
check "check --json holds the figures" py -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["test"] == "bench" and d["checked"] == 3 and d["regressions"] == 1, d
assert d["suspects"] == 0 and d["whole_test"]["verdict"] == "ok", d
assert d["whole_test"]["entries"] == 3, d
e = {x["entry"]: x for x in d["entries"]}
s = e["steady"]
assert s["verdict"] == "regression" and s["previous_runs"] == 10, s
assert s["why"] == "the previous run was beyond too" and s["previous_beyond"], s
# judged alone against the 10 runs before it (the suspect 1.3 among them)
assert s["latest"] == 1.31 and s["median"] == 1.005 and abs(s["mad"] - 0.015) < 1e-12, s
assert abs(s["z"] - 0.305 / (1.4826 * 0.015)) < 1e-6 and abs(s["change"] - 0.305 / 1.005) < 1e-12, s
assert e["stays"]["verdict"] == "ok" and e["stays"]["z"] == 0, e["stays"]
' "$T/json"
$B check --db "$HDB" bench noisy stays >"$T/out"
check "check of named entries exits 0" [ $? -eq 0 ]
$B check --db "$HDB" bench noisy --no-gate noisy >"$T/out"
check "an informational entry asked for by name: its figures shown" \
    grep -q "^info  *noisy: latest 1 vs median 1.005 of 10 runs" "$T/out"
$B check --db "$HDB" bench steady --min-change 50 >"$T/out"
rc=$?
# +30 % is 60 % of that minimum: above its usual level, suspect at most
check "--min-change 50 lets +30% pass (no regression: exit 0 or 6)" [ $rc -eq 0 -o $rc -eq 6 ]
check "--min-change 50: no REGRESSION line" sh -c "! grep -q '^REGRESSION' '$T/out'"
$B check --db "$HDB" bench steady --threshold 1000 >"$T/out"
check "a huge --threshold lets it pass" [ $? -eq 0 ]
$B check --db "$HDB" bench steady --min-history 20 >"$T/out"
check "too little history: no verdict, exit 0" [ $? -eq 0 ]
check "the baseline is said" has "$T/out" "^baseline    steady: 11 of 21 runs, no verdict yet"
check "and summed up" has "$T/out" "^bench: baseline: 11 of 21 runs, no verdict yet"
# First runs: an archive without the test yet, then 2 runs: exit 0, a baseline.
$B check --db "$HDB" newbench >"$T/out" 2>"$T/err"
check "check of a test not archived yet exits 0" [ $? -eq 0 ]
check "and says it is a baseline" has "$T/out" "^newbench: baseline: 0 of 5 runs, no verdict yet"
mkdir "$T/nb" "$T/nba"
tf newbench 1700000000 "$T/nb/1.json" "solve=1.0"
tf newbench 1700086400 "$T/nb/2.json" "solve=3.0"
$B add --db "$HDB" --datadir "$T/nb" --archivedir "$T/nba" >/dev/null
$B check --db "$HDB" newbench >"$T/out" 2>"$T/err"
check "two runs (even 3x slower) exit 0" [ $? -eq 0 ]
check "baseline: 2 of 5 runs" has "$T/out" "^baseline    solve: 2 of 5 runs, no verdict yet"
$B check --db "$HDB" bench nosuch 2>"$T/err"
check "check of an unknown entry exits 2" [ $? -eq 2 ]

$B plot --db "$HDB" bench steady -o "$T/steady.png"
check "plot PNG exits 0" [ $? -eq 0 ]
check "a PNG is written" py -c '
import sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n" and len(b) > 5000, len(b)
' "$T/steady.png"
$B plot --db "$HDB" bench steady -o "$T/steady.pdf"
check "plot PDF exits 0" [ $? -eq 0 ]
check "a PDF is written" has "$T/steady.pdf" "%PDF-"
if command -v pdftotext >/dev/null 2>&1; then
    pdftotext "$T/steady.pdf" "$T/steady.txt"
    check "the PDF names the entry and the marked run" has "$T/steady.txt" "2 beyond their noise"
fi
$B plot --db "$HDB" bench nosuch -o "$T/x.png" 2>"$T/err"
check "plot of an unknown entry exits 2" [ $? -eq 2 ]
$B plot --db "$HDB" bench steady -o "$T/no/dir/x.png" 2>"$T/err"
check "an unwritable plot exits 3" [ $? -eq 3 ]

# --- hostile input ------------------------------------------------------------
X="$T/x" XA="$T/x-archive" XDB="$T/x.sqlite"
mkdir "$X" "$XA"
tf "q'\\\"; DROP TABLE test; --" 1700000000 "$X/sql.json" "e' OR 1=1; --=1.5" "%s%n=1e308"
tf huge 1700000000 "$X/huge.json" "inf=1e999"
tf neg 1700000000 "$X/neg.json" "n=-0.0"
python3 -c 'print("{\"name\":\"deep\",\"startTime\":1,\"x\":" + "[" * 100000 + "]" * 100000 + "}")' >"$X/deep.json" 2>/dev/null ||
    printf '{"name":"deep","startTime":1,"x":[[[[' >"$X/deep.json"
truncate -s 100M "$X/big.json"
printf '{"name":"nul\0","startTime":1}' >"$X/nul.json"
$B add --db "$XDB" --datadir "$X" --archivedir "$XA" >"$T/out" 2>"$T/err"
check "hostile input exits 1, no crash" [ $? -eq 1 ]
$B history --db "$XDB" "q'\"; DROP TABLE test; --" --json >"$T/json"
check "history of the SQL-looking test exits 0" [ $? -eq 0 ]
check "the SQL-looking test reads back" py -c '
import json, sys
d = {x["entry"]: x["timing"] for x in json.load(open(sys.argv[1]))}
assert d == {"e'"'"' OR 1=1; --": 1.5, "%s%n": 1e308}, d
' "$T/json"
check "the negative zero run is stored" has "$T/out" "archived 2 files"
check "an infinite timing is refused" has "$T/err" "cannot process $X/huge.json: entry \"inf\""
check "deep nesting is refused" has "$T/err" "cannot process $X/deep.json:1:"
check "a 100 MB file is refused unread" has "$T/err" "cannot process $X/big.json: the file is 104857600 bytes, the limit is"
check "a NUL byte is refused" has "$T/err" "cannot process $X/nul.json: offset 12: a NUL byte"
$B list --db "$XDB" >"$T/out"
check "the tables survived" has "$T/out" "DROP TABLE"

# --- change points ---------------------------------------------------------------
S="$T/step" SA="$T/step-archive"
mkdir "$S" "$SA"
i=0
for v in 1.00 1.01 0.99 1.00 1.02 0.99 1.01 1.00 1.20 1.21 1.19 1.20 1.22 1.20; do
    tf stepbench $((1700000000 + i * 86400)) "$S/s$i.json" "solve=$v" "flat=2.0"
    i=$((i + 1))
done
$B add --db "$HDB" --datadir "$S" --archivedir "$SA" >/dev/null
$B history --db "$HDB" stepbench >"$T/out"
check "history exits 0 with a step" [ $? -eq 0 ]
check "history names the change point: its first run, step, medians, sides" has "$T/out" \
    "^change point 2023-11-22T22:13:20Z  solve: +20.0%, median 1 -> 1.2 (8 runs before, 6 from it on; rank z [0-9.]*)$"
check "one change point, none for the flat entry" [ "$(grep -c '^change point' "$T/out")" -eq 1 ]
check "the timings stay three columns before it" [ "$(grep -vc '^change point' "$T/out")" -eq 28 ]
$B history --db "$HDB" stepbench --json >"$T/json"
check "history --json marks the run that starts the new level" py -c '
import json, sys
d = json.load(open(sys.argv[1]))
cp = [x for x in d if "change_point" in x]
assert len(cp) == 1, cp
c = cp[0]
assert c["entry"] == "solve" and c["timing"] == 1.2 and c["start_us"] == (1700000000 + 8 * 86400) * 1e6, c
p = c["change_point"]
assert abs(p["step"] - 0.2) < 1e-9 and p["median_before"] == 1 and p["median_after"] == 1.2, p
assert p["runs_before"] == 8 and p["runs_after"] == 6 and p["z"] > 2.5, p
' "$T/json"
$B plot --db "$HDB" stepbench solve -o "$T/step.pdf"
check "plot of a step exits 0" [ $? -eq 0 ]
if command -v pdftotext >/dev/null 2>&1; then
    pdftotext "$T/step.pdf" "$T/step.txt"
    check "the plot draws the level and labels the step" has "$T/step.txt" "level between 1 change point"
    check "the step's size is on the plot" has "$T/step.txt" "+20.0%"
fi

# --- the CI example ------------------------------------------------------------
R="$T/ci"
mkdir -p "$R/incoming"
i=0
for v in 1.00 1.02 0.99 1.01 0.98 1.00 1.03 0.99 1.01 1.00; do
    tf "ci bench" $((1700000000 + i * 86400)) "$R/incoming/r$i.json" "solve=$v" "io=0.5"
    touch -d "@$((1700000000 + i))" "$R/incoming/r$i.json"
    i=$((i + 1))
done
RESULTS="$R" TEST="ci bench" PERFMON_BIN="$PM_BIN/" sh "$PM_ROOT/examples/ci-archive.sh" >"$T/out" 2>&1
check "the CI example passes a steady history" [ $? -eq 0 ]
tf "ci bench" $((1700000000 + 10 * 86400)) "$R/incoming/r10.json" "solve=1.25" "io=0.5"
# One entry slower, the other flat: suspect; without RERUN the run passes
# and says so.
tf "ci bench" $((1700000000 + 11 * 86400)) "$T/rerun.json" "solve=1.26" "io=0.5"
RESULTS="$R" TEST="ci bench" PERFMON_BIN="$PM_BIN/" sh "$PM_ROOT/examples/ci-archive.sh" >"$T/out" 2>&1
check "the CI example: one entry slower is suspect, exit 0" [ $? -eq 0 ]
check "and says so, with its size" has "$T/out" "^ci-archive: SUSPECT: solve +25.0%; the next run confirms or clears it$"
# The same with RERUN, whose result (as slow) confirms it.
mv "$R/archived/r10.json" "$R/incoming/r10.json"
RESULTS="$R" TEST="ci bench" PERFMON_BIN="$PM_BIN/" sh "$PM_ROOT/examples/ci-archive.sh" >"$T/out" 2>&1
check "a rerun of an archived run changes nothing: still suspect" has "$T/out" "^ci-archive: SUSPECT: solve +25.0%; the next run"
RESULTS="$R" TEST="ci bench" PERFMON_BIN="$PM_BIN/" RERUN="cp '$T/rerun.json' '$R/incoming/'" \
    sh "$PM_ROOT/examples/ci-archive.sh" >"$T/out" 2>&1
check "with RERUN, the rerun confirms the slowdown: exit 1" [ $? -eq 1 ]
check "it reran" has "$T/out" "^ci-archive: SUSPECT: solve +25.0%; rerunning$"
check "and names the entry" has "$T/out" "^ci-archive: REGRESSION: solve +"
check "and plots the slower entry" [ -s "$R/plots/solve.png" ]
check "the files are archived" [ "$(ls "$R/archived" | wc -l)" -eq 12 ]

# --- a perfmon statistics document files under its own job id ------------------
mkdir -p "$T/jd" "$T/ja"
$PM_BIN/perfmon-analyze "$PM_ROOT/fixtures/perfmon" --stats --json >"$T/jd/stats.json" 2>/dev/null
$B add --db "$T/job.sqlite" --datadir "$T/jd" --archivedir "$T/ja" >"$T/out" 2>"$T/err"
check "a stats document without --test is filed" [ $? -eq 0 ]
$B list --db "$T/job.sqlite" >"$T/out" 2>&1
check "under the job id its profiles recorded" has "$T/out" "synthetic"

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
