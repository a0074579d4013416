#!/bin/sh
# pm-test: alone (its niced busy loop must get its CPU time: checked against /proc/stat)
# One quantity, one number (issue 14, item 5; niced time, item 2): the test
# writes JSON Lines profiles itself (one node; two nodes that start and end
# at different times), computes every figure by hand from those values
# (docs/analysis.md: rates, time-weighted means, the sparse-gauge hold, the
# all-node series on the grid), and checks each output that prints it:
# --stats --json, the --stats text, --csv, --hdf5 (read through the HDF5
# library with ctypes), the PDF's text (page 1 and the plot titles, by
# pdftotext) and --compare (text and JSON).  Then a `nice -n 10` busy loop
# under the sampler: the CPU page's niced time and the utilisation against
# the kernel's /proc/stat, read by the test.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP  python3 not installed"; exit 0; }

cat >"$T/figures.py" <<'PY'
import ctypes, ctypes.util, json, math, os, re, shlex, shutil, subprocess, sys

T = sys.argv[1]
A = shlex.split(os.environ.get("PM_WRAP", "")) + [os.environ["PM_BIN"] + "/perfmon-analyze"]
fails = 0
skipped_pdf = []

def check(desc, ok, detail=""):
    global fails
    print(("ok    " if ok else "FAIL  ") + desc + ("" if ok else "  " + detail))
    if not ok:
        fails += 1

def close(a, b, rel=1e-9):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
        return False
    return abs(a - b) <= rel * max(1.0, abs(b))

MiB = 1048576.0
COLS = [("cpu.user", "s", "counter"), ("cpu.nice", "s", "counter"), ("cpu.system", "s", "counter"),
        ("cpu.idle", "s", "counter"), ("cpu.iowait", "s", "counter"), ("cpu.percent", "%", "gauge"),
        ("cpu.ncpus", "1", "gauge"), ("mem.percent", "%", "gauge"),
        ("perf.page_faults", "1", "counter"), ("proc.uss", "B", "gauge")]

# --- the profiles ------------------------------------------------------------
# Times are whole seconds plus multiples of 1/64 s (exact in binary, in
# microseconds and in nanoseconds), a little after each tick as a real
# sampler's are.
def host_profile(name, n, t0, scale, seed):
    t = [t0 + i + ((i * 3 + seed) % 2) / 64.0 for i in range(n)]
    # only niced time grows (and idle): a `nice` job on a 2-CPU node
    nice_rate = [0.2 + 1.7 * (((i * 7 + seed) % 10) / 9.0) for i in range(n)]
    user, nice, system, idle, iowait = 100.0, 20.0 * scale, 50.0, 1000.0, 1.0
    rows = []
    faults = 1000.0
    prev_busy = prev_total = None
    for i in range(n):
        if i > 0:
            dt = t[i] - t[i - 1]
            nice += nice_rate[i] * dt
            idle += (2.0 - nice_rate[i]) * dt
            # a burst of page faults in the first and the last interval
            faults += (40000.0 * scale if i == 1 else 30000.0 if i == n - 1 else 100.0 + 10 * i)
        busy, total = user + nice + system, user + nice + system + idle + iowait
        pct = None if prev_busy is None else 100.0 * (busy - prev_busy) / (total - prev_total)
        prev_busy, prev_total = busy, total
        mem = None if i == n // 2 else 10.0 + 0.5 * i * scale
        uss = (50.0 + i) * MiB * scale if i % 5 == 0 else None  # refreshed every 5 samples
        rows.append([user, nice, system, idle, iowait, pct, 2, mem, faults, uss])
    return {"name": name, "t": t, "rows": rows}

def write_jsonl(path, h):
    # compact, as the sampler writes it (item 9 of issue 14 is about spaces)
    dumps = lambda o: json.dumps(o, separators=(",", ":"))
    with open(path, "w") as f:
        f.write(dumps({"format": "perfmon-profile", "version": 1, "host": h["name"],
                            "job_id": "fig", "scheduler": "local", "node_rank": "", "user": "u",
                            "command": "", "sampler": "perfmon-sample 0.1.0",
                            "start": h["t"][0], "start_mono": h["t"][0] - 1e9, "interval": 1.0,
                            "pid": 1, "columns": [{"name": c, "unit": u, "group": c.split(".")[0],
                                                   "kind": k, "type": "f64"} for c, u, k in COLS]}) + "\n")
        f.write(dumps({"metadata": {"hostname": h["name"], "cpu": {"threads": 2}}}) + "\n")
        for t, r in zip(h["t"], h["rows"]):
            f.write(dumps({"t": t, "mono": t - 1e9, "v": r}) + "\n")
        f.write(dumps({"end": {"t": h["t"][-1], "mono": h["t"][-1] - 1e9,
                                    "samples": len(h["t"]), "late": 0, "missed": 0,
                                    "self_cpu": 0.01, "self_maxrss_kb": 2000, "exit_status": 0,
                                    "reason": "command exited"}}) + "\n")

# --- the hand computation (docs/analysis.md) ----------------------------------
METRICS = {  # id: (column, rate, conversion, comb, name, unit)
    "cpu_usage": ("cpu.percent", False, 1.0, "Average", "CPU Usage", "%"),
    "cpu_nice": ("cpu.nice", True, 1.0, "Average", "CPU Nice Time", "s/s"),
    "mem_usage": ("mem.percent", False, 1.0, "Average", "Memory Usage", "%"),
    "perf_page_faults": ("perf.page_faults", True, 1.0, "Total", "Page Faults", "1/s"),
    "proc_uss": ("proc.uss", False, MiB, "Total", "Process Memory (USS)", "MiB"),
}
NAN = float("nan")

def median(x):
    x = sorted(x)
    n = len(x)
    return NAN if n == 0 else x[n // 2] if n % 2 else (x[n // 2 - 1] + x[n // 2]) / 2

def series(h, mid):
    col, rate, conv, _, _, _ = METRICS[mid]
    c = [n for n, _, _ in COLS].index(col)
    raw = [NAN if r[c] is None else float(r[c]) for r in h["rows"]]
    t = h["t"]
    if rate:
        v = [NAN] + [(raw[i] - raw[i - 1]) / (t[i] - t[i - 1]) for i in range(1, len(t))]
    else:
        v = raw[:]
    v = [x / conv for x in v]
    held = [False] * len(v)
    if not rate:
        # a gauge valid only every few samples: each value held for up to
        # 1.5 times the median time between valid points
        valid = [i for i in range(len(v)) if not math.isnan(v[i])]
        gaps = [t[b] - t[a] for a, b in zip(valid, valid[1:])]
        interval = median([t[i] - t[i - 1] for i in range(1, len(t))])
        if gaps and median(gaps) > 1.5 * interval:
            bound, last = 1.5 * median(gaps), None
            for i in range(len(v)):
                if not math.isnan(v[i]):
                    last = i
                elif last is not None and t[i] - t[last] <= bound:
                    v[i], held[i] = v[last], True
    return v, held

def tw_mean(t, v, rate):
    """Time-weighted mean: rates step (value i covers (t[i-1], t[i]]),
    gauges trapezoids between consecutive valid points."""
    ws = wt = 0.0
    for i in range(1, len(v)):
        if math.isnan(v[i]):
            continue
        if rate:
            ws += v[i] * (t[i] - t[i - 1])
            wt += t[i] - t[i - 1]
        elif not math.isnan(v[i - 1]):
            ws += (v[i] + v[i - 1]) / 2 * (t[i] - t[i - 1])
            wt += t[i] - t[i - 1]
    ok = [x for x in v if not math.isnan(x)]
    return ws / wt if wt > 0 else sum(ok) / len(ok)

def vmax(v):
    return max(x for x in v if not math.isnan(x))

def duration(t, v):
    ok = [t[i] for i in range(len(v)) if not math.isnan(v[i])]
    return ok[-1] - ok[0]

def aggregate(hosts, mid):
    """The all-node series: one host: its own series; several: each valid
    sample at its nearest grid point, the grid points between two
    consecutive samples interpolated, Total = sum, Average = mean over the
    hosts with a value."""
    _, rate, _, comb, _, _ = METRICS[mid]
    ser = [series(h, mid)[0] for h in hosts]
    if len(hosts) == 1:
        return hosts[0]["t"], ser[0]
    t0 = min(h["t"][0] for h in hosts)
    t1 = max(h["t"][-1] for h in hosts)
    step = median([median([h["t"][i] - h["t"][i - 1] for i in range(1, len(h["t"]))]) for h in hosts])
    ng = int(math.floor((t1 - t0) / step + 1e-9)) + 1
    tot, cnt = [0.0] * ng, [0] * ng
    for h, v in zip(hosts, ser):
        g = {}
        prev = None
        for i, x in enumerate(v):
            if math.isnan(x):
                prev = None
                continue
            k = min(max(int(round((h["t"][i] - t0) / step)), 0), ng - 1)
            assert k not in g  # one sample per grid point in these profiles
            g[k] = x
            if prev is not None:
                for j in range(prev + 1, k):
                    g[j] = g[prev] + (j - prev) / (k - prev) * (x - g[prev])
            prev = k
        for k, x in g.items():
            tot[k] += x
            cnt[k] += 1
    v = [NAN if c == 0 else s / c if comb == "Average" else s for s, c in zip(tot, cnt)]
    return [t0 + k * step for k in range(ng)], v

def expected(hosts):
    e = {"metrics": {}}
    for mid, (_, rate, _, comb, _, _) in METRICS.items():
        per = []
        for h in hosts:
            v, held = series(h, mid)
            per.append((tw_mean(h["t"], v, rate), vmax(v), duration(h["t"], v)))
        gt, gv = aggregate(hosts, mid)
        wt = sum(p[2] for p in per)
        e["metrics"][mid] = {
            "avg_per_node": sum(p[0] for p in per) / len(per),
            "max_per_node": max(p[1] for p in per),
            "pooled": sum(p[0] * p[2] for p in per) / wt,
            "host_means": [p[0] for p in per],
            "series_mean": tw_mean(gt, gv, rate),
            "series_max": vmax(gv),
            "agg_t": gt, "agg_v": gv,
        }
    # CPU utilisation: per node the time-weighted (trapezoid) mean of
    # cpu.percent, which counts niced time as busy; the job: their mean.
    e["cpu_util"] = e["metrics"]["cpu_usage"]["avg_per_node"]
    return e

# --- number formats of the outputs (to compare at the printed precision) -----
def title_num(v):  # pm_fmt_title_num
    a = abs(v)
    if 1e4 <= a < 1e9:
        return "%.0f" % v
    if a != 0 and (a < 1e-3 or a >= 1e9):
        return "%.3g" % v
    return "%.4g" % v

def report_num(v):  # the PDF's tables
    a = abs(v)
    if a == 0:
        return "0"
    if a < 1e15 and v == math.floor(v):
        return "%.0f" % v
    if a >= 1e9 or a < 1e-3:
        return "%.3g" % v
    if a >= 1000:
        return "%.0f" % v
    return "%.1f" % v if a >= 100 else "%.2f" % v if a >= 1 else "%.3f" % v

def text_num(v):  # --stats text: the PDF's formatter (pm_fmt_num)
    return report_num(v)

def cmp_num(v):  # --compare text
    if v != 0 and (abs(v) >= 1e7 or abs(v) < 1e-3):
        return "%.3e" % v
    return "%.4g" % v

# --- HDF5 through the library itself (no h5py needed) -------------------------
class H5:
    def __init__(self):
        name = None
        for n in ("hdf5_serial", "hdf5"):
            name = ctypes.util.find_library(n)
            if name:
                break
        self.lib = ctypes.CDLL(name or "libhdf5_serial.so")
        L = self.lib
        L.H5open()
        for f in ("H5Fopen", "H5Dopen2", "H5Dget_space", "H5Gopen2", "H5Aopen"):
            getattr(L, f).restype = ctypes.c_int64
        L.H5Fopen.argtypes = [ctypes.c_char_p, ctypes.c_uint, ctypes.c_int64]
        L.H5Dopen2.argtypes = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_int64]
        L.H5Gopen2.argtypes = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_int64]
        L.H5Aopen.argtypes = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_int64]
        L.H5Dget_space.argtypes = [ctypes.c_int64]
        L.H5Sget_simple_extent_npoints.argtypes = [ctypes.c_int64]
        L.H5Sget_simple_extent_npoints.restype = ctypes.c_int64
        L.H5Dread.argtypes = [ctypes.c_int64] * 5 + [ctypes.c_void_p]
        L.H5Aread.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
        for f in ("H5Dclose", "H5Sclose", "H5Gclose", "H5Aclose", "H5Fclose"):
            getattr(L, f).argtypes = [ctypes.c_int64]
        self.double = ctypes.c_int64.in_dll(L, "H5T_NATIVE_DOUBLE_g").value

    def dataset(self, path, name):
        L = self.lib
        f = L.H5Fopen(path.encode(), 0, 0)
        d = L.H5Dopen2(f, name.encode(), 0)
        sp = L.H5Dget_space(d)
        n = L.H5Sget_simple_extent_npoints(sp)
        buf = (ctypes.c_double * max(n, 1))()
        L.H5Dread(d, self.double, 0, 0, 0, buf)
        L.H5Sclose(sp)
        L.H5Dclose(d)
        L.H5Fclose(f)
        return list(buf)[:n]

    def attr(self, path, obj, name):
        L = self.lib
        f = L.H5Fopen(path.encode(), 0, 0)
        g = L.H5Gopen2(f, obj.encode(), 0)
        a = L.H5Aopen(g, name.encode(), 0)
        x = ctypes.c_double()
        L.H5Aread(a, self.double, ctypes.byref(x))
        L.H5Aclose(a)
        L.H5Gclose(g)
        L.H5Fclose(f)
        return x.value

def run(args, out=None):
    r = subprocess.run(A + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        print("command failed (%d): %s\n%s" % (r.returncode, " ".join(args), r.stderr))
    return r.stdout

# --- the cases -------------------------------------------------------------------
BASE = 1700000000.0
cases = {
    "one node": [host_profile("n01", 20, BASE, 1.0, 0)],
    # n02 starts 19/64 s later (its samples go to the same grid points) and
    # stops 6 samples earlier; the pooled mean then differs from avg/node
    "two nodes": [host_profile("n01", 20, BASE, 1.0, 0),
                  host_profile("n02", 14, BASE + 19 / 64.0, 1.5, 1)],
}
h5 = None
try:
    h5 = H5()
except OSError as ex:
    print("SKIP  HDF5 library not loadable: %s" % ex)

for cname, hosts in cases.items():
    d = os.path.join(T, cname.replace(" ", "_"))
    os.makedirs(d)
    for h in hosts:
        write_jsonl(os.path.join(d, h["name"] + ".pmp.jsonl"), h)
    e = expected(hosts)
    tag = "[%s] " % cname

    # --stats --json
    js = json.loads(run(["--stats", "--json", d]))
    check(tag + "json: job CPU utilisation", close(js["job"]["cpu_avg_utilization_pct"], e["cpu_util"]),
          "%s vs %s" % (js["job"]["cpu_avg_utilization_pct"], e["cpu_util"]))
    for n, h in zip(js["nodes"], e["metrics"]["cpu_usage"]["host_means"]):
        check(tag + "json: %s CPU utilisation" % n["host"], close(n["cpu_avg_utilization_pct"], h))
    jm = {m["id"]: m for m in js["metrics"]}
    for mid, x in e["metrics"].items():
        m = jm.get(mid)
        if not m:
            check(tag + "json: metric %s present" % mid, False)
            continue
        for key, got in (("avg_per_node", m["avg_per_node"]), ("max_per_node", m["max_per_node"]),
                         ("pooled", m["all"]["mean"]), ("series_mean", m["aggregate"]["mean"]),
                         ("series_max", m["aggregate"]["max"])):
            check(tag + "json: %s %s" % (mid, key), close(got, x[key]), "%r vs %r" % (got, x[key]))
        hm = [m["hosts"][h["name"]]["mean"] for h in hosts]
        check(tag + "json: %s host means" % mid, all(close(a, b) for a, b in zip(hm, x["host_means"])),
              "%r vs %r" % (hm, x["host_means"]))
    if len(hosts) == 1:
        for mid, x in e["metrics"].items():
            check(tag + "%s: the all-node series is the node (mean and max)" % mid,
                  close(x["series_mean"], x["avg_per_node"]) and close(x["series_max"], x["max_per_node"]))
            m = jm.get(mid)
            check(tag + "json: %s all-node mean = per-node mean" % mid,
                  m is not None and m["aggregate"]["mean"] == m["avg_per_node"] and
                  m["aggregate"]["max"] == m["max_per_node"])

    # --stats text
    txt = run(["--stats", d])
    line = [l for l in txt.splitlines() if l.split()[:1] == ["cpu_avg_utilization_pct"]]
    check(tag + "text: job CPU utilisation", bool(line) and line[0].split()[1] == text_num(e["cpu_util"]),
          "%r vs %s" % (line, text_num(e["cpu_util"])))
    for mid, x in e["metrics"].items():
        # the Metrics table's row (the last one: a counter's name is a job figure too)
        row = [l.split() for l in txt.splitlines() if l.split()[:1] == [mid]][-1:]
        want = [text_num(x[k]) for k in ("avg_per_node", "max_per_node", "pooled", "series_mean")]
        check(tag + "text: %s avg/node, max/node, pooled, series" % mid,
              bool(row) and row[0][2:6] == want, "%r vs %r" % (row[0][2:6] if row else None, want))

    # --csv (the hosts' recorded values; held refreshes are not written)
    csvp = os.path.join(d, "out.csv")
    run(["--csv", csvp, "--digits", "full", d])
    rows = [l.rstrip("\n").split(",") for l in open(csvp)]
    head = rows[0]
    ok, bad = True, ""
    for mid in METRICS:
        col = [i for i, hname in enumerate(head) if hname.startswith(mid + " [")]
        if not col:
            ok, bad = False, "no column " + mid
            break
        for h in hosts:
            v, held = series(h, mid)
            got = [r[col[0]] for r in rows[1:] if r[0] == h["name"]]
            want = ["" if math.isnan(x) or hd else x for x, hd in zip(v, held)]
            for g, w in zip(got, want):
                if (g == "") != (w == "") or (g != "" and float(g) != w):
                    ok, bad = False, "%s %s: %r vs %r" % (h["name"], mid, g, w)
            if len(got) != len(want):
                ok, bad = False, "%s %s: %d rows" % (h["name"], mid, len(got))
    check(tag + "csv --digits full: every value, exactly", ok, bad)

    # --hdf5: the series, and the title figures as attributes
    if h5:
        hp = os.path.join(d, "out.h5")
        run(["--hdf5", hp, d])
        for mid, x in e["metrics"].items():
            gv = h5.dataset(hp, "/aggregates/%s/value" % mid)
            same = len(gv) == len(x["agg_v"]) and all(
                (math.isnan(a) and math.isnan(b)) or close(a, b) for a, b in zip(gv, x["agg_v"]))
            check(tag + "hdf5: %s all-node series, point by point" % mid, same,
                  "%r vs %r" % (gv[:6], x["agg_v"][:6]))
            for k in ("series_mean", "series_max", "avg_per_node", "max_per_node"):
                got = h5.attr(hp, "/aggregates/" + mid, k)
                check(tag + "hdf5: %s %s" % (mid, k), close(got, x[k]), "%r vs %r" % (got, x[k]))
            for h in hosts:
                hv = h5.dataset(hp, "/hosts/%s/%s" % (h["name"], mid))
                v, _ = series(h, mid)
                check(tag + "hdf5: %s %s values" % (h["name"], mid),
                      all((math.isnan(a) and math.isnan(b)) or close(a, b) for a, b in zip(hv, v)))

    # the PDF: page 1 and the plot titles
    if shutil.which("pdftotext") is None:
        if not skipped_pdf:
            print("SKIP  pdftotext not installed (poppler-utils): the report's figures not checked")
        skipped_pdf.append(1)
    else:
        pdf = os.path.join(d, "r.pdf")
        run(["--pdf", pdf, d])
        r = subprocess.run(["pdftotext", "-layout", pdf, "-"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        ptxt = r.stdout
        row = [l.split() for l in ptxt.splitlines() if l.strip().startswith("CPU utilisation (%)")]
        means = e["metrics"]["cpu_usage"]["host_means"]
        want = [report_num(min(means)), report_num(sum(means) / len(means)), report_num(max(means)),
                report_num(e["cpu_util"])]
        check(tag + "pdf page 1: CPU utilisation min, average, max node, job",
              bool(row) and row[0][3:7] == want, "%r vs %r" % (row[0][3:7] if row else None, want))
        flat = " ".join(ptxt.split())
        for mid, x in e["metrics"].items():
            _, _, _, comb, name, unit = METRICS[mid]
            u = "" if unit == "1" else " " + unit
            t1 = "Average %s/Node: %s%s, Max %s/Node: %s%s" % (name, title_num(x["avg_per_node"]), u, name,
                                                            title_num(x["max_per_node"]), u)
            t2 = "%s %s (all-node series): mean %s%s, max %s%s" % (comb, name, title_num(x["series_mean"]),
                                                                  u, title_num(x["series_max"]), u)
            check(tag + "pdf title: " + t1, t1 in flat)
            if len(hosts) > 1:
                check(tag + "pdf title: " + t2, t2 in flat)
            else:  # one node: the all-node plot would repeat the node's
                check(tag + "pdf: no all-node copy of the one node's plot: " + t2, t2 not in flat)

    # --compare (the job against itself): job figures and all-node series
    ctxt = run(["--compare", d, d])
    line = [l.split() for l in ctxt.splitlines() if l.split()[:1] == ["cpu_avg_utilization_pct"]]
    check(tag + "compare text: CPU utilisation", bool(line) and line[0][2] == cmp_num(e["cpu_util"]),
          "%r vs %s" % (line, cmp_num(e["cpu_util"])))
    cj = json.loads(run(["--compare", "--json", d, d]))
    fig = {f["key"]: f for f in cj["figures"]}
    check(tag + "compare json: CPU utilisation",
          close(fig["cpu_avg_utilization_pct"]["a"]["mean"], e["cpu_util"]))
    met = {m["key"]: m for m in cj["metrics"]}
    for mid, x in e["metrics"].items():
        if mid not in met:
            check(tag + "compare: metric %s present" % mid, False)
            continue
        # the metrics table (a job figure may share the key: perf_page_faults)
        mtxt = ctxt[ctxt.index("\nMetrics"):] if "\nMetrics" in ctxt else ctxt
        row = [l.split() for l in mtxt.splitlines() if l.split()[:1] == [mid]]
        check(tag + "compare text: %s series mean" % mid,
              bool(row) and row[0][2] == cmp_num(x["series_mean"]),
              "%r vs %s" % (row[0][2] if row else None, cmp_num(x["series_mean"])))
        check(tag + "compare json: %s series mean and max" % mid,
              close(met[mid]["a"]["mean"], x["series_mean"]) and close(met[mid]["a"]["max"], x["series_max"]))

sys.exit(1 if fails else 0)
PY
python3 "$T/figures.py" "$T"
check "every figure of every output equals the hand computation" [ $? -eq 0 ]

# A niced busy loop: its CPU time is in cpu_nice (the CPU page and
# --stats) and in the utilisation (which counts user, nice, system, irq,
# softirq and steal as busy).  The kernel's own accounting, read by the
# test from /proc/stat around the run, is the reference.  The sampler runs
# bare (see counters.sh): the figures are the kernel's, not valgrind's.
if command -v nice >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1; then
    head -n 1 /proc/stat >"$T/stat0"
    "$PM_BIN/perfmon-sample" -o "$T/nice" -i 0.25 -- nice -n 10 timeout 3 sh -c 'while :; do :; done' \
        >/dev/null 2>&1
    head -n 1 /proc/stat >"$T/stat1"
    ${PM_WRAP:-} "$PM_BIN/perfmon-analyze" --stats --json "$T/nice" >"$T/nice.json"
    python3 - "$T" <<'PY'
import json, sys
T = sys.argv[1]
a = [float(x) for x in open(T + "/stat0").read().split()[1:9]]
b = [float(x) for x in open(T + "/stat1").read().split()[1:9]]
d = [y - x for x, y in zip(a, b)]
total = sum(d)
util = 100.0 * (total - d[3] - d[4]) / total
js = json.load(open(T + "/nice.json"))
m = {x["id"]: x for x in js["metrics"]}
wall = js["job"]["wall_time_s"]
nice_kernel = d[1] / 100.0 / wall          # USER_HZ ticks; the test's window is a little longer
got_util = js["job"]["cpu_avg_utilization_pct"]
got_nice = m["cpu_nice"]["avg_per_node"] if "cpu_nice" in m else None
print("kernel: utilisation %.1f %%, nice %.3f s/s; perfmon: %.1f %%, nice %s s/s"
      % (util, nice_kernel, got_util, got_nice))
ok = got_nice is not None and got_nice > 0.1 and abs(got_nice - nice_kernel) <= 0.25 * nice_kernel + 0.1 \
    and abs(got_util - util) <= 12
sys.exit(0 if ok else 1)
PY
    check "nice -n 10 busy loop: cpu_nice and CPU utilisation match /proc/stat" [ $? -eq 0 ]
fi
[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
