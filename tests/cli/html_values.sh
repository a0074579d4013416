#!/bin/sh
# The HTML report's numbers in a real browser, against --csv: Debian's
# Chromium, headless, driven over the DevTools protocol
# (tests/support/cdp.py: real mouse events, real time).  On a generated
# 14-node job (more nodes than a legend's 12: each per-node chart is the
# band of the nodes with a line per node), noisy values with a one-sample
# burst:
# - the charts below the first screen are not drawn until scrolled to;
# - the pointer at random places of each per-node chart shows a time and,
#   for every node, the value --csv has for that node and time (6
#   significant digits), and the band's min, median and max are those of
#   the nodes' values at that time;
# - the one-sample burst is within the chart's y range (drawn, at overview);
# - a drag across the first chart zooms every chart to the same range, and
#   the pointer then reads the samples of the zoomed range, again as --csv;
# - no console message and no request.
# And on a 14-node job of 20,000 one-second samples (more than the band
# grid's 4,000 points): opened zoomed to 6 s, the pointer on each per-node
# chart reads every node's own sample, as --csv, not the band grid's
# (docs/report.md, "What is exact at which zoom").
set -u
. "$PM_ROOT/tests/support/cli.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    echo "SKIP  chromium not installed (make deps installs Debian's chromium)"
    exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed"
    exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export PERFMON_TEMPLATES="$PM_ROOT/templates"
export SOURCE_DATE_EPOCH=1700000000
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"

python3 - "$T/job" <<'EOF'
import json, os, random, sys
d = sys.argv[1]
os.makedirs(d)
rnd = random.Random(25)
cols = [("cpu.percent", "%", "cpu", "gauge"), ("cpu.ncpus", "1", "cpu", "gauge"),
        ("mem.total", "B", "memory", "gauge"), ("mem.used", "B", "memory", "gauge")]
for i in range(14):
    head = {"format": "perfmon-profile", "version": 1, "host": "h%02d" % i, "job_id": "7",
            "scheduler": "slurm", "node_rank": str(i), "user": "u", "command": "app",
            "sampler": "html_values.sh", "start": 1700000000.0, "start_mono": 1.0,
            "interval": 1.0, "pid": 0,
            "columns": [{"name": n, "unit": u, "group": g, "kind": k, "type": "f64"}
                        for n, u, g, k in cols]}
    with open(os.path.join(d, "h%02d.jsonl" % i), "w") as f:
        f.write(json.dumps(head) + "\n")
        for k in range(300):
            cpu = rnd.uniform(20, 80)
            if i == 5 and k == 150:
                cpu = 99.5  # a one-sample burst
            mem = 2 ** 33 + rnd.randrange(2 ** 30)
            f.write(json.dumps({"t": 1700000000.0 + k, "mono": 1.0 + k,
                                "v": [cpu, 8, 2 ** 36, mem]}) + "\n")
        f.write(json.dumps({"end": {"t": 1700000299.0, "mono": 300.0, "samples": 300,
                                    "late": 0, "missed": 0, "self_cpu": 0.01,
                                    "self_maxrss_kb": 2000, "exit_status": 0,
                                    "reason": "command exited"}}) + "\n")
EOF
check "--html and --csv written" $A -q "$T/job" --html "$T/job.html" --csv "$T/job.csv"

check "values read back from the charts equal --csv's" python3 - "$T" "$CHROMIUM" "$PM_ROOT/tests/support" <<'EOF'
import csv, calendar, json, random, re, statistics, sys, time
T, chromium = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from cdp import Chrome

rows = list(csv.reader(open(T + "/job.csv", encoding="utf-8")))
head = [h.split(" [")[0] for h in rows[0]]
val = {}  # (metric, host, t) -> value
for r in rows[1:]:
    for j in range(2, len(r)):
        if r[j] != "":
            val[(head[j], r[0], int(float(r[1])))] = float(r[j])
hosts = sorted({r[0] for r in rows[1:]})
bad = []


def want(ok, what):
    if not ok:
        bad.append(what)


def same6(got, ref):
    """got (6 significant digits, from float32) is ref to 6 digits."""
    return abs(got - ref) <= 1e-5 * max(abs(ref), 1e-30)


def when(text):
    m = re.match(r"(\d+)-(\d+)-(\d+) (\d+):(\d+):(\d+) UTC", text)
    return calendar.timegm(tuple(int(x) for x in m.groups())) if m else None


c = Chrome(chromium, 1280, 900)
try:
    c.open("file://%s/job.html" % T)
    charts = c.eval("JSON.parse(document.getElementById('pm-data').textContent).charts"
                    ".map(function (c) { return [c.id, c.metric, c.all, !!c.band]; })")
    drawn = c.eval("Array.prototype.map.call(document.querySelectorAll('figure.chart'),"
                   " function (f) { return !!f.querySelector('canvas'); })")
    want(drawn[0] and not drawn[-1], "lazy: drawn at first %r" % drawn)
    rnd = random.Random(7)

    def hover(cid, metric, n, lo=None, hi=None):
        c.eval("document.getElementById('%s').scrollIntoView()" % cid)
        deadline = time.time() + 10
        # drawn, and its range the zoom's (a chart away from the window
        # takes a zoom when it comes near: data-stale until then)
        while not c.eval("!!document.querySelector('#%s .u-over') && "
                         "!document.getElementById('%s').dataset.stale" % (cid, cid)):
            want(time.time() < deadline, "%s: not drawn when scrolled to" % cid)
            if time.time() > deadline:
                return 0
            time.sleep(0.02)
        r = c.eval("(function (r) { return [r.left, r.top, r.width, r.height]; })"
                   "(document.querySelector('#%s .u-over').getBoundingClientRect())" % cid)
        seen = 0
        for _ in range(n):
            x = r[0] + 1 + rnd.random() * (r[2] - 2)
            c.mouse("mouseMoved", x, r[1] + r[3] / 2)
            leg = c.eval("Array.prototype.map.call(document.querySelectorAll('#%s tr.u-series'),"
                         " function (tr) { return [tr.querySelector('.u-label').textContent,"
                         " tr.querySelector('.u-value').textContent]; })" % cid)
            t = when(leg[0][1])
            want(t is not None, "%s: time %r" % (cid, leg[0][1]))
            if t is None:
                continue
            if lo is not None:
                want(lo - 1 <= t - 1700000000 <= hi + 1, "%s: %d outside the zoom" % (cid, t))
            at = [val[(metric, h, t)] for h in hosts if (metric, h, t) in val]
            for label, text in leg[1:]:
                if text in ("\u2013", "--"):
                    continue
                got = float(text.split()[0])
                ref = {"min": min(at), "max": max(at), "median": statistics.median(at)}.get(label) \
                    if at else None
                if label in hosts:
                    ref = val.get((metric, label, t))
                if label in hosts or label in ("min", "max", "median"):
                    want(ref is not None and same6(got, ref),
                         "%s at %d: %s reads %s, --csv %r" % (cid, t, label, text, ref))
                    seen += 1
        return seen

    checked = 0
    for cid, metric, all_nodes, band in charts:
        if all_nodes:
            continue
        checked += hover(cid, metric, 5)
    want(checked >= 2 * 5 * 14, "only %d values compared" % checked)
    # the burst: h05's 99.5 at +150 s is within the per-node cpu chart's y
    # range at overview (uPlot draws each pixel column's min and max)
    cpu = [ch[0] for ch in charts if ch[1] == "cpu_usage" and not ch[2]][0]
    ymax = c.eval("document.getElementById('%s').dataset.ymax" % cpu)
    want(ymax is not None and float(ymax) >= 99.5, "the burst is not in the y range: %r" % ymax)
    # a drag across the first chart: every chart shows its range
    c.eval("window.scrollTo(0, 0); document.getElementById('%s').scrollIntoView()" % charts[0][0])
    r = c.eval("(function (r) { return [r.left, r.top, r.width, r.height]; })"
               "(document.querySelector('#%s .u-over').getBoundingClientRect())" % charts[0][0])
    y = r[1] + r[3] / 2
    c.mouse("mouseMoved", r[0] + r[2] * 0.40, y)
    c.mouse("mousePressed", r[0] + r[2] * 0.40, y, "left", 1)
    c.mouse("mouseMoved", r[0] + r[2] * 0.45, y, "left")
    c.mouse("mouseReleased", r[0] + r[2] * 0.45, y, "left", 1)
    time.sleep(0.2)
    rng = c.eval("Array.prototype.map.call(document.querySelectorAll('figure.chart'),"
                 " function (f) { return [f.dataset.xmin, f.dataset.xmax]; })")
    want(len(set(map(tuple, rng))) == 1 and 5 < float(rng[0][1]) - float(rng[0][0]) < 40,
         "zoom: ranges %r" % rng)
    lo, hi = float(rng[0][0]), float(rng[0][1])
    n = 0
    for cid, metric, all_nodes, band in charts:
        if not all_nodes:
            n += hover(cid, metric, 4, lo, hi)
    want(n >= 4 * 14, "zoomed: only %d values compared" % n)
    ms = c.eval("document.body.dataset.zoomMs")
    want(ms is not None, "no zoom time recorded")
    for m in c.console():
        bad.append(m)
finally:
    c.close()
for b in bad[:20]:
    print("  " + b)
sys.exit(1 if bad else 0)
EOF

python3 "$PM_ROOT/tests/support/html_job.py" "$T/long" 14 20000
check "14 x 20,000: --html and --csv written" $A -q "$T/long" --html "$T/long.html" --csv "$T/long.csv"
check "14 x 20,000 zoomed to 6 s: every node's own samples, as --csv" python3 - "$T" "$CHROMIUM" "$PM_ROOT/tests/support" <<'EOF'
import csv, calendar, random, re, sys, time
T, chromium = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from cdp import Chrome

rows = csv.reader(open(T + "/long.csv", encoding="utf-8"))
head = [h.split(" [")[0] for h in next(rows)]
val, hosts = {}, set()
for r in rows:
    hosts.add(r[0])
    if abs(float(r[1]) - 1700010000) <= 60:
        for j in range(2, len(r)):
            if r[j] != "":
                val[(head[j], r[0], round(float(r[1])))] = float(r[j])
bad = []


def want(ok, what):
    if not ok:
        bad.append(what)


def when(text):
    m = re.match(r"(\d+)-(\d+)-(\d+) (\d+):(\d+):(\d+) UTC", text)
    return calendar.timegm(tuple(int(x) for x in m.groups())) if m else None


c = Chrome(chromium, 1280, 900)
try:
    c.open("file://%s/long.html#zoom=10000,10006" % T)
    charts = c.eval("JSON.parse(document.getElementById('pm-data').textContent).charts"
                    ".map(function (c) { return [c.id, c.metric, c.all, (c.rows || []).length]; })")
    pernode = [ch for ch in charts if not ch[2] and ch[3]]
    want(len(pernode) >= 2, "per-node charts with rows: %r" % charts)
    rnd = random.Random(11)
    full = 0
    for cid, metric, _, _ in pernode:
        c.eval("document.getElementById('%s').scrollIntoView()" % cid)
        deadline = time.time() + 10
        while not c.eval("!!document.querySelector('#%s .u-over') && "
                         "!document.getElementById('%s').dataset.stale" % (cid, cid)):
            if time.time() > deadline:
                break
            time.sleep(0.02)
        z = c.eval("(function (f) { return [f.dataset.xmin, f.dataset.xmax]; })"
                   "(document.getElementById('%s'))" % cid)
        # (seconds since the start)
        want(z[0] is not None and abs(float(z[0]) - 10000) < 1e-3 and
             abs(float(z[1]) - 10006) < 1e-3, "%s: not zoomed to 6 s: %r" % (cid, z))
        r = c.eval("(function (r) { return [r.left, r.top, r.width, r.height]; })"
                   "(document.querySelector('#%s .u-over').getBoundingClientRect())" % cid)
        for _ in range(16):
            c.mouse("mouseMoved", r[0] + 1 + rnd.random() * (r[2] - 2), r[1] + r[3] / 2)
            leg = c.eval("Array.prototype.map.call(document.querySelectorAll('#%s tr.u-series'),"
                         " function (tr) { return [tr.querySelector('.u-label').textContent,"
                         " tr.querySelector('.u-value').textContent]; })" % cid)
            t = when(leg[0][1])
            # (a named outlier's label: "node007 (mean 12 %)")
            nodes = [(l.split(" (")[0], x) for l, x in leg[1:]
                     if l.split(" (")[0] in hosts and x not in ("\u2013", "--")]
            if t is None or not nodes:
                continue  # the pointer on a point of the band's grid
            # a sample time: every node's own sample, as --csv
            want(len(nodes) == 14, "%s at %d: %d nodes have a value" % (cid, t, len(nodes)))
            for label, text in nodes:
                got, ref = float(text.split()[0]), val.get((metric, label, t))
                want(ref is not None and abs(got - ref) <= 1e-5 * max(abs(ref), 1e-30),
                     "%s at %d: %s reads %s, --csv %r" % (cid, t, label, text, ref))
            full += 1
    want(full >= 8, "only %d pointer positions on the samples" % full)
    for m in c.console():
        bad.append(m)
finally:
    c.close()
for b in bad[:20]:
    print("  " + b)
sys.exit(1 if bad else 0)
EOF

[ "$fails" -eq 0 ] || exit 1
