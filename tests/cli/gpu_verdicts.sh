#!/bin/sh
# pm-test: alone (the scripted GPUs follow the wall clock: the verdicts' onsets are checked to the second)
# What the GPUs really did, end to end on the stand-in NVML library
# (tests/stub/nvml_stub.c, scripted by PERFMON_NVML_STUB; its "levels"
# file sets utilisation and GPM activity, re-read as the job runs):
# perfmon-sample records SM activity and the pipes on a GPM GPU (Hopper),
# says once that an older GPU cannot tell, and records MIG instances as
# devices of their own; perfmon-analyze turns the series into the "gpu"
# rules' sentences (templates/rules.json): held but idle, busy but
# starved (and from when), memory- and compute-bound, one GPU of several
# idle, SM activity not measured; healthy GPUs get none of them.
set -u
S="${PM_WRAP:-} $PM_BIN/perfmon-sample"
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
STUB="$PM_BUILD/tests/libnvml_stub.so"
DCGM="$PM_BUILD/tests/libdcgm_stub.so"
T=$(mktemp -d)
# No DCGM but where a part asks for its stand-in (whatever this machine has).
export PERFMON_DCGM_LIB="$T/no-libdcgm.so.4"
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
if [ ! -f "$STUB" ]; then
    echo "FAIL  $STUB not built"
    exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed: GPU verdicts not checked"
    exit 0
fi

# The shipped gpu rules, without their minimum duration (the jobs here
# last two seconds).
python3 -c "
import json
d = json.load(open('$PM_ROOT/templates/rules.json'))
r = [x for x in d['rules'] if x['type'] == 'gpu']
for x in r: x['min_duration_s'] = 0
json.dump({'version': 1, 'rules': r}, open('$T/rules.json', 'w'))"

# both_modes NAME DIR: the job analysed in memory and with --stream (and
# under mpirun -n 2 --stream where this perfmon-analyze has MPI): the
# same --stats --json bytes (the verdicts' sentences, onsets, figures)
# and the same --stats text.
MPI=
if [ -z "${PM_WRAP:-}" ] && command -v mpirun >/dev/null 2>&1 &&
    $PM_BIN/perfmon-analyze --version | grep -q "^MPI: built in"; then
    MPI=1
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
    export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_btl_base_warn_component_unused=0
fi
both_modes() {
    $A "$2" --stats --json --rules "$T/rules.json" >"$T/$1-mem.json" 2>/dev/null
    $A "$2" --stats --json --stream --rules "$T/rules.json" >"$T/$1-str.json" 2>/dev/null
    check "$1: --stream gives the same verdicts and JSON" cmp "$T/$1-mem.json" "$T/$1-str.json"
    $A "$2" --stats --rules "$T/rules.json" >"$T/$1-mem.txt" 2>&1
    $A "$2" --stats --stream --rules "$T/rules.json" >"$T/$1-str.txt" 2>&1
    check "$1: --stream gives the same --stats text" cmp "$T/$1-mem.txt" "$T/$1-str.txt"
    if [ -n "$MPI" ]; then
        timeout 120 mpirun -n 2 "$PM_BIN/perfmon-analyze" "$2" --stats --json --stream \
            --rules "$T/rules.json" >"$T/$1-mpi.json" 2>/dev/null
        check "$1: mpirun -n 2 --stream: the same JSON" cmp "$T/$1-mem.json" "$T/$1-mpi.json"
    fi
}

# notes FILE: "rule host" per note of an analysis' JSON, sorted.
notes() {
    python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
for n in sorted(d['notes'], key=lambda n: (n['rule'], n['host'] or '')):
    print(n['rule'], n['host'])" "$1"
}

# 1. Four Hopper GPUs.  GPU 0 works for a second, then is starved
# (utilisation 95 %, SM activity 12 %); GPU 1 is held but idle behind a
# high utilisation; GPU 2 streams memory; GPU 3 is FP64-bound.
J="$T/hopper"
mkdir "$J"
L="$T/levels"
echo "util=0:60 sm=0:60 dram=0:30 fp32=0:40 util=1:90 sm=1:2 util=2:70 sm=2:70 dram=2:80 fp32=2:10
util=3:90 sm=3:85 fp64=3:75 dram=3:20" >"$L"
PERFMON_NVML_LIB="$STUB" PERFMON_NVML_STUB="gpus=4 gpm=0 gpm=1 gpm=2 gpm=3 levels=$L" \
    $S -o "$J" -i 0.1 -f json --host node-h -- \
    sh -c "sleep 1; sed -i 's/util=0:60 sm=0:60/util=0:95 sm=0:12/' '$L'; sleep 1.2" \
    >"$T/out" 2>"$T/err"
check "sampling four GPM GPUs exits 0" [ $? -eq 0 ]
check "and says nothing" [ ! -s "$T/err" ]
check "no note that SM activity is not measurable" sh -c "! grep -rq 'not measurable' '$J'"
$A "$J" --stats --json --rules "$T/rules.json" >"$T/h.json" 2>"$T/err"
check "analyze exits 0" [ $? -eq 0 ]
notes "$T/h.json" >"$T/notes"
cat >"$T/want" <<'W'
gpu_compute_bound gpu-3.node-h
gpu_held_idle gpu-1.node-h
gpu_memory_bound gpu-2.node-h
gpu_one_idle gpu-1.node-h
gpu_starved gpu-0.node-h
W
check "each verdict on its GPU, and no other" cmp -s "$T/notes" "$T/want"
diff "$T/want" "$T/notes"
python3 - "$T/h.json" >"$T/py" 2>&1 <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
n = {x["rule"]: x for x in d["notes"]}
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
m = {x["id"]: x for x in d["metrics"]}
sm = m["gpu_sm_active"]["hosts"]
want(abs(sm["gpu-1.node-h"]["mean"] - 2) < 0.01, "GPU 1 SM activity %s" % sm["gpu-1.node-h"]["mean"])
want(abs(m["gpu_fp64_active"]["hosts"]["gpu-3.node-h"]["mean"] - 75) < 0.01, "GPU 3 FP64")
s = n["gpu_starved"]
# starved from about a second in: the share is about half the samples
want(30 <= s["value"] <= 80, "starved share %s" % s["value"])
want(re.search(r"first at \d\d:\d\d:\d\d UTC, 0:00:01 into the job", s["message"]), s["message"])
want("(95 % utilisation) while its SMs were active 12 % of the time" in s["message"], s["message"])
h = n["gpu_held_idle"]["message"]
want("NVML's utilisation averaged 90 %, SM activity 2 %" in h, h)
want("the busiest pipe (FP32 pipe) was active 10 %" in n["gpu_memory_bound"]["message"], n["gpu_memory_bound"]["message"])
want("its FP64 pipe was active 75 % of the time and DRAM ran at 20 %" in n["gpu_compute_bound"]["message"], n["gpu_compute_bound"]["message"])
want("while the other 3 GPUs worked" in n["gpu_one_idle"]["message"], n["gpu_one_idle"]["message"])
print("\n".join(bad) if bad else "all good")
PY
check "verdict sentences: when, where, figures" has "$T/py" "all good"
cat "$T/py"
both_modes hopper "$J"
check "(--stream has the four per-sample verdicts)" python3 -c "
import json
r = sorted(n['rule'] for n in json.load(open('$T/hopper-str.json'))['notes'])
assert r == ['gpu_compute_bound', 'gpu_held_idle', 'gpu_memory_bound', 'gpu_one_idle', 'gpu_starved'], r"

# Page 1 of the report has the verdicts; the GPU section plots SM activity.
if command -v pdftotext >/dev/null 2>&1; then
    $A "$J" --pdf "$T/r.pdf" --rules "$T/rules.json" >/dev/null 2>&1
    check "report written" [ $? -eq 0 ]
    pdftotext -l 1 "$T/r.pdf" "$T/p1.txt" 2>/dev/null
    check "page 1 says GPU 1 was held but idle" grep -q "gpu-1.node-h: the job held this GPU" "$T/p1.txt"
    pdftotext "$T/r.pdf" "$T/r.txt" 2>/dev/null
    check "GPU section plots SM activity" grep -q "GPU SM Activity" "$T/r.txt"
else
    echo "SKIP  pdftotext not installed: report text not checked"
fi

# 2. Healthy GPUs: busy SMs, neither pipe nor memory dominating.
J="$T/healthy"
mkdir "$J"
echo "util=0:70 sm=0:65 dram=0:40 fp32=0:45 util=1:75 sm=1:60 dram=1:35 fp32=1:40" >"$L"
PERFMON_NVML_LIB="$STUB" PERFMON_NVML_STUB="gpus=2 gpm=0 gpm=1 levels=$L" \
    $S -o "$J" -i 0.1 --host node-ok -- sleep 1 >/dev/null 2>&1
$A "$J" --stats --json --rules "$T/rules.json" >"$T/ok.json" 2>/dev/null
check "healthy GPUs: analyze exits 0" [ $? -eq 0 ]
check "healthy GPUs: no GPU verdict" [ -z "$(notes "$T/ok.json")" ]
both_modes healthy "$J"

# 3. Older GPUs (no GPM): the profile says once per GPU that SM activity
# cannot be measured, there are no SM columns (no zeros), and the only
# verdict says what cannot be told.
J="$T/old"
mkdir "$J"
PERFMON_NVML_LIB="$STUB" PERFMON_NVML_STUB="gpus=2 util=0:100" \
    $S -o "$J" -i 0.1 -f json --host node-o -- sleep 1 >/dev/null 2>"$T/err"
check "older GPUs: sampling exits 0" [ $? -eq 0 ]
check "the profile says so once per GPU" \
    [ "$(grep -rho 'SM activity not measurable on this GPU: GPU [01] (Stub GPU [01]): it has no GPM' "$J" | sort -u | wc -l)" -eq 2 ]
check "no sm_active column" sh -c "! grep -rqE '\"gpu\.[01]\.sm_active\"' '$J'"
check "(the columns are there to be found)" grep -rqE '"gpu\.[01]\.util"' "$J"
$A "$J" --stats --json --rules "$T/rules.json" >"$T/old.json" 2>/dev/null
notes "$T/old.json" >"$T/notes"
echo "gpu_unmeasured gpu-0.node-o" >"$T/want"
check "older GPUs: only the unmeasured verdict" cmp -s "$T/notes" "$T/want"
diff "$T/want" "$T/notes"
check "naming both GPUs" grep -q "SM activity was not measured on gpu-0.node-o, gpu-1.node-o (NVML.s GPM" "$T/old.json"
$A "$J" --stats --rules "$T/rules.json" >"$T/old.txt" 2>&1
$A "$J" --stats --stream --rules "$T/rules.json" >"$T/old-stream.txt" 2>&1
check "--stream says the same" cmp "$T/old.txt" "$T/old-stream.txt"
both_modes old "$J"

# 3b. The job's own share of a GPU (process utilisation samples): the
# job's shell runs kernels 40 % of the time on GPU 0, pid 1 (not the job)
# 30 %; GPU 1 has only pid 1's.
J="$T/share"
mkdir "$J"
PERFMON_NVML_LIB="$STUB" PERFMON_NVML_STUB="gpus=2 putil=$T/putil" \
    $S -o "$J" -i 0.1 --host node-s -- \
    sh -c "echo \"0 \$\$ 40 10\" >'$T/putil'; echo '0 1 30 5' >>'$T/putil'; echo '1 1 70 7' >>'$T/putil'; sleep 1" \
    >/dev/null 2>&1
check "process utilisation: sampling exits 0" [ $? -eq 0 ]
$A "$J" --stats --json --no-rules >"$T/share.json" 2>/dev/null
check "the job's share of each GPU" python3 -c "
import json
m = {x['id']: x for x in json.load(open('$T/share.json'))['metrics']}
h = m['gpu_job_sm_util']['hosts']
assert h['gpu-0.node-s']['max'] == 40 and h['gpu-1.node-s']['max'] == 0, h
assert m['gpu_job_mem_util']['hosts']['gpu-0.node-s']['max'] == 10"

# 3c. GPM that fails at every sample: said once, no values, the rest goes on.
J="$T/gpmfail"
mkdir "$J"
PERFMON_NVML_LIB="$STUB" PERFMON_NVML_STUB="gpus=1 gpm=0 unsupported=0:gpmget" \
    $S -v -o "$J" -i 0.15 -f json --host node-f -- sleep 1 >/dev/null 2>"$T/err"
check "failing GPM: sampling exits 0" [ $? -eq 0 ]
check "failing GPM: said once" [ "$(grep -c 'GPU 0: GPM sampling failed (NVML: Unknown Error)' "$T/err")" -eq 1 ]
$A "$J" --stats --json --no-rules >"$T/f.json" 2>/dev/null
check "failing GPM: no SM activity, utilisation kept" python3 -c "
import json
m = {x['id']: x for x in json.load(open('$T/f.json'))['metrics']}
assert 'gpu_sm_active' not in m or not m['gpu_sm_active']['hosts'], m.get('gpu_sm_active')
assert m['gpu_util']['hosts']['gpu-0.node-f']['mean'] == 10"

# 3d. An older GPU with DCGM: its profiling fields stand in for GPM (SM
# activity 2 % behind a utilisation of 100 %: held but idle), no note.
J="$T/dcgm"
mkdir "$J"
PERFMON_NVML_LIB="$STUB" PERFMON_NVML_STUB="gpus=1 util=0:100" \
    PERFMON_DCGM_LIB="$DCGM" PERFMON_DCGM_STUB="gpus=1 sm=0:0.02" \
    $S -o "$J" -i 0.1 -f json --host node-d -- sleep 1 >/dev/null 2>"$T/err"
check "DCGM: sampling exits 0" [ $? -eq 0 ]
check "DCGM: no note that SM activity is not measurable" sh -c "! grep -rq 'not measurable' '$J'"
check "DCGM: the metadata says where SM activity comes from" grep -rq '"sm_activity":"dcgm"' "$J"
$A "$J" --stats --json --rules "$T/rules.json" >"$T/d.json" 2>/dev/null
notes "$T/d.json" >"$T/notes"
echo "gpu_held_idle gpu-0.node-d" >"$T/want"
check "DCGM: held but idle, from DCGM's SM activity" cmp -s "$T/notes" "$T/want"
diff "$T/want" "$T/notes"
both_modes dcgm "$J"

# 4. MIG: GPU 0 in two instances (GPU instance ids 1 and 3), each a device
# of its own with its SM activity; still one GPU of the job.
J="$T/mig"
mkdir "$J"
PERFMON_NVML_LIB="$STUB" PERFMON_NVML_STUB="gpus=1 gpm=0 mig=0:2" \
    $S -o "$J" -i 0.1 --host node-m -- sleep 1 >/dev/null 2>&1
check "MIG: sampling exits 0" [ $? -eq 0 ]
$A "$J" --stats --json --rules "$T/rules.json" >"$T/mig.json" 2>/dev/null
check "MIG: analyze exits 0" [ $? -eq 0 ]
python3 - "$T/mig.json" >"$T/py" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
hosts = sorted(n["host"] for n in d["nodes"])
if hosts != ["gpu-0.mig1.node-m", "gpu-0.mig3.node-m", "gpu-0.node-m", "node-m"]:
    bad.append("hosts %s" % hosts)
if d["job"]["gpu_count"] != 1:
    bad.append("gpu_count %s" % d["job"]["gpu_count"])
m = {x["id"]: x for x in d["metrics"]}
sm = {h: v["mean"] for h, v in m["gpu_sm_active"]["hosts"].items()}
want = {"gpu-0.node-m": 20, "gpu-0.mig1.node-m": 21, "gpu-0.mig3.node-m": 22}
if sorted(sm) != sorted(want) or any(abs(sm[h] - want[h]) > 1e-6 for h in want):
    bad.append("SM activity %s" % sm)
if sorted(m["gpu_mem_used"]["hosts"]) != ["gpu-0.mig1.node-m", "gpu-0.mig3.node-m", "gpu-0.node-m"]:
    bad.append("memory hosts %s" % sorted(m["gpu_mem_used"]["hosts"]))
if "gpu-0.mig1.node-m" in m["gpu_util"]["hosts"]:
    bad.append("utilisation on a MIG instance")
if [n for n in d["notes"] if n["rule"].startswith("gpu_")]:
    bad.append("notes %s" % [n["rule"] for n in d["notes"]])
print("\n".join(bad) if bad else "all good")
PY
check "MIG instances as devices gpu-0.mig<gi>.<node>" has "$T/py" "all good"
cat "$T/py"
both_modes mig "$J"

echo "failures: $fails"
[ "$fails" -eq 0 ]
