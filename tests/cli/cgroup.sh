#!/bin/sh
# pm-test: alone (it makes cgroups on the real hierarchies)
# The job's cgroup on the real hierarchies of this machine (root only):
# perfmon-sample -- CMD makes a cgroup for CMD, moves it there before it
# runs, records the cgroup's accounting and removes the cgroup at the end.
#
# 1. cgroup v1 (cpuacct, memory, ...): CMD burns about 1 s of CPU in two
#    processes and touches 60 MiB.  The profile must hold a cgroup event
#    with created 1; cg.cpu_usage about 0 at the first sample (CMD moved
#    before it ran) and, at the end, within 5 % plus 2 clock ticks of the
#    tree's proc.cpu_time and of the CPU time the command measured itself
#    (getrusage of itself and its children); cg.mem_peak at least 50 MiB;
#    and the cgroup directories gone afterwards, with the leftover of a
#    killed sampler (perfmon-<pid> of a pid that is gone).
# 2. cgroup v2 where a cgroup2 file system is mounted (pure, or the hybrid
#    `unified` mount seen through a --sys-root whose fs/cgroup is it): the
#    same CPU check, the pressure columns, and a note for each controller
#    the cgroup lacks.
# 3. -p PID of a process in a v1 memory cgroup the test makes: the event
#    names that cgroup at level "process".
# 4. Run as an unprivileged user: no cgroup can be made; a note says why
#    and there are no cgroup columns.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
S="$PM_BIN/perfmon-sample"
[ "$(id -u)" = 0 ] || { echo "SKIP  not root: cannot make cgroups"; exit 0; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP  python3 not installed"; exit 0; }

cat >"$T/work.py" <<'PY'
# Two processes burn about 1 s of CPU each, the parent touches 60 MiB;
# then the CPU time of all of it, as the kernel counted it for us.
import os, resource, sys, time
def burn(s):
    t = time.process_time()
    while time.process_time() - t < s:
        pass
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        burn(0.5)
        os._exit(0)
    kids.append(pid)
x = b"\x01" * (60 << 20)
burn(0.1)
for pid in kids:
    os.waitpid(pid, 0)
del x
me, ch = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    f.write("%.6f\n" % (me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime))
PY

cat >"$T/check.py" <<'PY'
# check.py PROFILE MODE [RUSAGE_FILE]: MODE v1 or v2 (see the header).
import json, os, sys
prof, mode = sys.argv[1], sys.argv[2]
tick = 1.0 / os.sysconf("SC_CLK_TCK")
cols, rows, notes, pid = None, [], [], None
for line in open(prof):
    o = json.loads(line)
    if "columns" in o:
        cols = [c["name"] for c in o["columns"]]
        pid = o.get("pid")
    elif "v" in o:
        rows.append(o["v"])
    elif "note" in o:
        notes.append(o["note"])
ix = {n: i for i, n in enumerate(cols)}
bad = []
def last(name):
    for r in reversed(rows):
        if r[ix[name]] is not None:
            return r[ix[name]]
    return None
def near(a, b, what):
    ok = a is not None and b is not None and abs(a - b) <= 0.05 * b + 2 * tick
    print("   %s: %s against %s (%s)" % (what, a, b, "ok" if ok else "differ"))
    if not ok:
        bad.append(what)
ev = [json.loads(n) for n in notes if n.startswith('{"event":"cgroup"')]
if len(ev) != 1 or ev[0].get("created") != 1 or ev[0].get("level") != "created":
    bad.append("one cgroup event with created 1: %s" % ev)
else:
    print("   event: %s" % ev[0])
if "cg.cpu_usage" not in ix:
    bad.append("no cg.cpu_usage column")
else:
    first = rows[0][ix["cg.cpu_usage"]]
    if first is None or first > 0.05:
        bad.append("cg.cpu_usage at the first sample %s (CMD not moved before it ran?)" % first)
    near(last("cg.cpu_usage"), last("proc.cpu_time"), "cg.cpu_usage - proc.cpu_time at the end")
    if len(sys.argv) > 3:
        own = float(open(sys.argv[3]).read())
        near(last("cg.cpu_usage"), own, "cg.cpu_usage - the command's own getrusage")
# a cgroup made for CMD has no CPU limit of its own: no throttling columns
if "cg.cpu_throttled" in ix or not any("no CPU throttling columns" in n for n in notes):
    bad.append("throttling columns for a made cgroup, or no note")
if mode == "v1":
    peak = last("cg.mem_peak")
    print("   cg.mem_peak %.1f MiB" % ((peak or 0) / 1048576))
    if peak is None or peak < 50 * 1048576:
        bad.append("cg.mem_peak %s below 50 MiB" % peak)
else:
    for c in ("cg.psi_cpu_some", "cg.psi_mem_some", "cg.psi_io_some"):
        if c not in ix or last(c) is None:
            bad.append("no %s" % c)
    if "cg.mem_current" not in ix and not any("no memory accounting" in n for n in notes):
        bad.append("no memory columns and no note saying why")
print("   path %s, sampler pid %s" % (ev[0]["path"] if ev else "?", pid))
with open(prof + ".pid", "w") as f:
    f.write("%s\n" % pid)
for b in bad:
    print("   " + b)
sys.exit(1 if bad else 0)
PY

gone() { # gone PROFILE ROOT: no perfmon-<sampler pid> left under ROOT
    p=$(cat "$1.pid")
    left=$(find "$2" -maxdepth 6 -type d -name "perfmon-$p" 2>/dev/null)
    [ -z "$left" ] || { echo "   left behind: $left"; return 1; }
}

# 1. cgroup v1
if [ -f /sys/fs/cgroup/cgroup.controllers ] || [ ! -f /sys/fs/cgroup/cpuacct/cpuacct.usage ] &&
    [ ! -f /sys/fs/cgroup/cpu,cpuacct/cpuacct.usage ]; then
    echo "SKIP  v1: /sys/fs/cgroup has no cgroup v1 cpuacct hierarchy"
else
    # the leftover of a sampler that was killed (its pid is gone)
    true &
    dead=$!
    wait "$dead"
    M=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
    stale=/sys/fs/cgroup/memory${M%/}/perfmon-$dead
    mkdir "$stale" 2>/dev/null || stale=""
    ${PM_WRAP:-} "$S" -o "$T/v1" -i 0.2 -f json -- sh -c "python3 '$T/work.py' '$T/own'" >"$T/v1.out" 2>&1
    check "v1: perfmon-sample -- CMD exits 0" test $? -eq 0
    [ -z "$stale" ] || check "v1: a killed sampler's leftover cgroup is removed" test ! -d "$stale"
    P=$(ls "$T"/v1/*.jsonl)
    check "v1: cgroup event, CPU and memory peak agree" python3 "$T/check.py" "$P" v1 "$T/own"
    check "v1: the cgroup made for CMD is removed" gone "$P" /sys/fs/cgroup
    # The analysis sets the cgroup's accounting beside the tree's: both in
    # --stats --json, agreeing, and said on page 1.
    ${PM_WRAP:-} "$PM_BIN/perfmon-analyze" "$T/v1" --stats --json >"$T/v1.json" 2>/dev/null
    check "v1: --stats --json: the cgroup's CPU hours agree with the tree's, its peak with the RSS" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["job"]
cg, tr = j["cg_cpu_hours"] * 3600, j["proc_cpu_hours"] * 3600
print("   cgroup %.3f s, tree %.3f s; memory %.1f MiB, tree RSS %.1f MiB" % (
    cg, tr, j["cg_peak_mem_bytes"] / 2**20, j["proc_peak_rss_bytes"] / 2**20))
assert abs(cg - tr) <= 0.05 * tr + 0.02, (cg, tr)
assert j["cg_peak_mem_bytes"] >= 50 << 20, j["cg_peak_mem_bytes"]
' "$T/v1.json"
    if command -v pdftotext >/dev/null 2>&1; then
        ${PM_WRAP:-} "$PM_BIN/perfmon-analyze" "$T/v1" --pdf "$T/v1.pdf" -q
        pdftotext -l 1 "$T/v1.pdf" - | tr '\n' ' ' >"$T/v1.txt"
        check "v1: page 1 sets the cgroup's accounting beside the tree's" \
            grep -q "The job's cgroup accounted .* of CPU time and a memory peak of .*; its process tree," "$T/v1.txt"
    fi
fi

# 2. cgroup v2: pure, or the hybrid unified mount through a --sys-root
V2=""
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    V2=/sys
elif [ -f /sys/fs/cgroup/unified/cgroup.controllers ]; then
    mkdir -p "$T/sys/fs"
    for e in /sys/*; do [ "$e" = /sys/fs ] || ln -s "$e" "$T/sys/"; done
    ln -s /sys/fs/cgroup/unified "$T/sys/fs/cgroup"
    V2="$T/sys"
fi
if [ -z "$V2" ]; then
    echo "SKIP  v2: no cgroup2 file system mounted"
elif ! grep -q '^0::/' /proc/self/cgroup; then
    echo "SKIP  v2: this process is in no cgroup2 cgroup"
else
    "$S" -o "$T/v2" -i 0.2 -f json --sys-root "$V2" -- sh -c "python3 '$T/work.py' '$T/own2'" \
        >"$T/v2.out" 2>&1
    check "v2: perfmon-sample -- CMD exits 0" test $? -eq 0
    P=$(ls "$T"/v2/*.jsonl)
    check "v2: cgroup event, CPU and pressure" python3 "$T/check.py" "$P" v2 "$T/own2"
    check "v2: the cgroup made for CMD is removed" gone "$P" "$V2/fs/cgroup/"
fi

# 3. -p PID: the cgroup that process is in (one the test makes)
M=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
G=/sys/fs/cgroup/memory${M%/}/perfmon-test-$$
if [ -z "$M" ] || ! mkdir "$G" 2>/dev/null; then
    echo "SKIP  -p: cannot make a v1 memory cgroup"
else
    sh -c 'echo $$ > "$1/cgroup.procs"; exec sleep 60' sh "$G" &
    SP=$!
    sleep 0.2
    ${PM_WRAP:-} "$S" -o "$T/p" -i 0.2 -f json -d 1 -p "$SP" >"$T/p.out" 2>&1
    check "-p: perfmon-sample -p PID exits 0" test $? -eq 0
    P=$(ls "$T"/p/*.jsonl)
    check "-p: the event names the process's cgroup" python3 -c '
import json, sys
notes = [json.loads(l).get("note", "") for l in open(sys.argv[1])]
ev = [json.loads(n) for n in notes if n.startswith("{\"event\":\"cgroup\"")]
want = {"path": sys.argv[2], "from_pid": int(sys.argv[3]), "created": 0, "level": "process"}
print("   event:", ev)
sys.exit(not (len(ev) == 1 and all(ev[0].get(k) == v for k, v in want.items())))
' "$P" "${M%/}/perfmon-test-$$" "$SP"
    check "-p: its memory is recorded" has "$P" '"cg.mem_current"'
    { kill "$SP" && wait "$SP"; } 2>/dev/null
    rmdir "$G"
fi

# 4. unprivileged: no cgroup can be made, and the profile says so
if command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
    chmod 755 "$T" && mkdir "$T/u" && chmod 777 "$T/u"
    setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
        "$S" -o "$T/u" -i 0.2 -f json -- true >"$T/u.out" 2>&1
    check "unprivileged: perfmon-sample -- true exits 0" test $? -eq 0
    P=$(ls "$T"/u/*.jsonl)
    check "unprivileged: a note says the cgroup could not be made" \
        has "$P" 'cgroup: cannot make a cgroup for the command'
    check "unprivileged: no cgroup columns" sh -c "! grep -q '\"cg\\.' '$P'"
else
    echo "SKIP  unprivileged: no setpriv or no user nobody"
fi

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all cgroup checks passed"
