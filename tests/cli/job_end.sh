#!/bin/sh
# pm-test: alone (its real runs read the kernel log)
# How the job ended (docs/analysis.md, "How the job ended") in every output,
# on the jobs of fixtures/story (fixtures/story/gen.py) and two real runs:
# --stats' first line, --stats --json's job.end and events (parsed back),
# page 1's first sentence in the PDF, the trace's instant events, --stream
# giving the same bytes, and --compare naming both ends (B failing where A
# completed is worse, exit 1).
set -u
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
S="$PM_BIN/perfmon-sample"
F="$PM_ROOT/fixtures/story"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
export PERFMON_TEMPLATES="$PM_ROOT/templates"

first() { $A "$1" --stats 2>/dev/null | head -1; }
is_first() { [ "$(first "$1")" = "$2" ] || { echo "      got: $(first "$1")"; return 1; }; }

check "oom: the first line names the process, node, time and limit" is_first "$F/oom" \
    "job: killed by the OOM killer: python3 (pid 4242) on node-3 at 2026-11-28T00:13:23Z, 2.4 s before the end; the job's cgroup limit is 64.0 MiB; in its last minute it used up to 58.0 MiB of 64.0 MiB (91 %, cg.mem_current)"
check "an old profile: the cgroup's oom_kill count alone" sh -c "$A '$F/old-oom' --stats 2>/dev/null | head -1 | grep -q '^job: killed by the OOM killer on node-1 at '"
check "an old profile: 137 read honestly" is_first "$F/old-137" "job: exit status 137 (128 + 9: SIGKILL?)"
check "failed: exit status 3" is_first "$F/failed" "job: exited with status 3 (failed)"
check "segv: signal 11" is_first "$F/segv" "job: killed by signal 11 (SIGSEGV), core dumped at 2026-11-28T00:13:16Z"
check "timeout: the limit, and the signal" is_first "$F/timeout" \
    "job: hit its time limit of 2.0 min at 2026-11-28T00:15:07Z; the command was killed by signal 15 (SIGTERM)"
check "stopped: no command" is_first "$F/stopped" "job: sampling ended: SIGTERM (no command was run)"
check "incomplete: no end record" is_first "$F/incomplete" \
    "job: incomplete: no end record (the sampler was killed or crashed)"
P="$PM_ROOT/fixtures/perfmon"
check "the fixtures' complete jobs completed" sh -c \
    "[ \"\$($A '$P/node-a.pmp' '$P/node-b.pmp' '$P/node-c.jsonl' --stats 2>/dev/null | head -1)\" = 'job: completed (exit status 0)' ]"
check "the events table lists the kill and the counters" sh -c "$A '$F/oom' --stats 2>/dev/null >'$T/oom.txt' &&
    grep -q '^  2026-11-28T00:13:23Z node-3 oom_kill  *python3 (pid 4242) killed by the OOM killer (CONSTRAINT_MEMCG' '$T/oom.txt' &&
    grep -q 'node-1 edac_ce  *corrected memory errors (EDAC) +1' '$T/oom.txt' &&
    grep -q '^  node-1 completed  completed (exit status 0)' '$T/oom.txt'"

# --json: job.end and events, parsed back
if command -v python3 >/dev/null 2>&1; then
    $A "$F/oom" --stats --json >"$T/oom.json" 2>/dev/null
    check "--json: job.end and events" python3 - "$T/oom.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["job"]["end_state"]
assert e["state"] == "oom", e
assert e["host"] == "node-3" and e["hosts"] == ["node-3"], e
assert e["oom"]["pid"] == 4242 and e["oom"]["comm"] == "python3", e
assert e["oom"]["scope"] == "cgroup" and e["oom"]["mem_limit_bytes"] == 64 << 20, e
assert abs(e["t"] - 1795824803.6) < 1e-6, e
assert e["detail"].startswith("killed by the OOM killer: python3 (pid 4242) on node-3"), e
n1 = [n for n in d["nodes"] if n["host"] == "node-1"][0]["end_state"]
assert n1["state"] == "completed" and n1["exit_status"] == 0 and n1["signal"] is None, n1
kinds = [(v["host"], v["kind"]) for v in d["events"]]
assert ("node-3", "oom_kill") in kinds and ("node-1", "ib_symbol_errors") in kinds, kinds
assert ("node-3", "cg_oom_kill") not in kinds, "the kernel log's kill is not listed twice"
ts = [v["t"] for v in d["events"]]
assert ts == sorted(ts), ts
PY
    $A "$F/segv" --stats --json >"$T/segv.json" 2>/dev/null
    check "--json: a signal's number and name" python3 -c "
import json; e = json.load(open('$T/segv.json'))['job']['end_state']
assert (e['state'], e['signal'], e['signal_name'], e['exit_status']) == ('signal', 11, 'SIGSEGV', None), e"
fi

# --stream: the same bytes
for j in oom timeout old-oom; do
    $A "$F/$j" --stats >"$T/m.txt" 2>&1
    $A "$F/$j" --stats --stream >"$T/s.txt" 2>&1
    check "$j: --stats the same with --stream" cmp -s "$T/m.txt" "$T/s.txt"
    $A "$F/$j" --stats --json >"$T/m.json" 2>&1
    $A "$F/$j" --stats --json --stream >"$T/s.json" 2>&1
    check "$j: --json the same with --stream" cmp -s "$T/m.json" "$T/s.json"
done

# under mpirun (the notes travel with the profiles, pack.c): the same bytes
if [ -z "${PM_WRAP:-}" ] && "$PM_BIN/perfmon-analyze" --version | grep -q "^MPI: built in" &&
    command -v mpirun >/dev/null 2>&1; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
    export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_btl_base_warn_component_unused=0
    export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
    $A "$F/oom" --stats --json >"$T/m.json" 2>/dev/null
    for mode in "" --stream; do
        timeout 120 mpirun -n 2 "$PM_BIN/perfmon-analyze" "$F/oom" --stats --json $mode >"$T/p.json" 2>/dev/null
        check "mpirun -n 2 $mode: the same --json" cmp -s "$T/m.json" "$T/p.json"
    done
else
    echo "SKIP  no mpirun or perfmon-analyze without MPI: the end under mpirun not checked"
fi

# the trace: the events as instant events on the host's track, and the end
$A "$F/oom" --trace "$T/t.json" 2>/dev/null
$A "$F/oom" --trace "$T/ts.json" --stream 2>/dev/null
check "trace: the same with --stream" cmp -s "$T/t.json" "$T/ts.json"
if command -v python3 >/dev/null 2>&1; then
    check "trace: the kill on node-3's track, the end" python3 -c "
import json; d = json.load(open('$T/t.json'))['traceEvents']
names = {e['args']['name']: e['pid'] for e in d if e.get('name') == 'process_name'}
i = [e for e in d if e['ph'] == 'i']
assert any(e['name'] == 'oom_kill' and e['pid'] == names['node-3'] and 'python3' in e['args']['detail'] for e in i), i
assert any(e.get('cat') == 'end' and e['name'] == 'oom' for e in i), i"
fi

# the PDF: page 1's first sentence
if command -v pdftotext >/dev/null 2>&1; then
    $A "$F/oom" --pdf "$T/oom.pdf" >/dev/null 2>&1
    pdftotext -l 1 "$T/oom.pdf" - 2>/dev/null | tr '\n' ' ' >"$T/p1.txt"
    check "PDF: page 1's first sentence is the kill" grep -q \
        'Job performance report python3 (pid 4242) was killed by the out-of-memory killer on node-3 at 00:13:23, 2.4 s before the job ended; its cgroup.s memory limit is 64.0 MiB' "$T/p1.txt"
    pdftotext "$T/oom.pdf" - 2>/dev/null >"$T/all.txt"
    check "PDF: the events page" sh -c "grep -q '^Events per node' '$T/all.txt' && grep -q 'killed by the OOM killer (CONSTRAINT_MEMCG' '$T/all.txt'"
    $A "$F/failed" --pdf "$T/f.pdf" >/dev/null 2>&1
    check "PDF: a failed job's first sentence" sh -c "pdftotext -l 1 '$T/f.pdf' - | tr '\n' ' ' | grep -q 'Job performance report The job exited with status 3 (failed)\.'"
    check "PDF: clean" pdf_clean "$T/oom.pdf"
else
    echo "SKIP  pdftotext not installed: the PDF's words not checked"
fi

# --compare: both ends; B failing where A completed is worse
$A --compare "$P/node-a.pmp" "$F/failed" >"$T/c.txt" 2>&1
rc=$?
check "--compare: B failed where A completed is worse (exit 1)" [ "$rc" = 1 ]
check "--compare: both ends named" sh -c "grep -q '^  A  completed  completed (exit status 0)' '$T/c.txt' &&
    grep -q '^  B  failed     exited with status 3 (failed)' '$T/c.txt' &&
    grep -q '^Verdict: B is worse than A: end (completed, then failed)' '$T/c.txt'"
$A --compare "$F/failed" "$P/node-a.pmp" >/dev/null 2>&1
check "--compare: the other way round is not worse" [ $? = 0 ]
if command -v python3 >/dev/null 2>&1; then
    $A --compare --json "$P/node-a.pmp" "$F/failed" >"$T/c.json" 2>/dev/null
    check "--compare --json: the end row and states" python3 -c "
import json; d = json.load(open('$T/c.json'))
assert d['end']['verdict'] == 'worse' and d['end']['gated'] is True, d['end']
assert (d['end']['a_state'], d['end']['b_state']) == ('completed', 'failed'), d['end']
assert d['b']['end_state']['state'] == 'failed', d['b']"
fi

# real runs: the sampler's own end record and exit events
if $S -o "$T/r3" -i 0.2 -- sh -c 'exit 3' >/dev/null 2>&1; [ $? = 3 ]; then
    check "a real run: exited with status 3" sh -c "$A '$T/r3' --stats 2>/dev/null | head -1 | grep -q '^job: exited with status 3 (failed)$'"
else
    echo "SKIP  perfmon-sample could not run a command here"
fi
$S -o "$T/r11" -i 0.2 -- sh -c 'kill -SEGV $$' >/dev/null 2>&1
# (without the exit event the end record's 139 is read as 128 + 11)
check "a real run: killed by SIGSEGV (or 139 read honestly)" sh -c "$A '$T/r11' --stats 2>/dev/null | head -1 |
    grep -Eq '^job: (killed by signal 11 \(SIGSEGV\)|exit status 139 \(128 \+ 11: SIGSEGV\?\))'"

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
