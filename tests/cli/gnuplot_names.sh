#!/bin/sh
# Host names that gnuplot must read as the same string (issue 14, item 12):
# quotes (one leading), backslashes, a newline, backquotes and system(...),
# '@' and '$', UTF-8, and a 10,000-byte name.  perfmon-analyze --data writes
# the scripts; gnuplot renders every one of them (each PNG must exist and
# not be empty), and gnuplot itself prints each key title of the scripts,
# which must be the host's name byte for byte (the long one: its start and
# "..."), in the column of that host's data.
set -u
. "$PM_ROOT/tests/support/cli.sh"
if ! command -v gnuplot >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  gnuplot or python3 not installed"
    exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/in"
python3 - "$T/in/cpu_metrics.json" "$T/names.json" <<'PY'
import json, sys
names = ["'; DROP TABLE Test; --", "back\\slash\\", "new\nline", 'say "hi"',
         'sys`touch PWNED1`"system("touch PWNED2")"', "@macro $x \\n %s",
         "\u00fcn\u00ef\u00e7ode", "h" * 10000, "plain"]
d = {"host_names": names}
for i, n in enumerate(names):
    d[n] = {"time_stamps": [1700000000 + 5 * k for k in range(6)],
            "cpu_percent_sys": [i + k for k in range(6)],
            "net_io_counters": {"bytes_sent": [1000 * i * k for k in range(6)]}}
json.dump(d, open(sys.argv[1], "w"))
json.dump(names, open(sys.argv[2], "w"))
PY
${PM_WRAP:-} "$PM_BIN/perfmon-analyze" -q --data "$T/out" "$T/in" || { echo "FAIL  --data exited $?"; exit 1; }
render() {
    for gp in "$T"/out/*.gp; do
        (cd "$T/out" && gnuplot "$(basename "$gp")") 2>"$T/gp.err" || { cat "$T/gp.err"; return 1; }
    done
    for png in cpu_usage_per_node cpu_usage_all_nodes net_out_per_node net_out_all_nodes; do
        [ -s "$T/out/$png.png" ] || { echo "  $png.png missing"; return 1; }
    done
    ! ls "$T/out" | grep -q PWNED
}
check "gnuplot renders every script, runs no command" render
check "gnuplot reads each key title as the host's name, in its column" python3 - "$T" <<'PY'
import json, os, re, subprocess, sys
T = sys.argv[1]
names = json.load(open(os.path.join(T, "names.json")))
lit = r'"(?:[^"\\]|\\.)*"'
bad = 0
for gp in ("cpu_usage.gp", "net_out.gp"):
    text = open(os.path.join(T, "out", gp), encoding="latin-1").read()
    hdr = open(os.path.join(T, "out", gp.replace(".gp", "_per_node.dat")), "rb").read().split(b"\n")
    cols = {}
    for line in hdr:
        m = re.match(rb'# column (\d+): "(.*)" \[', line)
        if m:
            cols[int(m.group(1))] = m.group(2)
    clauses = re.findall(r'using 1:(\d+) with linespoints pt 7 ps 0\.3 title (' + lit + ')', text)
    per_node = clauses[:-1]                          # the last is the all-node plot
    if len(per_node) != len(names):
        print("  %s: %d key titles for %d hosts" % (gp, len(per_node), len(names)))
        bad = 1
        continue
    # gnuplot prints each title literal to a file of its own
    script = ""
    for k, (_, t) in enumerate(per_node):
        script += 'set print "%s/t%d.txt"\nprint %s\nunset print\n' % (T, k, t)
    open(os.path.join(T, "print.gp"), "w", encoding="latin-1").write(script)
    subprocess.run(["gnuplot", os.path.join(T, "print.gp")], check=True)
    for k, (col, _) in enumerate(per_node):
        got = open(os.path.join(T, "t%d.txt" % k), "rb").read()[:-1]   # print adds "\n"
        # the host of that column, by its (control bytes as '?') header
        host = [n for n in names
                if bytes(b if b >= 0x20 and b != 0x7f and b != 0x22 else 0x3f for b in n.encode()) == cols[int(col)]]
        if len(host) != 1:
            print("  %s: column %s is no single host" % (gp, col))
            bad = 1
            continue
        want = host[0].encode()
        if len(want) > 120:
            want = want[:117] + b"..."
        if got != want:
            print("  %s column %s: gnuplot read %r, host %r" % (gp, col, got[:60], want[:60]))
            bad = 1
sys.exit(bad)
PY
[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
