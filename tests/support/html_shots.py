"""Screenshots of the HTML report's sections against reference images
(tests/cli/html_shots.sh; `make html-ref` writes the references).

usage: html_shots.py CHROMIUM REFDIR OUTDIR NAME=FILE#HASH@SELECTOR ...

Each NAME is one section: FILE opened in headless Chromium with HASH (the
report's state: zoom=, node= ...; loaded once for consecutive sections of
one FILE#HASH), the elements SELECTOR scrolled into view and, once drawn,
captured as the box around them.  The capture is compared with
REFDIR/NAME.png: the same size, and at most SHARE of the pixels differing
by more than DELTA in a channel (anti-aliasing that moves by a pixel
changes few pixels by much; a chart, a colour or a label that moved changes
many).  A capture that differs is written to OUTDIR/NAME.png, with
OUTDIR/NAME.diff.png (differing pixels red on the reference, greyed); with
PM_HTML_SHOTS_KEEP=1 every capture is written there.  With
PM_HTML_REF_UPDATE=1 the captures replace the references instead.

What makes a capture the same on every Debian machine: a fixed window and
device scale 1, hidden scroll bars, sRGB, no LCD text or hinting, only the
fonts of fonts-dejavu-core (a fontconfig file of this script's, so no
other installed font can be chosen), UTC and one language; the report has
no animation, and SOURCE_DATE_EPOCH fixes its footer.  PNG is read and
written with zlib and the five row filters of the PNG specification, so
no package beyond python3 is needed.
"""
import base64
import os
import shutil
import struct
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Chrome  # noqa: E402

WIDTH, HEIGHT = 1100, 900
DELTA = 16       # a channel differing by more than this: a differing pixel
SHARE = 0.0025   # at most this share of the pixels differing
FONTS = "/usr/share/fonts/truetype/dejavu"


def read_png(data):
    """(width, height, rows of RGB bytes) of an 8-bit RGB or RGBA PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w, h, bpp = 8, [], 0, 0, 0
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("only 8-bit RGB/RGBA, not interlaced")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + n
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    if len(raw) != h * (stride + 1):
        raise ValueError("%d bytes of pixels for %dx%d" % (len(raw), w, h))
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if f == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for x in range(stride):
                line[x] = (line[x] + ((line[x - bpp] if x >= bpp else 0) + prev[x]) // 2) & 255
        elif f == 4:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        elif f != 0:
            raise ValueError("row filter %d" % f)
        rows.append(line)
        prev = line
    if bpp == 4:  # the page is opaque: drop alpha
        rgb = []
        for r in rows:
            o = bytearray(3 * w)
            o[0::3], o[1::3], o[2::3] = r[0::4], r[1::4], r[2::4]
            rgb.append(o)
        rows = rgb
    return w, h, rows


def write_png(path, w, h, rows):
    """rows (RGB bytes) as an 8-bit RGB PNG, each row filtered by Up (a
    screenshot's rows mostly repeat the row above: small files, fast)."""
    out, prev = [], bytearray(3 * w)
    for r in rows:
        out.append(b"\2" + bytes((a - b) & 255 for a, b in zip(r, prev)))
        prev = r

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(b"".join(out), 9)) + chunk(b"IEND", b""))


def compare(got, ref, diff=None):
    """The number of differing pixels of two (w, h, rows) images of one
    size; when diff is a list, the rows of an image of them appended."""
    w = got[0]
    n = 0
    for gr, rr in zip(got[2], ref[2]):
        if gr == rr and diff is None:
            continue
        d = bytearray(3 * w)
        for x in range(w):
            k = 3 * x
            if max(abs(gr[k] - rr[k]), abs(gr[k + 1] - rr[k + 1]), abs(gr[k + 2] - rr[k + 2])) > DELTA:
                n += 1
                d[k:k + 3] = b"\xff\0\0"
            else:
                g = 160 + (rr[k] + rr[k + 1] + rr[k + 2]) // 8
                d[k:k + 3] = bytes((g, g, g))
        if diff is not None:
            diff.append(d)
    return n


def fontconfig(tmp):
    """A fontconfig file that knows only fonts-dejavu-core's fonts, every
    generic family one of them."""
    path = os.path.join(tmp, "fonts.conf")
    alias = "".join("<alias><family>%s</family><prefer><family>%s</family></prefer></alias>" % (g, f)
                    for g, f in (("system-ui", "DejaVu Sans"), ("sans-serif", "DejaVu Sans"),
                                 ("serif", "DejaVu Serif"), ("monospace", "DejaVu Sans Mono")))
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
                "<dir>%s</dir><cachedir>%s</cachedir>%s"
                '<selectfont><rejectfont><glob>*/DejaVuSerif*</glob><glob>*/DejaVuSansCondensed*</glob>'
                '<glob>*/DejaVuSans-ExtraLight*</glob><glob>*/DejaVuMath*</glob></rejectfont></selectfont>'
                '<match target="pattern"><edit name="family" mode="append_last">'
                '<string>DejaVu Sans</string></edit></match>'
                '<match target="font"><edit name="antialias" mode="assign"><bool>true</bool></edit>'
                '<edit name="hinting" mode="assign"><bool>false</bool></edit>'
                '<edit name="rgba" mode="assign"><const>none</const></edit></match>'
                "</fontconfig>" % (FONTS, os.path.join(tmp, "fc-cache"), alias))
    return path


def capture(c, url, sel, reload):
    """The elements sel (a CSS selector list) of the page url, drawn, as
    the PNG bytes of the box around them; the page loaded again when
    reload, else as the last capture left it."""
    if reload:
        # a new document (a URL that differs only in its hash would not
        # load the page again)
        c.open("about:blank", ready="location.href === 'about:blank'")
        c.open(url)
    els = "Array.prototype.slice.call(document.querySelectorAll(%r))" % sel
    c.eval("%s[0].scrollIntoView()" % els)
    deadline = time.time() + 15
    # drawn (a figure: its canvas, uPlot's or the report's own), its range
    # the zoom's (a chart away from the window takes a zoom when it comes
    # near: data-stale until then)
    ready = ("(function (es) { return es.length > 0 && es.every(function (e) {"
             " return (!e.matches('figure') || !!e.querySelector('canvas')) && !e.dataset.stale; }); })(%s)"
             % els)
    while not c.eval(ready):
        if time.time() > deadline:
            raise TimeoutError("%s: %s not drawn" % (url, sel))
        time.sleep(0.02)
    c.eval("new Promise(function (r) { requestAnimationFrame(function () { requestAnimationFrame(r); }); })")
    r = c.eval("%s.map(function (e) { var r = e.getBoundingClientRect();"
               " return [r.left + scrollX, r.top + scrollY, r.right + scrollX, r.bottom + scrollY]; })" % els)
    x, y = int(min(b[0] for b in r)), int(min(b[1] for b in r))
    clip = dict(x=x, y=y, width=int(max(b[2] for b in r) + 0.999) - x,
                height=int(max(b[3] for b in r) + 0.999) - y, scale=1)
    # optimizeForSpeed: Chromium's fast PNG (no row filter), fast to read here
    return base64.b64decode(c.call("Page.captureScreenshot", format="png", clip=clip,
                                   captureBeyondViewport=False, optimizeForSpeed=True)["data"])


def main():
    chromium, refdir, outdir = sys.argv[1:4]
    update = os.environ.get("PM_HTML_REF_UPDATE") == "1"
    keep = os.environ.get("PM_HTML_SHOTS_KEEP") == "1"
    tmp = tempfile.mkdtemp(prefix="pm-shots-")
    env = dict(os.environ, FONTCONFIG_FILE=fontconfig(tmp), TZ="UTC", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    c = Chrome(chromium, WIDTH, HEIGHT, env=env,
               args=["--hide-scrollbars", "--force-device-scale-factor=1", "--force-color-profile=srgb",
                     "--font-render-hinting=none", "--disable-lcd-text", "--lang=en-US"])
    bad, last = [], None
    try:
        c.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT,
               deviceScaleFactor=1, mobile=False)
        for spec in sys.argv[4:]:
            name, rest = spec.split("=", 1)
            url, sel = rest.rsplit("@", 1)
            png = capture(c, "file://" + url, sel, url != last)
            last = url
            got = read_png(png)
            if keep:
                write_png(os.path.join(outdir, name + ".png"), *got)
            ref_path = os.path.join(refdir, name + ".png")
            if update:
                write_png(ref_path, *got)
                print("  wrote %s (%dx%d, %d bytes)" % (ref_path, got[0], got[1], os.path.getsize(ref_path)))
                continue
            if not os.path.exists(ref_path):
                bad.append("%s: no reference %s (make html-ref writes it)" % (name, ref_path))
                continue
            ref = read_png(open(ref_path, "rb").read())
            if got[:2] != ref[:2]:
                bad.append("%s: %dx%d, the reference %dx%d" % (name, got[0], got[1], ref[0], ref[1]))
                continue
            n = compare(got, ref)
            share = n / float(got[0] * got[1])
            print("  %s: %dx%d, %d pixels differ (%.3f%%, at most %.3f%%)"
                  % (name, got[0], got[1], n, 100 * share, 100 * SHARE))
            if n:
                if not keep:
                    write_png(os.path.join(outdir, name + ".png"), *got)
                diff = []
                compare(got, ref, diff)
                write_png(os.path.join(outdir, name + ".diff.png"), got[0], got[1], diff)
            if share > SHARE:
                bad.append("%s: %.3f%% of the pixels differ from %s (see %s)"
                           % (name, 100 * share, ref_path, os.path.join(outdir, name + ".diff.png")))
        for m in c.console():
            bad.append(m)
    finally:
        c.close()
        shutil.rmtree(tmp, ignore_errors=True)
    for b in bad:
        print("  " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
