#!/usr/bin/env python3
"""An independent re-implementation of SKA perfmon's post-processing for
the figures perfmon-analyze --compat=ska must reproduce (plain Python: the
pandas steps of seed 003 done by hand).

usage: ska_ref.py DATA_DIR    prints a JSON object {metric id: figures}

What is reproduced, from seed 003 (shared/seeds/003_*.txt):
- only DATA_DIR/cpu_metrics.json is read (CreateDataFrame.go, GenReport.go);
- CreateDataFrame.check_non_default_metrics: memory_bw, then the RAPL
  columns "<domain>-<socket>" for domain in package, dram, core, uncore and
  socket 0..7 only, each kept when any host has it (get_value searches the
  whole document);
- CreateDataFrame.create_dataframe: per host, one row per time stamp;
  each list cut or NaN-padded to the host's time stamps; a KeyError (a host
  without the group, or without one of the group's keys) leaves the rest
  of that group unread for that host; rows shorter than the header list
  are padded with NaN by pandas (list-of-lists constructor);
- GenPlots.plotting_engine: value / unit_conversion, then for counters
  diff() / Timestamps.diff(), then replace_neg_values
  (mask(<0).ffill().fillna(0)); mean and max per host; energy: per socket
  0..7 present among the DataFrame's columns, summed per host, and the
  host's (mean, max) = (mean of socket means, max of socket maxima);
- make_plots: hosts in groupby (sorted) order; the per-node title is the
  mean of host means and the max of host maxima;
- combined_plotting_engine: host series side by side by position,
  Total = sum (NaN skipped), Average = mean (NaN skipped), then
  replace_neg_values; the all-node title is its mean and max.

The metric table gives SKA's plot label for each perfmon catalog id
(report page names: Average_CPU_Load, Average_Memory,
Average_Memory_Bandwidth_(Read), Total_*_Traffic, Total_RAPL_*_Power).
"""
import json
import math
import os
import sys

NaN = float("nan")
MiB = 1048576.0

# perfmon id -> (header or RAPL domain, conversion, rate, comb, energy)
METRICS = {
    "cpu_usage": ("cpu_percent_sys", 1.0, False, "Average", False),
    "proc_rss": ("rss", MiB, False, "Average", False),
    "mem_bw_read": ("memory_bw", MiB, False, "Average", False),
    "net_out": ("bytes_sent", MiB, True, "Total", False),
    "rapl_package": ("package", 1e6, True, "Total", True),
    "rapl_dram": ("dram", 1e6, True, "Total", True),
    "rapl_core": ("core", 1e6, True, "Total", True),
    "rapl_uncore": ("uncore", 1e6, True, "Total", True),
}

# The part of SKA's metric_header_names these metrics need, in its order:
# key in the host object -> header (str) or {sub key: header}.
BASE_HEADERS = [
    ("Host", "Host"),
    ("time_stamps", "Timestamps"),
    ("cpu_percent_sys", "cpu_percent_sys"),
    ("memory_info", {"rss": "rss"}),
    ("net_io_counters", {"bytes_sent": "bytes_sent"}),
]


def get_value(d, target):
    """Every value stored under key target anywhere in d (SKA's get_value)."""
    out = []
    for k, v in d.items():
        if k == target:
            out.append(v)
        elif isinstance(v, dict):
            out.extend(get_value(v, target))
    return out


def header_table(content):
    headers = list(BASE_HEADERS)
    if get_value(content, "memory_bw"):
        headers.append(("memory_bw", "memory_bw"))
    rapl = {}
    for domain in ("package", "dram", "core", "uncore"):
        for s in range(8):
            key = "%s-%d" % (domain, s)
            if get_value(content, key):
                rapl[key] = "%s %d" % (domain, s)
    if rapl:
        headers.append(("rapl_powercap", rapl))
    return headers


def to_float(x):
    if x is None:
        return NaN
    return float(x)


def dataframe(content):
    """Columns (header -> list) and the Host column, as pandas builds them."""
    headers = header_table(content)
    names, rows = [], []
    for host in content["host_names"]:
        n = len(content[host]["time_stamps"])
        cells = [[] for _ in range(n)]

        def add(header, data):
            if header not in names:
                names.append(header)
            for i in range(n):
                cells[i].append(host if header == "Host" else data[i])

        def fit(data):
            data = list(data)
            if len(data) < n:
                data += [NaN] * (n - len(data))
            return data[:n]

        for key, header in headers:
            try:
                value = content[host][key]
                if isinstance(header, str):
                    add(header, fit(value))
                else:
                    for sub, sub_header in header.items():
                        add(sub_header, fit(value[sub]))
            except KeyError:
                if header == "Host":
                    add(header, [])
        rows.extend(cells)
    cols = {h: [] for h in names}
    for r in rows:
        for j, h in enumerate(names):
            cols[h].append(r[j] if j < len(r) else NaN)
    return cols


def replace_neg(xs):
    r, last = [], NaN
    for x in xs:
        if not math.isnan(x) and x >= 0:
            last = x
        r.append(0.0 if math.isnan(last) else last)
    return r


def mean(xs):
    return sum(xs) / len(xs)


def derive(ts, raw, conv, rate):
    x = [to_float(v) / conv for v in raw]
    if rate:
        x = [NaN] + [(x[i] - x[i - 1]) / (ts[i] - ts[i - 1]) for i in range(1, len(x))]
    return replace_neg(x)


def figures(cols, mid):
    key, conv, rate, comb, energy = METRICS[mid]
    if energy:
        present = ["%s %d" % (key, s) for s in range(8) if "%s %d" % (key, s) in cols]
        if not present:
            return None
    elif key not in cols:
        return None
    groups = {}
    for i, h in enumerate(cols["Host"]):
        groups.setdefault(h, []).append(i)
    host_mm, series = [], []
    for h in sorted(groups):
        idx = groups[h]
        ts = [to_float(cols["Timestamps"][i]) for i in idx]
        if energy:
            parts, tot = [], None
            for c in present:
                s = derive(ts, [cols[c][i] for i in idx], conv, rate)
                parts.append((mean(s), max(s)))
                tot = s if tot is None else [a + b for a, b in zip(tot, s)]
            host_mm.append((mean([p[0] for p in parts]), max(p[1] for p in parts)))
            series.append(tot)
        else:
            s = derive(ts, [cols[key][i] for i in idx], conv, rate)
            host_mm.append((mean(s), max(s)))
            series.append(s)
    n = max(len(s) for s in series)
    agg = []
    for i in range(n):
        vals = [s[i] for s in series if i < len(s) and not math.isnan(s[i])]
        if comb == "Total":
            agg.append(sum(vals))
        else:
            agg.append(mean(vals) if vals else NaN)
    agg = replace_neg(agg)
    return {
        "avg_per_node": mean([m[0] for m in host_mm]),
        "max_per_node": max(m[1] for m in host_mm),
        "aggregate_mean": mean(agg),
        "aggregate_max": max(agg),
        "hosts": len(series),
        "host_means": [m[0] for m in host_mm],
    }


def main():
    with open(os.path.join(sys.argv[1], "cpu_metrics.json")) as f:
        content = json.load(f)
    cols = dataframe(content)
    out = {}
    for mid in METRICS:
        fig = figures(cols, mid)
        if fig:
            out[mid] = fig
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
