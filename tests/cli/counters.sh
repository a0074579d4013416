#!/bin/sh
# Counters end to end: perfmon-sample -- CMD counts the command's software
# events through perf_event_open, the metadata says why hardware events are
# absent where they are, and perfmon-analyze --stats --json reports the
# totals and the counter metrics.
set -u
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP  python3 not installed"; exit 0; }

# A small workload: page faults (dd's 4 MiB buffer) and context switches
# (sleeps), in children and grandchildren of the command.  The sampler runs
# bare here: under valgrind its fork and the child's exec are emulated, and
# the counts checked below are the kernel's, not valgrind's (the other
# sampler runs, under $PM_WRAP, cover this source's code).
$PM_BIN/perfmon-sample -o "$T/p" -i 0.1 -f json -- sh -c 'dd if=/dev/zero of=/dev/null bs=4M count=4 status=none; sleep 0.2; (sleep 0.1; dd if=/dev/zero of=/dev/null bs=1M count=2 status=none)' >"$T/out" 2>"$T/err"
rc=$?
check "sampler exits with the command's status" [ "$rc" -eq 0 ]
prof=$(ls "$T"/p/*.pmp.jsonl)
status=$(python3 -c '
import json, sys
f = open(sys.argv[1])
f.readline()
print(json.loads(f.readline())["metadata"]["sources"]["perf"])' "$prof")
if [ "$status" != ok ]; then
    echo "SKIP  no counters here: $status"
    exit "$fails"
fi
python3 - "$prof" >"$T/meta" <<'PY'
import json, sys
f = open(sys.argv[1])
f.readline()
p = json.loads(f.readline())["metadata"]["perf"]
print("mode", p["mode"])
print("user_space_only", 1 if p.get("user_space_only") else 0)
for k, v in p["events"].items():
    print("event", k, v)
print("table", json.dumps(p["table"]), p.get("table_reason", ""))
PY
# The command starts only after the first sample (the start gate), so the
# baseline of its cumulative columns is taken before it did anything: its
# page faults and CPU time at the first sample are zero, however late that
# sample came (on a loaded node it used to come after dd had finished, and
# the faults were lost in the baseline).
python3 - "$prof" >"$T/first" <<'PY'
import json, sys
f = open(sys.argv[1])
cols = [c["name"] for c in json.loads(f.readline())["columns"]]
first = None
for line in f:
    d = json.loads(line)
    if "v" in d:
        first = dict(zip(cols, d["v"]))
        break
pf, cpu = first.get("perf.page_faults"), first.get("proc.cpu_time")
ok = pf == 0 and cpu is not None and cpu <= 0.01
print("fine" if ok else "first sample: perf.page_faults %r, proc.cpu_time %r" % (pf, cpu))
PY
check "the first sample is taken before the command runs ($(cat "$T/first"))" grep -qx fine "$T/first"
check "metadata says the counters follow the command" grep -q "^mode command" "$T/meta"
check "metadata gives every event a status" [ "$(grep -c '^event perf\.' "$T/meta")" -ge 9 ]
if grep -q "^event perf.cycles ok" "$T/meta"; then
    hw=1
else
    hw=0
    echo "SKIP  hardware events not counted here: $(grep '^event perf.cycles' "$T/meta")"
    check "the refusal has a reason" grep -Eq "^event perf.cycles (not supported|not permitted|refused|counter busy)" "$T/meta"
fi

# Not root under perf_event_paranoid 2: user space only, so the faults of
# dd's reads (the kernel filling its buffer) and the context switches are
# not counted; the counts below hold only for a full count.
uso=$(sed -n 's/^user_space_only //p' "$T/meta")
[ "$uso" = 1 ] && echo "SKIP  fault and context switch counts: the sampler counts user space only here (not root, perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null))"
$A "$T/p" --stats --json >"$T/stats.json" 2>"$T/err"
check "analyze --stats --json exits 0" [ "$?" -eq 0 ]
python3 - "$T/stats.json" "$hw" "$uso" >"$T/check" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
job = d["job"]
bad = []
full = sys.argv[3] != "1"
# dd touches 4 MiB + 1 MiB of buffers: at least 1280 faults.
if not (job.get("perf_page_faults") or 0) >= (1280 if full else 1):
    bad.append("perf_page_faults %r" % job.get("perf_page_faults"))
# Three sleeps: at least three context switches.
if full and not (job.get("perf_context_switches") or 0) >= 3:
    bad.append("perf_context_switches %r" % job.get("perf_context_switches"))
ids = {m["id"] for m in d["metrics"]}
for m in ("perf_page_faults", "perf_context_switches") if full else ("perf_page_faults",):
    if m not in ids:
        bad.append("metric %s missing" % m)
if sys.argv[2] == "1":
    if not job.get("perf_instructions") or not job.get("perf_ipc"):
        bad.append("instructions/IPC missing")
elif job.get("perf_instructions") is not None:
    bad.append("instructions reported without a PMU")
print("\n".join(bad) if bad else "fine")
PY
check "page faults and context switches in --stats --json ($(tr '\n' ' ' <"$T/check"))" grep -qx fine "$T/check"

$A "$T/p" --stats >"$T/stats.txt" 2>&1
check "text statistics list the page faults" grep -q "perf_page_faults" "$T/stats.txt"

# Derived metrics against hand-computed values, on a profile written here
# as a node with a PMU would record it: 1 s samples; per second 2e9
# instructions over 1e9 cycles (IPC 2), then 3e9 over 1e9 (IPC 3); cache
# misses 10 of 100 references (10 %); 5e8 double-precision FLOP/s
# (500 MFLOP/s); 64e6 bytes from memory per second (64 MB/s).
mkdir -p "$T/hand"
python3 - "$T/hand/job_node.pmp.jsonl" <<'PY'
import json, sys
cols = ["perf.instructions", "perf.cycles", "perf.cache_references", "perf.cache_misses",
        "perf.flops_dp", "perf.mem_bytes"]
head = {"format": "perfmon-profile", "version": 1, "host": "node", "job_id": "hand",
        "scheduler": "local", "node_rank": "", "user": "u", "command": "solver",
        "sampler": "perfmon-sample 0.1.0", "start": 1700000000.0, "start_mono": 100.0,
        "interval": 1.0, "pid": 1,
        "columns": [{"name": c, "unit": "1", "group": "perf", "kind": "counter", "type": "u64"}
                    for c in cols]}
rows, acc = [], [0, 0, 0, 0, 0, 0]
steps = [(2e9, 1e9, 100, 10, 5e8, 64e6)] * 3 + [(3e9, 1e9, 100, 10, 5e8, 64e6)] * 3
with open(sys.argv[1], "w") as f:
    f.write(json.dumps(head, separators=(",", ":")) + "\n")
    f.write(json.dumps({"metadata": {"hostname": "node"}}) + "\n")
    for i in range(len(steps) + 1):
        f.write(json.dumps({"t": 1700000000.0 + i, "mono": 100.0 + i, "v": acc}) + "\n")
        if i < len(steps):
            acc = [a + b for a, b in zip(acc, steps[i])]
PY
$A "$T/hand" --stats --json >"$T/hand.json" 2>"$T/err"
check "hand-made counter profile analyses" [ "$?" -eq 0 ]
python3 - "$T/hand.json" >"$T/check" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
job = d["job"]
m = {x["id"]: x for x in d["metrics"]}
bad = []
def near(name, got, want):
    if got is None or abs(got - want) > 1e-6 * max(1, abs(want)):
        bad.append("%s %r != %r" % (name, got, want))
near("perf_instructions", job.get("perf_instructions"), 15e9)
near("perf_cycles", job.get("perf_cycles"), 6e9)
near("job IPC", job.get("perf_ipc"), 2.5)
near("FLOP", job.get("perf_flop"), 3e9)
near("memory bytes", job.get("perf_mem_bytes"), 384e6)
near("IPC max", m["perf_ipc"]["all"]["max"], 3.0)
near("IPC min", m["perf_ipc"]["all"]["min"], 2.0)
near("IPC mean", m["perf_ipc"]["all"]["mean"], 2.5)
near("miss ratio", m["perf_cache_miss_ratio"]["all"]["mean"], 10.0)
near("MFLOP/s", m["perf_flops_dp"]["all"]["mean"], 500.0)
near("MB/s", m["perf_mem_bw"]["all"]["mean"], 64.0)
near("instructions G/s max", m["perf_instructions"]["all"]["max"], 3.0)
print("\n".join(bad) if bad else "fine")
PY
check "IPC, miss ratio, MFLOP/s, MB/s and totals as computed by hand ($(tr '\n' ' ' <"$T/check"))" grep -qx fine "$T/check"

# The report has the counters page group, with the IPC plot.
if command -v pdftotext >/dev/null 2>&1; then
    $A "$T/hand" --pdf "$T/r.pdf" >/dev/null 2>"$T/err"
    check "report of the counter profile exits 0" [ "$?" -eq 0 ]
    pdftotext "$T/r.pdf" "$T/r.txt" 2>/dev/null
    check "report has the hardware counters pages" grep -q "Hardware counters: \(all nodes\|per node\)" "$T/r.txt"
    check "report lists the counter figures" grep -q "Instructions per cycle" "$T/r.txt"
else
    echo "SKIP  poppler-utils not installed: report not checked"
fi

# An unprivileged user under perf_event_paranoid 2 counts user space only:
# page faults are counted, context switches (kernel context) left out.
par=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 9)
if [ "$(id -u)" = 0 ] && [ "$par" = 2 ] && command -v setpriv >/dev/null 2>&1; then
    mkdir "$T/u" && chmod 777 "$T/u" && chmod o+x "$T"
    setpriv --reuid=65534 --regid=65534 --clear-groups $PM_BIN/perfmon-sample -o "$T/u/p" -i 0.1 -f json -- \
        dd if=/dev/zero of=/dev/null bs=4M count=2 status=none >"$T/out" 2>"$T/err"
    check "unprivileged sampler runs" [ "$?" -eq 0 ]
    python3 - "$(ls "$T"/u/p/*.pmp.jsonl)" >"$T/check" 2>&1 <<'PY'
import json, sys
f = open(sys.argv[1])
f.readline()
p = json.loads(f.readline())["metadata"]["perf"]
e = p["events"]
ok = p["user_space_only"] and e["perf.page_faults"] == "ok" and \
    e["perf.context_switches"].startswith("left out: counted in kernel context")
print("fine" if ok else json.dumps(p)[:400])
PY
    check "paranoid 2: user space only, context switches left out with the reason ($(head -c 300 "$T/check"))" grep -qx fine "$T/check"
else
    echo "SKIP  unprivileged counting not checked (needs root, setpriv and perf_event_paranoid 2; it is $par)"
fi
# System-wide: off unless asked for (reading per-CPU counters interrupts
# every CPU each sample); with --system-counters and privilege, on.
srcstat() {
    python3 -c '
import json, sys
f = open(sys.argv[1])
f.readline()
print(json.loads(f.readline())["metadata"]["sources"]["perf"])' "$1"
}
$PM_BIN/perfmon-sample -o "$T/sw" -i 0.1 -d 0.5 -f json >/dev/null 2>&1
st=$(srcstat "$(ls "$T"/sw/*.pmp.jsonl)")
check "system-wide without --system-counters: no counters, and the reason names the option ($st)" \
    sh -c 'case "$1" in *--system-counters*) exit 0 ;; *) exit 1 ;; esac' sh "$st"
if [ "$(id -u)" = 0 ]; then
    $PM_BIN/perfmon-sample -o "$T/sw2" -i 0.1 -d 0.5 -f json --system-counters >/dev/null 2>&1
    st=$(srcstat "$(ls "$T"/sw2/*.pmp.jsonl)")
    check "--system-counters as root counts ($st)" [ "$st" = ok ]
fi
exit "$fails"
