#!/bin/sh
# perfmon-analyze --pdf / --plots / --elapsed from the command line: file
# names, defaults, exit codes and messages, SKA input, reproducibility.
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
pdf_ok() { [ -s "$1" ] && head -c 5 "$1" | grep -q '%PDF-'; }
poppler=1
command -v pdftotext >/dev/null 2>&1 || { poppler=0; echo "SKIP  poppler-utils not installed: PDF text not checked"; }

run --help
check "--help names --pdf" has "$T/out" "--pdf \[FILE\]"
check "--help names --plots" has "$T/out" "--plots DIR"

# --pdf FILE, --pdf=FILE, and --pdf alone (job-report-<jobid>-<start>.pdf in .).
run "$F/perfmon" --pdf "$T/a.pdf"
check "--pdf FILE exits 0" [ "$rc" -eq 0 ]
check "--pdf FILE writes a PDF" pdf_ok "$T/a.pdf"
check "--pdf alone prints no statistics" [ ! -s "$T/out" ]
run --pdf="$T/b.pdf" "$F/perfmon"
check "--pdf=FILE writes a PDF" pdf_ok "$T/b.pdf"
mkdir "$T/cwd"
(cd "$T/cwd" && $A --pdf "$F/perfmon" >/dev/null 2>&1)
# The fixture's earliest sample is at 2023-11-14 22:13:19 UTC (1700000000 - 1 s).
check "--pdf without a name writes job-report-<jobid>-<start>.pdf" pdf_ok "$T/cwd/job-report-synthetic-20231114T221319Z.pdf"
(cd "$T/cwd" && $A --pdf myreport "$F/perfmon" >/dev/null 2>"$T/err")
check "--pdf NAME without .pdf takes NAME as the file" pdf_ok "$T/cwd/myreport"
(cd "$T/cwd" && $A "$F/perfmon" --pdf report2 >/dev/null 2>"$T/err")
check "--pdf NAME after the input takes NAME as the file" pdf_ok "$T/cwd/report2"
(cd "$T/cwd" && $A --pdf --stats "$F/perfmon" >"$T/out" 2>"$T/err")
check "--pdf --stats still prints the table" has "$T/out" "node_unused_cpu_hours"

# Reproducible with SOURCE_DATE_EPOCH.
SOURCE_DATE_EPOCH=1700000000 $A "$F/perfmon" --pdf "$T/r1.pdf" 2>/dev/null
SOURCE_DATE_EPOCH=1700000000 $A "$F/perfmon" --pdf "$T/r2.pdf" 2>/dev/null
check "same input and SOURCE_DATE_EPOCH: identical bytes" cmp -s "$T/r1.pdf" "$T/r2.pdf"

if [ "$poppler" = 1 ]; then
    pdftotext -layout "$T/a.pdf" "$T/a.txt" 2>/dev/null
    check "header on the first page" has "$T/a.txt" "Job synthetic"
    check "page footer" has "$T/a.txt" "Page 1 of "
    for h in node-a node-b node-c node-torn; do
        check "host $h in the report" has "$T/a.txt" "$h"
    done
    check "repairs are reported" has "$T/a.txt" "Metrics with corrected values"
    pdfinfo "$T/r1.pdf" >"$T/info" 2>/dev/null
    check "creation date from SOURCE_DATE_EPOCH" has "$T/info" "CreationDate:.*Nov 14 22:13:20 2023"
    check "A4 pages" has "$T/info" "595.276 x 841.89"
    check "poppler and qpdf read the report without a warning" pdf_clean "$T/a.pdf"
    check "text is text: the header extracts as typed" has "$T/a.txt" "Job synthetic | User"
    # Plots are vectors: their titles and axis labels are text, and no
    # time-series plot is an image (few nodes: no colour map either).
    $A "$F/ska/cpu_metrics.json" --pdf "$T/v.pdf" 2>/dev/null
    pdftotext "$T/v.pdf" "$T/v.txt" 2>/dev/null
    check "a plot title is text" has "$T/v.txt" "^Average CPU Usage/Node: .*, Max CPU Usage/Node: "
    check "a y axis label is text" has "$T/v.txt" "^CPU Usage (%)$"
    check "the time axis label is text" has "$T/v.txt" "^Time (UTC)$"
    pdfimages -list "$T/v.pdf" 2>/dev/null | tail -n +3 >"$T/images"
    check "no raster image in a 2-node report (time series are paths)" [ ! -s "$T/images" ]
    # 20 nodes: the colour maps are the only images, one pixel per node
    # and time cell (20 rows, at most one column a sample: 40 here).
    mkdir "$T/n20"
    # Each node's CPU usage (the first column) rises by its own step, so
    # that the colour maps have something to show (flat metrics are rows of
    # the constant table, not maps).
    for i in $(seq 10 29); do
        python3 -c '
import json, sys
i = int(sys.argv[1])
for n, line in enumerate(open(sys.argv[2])):
    r = json.loads(line)
    if "host" in r:
        r["host"] = "node-%d" % i
    elif "v" in r:
        r["v"][0] = min(100, 5 + (i - 10) * (n % 7))
    print(json.dumps(r))' "$i" "$F/perfmon/node-c.jsonl" >"$T/n20/node-$i.jsonl"
    done
    run "$T/n20" --pdf "$T/n20.pdf"
    check "20 nodes to a PDF exits 0" [ "$rc" -eq 0 ]
    pdfimages -list "$T/n20.pdf" 2>/dev/null | tail -n +3 >"$T/images"
    check "20 nodes: the colour maps are images" [ -s "$T/images" ]
    check "20 nodes: every image has one row per node and a column per sample at most" \
        awk '$5 != 20 || $4 > 43 { bad = 1 } END { exit bad }' "$T/images"
    pdftotext "$T/n20.pdf" "$T/n20.txt" 2>/dev/null
    nheat=$(grep -c "Imbalance" "$T/n20.txt")
    check "20 nodes: colour map pages drawn" [ "$nheat" -ge 1 ]
    check "20 nodes report read without a warning" pdf_clean "$T/n20.pdf"
fi

# --plots: PNG files named after the metrics; --elapsed; SKA input.
run "$F/perfmon" --plots "$T/plots" --elapsed
check "--plots exits 0" [ "$rc" -eq 0 ]
check "--plots per-node file" [ -s "$T/plots/CPU_Usage_per_node.png" ]
check "--plots all-node file" [ -s "$T/plots/Total_Output_Traffic_all_nodes.png" ]
check "--plots without --pdf writes no PDF" eval '[ -z "$(ls "$T"/plots/*.pdf 2>/dev/null)" ]'
run "$F/ska/cpu_metrics.json" --pdf "$T/ska.pdf"
check "SKA input to a PDF exits 0" [ "$rc" -eq 0 ]
check "SKA input to a PDF" pdf_ok "$T/ska.pdf"
[ "$poppler" = 1 ] && check "SKA report read without a warning" pdf_clean "$T/ska.pdf"
# Titles say each word once ("Average Average CPU Usage/Node" was one).
doubled() { grep -Eiq '(^|[^[:alnum:]])([[:alpha:]]+) \2([^[:alnum:]]|$)' "$1"; }
if [ "$poppler" = 1 ]; then
    pdftotext "$T/ska.pdf" "$T/ska.txt" 2>/dev/null
    check "SKA report: no doubled word" eval '! doubled "$T/ska.txt"'
    check "report: no doubled word" eval '! doubled "$T/a.txt"'
fi
# Page 1's verdict says in words what --stats --json has in numbers: the
# sentences are rebuilt here from the JSON (bytes scaled by this script's
# own IEC formatter) and looked up in the text of page 1.
verdict_expect() { # JSON -> the sentences page 1 must hold, one a line
    python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
j, nodes = d['job'], [n for n in d['nodes'] if not n['gpu']]
def iec(b):
    u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']
    i = 0
    while i + 1 < len(u) and (b >= 1023.5 if i == 0 else b >= 1023.95):
        b /= 1024.0
        i += 1
    return '%.0f B' % b if i == 0 else ('%.1f %s' if b < 99.95 else '%.0f %s') % (b, u[i])
if j['node_cpu_hours']:
    used = (j['node_cpu_hours'] - j['node_unused_cpu_hours']) / j['node_cpu_hours'] * 100
    print('%.0f %% of the allocated CPU was used' % used)
cpu = [(n['cpu_avg_utilization_pct'], n['host']) for n in nodes if n['cpu_avg_utilization_pct'] is not None]
for v, h in cpu:
    others = (sum(x for x, _ in cpu) - v) / (len(cpu) - 1) if len(cpu) > 1 else 0
    if others > 0 and v / others < 0.5:
        print('%s was nearly idle: its CPU averaged %.0f %% against %.0f %% on the other nodes.' % (h, v, others))
mem = [(n['max_t_mem_percent'], n['host']) for n in nodes if n['max_t_mem_percent'] is not None]
if mem:
    v, h = max(mem, key=lambda x: x[0])
    print(('%s came within %.0f %% of running out of memory' % (h, 100 - v)) if v >= 80 else
          'Memory peaked at %.0f %% of a node (%s).' % (v, h))
if j['total_net_io_ext_sent_mb']:
    print('%s were sent and %s received over the network.' % (iec(j['total_net_io_ext_sent_mb'] * 2**20), iec((j['total_net_io_ext_recv_mb'] or 0) * 2**20)))
if j['total_disk_io_read_mb'] is not None:
    print('%s were read from disk and %s written.' % (iec(j['total_disk_io_read_mb'] * 2**20), iec(j['total_disk_io_write_mb'] * 2**20)))
if j['incomplete']:
    print('Incomplete profile:')
if all(n['perf_instructions'] is None for n in nodes):
    print('No PMU counters on these nodes: IPC and FLOP/s not measured.')
" "$1"
}
verdict_check() { # NAME JSON PDF
    pdftotext -f 1 -l 1 "$3" - 2>/dev/null | tr '\n' ' ' | tr -s ' ' >"$T/page1"
    verdict_expect "$2" >"$T/expect"
    check "$1: page 1 has a verdict" [ -s "$T/expect" ]
    while IFS= read -r line; do
        check "$1: page 1 says \"$line\"" grep -qF -- "$line" "$T/page1"
    done <"$T/expect"
}
if [ "$poppler" = 1 ] && command -v python3 >/dev/null 2>&1; then
    $A "$F/perfmon" --stats --json >"$T/a.json" 2>/dev/null
    verdict_check "4-node fixture" "$T/a.json" "$T/a.pdf"
    grep -c . "$T/expect" | grep -qx 6 || { echo "FAIL  4-node fixture: 6 sentences expected"; fails=$((fails + 1)); }
    $A "$F/ska/cpu_metrics.json" --stats --json >"$T/ska.json" 2>/dev/null
    verdict_check "SKA input" "$T/ska.json" "$T/ska.pdf"
    check "SKA input: node-a named idle" grep -qF "node-a was nearly idle" "$T/page1"
    pdftotext -f 1 -l 1 -layout "$T/a.pdf" "$T/a1.txt" 2>/dev/null
    check "key figures scaled: Network sent in MiB with its unit" grep -Eq "Network sent .* 134 MiB *$" "$T/a1.txt"
    check "key figures scaled: CPU time in min" grep -Eq "CPU time allocated .* 36.0 min *$" "$T/a1.txt"
fi
run "$F/ska/cpu_metrics.json" --data "$T/skadata"
grep -h '^set title' "$T"/skadata/*.gp >"$T/titles"
check "--data titles: every script has them" [ -s "$T/titles" ]
check "--data titles: no doubled word" eval '! doubled "$T/titles"'

# Failures: exit 3, the file named, nothing half-written left.
run "$F/perfmon" --pdf "$T/missing/dir/r.pdf"
check "unwritable --pdf exits 3" [ "$rc" -eq 3 ]
check "unwritable --pdf is named" has "$T/err" "$T/missing/dir/r.pdf"
check "unwritable --pdf says why, in the system's words" has "$T/err" "No such file or directory"
check "unwritable --pdf: no library error code" eval "! grep -q \"0x\" \"$T/err\""
if [ "$(id -u)" != 0 ]; then
    mkdir "$T/ro" && chmod 555 "$T/ro"
    run "$F/perfmon" --pdf "$T/ro/r.pdf"
    check "read-only directory: Permission denied" has "$T/err" "Permission denied"
fi
touch "$T/afile"
run "$F/perfmon" --plots "$T/afile/sub"
check "--plots under a file exits 3" [ "$rc" -eq 3 ]
check "--plots error names the path" has "$T/err" "$T/afile"
run "$F/perfmon" --pdf "$T/c.pdf" --layout "$F/bad/malformed.json"
check "bad layout exits 2 (bad input, as a bad catalog)" [ "$rc" -eq 2 ]
check "bad layout is named" has "$T/err" "malformed.json"
check "no PDF from a bad layout" [ ! -e "$T/c.pdf" ]
run "$F/perfmon" --pdf "$T/c.pdf" --font /nonexistent.ttf
check "missing font exits 2 (--font names a file that cannot be read)" [ "$rc" -eq 2 ]
check "missing font is named" has "$T/err" "/nonexistent.ttf"

[ "$fails" -eq 0 ]
