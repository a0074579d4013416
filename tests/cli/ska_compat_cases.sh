#!/bin/sh
# --compat=ska, case by case (issue 14, item 7), against tests/support/ska_ref.py
# (SKA perfmon's DataFrame and plot steps re-done in plain Python) on inputs
# from tests/support/ska_gen.py:
#   rss_avg             process RSS combined as an Average across nodes
#   membw               memory_bw is B/s: shown in MiB/s, Average across nodes
#   merged_only         cpu_metrics.json beside per-host <jobid>_<host>.json: only the merged file
#   rapl_sockets        10 sockets: SKA sums sockets 0..7
#   rapl_missing_host   a host without rapl_powercap is 0 W in the per-node figures
#   rapl_socket_counts  1 and 2 sockets: SKA leaves the RAPL group at the first missing key
# Every figure within 1e-9 relative.  The default mode is checked for the
# unit of memory_bw and for reading the merged file only.
set -u
. "$PM_ROOT/tests/support/cli.sh"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed"
    exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 "$PM_ROOT/tests/support/ska_gen.py" "$T" || exit 1
for c in rss_avg membw merged_only rapl_sockets rapl_missing_host rapl_socket_counts; do
    python3 "$PM_ROOT/tests/support/ska_ref.py" "$T/$c" >"$T/$c.ref" || exit 1
    if ${PM_WRAP:-} "$PM_BIN/perfmon-analyze" --compat=ska --stats --json -q "$T/$c" >"$T/$c.out" 2>"$T/$c.err"; then
        python3 "$PM_ROOT/tests/support/ska_compare.py" "$c" "$T/$c.ref" "$T/$c.out" || fails=$((fails + 1))
    else
        echo "FAIL  $c: perfmon-analyze --compat=ska exited non-zero"
        cat "$T/$c.err"
        fails=$((fails + 1))
    fi
done

# Default mode: memory_bw in MiB/s (its maximum is the same figure as
# SKA's: a gauge, nothing repaired), and the merged file only, with -v
# naming the per-host files it did not read.
${PM_WRAP:-} "$PM_BIN/perfmon-analyze" --stats --json -q "$T/membw" >"$T/membw.def" || fails=$((fails + 1))
check "default mode: memory_bw in MiB/s (max per node as SKA's)" python3 - "$T/membw.ref" "$T/membw.def" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1]))["mem_bw_read"]
m = {x["id"]: x for x in json.load(open(sys.argv[2]))["metrics"]}["mem_bw_read"]
sys.exit(not (m["unit"] == "MiB/s" and abs(m["max_per_node"] - ref["max_per_node"]) <= 1e-9 * ref["max_per_node"]))
PY
${PM_WRAP:-} "$PM_BIN/perfmon-analyze" --stats --json -v "$T/merged_only" >"$T/mo.def" 2>"$T/mo.err" || fails=$((fails + 1))
check "default mode: only cpu_metrics.json is read (40 samples per host, none dropped)" python3 - "$T/mo.def" <<'PY'
import json, sys
nodes = json.load(open(sys.argv[1]))["nodes"]
sys.exit(not (len(nodes) == 2 and all(n["samples"] == 40 and n["dropped_timestamps"] == 0 and
                                      len(n["files"]) == 1 and n["files"][0].endswith("/cpu_metrics.json")
                                      for n in nodes)))
PY
check "-v names each per-host file not read" sh -c \
    "grep -c 'per-host SKA file not read' '$T/mo.err' | grep -qx 2 && grep -q '4242_nid000.json' '$T/mo.err'"
[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
