#!/bin/sh
# --compat=ska against an independent reference: a random SKA cpu_metrics.json
# (ragged lists, counter resets, RAPL wraps, missing groups) is analysed by
# perfmon-analyze and by a direct transcription of SKA perfmon's pandas
# steps (seed 003: div, diff / time diff, mask(<0).ffill().fillna(0),
# mean/max per host, mean of means / max of maxima, positional Total/Average).
set -u
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed"
    exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 - "$T/cpu_metrics.json" <<'PY' || exit 1
import json, random, sys
random.seed(3)
hosts = ["n%02d" % i for i in (3, 1, 2, 0)]          # not sorted on purpose
d = {"host_names": hosts}
for k, h in enumerate(hosts):
    n = 40 + 7 * k
    t0 = 1700000000 + k
    o = {"time_stamps": [t0 + 2 * i for i in range(n)]}
    o["cpu_percent_sys"] = [round(random.uniform(0, 100), 3) for _ in range(n - (k % 2) * 3)]
    sent, c = [], 0
    for i in range(n):
        c = 0 if i == 20 + k else c + random.randint(0, 5 << 20)   # a reset
        sent.append(c)
    o["net_io_counters"] = {"bytes_sent": sent, "bytes_recv": sent}
    o["memory_info"] = {"rss": [random.randint(1 << 20, 1 << 30) for _ in range(n + 2)]}
    if k != 2:                                                     # one host without RAPL
        wrap = 262143328850
        pk = {}
        for s in range(2):
            e, v = random.randint(0, wrap), []
            for i in range(n):
                e = (e + random.randint(50, 150) * 2 * 10**6) % wrap
                v.append(e)
            pk["package-%d" % s] = v
        o["rapl_powercap"] = pk
    d[h] = o
json.dump(d, open(sys.argv[1], "w"), indent=4)
PY
${PM_WRAP:-} "$PM_BIN/perfmon-analyze" --compat=ska --stats --json -q "$T/cpu_metrics.json" >"$T/out.json" || {
    echo "FAIL  perfmon-analyze exited $?"; exit 1; }
python3 - "$T/cpu_metrics.json" "$T/out.json" <<'PY'
import json, math, sys
src = json.load(open(sys.argv[1]))
out = {m["id"]: m for m in json.load(open(sys.argv[2]))["metrics"]}
NaN = float("nan")

def replace_neg(xs):                       # df.mask(df.lt(0)).ffill().fillna(0)
    r, last = [], NaN
    for x in xs:
        if not math.isnan(x) and x >= 0:
            last = x
            r.append(x)
        else:
            r.append(0.0 if math.isnan(last) else last)
    return r

def column(host, path):
    n = len(host["time_stamps"])
    v = host
    for p in path:
        v = v[p]
    v = [float(x) for x in v][:n]
    return v + [NaN] * (n - len(v))

def series(host, path, conv, rate):
    x = [v / conv for v in column(host, path)]
    if rate:
        t = host["time_stamps"]
        x = [NaN] + [(x[i] - x[i - 1]) / (t[i] - t[i - 1]) for i in range(1, len(x))]
    return replace_neg(x)

def mean(xs):
    return sum(xs) / len(xs)

def check(mid, paths_of, conv, rate, comb):
    means, maxs, parts, per_host = [], [], [], []
    for h in sorted(src["host_names"]):
        host = src[h]
        ps = paths_of(host)
        if not ps:
            continue
        cols = [series(host, p, conv, rate) for p in ps]
        for c in cols:
            parts.append((mean(c), max(c)))
        tot = [sum(v) for v in zip(*cols)]
        per_host.append(tot)
        means.append(mean(tot))
        maxs.append(max(tot))
    if len(parts) > len(per_host):          # energy: per socket
        avg, mx = mean([p[0] for p in parts]), max(p[1] for p in parts)
    else:
        avg, mx = mean(means), max(maxs)
    n = max(len(s) for s in per_host)
    agg = []
    for i in range(n):
        vals = [s[i] for s in per_host if i < len(s)]
        agg.append(sum(vals) if comb == "Total" else mean(vals))
    agg = replace_neg(agg)
    m = out[mid]
    got = (m["avg_per_node"], m["max_per_node"], m["aggregate"]["mean"], m["aggregate"]["max"])
    want = (avg, mx, mean(agg), max(agg))
    for g, w, what in zip(got, want, ("avg_per_node", "max_per_node", "aggregate mean", "aggregate max")):
        if abs(g - w) > 1e-9 * max(1.0, abs(w)):
            print("FAIL  %s %s: perfmon %.17g, SKA reference %.17g" % (mid, what, g, w))
            sys.exit(1)
    print("ok    %s matches the SKA reference (avg/node %.6g, max/node %.6g)" % (mid, avg, mx))

MiB = 1048576.0
check("cpu_usage", lambda h: [("cpu_percent_sys",)], 1.0, False, "Average")
check("net_out", lambda h: [("net_io_counters", "bytes_sent")], MiB, True, "Total")
check("proc_rss", lambda h: [("memory_info", "rss")], MiB, False, "Total")
check("rapl_package",
      lambda h: [("rapl_powercap", k) for k in sorted(h.get("rapl_powercap", {})) if k.startswith("package-")],
      1e6, True, "Total")
PY
