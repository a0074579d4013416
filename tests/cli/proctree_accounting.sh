#!/bin/sh
# Process-tree accounting end to end: perfmon-sample -- tree-workload, a
# job-shaped tree (threads spinning while the main thread waits in
# pthread_join, threads and processes shorter than a sample interval, an
# orphan, zombies, write + fsync bursts), whose processes log the
# kernel's accounting of themselves every 10 ms (getrusage, /proc/self/io).
# Every interval's proc.cpu_time, proc.write_bytes and proc.read_bytes must
# match that record, and the run's total the command's rusage (plus the
# orphan's).  The record is what the kernel says, not a nominal load, so
# the check holds on a busy machine.
#
# Tolerance of an interval's CPU time: the record brackets each sample
# time between two log lines (10 ms apart, widened by the sample's own
# duration); perfmon's reading may differ from the kernel's exact time by
# the truncation of utime+stime and cutime+cstime to clock ticks (< 2
# ticks each per read, so 2 ticks per process alive at either end that ran
# in the interval, and 2 more when the command reaped a child), 4 ticks for a process
# read exactly (wait()'s rusage) at its end; and 5 % of the interval's value.
# The sampler runs bare (not under $PM_WRAP) for the timed run; the second
# run, under $PM_WRAP (valgrind in `make valgrind`), checks only the total,
# which does not depend on timing.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP  python3 not installed"; exit 0; }
W="$PM_BUILD/examples/tree-workload"

cat >"$T/check.py" <<'PY'
# Compare perfmon's process-tree CPU time and I/O, interval by interval,
# with the workload's own log of the kernel's accounting (tree-workload).
import json, os, sys

prof, log = sys.argv[1], sys.argv[2]
hz = os.sysconf("SC_CLK_TCK")
ncpu = os.cpu_count()
TICK = 1.0 / hz

cols, rows = None, []
for line in open(prof):
    o = json.loads(line)
    if "columns" in o:
        cols = [c["name"] for c in o["columns"]]
    elif "v" in o:
        rows.append(o)
ix = {n: i for i, n in enumerate(cols)}

def col(r, n):
    return r["v"][ix[n]]

# T lines per pid: (t1, self_s, children_s, read_bytes, write_bytes, kind,
# t0): the figures were taken between t0 and t1.
procs, writes = {}, 0
for line in open(log):
    f = line.split()
    if f[0] == "T":
        procs.setdefault(int(f[3]), []).append(
            (int(f[2]) / 1e9, int(f[6]) / 1e6, int(f[7]) / 1e6, int(f[8]), int(f[9]), f[5],
             int(f[1]) / 1e9))
    elif f[0] == "W":
        writes += int(f[2])
main_pid = min(procs, key=lambda p: procs[p][0][6])
main = procs[main_pid]
# Block I/O is accounted where the directory's filesystem has a disk
# behind it (not tmpfs), and when /proc/self/io is readable.
io = main[-1][4] >= writes > 0
if not io:
    print("SKIP  I/O: the workload's own io shows %d of %d bytes written" % (main[-1][4], writes))
orphans = [p for p in procs if any(x[5] == "orphan" for x in procs[p])]

def bracket(pts, t, k):
    """Value k of a process's log taken surely before time t (its line
    ended before t), and surely after (its line started after t)."""
    lo = hi = None
    for x in pts:
        if x[0] <= t:
            lo = x[k]
        elif x[6] >= t:
            hi = x[k]
            break
    if lo is None:  # before its first line: from nothing
        lo = 0
    if hi is None:  # after its last line ("exit"): final
        hi = pts[-1][k]
    return lo, hi

def ref_cpu(t0, t1):
    """The tree's CPU time (sum of every process's own time) between some
    moment of [t0, t1]: (lowest at t0, highest at t1)."""
    lo = sum(bracket(p, t0, 1)[0] for p in procs.values())
    hi = sum(bracket(p, t1, 1)[1] for p in procs.values())
    return lo, hi

def alive(p, t0, t1):
    """Was p running at some moment of [t0, t1]?  Its first line is logged
    as it starts, its exit line just before it exits."""
    return p[0][6] - 0.002 <= t1 and t0 <= p[-1][0] + 0.002

def ran(a, b):
    """Processes that ran between a and b and were alive at a or b (one
    born and reaped in between reaches its parent's children's time whole,
    untruncated), and whether the main process's children's time grew."""
    n = 0
    for p in procs.values():
        if not (alive(p, *a) or alive(p, *b)):
            continue
        if bracket(p, b[1], 1)[1] > bracket(p, a[0], 1)[0]:
            n += 1
    ch = bracket(main, b[1], 2)[1] > bracket(main, a[0], 2)[0]
    return n, ch

bad = []
out = []
prev = None
for r in rows:
    t = r["mono"]
    dur = col(r, "sampler.duration") or 0.0
    cur = (t, t + dur, col(r, "proc.cpu_time"), col(r, "proc.write_bytes"),
           col(r, "proc.read_bytes"), col(r, "proc.cpu_percent"))
    if prev and cur[2] is not None and prev[2] is not None:
        s = cur[2] - prev[2]
        lo0, hi0 = ref_cpu(prev[0], prev[1])
        lo1, hi1 = ref_cpu(cur[0], cur[1])
        rlo, rhi = lo1 - hi0, hi1 - lo0
        n, ch = ran(prev[:2], cur[:2])
        # Each read of a process truncates utime+stime, and cutime+cstime,
        # to whole ticks: less than 2 ticks each, at either end.
        # A process the sampler reads exactly at the end (the command, a
        # zombie at the last sample; an orphan reaped by the sampler) has
        # its earlier truncation of up to 4 ticks made up then.
        ends = sum(1 for p in [main] + [procs[o] for o in orphans]
                   if prev[0] - 0.02 <= p[-1][0] <= cur[1] + 0.02)
        slack = 2 * TICK * (n + (1 if ch else 0)) + 4 * TICK * ends
        tol = 0.05 * rhi + slack
        ok = rlo - tol <= s <= rhi + tol
        pct = cur[5]
        dt = cur[0] - prev[0]
        pct_max = 100.0 * ncpu + 100.0 * slack / dt
        pct_ok = pct is None or pct <= pct_max
        out.append("%7.3f cpu %7.3f ref [%7.3f %7.3f] tol %.3f  pct %s%s%s" % (
            t - rows[0]["mono"], s, rlo, rhi, tol, "-" if pct is None else "%.1f" % pct,
            "" if ok else "  <-- CPU", "" if pct_ok else "  <-- above 100% x CPUs"))
        if not ok:
            bad.append("interval ending %.3f: cpu %.3f s, kernel [%.3f, %.3f] +- %.3f"
                       % (t - rows[0]["mono"], s, rlo, rhi, tol))
        if not pct_ok:
            bad.append("interval ending %.3f: %.1f %% > %.1f %%" % (t - rows[0]["mono"], pct, pct_max))
        # I/O: only the main process does any (its children and the
        # orphan do no file I/O: they log to a pipe).
        for k, name, i in ((4, "write_bytes", 3), (3, "read_bytes", 4)) if io else ():
            if cur[i] is None or prev[i] is None:
                bad.append("interval ending %.3f: no %s" % (t - rows[0]["mono"], name))
                continue
            s = cur[i] - prev[i]
            lo = bracket(main, cur[0], k)[0] - bracket(main, prev[1], k)[1]
            hi = bracket(main, cur[1], k)[1] - bracket(main, prev[0], k)[0]
            if not lo <= s <= hi:
                bad.append("interval ending %.3f: %s %d, kernel [%d, %d]"
                           % (t - rows[0]["mono"], name, s, lo, hi))
    prev = cur

# The run's total: the command's rusage (self + reaped children, at its
# exit) plus the orphans', which the sampler reaped.
end = main[-1]
total_ref = end[1] + end[2] + sum(procs[p][-1][1] for p in orphans)
total = rows[-1]["v"][ix["proc.cpu_time"]]
# The last sample reads the command as a zombie, and the orphans are read
# just before the sampler reaps them, with wait()'s rusage: exact to the
# microsecond, plus what each ran after logging its exit line (returning
# from main, unmapping its memory).
tol_lo, tol_hi = 1e-6 * (1 + len(orphans)), 0.005 * (1 + len(orphans))
print("\n".join(out))
print("total %.6f s, rusage %.6f s (command %.6f + %d orphan(s)), tolerance -%g/+%g s"
      % (total, total_ref, end[1] + end[2], len(orphans), tol_lo, tol_hi))
if not total_ref - tol_lo <= total <= total_ref + tol_hi:
    bad.append("total %.3f s, rusage %.3f s" % (total, total_ref))
wb = rows[-1]["v"][ix["proc.write_bytes"]]
print("write_bytes %s, bursts written %d" % (wb, writes))
if io and wb < writes:
    bad.append("write_bytes %d < %d bytes written" % (wb, writes))
if len(rows) < 10:
    bad.append("only %d samples" % len(rows))
for b in bad:
    print("BAD", b)
sys.exit(1 if bad else 0)
PY

# The log goes through a pipe: pipe writes are not block I/O.
mkdir "$T/io"
{ $PM_BIN/perfmon-sample -o "$T/p" -i 0.5 -f json -- "$W" -p 1.5 -d "$T/io" 2>"$T/err"
  echo $? >"$T/rc"; } | cat >"$T/log"
check "sampler exits with the workload's status" [ "$(cat "$T/rc")" -eq 0 ]
python3 "$T/check.py" "$T"/p/*.pmp.jsonl "$T/log" >"$T/out" 2>&1
rc=$?
cat "$T/out"
check "every interval's CPU time and I/O equal the kernel's, the total the rusage" [ "$rc" -eq 0 ]

# Under $PM_WRAP: totals only (a slow sampler takes fewer samples).
{ ${PM_WRAP:-} $PM_BIN/perfmon-sample -o "$T/q" -i 0.2 -f json -- "$W" -p 0.4 -d "$T/io" \
      2>"$T/err2"
  echo $? >"$T/rc2"; } | cat >"$T/log2"
check "sampler (wrapped) exits with the workload's status" [ "$(cat "$T/rc2")" -eq 0 ]
python3 - "$T"/q/*.pmp.jsonl "$T/log2" >"$T/out2" 2>&1 <<'PY'
import json, sys
cols, last = None, None
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "columns" in o:
        cols = [c["name"] for c in o["columns"]]
    elif "v" in o:
        last = o["v"]
total = last[cols.index("proc.cpu_time")]
procs = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "T":
        procs.setdefault(f[3], []).append(f)
main = min(procs.values(), key=lambda p: int(p[0][1]))
ref = int(main[-1][6]) / 1e6 + int(main[-1][7]) / 1e6
ref += sum(int(p[-1][6]) / 1e6 for p in procs.values() if any(x[5] == "orphan" for x in p))
print("total %.6f s, rusage %.6f s" % (total, ref))
sys.exit(0 if ref - 2e-6 <= total <= ref + 0.01 else 1)
PY
rc=$?
cat "$T/out2"
check "total CPU time equals the rusage (wrapped sampler)" [ "$rc" -eq 0 ]
# --- Short processes reaped in batches ---------------------------------
# A parent forks a child every 25 ms; each child spends 5 ms of CPU (its
# own CPU clock, so a loaded machine stretches the wall time, not the CPU)
# and exits; the parent reaps the zombies once a second.  Every process
# logs its own getrusage (the parent every 25 ms, each child as it starts
# and just before it exits), so the record says in which interval each
# child's CPU was spent, whenever it was reaped.  Checked in both ways of
# following a tree: -- CMD (the sampler its subreaper) and -p PID.
#
# Every interval's proc.cpu_percent must lie within 5 % (relative, of the
# record's CPU in that interval) of the record, widened by the kernel's
# tick slack (docs/perfmon-sample.md, "Process-tree accounting"): 2 ticks
# for the parent's utime + stime, 2 more when it reaped in the interval,
# 2 for a child read while it ran (its time truncated to ticks), 4 for the
# command read exactly at its end; and no sample, nor --stats' maximum,
# above 100 % x CPUs plus that slack.  Under -- CMD the parent exits just
# after a sample, so the last interval is a few ms long and carries the
# command's exact rusage: its percentage covers the interval before too.
cat >"$T/batch.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static long long ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static long long us(const struct rusage *ru)
{
    return (long long)ru->ru_utime.tv_sec * 1000000 + ru->ru_utime.tv_usec +
           (long long)ru->ru_stime.tv_sec * 1000000 + ru->ru_stime.tv_usec;
}
/* tree-workload's T line: T t0 t1 pid ppid kind self_us children_us -1 -1 */
static void report(const char *kind)
{
    long long t0 = ns(CLOCK_MONOTONIC);
    struct rusage self, ch;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &ch);
    char line[200];
    int n = snprintf(line, sizeof line, "T %lld %lld %d %d %s %lld %lld -1 -1\n", t0,
                     ns(CLOCK_MONOTONIC), (int)getpid(), (int)getppid(), kind, us(&self), us(&ch));
    if (write(1, line, (size_t)n) != n)
        _exit(3);
}
int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 3.0, stop = argc > 2 ? atof(argv[2]) : 0;
    long long start = ns(CLOCK_MONOTONIC), next = start, reap = start + 1000000000LL;
    report("main");
    while (next < start + (long long)(secs * 1e9)) {
        pid_t p = fork();
        if (p < 0)
            return 1;
        if (p == 0) {
            report("child");
            long long c0 = ns(CLOCK_PROCESS_CPUTIME_ID);
            volatile unsigned long x = 0;
            while (ns(CLOCK_PROCESS_CPUTIME_ID) - c0 < 5000000)
                for (int i = 0; i < 1000; i++)
                    x += (unsigned long)i;
            report("exit");
            _exit(0);
        }
        next += 25000000;
        long long now;
        while ((now = ns(CLOCK_MONOTONIC)) < next) {
            long long left = next - now;
            struct timespec ts = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
            nanosleep(&ts, NULL);
        }
        if (now >= reap) {
            while (waitpid(-1, NULL, WNOHANG) > 0) {
            }
            reap += 1000000000LL;
        }
        report("main");
    }
    while (wait(NULL) > 0) {
    }
    /* Exit at STOP seconds from the start: just after a sample of the
     * sampler that started it (its samples are whole intervals after the
     * one just before it let the command start). */
    long long end = start + (long long)(stop * 1e9), now;
    while ((now = ns(CLOCK_MONOTONIC)) < end) {
        struct timespec ts = {(time_t)((end - now) / 1000000000), (long)((end - now) % 1000000000)};
        nanosleep(&ts, NULL);
    }
    report("exit");
    return 0;
}
C
cat >"$T/check_batch.py" <<'PY'
import json, os, sys

prof, log, mode, stats = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
hz = os.sysconf("SC_CLK_TCK")
ncpu = os.cpu_count()
TICK = 1.0 / hz
cols, rows = None, []
for line in open(prof):
    o = json.loads(line)
    if "columns" in o:
        cols = [c["name"] for c in o["columns"]]
    elif "v" in o:
        rows.append(o)
ix = {n: i for i, n in enumerate(cols)}
procs = {}
for line in open(log):
    f = line.split()
    if f[0] == "T":  # (t1, self_s, children_s, kind, t0)
        procs.setdefault(int(f[3]), []).append(
            (int(f[2]) / 1e9, int(f[6]) / 1e6, int(f[7]) / 1e6, f[5], int(f[1]) / 1e9))
main = min(procs.values(), key=lambda p: p[0][4])
kids = [p for p in procs.values() if p is not main]

def bracket(pts, t, k):
    """Figure k of a process's log surely before t, and surely after."""
    lo = hi = None
    for x in pts:
        if x[0] <= t:
            lo = x[k]
        elif x[4] >= t:
            hi = x[k]
            break
    return (0 if lo is None else lo), (pts[-1][k] if hi is None else hi)

def ref(a, b):
    """The CPU the processes spent between samples a and b ((start, end)
    of each sample's reads): (least, most)."""
    lo = sum(bracket(p, b[0], 1)[0] - bracket(p, a[1], 1)[1] for p in procs.values())
    hi = sum(bracket(p, b[1], 1)[1] - bracket(p, a[0], 1)[0] for p in procs.values())
    return lo, hi

def running(p, s):
    """Was child p alive (between its first and last line) during sample s?"""
    return p[0][4] - 0.002 <= s[1] and s[0] <= p[-1][0] + 0.002

bad, out = [], []
pts = []
for r in rows:
    t = r["mono"]
    dur = r["v"][ix["sampler.duration"]] or 0.0
    pts.append(((t, t + dur), r["v"][ix["proc.cpu_percent"]], r["v"][ix["proc.cpu_time"]]))
worst = 0.0
for i in range(1, len(pts)):
    cur, pct = pts[i][0], pts[i][1]
    if pct is None:
        continue
    # The sampler's base for this percentage: the sample before, or the
    # one before that when this interval is under half the previous one.
    j = i - 1
    if i >= 2 and cur[0] - pts[j][0][0] < 0.5 * (pts[j][0][0] - pts[j - 1][0][0]):
        j -= 1
    base = pts[j][0]
    dt = cur[0] - base[0]
    lo, hi = ref(base, cur)
    reaped = bracket(main, cur[1], 2)[1] > bracket(main, base[0], 2)[0]
    ran = sum(1 for p in kids if running(p, base) or running(p, cur))
    slack = TICK * (2 + 2 * ran + (2 if reaped else 0))
    if mode == "cmd" and i == len(pts) - 1:
        slack += 4 * TICK
    tol = 0.05 * hi + slack
    plo, phi = 100 * (lo - tol) / dt, 100 * (hi + tol) / dt
    pmax = 100.0 * ncpu + 100 * slack / dt
    worst = max(worst, pmax)
    ok = plo <= pct <= phi
    out.append("%7.3f pct %6.1f  record [%6.1f %6.1f]  tolerance +-%5.1f%s" % (
        cur[0] - pts[0][0][0], pct, 100 * lo / dt, 100 * hi / dt, 100 * tol / dt,
        "" if ok else "  <-- off"))
    if not ok:
        bad.append("interval ending %.3f: %.1f %%, record [%.1f, %.1f] %% +- %.1f"
                   % (cur[0] - pts[0][0][0], pct, 100 * lo / dt, 100 * hi / dt, 100 * tol / dt))
    if pct > pmax:
        bad.append("interval ending %.3f: %.1f %% > %.1f %% (100 %% x %d CPUs + slack)"
                   % (cur[0] - pts[0][0][0], pct, pmax, ncpu))
print("\n".join(out))
ntested = len(out)
if ntested < 4:
    bad.append("only %d intervals" % ntested)
m = [x for x in json.load(open(stats))["metrics"] if x["id"] == "proc_cpu"]
smax = m[0]["all"]["max"] if m else None
print("--stats max of proc_cpu %s %%, bound %.1f %%" % (smax, worst))
if smax is None or smax > worst:
    bad.append("--stats max of proc_cpu %s %% > %.1f %%" % (smax, worst))
if mode == "cmd":
    end = main[-1]
    total = pts[-1][2]
    print("total %.6f s, rusage %.6f s" % (total, end[1] + end[2]))
    if not end[1] + end[2] - 1e-6 <= total <= end[1] + end[2] + 0.005:
        bad.append("total %.6f s, rusage %.6f s" % (total, end[1] + end[2]))
for b in bad:
    print("BAD", b)
sys.exit(1 if bad else 0)
PY
if ! ${CC:-cc} -O2 -o "$T/batch" "$T/batch.c" 2>"$T/cc.err"; then
    echo "SKIP  batch phase: no C compiler ($(head -1 "$T/cc.err"))"
else
    { $PM_BIN/perfmon-sample -o "$T/b1" -i 0.5 -f json -- "$T/batch" 2.9 3.015 2>"$T/err3"
      echo $? >"$T/rc3"; } | cat >"$T/log3"
    check "batch, -- CMD: sampler exits with the parent's status" [ "$(cat "$T/rc3")" -eq 0 ]
    $PM_BIN/perfmon-analyze "$T/b1" --stats --json >"$T/s3.json" 2>>"$T/err3"
    python3 "$T/check_batch.py" "$T"/b1/*.pmp.jsonl "$T/log3" cmd "$T/s3.json" >"$T/out3" 2>&1
    rc=$?
    cat "$T/out3"
    check "batch, -- CMD: every interval's proc.cpu_percent is the record's, none above the CPUs" [ "$rc" -eq 0 ]

    "$T/batch" 3.2 >"$T/log4" &
    bp=$!
    $PM_BIN/perfmon-sample -o "$T/b2" -i 0.5 -f json -p "$bp" 2>"$T/err4"
    wait "$bp"
    check "batch, -p PID: the parent exits 0" [ $? -eq 0 ]
    $PM_BIN/perfmon-analyze "$T/b2" --stats --json >"$T/s4.json" 2>>"$T/err4"
    python3 "$T/check_batch.py" "$T"/b2/*.pmp.jsonl "$T/log4" pid "$T/s4.json" >"$T/out4" 2>&1
    rc=$?
    cat "$T/out4"
    check "batch, -p PID: every interval's proc.cpu_percent is the record's, none above the CPUs" [ "$rc" -eq 0 ]
fi
# --- USS/PSS of a short job ---------------------------------------------
# A 2-second job that holds 200 MiB: smaps_rollup is read at the first
# sample of the command itself (not while it waits at the start gate,
# when its memory is the sampler's copy), and again when the RSS moves,
# so its USS is seen although the job is shorter than --pss-interval (5 s).
$PM_BIN/perfmon-sample -o "$T/m" -i 0.2 -f json -- python3 -c \
    "x=bytearray(200<<20); import time; [x.__setitem__(i,1) for i in range(0,len(x),4096)]; time.sleep(1.5)" \
    2>"$T/err5"
check "USS/PSS job: sampler exits 0" [ $? -eq 0 ]
python3 - "$T"/m/*.pmp.jsonl >"$T/out5" 2>&1 <<'PY'
import json, sys
cols, uss, pss = None, [], []
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "columns" in o:
        cols = [c["name"] for c in o["columns"]]
    elif "v" in o:
        v = dict(zip(cols, o["v"]))
        if v["proc.uss"] is not None:
            uss.append(v["proc.uss"] / 2**20)
        if v["proc.pss"] is not None:
            pss.append(v["proc.pss"] / 2**20)
print("USS MiB:", ["%.1f" % u for u in uss], "PSS MiB:", ["%.1f" % p for p in pss])
sys.exit(0 if uss and max(uss) >= 190 and pss and max(pss) >= 190 else 1)
PY
rc=$?
cat "$T/out5"
check "USS/PSS job: proc.uss and proc.pss reach the 200 MiB the job holds" [ "$rc" -eq 0 ]
[ "$fails" -eq 0 ] || { cat "$T/err" "$T/err2" "$T"/err3 "$T"/err4 "$T/err5"; exit 1; }
