#!/bin/sh
# --compat=ska against an independent reference: a random SKA cpu_metrics.json
# (ragged lists, counter resets, RAPL wraps, missing groups) is analysed by
# perfmon-analyze and by tests/support/ska_ref.py, a re-implementation of
# SKA perfmon's pandas steps (seed 003: the DataFrame, div, diff / time
# diff, mask(<0).ffill().fillna(0), mean/max per host, mean of means / max
# of maxima, positional Total/Average).
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
# The reference: tests/support/ska_ref.py (SKA's DataFrame and plot steps
# in plain Python; a host without RAPL is 0 W there, RSS an Average).
python3 "$PM_ROOT/tests/support/ska_ref.py" "$T" >"$T/ref.json" || exit 1
python3 "$PM_ROOT/tests/support/ska_compare.py" random "$T/ref.json" "$T/out.json" \
    cpu_usage net_out proc_rss rapl_package
