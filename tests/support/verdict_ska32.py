#!/usr/bin/env python3
import json, sys
# Used by tests/cli/verdict_rules.sh.  32 SKA hosts, 10-s samples over 64 min; node-17's job CPU falls to 2 %
# halfway, node-9's job memory climbs to 96 % of its node; steady=1: none.
steady = len(sys.argv) > 2 and sys.argv[2] == "steady"
t0 = 1795000000
n = 385
names = ["node-%d" % i for i in range(1, 33)]
d = {"host_names": names}
for h in names:
    ts = [t0 + 10 * i for i in range(n)]
    cpu = []
    for i in range(n):
        c = 98.0 + (i % 3)
        if not steady and h == "node-17" and i >= n // 2:
            c = 2.0
        cpu.append(c)
    ct = [0.0]
    for i in range(1, n):
        ct.append(ct[-1] + cpu[i] / 100 * 10)
    mem = []
    for i in range(n):
        m = 40.0
        if not steady and h == "node-9":
            m = 40.0 + 56.0 * i / (n - 1)
        mem.append(round(m, 3))
    d[h] = {"time_stamps": ts, "cpu_percent_sys": [50] * n, "cpu_percent": cpu,
            "cpu_time": [round(x, 3) for x in ct], "memory_percent": mem,
            "memory_info": {"rss": [int(m * 1e9) for m in mem]}}
json.dump(d, open(sys.argv[1], "w"))
