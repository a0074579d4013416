#!/bin/sh
# The choice between the in-memory analysis and --stream (docs/analysis.md,
# "When it is chosen"): with a budget below the estimate (--memory=1M or
# PERFMON_MEMORY), --stats and --json switch to --stream by themselves,
# say so once on stderr (not with -q) and print the very bytes of --stream
# and of the in-memory run with a big budget, and so do --pdf (the same
# PDF), --csv, --data and --trace; --compat=ska is refused with exit
# status 5 and a message giving the estimate and the budget; --no-stream
# and --stream override.  The estimate's count of values is checked
# against the hosts x samples x columns this script wrote.
set -u
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
export PERFMON_TEMPLATES="$PM_ROOT/templates"
unset PERFMON_MEMORY
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed: no generated job"
    exit 0
fi

HOSTS=6
N=900
python3 - "$T/job" $HOSTS $N <<'EOF'
import json, math, os, sys
d, hosts, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(d)
cols = [("cpu.percent", "%", "cpu", "gauge"), ("cpu.ncpus", "1", "cpu", "gauge"),
        ("cpu.user", "s", "cpu", "counter"), ("mem.total", "B", "memory", "gauge"),
        ("mem.used", "B", "memory", "gauge"), ("disk.read_bytes", "B", "disk", "counter"),
        ("net.ext.bytes_sent", "B", "net", "counter")]
for h in range(hosts):
    host = "nid%05d" % h
    start = 1700000000.0 + 0.25 * h
    hdr = {"format": "perfmon-profile", "version": 1, "host": host, "job_id": "mem-1",
           "scheduler": "local", "node_rank": str(h), "user": "", "command": "", "sampler": "gen",
           "start": start, "start_mono": 100.0, "interval": 1.0, "pid": 0,
           "columns": [{"name": c[0], "unit": c[1], "group": c[2], "kind": c[3], "type": "f64"}
                       for c in cols]}
    user = disk = net = 0.0
    with open(os.path.join(d, host + ".jsonl"), "w") as f:
        f.write(json.dumps(hdr) + "\n")
        for i in range(n):
            cpu = 50 + 40 * math.sin(i / 60.0 + h) + h
            user += 0.37 * (1 + h % 3)
            disk += 4096 * ((i * 7 + h) % 13)
            net += 1000.5 * ((i + h) % 5)
            v = [round(cpu, 3), 4, round(user, 3), 8e9, 2e9 + 1e6 * ((i * (h + 1)) % 50), disk, net]
            f.write(json.dumps({"t": start + i, "mono": 100.0 + i, "v": v}) + "\n")
        f.write(json.dumps({"end": {"t": start + n - 1, "mono": 100.0 + n - 1, "samples": n,
                                    "late": 0, "missed": 0, "self_cpu": 0.1,
                                    "self_maxrss_kb": 2048, "exit_status": 0,
                                    "reason": "command exited"}}) + "\n")
EOF

# The estimate (with -v) counts about hosts x samples x columns values.
$A "$T/job" --stats -v --memory=1T >/dev/null 2>"$T/v.err"
values=$(sed -n 's/.*memory: the in-memory analysis would need about .* bytes: \([0-9]*\) values in \([0-9]*\) profiles.*/\1 \2/p' "$T/v.err")
check "-v: the estimate's note" test -n "$values"
set -- $values
want=$((HOSTS * N * 7))
check "the estimate counts $want values (hosts x samples x columns) within 5 %: ${1:-none}" \
    test "${1:-0}" -ge $((want * 95 / 100)) -a "${1:-0}" -le $((want * 105 / 100))
check "the estimate counts the $HOSTS profiles" test "${2:-0}" -eq $HOSTS

# The automatic switch: the bytes of --stream and of the in-memory run.
for fmt in "" "--json"; do
    $A "$T/job" --stats $fmt --memory=1M >"$T/auto.out" 2>"$T/auto.err"
    check "--memory=1M --stats $fmt: exit 0" test $? -eq 0
    $A "$T/job" --stats $fmt --stream >"$T/stream.out" 2>/dev/null
    $A "$T/job" --stats $fmt --memory=1T >"$T/mem.out" 2>"$T/mem.err"
    check "--memory=1M --stats $fmt: the bytes of --stream" cmp -s "$T/auto.out" "$T/stream.out"
    check "--memory=1M --stats $fmt: the bytes of the in-memory run" cmp -s "$T/auto.out" "$T/mem.out"
    check "--memory=1M --stats $fmt: said once on stderr" \
        test "$(grep -c 'analysing in bounded memory (--stream); --no-stream to override' "$T/auto.err")" -eq 1
    check "--memory=1M: the message gives the estimate and the budget" \
        has "$T/auto.err" 'would need about [0-9.]* MiB, 1.0 MiB available'
    check "--memory=1T --stats $fmt: nothing said" test ! -s "$T/mem.err"
    [ -n "$fmt" ] || cp "$T/mem.out" "$T/mem.txt"
done
PERFMON_MEMORY=1M $A "$T/job" --stats >"$T/env.out" 2>"$T/env.err"
check "PERFMON_MEMORY=1M: the switch" has "$T/env.err" 'analysing in bounded memory'
check "PERFMON_MEMORY=1M: the same bytes" cmp -s "$T/env.out" "$T/mem.txt"
PERFMON_MEMORY=1M $A "$T/job" --stats --memory=1T >/dev/null 2>"$T/env2.err"
check "--memory wins over PERFMON_MEMORY" test ! -s "$T/env2.err"
$A "$T/job" --stats -q --memory=1M >"$T/q.out" 2>"$T/q.err"
check "-q: the switch, silently" test ! -s "$T/q.err"
check "-q: the same bytes" cmp -s "$T/q.out" "$T/mem.txt"
$A "$T/job" --stats --memory=1M --no-stream >"$T/ns.out" 2>"$T/ns.err"
check "--no-stream: exit 0" test $? -eq 0
check "--no-stream: in memory, nothing said" test ! -s "$T/ns.err"
check "--no-stream: the same bytes" cmp -s "$T/ns.out" "$T/mem.txt"

# --pdf, which --stream makes too: switched, the same PDF as in memory.
export SOURCE_DATE_EPOCH=1700000000
$A "$T/job" --stats --pdf "$T/r.pdf" --memory=1M >/dev/null 2>"$T/pdf.err"
check "--pdf --memory=1M: exit 0" test $? -eq 0
check "--pdf --memory=1M: streamed, said" has "$T/pdf.err" 'analysing in bounded memory (--stream)'
$A "$T/job" --stats --pdf "$T/r1t.pdf" --memory=1T >/dev/null 2>&1
check "--pdf --memory=1M: the in-memory run's PDF" cmp -s "$T/r.pdf" "$T/r1t.pdf"
# An output that needs every series (--compat=ska: every host's columns
# given to all): refused, exit status 5, no file written.
$A "$T/job" --stats --compat=ska --csv "$T/r.csv" --memory=1M >/dev/null 2>"$T/tr.err"
check "--compat=ska --memory=1M: exit status 5" test $? -eq 5
check "--compat=ska --memory=1M: the estimate and the budget" \
    has "$T/tr.err" 'would need about [0-9.]* MiB, 1.0 MiB available'
check "--compat=ska --memory=1M: what to do" has "$T/tr.err" '--stream.*--no-stream to try anyway'
check "--compat=ska --memory=1M: names --compat=ska as the cause" \
    has "$T/tr.err" 'and --compat=ska needs every host.s series in memory'
check "--compat=ska --memory=1M: a window is not offered as a remedy" \
    has "$T/tr.err" '--start/--end do not lower the need'
check "--compat=ska --memory=1M: no file" test ! -e "$T/r.csv"
# --trace is written host by host by --stream too: switched, the same trace.
$A "$T/job" --trace "$T/r.trace" --memory=1M >/dev/null 2>"$T/tr.err"
check "--trace --memory=1M: exit 0, switched to --stream" \
    sh -c "[ $? -eq 0 ] && grep -q 'analysing in bounded memory (--stream)' '$T/tr.err'"
$A "$T/job" --trace "$T/r1t.trace" --memory=1T >/dev/null 2>&1
check "--trace --memory=1M: the in-memory run's trace" cmp -s "$T/r.trace" "$T/r1t.trace"
# --csv, --data and --hdf5 are written host by host by --stream: switched
# to it, the same files as in memory.
PERFMON_MEMORY=1M $A "$T/job" --csv "$T/a.csv" --data "$T/ad" >/dev/null 2>"$T/csv.err"
check "--csv --data, PERFMON_MEMORY=1M: exit 0" test $? -eq 0
check "--csv --data, PERFMON_MEMORY=1M: switched to --stream" \
    has "$T/csv.err" 'analysing in bounded memory (--stream)'
PERFMON_MEMORY=1M $A "$T/job" --csv "$T/b.csv" --data "$T/bd" --no-stream >/dev/null 2>"$T/csv.err"
check "--csv --no-stream: exit 0" test $? -eq 0
check "--csv --no-stream: one row per host and sample" \
    test "$(grep -c . "$T/b.csv")" -eq $((HOSTS * N + 1))
check "--csv: the bytes of the in-memory run" cmp -s "$T/a.csv" "$T/b.csv"
check "--data: the files of the in-memory run" diff -r "$T/ad" "$T/bd"
$A "$T/job" --pdf "$T/r.pdf" --memory=1T >/dev/null 2>&1
check "--pdf --memory=1T: made" test -s "$T/r.pdf"

# Bad values
$A "$T/job" --memory=lots >/dev/null 2>"$T/e1"
check "--memory=lots: exit 2" test $? -eq 2
check "--memory=lots: said" has "$T/e1" 'is not a size'
PERFMON_MEMORY=-3G $A "$T/job" >/dev/null 2>"$T/e2"
check "PERFMON_MEMORY=-3G: exit 2" test $? -eq 2
$A "$T/job" --stream --no-stream >/dev/null 2>"$T/e3"
check "--stream --no-stream: exit 2" test $? -eq 2

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
