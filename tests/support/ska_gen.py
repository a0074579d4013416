#!/usr/bin/env python3
"""Write SKA perfmon inputs shaped like real jobs, one directory per case.

usage: ska_gen.py OUTDIR [CASE ...]   (no CASE: every case)

Each case directory holds a merged cpu_metrics.json (json.dump with
indent=4, as SKA writes it); the merged_only case also holds the per-host
<jobid>_<host>.json files SKA's samplers write before merging them.
Values are random (fixed seed per case) with the awkward parts the cases
are about: RSS of GiB size, memory bandwidth in bytes per second, RAPL on
more than 8 sockets, hosts without RAPL, hosts with fewer sockets, counter
resets and RAPL wraps.  The generator is independent of perfmon.
"""
import json
import os
import random
import sys

WRAP = 262143328850          # a typical max_energy_range_uj + 1


def counter(rng, n, lo, hi, reset_at=None, wrap=None):
    v, c = [], rng.randint(0, 1 << 30)
    for i in range(n):
        c = 0 if i == reset_at else c + rng.randint(lo, hi)
        if wrap:
            c %= wrap
        v.append(c)
    return v


def host_obj(rng, name, t0, n, interval=2, sockets=2, rapl=True, membw=False, domains=("package", "dram")):
    o = {"host_name": name, "sampling_frequency": interval,
         "time_stamps": [t0 + interval * i for i in range(n)]}
    o["cpu_percent_sys"] = [round(rng.uniform(0, 100), 2) for _ in range(n)]
    o["cpu_percent"] = [round(rng.uniform(0, 800), 2) for _ in range(n)]
    o["memory_percent"] = [round(rng.uniform(0, 30), 3) for _ in range(n)]
    o["memory_info"] = {"rss": [rng.randint(1 << 28, 40 << 30) for _ in range(n)],
                        "vms": [rng.randint(1 << 30, 80 << 30) for _ in range(n)]}
    o["net_io_counters"] = {"bytes_sent": counter(rng, n, 0, 50 << 20, reset_at=n // 2),
                            "bytes_recv": counter(rng, n, 0, 50 << 20)}
    if membw:
        # bytes per second: (LLC misses) * 64 / 2 s, as SKA computes it
        o["memory_bw"] = [rng.randint(0, 1 << 24) * 64.0 / 2 for _ in range(n)]
    if rapl:
        pk = {}
        for d in domains:
            for s in range(sockets):
                pk["%s-%d" % (d, s)] = counter(rng, n, 50 * interval * 10**6, 150 * interval * 10**6,
                                               wrap=WRAP)
        o["rapl_powercap"] = pk
    return o


def merged(hosts):
    d = {"host_names": [h["host_name"] for h in hosts]}
    for h in hosts:
        d[h["host_name"]] = h
    return d


def case_rss_avg(rng):
    hs = [host_obj(rng, "nid%03d" % i, 1700000000 + i, 60 + 5 * i) for i in (2, 0, 1)]
    return {"cpu_metrics.json": merged(hs)}


def case_membw(rng):
    hs = [host_obj(rng, "nid%03d" % i, 1700000000, 50, membw=True) for i in range(3)]
    return {"cpu_metrics.json": merged(hs)}


def case_merged_only(rng):
    hs = [host_obj(rng, "nid%03d" % i, 1700000000 + i, 40, membw=True) for i in range(2)]
    files = {"cpu_metrics.json": merged(hs)}
    for h in hs:
        files["4242_%s.json" % h["host_name"]] = h
    return files


def case_rapl_sockets(rng):
    hs = [host_obj(rng, "nid%03d" % i, 1700000000, 40, sockets=10) for i in range(2)]
    return {"cpu_metrics.json": merged(hs)}


def case_rapl_missing_host(rng):
    hs = [host_obj(rng, "nid%03d" % i, 1700000000, 40, rapl=(i != 1)) for i in range(3)]
    return {"cpu_metrics.json": merged(hs)}


def case_rapl_socket_counts(rng):
    # nid000 has one socket, nid001 two: SKA reads nid000's package-0, fails
    # on package-1 and leaves its whole RAPL group there (dram-0 unread).
    hs = [host_obj(rng, "nid000", 1700000000, 40, sockets=1),
          host_obj(rng, "nid001", 1700000000, 40, sockets=2)]
    return {"cpu_metrics.json": merged(hs)}


CASES = {
    "rss_avg": case_rss_avg,
    "membw": case_membw,
    "merged_only": case_merged_only,
    "rapl_sockets": case_rapl_sockets,
    "rapl_missing_host": case_rapl_missing_host,
    "rapl_socket_counts": case_rapl_socket_counts,
}


def main():
    out = sys.argv[1]
    names = sys.argv[2:] or list(CASES)
    for k, name in enumerate(names):
        rng = random.Random(1000 + sorted(CASES).index(name))
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        for fname, obj in CASES[name](rng).items():
            with open(os.path.join(d, fname), "w") as f:
                json.dump(obj, f, indent=4)


if __name__ == "__main__":
    main()
