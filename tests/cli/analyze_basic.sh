#!/bin/sh
# perfmon-analyze on the fixtures: stdout, stderr and exit codes.
set -u
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
F="$PM_ROOT/fixtures"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
run() { # run the analyzer; sets rc, output in $T/out and $T/err
    $A "$@" >"$T/out" 2>"$T/err"
    rc=$?
}
# JSON checks need python3; without it they are skipped, not failed.
if command -v python3 >/dev/null 2>&1; then
    py() { python3 "$@"; }
else
    echo "SKIP  python3 not installed: JSON contents not checked"
    py() { true; }
fi

run --help
check "--help exits 0" [ "$rc" -eq 0 ]
check "--help names --stats" has "$T/out" "--stats"

run
check "no input exits 2" [ "$rc" -eq 2 ]
check "no input says so" has "$T/err" "no input"

run "$T/missing"
check "missing directory exits 2" [ "$rc" -eq 2 ]
check "missing directory is named" has "$T/err" "$T/missing"

mkdir "$T/empty"
run "$T/empty"
check "empty directory exits 2" [ "$rc" -eq 2 ]
check "empty directory message" has "$T/err" "holds no files"

run --repair=sometimes "$F/perfmon"
check "bad --repair exits 2" [ "$rc" -eq 2 ]
run --start yesterday "$F/perfmon"
check "bad --start exits 2" [ "$rc" -eq 2 ]
run --bogus "$F/perfmon"
check "unknown option exits 2" [ "$rc" -eq 2 ]

run --stats "$F/perfmon"
check "perfmon fixtures exit 0" [ "$rc" -eq 0 ]
check "stats table lists hosts" has "$T/out" "node-torn"
check "stats table has node figures" has "$T/out" "node_unused_cpu_hours"
check "torn binary is a warning" has "$T/err" "torn.pmp: offset .*torn tail"

# The text reads as the PDF does (one formatter, pm_fmt_num): counts are
# whole, sizes scaled, every per-node column has its unit.
check "--stats: counts without decimals" grep -q "^  samples  *139  *19  *40  1$" "$T/out"
check "--stats: bytes scaled" grep -q "^  proc_peak_rss_bytes  *1.0 GiB  *1.0 GiB  *1.0 GiB  (scaled)$" "$T/out"
check "--stats: no exponent in the job figures" sh -c "! sed -n '/^Job figures/,/^\$/p' '$T/out' | grep -q 'e[+-]0'"
grep -A2 "^Per node" "$T/out" >"$T/pernode"
check "--stats: a units line under the per-node labels" grep -q "^ *\[%\] *\[h\] *\[h\] *\[%\] *(scaled) *\[W\]" "$T/pernode"
run --stats --json "$F/perfmon"
check "--json exits 0" [ "$rc" -eq 0 ]
check "--json is valid JSON with its keys" py -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["perfmon_analyze"]["schema"] == 1
assert [n["host"] for n in d["nodes"]] == ["node-a", "node-b", "node-c", "node-torn"]
assert abs(d["job"]["cpu_avg_utilization_pct"] - 50) < 1e-9
m = {x["id"]: x for x in d["metrics"]}
assert m["net_out"]["quality"]["repaired"] == 1
assert m["rapl_package"]["quality"]["wraps_corrected"] == 12
assert m["rapl_package"]["nodes"] == 3
' "$T/out"

run "$F/bad"
check "only bad files exits 2" [ "$rc" -eq 2 ]
check "malformed JSON gives file:line:col" has "$T/err" "malformed.json:4:35: malformed JSON"

mkdir "$T/mixed"
cp "$F/perfmon/node-a.pmp" "$F/bad/malformed.json" "$F/bad/notes.txt" "$T/mixed/"
run -v "$T/mixed"
check "one bad file is a warning" [ "$rc" -eq 0 ]
check "the warning names the file" has "$T/err" "warning: .*malformed.json:4:35"
check "-v notes files that are not profiles, and why" has "$T/err" "note: .*notes.txt: offset 0: not a profile"
run --strict "$T/mixed"
check "--strict makes it fatal (exit 1)" [ "$rc" -eq 1 ]

run --stats --json --compat=ska "$F/ska/cpu_metrics.json"
check "--compat=ska exits 0" [ "$rc" -eq 0 ]
check "--compat=ska reproduces SKA's figures" py -c '
import json, sys
d = json.load(open(sys.argv[1]))
m = {x["id"]: x for x in d["metrics"]}
assert d["perfmon_analyze"]["compat"] == "ska"
assert abs(m["cpu_usage"]["avg_per_node"] - 47.5) < 1e-9
assert abs(m["net_out"]["avg_per_node"] - 0.5875) < 1e-9
# node-b: sockets 0.8 and 1.6 W; node-a has no RAPL: 0 W on both, as in the SKA table
assert abs(m["rapl_package"]["avg_per_node"] - 0.6) < 1e-9
assert abs(m["rapl_package"]["max_per_node"] - 2) < 1e-9
' "$T/out"

run --data "$T/data" --csv "$T/out.csv" --hdf5 "$T/out.h5" "$F/perfmon"
check "exports exit 0" [ "$rc" -eq 0 ]
check "nothing on stdout without --stats" [ ! -s "$T/out" ]
for f in net_out_per_node.dat net_out_all_nodes.dat net_out.gp; do
    check "--data wrote $f" [ -s "$T/data/$f" ]
done
check "--csv header" has "$T/out.csv" "^host,time \[s\],cpu_usage \[%\]"
check "--hdf5 file" [ -s "$T/out.h5" ]
if command -v gnuplot >/dev/null 2>&1; then
    (cd "$T/data" && gnuplot net_out.gp) >/dev/null 2>&1
    check "gnuplot renders the script" [ -s "$T/data/net_out_per_node.png" ]
    # Every script, constant metrics included, renders without a word
    # from gnuplot (an "empty y range" warning per constant metric before).
    (cd "$T/data" && for g in *.gp; do gnuplot "$g" || echo "$g failed"; done) >"$T/gp.err" 2>&1
    check "every --data script renders silently" [ ! -s "$T/gp.err" ]
    [ -s "$T/gp.err" ] && head -5 "$T/gp.err"
else
    echo "SKIP  gnuplot not installed: scripts not rendered"
fi

if [ -w /dev/full ]; then
    $A --stats "$F/perfmon" >/dev/full 2>"$T/err"
    rc=$?
    check "a full disk on stdout exits 3" [ "$rc" -eq 3 ]
    run --csv /dev/full "$F/perfmon"
    check "a full disk on --csv exits 3" [ "$rc" -eq 3 ]
    check "a full disk on --csv: /dev/full is still a device" [ -c /dev/full ]
fi

# A write that fails half way (a file size limit, with SIGXFSZ ignored so
# that write(2) says EFBIG) leaves the older file of that name as it was,
# and no temporary file beside it; a write that succeeds replaces it.
for o in csv hdf5; do
    echo "older $o" >"$T/old.$o"
    (trap '' XFSZ; ulimit -f 2; exec $A -q "--$o" "$T/old.$o" "$F/perfmon") 2>"$T/fsz.err"
    rc=$?
    check "--$o cut short by a size limit: exit 3" [ "$rc" -eq 3 ]
    check "--$o cut short: the older file stays" [ "$(cat "$T/old.$o")" = "older $o" ]
    check "--$o cut short: no temporary file left" [ ! -e "$T/old.$o.tmp" ]
done
run -q --csv "$T/old.csv" "$F/perfmon"
check "--csv written whole replaces the older file" \
    [ "$(grep -c '^[^,]*,[0-9]' "$T/old.csv")" -gt 10 ]

for d in perfmon ska/cpu_metrics.json; do
    PM_THREADS=1 $A --stats --json -q "$F/$d" >"$T/t1.json" 2>/dev/null
    PM_THREADS=4 $A --stats --json -q "$F/$d" >"$T/t4.json" 2>/dev/null
    check "$d: results do not depend on the thread count" \
        sh -c "[ -s '$T/t1.json' ] && cmp -s '$T/t1.json' '$T/t4.json'"
done

# Profiles of different jobs and runs (1970-dated SKA files, a 2023 perfmon
# job) are not one job: refused, each run listed, and the way to pick one.
run "$F/perfmon" "$F/ska"
check "jobs decades apart: exit 2" [ "$rc" -eq 2 ]
check "jobs decades apart: the message says what to do" has "$T/err" "3 runs of 2 jobs.*--run N"
check "jobs decades apart: run 1 listed" has "$T/err" "run 1: job (none), from 1970-01-01T00:01:40Z for 8 s; 2 hosts: node-a, node-b; 1 file: .*cpu_metrics.json"
check "jobs decades apart: run 3 listed" has "$T/err" "run 3: job synthetic, from 2023-11-14T22:13:19Z for 40 s; 4 hosts"
check "jobs decades apart: no hint to --align=index" sh -c "! grep -q align=index $T/err"
run --align=index "$F/perfmon" "$F/ska"
check "jobs decades apart with --align=index: still refused (no 1.8e9 s job)" [ "$rc" -eq 2 ]
run --stats --json --run 3 "$F/perfmon" "$F/ska"
check "--run 3 picks the perfmon job" [ "$rc" -eq 0 ]
check "--run 3: its 4 hosts, 39.7 s" py -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [n["host"] for n in d["nodes"]] == ["node-a", "node-b", "node-c", "node-torn"]
assert abs(d["job"]["end"] - d["job"]["start"] - 39.7) < 1e-6, d["job"]
' "$T/out"
run --stats --json --job synthetic "$F/perfmon" "$F/ska"
check "--job synthetic picks the same" py -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["nodes"]) == 4
' "$T/out"
run --job nosuchjob "$F/perfmon" "$F/ska"
check "--job of no profile: exit 2, named" sh -c "[ $rc -eq 2 ] && grep -q 'nosuchjob: no profile of that job' '$T/err'"
run --run 2 --stats "$F/ska"
check "--run 2 of the SKA directory: the single host" has "$T/out" "solo"
PM_THREADS=1 $A --data "$T/d1" -q "$F/perfmon" 2>/dev/null
PM_THREADS=4 $A --data "$T/d4" -q "$F/perfmon" 2>/dev/null
check "data files do not depend on the thread count" diff -r "$T/d1" "$T/d4"

run --start +10 --end +19 --stats --json "$F/perfmon"
check "window exits 0" [ "$rc" -eq 0 ]
check "window limits the span" py -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d["job"]["wall_time_s"] - 9) < 1e-6, d["job"]["wall_time_s"]
' "$T/out"

[ "$fails" -eq 0 ]
