#!/bin/sh
# --html (docs/report.md, "The HTML report") in a real browser: Debian's
# Chromium, headless, loads each report from file:// and writes the page
# as its scripts left it (--dump-dom) and its console on stderr.  On the
# job of fixtures/html/hostile (host, job, user, command and phase names
# that are markup: fixtures/html/make_hostile.py) and on a generated
# 20-node job (more nodes than a legend: the band and the outlying nodes;
# more than 16: the colour maps):
# no console message (a script error, a Content-Security-Policy violation
# and a blocked fetch each print one), no element that loads anything,
# nothing the names carry runs or is added (the title stays, no img or
# svg element) and each name reads back literally; the verdict is the PDF
# page 1's (pdftotext); a chart is drawn (a canvas) per plotted metric and
# colour map;
# a zoom given to the first chart is every chart's range; a node
# highlighted is marked on every chart that has it; the statistics table
# finds nodes by name and sorts by a column.  Also: a byte changed
# in the report's script stops it running (the CSP's hash); the vendored
# library's SHA256SUMS hold, and a damaged copy is refused (exit 2); --stream and
# a second run under SOURCE_DATE_EPOCH give the same bytes; a write that
# fails is exit 3 and leaves nothing.
set -u
. "$PM_ROOT/tests/support/cli.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    echo "SKIP  chromium not installed (make deps installs Debian's chromium)"
    exit 0
fi
for tool in python3 pdftotext sha256sum; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "SKIP  $tool not installed"
        exit 0
    fi
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export PERFMON_TEMPLATES="$PM_ROOT/templates"
export SOURCE_DATE_EPOCH=1700000000
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"

# load FILE URL_SUFFIX OUT [HEIGHT]: the DOM after the scripts ran, the
# console; the window is HEIGHT pixels high (default: tall enough that every
# chart is near it, so every chart is drawn; report.js draws a chart as it
# comes near the window).
load() {
    timeout 60 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --no-first-run \
        --user-data-dir="$T/profile" --enable-logging=stderr --v=0 --window-size=1280,${4:-8000} \
        --virtual-time-budget=5000 --dump-dom "file://$1$2" >"$3.dom" 2>"$3.log"
}
no_console() {
    if grep -q ':CONSOLE' "$1.log"; then
        grep ':CONSOLE' "$1.log" | cut -c1-300 | sed 's/^/      /' | head -5
        return 1
    fi
}

python3 - "$T/big" <<'EOF'
import json, math, os, sys
d = sys.argv[1]
os.makedirs(d)
cols = [("cpu.percent", "%", "cpu", "gauge"), ("cpu.ncpus", "1", "cpu", "gauge"),
        ("mem.total", "B", "memory", "gauge"), ("mem.used", "B", "memory", "gauge")]
for i in range(20):
    head = {"format": "perfmon-profile", "version": 1, "host": "n%02d" % i, "job_id": "42",
            "scheduler": "slurm", "node_rank": str(i), "user": "u", "command": "app",
            "sampler": "html.sh", "start": 1700000000.0, "start_mono": 1.0, "interval": 1.0,
            "pid": 0, "columns": [{"name": n, "unit": u, "group": g, "kind": k, "type": "f64"}
                                  for n, u, g, k in cols]}
    with open(os.path.join(d, "n%02d.jsonl" % i), "w") as f:
        f.write(json.dumps(head) + "\n")
        for k in range(120):
            cpu = 10 if i == 3 else 60 + 30 * math.sin(k / 9.0 + i / 3.0)
            f.write(json.dumps({"t": 1700000000.0 + k, "mono": 1.0 + k,
                                "v": [cpu, 8, 2 ** 36, 2 ** 34 + 2 ** 27 * ((k + i) % 13)]}) + "\n")
        f.write(json.dumps({"end": {"t": 1700000119.0, "mono": 120.0, "samples": 120,
                                    "late": 0, "missed": 0, "self_cpu": 0.01,
                                    "self_maxrss_kb": 2000, "exit_status": 0,
                                    "reason": "command exited"}}) + "\n")
EOF

for job in hostile big; do
    in="$PM_ROOT/fixtures/html/hostile"
    [ $job = big ] && in="$T/big"
    check "$job: --html and --pdf written" $A -q "$in" --html "$T/$job.html" --pdf "$T/$job.pdf"
    pdftotext -f 1 -l 1 "$T/$job.pdf" "$T/$job.txt"
    load "$T/$job.html" "" "$T/$job"
    check "$job: no console message (no script error, CSP violation or fetch)" no_console "$T/$job"
done
check "big: --stream writes the same bytes" sh -c "$A -q --stream '$T/big' --html '$T/big2.html' && cmp '$T/big.html' '$T/big2.html'"
check "hostile: the same bytes when written again (SOURCE_DATE_EPOCH)" sh -c "sleep 1; $A -q '$PM_ROOT/fixtures/html/hostile' --html '$T/again.html' && cmp '$T/hostile.html' '$T/again.html'"

# A zoom and a node given in the hash (report.js applies the zoom to the
# first chart only; the others follow through the shared time axis).
load "$T/hostile.html" "#zoom=12,25&node=%22%3E%3Cimg%20src%3Dx%20onerror%3D%22document.title%3D'img'%22%3E" "$T/hostile-z"
load "$T/big.html" "#zoom=30,60.5&node=n03&find=N1&sort=1" "$T/big-z"
# A window of 700 pixels: the first screen only (the tables come first),
# the rest is drawn as it scrolls into view.
load "$T/big.html" "" "$T/big-lazy" 700
check "a short window: the charts below it are not drawn yet" python3 -c "
import re, sys
b = re.search(r'<body[^>]*>', open('$T/big-lazy.dom').read()).group(0)
d = re.search(r'data-drawn=\"(\d+)\"', b); c = re.search(r'data-charts=\"(\d+)\"', b)
sys.exit(0 if c and int(c.group(1)) > 0 and int(d.group(1) if d else 0) < int(c.group(1)) and 'data-drawn-ms' in b else 1)"
check "zoomed, highlighted: no console message" sh -c "! grep -q ':CONSOLE' '$T/hostile-z.log' '$T/big-z.log'"

check "the page as the browser left it" python3 - "$T" "$PM_ROOT/fixtures/html/hostile-names.json" <<'EOF'
import json, re, sys
from html.parser import HTMLParser
T, names = sys.argv[1], json.load(open(sys.argv[2], encoding="utf-8"))


class Page(HTMLParser):
    """Elements with their attributes and text, in document order."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.els, self.stack = [], []

    def handle_starttag(self, tag, attrs):
        el = {"tag": tag, "attrs": dict(attrs), "text": "", "kids": []}
        for p in self.stack:
            p["kids"].append(el)
        self.els.append(el)
        if tag not in ("meta", "br", "img", "input", "link", "col", "hr"):
            self.stack.append(el)

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i]["tag"] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        for p in self.stack:
            p["text"] += data


def page(path):
    p = Page()
    p.feed(open(path, encoding="utf-8").read())
    return p.els


def norm(s):
    return " ".join(s.split())


bad = []
def want(ok, what):
    if not ok:
        bad.append(what)


def checks(job, els, data):
    by = lambda tag: [e for e in els if e["tag"] == tag]
    figs = [e for e in els if e["tag"] == "figure" and "chart" in e["attrs"].get("class", "")]
    body = by("body")[0]
    want(body["attrs"].get("data-charts") == str(len(data["charts"])),
         "%s: %s charts drawn of %d" % (job, body["attrs"].get("data-charts"), len(data["charts"])))
    want(len(figs) == len(data["charts"]) and len(figs) > 0, "%s: %d figures" % (job, len(figs)))
    for f in figs:
        want(any(k["tag"] == "canvas" for k in f["kids"]), "%s: %s has no canvas" % (job, f["attrs"]["id"]))
    # nothing that loads: no src, no href but the contents' anchors
    for e in els:
        for a in ("src", "srcset", "data", "action", "formaction", "poster"):
            want(a not in e["attrs"], "%s: <%s %s=...>" % (job, e["tag"], a))
        if "href" in e["attrs"]:
            want(e["attrs"]["href"].startswith("#"), "%s: href %s" % (job, e["attrs"]["href"]))
        want(e["tag"] not in ("img", "svg", "iframe", "object", "embed"),
             "%s: a <%s> element" % (job, e["tag"]))
        want(e["text"] != "bold", "%s: the command's <b> is an element" % job)
    want(len(by("script")) == 4, "%s: %d script elements" % (job, len(by("script"))))
    want(body["attrs"].get("data-drawn") == str(len(data["charts"])),
         "%s: %s charts drawn in a tall window, of %d" % (job, body["attrs"].get("data-drawn"), len(data["charts"])))
    # the verdict is the PDF's page 1 verdict
    v = [e for e in els if e["attrs"].get("id") == "verdict"]
    pdf = norm(open("%s/%s.txt" % (T, job), encoding="utf-8").read())
    want(v and len(norm(v[0]["text"])) > 20 and norm(v[0]["text"]) in pdf,
         "%s: verdict %r not on the PDF's page 1" % (job, v and norm(v[0]["text"])))
    for e in els:
        if "limit" in e["attrs"].get("class", ""):
            want(norm(e["text"]) in pdf, "%s: limit %r not in the PDF" % (job, e["text"]))
    return figs


# the hostile job
for job in ("hostile", "hostile-z"):
    els = page("%s/%s.dom" % (T, job))
    data = json.loads([e for e in els if e["attrs"].get("id") == "pm-data"][0]["text"])
    figs = checks("hostile", els, data)
    title = [e for e in els if e["tag"] == "title"][0]["text"]
    want(title == "perfmon job report " + names["job"], "%s: title %r" % (job, title))
    rows = [e for e in els if e["tag"] == "tr" and "data-node" in e["attrs"]]
    got = [[k for k in r["kids"] if k["tag"] == "td"][0]["text"] for r in rows]
    want(sorted(got) == sorted(names["hosts"]), "%s: node names %r" % (job, got))
    job_rows = {}
    for r in els:
        if r["tag"] == "tr":
            th = [k for k in r["kids"] if k["tag"] == "th"]
            td = [k for k in r["kids"] if k["tag"] == "td"]
            if th and td:
                job_rows[th[0]["text"]] = td[0]["text"]
    for k, n in (("Job ID", "job"), ("User", "user"), ("Command", "command")):
        want(job_rows.get(k) == names[n], "%s: %s reads %r" % (job, k, job_rows.get(k)))
    buttons = [e["text"] for e in els if e["tag"] == "button"]
    want(names["phase"] in buttons, "%s: phase buttons %r" % (job, buttons))
    legend = {e["text"] for e in els if "u-label" in e["attrs"].get("class", "").split()}
    for h in names["hosts"]:
        want(h in legend, "%s: %r not in a legend" % (job, h))
    if job == "hostile-z":
        hl = names["hosts"][1]
        for f in figs:
            want(f["attrs"].get("data-xmin") == "12.000" and f["attrs"].get("data-xmax") == "25.000",
                 "hostile-z: %s shows %s..%s" % (f["attrs"]["id"], f["attrs"].get("data-xmin"),
                                                 f["attrs"].get("data-xmax")))
        tl = [e for e in els if e["attrs"].get("id") == "timeline"]
        want(data["timeline"] and tl and any(k["tag"] == "canvas" for k in tl[0]["kids"]) and
             tl[0]["attrs"].get("data-xmin") == "12.000" and tl[0]["attrs"].get("data-xmax") == "25.000",
             "hostile-z: the phase timeline: %r" % (tl and tl[0]["attrs"]))
        want(sorted(data["timeline"]["rows"]) == sorted(names["hosts"]),
             "hostile-z: timeline rows %r" % data["timeline"]["rows"])
        per_node = [c["id"] for c in data["charts"] if any(data["nodes"][l["node"]] == hl
                                                         for l in c["lines"] if l["node"] >= 0)]
        marked = [f["attrs"]["id"] for f in figs if f["attrs"].get("data-hl") == hl]
        want(per_node and marked == per_node, "hostile-z: highlighted in %r, want %r" % (marked, per_node))

# the 20-node job: bands, the outlying node named, colour maps, zoom and highlight
els = page(T + "/big-z.dom")
data = json.loads([e for e in els if e["attrs"].get("id") == "pm-data"][0]["text"])
figs = checks("big", els, data)
want(any(c.get("band") for c in data["charts"]), "big: no band chart")
for f in figs:
    want(f["attrs"].get("data-xmin") == "30.000" and f["attrs"].get("data-xmax") == "60.500",
         "big: %s shows %s..%s" % (f["attrs"]["id"], f["attrs"].get("data-xmin"), f["attrs"].get("data-xmax")))
# a line of n03 (an outlying node), or in every band chart n03's min/max
named = [c["id"] for c in data["charts"] if c.get("pyr") or
         any(l["node"] >= 0 and data["nodes"][l["node"]] == "n03" for l in c["lines"])]
want(len(named) > len([c for c in data["charts"] if any(l["node"] == 3 for l in c["lines"])]),
     "big: no band chart carries n03's min/max")
marked = [f["attrs"]["id"] for f in figs if f["attrs"].get("data-hl") == "n03"]
want(named and marked == named, "big: n03 highlighted in %r, named in %r" % (marked, named))
# the statistics: find=N1 shows n10..n19 only, sort=1 orders them by CPU
# utilisation, largest first
rows = [e for e in els if e["tag"] == "tr" and "data-node" in e["attrs"]]
shown = [r for r in rows if "hidden" not in r["attrs"]]
names = [[k for k in r["kids"] if k["tag"] == "td"][0]["text"] for r in shown]
want(sorted(names) == ["n%02d" % i for i in range(10, 20)], "big: find=N1 shows %r" % names)
cpu = [float([k for k in r["kids"] if k["tag"] == "td"][1]["attrs"]["data-v"]) for r in shown]
want(cpu == sorted(cpu, reverse=True) and cpu[0] > cpu[-1], "big: sort=1 gives %r" % cpu)
heats = [e for e in els if e["tag"] == "figure" and "heat" in e["attrs"].get("class", "")]
want(len(data["heat"]) >= 1 and len(heats) == len(data["heat"]),
     "big: %d colour maps drawn of %d" % (len(heats), len(data["heat"])))
for f in heats:
    want(any(k["tag"] == "canvas" for k in f["kids"]), "big: %s has no canvas" % f["attrs"]["id"])
    want(f["attrs"].get("data-xmin") == "30.000" and f["attrs"].get("data-xmax") == "60.500"
         and f["attrs"].get("data-hl") == "n03",
         "big: colour map %s: %r" % (f["attrs"]["id"], f["attrs"]))
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
EOF

# Above 1,000 nodes (here 10: PM_HTML_TABLE_NODES) the statistics per
# node are the script's: the plain HTML has each figure's spread across the
# nodes, the script makes the rows that find=N1 and sort=1 ask for.
PM_HTML_TABLE_NODES=10 $A -q "$T/big" --html "$T/bigt.html"
load "$T/bigt.html" "#find=N1&sort=1&node=n13" "$T/bigt"
check "many nodes: no console message" no_console "$T/bigt"
check "many nodes: the spread in HTML, the rows found and sorted by the script" python3 - "$T" <<'EOF2'
import re, sys
T = sys.argv[1]
src = open(T + "/bigt.html", encoding="utf-8").read()
dom = open(T + "/bigt.dom", encoding="utf-8").read()
bad = []
if 'data-node=' in src.split('id="nodes"', 1)[1].split("</table>", 1)[0]:
    bad.append("the file has per-node rows")
spread = re.findall(r"<tr><td>[^<]*</td>(?:<td class=\"num\">[^<]*</td>){6}</tr>", src.split('id="spread"', 1)[1].split("</table>", 1)[0])
if len(spread) < 5:
    bad.append("spread rows %d" % len(spread))
body = dom.split('id="nodes"', 1)[1].split("</table>", 1)[0]
rows = re.findall(r'<tr data-node="(\d+)"( class="hl")?><td>([^<]*)</td><td class="num" data-v="([^"]*)"', body)
names = [r[2] for r in rows]
if sorted(names) != ["n%02d" % i for i in range(10, 20)]:
    bad.append("rows %r" % names)
cpu = [float(r[3]) for r in rows]
if cpu != sorted(cpu, reverse=True) or cpu[0] <= cpu[-1]:
    bad.append("not sorted: %r" % cpu)
if [r[2] for r in rows if r[1]] != ["n13"]:
    bad.append("highlighted %r" % [r[2] for r in rows if r[1]])
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
EOF2

# --compare A B --html: job B's report with the comparison, on elapsed
# time: the verdict of the text output, a row per compared figure, the
# phases side by side, and an overlay chart per metric (A solid, B
# dashed) that zooms with every other chart; above each overlay a lane of
# job A's phases and one of job B's on the same elapsed axis.  Job A is
# fixtures/compare/base with one more phase on node-1 (checkpoint, 110 to
# 115 s) that B does not have.
F="$PM_ROOT/fixtures/compare"
cp -R "$F/base" "$T/base"
for e in start:1700000110 end:1700000115; do
    printf '{"perfmon_event":1,"host":"node-1","pid":1,"wall_ns":"%s000000000","mono_ns":"%s000000000","name":"checkpoint","edge":"%s","attrs":{}}\n' \
        "${e#*:}" "$((${e#*:} - 1700000000 + 1))" "${e%:*}" >>"$T/base/node-1.events"
done
$A -q --compare "$T/base" "$F/slow" --html "$T/cmp.html"
rc=$?
check "--compare --html: exit 1 (B is worse), written" sh -c "[ $rc -eq 1 ] && [ -s '$T/cmp.html' ]"
$A --compare "$T/base" "$F/slow" >"$T/cmp.txt"
load "$T/cmp.html" "#zoom=10,20" "$T/cmp"
load "$T/cmp.html" "" "$T/cmp-all"
check "--compare --html: no console message" no_console "$T/cmp"
check "--compare --html: the phase lanes read back" python3 - "$T" <<'EOF2'
import json, re, sys
T = sys.argv[1]
bad = []
# the phases of the events files, on each job's elapsed time (both start
# at their first sample, 1700000000 and 1700007200)
want = {"A": [("setup", 1, 20), ("compute", 20, 110), ("checkpoint", 110, 115)],
        "B": [("setup", 1, 20), ("compute", 20, 146)]}
for dom, lo, hi in (("cmp-all", 0, 155), ("cmp", 10, 20)):
    page = open("%s/%s.dom" % (T, dom), encoding="utf-8").read()
    figs = re.findall(r'<figure class="chart" id="(c\d+)"[^>]*data-lanes="([^"]*)"', page)
    data = json.loads(re.search(r'id="pm-data">(.*?)</script>', page, re.S).group(1))
    ncmp = len([c for c in data["charts"] if c.get("cmp")])
    if len(figs) < 10 or len(figs) > ncmp:
        bad.append("%s: lanes on %d charts of %d overlays" % (dom, len(figs), ncmp))
    for cid, lanes in figs:
        bars = json.loads(lanes.replace("&quot;", '"'))
        for job in "AB":
            got = [(b[1], b[2], b[3]) for b in bars if b[0] == job]
            exp = [p for p in want[job] if p[2] > lo and p[1] < hi]
            if sorted(got) != sorted(exp):
                bad.append("%s %s: lane %s has %r, want %r" % (dom, cid, job, got, exp))
        # on one axis: a bar's pixels are its times' (within a pixel), the
        # lane of A above B's
        xs = [(max(b[2], lo), min(b[3], hi), b[4], b[5]) for b in bars]
        scale = (xs[0][3] - xs[0][2]) / (xs[0][1] - xs[0][0])
        for t0, t1, x0, x1 in xs:
            if abs((x0 - xs[0][2]) - (t0 - xs[0][0]) * scale) > 1.5 or \
               abs((x1 - xs[0][2]) - (t1 - xs[0][0]) * scale) > 1.5:
                bad.append("%s %s: a bar at %s..%s px for %s..%s s" % (dom, cid, x0, x1, t0, t1))
        ya = {b[6] for b in bars if b[0] == "A"}
        yb = {b[6] for b in bars if b[0] == "B"}
        if len(ya) != 1 or len(yb) != 1 or not ya.pop() < yb.pop():
            bad.append("%s %s: lanes at %r" % (dom, cid, [b[6] for b in bars]))
for b in bad[:10]:
    print("  " + b)
sys.exit(1 if bad else 0)
EOF2
check "--compare --html: the comparison in the browser" python3 - "$T" <<'EOF2'
import json, re, sys
T = sys.argv[1]
dom = open(T + "/cmp.dom", encoding="utf-8").read()
txt = open(T + "/cmp.txt", encoding="utf-8").read()
data = json.loads(re.search(r'id="pm-data">(.*?)</script>', dom, re.S).group(1))
bad = []
v = re.search(r'<p id="compare-verdict"><b>Verdict: (.*?)\.</b>', dom)
line = [l for l in txt.splitlines() if l.startswith("Verdict: ")]
if not v or not line or "Verdict: " + v.group(1) != line[0]:
    bad.append("verdict %r, text %r" % (v and v.group(1), line))
if data["elapsed"] != 1:
    bad.append("not on elapsed time")
cmp = [c for c in data["charts"] if c.get("cmp")]
if len(cmp) < 10 or any(len(c["lines"]) != 2 for c in cmp):
    bad.append("%d overlay charts" % len(cmp))
# every chart shows the zoom; those near the 8000-pixel window are drawn
# (the overlays come first), the rest when scrolled to
drawn = []
for c in data["charts"]:
    fig = re.search(r'<figure class="chart" id="%s"[^>]*>' % c["id"], dom).group(0)
    if 'data-xmin="10.000"' not in fig or 'data-xmax="20.000"' not in fig:
        bad.append("%s: %s" % (c["id"], fig))
    drawn.append("<canvas" in dom.split('id="%s"' % c["id"], 1)[1].split("</figure>", 1)[0])
if drawn.count(True) < 10 or drawn != sorted(drawn, reverse=True):
    bad.append("drawn: %r" % drawn)
rows = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>", dom.split('id="compare-phase"', 1)[1])
if not any(r[0] == "compute" and r[1] == "Duration per node" for r in rows):
    bad.append("phase rows %r" % rows[:4])
for b in bad[:10]:
    print("  " + b)
sys.exit(1 if bad else 0)
EOF2

# The policy holds: one byte of the report's own script changed, and the
# browser runs none of it (and says so on the console).
sed 's/performance.mark(.pm-drawn.)/performance.mark("pm-drawX")/' "$T/big.html" >"$T/tampered.html"
load "$T/tampered.html" "" "$T/tampered"
check "a changed script is refused by the page's policy" sh -c "! cmp -s '$T/big.html' '$T/tampered.html' && grep -q 'Content Security Policy' '$T/tampered.log' && ! grep -q 'data-charts' '$T/tampered.dom'"

# A write that fails (here the file size limit: EFBIG, as a full disk's
# ENOSPC): exit 3 with the file named, nothing left behind.
sh -c "trap '' XFSZ; ulimit -f 40; exec $A -q '$T/big' --html '$T/full.html'" 2>"$T/full.err"
rc=$?
check "a failed write: exit 3, said, no file and no .tmp left" sh -c \
    "[ $rc -eq 3 ] && grep -q 'full.html.tmp: write failed: File too large' '$T/full.err' && [ ! -e '$T/full.html' ] && [ ! -e '$T/full.html.tmp' ]"

# The vendored chart library.
check "the vendored uPlot matches its SHA256SUMS" sh -c "cd '$PM_ROOT'/templates/html/vendor/uplot-* && sha256sum -c --quiet SHA256SUMS"
cp -R "$PM_ROOT/templates" "$T/tpl"
for f in "$T"/tpl/html/vendor/uplot-*/uPlot.iife.min.js; do printf ' ' >>"$f"; done
$A -q --templates "$T/tpl" "$T/big" --html "$T/damaged.html" 2>"$T/damaged.err"
rc=$?
check "a damaged uPlot is refused before the analysis (exit 2, named)" sh -c "[ $rc -eq 2 ] && grep -q 'uPlot.iife.min.js: does not match its SHA-256' '$T/damaged.err' && [ ! -e '$T/damaged.html' ]"

[ "$fails" -eq 0 ] || exit 1
