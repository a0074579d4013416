#!/bin/sh
# make check-slurm: perfmon in a real SLURM on this machine.
#
# Installs Debian's slurmd, slurmctld, slurm-client and munge when missing,
# starts munged, slurmctld and slurmd (as root, on loopback, private ports,
# sockets and state under a temporary directory, no systemd), submits a
# batch job written like examples/slurm-job.sh (srun perfmon-sample ... &,
# the workload as its own step, echo FINISHED > IPC, wait, perfmon-analyze)
# and checks that the sampler recorded the SLURM job id, the node name and
# the workload step's processes, and that the analysis made the report;
# then again with SLURM's cgroup plugins, where the sampler must find the
# job's cgroup (and, before, without them, must use the process tree).
# Every daemon it started is stopped on exit, whatever happened.
# Where SLURM cannot run here (not root, no package, a daemon does not come
# up) it prints a SKIP line with the reason and exits 0; a job or a check
# that goes wrong exits 1.
set -u
BUILD=${BUILD:-build/release}
ROOT=$(pwd)
BIN="$ROOT/$BUILD/bin"
WORK="$ROOT/$BUILD/examples/matmul-io"
skip() {
    echo "SKIP  check-slurm: $*"
    exit 0
}
[ -x "$BIN/perfmon-sample" ] || { echo "check-slurm: build first ($BIN/perfmon-sample missing)"; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root (installs packages, runs a test cluster as root)"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed: the profile cannot be checked"

PKGS="slurmd slurmctld slurm-client munge"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    command -v apt-get >/dev/null 2>&1 || skip "no apt-get to install$missing"
    echo "check-slurm: installing$missing"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing \
        >/tmp/perfmon-slurm-apt.log 2>&1 ||
        skip "apt-get install$missing failed (log: /tmp/perfmon-slurm-apt.log)"
fi
for c in munged munge slurmctld slurmd sbatch squeue scontrol sinfo; do
    command -v "$c" >/dev/null 2>&1 || skip "$c not found after installing $PKGS"
done

T=$(mktemp -d /tmp/perfmon-slurm.XXXXXX)
chmod 755 "$T" # munged wants its socket directory searchable by all
mkdir "$T/state" "$T/spool"
stop() { # pid file: TERM, then KILL after 10 s
    [ -s "$1" ] || return 0
    pid=$(cat "$1")
    kill "$pid" 2>/dev/null || return 0
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
        i=$((i + 1))
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
}
cleanup() {
    [ -n "${SLURM_CONF:-}" ] && scancel --full --quiet "${JOBID:-0}" 2>/dev/null
    stop "$T/slurmd.pid"
    stop "$T/slurmctld.pid"
    stop "$T/munged.pid"
    if [ "${KEEP:-0}" = 1 ]; then echo "check-slurm: kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
logs() {
    for f in munged.log slurmctld.log slurmd.log; do
        echo "--- $f"
        tail -n 20 "$T/$f" 2>/dev/null
    done
}

# munge: a fresh key and a private socket.
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$T/munge.key"
munged --socket="$T/munge.sock" --key-file="$T/munge.key" --pid-file="$T/munged.pid" \
    --log-file="$T/munged.log" --seed-file="$T/munge.seed" --force 2>"$T/munged.err" ||
    { cat "$T/munged.err"; skip "munged does not start"; }
munge -S "$T/munge.sock" -n | unmunge -S "$T/munge.sock" >/dev/null 2>&1 ||
    { logs; skip "munge credentials do not round-trip"; }

HOST=$(hostname)
PORT=$((20000 + ($$ % 4000) * 2))
cat >"$T/slurm.conf" <<EOF
ClusterName=perfmon-check
FirstJobId=4242
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge.sock
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$(awk '/^MemTotal:/ {print int($2 / 1024 / 2)}' /proc/meminfo) State=UNKNOWN
PartitionName=check Nodes=$HOST Default=YES MaxTime=10 State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$T/slurm.conf"
slurmctld -f "$SLURM_CONF" 2>"$T/slurmctld.err" || { cat "$T/slurmctld.err"; logs; skip "slurmctld does not start"; }
slurmd -f "$SLURM_CONF" 2>"$T/slurmd.err" || { cat "$T/slurmd.err"; logs; skip "slurmd does not start"; }
i=0
until [ "$(sinfo -h -n "$HOST" -o %T 2>/dev/null)" = idle ]; do
    i=$((i + 1))
    [ $i -gt 60 ] && { logs; skip "node $HOST not idle after 30 s ($(sinfo -h -o %T 2>&1))"; }
    sleep 0.5
done
echo "check-slurm: munged, slurmctld and slurmd up; node $HOST idle (ports $PORT, $((PORT + 1)))"

# The job, as a user would write it (examples/slurm-job.sh), with the
# sampler in both formats so the test can read the header as text.
cat >"$T/job.sh" <<EOF
#!/bin/sh
#SBATCH --job-name=perfmon-check
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --time=00:07:00
#SBATCH --mem=1000M
set -eu
OUT=$T/perfmon-\$SLURM_JOB_ID
IPC=\$OUT/ipc
mkdir -p "\$OUT"
rm -f "\$IPC"
srun --overlap --ntasks-per-node=1 --nodes="\$SLURM_JOB_NUM_NODES" \\
    $BIN/perfmon-sample -o "\$OUT" -i 0.2 -f both --ipc "\$IPC" &
SAMPLERS=\$!
sleep 2
srun $WORK -n 1000 -t 2 -r 10 -d $T
echo FINISHED > "\$IPC"
wait "\$SAMPLERS"
$BIN/perfmon-analyze "\$OUT" --stats --pdf "\$OUT/job-report-\$SLURM_JOB_ID.pdf"
EOF
JOBID=$(sbatch --parsable -o "$T/job-%j.out" -D "$T" "$T/job.sh" 2>"$T/sbatch.err") ||
    { cat "$T/sbatch.err"; logs; echo "FAIL  sbatch refused the job"; exit 1; }
echo "check-slurm: submitted job $JOBID"
i=0
while squeue -h -j "$JOBID" 2>/dev/null | grep -q .; do
    i=$((i + 1))
    if [ $i -gt 240 ]; then
        scontrol show job "$JOBID"
        cat "$T/job-$JOBID.out"
        logs
        echo "FAIL  job $JOBID still running after 120 s"
        exit 1
    fi
    sleep 0.5
done
echo "--- job output"
cat "$T/job-$JOBID.out"
echo "---"

fails=0
check() {
    desc=$1
    shift
    if "$@"; then echo "ok    $desc"; else echo "FAIL  $desc"; fails=$((fails + 1)); fi
}
state=$(scontrol show job "$JOBID" 2>/dev/null | tr ' ' '\n' | grep -E '^(JobState|ExitCode)=' | tr '\n' ' ')
check "job $JOBID completed with exit code 0 ($state)" \
    sh -c "echo '$state' | grep -q 'JobState=COMPLETED ExitCode=0:0'"
OUT="$T/perfmon-$JOBID"
check "one profile named after the job and the node" [ -s "$OUT/${JOBID}_$HOST.pmp" ]
check "the profile records the SLURM job, node and the workload step" \
    python3 - "$OUT/${JOBID}_$HOST.pmp.jsonl" "$JOBID" "$HOST" <<'EOF'
import json, sys
path, job, host = sys.argv[1:]
lines = [json.loads(l) for l in open(path)]
h = lines[0]
assert h["job_id"] == job and h["scheduler"] == "slurm", (h["job_id"], h["scheduler"])
assert h["host"] == host and h["node_rank"] == "0", (h["host"], h["node_rank"])
assert h["command"].startswith("SLURM job " + job), h["command"]
notes = [l["note"] for l in lines if "note" in l]
assert any("following the processes of SLURM job " + job in n for n in notes), notes
col = {c["name"]: i for i, c in enumerate(h["columns"])}
s = [l["v"] for l in lines if "t" in l]
count = [v[col["proc.count"]] for v in s if v[col["proc.count"]] is not None]
cpu = [v[col["proc.cpu_time"]] for v in s if v[col["proc.cpu_time"]] is not None]
threads = [v[col["proc.threads"]] for v in s if v[col["proc.threads"]] is not None]
# The batch script and the srun clients are the job's too, but they are
# nearly idle: more than a second of CPU time can only come from the
# workload step (matmul-io -n 1000 -r 10: 20 GFLOP; only what it used
# up to the last sample before it exited is seen).  CPU time does not
# depend on how loaded the machine is.
assert max(count) >= 2, count
assert max(cpu) - min(cpu) > 1.5, (min(cpu), max(cpu))
assert max(threads) >= 3, threads
end = [l["end"] for l in lines if "end" in l]
assert end and end[0]["reason"] == "IPC file says FINISHED", end
print("proc.count up to %d, proc.cpu_time %.2f s, %d samples" % (max(count), max(cpu) - min(cpu), len(s)))
EOF
# What the job asked for (--time=00:07:00, --mem=1000M), as the sampler
# recorded it at start and as the analysis sets it against what was used.
check "the profile records the request: 420 s, 1000 MiB, the node's CPUs" \
    python3 - "$OUT/${JOBID}_$HOST.pmp.jsonl" "$(nproc)" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
r = [l["metadata"] for l in lines if "metadata" in l][0]["request"]
print("request:", r)
assert r["scheduler"] == "slurm", r
assert r["time_limit_s"] == 7 * 60, r
assert r["time_limit_from"] in ("squeue", "SLURM_JOB_END_TIME"), r
assert r["mem_bytes"] == 1000 * 1048576, r
assert 1 <= r["cpus"] <= int(sys.argv[2]), r
EOF
"$BIN/perfmon-analyze" "$OUT" --stats --json >"$T/stats.json" 2>/dev/null
check "--stats --json sets the request against the job" python3 - "$T/stats.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["request"]
print("request vs used:", r)
assert r["time_limit_s"] == 420 and r["mem_req_bytes"] == 1000 * 1048576, r
assert abs(r["time_pct"] - r["wall_s"] / 420 * 100) < 1e-9, r
assert 0 < r["wall_s"] < 420 and r["time_pct"] < 25, r
assert r["mem_used_bytes"] > 0 and abs(r["mem_pct"] - r["mem_used_bytes"] / (1000 * 1048576) * 100) < 1e-9, r
assert "walltime" in r["note"], r
EOF
check "without SLURM's cgroup plugins: no job cgroup, the process tree gives the job's figures" \
    python3 - "$OUT/${JOBID}_$HOST.pmp.jsonl" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
cols = [c["name"] for c in lines[0]["columns"]]
assert not [c for c in cols if c.startswith("cg.")], cols
assert "proc.cpu_time" in cols, cols
events = [json.loads(l["note"]) for l in lines if "note" in l and l["note"].startswith("{")]
assert not [e for e in events if e.get("event") == "cgroup"], events
EOF
check "the analysis in the job wrote the report" [ -s "$OUT/job-report-$JOBID.pdf" ]
check "the job output has the statistics" grep -q "^  $HOST " "$T/job-$JOBID.out"
if command -v pdftotext >/dev/null 2>&1; then
    pdftotext "$OUT/job-report-$JOBID.pdf" "$T/report.txt" 2>/dev/null
    check "the report names the job and the node" sh -c "grep -q '$JOBID' '$T/report.txt' && grep -q '$HOST' '$T/report.txt'"
    check "the report's page 1 shows the requested walltime and memory" \
        sh -c "grep -q 'of 7.0 min requested' '$T/report.txt' && grep -q 'of 1000 MiB requested per node' '$T/report.txt'"
fi
[ "$fails" -eq 0 ] || { logs; exit 1; }

# The same job under SLURM's cgroup plugins (proctrack/cgroup, task/cgroup):
# the sampler finds the job's cgroup from its own /proc/self/cgroup (the
# job level above its step) and records the kernel's accounting of it.
# Where slurmd cannot run with the plugins here, this part is skipped.
restart_with_cgroups() {
    stop "$T/slurmd.pid"
    stop "$T/slurmctld.pid"
    sed -i -e 's|^ProctrackType=.*|ProctrackType=proctrack/cgroup|' \
        -e 's|^TaskPlugin=.*|TaskPlugin=task/cgroup|' \
        -e 's|^JobAcctGatherType=.*|JobAcctGatherType=jobacct_gather/cgroup|' "$SLURM_CONF"
    printf 'CgroupPlugin=autodetect\nCgroupMountpoint=/sys/fs/cgroup\nConstrainCores=no\nConstrainRAMSpace=yes\n' \
        >"$T/cgroup.conf"
    slurmctld -f "$SLURM_CONF" 2>"$T/slurmctld.err" || return 1
    slurmd -f "$SLURM_CONF" 2>"$T/slurmd.err" || return 1
    i=0
    until [ "$(sinfo -h -n "$HOST" -o %T 2>/dev/null)" = idle ]; do
        i=$((i + 1))
        [ $i -gt 60 ] && return 1
        sleep 0.5
    done
}
if ! restart_with_cgroups; then
    logs
    echo "SKIP  check-slurm: slurmd does not run with proctrack/cgroup and task/cgroup here: the job cgroup is not checked"
    echo "check-slurm: passed"
    exit 0
fi
echo "check-slurm: slurmd restarted with proctrack/cgroup and task/cgroup"
JOBID=$(sbatch --parsable -o "$T/job-%j.out" -D "$T" "$T/job.sh" 2>"$T/sbatch.err") ||
    { cat "$T/sbatch.err"; logs; echo "FAIL  sbatch refused the job"; exit 1; }
i=0
while squeue -h -j "$JOBID" 2>/dev/null | grep -q .; do
    i=$((i + 1))
    [ $i -gt 240 ] && { logs; echo "FAIL  job $JOBID still running after 120 s"; exit 1; }
    sleep 0.5
done
echo "--- job output"
cat "$T/job-$JOBID.out"
echo "---"
state=$(scontrol show job "$JOBID" 2>/dev/null | tr ' ' '\n' | grep -E '^(JobState|ExitCode)=' | tr '\n' ' ')
check "job $JOBID under the cgroup plugins completed ($state)" \
    sh -c "echo '$state' | grep -q 'JobState=COMPLETED ExitCode=0:0'"
OUT="$T/perfmon-$JOBID"
check "the sampler found the job's cgroup (job_$JOBID, above its own step) and recorded it" \
    python3 - "$OUT/${JOBID}_$HOST.pmp.jsonl" "$JOBID" <<'EOF'
import json, sys
path, job = sys.argv[1:]
lines = [json.loads(l) for l in open(path)]
cols = {c["name"]: i for i, c in enumerate(lines[0]["columns"])}
events = [json.loads(l["note"]) for l in lines if "note" in l and l["note"].startswith("{")]
cg = [e for e in events if e.get("event") == "cgroup"]
assert cg, [l["note"] for l in lines if "note" in l]
e = cg[0]
print("cgroup:", e)
assert e["level"] == "job" and e["path"].rstrip("/").endswith("job_" + job), e
assert "step_" not in e["path"], e
assert "cg.cpu_usage" in cols and "proc.cpu_time" in cols, sorted(cols)
s = [l["v"] for l in lines if "t" in l]
cg_cpu = [v[cols["cg.cpu_usage"]] for v in s if v[cols["cg.cpu_usage"]] is not None]
tree = [v[cols["proc.cpu_time"]] for v in s if v[cols["proc.cpu_time"]] is not None]
# The job's cgroup holds every step (the workload, the sampler's own step,
# the batch script): at least what the tree saw of the workload.
print("cg.cpu_usage %.2f s, proc.cpu_time %.2f s" % (cg_cpu[-1] - cg_cpu[0], tree[-1] - tree[0]))
assert cg_cpu[-1] - cg_cpu[0] > 1.5, cg_cpu
assert cg_cpu[-1] - cg_cpu[0] >= 0.9 * (tree[-1] - tree[0]), (cg_cpu[-1], tree[-1])
EOF
[ "$fails" -eq 0 ] || { logs; exit 1; }
echo "check-slurm: passed"

