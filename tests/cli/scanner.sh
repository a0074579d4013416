#!/bin/sh
# Scanner binary profiles through perfmon-analyze: a directory of them
# alone and next to perfmon profiles (--stats text and JSON, --trace, the
# report's phase page), and damaged ones (a corrupted count, a truncated
# file, a string without its NUL) reported by file and offset.
set -u
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
F="$PM_ROOT/fixtures"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
if command -v python3 >/dev/null 2>&1; then py() { python3 "$@"; }; else
    echo "SKIP  python3 not installed: JSON contents not checked"; py() { true; }; fi

# Scanner profiles alone (two nodes and the master).
S="$T/scanner"
mkdir "$S"
cp "$F"/scanner/profile_0.bin "$F"/scanner/profile_1.bin "$F"/scanner/profile_master.bin "$S/"
$A "$S" --stats >"$T/out" 2>"$T/err"
check "Scanner profiles alone exit 0" [ $? -eq 0 ]
check "no warning" [ ! -s "$T/err" ]
check "phase kinds from the interval keys" grep -q "^  evaluate  *2  *4  *16 " "$T/out"
check "Scanner totals section" has "$T/out" "^Scanner totals per worker kind (3 profiles, total time 10.20 s"
check "load io time summed over nodes" grep -q "^  load  *io  *time  *3.60$" "$T/out"
check "counter summed over nodes" grep -q "^  load  *io_read  *counter  *2097152$" "$T/out"

$A "$S" --stats --json >"$T/json" 2>/dev/null
check "JSON: Scanner totals per kind and key" py -c '
import json, sys
d = json.load(open(sys.argv[1]))
sc = d["phases"]["scanner"]
assert sc["files"] == 3 and abs(sc["total_time_s"] - 10.2) < 1e-9, sc
iv, ct = sc["intervals_s"], sc["counters"]
assert abs(iv["load"]["io"] - 3.6) < 1e-9 and abs(iv["save"]["io"] - 2.0) < 1e-9, iv
assert abs(iv["process_job"]["task"] - 18.0) < 1e-9 and abs(iv["master"]["schedule"] - 9.8) < 1e-9
assert ct["load"] == {"io_read": 2097152, "rows": 2000}, ct["load"]
assert ct["eval"] == {"rows": 2000} and ct["master"] == {"jobs": 1}
k = {x["name"]: x for x in d["phases"]["kinds"]}
assert k["io"]["count"] == 6 and k["io"]["nodes"] == 2, k["io"]
assert abs(k["decode"]["start_spread_s"] - 0.2) < 1e-6
n = {(x["host"], x["phase"]): x for x in d["phases"]["nodes"]}
assert abs(n[("node 1", "idle")]["total_s"] - 3.5) < 1e-9 and ("master", "schedule") in n
assert d["job"]["hosts"] == 0 and abs(d["job"]["start"] - 1700000005) < 1e-6
' "$T/json"

$A "$S" --trace "$T/trace.json" -q
check "--trace exits 0" [ $? -eq 0 ]
check "--trace: one process per node, one thread per worker" py -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
assert sorted(procs.values()) == ["master", "node 0", "node 1"], procs
threads = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
x = [e for e in ev if e["ph"] == "X"]
assert len(x) == 2 * 12 + 1, len(x)
ld = [e for e in x if procs[e["pid"]] == "node 1" and threads[e["tid"]] == "load[0]"]
assert sorted(e["name"] for e in ld) == ["idle", "io", "io"], ld
idle = [e for e in ld if e["name"] == "idle"][0]
assert abs(idle["ts"] - 1.7e6) < 1 and abs(idle["dur"] - 3.5e6) < 1, idle
assert {threads[e["tid"]] for e in x if procs[e["pid"]] == "node 0"} >= {"eval[1]/pre", "save[0]", "process_job[0]"}
' "$T/trace.json"

# A start time whose low byte is "{" is still a Scanner profile, not JSON.
mkdir "$T/brace"
cp "$S"/*.bin "$T/brace/"
printf '{' | dd of="$T/brace/profile_0.bin" bs=1 seek=0 conv=notrunc 2>/dev/null
$A "$T/brace" --stats >"$T/out" 2>"$T/err"
check "a Scanner profile starting with { is read as one" has "$T/out" "^Scanner totals per worker kind (3 profiles"

# Next to perfmon profiles: both hosts' resources and the Scanner phases.
B="$T/both"
mkdir "$B"
cp "$S"/*.bin "$F/perfmon/node-a.pmp" "$F/perfmon/node-b.pmp" "$B/"
$A "$B" --stats --json >"$T/json" 2>"$T/err"
check "with perfmon profiles exits 0" [ $? -eq 0 ]
check "JSON: perfmon hosts and Scanner phases together" py -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["job"]["hosts"] == 2 and [n["host"] for n in d["nodes"]] == ["node-a", "node-b"]
assert d["phases"]["scanner"]["files"] == 3
first = {(x["host"], x["phase"]): x["first_start"] for x in d["phases"]["nodes"]}
assert abs(first[("node 0", "setup")] - 1700000005) < 1e-6, first
' "$T/json"
$A "$B" --trace "$T/trace2.json" -q
check "--trace with both: hosts, Scanner nodes and counter tracks" py -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
procs = [e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
assert procs == ["node-a", "node-b", "node 0", "node 1", "master"], procs
assert any(e["ph"] == "C" for e in ev) and sum(e["ph"] == "X" for e in ev) == 25
' "$T/trace2.json"
if command -v pdftotext >/dev/null 2>&1; then
    $A "$B" --pdf "$T/r.pdf" -q
    pdftotext -layout "$T/r.pdf" "$T/r.txt" 2>/dev/null
    check "report has the phases page with the Scanner phases" grep -q "^evaluate  *2  *4  *16 " "$T/r.txt"
fi

# Scanner node 1 is the perfmon host whose recorded rank is 1: its phases
# move there and its resource use during them is measured.
R="$T/rank"
mkdir "$R"
cp "$S"/*.bin "$F/perfmon/node-a.pmp" "$R/"
sed '1s/"node_rank":""/"node_rank":"1"/' "$F/perfmon/node-c.jsonl" >"$R/node-c.jsonl"
$A "$R" --stats --json >"$T/json" 2>/dev/null
check "Scanner node 1 mapped to the host of rank 1" py -c '
import json, sys
d = json.load(open(sys.argv[1]))
hosts = {x["host"] for x in d["phases"]["nodes"]}
assert hosts == {"master", "node 0", "node-c"}, hosts
k = {x["name"]: x for x in d["phases"]["kinds"]}
assert k["idle"]["nodes"] == 2 and k["idle"]["by_metric"]["cpu_usage"]["mean"] > 0, k["idle"]
' "$T/json"

# Damaged files: a warning naming file and offset, the rest analysed.
D="$T/damaged"
mkdir "$D"
cp "$S/profile_0.bin" "$D/p0.bin"
cp "$F/perfmon/node-a.pmp" "$D/"
cp "$S/profile_1.bin" "$D/count.bin"
# process_job's counter count (offset 108) becomes 2^31 - 1.
printf '\377\377\377\177\000\000\000\000' | dd of="$D/count.bin" bs=1 seek=108 conv=notrunc 2>/dev/null
head -c 300 "$S/profile_1.bin" >"$D/cut.bin"
head -c 57 "$S/profile_1.bin" >"$D/nonul.bin" # inside the first key name
$A "$D" --stats >"$T/out" 2>"$T/err"
check "damaged Scanner files are warnings (exit 0)" [ $? -eq 0 ]
check "corrupted count named" has "$T/err" "count.bin: offset 108: counter count 2147483647 is corrupt (allowed 0 to 1000000)"
check "truncated file named, whole workers kept" has "$T/err" "cut.bin: offset 294: truncated: key count needs 8 bytes, 6 left (the 2 workers before it kept)"
check "string without NUL named" has "$T/err" "nonul.bin: offset 53: key name has no terminating NUL before the end of the file"
check "the good profile still counted" has "$T/out" "^Scanner totals per worker kind (2 profiles"
$A "$D" --stats --strict >/dev/null 2>"$T/err"
check "--strict makes a damaged file fatal (exit 1)" [ $? -eq 1 ]
check "--strict names the first damaged file" has "$T/err" "count.bin: offset 108"
mkdir "$T/bad"
cp "$D/nonul.bin" "$T/bad/"
$A "$T/bad" --stats >/dev/null 2>"$T/err"
check "only a damaged Scanner file: exit 2" [ $? -eq 2 ]
check "the reason given" has "$T/err" "no readable profile among 1 file: .*nonul.bin: offset 53"

[ "$fails" -eq 0 ]
