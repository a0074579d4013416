#!/bin/sh
# The default pipeline against an independent reference on random data:
# float timestamps with jitter and skew between hosts, a repeated
# timestamp, missing values, a counter reset, ragged hosts.  The reference
# (Python, below) follows docs/analysis.md: rates with real time deltas,
# hold repair, time-weighted means (trapezoid for gauges, interval-weighted
# for rates), numpy-style percentiles, sample stddev, a common grid at the
# median interval with each sample at its nearest grid point and linear
# interpolation between consecutive valid samples,
# Total = sum over the hosts present.
set -u
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed"
    exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 - "$T/cpu_metrics.json" <<'PY' || exit 1
import json, random, sys
random.seed(7)
hosts = ["h%d" % i for i in range(5)]
d = {"host_names": hosts}
for k, h in enumerate(hosts):
    n = 60 + 9 * k
    t, ts = 1700000000.0 + 0.37 * k, []
    for i in range(n):
        t += 1.0 + random.uniform(-0.2, 0.2)
        ts.append(round(t, 3))
    if k == 1:
        ts[30] = ts[29]                                  # repeated timestamp: dropped
    cpu = [round(random.uniform(0, 100), 2) for _ in range(n)]
    cpu[10 + k] = None                                   # not recorded
    sent, c = [], 0
    for i in range(n):
        c = 0 if i == 25 + k else c + random.randint(0, 8 << 20)
        sent.append(c)
    sent[40] = None
    o = {"time_stamps": ts, "cpu_percent_sys": cpu,
         "net_io_counters": {"bytes_sent": sent, "bytes_recv": sent}}
    d[h] = o
json.dump(d, open(sys.argv[1], "w"))
PY
${PM_WRAP:-} "$PM_BIN/perfmon-analyze" --stats --json -q "$T/cpu_metrics.json" >"$T/out.json" || {
    echo "FAIL  perfmon-analyze exited $?"; exit 1; }
python3 - "$T/cpu_metrics.json" "$T/out.json" <<'PY'
import bisect, json, math, sys
src = json.load(open(sys.argv[1]))
res = json.load(open(sys.argv[2]))
out = {m["id"]: m for m in res["metrics"]}
NaN = float("nan")
isnan = math.isnan
bad = 0

def close(g, w, what):
    global bad
    if w is None or (isinstance(w, float) and isnan(w)):
        ok = g is None
    else:
        ok = g is not None and abs(g - w) <= 1e-7 * max(1.0, abs(w))
    if not ok:
        print("FAIL  %s: perfmon %r, reference %r" % (what, g, w))
        bad += 1

def quantile(xs, f):
    s = sorted(xs)
    h = (len(s) - 1) * f
    lo = int(math.floor(h))
    if lo >= len(s) - 1:
        return s[-1]
    return s[lo] + (h - lo) * (s[lo + 1] - s[lo])

def sd(xs):
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))

def host_series(h, path, conv, rate):
    o = src[h]
    raw_t = o["time_stamps"]
    v = o
    for p in path:
        v = v[p]
    v = [NaN if x is None else float(x) for x in v]
    keep, last = [], -math.inf
    for i, t in enumerate(raw_t):                      # strictly increasing times
        if t > last:
            keep.append(i)
            last = t
    t = [raw_t[i] for i in keep]
    x = [v[i] for i in keep]
    if rate:
        r = [NaN]
        for i in range(1, len(x)):
            r.append(NaN if isnan(x[i]) or isnan(x[i - 1]) else (x[i] - x[i - 1]) / (t[i] - t[i - 1]))
        held = 0.0
        for i in range(len(r)):                        # hold repair
            if isnan(r[i]):
                continue
            if r[i] < 0:
                r[i] = held
            else:
                held = r[i]
        x = r
    return t, [y / conv if not isnan(y) else NaN for y in x]

def stats(t, x, rate):
    valid = [y for y in x if not isnan(y)]
    ws = wt = 0.0
    for i in range(1, len(x)):
        dt = t[i] - t[i - 1]
        if rate:
            if not isnan(x[i]):
                ws += x[i] * dt; wt += dt
        elif not isnan(x[i]) and not isnan(x[i - 1]):
            ws += (x[i] + x[i - 1]) / 2 * dt; wt += dt
    mean = ws / wt if wt > 0 else sum(valid) / len(valid)
    return {"mean": mean, "min": min(valid), "max": max(valid), "p50": quantile(valid, .5),
            "p95": quantile(valid, .95), "stddev": sd(valid)}

def interp(t, x, t0, step, n):
    """A host on the grid: each valid sample at its nearest grid point
    (several at one point: their mean), the points between two
    consecutive valid samples linear from the earlier point's value to
    the later sample."""
    s, c = [0.0] * n, [0] * n
    prev, adjacent = None, False
    for i in range(len(x)):
        if isnan(x[i]):
            adjacent = False
            continue
        k = min(max(int(round((t[i] - t0) / step)), 0), n - 1)
        if c[k] == 0:
            s[k] = x[i]
        else:
            s[k] += x[i]
        c[k] += 1
        if adjacent and prev is not None and k > prev + 1:
            a = s[prev] / c[prev]
            for j in range(prev + 1, k):
                s[j] = a + (j - prev) / (k - prev) * (x[i] - a)
                c[j] = 1
        prev, adjacent = k, True
    return [s[k] / c[k] if c[k] else NaN for k in range(n)]

def check(mid, path, conv, rate, comb):
    hs = sorted(src["host_names"])
    ser = {h: host_series(h, path, conv, rate) for h in hs}
    m = out[mid]
    means, maxs = [], []
    for h in hs:
        st = stats(*ser[h], rate)
        for key in st:
            close(m["hosts"][h][key], st[key], "%s %s %s" % (mid, h, key))
        means.append(st["mean"]); maxs.append(st["max"])
    close(m["avg_per_node"], sum(means) / len(means), mid + " avg_per_node")
    close(m["max_per_node"], max(maxs), mid + " max_per_node")
    close(m["imbalance"], max(means) / (sum(means) / len(means)), mid + " imbalance")
    ivals = []
    for h in hs:
        t = ser[h][0]
        ivals.append(quantile([t[i] - t[i - 1] for i in range(1, len(t))], .5))
    ivals.sort()
    k = len(ivals)
    step = ivals[k // 2] if k % 2 else (ivals[k // 2 - 1] + ivals[k // 2]) / 2
    t0 = min(ser[h][0][0] for h in hs)
    t1 = max(ser[h][0][-1] for h in hs)
    n = int(math.floor((t1 - t0) / step + 1e-9)) + 1
    tot, cnt = [0.0] * n, [0] * n
    for h in hs:
        for i, y in enumerate(interp(*ser[h], t0, step, n)):
            if not isnan(y):
                tot[i] += y; cnt[i] += 1
    agg = [NaN if c == 0 else (s if comb == "Total" else s / c) for s, c in zip(tot, cnt)]
    gt = [t0 + i * step for i in range(n)]
    st = stats(gt, agg, rate)
    close(m["aggregate"]["mean"], st["mean"], mid + " aggregate mean")
    close(m["aggregate"]["max"], st["max"], mid + " aggregate max")
    close(m["aggregate"]["min_nodes"], min(c for c in cnt if c), mid + " aggregate min_nodes")
    if not bad:
        print("ok    %s matches the reference (%d hosts, grid %.4g s, %d points)" % (mid, len(hs), step, n))

check("cpu_usage", ("cpu_percent_sys",), 1.0, False, "Average")
check("net_out", ("net_io_counters", "bytes_sent"), 1048576.0, True, "Total")
nodes = {x["host"]: x for x in res["nodes"]}
close(nodes["h1"]["dropped_timestamps"], 1, "h1 dropped_timestamps")
sys.exit(1 if bad else 0)
PY
