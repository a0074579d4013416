#!/bin/sh
# perfmon-sample on captured /proc and /sys trees (--proc-root, --sys-root),
# the trees of fixtures/nodes/, compared with the files themselves and with
# the kernel's own accounting of the sampler:
# - captured: "self" is a link to the process that copied the tree (4 GiB
#   resident); the sampler's own RSS must be its own (near its peak RSS from
#   getrusage, in the end record: the kernel's RSS counters are per-CPU
#   approximations, so not exactly), never that file's.  No /sys/block:
#   the disks come from diskstats.
# - minimal: no MemAvailable: memory used = total - free - buffers - cached,
#   said in the metadata, and the analysis shows the node's memory.
# - impossible: values no kernel can produce are not recorded, and each is
#   noted once however many samples read it.
set -u
S="${PM_WRAP:-} $PM_BIN/perfmon-sample"
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
F="$PM_ROOT/fixtures/nodes"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP  python3 not installed"; exit 0; }

# check_profile DIR PYTHON: runs PYTHON with `p` = the profile's header
# (columns by name), `meta`, `rows` (dicts column -> value, None when not
# recorded) and `end`; it prints the problems, nothing when right.
check_profile() {
    python3 - "$1" "$2" <<'PY'
import glob, json, sys
files = glob.glob(sys.argv[1] + "/*.pmp.jsonl")
if len(files) != 1:
    print("expected one profile, found", len(files)); sys.exit()
f = open(files[0])
p = json.loads(f.readline())
names = [c["name"] for c in p["columns"]]
meta = json.loads(f.readline())["metadata"]
rows, end = [], None
for line in f:
    r = json.loads(line)
    if "v" in r:
        rows.append(dict(zip(names, r["v"])))
    elif "end" in r:
        end = r["end"]
if end is None or len(rows) < 3:
    print("incomplete profile:", len(rows), "samples, end", end); sys.exit()
exec(sys.argv[2])
PY
}

run_on() { # NAME NODE: sample NODE's trees for 0.6 s into $T/NAME
    $S -o "$T/$1" -i 0.2 -d 0.6 -f json -v --proc-root "$F/$2/proc" --sys-root "$F/$2/sys" \
        >"$T/$1.out" 2>"$T/$1.err"
}

# --- captured: the sampler's own RSS, disks without /sys/block.
run_on cap captured
check "captured tree: exit 0 ($(tail -n 2 "$T/cap.err" | tr '\n' ' '))" [ $? -eq 0 ]
check_profile "$T/cap" '
fake = 1048576 * 4096  # captured/proc/4242/statm, the target of "self"
peak = end["self_maxrss_kb"] * 1024
for r in rows:
    v = r["sampler.rss"]
    if v is None or not 0.5 * peak <= v <= 1.5 * peak + 262144:
        print("sampler.rss", v, "is not the sampler own: its peak RSS is", peak, "the tree says", fake)
        break
# diskstats sums of sda nvme0n1 mmcblk0 mmcblk0boot0 vda sr0, by hand.
want = {"disk.read_ops": 4015, "disk.read_bytes": 260120 * 512, "disk.write_ops": 2400,
        "disk.write_bytes": 171000 * 512, "disk.busy_time": 8.33}
for k, w in want.items():
    for r in rows:
        if r[k] is None or abs(r[k] - w) > 1e-9 * w:
            print(k, r[k], "expected", w); break
if meta.get("disks_from") != "diskstats" or meta.get("disk_counters") != "ok":
    print("metadata disks_from", meta.get("disks_from"), "disk_counters", meta.get("disk_counters"))
if meta["sources"]["disk"] != "ok" or len(meta.get("disks", [])) != 6:
    print("metadata disks", meta.get("disks"))
' >"$T/cap.check"
check "captured tree: sampler RSS is its own, disks from diskstats ($(head -c 300 "$T/cap.check"))" [ ! -s "$T/cap.check" ]

# --- minimal: no MemAvailable.
run_on min minimal
check "minimal tree: exit 0" [ $? -eq 0 ]
check_profile "$T/min" '
used = (2048000 - 512000 - 100000 - 700000) * 1024  # minimal/proc/meminfo, by hand
for r in rows:
    if r["mem.used"] != used or r["mem.percent"] is None or abs(r["mem.percent"] - 35.9375) > 1e-9:
        print("mem.used", r["mem.used"], "mem.percent", r["mem.percent"], "expected", used, 35.9375); break
    if r["mem.available"] is not None:
        print("mem.available made up:", r["mem.available"]); break
if not meta.get("mem_used", "").startswith("MemTotal - MemFree - Buffers - Cached"):
    print("metadata mem_used", meta.get("mem_used"))
' >"$T/min.check"
check "minimal tree: memory used is total - free - buffers - cached, and the metadata says so ($(head -c 300 "$T/min.check"))" [ ! -s "$T/min.check" ]
$A "$T/min" --stats --json >"$T/min.json" 2>"$T/min.aerr"
check "minimal tree: analyze exits 0" [ $? -eq 0 ]
python3 - "$T/min.json" >"$T/min.acheck" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["job"].get("max_t_mem_percent")
if m is None or abs(m - 35.9375) > 1e-6:
    print("max_t_mem_percent", m)
ids = {x["id"]: x for x in d["metrics"]}
if "mem_usage" not in ids or abs(ids["mem_usage"]["all"]["mean"] - 35.9375) > 1e-6:
    print("mem_usage", ids.get("mem_usage", {}).get("all"))
PY
check "minimal tree: the analysis shows the node's memory, 35.9375 % ($(head -c 300 "$T/min.acheck"))" [ ! -s "$T/min.acheck" ]

# --- impossible: rejected, noted once.
run_on imp impossible
check "impossible values: exit 0" [ $? -eq 0 ]
check_profile "$T/imp" '
gone = ["mem.available", "mem.used", "mem.percent", "mem.cached", "cpu.system", "cpu.ctxt",
        "procs.running", "load.1", "disk.read_bytes", "disk.busy_time", "net.ext.bytes_recv",
        "ib.bytes_sent", "rapl.package-0"]
kept = {"mem.total": 16384000 * 1024, "mem.free": 8000000 * 1024, "cpu.user": 40.0,
        "cpu.idle": 1000.0, "cpu.forks": 3000, "load.5": 0.5, "net.ext.bytes_sent": 5000000,
        "swap.used": 1000000 * 1024, "ib.bytes_recv": 4 * 3500000000, "rapl.dram-0": 23456789012}
for r in rows:
    for k in gone:
        if r[k] is not None:
            print(k, "recorded:", r[k])
    for k, w in kept.items():
        if r[k] is None or abs(r[k] - w) > 1e-9 * w:
            print(k, r[k], "expected", w)
' >"$T/imp.check"
check "impossible values: not recorded, the rest as in the files ($(head -c 300 "$T/imp.check"))" [ ! -s "$T/imp.check" ]
notes=$(grep -c "cannot be real\|no counter can reach" "$T/imp.err")
# MemAvailable, Cached; the node line, cpu1, ctxt/procs_running (one kind),
# the load; sdb; the net sum; the Infiniband sum; package-0's energy: 10
# notes for 4 samples.
check "impossible values: each noted once over 4 samples ($notes notes)" [ "$notes" -eq 10 ]

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
