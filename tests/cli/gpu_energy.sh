#!/bin/sh
# pm-test: alone (the live job's energy follows the wall clock: checked within 5 % of the marks' seconds)
# Energy to solution per phase (docs/analysis.md, "Resource use per
# phase"): the CPUs' from RAPL's counters, the GPUs' from NVML's energy
# counter, a GPU's power integrated only where it has no counter, and the
# output saying which.  Two jobs:
# 1. a written profile (JSON Lines) whose counters and power readings are
#    known: RAPL package 80 W and DRAM 10 W; GPU 0 reports 200 W of power
#    while its energy counter runs at 250 W (so the counter and the power
#    integral disagree); GPU 1 reports 120 W and has no counter; two phases
#    that begin and end between samples.  Every figure is checked against
#    the hand computation (rate x duration), in --stats --json, --stats,
#    page 1 of the PDF and the HTML, and in memory, --stream and mpirun.
# 2. a job sampled live on the stand-in NVML library (tests/stub): GPU 0's
#    counter runs at 1.5 times its 100 W power (energy=0:1.5), GPU 1 (150 W)
#    answers NOT_SUPPORTED to the counter; two phases marked with
#    perfmon-sample mark; the GPU energy per phase against the stub's own
#    formula over the marks' times.
set -u
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
S="${PM_WRAP:-} $PM_BIN/perfmon-sample"
STUB="$PM_BUILD/tests/libnvml_stub.so"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export PERFMON_DCGM_LIB="$T/no-libdcgm.so.4"
. "$PM_ROOT/tests/support/cli.sh"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed: energy per phase not checked"
    exit 0
fi
MPI=
if [ -z "${PM_WRAP:-}" ] && command -v mpirun >/dev/null 2>&1 &&
    $PM_BIN/perfmon-analyze --version | grep -q "^MPI: built in"; then
    MPI=1
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
    export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_btl_base_warn_component_unused=0
fi

# 1. The written profile: 61 samples a second apart from t0.
J="$T/known"
mkdir "$J"
python3 - "$J" <<'PY'
import json, sys
d = sys.argv[1]
t0 = 1700000000.0
cols = [("cpu.percent", "%", "cpu", "gauge"), ("cpu.ncpus", "1", "cpu", "gauge"),
        ("rapl.package-0", "uJ", "rapl", "counter"), ("rapl.dram-0", "uJ", "rapl", "counter"),
        ("gpu.0.power", "mW", "gpu", "gauge"), ("gpu.0.energy", "mJ", "gpu", "counter"),
        ("gpu.0.util", "%", "gpu", "gauge"),
        ("gpu.1.power", "mW", "gpu", "gauge"), ("gpu.1.util", "%", "gpu", "gauge")]
head = {"format": "perfmon-profile", "version": 1, "host": "n1", "job_id": "energy",
        "scheduler": "local", "node_rank": "", "user": "", "command": "", "sampler": "test",
        "start": t0, "start_mono": 1.0, "interval": 1.0, "pid": 0,
        "columns": [{"name": n, "unit": u, "group": g, "kind": k, "type": "f64"}
                    for n, u, g, k in cols]}
with open(d + "/energy_n1.jsonl", "w") as f:
    f.write(json.dumps(head) + "\n")
    f.write(json.dumps({"metadata": {"cpu": {"threads": 4}}}) + "\n")
    for i in range(61):
        # counters start from an arbitrary reading
        v = [50, 4, 5e9 + 80e6 * i, 7e9 + 10e6 * i, 200000, 9e6 + 250000 * i, 90, 120000, 60]
        f.write(json.dumps({"t": t0 + i, "mono": 1.0 + i, "v": v}) + "\n")
    f.write(json.dumps({"end": {"t": t0 + 60, "mono": 61.0, "samples": 61, "late": 0,
                                "missed": 0, "self_cpu": 0.01, "self_maxrss_kb": 4096,
                                "exit_status": 0, "reason": "command exited"}}) + "\n")
def ev(name, edge, t):
    return json.dumps({"perfmon_event": 1, "host": "n1", "pid": 1, "wall_ns": str(int(t * 1e9)),
                       "mono_ns": str(int((t - t0 + 1) * 1e9)), "name": name, "edge": edge,
                       "attrs": {}}) + "\n"
with open(d + "/n1.events", "w") as f:
    f.write(ev("load", "start", t0 + 10.5) + ev("load", "end", t0 + 30.25))
    f.write(ev("compute", "start", t0 + 30.25) + ev("compute", "end", t0 + 50))
    f.write(ev("compute", "start", t0 + 52) + ev("compute", "end", t0 + 55.5))
PY
$A "$J" --stats --json --no-rules >"$T/k.json" 2>"$T/err"
check "written job: analyze exits 0" [ $? -eq 0 ]
cat "$T/err"
python3 - "$T/k.json" >"$T/py" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
k = {x["name"]: x["use"] for x in d["phases"]["kinds"]}
bad = []
# hand computation: each rate times the phases' seconds
want = {"load": 19.75, "compute": 19.75 + 3.5}
for name, s in want.items():
    u = k[name]
    for key, w in (("cpu_energy_j", 90 * s), ("gpu_energy_j", (250 + 120) * s)):
        if u[key] is None or abs(u[key] - w) > 1e-6 * w:
            bad.append("%s %s %s, want %s" % (name, key, u[key], w))
    if u["gpu_energy_from"] != "energy counter, power integrated where none":
        bad.append("%s from %s" % (name, u["gpu_energy_from"]))
print("\n".join(bad) if bad else "all good")
PY
check "CPU energy = 90 W x the phases' seconds, GPU energy = (250 W counter + 120 W power) x them" \
    has "$T/py" "all good"
cat "$T/py"
$A "$J" --stats --no-rules >"$T/k.txt" 2>&1
sed -n '/^Energy per phase/,/^$/p' "$T/k.txt" | tr -s ' ' >"$T/etab"
check "--stats: the energy table" has "$T/etab" "^ load 1.8 kJ 2.0 Wh energy counter, power integrated where none$"
check "--stats: both kinds" has "$T/etab" "^ compute 2.1 kJ 2.4 Wh energy counter, power integrated where none$"
$A "$J" --stats --json --stream --no-rules >"$T/ks.json" 2>/dev/null
check "written job: --stream gives the same JSON" cmp "$T/k.json" "$T/ks.json"
$A "$J" --stats --stream --no-rules >"$T/ks.txt" 2>&1
check "written job: --stream gives the same text" cmp "$T/k.txt" "$T/ks.txt"
if [ -n "$MPI" ]; then
    timeout 120 mpirun -n 2 "$PM_BIN/perfmon-analyze" "$J" --stats --json --stream --no-rules \
        >"$T/km.json" 2>/dev/null
    check "written job: mpirun -n 2 --stream gives the same JSON" cmp "$T/k.json" "$T/km.json"
fi
if command -v pdftotext >/dev/null 2>&1; then
    $A "$J" --pdf "$T/k.pdf" --no-rules -q 2>/dev/null
    check "written job: report written" [ $? -eq 0 ]
    pdftotext -layout -f 1 -l 1 "$T/k.pdf" - 2>/dev/null | tr -s ' ' >"$T/p1"
    check "page 1: the energy table's rows" has "$T/p1" "load 1.8 kJ 2.0 Wh energy counter, power integrated where none"
fi
$A "$J" --html "$T/k.html" --no-rules -q 2>/dev/null
check "written job: HTML written" [ $? -eq 0 ]
check "HTML: the energy table's row" has "$T/k.html" \
    '<tr><td>load</td><td class="num">1.8 kJ</td><td class="num">2.0 Wh</td><td>energy counter, power integrated where none</td></tr>'

# 2. Live, on the stand-in: phases marked while the GPUs draw.
if [ ! -f "$STUB" ]; then
    echo "FAIL  $STUB not built"
    exit 1
fi
J="$T/live"
mkdir "$J"
M="$PM_BIN/perfmon-sample mark -o $J --host node-e"
PERFMON_NVML_LIB="$STUB" PERFMON_NVML_STUB="gpus=2 energy=0:1.5 unsupported=1:energy" \
    $S -o "$J" -i 0.1 -f json --host node-e -- \
    sh -c "sleep 0.35; $M warm start; sleep 0.5; $M warm end; $M run start; sleep 1; $M run end; sleep 0.35" \
    >/dev/null 2>"$T/err"
check "live: sampling exits 0" [ $? -eq 0 ]
check "live: GPU 0 has the energy counter, GPU 1 not" python3 -c "
import json, glob
h = json.loads(open(glob.glob('$J/*.jsonl')[0]).readline())
c = [x['name'] for x in h['columns']]
assert 'gpu.0.energy' in c and 'gpu.1.energy' not in c, c"
$A "$J" --stats --json --no-rules >"$T/l.json" 2>/dev/null
check "live: analyze exits 0" [ $? -eq 0 ]
python3 - "$T/l.json" "$J" >"$T/py" 2>&1 <<'PY'
import glob, json, sys
d = json.load(open(sys.argv[1]))
k = {x["name"]: x["use"] for x in d["phases"]["kinds"]}
# the marks' times, from the events file
marks = {}
for f in glob.glob(sys.argv[2] + "/*.events"):
    for line in open(f):
        e = json.loads(line)
        marks.setdefault(e["name"], {})[e["edge"]] = int(e["wall_ns"]) / 1e9
bad = []
for name, m in marks.items():
    s = m["end"] - m["start"]
    # the stand-in: GPU 0's counter 1.5 x 100 W, GPU 1's power 150 W
    w = (1.5 * 100 + 150) * s
    got = k[name]["gpu_energy_j"]
    if got is None or abs(got - w) > 0.05 * w:
        bad.append("%s: %s J, want %.3f J (%.3f s)" % (name, got, w, s))
    if k[name]["gpu_energy_from"] != "energy counter, power integrated where none":
        bad.append("%s from %s" % (name, k[name]["gpu_energy_from"]))
if len(marks) != 2:
    bad.append("marks %s" % marks)
print("\n".join(bad) if bad else "all good")
PY
check "live: GPU energy per phase = the stand-in's (1.5 x 100 W + 150 W) x the marks' seconds" \
    has "$T/py" "all good"
cat "$T/py"
$A "$J" --stats --json --stream --no-rules >"$T/ls.json" 2>/dev/null
check "live: --stream gives the same JSON" cmp "$T/l.json" "$T/ls.json"

echo "failures: $fails"
[ "$fails" -eq 0 ]
