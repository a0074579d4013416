#!/bin/sh
# Several nodes without a cluster: three samplers, each in its own UTS
# namespace with its own host name (unshare -u), write into one directory
# as one job; perfmon-analyze then has to see three hosts, keep their data
# apart (per-node columns, per-node plots) and combine them right (every
# Total is the sum and every Average the mean of the nodes at that instant).
set -u
S="${PM_WRAP:-} $PM_BIN/perfmon-sample"
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
if ! unshare -u true 2>/dev/null; then
    echo "SKIP  UTS namespaces not permitted here (unshare -u): multi-node run not tested"
    exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed: multi-node results not checked"
    exit 0
fi

# node1 and node3 keep a core busy for 2 s, node2 sleeps.
D="$T/job"
for h in node1 node2 node3; do
    case $h in
    node2) work="sleep 2" ;;
    *) work="timeout 2 sh -c 'while :; do :; done'" ;;
    esac
    env -u SLURMD_NODENAME unshare -u sh -c \
        "hostname $h && exec $S -o '$D' -i 0.2 -j multi-7 -- sh -c \"$work\"" 2>"$T/$h.err" &
done
wait
check "one profile per node, named by its host" \
    [ "$(cd "$D" && ls | sort | tr '\n' ' ')" = "multi-7_node1.pmp multi-7_node2.pmp multi-7_node3.pmp " ]
check "the machine's own host name is not used" [ -z "$(ls "$D" | grep -v '_node[123]\.pmp$')" ]

$A "$D" --stats >"$T/out" 2>"$T/err"
check "analysis exits 0" [ $? -eq 0 ]
check "stats text names three hosts" has "$T/out" "3 hosts"
for h in node1 node2 node3; do
    check "per-node table row for $h" grep -q "^  $h " "$T/out"
done

$A "$D" --stats --json >"$T/json" 2>/dev/null
check "hosts, job id and per-node process CPU" python3 - "$T/json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert [n["host"] for n in d["nodes"]] == ["node1", "node2", "node3"], d["nodes"]
assert d["job"]["hosts"] == 3
m = {x["id"]: x for x in d["metrics"]}["proc_cpu"]
mean = {h: v["mean"] for h, v in m["hosts"].items()}
assert mean["node1"] > 5 and mean["node3"] > 5, mean
assert mean["node1"] > 3 * mean["node2"] and mean["node3"] > 3 * mean["node2"], mean
assert m["nodes"] == 3
EOF

$A "$D" --data "$T/data" --plots "$T/plots" -q
check "Total and Average of every metric match its per-node columns" python3 - "$T/data" <<'EOF'
import glob, math, os, sys
def rows(path):
    out = []
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        out.append([float(x) for x in line.split()])
    return out
checked = {"Total": 0, "Average": 0}
for agg in sorted(glob.glob(os.path.join(sys.argv[1], "*_all_nodes.dat"))):
    per = agg.replace("_all_nodes.dat", "_per_node.dat")
    head = open(per).read()
    assert head.count('"node1"') == 1 and head.count('"node2"') == 1 and head.count('"node3"') == 1, per
    kind = "Total" if "column 2: Total" in open(agg).read() else "Average"
    a, p = rows(agg), rows(per)
    assert len(a) == len(p) and len(a) > 3, (agg, len(a), len(p))
    for ra, rp in zip(a, p):
        assert ra[0] == rp[0], (agg, ra[0], rp[0])
        vals = [v for v in rp[1:] if not math.isnan(v)]
        assert int(ra[2]) == len(vals), (agg, ra, rp)
        if not vals:
            continue
        want = sum(vals) if kind == "Total" else sum(vals) / len(vals)
        assert abs(ra[1] - want) <= 1e-3 * max(1.0, abs(want)), (agg, kind, ra, rp)
        checked[kind] += 1
assert checked["Total"] > 0 and checked["Average"] > 0, checked
print(checked)
EOF
check "per-node plots drawn" [ "$(ls "$T/plots" | grep -c '_per_node\.png$')" -gt 10 ]
check "all-node plots drawn" [ "$(ls "$T/plots" | grep -c '_all_nodes\.png$')" -gt 10 ]
check "per-node plot scripts have one line per node" \
    grep -q 'title "node3"' "$T/data/cpu_usage.gp"

[ "$fails" -eq 0 ]
