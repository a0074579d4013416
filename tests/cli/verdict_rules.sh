#!/bin/sh
# The verdict's per-host rules (docs/analysis.md, "Efficiency rules"): a node
# that stopped working while the others went on, a node near its memory,
# memory and I/O pressure, CPU and GPU throttling, each named with its host
# and when it began, on page 1 of the PDF and in --stats and --stats --json,
# the same in memory and with --stream; steady jobs name nothing.
set -u
. "$PM_ROOT/tests/support/cli.sh"
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export PERFMON_TEMPLATES="$PM_ROOT/templates"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed: no generated job"
    exit 0
fi
mkdir "$T/ska" "$T/steady"
python3 "$PM_ROOT/tests/support/verdict_ska32.py" "$T/ska/cpu_metrics.json"
python3 "$PM_ROOT/tests/support/verdict_ska32.py" "$T/steady/cpu_metrics.json" steady
python3 "$PM_ROOT/tests/support/verdict_counters.py" "$T/jl"
python3 "$PM_ROOT/tests/support/verdict_counters.py" "$T/quiet" quiet

# The 32-node SKA job: node-17's CPU falls to 2 % at sample 192 of 385
# (10 s apart: the interval from 0:31:50), node-9's job memory crosses 90 %
# of its node at sample 343 (0:57:10) and peaks at 96 %.
STOP="node-17 stopped working at 11:38:30 UTC (0:31:50 into the job): its processes' CPU fell from 99 % to 2 % for the last 50 % of the job, while the other 31 nodes went on"
MEM="node-9 came within 4 % of its memory at 12:03:50 UTC (0:57:10 into the job): the job's memory reached 96 % of the node"
for mode in "" --stream; do
    $A --stats $mode "$T/ska" >"$T/ska$mode.txt" 2>"$T/ska$mode.err"
    check "SKA 32 nodes$mode: --stats names node-17 and when it stopped" has "$T/ska$mode.txt" "$STOP"
    check "SKA 32 nodes$mode: --stats names node-9 and when it came near its memory" has "$T/ska$mode.txt" "$MEM"
    $A --stats --json $mode "$T/ska" >"$T/ska$mode.json" 2>>"$T/ska$mode.err"
    $A --stats $mode "$T/steady" >"$T/steady$mode.txt" 2>&1
    check "steady 32 nodes$mode: neither stopped nor near memory" sh -c \
        "! grep -q -e 'stopped working' -e 'of its memory' '$T/steady$mode.txt' && grep -q '32 hosts' '$T/steady$mode.txt'"
done
check "SKA 32 nodes: the notes of --stream are those in memory (JSON)" python3 -c "
import json, sys
a = json.load(open('$T/ska.json'))['notes']
b = json.load(open('$T/ska--stream.json'))['notes']
n = {x['rule']: x for x in a}
ok = a == b and n['node_stopped']['host'] == 'node-17' and n['memory_near_capacity']['host'] == 'node-9'
ok = ok and n['node_stopped']['t'] == 1795000000 + 1910 and n['memory_near_capacity']['t'] == 1795000000 + 3430
sys.exit(not ok)"

if command -v pdftotext >/dev/null 2>&1; then
    for mode in "" --stream; do
        $A -q $mode --pdf "$T/ska$mode.pdf" "$T/ska" 2>/dev/null
        pdftotext -l 1 "$T/ska$mode.pdf" - | tr '\n' ' ' | tr -s ' ' >"$T/p1$mode.txt"
        check "SKA 32 nodes$mode: page 1 names node-17 and its time" has "$T/p1$mode.txt" "node-17 stopped working at 11:38:30 UTC (0:31:50 into the job)"
        check "SKA 32 nodes$mode: page 1 names node-9 and its time" has "$T/p1$mode.txt" "node-9 came within 4 % of its memory at 12:03:50 UTC"
    done
    $A -q --pdf "$T/steady.pdf" "$T/steady" 2>/dev/null
    check "steady 32 nodes: page 1 names neither" sh -c \
        "pdftotext -l 1 '$T/steady.pdf' - | tr '\n' ' ' | grep -q -v -e 'stopped working' -e 'of its memory' && pdftotext -l 1 '$T/steady.pdf' - | grep -q 'Efficiency notes'"
else
    echo "SKIP  pdftotext not installed: page 1 not read"
fi

# Cgroup, PSI and GPU counters (JSON Lines, 120 samples at 1 s).
if command -v pdftotext >/dev/null 2>&1; then
    $A -q --pdf "$T/jl.pdf" "$T/jl" 2>/dev/null
    pdftotext -l 1 "$T/jl.pdf" - | tr '\n' ' ' | tr -s ' ' >"$T/jl1.txt"
    check "node near its memory: the verdict gives the peak, the note the rest (one sentence each)" sh -c \
        "grep -q 'Memory peaked at 95 % of a node (a)\.' '$T/jl1.txt' && ! grep -q 'came within 5 % of running out' '$T/jl1.txt' && grep -q '2 nodes (a, b), e.g. a came within 5 % of its memory at 11:08:26 UTC' '$T/jl1.txt'"
fi
for mode in "" --stream; do
    $A --stats $mode "$T/jl" >"$T/jl$mode.txt" 2>&1
    check "counters$mode: memory pressure on a from 0:01:00" has "$T/jl$mode.txt" "a: the job's processes all stalled waiting for memory 25 % of the time (PSI full; first above 10 % at 11:07:40 UTC, 0:01:00 into the job)"
    check "counters$mode: I/O pressure on b from the start" has "$T/jl$mode.txt" "b: the job's processes all stalled waiting for I/O 20 % of the time (PSI full; first above 10 % at 11:06:40 UTC, 0:00:00 into the job)"
    check "counters$mode: CPU throttling on a from 0:00:30" has "$T/jl$mode.txt" "a: the job's CPU limit throttled it in 15 % of its scheduling periods (first above 5 % at 11:07:10 UTC, 0:00:30 into the job)"
    check "counters$mode: GPU thermal throttling on gpu-0.b" has "$T/jl$mode.txt" "gpu-0.b: the GPU's clocks were held down by its thermal limit 10 % of the time"
    check "counters$mode: b's cgroup memory near its limit at 0:01:42" has "$T/jl$mode.txt" "b came within 3.1 % of its memory at 11:08:22 UTC (0:01:42 into the job): the job's cgroup memory reached 97 % of its limit of 64.0 MiB"
    check "counters$mode: a's node memory near capacity at 0:01:46" has "$T/jl$mode.txt" "a came within 5 % of its memory at 11:08:26 UTC (0:01:46 into the job): memory use reached 95 % of the node"
    $A --stats $mode "$T/quiet" >"$T/quiet$mode.txt" 2>&1
    check "counters flat$mode: no pressure, throttling or memory note" sh -c \
        "! grep -q -e 'stalled' -e 'throttled it' -e 'held down' -e 'of its memory' '$T/quiet$mode.txt' && grep -q '2 hosts' '$T/quiet$mode.txt'"
done
check "counters: --stats of --stream is that in memory, byte for byte" cmp "$T/jl.txt" "$T/jl--stream.txt"
if command -v pdftotext >/dev/null 2>&1; then
    check "SKA 32 nodes: the PDF of --stream is that in memory, byte for byte" \
        env SOURCE_DATE_EPOCH=1700000000 sh -c "$A -q --pdf '$T/m.pdf' '$T/ska' && $A -q --stream --pdf '$T/s.pdf' '$T/ska' && cmp '$T/m.pdf' '$T/s.pdf'"
fi
check "SKA 32 nodes: --stats of --stream is that in memory, byte for byte" cmp "$T/ska.txt" "$T/ska--stream.txt"
[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
