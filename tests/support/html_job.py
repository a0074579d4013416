"""A generated job for the HTML report's tests (tests/cli/html_shots.sh,
tests/cli/html_mpi.sh).

usage: html_job.py DIR NODES [SAMPLES]

NODES nodes (node000 ...) of SAMPLES (120) one-second samples in JSON Lines, with
the phases setup, solve, write, solve, write (a kind twice: two spans) in
each node's events file; CPU a sine shifted per node (node007 flat at
12 %) with a little noise below 20 nodes, memory a saw tooth.  The same
bytes for the same arguments.
"""
import json
import math
import os
import random
import sys

d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d)
rnd = random.Random(3)
cols = [("cpu.percent", "%", "cpu", "gauge"), ("cpu.ncpus", "1", "cpu", "gauge"),
        ("mem.total", "B", "memory", "gauge"), ("mem.used", "B", "memory", "gauge")]
K = int(sys.argv[3]) if len(sys.argv) > 3 else 120
for i in range(n):
    host = "node%03d" % i
    head = {"format": "perfmon-profile", "version": 1, "host": host, "job_id": "shots",
            "scheduler": "slurm", "node_rank": str(i), "user": "u", "command": "app",
            "sampler": "html_job.py", "start": 1700000000.0, "start_mono": 1.0,
            "interval": 1.0, "pid": 0,
            "columns": [{"name": a, "unit": u, "group": g, "kind": k, "type": "f64"}
                        for a, u, g, k in cols]}
    with open(os.path.join(d, host + ".jsonl"), "w") as f:
        f.write(json.dumps(head) + "\n")
        for k in range(K):
            cpu = 50 + 35 * math.sin(k / 7.0 + (i % 64) / 10.0)
            cpu += rnd.uniform(-1, 1) if n < 20 else 0
            if i == 7:
                cpu = 12
            mem = 2 ** 33 + 2 ** 27 * ((k + i) % 17)
            f.write(json.dumps({"t": 1700000000.0 + k, "mono": 1.0 + k,
                                "v": [round(cpu, 3), 8, 2 ** 36, mem]}) + "\n")
        f.write(json.dumps({"end": {"t": 1700000000.0 + K - 1, "mono": float(K), "samples": K,
                                    "late": 0, "missed": 0, "self_cpu": 0.01,
                                    "self_maxrss_kb": 2000, "exit_status": 0,
                                    "reason": "command exited"}}) + "\n")
    with open(os.path.join(d, host + ".events"), "w") as f:
        for name, a, b in (("setup", 2, 20), ("solve", 20, 60), ("write", 60, 66),
                           ("solve", 66, K - 15), ("write", K - 15, K - 3)):
            for edge, t in (("start", a), ("end", b)):
                f.write(json.dumps({"perfmon_event": 1, "host": host, "pid": 1,
                                    "wall_ns": str((1700000000 + t) * 10 ** 9),
                                    "mono_ns": str((1 + t) * 10 ** 9), "name": name,
                                    "edge": edge, "attrs": {}}) + "\n")
