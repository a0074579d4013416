#!/bin/sh
# Profiles written by the real sampler, analysed as a user would: several
# runs or jobs in one directory or on the command line are refused and
# listed (issue 14 item 3), -f both is one run (item 11), an unfinished
# profile is flagged and an input with nothing to analyse exits 1 (item
# 6), a JSON Lines profile rewritten by Python's json module is read as the
# original (item 9), and files not read are named with the reason (item 12).
# The expected counts come from the files themselves (end records, sample
# lines), read here with python3.
set -u
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
# The sampler runs bare: these tests are about the analysis, and the
# "still running" case needs a sampler that is running while analysed.
S="$PM_BIN/perfmon-sample"
T=$(mktemp -d)
spid=""
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP  python3 not installed"; exit 0; }
run() { # run the analyzer; sets rc, output in $T/out and $T/err
    $A "$@" >"$T/out" 2>"$T/err"
    rc=$?
}
# samples END: the "samples" of a JSON Lines profile's end record
samples() {
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "end" in d:
        print(d["end"]["samples"])' "$1"
}
json() { # json EXPR: evaluate EXPR on the JSON in $T/out (as d)
    python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($1)" "$T/out"
}

# --- two runs with different --job-id in one directory -------------------
$S -o "$T/two" -i 0.2 -f json -j jobA -- sleep 0.7 || exit 1
$S -o "$T/two" -i 0.2 -f json -j jobB -- sleep 1.1 || exit 1
run --stats "$T/two"
check "two jobs in one directory: exit 2" [ "$rc" -eq 2 ]
check "two jobs: the message says how to pick one" has "$T/err" "2 runs of 2 jobs.*--run N.*--job ID"
check "two jobs: run 1 listed" has "$T/err" "run 1: job jobA, from .*jobA_.*\.pmp\.jsonl"
check "two jobs: run 2 listed" has "$T/err" "run 2: job jobB, from .*jobB_.*\.pmp\.jsonl"
check "two jobs: no statistics" [ ! -s "$T/out" ]
run --stats --json --job jobB "$T/two"
check "--job jobB: exit 0" [ "$rc" -eq 0 ]
want=$(samples "$T"/two/jobB_*.pmp.jsonl)
check "--job jobB: its samples only ($want)" [ "$(json 'int(d["job"]["samples"])')" = "$want" ]
run --stats --json --run 1 "$T/two"
want=$(samples "$T"/two/jobA_*.pmp.jsonl)
check "--run 1: job A's samples ($want)" [ "$(json 'int(d["job"]["samples"])')" = "$want" ]

# --- perfmon-analyze jobA jobB: one job id, two runs ------------------------
$S -o "$T/jA" -i 0.2 -f json -- sleep 0.7 || exit 1
$S -o "$T/jB" -i 0.2 -f json -- sleep 0.7 || exit 1
run "$T/jA" "$T/jB"
check "two runs of one job: exit 2" [ "$rc" -eq 2 ]
check "two runs of one job: listed" has "$T/err" "2 runs of 1 job"
rid=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["run_id"])' "$T"/jB/*.jsonl)
check "the run id is in the listing" has "$T/err" "run 2: .*run id: $rid"
run --stats --json --run "$rid" "$T/jA" "$T/jB"
check "--run RUNID picks that run" [ "$(json 'd["nodes"][0]["files"][0]')" = "$(ls "$T"/jB/*.jsonl)" ]
run --stats --json --run last "$T/jB" "$T/jA"
check "--run last picks the latest run, whatever the order of the inputs" [ "$(json 'd["nodes"][0]["files"][0]')" = "$(ls "$T"/jB/*.jsonl)" ]
run --stats --json --run last --job jobA "$T/two"
want=$(samples "$T"/two/jobA_*.pmp.jsonl)
check "--run last --job jobA: the latest run of that job ($want)" [ "$(json 'int(d["job"]["samples"])')" = "$want" ]

# --- a directory reused by a requeued job: the phases follow the run ----------
# Both runs mark phase "solve" into the one events file of the directory;
# the chosen run's analysis has its own mark only, at its own time.
for i in 1 2; do
    $S -o "$T/rq" -i 0.2 -j J -- sh -c "$PM_BIN/perfmon-sample mark -o '$T/rq' solve start; sleep 0.6; $PM_BIN/perfmon-sample mark -o '$T/rq' solve end" || exit 1
    sleep 1
done
for r in 1 last; do
    run --stats --json --by-phase --run $r "$T/rq"
    got=$(json 'sum(k["count"] for k in d["phases"]["kinds"]) if d.get("phases") else 0')
    inside=$(json '1 if all(d["job"]["start"] <= k["first_start"] <= d["job"]["end"] for k in d["phases"]["kinds"]) else 0')
    check "requeued directory, --run $r: one phase, inside the run (count $got, inside $inside)" [ "$got$inside" = 11 ]
done

# --- -f both: one run, read once ------------------------------------------
$S -o "$T/both" -i 0.2 -f both -- sleep 1.1 || exit 1
run -v --stats --json "$T/both"
check "-f both: exit 0" [ "$rc" -eq 0 ]
want=$(samples "$T"/both/*.pmp.jsonl)
check "-f both: $want samples taken, $want analysed" [ "$(json 'int(d["job"]["samples"])')" = "$want" ]
check "-f both: one host, the binary file" [ "$(json 'd["nodes"][0]["format"], len(d["nodes"])')" = "binary 1" ]
check "-f both: -v notes the JSON Lines copy" has "$T/err" "note: .*\.pmp\.jsonl: the same sampler run as .*\.pmp (run id"
# A -f bin run, then another -f both run, in the same directory: the
# later run's two files take one run number (x.3.pmp and x.3.pmp.jsonl,
# not x.3.pmp and x.2.pmp.jsonl), and each run is read once.
$S -o "$T/both" -i 0.2 -f bin -- sleep 0.3 || exit 1
$S -o "$T/both" -i 0.2 -f both -- sleep 0.7 || exit 1
check "-f both after -f bin: the run's two files share run number 3" python3 -c '
import os, sys
names = sorted(os.listdir(sys.argv[1]))
bins = [n[:-4] for n in names if n.endswith(".pmp")]
jsons = [n[:-10] for n in names if n.endswith(".pmp.jsonl")]
assert len(bins) == 3 and len(jsons) == 2, names
assert [b for b in bins if not b.endswith(".2")] == jsons, names
assert any(j.endswith(".3") for j in jsons), names
' "$T/both"
run --stats --json "$T/both"
check "three runs in one directory: refused and listed" has "$T/err" "3 runs of 1 job"
run -v --stats --json --run last "$T/both"
want=$(samples "$T"/both/*.3.pmp.jsonl)
check "-f both, --run last: exit 0" [ "$rc" -eq 0 ]
check "-f both, --run last: $want samples, from the binary file alone" [ "$(json 'int(d["job"]["samples"]), d["nodes"][0]["format"], len(d["nodes"])')" = "$want binary 1" ]
check "-f both, --run last: its JSON Lines copy is the same run" has "$T/err" "note: .*\.3\.pmp\.jsonl: the same sampler run as .*\.3\.pmp (run id"

# --- two samplers of one host at once ---------------------------------------
$S -o "$T/twice" -i 0.2 -d 1.5 &
p1=$!
$S -o "$T/twice" -i 0.2 -d 1.5
wait "$p1"
run "$T/twice"
check "two samplers at once: exit 2" [ "$rc" -eq 2 ]
check "two samplers at once: named" has "$T/err" "was sampled twice at once: .*local_.*\.pmp (pid [0-9]*, run id [0-9a-f]*) and .*local_.*\.pmp (pid [0-9]*, run id [0-9a-f]*) overlap"
check "two samplers at once: both files named" sh -c "grep 'twice at once' '$T/err' | grep -q '\.2\.pmp'"

# --- a sampler still running -------------------------------------------------
$S -o "$T/live" -i 0.2 -f json -- sleep 60 >/dev/null 2>&1 &
spid=$!
i=0
while [ "$(cat "$T"/live/*.jsonl 2>/dev/null | wc -l)" -lt 5 ] && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
done
run --stats "$T/live"
check "still running: exit 0" [ "$rc" -eq 0 ]
check "still running: the text says so" has "$T/out" "^incomplete: the sampler was still running"
check "still running: a warning names the file" has "$T/err" "warning: .*: incomplete: the sampler was still running (.*\.pmp\.jsonl)"
run --stats --json "$T/live"
check "still running: --json flag and reason" [ "$(json 'd["job"]["incomplete"], d["nodes"][0]["incomplete_reason"]')" = "True the sampler was still running" ]
if command -v pdftotext >/dev/null 2>&1; then
    run --pdf "$T/live.pdf" "$T/live"
    pdftotext -layout "$T/live.pdf" "$T/live.txt" 2>/dev/null
    check "still running: the report's first page says so" has "$T/live.txt" "Status *incomplete: the sampler was still running"
fi
kill -TERM "$spid"
wait "$spid"
spid=""
run --stats --json "$T/live"
check "stopped: complete" [ "$(json 'd["job"]["incomplete"], d["job"]["incomplete_reason"]')" = "False None" ]
# killed without its end record (its command, left behind, ends by itself)
$S -o "$T/killed" -i 0.2 -f json -- sleep 2 >/dev/null 2>&1 &
kpid=$!
sleep 1
kill -KILL "$kpid"
wait "$kpid" 2>/dev/null
run --stats "$T/killed"
check "killed: incomplete, no end record" has "$T/out" "^incomplete: no end record"

# --- nothing to analyse -----------------------------------------------------
mkdir "$T/marks"
$S mark -o "$T/marks" setup start && $S mark -o "$T/marks" setup end
run "$T/marks"
check "phase marks alone: exit 1" [ "$rc" -eq 1 ]
check "phase marks alone: says what was found" has "$T/err" "no resource profile among 1 file: found only 1 phase marked in 1 events file"
run --start +3600 --run last "$T/both"
check "--start after the job: exit 1" [ "$rc" -eq 1 ]
check "--start after the job: says so" has "$T/err" "no sample lies inside the --start/--end window"

# --- JSON Lines as Python's json module rewrites it -------------------------
mkdir "$T/py"
src=$(ls "$T"/two/jobB_*.pmp.jsonl)
python3 -c '
import json, sys
with open(sys.argv[2], "w", newline="\r\n") as out:
    for line in open(sys.argv[1]):
        out.write(json.dumps(json.loads(line)) + "\n")' "$src" "$T/py/spaced.pmp.jsonl"
check "the rewrite has spaces after colons" has "$T/py/spaced.pmp.jsonl" '"format": "perfmon-profile", '
run --stats --json "$T/py"
check "rewritten JSON Lines: exit 0" [ "$rc" -eq 0 ]
cp "$T/out" "$T/py.json"
run --stats --json "$src"
check "rewritten JSON Lines: the same figures as the original" python3 -c '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["job"]["samples"] > 0
for k, v in a["job"].items():
    if isinstance(v, float):
        assert v == b["job"][k] or (v != v and b["job"][k] != b["job"][k]), k
' "$T/py.json" "$T/out"

# --- files not read are named, with the reason --------------------------------
mkdir "$T/bad"
: >"$T/bad/empty.json"
run -v "$T/bad"
check "an empty file: exit 2" [ "$rc" -eq 2 ]
check "an empty file: named in the error" has "$T/err" "no readable profile among 1 file: .*empty.json: empty file"
check "an empty file: -v lists it" has "$T/err" "note: .*empty.json: empty file"

[ "$fails" -eq 0 ]
