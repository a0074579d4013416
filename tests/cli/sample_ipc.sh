#!/bin/sh
# perfmon-sample --ipc: a FINISHED left by an earlier run (a requeued job
# reusing its output directory) is refused with exit 2 and one line naming
# the file; --ipc-reset empties it; a FINISHED written during the run stops
# the sampler within a second whatever the interval (inotify, and a read
# every second for what inotify cannot see), after a last sample and with
# the end record.  Stop times are measured here with the test's own clock.
# The timed runs use a bare sampler (under valgrind the start alone can take
# seconds); the others run under $PM_WRAP.
set -u
S="${PM_WRAP:-} $PM_BIN/perfmon-sample"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP  python3 not installed"; exit 0; }

# Reads a JSON Lines profile: "samples N end REASON ENDSAMPLES last_t T".
summary() {
    python3 - "$1" <<'PY'
import glob, json, sys
files = glob.glob(sys.argv[1] + "/*.pmp.jsonl")
if len(files) != 1:
    print("profiles", len(files)); sys.exit()
n, last, end = 0, None, None
for line in open(files[0]):
    r = json.loads(line)
    if "t" in r and "v" in r:
        n += 1; last = r["t"]
    if "end" in r:
        end = r["end"]
print("samples", n, "end", (end or {}).get("reason", "none").replace(" ", "_"),
      (end or {}).get("samples", -1), "last_t", last)
PY
}

# Wait for pid to exit, at most $2 seconds (then kill it: a test must fail,
# not hang); returns its exit status.
waitfor() {
    n=0
    while kill -0 "$1" 2>/dev/null && [ $n -lt $(($2 * 10)) ]; do sleep 0.1; n=$((n + 1)); done
    kill "$1" 2>/dev/null
    wait "$1"
}

# 1. A stale FINISHED: exit 2, one line that names the file, nothing written.
mkdir "$T/stale"
echo FINISHED >"$T/stale/ipc"
$S -o "$T/stale/out" -i 0.1 -f json --ipc "$T/stale/ipc" >"$T/out" 2>"$T/err" &
waitfor $! 60
rc=$?
check "a FINISHED left from an earlier run: exit 2 (got $rc)" [ "$rc" -eq 2 ]
check "one line on stderr ($(wc -l <"$T/err"))" [ "$(wc -l <"$T/err")" -eq 1 ]
check "it names the file and the way out" grep -q "$T/stale/ipc.*FINISHED.*--ipc-reset" "$T/err"
check "no profile written" [ -z "$(ls "$T/stale/out" 2>/dev/null)" ]
check "the file is left as it was" grep -qx FINISHED "$T/stale/ipc"

# --ipc-reset without --ipc is a usage error.
$S -o "$T/stale/out" --ipc-reset >"$T/out" 2>"$T/err"
rc=$?
check "--ipc-reset alone: exit 2 ($rc), saying why" [ "$rc" -eq 2 ] && grep -q "needs --ipc" "$T/err"

# 2. --ipc-reset empties it, the run records, a new FINISHED stops it.
$S -o "$T/stale/out" -i 0.1 -f json --ipc "$T/stale/ipc" --ipc-reset >"$T/out" 2>"$T/err" &
pid=$!
n=0
while [ -s "$T/stale/ipc" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
check "--ipc-reset empties the file" [ ! -s "$T/stale/ipc" ]
sleep 1
echo FINISHED >"$T/stale/ipc"
waitfor $pid 60
rc=$?
check "--ipc-reset run exits 0 on the new FINISHED ($rc; $(cat "$T/err"))" [ "$rc" -eq 0 ]
set -- $(summary "$T/stale/out")
check "--ipc-reset run: end record says why ($*)" [ "${4:-}" = "IPC_file_says_FINISHED" ]
check "--ipc-reset run: every sample counted in the end record ($*)" [ "${2:-0}" -ge 2 ] && [ "${2:-0}" = "${5:-x}" ]

# 3. Timed stops at -i 20, measured from the write to the exit.  Each case
# writes FINISHED in a different way: through inotify (close after write),
# by a writer that keeps the file open (no event: the one-second read), and
# into a directory that did not exist when the sampler started.
python3 - "$PM_BIN/perfmon-sample" "$T" >"$T/timed" 2>&1 <<'PY'
import os, subprocess, sys, time
sampler, tmp = sys.argv[1], sys.argv[2]
for case in ("inotify", "open-writer", "late-dir"):
    d = os.path.join(tmp, case)
    os.mkdir(d)
    ipcdir = os.path.join(d, "later") if case == "late-dir" else d
    ipc = os.path.join(ipcdir, "ipc")
    p = subprocess.Popen([sampler, "-o", os.path.join(d, "out"), "-i", "20", "-f", "json",
                          "--ipc", ipc], stderr=subprocess.PIPE)
    # The profile exists once the start-up check of the file is done.
    for _ in range(200):
        if os.path.isdir(os.path.join(d, "out")) and os.listdir(os.path.join(d, "out")):
            break
        time.sleep(0.05)
    time.sleep(0.5)
    if case == "late-dir":
        os.mkdir(ipcdir)
    keep = open(ipc, "w") if case == "open-writer" else None
    time.sleep(0.8)
    wall = time.time()
    t0 = time.monotonic()
    if keep:
        keep.write("FINISHED\n"); keep.flush()
    else:
        with open(ipc, "w") as f:
            f.write("FINISHED\n")
    try:
        rc = p.wait(timeout=25)
    except subprocess.TimeoutExpired:
        p.kill(); p.wait(); rc = "timeout"
    dt = time.monotonic() - t0
    if keep:
        keep.close()
    print(case, "rc", rc, "stop_s %.3f" % dt, "written_at %.6f" % wall)
PY
cat "$T/timed"
for case in inotify open-writer late-dir; do
    set -- $(grep "^$case " "$T/timed")
    check "-i 20, $case: exit 0 (${3:-?})" [ "${3:-}" = 0 ]
    check "-i 20, $case: stopped within 1.5 s of FINISHED (${5:-?} s)" python3 -c "import sys; sys.exit(not float('${5:-99}') <= 1.5)"
    written=${7:-0}
    set -- $(summary "$T/$case/out")
    check "-i 20, $case: complete profile with the end record ($*)" [ "${4:-}" = "IPC_file_says_FINISHED" ] && [ "${2:-0}" = "${5:-x}" ]
    check "-i 20, $case: a last sample taken after FINISHED was written (${7:-?} >= $written)" python3 -c "import sys; sys.exit(not float('${7:-0}') >= float('$written') - 0.001)"
done

# 4. The same under $PM_WRAP, with -i 20: only the outcome is checked.
mkdir "$T/wrap"
$S -o "$T/wrap/out" -i 20 -f json --ipc "$T/wrap/ipc" >"$T/out" 2>"$T/err" &
pid=$!
n=0
while [ -z "$(ls "$T/wrap/out" 2>/dev/null)" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
sleep 1
echo FINISHED >"$T/wrap/ipc"
waitfor $pid 60
rc=$?
set -- $(summary "$T/wrap/out")
check "-i 20 (under \$PM_WRAP if set): exit 0 ($rc) with the end record ($*)" [ "$rc" -eq 0 ] && [ "${4:-}" = "IPC_file_says_FINISHED" ]

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
