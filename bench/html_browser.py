"""bench/html.sh's browser half: open each HTML report in headless
Chromium (tests/support/cdp.py, real time) and print the report's own
marks: the first screen drawn (data-drawn-ms, performance.now() from the
start of navigation) and a zoom's redraw of the drawn charts (a drag across
the first chart: data-zoom-ms), the best of RUNS loads, against the targets.

    python3 bench/html_browser.py CHROMIUM RUNS FILE:TARGET_MS ...
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "support"))
from cdp import Chrome  # noqa: E402


def drag(c):
    c.eval("window.scrollTo(0, 0); document.querySelector('figure.chart').scrollIntoView()")
    r = c.eval("(function (r) { return [r.left, r.top, r.width, r.height]; })"
               "(document.querySelector('figure.chart .u-over').getBoundingClientRect())")
    y = r[1] + r[3] / 2
    c.mouse("mouseMoved", r[0] + r[2] * 0.3, y)
    c.mouse("mousePressed", r[0] + r[2] * 0.3, y, "left", 1)
    c.mouse("mouseMoved", r[0] + r[2] * 0.5, y, "left")
    c.mouse("mouseReleased", r[0] + r[2] * 0.5, y, "left", 1)
    deadline = time.time() + 10
    while c.eval("document.body.dataset.zoomMs") is None and time.time() < deadline:
        time.sleep(0.01)
    return float(c.eval("document.body.dataset.zoomMs") or "nan")


def main():
    chromium, runs = sys.argv[1], int(sys.argv[2])
    c = Chrome(chromium, 1280, 900)
    try:
        for arg in sys.argv[3:]:
            path, target = arg.rsplit(":", 1)
            first, zoom = [], []
            for _ in range(runs):
                c.open("file://" + os.path.abspath(path), timeout=120)
                first.append(float(c.eval("document.body.dataset.drawnMs")))
                drawn = c.eval("document.body.dataset.drawn")
                zoom.append(drag(c))
            bad = [m for m in c.console()]
            print("   %-28s first screen %5.0f ms (target %s ms; %s charts drawn at once, of %s), "
                  "zoom redraw %5.1f ms (target 50 ms)%s"
                  % (os.path.basename(path), min(first), target, drawn,
                     c.eval("document.body.dataset.charts"), min(zoom),
                     "; console: " + bad[0] if bad else ""))
            c.events.clear()
    finally:
        c.close()


main()
