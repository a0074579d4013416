#!/bin/sh
# Job phases end to end: perfmon-sample mark inside a sampled job, then
# perfmon-analyze --stats (text, JSON, --by-phase), --data timings, --trace
# and the report's phase page.  Exit codes and messages of `mark`.
set -u
S="${PM_WRAP:-} $PM_BIN/perfmon-sample"
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
if command -v python3 >/dev/null 2>&1; then py() { python3 "$@"; }; else
    echo "SKIP  python3 not installed: JSON contents not checked"; py() { true; }; fi

# mark: usage errors exit 2 with a message; I/O errors exit 3.
$S mark --help >"$T/out" 2>&1
check "mark --help exits 0" [ $? -eq 0 ]
check "mark --help shows the forms" has "$T/out" "PHASE start|end"
$S mark -o "$T" >/dev/null 2>"$T/err"
check "mark without a phase exits 2" [ $? -eq 2 ]
$S mark -o "$T" build sometimes 2>"$T/err"
check "mark with a bad edge exits 2" [ $? -eq 2 ]
check "the bad edge is named" has "$T/err" '"sometimes" is not start, end or once'
$S mark -o "$T" build start diff=3 2>"$T/err"
check "diff= with start exits 2" [ $? -eq 2 ]
: >"$T/file"
$S mark -o "$T/file/sub" build start 2>"$T/err"
check "a directory that cannot be created exits 3" [ $? -eq 3 ]
check "the directory is named" has "$T/err" "$T/file/sub"

# A mark made before the sampler has created DIR (the job script starts
# the sampler in the background and goes on) creates DIR as the sampler
# does; the sampler then writes into it and the analysis finds the phase.
E="$T/early/prof"
(umask 022; $S mark -o "$E" --host node-2 warmup start 2>"$T/err")
check "a mark into a missing directory exits 0" [ $? -eq 0 ]
check "the mark created the directory, mode 0755" [ "$(stat -c %a "$E")" = 755 ]
$S -o "$E" -i 0.1 --host node-2 --job-id early -- sh -c \
    "sleep 0.4; $PM_BIN/perfmon-sample mark -o '$E' --host node-2 warmup end; sleep 0.3" \
    >/dev/null 2>&1
check "the sampler runs in the directory the mark made" [ $? -eq 0 ]
$A "$E" --stats --json >"$T/json" 2>"$T/err"
check "the analysis of that directory exits 0" [ $? -eq 0 ]
check "the phase marked before the sampler started is found" py -c '
import json, sys
d = json.load(open(sys.argv[1]))
k = {x["name"]: x for x in d["phases"]["kinds"]}
assert "warmup" in k and k["warmup"]["count"] == 1, k.keys()
assert 0.3 < k["warmup"]["total_s"] < 3, k["warmup"]["total_s"]
' "$T/json"
env -u PERFMON_DIR $S mark build start 2>"$T/err"
check "no directory exits 2" [ $? -eq 2 ]
mkdir "$T/one"
$S mark -o "$T/one" --host node-9 build start img=a 2>"$T/err"
check "a mark is recorded, exit 0" [ $? -eq 0 ]
check "the mark is one line in the host's events file" [ "$(wc -l <"$T/one/node-9.events")" -eq 1 ]

# A sampled job that marks its phases (PERFMON_DIR instead of -o for two).
J="$T/job"
mkdir "$J"
# The marks inside the timed job run bare: under valgrind each would add
# most of a second to the phases they bound.  One successful mark below
# runs under $PM_WRAP instead.
M="$PM_BIN/perfmon-sample mark --host node-1"
$S -o "$J" -i 0.1 --host node-1 --job-id phases-1 -- sh -c "
    $M -o '$J' setup start
    sleep 0.4
    $M -o '$J' setup end
    for i in 1 2; do
        PERFMON_DIR='$J' $M compute start img=step\$i size=\$i
        timeout 0.6 sh -c 'while :; do :; done'
        PERFMON_DIR='$J' $M compute end img=step\$i
    done
    $M -o '$J' checkpoint diff=0.25 img=ckpt
    $M -o '$J' orphan end
    sleep 0.3" >/dev/null 2>&1
check "the sampled job exits 0" [ $? -eq 0 ]
check "events file written" [ -s "$J/node-1.events" ]
check "eight marks recorded" [ "$(wc -l <"$J/node-1.events")" -eq 8 ]

$A "$J" --stats --by-phase >"$T/out" 2>"$T/err"
check "analyze with phases exits 0" [ $? -eq 0 ]
check "phases table" has "$T/out" "^Phases"
check "compute phase counted twice" grep -q "^  compute  *1  *2 " "$T/out"
check "resource use by phase" has "$T/out" "Resource use by phase"
check "the unpaired end is a warning" has "$T/err" "node-1: end of orphan at .* has no start"

$A "$J" --stats --json >"$T/json" 2>/dev/null
check "JSON phases section" py -c '
import json, sys
d = json.load(open(sys.argv[1]))
k = {x["name"]: x for x in d["phases"]["kinds"]}
assert set(k) == {"setup", "compute", "checkpoint"}, k.keys()
assert k["compute"]["count"] == 2
assert 1.0 < k["compute"]["total_s"] < 2.5, k["compute"]["total_s"]
assert 0.35 < k["setup"]["total_s"] < 1.5
assert abs(k["checkpoint"]["total_s"] - 0.25) < 1e-9
assert k["compute"]["by_metric"]["cpu_usage"]["mean"] > 0
assert any("orphan" in u for u in d["phases"]["unmatched"])
' "$T/json"

$A "$J" --data "$T/data" --trace "$T/trace.json" -q
check "--data writes timings.dat" has "$T/data/timings.dat" '"node-1"'
check "--data writes timings.gp" has "$T/data/timings.gp" "rowstacked"
check "--data's phase timeline has every phase of the events file, start and end" py -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
want, open_ = [], {}
for e in ev:  # pair by hand: start/end by name, once = diff_s before it
    w = int(e["wall_ns"]) / 1e9
    if e["edge"] == "start":
        open_[e["name"]] = w
    elif e["edge"] == "end" and e["name"] in open_:
        want.append((e["name"], w - open_.pop(e["name"])))
    elif e["edge"] == "once":
        want.append((e["name"], float(e["attrs"].get("diff", e.get("diff_s", 0)))))
got, kind = [], None
for l in open(sys.argv[2]):
    if l.startswith("# \""):
        kind = l[3:].strip().strip("\"")
    elif l.strip() and not l.startswith("#"):
        row, a, b = l.split()
        assert row == "0", l
        got.append((kind, float(b) - float(a)))
want.sort(); got.sort()
assert [k for k, _ in got] == [k for k, _ in want], (got, want)
for (k, g), (_, w) in zip(got, want):
    assert abs(g - w) < 2e-6, (k, g, w)
' "$J/node-1.events" "$T/data/phases.dat"
$A "$J" --plots "$T/plots" -q 2>/dev/null
check "--plots draws the phase timeline as a PNG (18 cm at 200 dpi)" py -c '
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", b[:8]
w, h = struct.unpack(">II", b[16:24])
assert w == round(18 / 2.54 * 200) and 300 < h < w, (w, h)
' "$T/plots/phases_timeline.png"
if command -v gnuplot >/dev/null 2>&1; then
    (cd "$T/data" && gnuplot phases.gp) >"$T/gp.out" 2>&1
    gp_rc=$?
    check "gnuplot runs phases.gp without a word" \
        sh -c '[ "$1" -eq 0 ] && [ ! -s "$2" ] || { sed "s/^/  gnuplot: /" "$2"; false; }' - "$gp_rc" "$T/gp.out"
    check "phases.gp draws phases.png" [ -s "$T/data/phases.png" ]
else
    echo "SKIP  gnuplot not installed: phases.gp not rendered"
fi
check "--trace is a Chrome trace" py -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
x = [e for e in ev if e["ph"] == "X"]
assert sorted(e["name"] for e in x) == ["checkpoint", "compute", "compute", "setup"], x
assert all(e["ts"] >= 0 and e["dur"] >= 0 for e in x)
assert any(e["ph"] == "C" for e in ev)
assert [e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"] == ["node-1"]
' "$T/trace.json"
$A "$PM_ROOT/fixtures/perfmon" --trace "$T/io-trace.json" -q
check "--trace has disk read and write tracks" py -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["name"] for e in ev if e["ph"] == "C"}
assert {"Disk Read (MiB/s)", "Disk Write (MiB/s)"} <= names, names
' "$T/io-trace.json"
$A "$J" --trace "$T/trace.json.gz" -q
check "--trace .gz is gzip" py -c '
import gzip, json, sys
json.load(gzip.open(sys.argv[1]))
' "$T/trace.json.gz"
$A "$J" --trace "$T/nodir/t.json" -q 2>"$T/err"
check "unwritable --trace exits 3" [ $? -eq 3 ]

if command -v pdftotext >/dev/null 2>&1; then
    $A "$J" --pdf "$T/r.pdf" -q
    pdftotext -layout "$T/r.pdf" "$T/r.txt" 2>/dev/null
    check "report has the phases page" has "$T/r.txt" "Start spread s"
    check "report lists the unpaired mark" has "$T/r.txt" "Marks that did not pair"
fi

# A phase's memory peak comes from the readings taken inside it: a phase
# that only slept, closed just before a sample that already holds the
# next phase's 500 MiB, keeps its own 10 MiB; a phase between two samples
# has the reading it began with.
if command -v python3 >/dev/null 2>&1; then
    mkdir "$T/peak"
    python3 - "$T/peak" <<'PY'
import json, sys
d = sys.argv[1]
t0 = 1700000000.0
cols = [{"name": "proc.rss", "unit": "B", "group": "proc", "kind": "gauge", "type": "u64"},
        {"name": "cpu.percent", "unit": "%", "group": "cpu", "kind": "gauge", "type": "f64"}]
with open(d + "/n1.jsonl", "w") as f:
    f.write(json.dumps({"format": "perfmon-profile", "version": 1, "host": "n1", "job_id": "peak",
                        "scheduler": "local", "node_rank": "", "user": "", "command": "x",
                        "sampler": "test", "start": t0, "start_mono": 1.0, "interval": 1.0,
                        "pid": 0, "columns": cols}) + "\n")
    for i in range(11):
        rss = (10 if i <= 5 else 500) << 20
        f.write(json.dumps({"t": t0 + i, "mono": 1.0 + i, "v": [rss, 50]}) + "\n")
with open(d + "/n1.events", "w") as f:
    for name, a, b in (("nap", 3.2, 5.5), ("big", 5.5, 9.5), ("blink", 5.2, 5.8)):
        for edge, w in (("start", a), ("end", b)):
            f.write(json.dumps({"perfmon_event": 1, "host": "n1", "pid": 1,
                                "wall_ns": str(int((t0 + w) * 1e9)), "mono_ns": str(int((1 + w) * 1e9)),
                                "name": name, "edge": edge, "attrs": {}}) + "\n")
PY
    $A "$T/peak" --stats --json >"$T/peak.json" 2>"$T/peak.err"
    check "peak job: exit 0" [ $? -eq 0 ]
    check "a phase's memory peak: its own readings only" python3 -c '
import json, sys
u = {k["name"]: k["use"] for k in json.load(open(sys.argv[1]))["phases"]["kinds"]}
M = 1 << 20
assert u["nap"]["mem_peak_bytes"] == 10 * M, u["nap"]
assert u["big"]["mem_peak_bytes"] == 500 * M, u["big"]
assert u["blink"]["mem_peak_bytes"] == 10 * M, u["blink"]
' "$T/peak.json"
fi

# Phases that overlap on a node (solve holds io and checkpoint, which
# overlap each other) are drawn in lanes: the three colours one above the
# other in the timeline, where a later bar used to paint over the others.
if command -v python3 >/dev/null 2>&1; then
    mkdir "$T/ov"
    python3 - "$T/ov" <<'PY'
import json, sys
d = sys.argv[1]
t0 = 1700000000.0
cols = [{"name": "cpu.percent", "unit": "%", "group": "cpu", "kind": "gauge", "type": "f64"}]
for h in ("n1", "n2"):
    with open("%s/%s.jsonl" % (d, h), "w") as f:
        f.write(json.dumps({"format": "perfmon-profile", "version": 1, "host": h, "job_id": "ov",
                            "scheduler": "local", "node_rank": "", "user": "", "command": "x",
                            "sampler": "test", "start": t0, "start_mono": 1.0, "interval": 1.0,
                            "pid": 0, "columns": cols}) + "\n")
        for i in range(61):
            f.write(json.dumps({"t": t0 + i, "mono": 1.0 + i, "v": [50]}) + "\n")
    with open("%s/%s.events" % (d, h), "w") as f:
        for name, a, b in (("solve", 5, 50), ("io", 20, 30), ("checkpoint", 25, 40)):
            for edge, w in (("start", a), ("end", b)):
                f.write(json.dumps({"perfmon_event": 1, "host": h, "pid": 1,
                                    "wall_ns": str(int((t0 + w) * 1e9)),
                                    "mono_ns": str(int((1 + w) * 1e9)),
                                    "name": name, "edge": edge, "attrs": {}}) + "\n")
PY
    $A "$T/ov" --plots "$T/ov/pl" -q
    check "overlapping phases: the timeline is drawn" [ -s "$T/ov/pl/phases_timeline.png" ]
    check "overlapping phases: in lanes, all three seen at once" \
        [ "$(python3 "$PM_ROOT/tests/support/png_colours.py" "$T/ov/pl/phases_timeline.png")" -ge 3 ]
fi

[ "$fails" -eq 0 ]
