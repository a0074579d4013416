#!/bin/sh
# perfmon-analyze's progress line (issue 18): on a terminal, one line on
# stderr rewritten in place ("\r") with the files and MB read, the hosts
# and metrics derived, then the report's plots and pages, each stage ended
# with a newline; its counts checked against the input directory itself
# (ls, wc -c) and the PDF (pdfinfo); at most about 10 updates a second.
# With -q, or with stderr not a terminal, not a byte of it.
set -u
S="$PM_BIN/perfmon-sample" # bare: the samplers only make the inputs
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed: no pseudo-terminal to test the progress line on"
    exit 0
fi
PTY="python3 $PM_ROOT/tests/support/on_pty.py"

# 12 nodes of one job, sampled at once (the host name from SLURMD_NODENAME).
D="$T/job"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
    SLURMD_NODENAME=n$i SLURM_JOB_ID=77 $S -o "$D" -i 0.1 -d 0.6 2>>"$T/sample.err" &
done
wait
nfiles=$(ls "$D" | wc -l)
mb=$(cat "$D"/* | wc -c | awk '{printf "%.3g", $1 / 1e6}')
check "12 profiles written" [ "$nfiles" -eq 12 ]

wall=$($PTY "$T/out" "$T/tty" $A "$D" --stats --pdf "$T/r.pdf")
check "exit 0 with stderr on a terminal" [ $? -eq 0 ]
tr '\r' '\n' <"$T/tty" >"$T/lines"
check "the line is rewritten in place (carriage returns)" \
    [ "$(grep -c 'perfmon-analyze: ' "$T/lines")" -ge 2 ]
# The analysis' last state: files and MB as the directory holds them.
check "files, MB, hosts and metrics: '12 files ($mb MB), 12 hosts, N metrics in'" \
    grep -Eq "perfmon-analyze: 12 files \\($mb MB\\), 12 hosts, [1-9][0-9]* metrics in [0-9.]+ s" "$T/lines"
# Each stage's line ends with a newline (the pty writes "\r\n").
check "the analysis' line ends with a newline" \
    sh -c "grep -a 'metrics in' '$T/tty' | grep -Eq \"$(printf 's\033\\\\[K\r')\$\""
if command -v pdfinfo >/dev/null 2>&1; then
    pages=$(pdfinfo "$T/r.pdf" | awk '/^Pages:/ {print $2}')
    check "the report's pages: 'report: N plots, $pages pages'" \
        grep -Eq "perfmon-analyze: report: [1-9][0-9]* plots, $pages pages in" "$T/lines"
fi
check "the statistics still on stdout" has "$T/out" "12 hosts"
check "the last byte on the terminal is a newline" [ "$(tail -c 1 "$T/tty" | od -An -c | tr -d ' ')" = '\n' ]
# At most about PROGRESS_HZ = 10 updates a second, plus one per stage
# change and the two final lines.
n=$(grep -c 'perfmon-analyze: ' "$T/lines")
max=$(awk -v w="$wall" 'BEGIN {printf "%d", 10 * w + 8}')
check "at most 10 updates a second ($n in $wall s, at most $max)" [ "$n" -le "$max" ]

# --stream: each pass over the hosts (the survey's times, the fold; the
# refine passes read the fold's spill, not the hosts)
# is shown as it begins (test_report's test_progress_stream checks every
# count), then the same last line as in memory (as many metrics).
nmet=$(grep -Eo ', [0-9]+ metrics in' "$T/lines" | head -1 | grep -Eo '[0-9]+')
$PTY "$T/out-s" "$T/tty-s" $A "$D" --stats --stream >/dev/null
check "--stream: exit 0 on a terminal" [ $? -eq 0 ]
tr '\r' '\n' <"$T/tty-s" >"$T/lines-s"
for p in "1/2" "2/2"; do
    check "--stream: 'pass $p over the hosts: N/12 hosts' (the times, the fold)" \
        grep -Eq "perfmon-analyze: pass $p over the hosts: [0-9]+/12 hosts" "$T/lines-s"
done
check "--stream: the last line as in memory: '12 files ($mb MB), 12 hosts, $nmet metrics in'" \
    grep -Eq "perfmon-analyze: 12 files \\($mb MB\\), 12 hosts, $nmet metrics in [0-9.]+ s" "$T/lines-s"
check "--stream: the statistics as in memory" cmp "$T/out" "$T/out-s"

$PTY "$T/out" "$T/tty-q" $A "$D" --stats -q >/dev/null
check "-q on a terminal: nothing on stderr" [ ! -s "$T/tty-q" ]

$A "$D" --stats --pdf "$T/r2.pdf" >"$T/out2" 2>"$T/err2"
check "stderr to a file: exit 0" [ $? -eq 0 ]
check "stderr to a file: no progress text" [ ! -s "$T/err2" ]
check "stderr to a file: no carriage return" [ "$(tr -cd '\r' <"$T/err2" | wc -c)" -eq 0 ]

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
