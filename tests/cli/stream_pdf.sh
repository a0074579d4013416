#!/bin/sh
# --stream --pdf and --plots (docs/analysis.md, "Analysis in bounded
# memory") must give the in-memory report byte for byte: the PDF and the
# PNG files of both modes are compared on a generated job of 20 nodes (so
# the per-node plots are bands with outlier lines, and there are colour
# maps), shaped like a real one: a node sampled at another interval, a
# late node, counter resets, gaps, a node whose CPU use differs from the
# others', a metric that one node alone has (drawn whole); on fixtures/perfmon (3 nodes: every series drawn whole) and on
# fixtures/compare/base with its events files (phases).  The band's node
# count and the most outlying node's name and mean are checked against the
# generated numbers.
set -u
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
export PERFMON_TEMPLATES="$PM_ROOT/templates"
export SOURCE_DATE_EPOCH=1700000000
export TMPDIR="$T"
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
        ("net.ext.bytes_sent", "B", "net", "counter", 0)]
t0 = 1700000000.25
means = {}
extra = [("load.1", "1", "cpu", "gauge", 0)]  # a metric of one node (drawn whole)
for k in range(1, 21):
    host = "n%02d" % k
    step = 2.0 if k == 2 else 1.0
    start = t0 + (200 if k == 13 else 0) + 0.1 * k  # n13 starts late
    n = int(600 / step) - (200 if k == 13 else 0)
    hdr = {"format": "perfmon-profile", "version": 1, "host": host, "job_id": "pdf-1",
           "scheduler": "local", "node_rank": "", "user": "", "command": "", "sampler": "gen",
           "start": start, "start_mono": 100.0, "interval": step, "pid": 0,
           "columns": [{"name": c[0], "unit": c[1], "group": c[2], "kind": c[3], "type": "f64"}
                       for c in cols + (extra if k == 4 else [])]}
    user = disk = net = 0.0
    cpus = []
    with open(f"{d}/{host}.jsonl", "w") as f:
        f.write(json.dumps(hdr) + "\n")
        for i in range(n):
            t = start + i * step
            cpu = 95.0 if k == 7 else round(50 + 10 * math.sin(i / 17.0 + k) + k % 5, 3)
            user += step * (1 + k % 3) * 0.37
            if (k == 3 and i in (150, 400)) or (k == 11 and i == 90):
                user = 0.5  # counter reset
            disk += 4096 * ((i * 7 + k) % 13)
            if k == 9 and i == 300:
                disk = 0.0
            net += 1000.5 * ((i + k) % 5)
            v = [cpu, 4, round(user, 3), 8e9, 2e9 + 1e6 * ((i * k) % 50), disk, net]
            if k == 4:
                v.append(round(3 + math.cos(i / 40.0), 4))
            if k == 5 and 50 <= i < 80:
                v[0] = None  # a gap
                v[4] = None
            if v[0] is not None:
                cpus.append(v[0])
            f.write(json.dumps({"t": round(t, 6), "mono": round(100 + t - start, 6), "v": v}) + "\n")
        f.write(json.dumps({"end": {"t": round(t, 6), "mono": round(100 + t - start, 6),
                                    "samples": n, "late": 0, "missed": 0, "self_cpu": 0.1,
                                    "self_maxrss_kb": 2048, "exit_status": 0,
                                    "reason": "command exited"}}) + "\n")
    means[host] = sum(cpus) / len(cpus)
# the node whose mean CPU use is furthest from the median of the nodes' means
m = sorted(means.values())
med = (m[9] + m[10]) / 2
far = max(means, key=lambda h: abs(means[h] - med))
with open(f"{d}/../far.txt", "w") as f:
    f.write("%s (mean %.4g %%)\n" % (far, means[far]))
EOF

# both modes, byte for byte (the PDF; every PNG of --plots)
same() {
    $A "$@" -q --pdf "$T/mem.pdf" >/dev/null 2>"$T/mem.err"
    r1=$?
    $A "$@" -q --stream --pdf "$T/str.pdf" >/dev/null 2>"$T/str.err"
    r2=$?
    [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ -s "$T/mem.pdf" ] && cmp "$T/mem.pdf" "$T/str.pdf"
}
J="$T/job"
F="$PM_ROOT/fixtures"
check "generated job, 20 nodes: the same PDF" same "$J" --stats
# the band read from the rows' file in blocks of 25 grid points
PM_STREAM_BAND_BLOCK=4000 check "generated job, the band in blocks: the same PDF" same "$J"
# (under valgrind, make valgrind, a PDF takes half a minute: the variants
# and --plots run without it only)
if [ -z "${PM_WRAP:-}" ]; then
    check "generated job --align=index: the same PDF" same "$J" --align=index
    check "generated job --start/--end: the same PDF" same "$J" --start +100 --end +500
fi
check "fixtures/perfmon (3 nodes, series whole): the same PDF" same "$F/perfmon"
check "fixtures/compare/base (phases): the same PDF" same "$F/compare/base"
check "the rows' file is gone" sh -c "[ -z \"\$(ls '$T' | grep perfmon-stream)\" ]"

# The report's text against the generated numbers.
if command -v pdftotext >/dev/null 2>&1; then
    $A "$J" -q --stream --pdf "$T/s.pdf" >/dev/null 2>&1
    pdftotext "$T/s.pdf" "$T/s.txt"
    check "the band counts every node" has "$T/s.txt" "20 nodes: min-max"
    check "the most outlying node and its mean: $(cat "$T/far.txt")" has "$T/s.txt" "$(cat "$T/far.txt")"
else
    echo "SKIP  pdftotext not installed: the report's text is not read"
fi

plots() {
    rm -rf "$T/pm" "$T/ps"
    $A "$J" -q --plots "$T/pm" >/dev/null 2>&1 &&
        $A "$J" -q --stream --plots "$T/ps" >/dev/null 2>&1 &&
        [ "$(ls "$T/pm" | wc -l)" -gt 10 ] && diff -r "$T/pm" "$T/ps" >/dev/null
}
[ -z "${PM_WRAP:-}" ] && check "generated job --plots: the same PNG files" plots

# --stream now makes the PDF: the automatic choice takes it when memory is
# short (see also analyze_memory.sh).
$A "$J" --pdf "$T/auto.pdf" --memory 1M >/dev/null 2>"$T/auto.err"
check "--pdf beyond --memory: streamed, exit 0" test $? -eq 0
check "--pdf beyond --memory: said on stderr" has "$T/auto.err" "analysing in bounded memory"
$A "$J" -q --no-stream --pdf "$T/jm.pdf" >/dev/null 2>&1
check "--pdf beyond --memory: the same PDF" cmp -s "$T/auto.pdf" "$T/jm.pdf"

[ "$fails" -eq 0 ] || exit 1
