#!/bin/sh
# The data-quality page counts only what is wrong (docs/report.md, "Data
# quality"): the first sample of a rate or of a gauge the sampler computes
# over an interval (cpu.percent, cpu.core_max_pct) is empty by construction,
# and so may be the closing sample taken right after the command ended; a
# clean job says so in one line, in memory and with --stream.  Real sampler
# runs as two hosts (system-wide, and following -- sleep 2), then 18
# generated hosts (the many-node page with its
# worst-nodes list), clean and with one real gap.
set -u
. "$PM_ROOT/tests/support/cli.sh"
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
# The sampler runs bare (not under PM_WRAP): under valgrind its samples
# come late and some are missed, which the page rightly reports.
S="$PM_BIN/perfmon-sample"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export PERFMON_TEMPLATES="$PM_ROOT/templates"
if ! command -v pdftotext >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  pdftotext or python3 not installed: the page is not read"
    exit 0
fi
# The text of the data-quality page, its lines joined.
quality_page() { # pdf
    pdftotext "$1" - | awk '/^Data quality$/ { on++ } on == 2 { print } /^Metrics with corrected values/ { if (on == 2) exit }' |
        tr '\n' ' ' | tr -s ' '
}

# Two real sampler runs, hosts A and B, system-wide for 2 s: clean.
$S -o "$T/W" -i 0.2 -d 2 --host A >/dev/null 2>&1 &
$S -o "$T/W" -i 0.2 -d 2 --host B >/dev/null 2>&1
wait
# And following a command (-- sleep 2), where the closing sample comes
# right after the command ended, and USS is read at every sample.  The
# tree's USS of the sample right after CMD started may be missing (when
# the sampler reads USS is issue 30 item 6): at most that one value is
# reported per node, never the ~30 first-sample and closing-sample empties.
$S -o "$T/D" -i 0.2 --pss-interval 0 --host A -- sleep 2 >/dev/null 2>&1 &
$S -o "$T/D" -i 0.2 --pss-interval 0 --host B -- sleep 2 >/dev/null 2>&1
wait
for mode in "" --stream; do
    $A -q $mode --pdf "$T/W$mode.pdf" "$T/W" 2>"$T/W$mode.err"
    quality_page "$T/W$mode.pdf" >"$T/W$mode.txt"
    check "2 clean system-wide sampler runs$mode: the page says clean in one line" \
        has "$T/W$mode.txt" "All 2 nodes have every sample, no correction and a clock within a second."
    check "2 clean system-wide sampler runs$mode: no node has something to report" sh -c "! grep -q 'something to report' '$T/W$mode.txt'"
    $A -q $mode --pdf "$T/D$mode.pdf" "$T/D" 2>"$T/D$mode.err"
    quality_page "$T/D$mode.pdf" >"$T/D$mode.txt"
    check "2 sampler runs of -- sleep 2$mode: clean, or one missing value a node at most" sh -c \
        "grep -q 'All 2 nodes have every sample' '$T/D$mode.txt' || { grep -q 'A: 1 missing value;' '$T/D$mode.txt' && grep -q 'B: 1 missing value\.' '$T/D$mode.txt'; }"
done

# 18 generated hosts at 1 s: cpu.percent and cpu.core_max_pct empty at the
# first sample, and a closing sample 3 ms after the one before whose
# cpu.percent is empty; with "gap", host n07 also lacks cpu.percent at
# sample 20, which is wrong.
gen() { # dir [gap]
    python3 - "$@" <<'PYEOF'
import json, os, sys
out, gap = sys.argv[1], len(sys.argv) > 2
os.makedirs(out)
cols = [("cpu.percent", "%", "gauge"), ("cpu.core_max_pct", "%", "gauge"), ("cpu.user", "s", "counter"),
        ("mem.percent", "%", "gauge")]
t0 = 1795000000.0
for k in range(18):
    host = "n%02d" % k
    with open("%s/j_%s.jsonl" % (out, host), "w") as f:
        f.write(json.dumps({"format": "perfmon-profile", "version": 1, "host": host, "job_id": "j",
                            "scheduler": "local", "start": t0, "start_mono": 10.0, "interval": 1.0,
                            "run_id": "0000000000000001",
                            "columns": [{"name": c, "unit": u, "group": c.split(".")[0], "kind": kd,
                                         "type": "f64"} for c, u, kd in cols]}) + "\n")
        times = [float(i) for i in range(40)] + [39.003]
        for i, e in enumerate(times):
            pct = None if i == 0 or i == len(times) - 1 or (gap and k == 7 and i == 20) else 50.0
            f.write(json.dumps({"t": t0 + e, "mono": 10.0 + e,
                                "v": [pct, None if i == 0 else 60.0, e * 0.5, 20.0]}) + "\n")
PYEOF
}
gen "$T/clean"
gen "$T/gap" gap
for mode in "" --stream; do
    $A -q $mode --pdf "$T/clean$mode.pdf" "$T/clean" 2>/dev/null
    quality_page "$T/clean$mode.pdf" >"$T/clean$mode.txt"
    check "18 clean hosts$mode: the page says clean in one line" \
        has "$T/clean$mode.txt" "All 18 nodes have every sample, no correction and a clock within a second."
    check "18 clean hosts$mode: no worst-nodes list" sh -c "! grep -q -e 'something to report' -e 'Worst nodes' '$T/clean$mode.txt'"
    $A -q $mode --pdf "$T/gap$mode.pdf" "$T/gap" 2>/dev/null
    quality_page "$T/gap$mode.pdf" >"$T/gap$mode.txt"
    check "18 hosts, one real gap$mode: that node alone is reported" sh -c \
        "grep -q '1 of 18 nodes has something to report' '$T/gap$mode.txt' && grep -q 'n07 1 missing value' '$T/gap$mode.txt'"
done
[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
