#!/bin/sh
# --stream (docs/analysis.md, "Analysis in bounded memory") must give the
# in-memory analysis's statistics bit for bit: the text table and the JSON
# of both modes are compared byte for byte on the fixtures and on a
# generated job shaped like a real one (nodes sampled at different
# intervals and offsets, so the aggregate interpolates; counter resets and
# a RAPL wrap; gaps; a repeated timestamp; a node whose sampler restarted,
# two files; a GPU; a metric of one node whose values differ in their last
# bits only, so that p50's and p95's buckets are narrowed through every
# level of the key), with --align=index, --start/--end and --repair, and
# with phases (events files: each phase's figures per host).  The
# pooled count, sd, p50 and max of one metric are also checked against the
# values computed here from the generated numbers.  --csv, --data,
# --hdf5 (h5dump), --trace and --html (a 14-node job) are compared between
# both modes too, and the streamed CSV and trace against the input files
# (rows per host, one host's
# values and rates; the phases and one host's CPU track).
set -u
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
export PERFMON_TEMPLATES="$PM_ROOT/templates"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed: no generated job"
    exit 0
fi

python3 - "$T/job" <<'EOF'
import json, math, os, sys
d = sys.argv[1]
os.makedirs(d)
cols = [("cpu.percent", "%", "cpu", "gauge", 0), ("cpu.ncpus", "1", "cpu", "gauge", 0),
        ("cpu.user", "s", "cpu", "counter", 0), ("mem.total", "B", "memory", "gauge", 0),
        ("mem.used", "B", "memory", "gauge", 0), ("disk.read_bytes", "B", "disk", "counter", 0),
        ("net.ext.bytes_sent", "B", "net", "counter", 0),
        ("rapl.package-0", "uJ", "rapl", "counter", 1 << 32)]
gpu = [("gpu.0.util", "%", "gpu", "gauge", 0), ("gpu.0.power", "W", "gpu", "gauge", 0)]
t0 = 1700000000.25
cpu_all = []
def write(path, host, start, n, step, seed, with_gpu=False, resets=(), gaps=(), dup=None, end=True):
    cs = cols + (gpu if with_gpu else [])
    hdr = {"format": "perfmon-profile", "version": 1, "host": host, "job_id": "stream-1",
           "scheduler": "local", "node_rank": "", "user": "", "command": "", "sampler": "gen",
           "start": start, "start_mono": 100.0, "interval": step, "pid": 0,
           "columns": [{"name": c[0], "unit": c[1], "group": c[2], "kind": c[3], "type": "f64",
                        **({"wrap": c[4]} if c[4] else {})} for c in cs]}
    user = disk = net = 0.0
    rapl = (1 << 32) - 5e6 * (seed % 7 + 1)
    with open(path, "w") as f:
        f.write(json.dumps(hdr) + "\n")
        t = start
        for i in range(n):
            t = start + i * step
            if dup is not None and i == dup:
                t = start + (i - 1) * step  # not increasing: dropped
            cpu = 50 + 40 * math.sin(i / 17.0 + seed) + (seed % 5)
            user += step * (1 + seed % 3) * 0.37
            if i in resets:
                user = 0.5
            disk += 4096 * ((i * 7 + seed) % 13)
            net += 1000.5 * ((i + seed) % 5)
            rapl = (rapl + 3.1e6 * step) % (1 << 32)
            v = [round(cpu, 3), 4, round(user, 3), 8e9, 2e9 + 1e6 * ((i * seed) % 50), disk, net, rapl]
            if i in gaps:
                v[0] = None
                v[4] = None
            if with_gpu:
                v += [(i * 3 + seed) % 100, 120 + (i % 9)]
            if v[0] is not None and not (dup is not None and i == dup):
                cpu_all.append(v[0])
            f.write(json.dumps({"t": round(t, 6), "mono": round(100 + t - start, 6), "v": v}) + "\n")
        if end:
            f.write(json.dumps({"end": {"t": round(t, 6), "mono": round(100 + t - start, 6),
                                        "samples": n, "late": 0, "missed": 0, "self_cpu": 0.1,
                                        "self_maxrss_kb": 2048, "exit_status": 0,
                                        "reason": "command exited"}}) + "\n")
write(f"{d}/n1.jsonl", "n1", t0, 700, 1.0, 1, resets=(200, 450), gaps=range(300, 320))
write(f"{d}/n2.jsonl", "n2", t0 + 0.4, 350, 2.0, 2, with_gpu=True, gaps=(5, 6, 7))
write(f"{d}/n3a.jsonl", "n3", t0 + 3.1, 300, 1.0, 3, dup=100, end=False)
write(f"{d}/n3b.jsonl", "n3", t0 + 320.1, 380, 1.0, 4, resets=(10,))
write(f"{d}/n4.jsonl", "n4", t0 + 30.7, 600, 1.0, 5)
# A node that alone records load.1, with values that differ only in their
# last bits (groups 2^-30 apart, members 2^-44 apart): the buckets of
# load_1's p50 and p95 are narrowed down through every level of the key
# (with PM_STREAM_GATHER=1 below).
hdr = {"format": "perfmon-profile", "version": 1, "host": "n5", "job_id": "stream-1",
       "scheduler": "local", "node_rank": "", "user": "", "command": "", "sampler": "gen",
       "start": t0 + 1.5, "start_mono": 100.0, "interval": 1.0, "pid": 0,
       "columns": [{"name": "load.1", "unit": "1", "group": "cpu", "kind": "gauge", "type": "f64"}]}
with open(f"{d}/n5.jsonl", "w") as f:
    f.write(json.dumps(hdr) + "\n")
    for i in range(500):
        v = 37.5 + ((i * 7) // 10 % 50) * 2.0 ** -30 + (i * 3 % 10) * 2.0 ** -44
        f.write(json.dumps({"t": round(t0 + 1.5 + i, 6), "mono": 100.0 + i, "v": [v]}) + "\n")
# the cpu_usage values the analysis pools (the GPU's cpu.percent is its node's)
with open(f"{d}/../cpu.txt", "w") as f:
    s = sorted(cpu_all)
    m = len(s)
    h = (m - 1) * 0.5
    lo = int(math.floor(h))
    p50 = s[lo] + (h - lo) * (s[lo + 1] - s[lo])
    mean = sum(cpu_all) / m
    sd = math.sqrt(sum((x - mean) ** 2 for x in cpu_all) / (m - 1))
    f.write("%d %.12g %.12g %.12g\n" % (m, sd, p50, s[-1]))
EOF

# both modes, byte for byte
same() {
    $A "$@" -q >"$T/mem" 2>"$T/mem.err"
    r1=$?
    $A "$@" -q --stream >"$T/str" 2>"$T/str.err"
    r2=$?
    [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ -s "$T/mem" ] && cmp -s "$T/mem" "$T/str"
}
J="$T/job"
F="$PM_ROOT/fixtures"
check "fixtures/perfmon --stats: same text" same "$F/perfmon" --stats
check "fixtures/perfmon --json: same JSON" same "$F/perfmon" --stats --json
check "fixtures/perfmon --align=index --json" same "$F/perfmon" --stats --json --align=index
check "two profiles of fixtures/compare/base --json" same "$F/compare/base/node-1.pmp" \
    "$F/compare/base/node-2.pmp" --json
check "generated job --stats: same text" same "$J" --stats
check "generated job --json: same JSON" same "$J" --json
check "generated job --align=index --json" same "$J" --json --align=index
check "generated job --start/--end --json" same "$J" --json --start +100 --end +500
check "generated job --repair=interp --json" same "$J" --json --repair=interp
check "generated job --repair=zero --stats" same "$J" --stats --repair=zero
# Phases (events files): each phase's window means and resource use come
# from the fold, one host at a time, and are combined as in memory.  n1
# repeats a kind, n2's phases cover its GPU too, n3's spans its two
# files, n5's falls between two samples, n4 has none, n9 is no host, and
# one phase has no length.
P="$T/phased"
cp -r "$J" "$P"
python3 - "$P" <<'EOF2'
import json, sys
t0 = 1700000000.25
ph = {"n1": [("setup", 5, 60), ("compute", 60, 400), ("io", 400, 650), ("compute", 655, 690)],
      "n2": [("setup", 2, 40), ("compute", 40, 600), ("io", 600, 600)],
      "n3": [("compute", 250, 450)], "n5": [("setup", 3.2, 3.7)], "n9": [("compute", 10, 20)]}
for host, phases in ph.items():
    with open(f"{sys.argv[1]}/{host}.events", "w") as f:
        for name, a, b in phases:
            for edge, t in (("start", a), ("end", b)):
                ns = int(round((t0 + t) * 1e9))
                f.write(json.dumps({"perfmon_event": 1, "host": host, "pid": 1, "wall_ns": str(ns),
                                    "mono_ns": str(int(round((100 + t) * 1e9))), "name": name,
                                    "edge": edge, "attrs": {}}) + "\n")
EOF2
check "phases --stats: same text" same "$P" --stats
check "phases --json: same JSON" same "$P" --json
check "phases --by-phase: same text" same "$P" --stats --by-phase
check "phases --start/--end --json" same "$P" --json --start +100 --end +500
$A "$P" --json -q --stream >"$T/p.json" 2>/dev/null
# io: n1's 250 s and n2's empty phase (weight 1e-9), so its cpu_usage
# mean is that of n1's generated samples in [400, 650] s.
check "phases: io's count, nodes, seconds and cpu_usage mean as generated" python3 - "$T/p.json" <<'EOF2'
import json, math, sys
j = json.load(open(sys.argv[1]))
io = [k for k in j["phases"]["kinds"] if k["name"] == "io"][0]
v = [round(50 + 40 * math.sin(i / 17.0 + 1) + 1, 3) for i in range(400, 651)]
want = sum(v) / len(v)
got = io["by_metric"]["cpu_usage"]["mean"]
ok = io["count"] == 2 and io["nodes"] == 2 and io["total_s"] == 250 and abs(got - want) < 1e-6
print("io: count %s nodes %s total_s %s cpu_usage mean %.9f (generated %.9f)" %
      (io["count"], io["nodes"], io["total_s"], got, want))
sys.exit(0 if ok else 1)
EOF2

$A "$J" --json -q >"$T/mem" 2>/dev/null
PM_STREAM_GATHER=1 $A "$J" --json -q --stream >"$T/narrow" 2>/dev/null
check "p50/p95 buckets narrowed down to single keys (more passes): same JSON" \
    cmp -s "$T/mem" "$T/narrow"
PM_THREADS=1 $A "$J" --json -q --stream >"$T/one" 2>/dev/null
PM_THREADS=3 $A "$J" --json -q --stream >"$T/three" 2>/dev/null
check "1 or 3 threads: same JSON" cmp -s "$T/one" "$T/three"
# The refine passes read the fold's values back from its spill file; with
# PM_STREAM_SPILL=0 (as when $TMPDIR has no room) they read and derive
# every host again: the same bytes both ways, and no file left behind.
PM_STREAM_SPILL=0 $A "$J" --json -q --stream >"$T/reread" 2>/dev/null
check "without the spill (every host read again): same JSON" cmp -s "$T/mem" "$T/reread"
PM_STREAM_SPILL=0 PM_STREAM_GATHER=1 $A "$J" --json -q --stream >"$T/reread1" 2>/dev/null
check "without the spill, buckets narrowed to single keys: same JSON" cmp -s "$T/mem" "$T/reread1"
# A metric's first series reserves room for all of its hosts' values (22
# KiB here) within an eighth of --memory: with 200 KiB, a few metrics are
# spilled and the rest read again, in the same refine passes.
for g in "" 1; do
    PM_STREAM_GATHER=$g $A "$J" --json -q --stream --memory 200K >"$T/part$g" 2>/dev/null
done
check "the spill holding some metrics, the others read again: same JSON" \
    sh -c "cmp -s '$T/mem' '$T/part' && cmp -s '$T/mem' '$T/part1'"
mkdir "$T/tmpdir"
TMPDIR="$T/tmpdir" $A "$J" --json -q --stream >"$T/viafile" 2>/dev/null
check "the spill: same JSON, and no file left in TMPDIR" \
    sh -c "cmp -s '$T/mem' '$T/viafile' && [ -z \"\$(ls -A '$T/tmpdir')\" ]"
# (the program alone: valgrind itself needs a TMPDIR for its own files)
TMPDIR="$T/no-such-dir" "$PM_BIN/perfmon-analyze" "$J" --json -q --stream >"$T/nodir" 2>/dev/null
check "no TMPDIR to spill to: same JSON" cmp -s "$T/mem" "$T/nodir"

# The slope rules (a leak: process-tree RSS growing steadily) read each
# host's slope, which the stream keeps for the metrics they name alone.
python3 - "$T/leak" <<'EOF'
import json, os, sys
d = sys.argv[1]
os.makedirs(d)
for k, host in enumerate(("l1", "l2")):
    hdr = {"format": "perfmon-profile", "version": 1, "host": host, "job_id": "leak-1",
           "scheduler": "local", "node_rank": "", "user": "", "command": "", "sampler": "gen",
           "start": 1700000000.0, "start_mono": 100.0, "interval": 1.0, "pid": 0,
           "columns": [{"name": n, "unit": u, "group": "proc", "kind": "gauge", "type": "f64"}
                       for n, u in (("proc.rss", "B"), ("proc.fds", "1"), ("cpu.percent", "%"))]}
    with open(f"{d}/{host}.jsonl", "w") as f:
        f.write(json.dumps(hdr) + "\n")
        for i in range(900):
            rss = 1e8 + (i * 2e5 if k == 0 else (i % 7) * 1e3)
            f.write(json.dumps({"t": 1700000000.0 + i, "mono": 100.0 + i,
                                "v": [rss, 40 + i % 3, 50 + i % 11]}) + "\n")
EOF
check "a leak: same JSON in both modes" same "$T/leak" --json
check "a leak: the stream's JSON has the rss_growth note of l1 alone" python3 - "$T/str" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
n = [x for x in j["notes"] if x["rule"] == "rss_growth"]
sys.exit(0 if len(n) == 1 and "l1" in json.dumps(n[0]) else 1)
EOF

# The streamed numbers against the generated ones.
$A "$J" --json -q --stream >"$T/s.json" 2>/dev/null
check "pooled count, sd, p50 and max of cpu_usage as generated" python3 - "$T/s.json" "$T/cpu.txt" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
m, sd, p50, mx = open(sys.argv[2]).read().split()
r = [x for x in j["metrics"] if x["id"] == "cpu_usage"][0]["all"]
ok = r["valid"] == int(m) and abs(r["stddev"] - float(sd)) < 1e-9 * float(sd) and \
    abs(r["p50"] - float(p50)) < 1e-9 and abs(r["max"] - float(mx)) < 1e-9
if not ok:
    print("      got", r.get("valid"), r.get("stddev"), r.get("p50"), r.get("max"),
          "want", m, sd, p50, mx)
sys.exit(0 if ok else 1)
EOF
check "six hosts (a GPU among them), a wrap and repairs seen" python3 - "$T/s.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
hosts = set()
for m in j["metrics"]:
    hosts |= set(m["hosts"])
rep = sum(m["quality"]["repaired"] for m in j["metrics"])
wraps = sum(m["quality"]["wraps_corrected"] for m in j["metrics"])
sys.exit(0 if len(hosts) == 6 and any(h.startswith("gpu-") for h in hosts) and rep > 0 and wraps > 0 else 1)
EOF

# --trace: the counter tracks written host by host to spill files, the
# phases and names after the analysis; the same bytes as in memory.
sametrace() {
    rm -f "$T/t1.json" "$T/t2.json"
    $A "$@" -q --trace "$T/t1.json" >/dev/null 2>&1 &&
        $A "$@" -q --stream --trace "$T/t2.json" >/dev/null 2>&1 &&
        [ -s "$T/t1.json" ] && cmp -s "$T/t1.json" "$T/t2.json"
}
check "generated job --trace: the same trace" sametrace "$J"
check "generated job --align=index --trace" sametrace "$J" --align=index
check "phases --start/--end --repair=interp --trace" sametrace "$P" --start +100 --end +500 \
    --repair=interp
check "fixtures/compare/base (phases) --trace" sametrace "$F/compare/base"
check "fixtures/perfmon --trace --stats" sametrace "$F/perfmon" --stats
check "phases --trace: the same trace" sametrace "$P"
$A "$P" -q --stream --trace "$T/t2.json.gz" >/dev/null 2>&1
check "--stream --trace .gz: the same trace, gzip" sh -c "gzip -dc '$T/t2.json.gz' | cmp -s - '$T/t1.json'"
check "--stream --trace: no spill or temporary file left behind" \
    sh -c "! ls -A '$T' | grep -q -e spill -e '[.]tmp'"
# The streamed trace against the input: the 10 phases of the events files
# (n9, no host, a process of its own), and n4's cpu_usage track is its
# file's cpu.percent, sample by sample (600 samples: no bucket merges).
check "--stream --trace: the phases and n4's CPU track as in the files" python3 - "$T/t2.json" "$P" <<'EOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
pid = {e["args"]["name"]: e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
ph = [e for e in ev if e["ph"] == "X"]
want = {"n1": 4, "n2": 3, "n3": 1, "n5": 1, "n9": 1}
got = {h: sum(1 for e in ph if e["pid"] == pid[h]) for h in want}
src = [json.loads(l) for l in open(sys.argv[2] + "/n4.jsonl")]
src = [s["v"][0] for s in src if "t" in s and "v" in s]
cpu = [e["args"]["value"] for e in ev if e["ph"] == "C" and e["pid"] == pid["n4"] and
       e["name"].startswith("CPU")]
bad = len(cpu) != len(src) or any(abs(a - b) > 1e-8 * abs(b) for a, b in zip(cpu, src))
if got != want or bad:
    print("      phases per host", got, "want", want, "; n4 CPU points", len(cpu), "file", len(src))
sys.exit(0 if got == want and not bad else 1)
EOF
# The PDF report of this job of 6 hosts (every series drawn whole: kept
# whole by the fold; a GPU, a node of two files, a metric of one node),
# byte for byte (more in stream_pdf.sh).
samepdf() {
    SOURCE_DATE_EPOCH=1700000000 $A "$@" -q --pdf "$T/m.pdf" >/dev/null 2>&1 &&
        SOURCE_DATE_EPOCH=1700000000 $A "$@" -q --stream --pdf "$T/s.pdf" >/dev/null 2>&1 &&
        cmp -s "$T/m.pdf" "$T/s.pdf"
}
check "generated job --pdf: the same PDF" samepdf "$J"
check "phases --pdf: the same PDF" samepdf "$P"
# The HTML report of a job of 14 nodes (more than the fold keeps whole)
# of 5,000 samples (more than the band grid's 4,000 points): the same
# bytes, each node's per-node line its own 5,000 samples (kept for the
# HTML in the rows' file), and the PDF the same with --html as without.
python3 "$PM_ROOT/tests/support/html_job.py" "$T/h14" 14 5000
samehtml() {
    SOURCE_DATE_EPOCH=1700000000 $A "$@" -q --html "$T/m.html" >/dev/null 2>&1 &&
        SOURCE_DATE_EPOCH=1700000000 $A "$@" -q --stream --html "$T/s.html" >/dev/null 2>&1 &&
        cmp -s "$T/m.html" "$T/s.html"
}
check "14 x 5,000 --html: the same HTML" samehtml "$T/h14"
check "14 x 5,000 --html: each node's line has its 5,000 samples" python3 - "$T/s.html" <<'EOF'
import json, re, sys
d = json.loads(re.search(r'id="pm-data">(.*?)</script>', open(sys.argv[1], encoding="utf-8").read(), re.S).group(1))
rows = [r for c in d["charts"] for r in c.get("rows", [])]
lens = {d["blobs"][r[k]][0] for r in rows for k in ("t", "v")}
if len(rows) < 2 * 11 or lens != {5000}:
    print("      %d rows, lengths %r" % (len(rows), sorted(lens)))
    sys.exit(1)
EOF
check "14 x 5,000 --stream: the same PDF with --html as without" sh -c \
    "SOURCE_DATE_EPOCH=1700000000 $A '$T/h14' -q --stream --pdf '$T/a.pdf' --html '$T/a.html' &&
     SOURCE_DATE_EPOCH=1700000000 $A '$T/h14' -q --stream --pdf '$T/b.pdf' && cmp -s '$T/a.pdf' '$T/b.pdf'"
check "fixtures/compare/base (phases) --by-phase" same "$F/compare/base" --stats --by-phase

# --csv, --data and --hdf5 (written host by host in the pass after the
# fold, --data's per-node files through a spill file): the same bytes as
# in memory (HDF5: the same h5dump, but for its first line, the file name).
exports() {
    rm -rf "$T/e1" "$T/e2"
    mkdir "$T/e1" "$T/e2"
    h5=""
    [ -n "$H5DUMP" ] && h5="--hdf5"
    $A "$@" -q --csv "$T/e1/c.csv" --data "$T/e1/d" ${h5:+$h5 "$T/e1/f.h5"} >/dev/null 2>&1 || return 1
    $A "$@" -q --stream --csv "$T/e2/c.csv" --data "$T/e2/d" ${h5:+$h5 "$T/e2/f.h5"} \
        >/dev/null 2>&1 || return 1
    [ -s "$T/e1/c.csv" ] && cmp -s "$T/e1/c.csv" "$T/e2/c.csv" || return 1
    [ -n "$(ls "$T/e1/d")" ] && diff -r "$T/e1/d" "$T/e2/d" >/dev/null || return 1
    if [ -n "$h5" ]; then
        h5dump "$T/e1/f.h5" | sed 1d >"$T/e1/f.dump" && h5dump "$T/e2/f.h5" | sed 1d >"$T/e2/f.dump" &&
            [ -s "$T/e1/f.dump" ] && cmp -s "$T/e1/f.dump" "$T/e2/f.dump" || return 1
    fi
}
H5DUMP=$(command -v h5dump 2>/dev/null || true)
[ -n "$H5DUMP" ] || echo "note  h5dump not installed (hdf5-tools): --hdf5 not compared"
check "fixtures/perfmon --csv --data --hdf5: same files" exports "$F/perfmon"
check "fixtures/perfmon --align=index: same files" exports "$F/perfmon" --align=index
check "fixtures/compare/base (phases): same files" exports "$F/compare/base"
check "generated job: same files" exports "$J"
check "generated job --align=index --digits 17: same files" exports "$J" --align=index --digits 17
check "generated job --start/--end --repair=interp: same files" exports "$J" --start +100 \
    --end +500 --repair=interp
check "phases: same files (timings and timeline)" exports "$P"
PM_THREADS=1 $A "$J" -q --stream --csv "$T/one.csv" >/dev/null 2>&1
check "generated job, 1 thread: the CSV of 2 threads" cmp -s "$T/one.csv" "$T/e2/c.csv"
# An output that cannot be written (or a full disk, /dev/full): the same
# message and exit status as in memory, after the same statistics.
for o in "--csv $T/no/c.csv" "--csv /dev/full" "--data $T/no/d/e" "--hdf5 $T/no/f.h5" \
    "--trace $T/no/t.json"; do
    $A "$J" --stats $o >"$T/w1" 2>"$T/w1.err"
    r1=$?
    $A "$J" --stats --stream $o >"$T/w2" 2>"$T/w2.err"
    r2=$?
    check "${o%% *} ${o##*/}: exit 3 both ways, the same message and statistics" \
        sh -c "[ $r1 -eq 3 ] && [ $r2 -eq 3 ] && [ -s '$T/w1.err' ] && cmp -s '$T/w1.err' '$T/w2.err' && cmp -s '$T/w1' '$T/w2'"
done
ls -A "$T/e2/d" | grep -q spill
check "--data: no spill file left behind" test $? -ne 0
# The streamed CSV against the input files: each host's rows are its
# samples (n3: two files, one repeated time dropped), and n4's cpu_usage
# and cpu_user are its file's cpu.percent and the change of cpu.user per
# second, computed here.
$A "$J" -q --stream --csv "$T/s.csv" >/dev/null 2>&1
check "--stream --csv: rows per host and n4's values as in its file" python3 - "$T/s.csv" "$J" <<'EOF'
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1])))
head, rows = rows[0], rows[1:]
def lines(name):
    out = []
    for l in open(sys.argv[2] + "/" + name):
        j = json.loads(l)
        if "t" in j and "v" in j:
            out.append(j)
    return out
want = {"n1": 700, "n2": 350, "gpu-0.n2": 350, "n3": 300 + 380 - 1, "n4": 600, "n5": 500}
got = {}
for r in rows:
    got[r[0]] = got.get(r[0], 0) + 1
ok = got == want
if not ok:
    print("      rows per host", got, "want", want)
n4 = [r for r in rows if r[0] == "n4"]
src = lines("n4.jsonl")
cu, us = head.index("cpu_usage [%]"), head.index("cpu_user [s/s]")
bad = 0
for i, (r, s) in enumerate(zip(n4, src)):
    if abs(float(r[1]) - s["t"]) > 1e-3 or abs(float(r[cu]) - s["v"][0]) > 1e-9 * abs(s["v"][0]):
        bad += 1
    rate = None if i == 0 else (s["v"][2] - src[i - 1]["v"][2]) / (s["t"] - src[i - 1]["t"])
    if (rate is None) != (r[us] == "") or (rate is not None and abs(float(r[us]) - rate) > 1e-9 * rate):
        bad += 1
if bad:
    print("      n4: %d values differ from its file" % bad)
sys.exit(0 if ok and not bad and len(n4) == len(src) else 1)
EOF

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
