#!/bin/sh
# GPUs end to end, on the stand-in NVML library ($PM_BUILD/tests/
# libnvml_stub.so, scripted by PERFMON_NVML_STUB; values at the top of
# tests/stub/nvml_stub.c): perfmon-sample loads it through
# PERFMON_NVML_LIB, perfmon-analyze shows each GPU as gpu-<n>.<host> in
# --stats (text and JSON), the CSV and the aggregates; GPU lost mid-run;
# no library means no GPU section and no message.
set -u
S="${PM_WRAP:-} $PM_BIN/perfmon-sample"
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
STUB="$PM_BUILD/tests/libnvml_stub.so"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
if [ ! -f "$STUB" ]; then
    echo "FAIL  $STUB not built"
    exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed: GPU statistics not checked"
    exit 0
fi

# Two GPUs, 5% and 50% busy; GPU 1 has no fan; the job's shell uses 1 MiB
# on GPU 0, pid 1 (not the job) 4 KiB.
J="$T/job"
mkdir "$J"
PERFMON_NVML_LIB="$STUB" PERFMON_NVML_STUB="util=0:5 unsupported=1:fan procs=$T/procs" \
    $S -o "$J" -i 0.2 --host node-g --job-id gpu-1 -- \
    sh -c "echo \"0 \$\$ 1048576\" >'$T/procs'; echo '0 1 4096' >>'$T/procs'; sleep 1" \
    >"$T/out" 2>"$T/err"
check "sampling with the stub exits 0" [ $? -eq 0 ]
check "and says nothing" [ ! -s "$T/err" ]

$A "$J" --stats --json --no-rules >"$T/stats.json" 2>"$T/err"
check "analyze --stats --json exits 0" [ $? -eq 0 ]
# The stub counts energy by the clock when it is asked, the sampler times
# a sample when it starts it: under valgrind the two drift apart by tens of
# milliseconds, which the energy check allows for there.
SLACK_S=0
[ -n "${PM_WRAP:-}" ] && SLACK_S=0.1
python3 - "$T/stats.json" "$SLACK_S" >"$T/py" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
slack_s = float(sys.argv[2])
job = d["job"]
nodes = {n["host"]: n for n in d["nodes"]}
metrics = {m["id"]: m for m in d["metrics"]}
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
def near(a, b, tol):
    return a is not None and b is not None and abs(a - b) <= tol
want(sorted(nodes) == ["gpu-0.node-g", "gpu-1.node-g", "node-g"], "hosts %s" % sorted(nodes))
want(nodes["gpu-0.node-g"]["gpu"] and not nodes["node-g"]["gpu"], "gpu flags")
want(job["hosts"] == 1 and job["gpu_count"] == 2, "hosts %s, GPUs %s" % (job["hosts"], job["gpu_count"]))
g0, g1 = nodes["gpu-0.node-g"], nodes["gpu-1.node-g"]
want(g0["gpu_avg_utilization_pct"] == 5 and g1["gpu_avg_utilization_pct"] == 50, "GPU utilisation")
want(job["gpu_avg_utilization_pct"] == 27.5, "mean GPU utilisation %s" % job["gpu_avg_utilization_pct"])
for g, watts in ((g0, 100), (g1, 150)):
    w = g["wall_time_s"]
    want(w > 0.7, "GPU wall time %s" % w)
    want(near(g["gpu_energy_j"], watts * w, 0.03 * watts * w + watts * slack_s),
         "%s energy %s for %s s" % (g["host"], g["gpu_energy_j"], w))
    want(near(g["gpu_hours"], w / 3600, 1e-9), "GPU hours")
want(near(job["gpu_energy_j"], g0["gpu_energy_j"] + g1["gpu_energy_j"], 1e-6), "job GPU energy")
want(job["gpu_peak_mem_bytes"] == 2 << 30, "peak GPU memory")
want(nodes["node-g"]["gpu_count"] is None, "node has no GPU figures")
want(nodes["node-g"]["cpu_avg_utilization_pct"] is not None, "node keeps its CPU figures")
p = metrics["gpu_power"]
want(p["comb"] == "Total" and p["nodes"] == 2 and p["aggregate"]["mean"] == 250, "Total GPU power %s" % p["aggregate"]["mean"])
u = metrics["gpu_util"]
want(u["comb"] == "Average" and u["aggregate"]["mean"] == 27.5, "Average GPU utilisation")
want(sorted(u["hosts"]) == ["gpu-0.node-g", "gpu-1.node-g"], "GPU utilisation series")
want(list(metrics["gpu_fan"]["hosts"]) == ["gpu-0.node-g"], "fan only where supported")
want(metrics["gpu_job_mem"]["hosts"]["gpu-0.node-g"]["max"] == 1 / 1024, "job GPU memory %s" % metrics["gpu_job_mem"]["hosts"]["gpu-0.node-g"]["max"])
want(metrics["gpu_job_mem"]["hosts"]["gpu-1.node-g"]["max"] == 0, "no job memory on GPU 1")
want(near(metrics["gpu_throttle_power"]["hosts"]["gpu-1.node-g"]["mean"], 10, 0.5), "power throttling 10%")
want(metrics["cpu_usage"]["nodes"] == 1, "CPU metrics on the node only")
print("\n".join(bad) if bad else "all good")
EOF
check "GPU series, figures and aggregates in the JSON" has "$T/py" "all good"
cat "$T/py"

$A "$J" --stats --no-rules >"$T/stats.txt" 2>&1
check "text header counts hosts and GPUs" has "$T/stats.txt" "1 host and 2 GPUs"
check "text has a Per GPU table" grep -q "^Per GPU" "$T/stats.txt"
check "GPU 1 row: 50% and 150 W" grep -Eq "^  gpu-1.node-g +50 .* 1[45][0-9](\.[0-9]+)? " "$T/stats.txt"
check "gpu_energy_j in the job figures" grep -q "^  gpu_energy_j " "$T/stats.txt"

$A "$J" --csv "$T/out.csv" --no-rules 2>"$T/err"
check "CSV written" [ $? -eq 0 ]
python3 - "$T/out.csv" >"$T/py" 2>&1 <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault(r["host"], []).append(r)
bad = []
if sorted(by) != ["gpu-0.node-g", "gpu-1.node-g", "node-g"]:
    bad.append("hosts %s" % sorted(by))
for host, util in (("gpu-0.node-g", "5"), ("gpu-1.node-g", "50")):
    vals = {r["gpu_util [%]"] for r in by.get(host, [])}
    if vals != {util}:
        bad.append("%s gpu_util %s" % (host, vals))
if any(r["gpu_util [%]"] for r in by.get("node-g", [])):
    bad.append("GPU values on the node's rows")
if any(r["cpu_usage [%]"] for r in by.get("gpu-0.node-g", [])):
    bad.append("CPU values on a GPU's rows")
print("\n".join(bad) if bad else "all good")
EOF
check "CSV rows per GPU" has "$T/py" "all good"
cat "$T/py"

# The report's GPU page group (templates/report.json) with both GPUs.
$A "$J" --pdf "$T/r.pdf" --no-rules >/dev/null 2>&1
check "report written" [ $? -eq 0 ]
if command -v pdftotext >/dev/null 2>&1; then
    pdftotext "$T/r.pdf" "$T/r.txt" 2>/dev/null
    check "report has the GPU pages" grep -q "^GPU: all nodes" "$T/r.txt"
    check "GPU per-host plots" grep -q "^GPU: per node" "$T/r.txt"
    check "report names both GPUs" sh -c "grep -q '^gpu-0.node-g' '$T/r.txt' && grep -q '^gpu-1.node-g' '$T/r.txt'"
    check "GPU figures in the report" grep -q "^GPU hours" "$T/r.txt"
else
    echo "SKIP  pdftotext not installed: report text not checked"
fi

# A phase marked on the node covers its GPUs.
P="$T/phases"
mkdir "$P"
M="$PM_BIN/perfmon-sample mark -o $P --host node-p"
PERFMON_NVML_LIB="$STUB" PERFMON_NVML_STUB="util=0:5" $S -o "$P" -i 0.1 --host node-p -- \
    sh -c "$M solve start; sleep 0.5; $M solve end" >/dev/null 2>&1
check "marked GPU job exits 0" [ $? -eq 0 ]
$A "$P" --stats --json --no-rules >"$T/ph.json" 2>/dev/null
check "phase means over the node's GPUs" python3 -c "
import json
d = json.load(open('$T/ph.json'))
kind = [x for x in d['phases']['kinds'] if x['name'] == 'solve'][0]
k = kind['by_metric']
assert k['gpu_util']['mean'] == 27.5, k['gpu_util']
assert k['gpu_power']['mean'] == 125, k['gpu_power']
assert abs(k['gpu_power']['energy_j'] - 250 * kind['total_s']) < 1e-6, (k['gpu_power'], kind['total_s'])"

# The shipped idle-GPU rule, without its minimum duration.
python3 -c "
import json, sys
r = [x for x in json.load(open('$PM_ROOT/templates/rules.json'))['rules'] if x['id'] == 'idle_gpu'][0]
r['min_duration_s'] = 0
json.dump({'version': 1, 'rules': [r]}, open('$T/rules.json', 'w'))"
$A "$J" --stats --rules "$T/rules.json" >"$T/out" 2>&1
check "idle GPU 0 noted" has "$T/out" "gpu-0.node-g: GPU utilisation averaged 5"
check "busy GPU 1 not noted" sh -c "! grep -q 'gpu-1.node-g: GPU utilisation' '$T/out'"

# GPU 1 lost after two samples: its series stops, GPU 0 goes on, said once.
L="$T/lost"
mkdir "$L"
PERFMON_NVML_LIB="$STUB" PERFMON_NVML_STUB="lost=1:3" \
    $S -v -o "$L" -i 0.2 --host node-l -- sleep 1 >/dev/null 2>"$T/err"
check "sampling through a lost GPU exits 0" [ $? -eq 0 ]
check "the loss is said once" [ "$(grep -c 'GPU 1 .* is lost' "$T/err")" -eq 1 ]
$A "$L" --csv "$T/lost.csv" --no-rules 2>/dev/null
python3 - "$T/lost.csv" >"$T/py" 2>&1 <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
g0 = [r["gpu_util [%]"] for r in rows if r["host"] == "gpu-0.node-l"]
g1 = [r["gpu_util [%]"] for r in rows if r["host"] == "gpu-1.node-l"]
ok = len(g0) >= 5 and all(v == "10" for v in g0) and g1[:1] == ["50"] and all(v == "" for v in g1[1:]) and len(g1) == len(g0)
print("all good" if ok else "GPU 0 %s, GPU 1 %s" % (g0, g1))
EOF
check "lost GPU: one value, then none; the other GPU unaffected" has "$T/py" "all good"
cat "$T/py"

# No library: no GPU columns, no message; -v says why, once.
N="$T/none"
mkdir "$N"
PERFMON_NVML_LIB="$T/no-such-libnvidia-ml.so.1" $S -o "$N" -i 0.2 --host node-n -- sleep 0.5 \
    >/dev/null 2>"$T/err"
check "no library: exit 0" [ $? -eq 0 ]
check "no library: nothing on stderr" [ ! -s "$T/err" ]
$A "$N" --stats --json --no-rules >"$T/none.json" 2>/dev/null
check "no library: one host, no GPU figures" python3 -c "
import json
d = json.load(open('$T/none.json'))
assert [n['host'] for n in d['nodes']] == ['node-n'], d['nodes']
assert d['job']['gpu_count'] is None
assert not [m for m in d['metrics'] if m['id'].startswith('gpu_')]"
$A "$N" --stats --no-rules >"$T/out" 2>&1
check "no library: no Per GPU table" sh -c "! grep -q '^Per GPU' '$T/out'"
PERFMON_NVML_LIB="$T/no-such-libnvidia-ml.so.1" $S -v -o "$N" -i 0.2 --host node-n -- true \
    >/dev/null 2>"$T/err"
check "no library: -v says so once" [ "$(grep -c 'source nvml absent: no NVIDIA driver library' "$T/err")" -eq 1 ]
PERFMON_NVML_LIB="$STUB" PERFMON_NVML_STUB="gpus=0" $S -v -o "$N" -i 0.2 --host node-n -- true \
    >/dev/null 2>"$T/err"
check "no GPU: -v says so" has "$T/err" "source nvml absent: no NVIDIA GPU"

echo "failures: $fails"
[ "$fails" -eq 0 ]
