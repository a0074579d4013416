#!/usr/bin/env python3
import json, sys, os
# Used by tests/cli/verdict_rules.sh.  Two JSON Lines profiles (hosts a, b), 120 samples at 1 s, with the
# cgroup, PSI and GPU throttle counters; quiet=1: every counter flat.
out, quiet = sys.argv[1], len(sys.argv) > 2 and sys.argv[2] == "quiet"
os.makedirs(out, exist_ok=True)
cols = [("cpu.percent", "%", "gauge"), ("mem.percent", "%", "gauge"), ("mem.total", "B", "gauge"),
        ("cg.cpu_usage", "s", "counter"), ("cg.cpu_periods", "1", "counter"),
        ("cg.cpu_throttled_periods", "1", "counter"), ("cg.cpu_throttled", "s", "counter"),
        ("cg.mem_current", "B", "gauge"), ("cg.mem_limit", "B", "gauge"),
        ("cg.psi_mem_full", "s", "counter"), ("cg.psi_io_full", "s", "counter"),
        ("psi.mem_full", "s", "counter"), ("psi.io_full", "s", "counter"),
        ("gpu.0.util", "%", "gauge"), ("gpu.0.throttle_thermal", "ns", "counter")]
t0, n = 1795000000.0, 120
for host in ("a", "b"):
    f = open("%s/j1_%s.jsonl" % (out, host), "w")
    hdr = {"format": "perfmon-profile", "version": 1, "host": host, "job_id": "j1",
           "scheduler": "local", "node_rank": "0", "user": "u", "command": "x",
           "sampler": "perfmon-sample test", "start": t0, "start_mono": 1000.0, "interval": 1.0,
           "pid": 1, "run_id": "00000000000000%02d" % (1 if host == "a" else 2),
           "columns": [{"name": c, "unit": u, "group": c.split(".")[0], "kind": k, "type": "f64"}
                       for c, u, k in cols]}
    f.write(json.dumps(hdr) + "\n")
    acc = dict(cpu=0, per=0, thr=0, thrs=0, pm=0, pi=0, npm=0, npi=0, gt=0)
    for i in range(n):
        if i:
            acc["cpu"] += 1.0
            acc["per"] += 10
            if not quiet and host == "a" and i > 30:
                acc["thr"] += 2      # 20 % of the periods from 0:00:30
                acc["thrs"] += 0.2
            if not quiet and host == "a" and i > 60:
                acc["pm"] += 0.5     # memory stalls half the time from 0:01:00
                acc["npm"] += 0.5
            if not quiet and host == "b":
                acc["pi"] += 0.2     # I/O stalls 20 % of the time throughout
                acc["npi"] += 0.2
                acc["gt"] += 0.1e9   # GPU held down by heat 10 % of the time
        mem_cur = 32 * 2**20 + (i * 30 * 2**20 / (n - 1) if not quiet and host == "b" else 0)
        # host a's node memory climbs to 95 % (90 % first at sample 106)
        node_mem = 50.0 + (45.0 * i / (n - 1) if not quiet and host == "a" else 0)
        v = [None if i == 0 else 50.0, node_mem, 8 * 2**30, acc["cpu"], acc["per"], acc["thr"],
             acc["thrs"], mem_cur, 64 * 2**20, acc["pm"], acc["pi"], acc["npm"], acc["npi"],
             90.0, acc["gt"]]
        f.write(json.dumps({"t": t0 + i, "mono": 1000.0 + i, "v": v}) + "\n")
    f.write(json.dumps({"end": {"t": t0 + n, "mono": 1000.0 + n, "samples": n, "late": 0, "missed": 0,
                                "self_cpu": 0.1, "self_maxrss_kb": 2000, "exit_status": 0,
                                "reason": "command exited"}}) + "\n")
