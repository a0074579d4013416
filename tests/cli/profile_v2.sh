#!/bin/sh
# Binary profile versions 3 (the default) and 2 end to end (docs/format.md,
# "Version 2 samples", "Version 3 samples"), checked
# with tests/support/pmp.py, a reader written from the format document
# alone:
# - kill -9 the sampler during a real workload: every sample it wrote reads
#   back and equals the JSON Lines copy of the same run (-f both), and
#   perfmon-analyze reads the killed profile;
# - the same run as version 1 (pmp.py to-v1) and version 3 gives
#   byte-identical perfmon-analyze --stats --json and --csv outputs;
# - version 3 takes at most a quarter of version 1's bytes per sample;
# - PERFMON_PROFILE_VERSION=1 makes the sampler write version 1, and =2
#   version 2, whose samples equal their JSON Lines copy.
set -u
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP  python3 not installed"; exit 0; }
PMP="python3 $PM_ROOT/tests/support/pmp.py"

# A workload shaped like a job: CPU and I/O in children, then a quiet
# phase; it ends by itself a few seconds after the sampler is killed.  The
# sampler runs bare: it must be mid-run when the kill comes.
work='dd if=/dev/zero of=/dev/null bs=1M count=800 status=none & dd if=/dev/zero of="$0" bs=64k count=200 status=none; wait; sleep 3'
$PM_BIN/perfmon-sample -o "$T/k" -i 0.05 -f both -- sh -c "$work" "$T/scratch" >"$T/k.out" 2>&1 &
spid=$!
sleep 2
kill -9 "$spid"
wait "$spid" 2>/dev/null
bin=$(ls "$T"/k/*.pmp)
json=$(ls "$T"/k/*.pmp.jsonl)
$PMP size "$bin" >"$T/k.size"
check "the killed sampler wrote version 3 ($(cat "$T/k.size"))" grep -q '^3 ' "$T/k.size"
$PMP compare "$bin" "$json" >"$T/k.cmp" 2>&1
rc=$?
cat "$T/k.cmp"
check "every sample before the kill equals its JSON Lines copy" [ "$rc" -eq 0 ]
n=$(sed -n 's/.* \([0-9]*\) compared.*/\1/p' "$T/k.cmp")
check "at least 20 samples were compared (${n:-none})" [ "${n:-0}" -ge 20 ]
$A --stats "$T/k" >"$T/k.stats" 2>"$T/k.err"
rc=$?
check "perfmon-analyze reads the killed profile (exit $rc)" [ "$rc" -eq 0 ]
check "its statistics name the samples" has "$T/k.stats" 'cpu'

# One clean run, written as version 3, then as version 1 by pmp.py.
$PM_BIN/perfmon-sample -o "$T/run" -i 0.05 -d 4 -- sh -c "$work" "$T/scratch" >"$T/run.out" 2>&1
check "the clean run exits 0" [ $? -eq 0 ]
mkdir -p "$T/v1/p" "$T/v2/p"
f=$(ls "$T"/run/*.pmp)
cp "$f" "$T/v2/p/"
$PMP to-v1 "$f" "$T/v1/p/$(basename "$f")"
$PMP size "$T/v1/p/$(basename "$f")" >"$T/v1.size"
$PMP size "$f" >"$T/v2.size"
echo "      bytes per sample: v1 $(cut -d' ' -f3 "$T/v1.size"), v3 $(cut -d' ' -f3 "$T/v2.size") ($(cut -d' ' -f2 "$T/v2.size") samples)"
check "version 3 takes at most 1/4 of version 1's bytes per sample" \
    python3 -c 'import sys; a, b = (float(open(x).read().split()[2]) for x in sys.argv[1:]); sys.exit(not b * 4 <= a)' \
    "$T/v1.size" "$T/v2.size"
for v in v1 v2; do
    (cd "$T/$v" && $A --stats --json p >stats.json 2>stats.err && $A --csv data.csv p >/dev/null 2>csv.err)
    check "perfmon-analyze reads the $v copy" [ -s "$T/$v/stats.json" ] && [ -s "$T/$v/data.csv" ]
done
check "--stats --json is byte-identical for v1 and v3" cmp "$T/v1/stats.json" "$T/v2/stats.json"
check "--csv is byte-identical for v1 and v3" cmp "$T/v1/data.csv" "$T/v2/data.csv"

# Version 1 on request.
PERFMON_PROFILE_VERSION=1 $PM_BIN/perfmon-sample -o "$T/old" -i 0.05 -d 0.3 >/dev/null 2>&1
$PMP size "$(ls "$T"/old/*.pmp)" >"$T/old.size"
check "PERFMON_PROFILE_VERSION=1 writes version 1 ($(cat "$T/old.size"))" grep -q '^1 ' "$T/old.size"
PERFMON_PROFILE_VERSION=2 $PM_BIN/perfmon-sample -o "$T/two" -f both -i 0.05 -d 1 >/dev/null 2>&1
$PMP size "$(ls "$T"/two/*.pmp)" >"$T/two.size"
check "PERFMON_PROFILE_VERSION=2 writes version 2 ($(cat "$T/two.size"))" grep -q '^2 ' "$T/two.size"
$PMP compare "$(ls "$T"/two/*.pmp)" "$(ls "$T"/two/*.pmp.jsonl)" >"$T/two.cmp" 2>&1
check "its samples equal their JSON Lines copy ($(cat "$T/two.cmp"))" [ $? -eq 0 ]

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
