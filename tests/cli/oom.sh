#!/bin/sh
# pm-test: alone (it makes cgroups and an out-of-memory kill, read from the kernel log)
# The job's end in the profile (docs/format.md, "Event notes"):
#  - a command stopped by SIGTERM sent to the sampler: a "signal" event
#    (forwarded 1) and an "exit" event with signal 15;
#  - as root, with the cgroup v1 memory hierarchy: a command beyond the
#    64 MiB limit of a memory cgroup the test makes (so that nothing depends
#    on the machine's own memory) is killed by the OOM killer: exit 137, an
#    "exit" event with signal 9 (SIGKILL), an "oom_kill" event naming it
#    (python3, its pid, CONSTRAINT_MEMCG, in_job 1) where the kernel log is
#    readable (else the note that says why not), and node.oom_kill up by
#    at least one.
set -u
S="${PM_WRAP:-} $PM_BIN/perfmon-sample"
T=$(mktemp -d)
CG=""
cleanup() {
    if [ -n "$CG" ] && [ -d "$CG" ]; then
        # Whatever is left in it goes back to the root group first.
        for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do
            echo "$p" >"${CG%/*}/cgroup.procs" 2>/dev/null
        done
        rmdir "$CG" 2>/dev/null
    fi
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
. "$PM_ROOT/tests/support/cli.sh"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed: the OOM tests need it to read the JSON Lines profile"
    exit 0
fi

# events DIR: the event notes of DIR's profile, one JSON object a line,
# then the node.oom_kill values ("oom_kill_values [a, b, ...]") and the
# plain notes ("note TEXT").
events() {
    python3 - "$1" <<'EOF'
import glob, json, sys
f = glob.glob(sys.argv[1] + "/*.pmp.jsonl")[0]
cols, vals = None, []
for line in open(f):
    r = json.loads(line)
    if "columns" in r:
        cols = [c["name"] for c in r["columns"]]
    elif "note" in r:
        try:
            e = json.loads(r["note"])
        except ValueError:
            e = None
        if isinstance(e, dict) and "event" in e:
            print(json.dumps(e, sort_keys=True))
        else:
            print("note " + r["note"])
    elif "v" in r and cols and "node.oom_kill" in cols:
        v = r["v"][cols.index("node.oom_kill")]
        if v is not None:
            vals.append(v)
print("oom_kill_values " + json.dumps(vals))
EOF
}

# event FILE KIND KEY=VALUE...: FILE has an event of KIND with these
# members (values compared as JSON text: 9, "SIGKILL").
event() {
    python3 - "$@" <<'EOF'
import json, sys
path, kind, want = sys.argv[1], sys.argv[2], sys.argv[3:]
for line in open(path):
    if not line.startswith("{"):
        continue
    e = json.loads(line)
    if e.get("event") != kind or not isinstance(e.get("t"), (int, float)):
        continue
    if all(k in e and json.dumps(e[k]) == v for k, v in (w.split("=", 1) for w in want)):
        sys.exit(0)
sys.exit(1)
EOF
}

# --- SIGTERM to the sampler: forwarded, and the command's end ------------
$S -o "$T/term" -i 0.2 -f json -- sleep 30 >"$T/term.out" 2>&1 &
spid=$!
i=0
while ! grep -qs '^{"t":' "$T"/term/*.pmp.jsonl; do
    i=$((i + 1))
    [ $i -gt 300 ] && break
    sleep 0.1
done
kill -TERM $spid
wait $spid
rc=$?
check "SIGTERM: the sampler exits as its command did (143)" [ $rc -eq 143 ]
events "$T/term" >"$T/term.ev"
check "SIGTERM: a signal event, forwarded" \
    event "$T/term.ev" signal signal=15 'signal_name="SIGTERM"' forwarded=1
check "SIGTERM: an exit event with signal 15" \
    event "$T/term.ev" exit signal=15 'signal_name="SIGTERM"' core=0
check "SIGTERM: the exit event comes after the signal event" \
    sh -c "grep -n '\"event\": \"signal\"' '$T/term.ev' | cut -d: -f1 | head -1 >'$T/a';
           grep -n '\"event\": \"exit\"' '$T/term.ev' | cut -d: -f1 | head -1 >'$T/b';
           [ \$(cat '$T/a') -lt \$(cat '$T/b') ]"

# --- a plain exit status ---------------------------------------------------
$S -o "$T/st" -i 0.2 -f json -- sh -c 'exit 3' >/dev/null 2>&1
rc=$?
events "$T/st" >"$T/st.ev"
check "exit 3: the sampler exits 3" [ $rc -eq 3 ]
check "exit 3: an exit event with status 3" event "$T/st.ev" exit status=3

# --- the OOM killer ---------------------------------------------------------
MEM=/sys/fs/cgroup/memory
if [ "$(id -u)" != 0 ]; then
    echo "SKIP  OOM kill: needs root to make a memory cgroup"
elif [ ! -f "$MEM/cgroup.procs" ] || [ ! -f "$MEM/memory.limit_in_bytes" ]; then
    echo "SKIP  OOM kill: no cgroup v1 memory hierarchy at $MEM"
elif ! mkdir "$MEM/pm_oom_test_$$" 2>"$T/mkdir.err"; then
    echo "SKIP  OOM kill: cannot make a memory cgroup: $(cat "$T/mkdir.err")"
else
    CG="$MEM/pm_oom_test_$$"
    echo 64M >"$CG/memory.limit_in_bytes"
    [ -f "$CG/memory.memsw.limit_in_bytes" ] && echo 64M >"$CG/memory.memsw.limit_in_bytes"
    $S -o "$T/oom" -i 0.2 -f json -- sh -c "echo \$\$ > $CG/cgroup.procs; exec python3 -c 'x = bytearray(256 << 20)'" >"$T/oom.out" 2>&1
    rc=$?
    events "$T/oom" >"$T/oom.ev"
    check "OOM: the sampler exits 137" [ $rc -eq 137 ]
    check "OOM: an exit event with signal 9 (SIGKILL)" \
        event "$T/oom.ev" exit signal=9 'signal_name="SIGKILL"'
    pid=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    if l.startswith("{") and json.loads(l)["event"] == "exit": print(json.loads(l)["pid"])' "$T/oom.ev")
    if has "$T/oom.ev" "OOM kills are counted (node.oom_kill) but not named"; then
        echo "ok    OOM: the kernel log is not readable here, and the profile says so"
    else
        check "OOM: an oom_kill event naming python3 (pid $pid), by its cgroup's limit, in the job" \
            event "$T/oom.ev" oom_kill 'comm="python3"' "pid=$pid" \
            'constraint="CONSTRAINT_MEMCG"' in_job=1 "task_memcg=\"/pm_oom_test_$$\""
    fi
    check "OOM: node.oom_kill rises by at least one" python3 -c '
import json, sys
v = json.loads(sys.argv[1].split(" ", 1)[1])
sys.exit(0 if len(v) >= 2 and v[-1] - v[0] >= 1 else 1)' "$(grep '^oom_kill_values' "$T/oom.ev")"
    [ "$fails" -eq 0 ] || { cat "$T/oom.ev" "$T/oom.out"; }
fi
[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
