#!/usr/bin/env python3
"""Compare perfmon-analyze --compat=ska --stats --json with ska_ref.py.

usage: ska_compare.py CASE REF.json OUT.json [METRIC ...]
Every figure of every metric the reference has (or only those named) must
agree within 1e-9 relative; exit 1 on the first difference.
"""
import json
import sys

FIELDS = (("avg_per_node", lambda m: m["avg_per_node"]),
          ("max_per_node", lambda m: m["max_per_node"]),
          ("aggregate_mean", lambda m: m["aggregate"]["mean"]),
          ("aggregate_max", lambda m: m["aggregate"]["max"]),
          ("hosts", lambda m: m["nodes"]))


def main():
    case, ref_path, out_path = sys.argv[1:4]
    ref = json.load(open(ref_path))
    out = {m["id"]: m for m in json.load(open(out_path))["metrics"]}
    ids = sys.argv[4:] or sorted(ref)
    bad = 0
    for mid in ids:
        if mid not in ref:
            print("FAIL  %s: %s: not in the reference" % (case, mid))
            bad = 1
            continue
        if mid not in out:
            print("FAIL  %s: %s: perfmon-analyze has no such metric" % (case, mid))
            bad = 1
            continue
        for name, get in FIELDS:
            w, g = ref[mid][name], get(out[mid])
            if g is None or abs(g - w) > 1e-9 * max(1.0, abs(w)):
                print("FAIL  %s: %s %s: perfmon %r, SKA reference %r" % (case, mid, name, g, w))
                bad = 1
        if not bad:
            print("ok    %s: %s avg/node %.10g max/node %.10g all-node mean %.10g max %.10g" %
                  (case, mid, ref[mid]["avg_per_node"], ref[mid]["max_per_node"],
                   ref[mid]["aggregate_mean"], ref[mid]["aggregate_max"]))
    sys.exit(bad)


if __name__ == "__main__":
    main()
