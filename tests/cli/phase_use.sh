#!/bin/sh
# pm-test: alone (its spinners must get their CPU time: the checks compare it with the kernel's)
# Resource use per phase (docs/analysis.md, "Resource use per phase") on a
# real sampled job with three marked phases of known shape: `write` writes
# 64 MiB with fsync, `spin` keeps 2 processes busy for 1.5 s, `alloc`
# holds 300 MiB.  Each cell of --stats --json's phases.kinds[].use is
# compared with a hand computation from the JSONL profile's raw columns
# and the events file, read here (the counters taken as linear between
# samples, the CPU's busy share from /proc/stat's jiffies); the disk bytes
# and the spinners' CPU time with the kernel's own numbers as read by the
# workload; the --stats text and page 1 of the report show the same
# cells; and the same on a directory reused by a second run (--run last).
# The job runs under a bare sampler (timing matters; see counters.sh).
set -u
S="$PM_BIN/perfmon-sample"
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP  python3 not installed"; exit 0; }

# The kernel's node-wide bytes written to the whole disks (the names of
# /sys/block but stacked and virtual ones, which the sampler sums: see
# docs/format.md; 512-byte sectors, field 10 of /proc/diskstats), with the
# wall times just before and after reading it: "LABEL T0 BYTES T1".
cat >"$T/kdisk.sh" <<'SH'
t0=$(date +%s.%N)
w=$(awk -v list="$(ls /sys/block)" 'BEGIN { n = split(list, a)
    for (i = 1; i <= n; i++) if (a[i] !~ /^(loop|ram|zram|dm-|md|nbd)/) d[a[i]] = 1 }
    ($3 in d) { s += $10 } END { printf "%.0f", s * 512 }' /proc/diskstats)
echo "$1 $t0 $w $(date +%s.%N)" >>"$2"
SH
# The bytes the shell's reaped children (dd) caused to be written to
# storage: write_bytes of its /proc/PID/io (proc(5)).
io() { echo "grep '^write_bytes:' /proc/\$\$/io | cut -d' ' -f2 >>'$1'"; }
M="$PM_BIN/perfmon-sample mark --host n1"
K="sh $T/kdisk.sh"
job() { # DIR: one sampled job of three phases; the kernel's numbers in DIR/kernel.*
    # (each kernel.disk reading lies 0.3 s, 3 sampling intervals, outside the phases)
    $S -o "$1" -i 0.1 -f json --host n1 -j use -- sh -c "
        $K before '$1/kernel.disk'
        sleep 0.3
        $M -o '$1' write start
        sleep 0.3
        $(io "$1/kernel.dd")
        dd if=/dev/zero of='$1/blob' bs=1M count=64 conv=fsync 2>/dev/null
        $(io "$1/kernel.dd")
        sleep 0.5
        $M -o '$1' write end
        rm -f '$1/blob'
        sleep 0.3
        $K between '$1/kernel.disk'
        sleep 0.3
        $M -o '$1' spin start
        python3 -c '
import os, sys, time
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            pass
        os._exit(0)
    kids.append(pid)
for p in kids:
    os.waitpid(p, 0)
t = os.times()
open(sys.argv[1], \"w\").write(str(t.children_user + t.children_system))
' '$1/kernel.spin'
        $M -o '$1' spin end
        sleep 0.3
        $K after '$1/kernel.disk'
        $M -o '$1' alloc start
        python3 -c '
import sys, time
b = bytearray(300 << 20)
b[::4096] = b\"x\" * len(b[::4096])
hwm = [l for l in open(\"/proc/self/status\") if l.startswith(\"VmHWM:\")][0].split()[1]
open(sys.argv[1], \"w\").write(str(int(hwm) * 1024))
time.sleep(1.0)
' '$1/kernel.alloc'
        $M -o '$1' alloc end
        sleep 0.3" >/dev/null 2>&1
}

# The hand computation: the file's last run (its samples' span) and its marks.
cat >"$T/hand.py" <<'PY'
import json, sys
prof, events, stats = sys.argv[1], sys.argv[2], sys.argv[3]
lines = [json.loads(l) for l in open(prof)]
cols = [c["name"] for c in lines[0]["columns"]]
S = [l for l in lines if "v" in l and "t" in l]
t = [s["t"] for s in S]
def col(name):
    if name not in cols:
        return None
    i = cols.index(name)
    return [s["v"][i] for s in S]
def at(v, x):  # the counter linear between samples
    for i in range(1, len(t)):
        if t[i - 1] <= x <= t[i]:
            return v[i - 1] + (v[i] - v[i - 1]) * (x - t[i - 1]) / (t[i] - t[i - 1])
    raise SystemExit("mark outside the samples")
def slope(v, x):  # the counter's rate between the samples around x
    for i in range(1, len(t)):
        if t[i - 1] <= x <= t[i]:
            return (v[i] - v[i - 1]) / (t[i] - t[i - 1])
    return 0.0
# Times since the epoch held as doubles are exact to about 0.24 us, here as
# in perfmon, which may round a mark or a sample differently: an increase
# interpolated at the marks may differ by the counter's rate times 1 us at
# each end (48 bytes at the 200 MB/s of other processes' writes, seen).
slack = {}
def increase(names, a, b, key):
    tot = None
    for n in names:
        v = col(n)
        if v is not None:
            tot = (tot or 0) + at(v, b) - at(v, a)
            slack[key] = slack.get(key, 0.0) + (abs(slope(v, a)) + abs(slope(v, b))) * 1e-6
    return tot
busy = ["cpu.user", "cpu.nice", "cpu.system", "cpu.irq", "cpu.softirq", "cpu.steal"]
B = [sum(col(n)[i] for n in busy) for i in range(len(S))]
Tt = [B[i] + col("cpu.idle")[i] + col("cpu.iowait")[i] for i in range(len(S))]
ncpus = col("cpu.ncpus")[-1]
mem = col("proc.rss") or col("mem.used")  # the job's RSS where the tree was followed
marks = {}
for l in open(events):
    e = json.loads(l)
    w = int(e["wall_ns"]) / 1e9
    if t[0] <= w <= t[-1]:
        marks.setdefault(e["name"], {})[e["edge"]] = w
want = {}
for name, m in marks.items():
    a, b = m["start"], m["end"]
    core = alloc = 0.0
    # the memory peak: the readings taken inside the phase, else the last before it
    inside = [mem[i] for i in range(len(t)) if a <= t[i] <= b and mem[i] is not None]
    before = [mem[i] for i in range(len(t)) if t[i] < a and mem[i] is not None]
    peak = max(inside) if inside else (before[-1] if before else None)
    for i in range(1, len(t)):
        lo, hi = max(t[i - 1], a), min(t[i], b)
        if hi > lo:
            core += (B[i] - B[i - 1]) / (Tt[i] - Tt[i - 1]) * ncpus * (hi - lo)
            alloc += ncpus * (hi - lo)
    want[name] = {"time_s": b - a, "cpu_core_s": core, "cpu_alloc_core_s": alloc,
                  "cpu_share_pct": core / alloc * 100, "mem_peak_bytes": peak,
                  "disk_read_bytes": increase(["disk.read_bytes"], a, b, (name, "disk_read_bytes")),
                  "disk_write_bytes": increase(["disk.write_bytes"], a, b, (name, "disk_write_bytes")),
                  "net_sent_bytes": increase(["net.ext.bytes_sent", "net.all.bytes_sent"], a, b,
                                             (name, "net_sent_bytes")),
                  "net_recv_bytes": increase(["net.ext.bytes_recv", "net.all.bytes_recv"], a, b,
                                             (name, "net_recv_bytes"))}
got = {k["name"]: k["use"] for k in json.load(open(stats))["phases"]["kinds"]}
bad = 0
assert set(got) == {"write", "spin", "alloc"}, got.keys()
for name, w in want.items():
    for key, x in w.items():
        y = got[name][key]
        tol = 1e-4 * abs(x) + 1e-3 + slack.get((name, key), 0.0) if x is not None else 0
        if (x is None) != (y is None) or (x is not None and abs(x - y) > tol):
            print("  %s %s: perfmon %r, by hand %r" % (name, key, y, x))
            bad += 1
json.dump(want, open(stats + ".hand", "w"))
sys.exit(bad != 0)
PY

for dir in "$T/job" "$T/reused"; do
    mkdir -p "$dir"
    if [ "$dir" = "$T/reused" ]; then
        job "$dir"; rm -f "$dir"/kernel.*  # a first run, then the one analysed
        sleep 1.1  # a run id of its own
    fi
    job "$dir"
    check "$dir: the sampled job exits 0" [ $? -eq 0 ]
    runs=$(ls "$dir"/*.jsonl | wc -l)
    last=$(ls -t "$dir"/*.jsonl | head -1)
    $A "$dir" --run last --stats --json >"$T/stats.json" 2>"$T/err"
    check "$dir: --stats --json exits 0" [ $? -eq 0 ]
    check "$dir: every cell equals the hand computation from the profile ($runs run(s))" \
        python3 "$T/hand.py" "$last" "$dir/n1.events" "$T/stats.json"
    # Disk bytes are the node's: other processes' writes add to every phase.
    # So each phase's bytes lie between what dd itself had written (64 MiB,
    # as the kernel's per-process count confirms, none of it outside the
    # write phase) and
    # the node's bytes between kernel.disk's readings around the phase,
    # which enclose the samples that bound it (a counter linear between
    # samples); neither bound moves when others write.
    check "$dir: write and spin's disk bytes within the kernel's (dd: $(tr '\n' ' ' <"$dir/kernel.dd")B)" python3 -c '
import json, sys
prof, events, stats, kdisk, kdd = sys.argv[1:]
u = {k["name"]: k["use"] for k in json.load(open(stats))["phases"]["kinds"]}
dd0, dd1 = [int(x) for x in open(kdd).read().split()]
assert dd1 - dd0 >= 64 << 20, ("dd wrote less than 64 MiB to storage", dd0, dd1)
# conv=fsync puts dd'"'"'s 64 MiB on the disk inside the phase; the rest of the
# count (a few pages: the shell'"'"'s own small writes, this reading'"'"'s) may
# reach the disk at a later writeback
assert u["write"]["disk_write_bytes"] >= 64 << 20, (u["write"], dd1 - dd0)
k = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in open(kdisk)}
t = [d["t"] for d in map(json.loads, open(prof)) if "v" in d and "t" in d]
marks = {}
for l in open(events):
    e = json.loads(l)
    marks.setdefault(e["name"], {})[e["edge"]] = int(e["wall_ns"]) / 1e9
for name, lo, hi in (("write", "before", "between"), ("spin", "between", "after")):
    a, b = marks[name]["start"], marks[name]["end"]
    # the workload marked the phase after one reading and before the next
    assert k[lo][2] < a < b < k[hi][0], (name, "marks", a, b, "readings", k[lo], k[hi])
    s0 = max(x for x in t if x <= a)
    s1 = min(x for x in t if x >= b)
    if not (k[lo][2] <= s0 and s1 <= k[hi][0]):
        print("  %s: no sample in the 0.3 s around the phase: no upper bound" % name)
        continue
    node = k[hi][1] - k[lo][1]
    assert u[name]["disk_write_bytes"] <= node, (name, u[name], "node-wide", node)
' "$last" "$dir/n1.events" "$T/stats.json" "$dir/kernel.disk" "$dir/kernel.dd"
    check "$dir: spin used at least the spinners' CPU time (kernel: $(cat "$dir/kernel.spin") s), at most 2 CPUs" python3 -c '
import json, sys
u = {k["name"]: k["use"] for k in json.load(open(sys.argv[1]))["phases"]["kinds"]}["spin"]
k = float(open(sys.argv[2]).read())
assert k > 0.5, k
# jiffies: 1/100 s per CPU at each of the two interval ends inside the phase
assert u["cpu_core_s"] >= k * 0.97 - 0.05, (u, k)
assert u["cpu_core_s"] <= u["cpu_alloc_core_s"] + 1e-9, u
' "$T/stats.json" "$dir/kernel.spin"
    check "$dir: alloc's memory peak holds the 300 MiB process (kernel's VmHWM: $(cat "$dir/kernel.alloc") B)" python3 -c '
import json, sys
u = {k["name"]: k["use"] for k in json.load(open(sys.argv[1]))["phases"]["kinds"]}["alloc"]
k = int(open(sys.argv[2]).read())
assert k >= 300 << 20, k
assert u["mem_peak_bytes"] >= k, (u, k)
' "$T/stats.json" "$dir/kernel.alloc"

    # The text and page 1 show the same cells (scaled as the hand computation).
    $A "$dir" --run last --stats >"$T/stats.txt" 2>/dev/null
    check "$dir: --stats has the resource use table" has "$T/stats.txt" "^Resource use per phase"
    python3 - "$T/stats.json" >"$T/rows" <<'PY'
import json, sys
def b(x):
    if x is None: return "-"
    u = ["B", "KiB", "MiB", "GiB", "TiB"]; k = 0
    while k + 1 < len(u) and x >= 1023.95 and (k > 0 or x >= 1023.5):
        x /= 1024; k += 1
    return "%.0f B" % x if k == 0 else ("%.1f %s" % (x, u[k]) if x < 99.95 else "%.0f %s" % (x, u[k]))
def d(s):
    return "%.1f s" % s if s < 9.95 else "%.0f s" % s if s < 59.5 else "%.1f min" % (s / 60)
for k in json.load(open(sys.argv[1]))["phases"]["kinds"]:
    u = k["use"]
    print(" ".join([k["name"], d(u["time_s"]), d(u["cpu_core_s"]), "%.1f %%" % u["cpu_share_pct"],
                    b(u["mem_peak_bytes"]), b(u["disk_read_bytes"]), b(u["disk_write_bytes"]),
                    b(u["net_sent_bytes"]), b(u["net_recv_bytes"])]))
PY
    sed -n '/^Resource use per phase/,/^$/p' "$T/stats.txt" | tr -s ' ' | sed 's/^ //' >"$T/text"
    check "$dir: the text rows are the JSON's numbers scaled" sh -c 'while read -r l; do grep -qxF "$l" "$1" || { echo "  missing: $l"; exit 1; }; done <"$2"' - "$T/text" "$T/rows"
    if command -v pdftotext >/dev/null 2>&1; then
        $A "$dir" --run last --pdf "$T/r.pdf" -q 2>/dev/null
        pdftotext -layout -f 1 -l 1 "$T/r.pdf" "$T/p1"
        # (pdftotext may drop the space in "0 B": compared without spaces)
        tr -d ' ' <"$T/p1" >"$T/p1n"
        # the verdict is a paragraph: its lines joined (where it wraps
        # depends on the byte counts before it, which other processes'
        # writes change on a loaded machine)
        tr -d ' \n' <"$T/p1" >"$T/p1j"
        tr -d ' ' <"$T/rows" >"$T/rowsn"
        check "$dir: page 1 has the table" has "$T/p1n" "Resourceuseperphase"
        python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
u = {k["name"]: k["use"]["disk_write_bytes"] for k in d["phases"]["kinds"]}
# The phase that wrote most (disk bytes are the node counters: on a loaded machine
# writes of other processes can put another phase first, so it is taken from
# the table, not assumed to be "write").
name = max(u, key=lambda k: u[k] if u[k] is not None else -1)
v = u[name] / (d["job"]["total_disk_io_write_mb"] * 1048576) * 100
v = min(v, 100)
print(("%.1f" if (v < 9.95 and v != int(v)) or 99.5 < v < 100 else "%.0f") % v, name)
' "$T/stats.json" >"$T/share"
        read -r share most <"$T/share"
        check "$dir: page 1's verdict puts $share % of the bytes written in phase $most, as the table" \
            has "$T/p1j" "$share%ofthebyteswrittenfellinphase\`$most\`"
        check "$dir: page 1's rows are the same cells" sh -c 'while read -r l; do grep -qxF "$l" "$1" || { echo "  missing: $l"; exit 1; }; done <"$2"' - "$T/p1n" "$T/rowsn"
    fi
done
[ "$fails" -eq 0 ] || exit 1
