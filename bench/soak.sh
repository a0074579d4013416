#!/bin/sh
# make soak: perfmon-sample for SOAK_SECONDS (default 3600) at -i
# SOAK_INTERVAL (default 0.05) on a process tree that forks and reaps
# children all the time, watched from outside: the sampler's RSS and open
# descriptors over time, then its own figures from the profile (samples,
# missed and late deadlines, lateness, CPU).  Bounds, checked at the end
# (exit status 1 when one is broken):
#   RSS: the last reading at most 256 KiB above the reading after the first
#        tenth of the run (allocator warm-up excluded), and no reading in
#        the last half above the highest of the first half + 256 KiB;
#   descriptors: the mean count over the last third of the readings at
#        most 4 above the mean over the first third (the sampler keeps the
#        files of live tree members open, so the count follows the children
#        alive at the moment of the reading; a leak grows without bound);
#   missed deadlines: at most 0.5 % of the deadlines (SOAK_MISSED_PCT);
#   samples recorded + missed within 1 % (at least 20) of duration / interval.
# The 1-minute load average is printed with each reading: missed and late
# samples mean little on a machine whose cores are oversubscribed.
# Not part of `make check`: it runs for an hour.
set -eu
BUILD=${BUILD:-build/release}
BIN="$BUILD/bin"
SECS=${SOAK_SECONDS:-3600}
IV=${SOAK_INTERVAL:-0.05}
EVERY=${SOAK_EVERY:-$(( SECS / 60 > 1 ? SECS / 60 : 1 ))}
MISSED_PCT=${SOAK_MISSED_PCT:-0.5}
TMP=$(mktemp -d)
trap 'kill $spid 2>/dev/null || true; rm -rf "$TMP"' EXIT
spid=""

echo "== perfmon-sample soak: ${SECS} s at -i ${IV}; a tree that forks 4 children every 0.1 s"
echo "   (each sleeps 0.1 s and exits: about 40 processes created and reaped per second)"
# The tree: a shell that keeps starting short-lived children and waiting
# for them, under timeout, so the sampler's -- CMD mode ends with it.
"$BIN/perfmon-sample" -o "$TMP/prof" -i "$IV" -c 60 -- timeout "$SECS" sh -c '
    while :; do
        for k in 1 2 3 4; do sleep 0.1 & done
        wait
    done' &
spid=$!
echo "   sampler pid $spid; readings every ${EVERY} s"
printf '   %8s %10s %6s %8s %6s\n' "t [s]" "RSS [KiB]" "fds" "forks" "load1"
: >"$TMP/readings"
t=0
forks0=$(awk '/^processes/ {print $2}' /proc/stat)
while kill -0 "$spid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$spid/status" 2>/dev/null || true)
    fds=$(ls "/proc/$spid/fd" 2>/dev/null | wc -l)
    forks=$(( $(awk '/^processes/ {print $2}' /proc/stat) - forks0 ))
    if [ -n "$rss" ]; then
        load=$(cut -d' ' -f1 /proc/loadavg)
        printf '   %8d %10d %6d %8d %6s\n' "$t" "$rss" "$fds" "$forks" "$load"
        echo "$t $rss $fds" >>"$TMP/readings"
    fi
    sleep "$EVERY"
    t=$((t + EVERY))
done
wait "$spid" || true # the command's status: timeout's 124

"$BIN/perfmon-analyze" "$TMP/prof" --stats --json -q >"$TMP/stats.json"
python3 - "$TMP/stats.json" "$TMP/readings" "$SECS" "$IV" "$MISSED_PCT" <<'EOF'
import json, sys
n = json.load(open(sys.argv[1]))["nodes"][0]
readings = [tuple(map(int, l.split())) for l in open(sys.argv[2]) if l.strip()]
secs, iv, missed_pct = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
deadlines = secs / iv
samples, missed, late = n["samples"], n["sampler_missed"], n["sampler_late"]
print("   from the profile:")
print("     samples %d, missed deadlines %d (%.3f %%), late samples %d (%.3f %%)"
      % (samples, missed, 100.0 * missed / deadlines, late, 100.0 * late / max(samples, 1)))
print("     lateness mean %.3f ms, max %.1f ms; sampler CPU %.3f %% of a core; peak RSS %d KiB"
      % (n["sampler_lateness_mean_s"] * 1e3, n["sampler_lateness_max_s"] * 1e3,
         n["sampler_cpu_pct"], n["sampler_peak_rss_bytes"] // 1024))
bad = []
if len(readings) >= 4:
    rss = [r[1] for r in readings]
    fds = [r[2] for r in readings]
    warm = rss[max(1, len(rss) // 10)]
    half = len(rss) // 2
    print("   RSS: %d KiB after warm-up, %d KiB at the end, %d..%d KiB over the run; fds %d..%d"
          % (warm, rss[-1], min(rss), max(rss), min(fds), max(fds)))
    if rss[-1] > warm + 256:
        bad.append("RSS grew by %d KiB after warm-up" % (rss[-1] - warm))
    if max(rss[half:]) > max(rss[:half]) + 256:
        bad.append("RSS in the second half above the first half's peak + 256 KiB")
    third = max(1, len(fds) // 3)
    f0, f1 = sum(fds[:third]) / third, sum(fds[-third:]) / third
    print("   fds: mean %.1f over the first third of the readings, %.1f over the last" % (f0, f1))
    if f1 > f0 + 4:
        bad.append("descriptors grew from %.1f to %.1f on average" % (f0, f1))
else:
    bad.append("fewer than 4 readings: run longer than 4 x SOAK_EVERY")
if missed > deadlines * missed_pct / 100:
    bad.append("missed deadlines %d above %.2f %% of %d" % (missed, missed_pct, deadlines))
if abs(samples + missed - deadlines) > max(20, 0.01 * deadlines):
    bad.append("samples + missed = %d, expected about %d" % (samples + missed, deadlines))
print("   verdict: " + ("within bounds" if not bad else "OUT OF BOUNDS: " + "; ".join(bad)))
sys.exit(1 if bad else 0)
EOF
