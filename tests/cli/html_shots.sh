#!/bin/sh
# The HTML report's sections as a user sees them: screenshots in headless
# Chromium (tests/support/html_shots.py: a fixed window at device scale 1,
# only fonts-dejavu-core's fonts, UTC, SOURCE_DATE_EPOCH) compared with
# the reference images in fixtures/golden/html/ within a pixel tolerance
# (at most 0.25 % of the pixels differing by more than 16 in a channel).
# Sections: the verdict and its limits, the key figures, an all-node chart
# with its phases at overview, a per-node chart zoomed to 15 s (the
# samples drawn as points), the phase timeline, a --compare overlay with
# the lanes of job A's and job B's phases (fixtures/compare/base and slow),
# and in a 512-node job a node highlighted in the colour map and in the
# band chart.
# When a change to the report's look is meant, `make html-ref` writes the
# references again (PM_HTML_REF_UPDATE=1); look at them before committing.
# PM_HTML_SHOTS_DIR=DIR keeps every capture in DIR (PM_HTML_SHOTS_KEEP).
# Under PM_WRAP (valgrind) the 512-node job is left out: its analysis
# there takes minutes; the other sections still run.
set -u
. "$PM_ROOT/tests/support/cli.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    echo "SKIP  chromium not installed (make deps installs Debian's chromium)"
    exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed"
    exit 0
fi
if [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then
    echo "SKIP  fonts-dejavu-core not installed (make deps installs it)"
    exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export PERFMON_TEMPLATES="$PM_ROOT/templates"
export SOURCE_DATE_EPOCH=1700000000
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
REF="$PM_ROOT/fixtures/golden/html"
OUT="${PM_HTML_SHOTS_DIR:-$T/shots}"
mkdir -p "$OUT" "$REF"
[ -n "${PM_HTML_SHOTS_DIR:-}" ] && export PM_HTML_SHOTS_KEEP=1

# job DIR NODES: NODES nodes of 120 one-second samples, the phases setup,
# solve, write, solve, write (a kind twice: two spans); CPU a sine shifted per node (node007 flat at 12 %),
# memory a saw tooth.
job() {
    python3 - "$1" "$2" <<'EOF'
import json, math, os, random, sys
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d)
rnd = random.Random(3)
cols = [("cpu.percent", "%", "cpu", "gauge"), ("cpu.ncpus", "1", "cpu", "gauge"),
        ("mem.total", "B", "memory", "gauge"), ("mem.used", "B", "memory", "gauge")]
K = 120
for i in range(n):
    host = "node%03d" % i
    head = {"format": "perfmon-profile", "version": 1, "host": host, "job_id": "shots",
            "scheduler": "slurm", "node_rank": str(i), "user": "u", "command": "app",
            "sampler": "html_shots.sh", "start": 1700000000.0, "start_mono": 1.0,
            "interval": 1.0, "pid": 0,
            "columns": [{"name": a, "unit": u, "group": g, "kind": k, "type": "f64"}
                        for a, u, g, k in cols]}
    with open(os.path.join(d, host + ".jsonl"), "w") as f:
        f.write(json.dumps(head) + "\n")
        for k in range(K):
            cpu = 50 + 35 * math.sin(k / 7.0 + (i % 64) / 10.0)
            cpu += rnd.uniform(-1, 1) if n < 20 else 0
            if i == 7:
                cpu = 12
            mem = 2 ** 33 + 2 ** 27 * ((k + i) % 17)
            f.write(json.dumps({"t": 1700000000.0 + k, "mono": 1.0 + k,
                                "v": [round(cpu, 3), 8, 2 ** 36, mem]}) + "\n")
        f.write(json.dumps({"end": {"t": 1700000000.0 + K - 1, "mono": float(K), "samples": K,
                                    "late": 0, "missed": 0, "self_cpu": 0.01,
                                    "self_maxrss_kb": 2000, "exit_status": 0,
                                    "reason": "command exited"}}) + "\n")
    with open(os.path.join(d, host + ".events"), "w") as f:
        for name, a, b in (("setup", 2, 20), ("solve", 20, 60), ("write", 60, 66),
                           ("solve", 66, K - 15), ("write", K - 15, K - 3)):
            for edge, t in (("start", a), ("end", b)):
                f.write(json.dumps({"perfmon_event": 1, "host": host, "pid": 1,
                                    "wall_ns": str((1700000000 + t) * 10 ** 9),
                                    "mono_ns": str((1 + t) * 10 ** 9), "name": name,
                                    "edge": edge, "attrs": {}}) + "\n")
EOF
}

job "$T/six" 6
check "6 nodes: --html written" $A -q "$T/six" --html "$T/six.html"
# the jobs as a and b: their names are in the legend
cp -R "$PM_ROOT/fixtures/compare/base" "$T/a"
cp -R "$PM_ROOT/fixtures/compare/slow" "$T/b"
(cd "$T" && $A -q --compare a b --html cmp.html)
check "--compare: --html written (exit 1: B is worse)" [ $? -eq 1 ]
set -- "top=$T/six.html#@header" \
    "figures=$T/six.html#@#key-figures, #key-figures + table" \
    "chart=$T/six.html#@#c0" \
    "zoom=$T/six.html#zoom=30,45@#c2" \
    "timeline=$T/six.html#@#timeline" \
    "compare=$T/cmp.html#zoom=90,155@#c0"
if [ -z "${PM_WRAP:-}" ]; then
    job "$T/wide" 512
    check "512 nodes: --html written" $A -q "$T/wide" --html "$T/wide.html"
    set -- "$@" "wide-heat=$T/wide.html#node=node007@figure.heat" \
        "wide-band=$T/wide.html#node=node007@#c2"
else
    echo "      (under PM_WRAP: the 512-node job left out)"
fi
if [ "${PM_HTML_REF_UPDATE:-}" = 1 ]; then
    check "reference images written to $REF" python3 "$PM_ROOT/tests/support/html_shots.py" "$CHROMIUM" "$REF" "$OUT" "$@"
else
    check "each section looks as its reference image (fixtures/golden/html)" \
        python3 "$PM_ROOT/tests/support/html_shots.py" "$CHROMIUM" "$REF" "$OUT" "$@"
    [ "$fails" -eq 0 ] || [ -n "${PM_HTML_SHOTS_DIR:-}" ] ||
        echo "      (PM_HTML_SHOTS_DIR=DIR keeps the captures and their differences)"
fi
[ "$fails" -eq 0 ] || exit 1
