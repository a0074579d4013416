#!/usr/bin/env python3
"""SKA SDP perfmon's post-processing, written again with pandas and
matplotlib, for timing beside perfmon-analyze (bench/ska_side.sh).

usage: ska_pipeline.py compute DATA_DIR
       ska_pipeline.py all DATA_DIR OUT_DIR

compute: what SKA perfmon computes before it draws (seed 003,
CreateDataFrame and the arithmetic of GenPlots): read DATA_DIR/
cpu_metrics.json, build one DataFrame row per (host, time stamp) from
lists of lists, then for each plotted metric, host by host in groupby
order: unit conversion, diff / time diff for counters, negative values
replaced by the preceding valid one (mask, ffill, fillna(0),
convert_dtypes), mean and max; RAPL sockets 0-7 summed per host; the
hosts' series side by side by position, summed (Total) or averaged
(Average), repaired again, and their mean and max.  Prints one line per
metric with the per-node and all-node figures.

all: the same, plus what SKA draws and writes: the time stamps as date
strings, per metric one figure with every host's line ('o-', one label
per host) and one of the all-node series, each with its axis labels, log
scale for bytes and packets, title with the figures, legend, grid and
tight layout, saved as PNG at 200 dpi (18 cm wide); then the job report,
the all-node pages then the per-node pages, 3 or 4 plots a page, with a
boxed header line and a page number.

SKA writes the report with FPDF (python3-fpdf is not in Debian 12).  The
stand-in is pdf_write() below, which embeds each PNG as fpdf2 does: it
decodes it with Pillow, splits an alpha channel off into a soft mask and
deflates both again.  Its text is one line of a standard font and a page
number: no font embedding.

Nothing here is SKA's code: the steps follow its documented behaviour
(tests/support/ska_ref.py is the same semantics in plain Python).
The metric names and units are those of SKA's report pages.
"""
import datetime
import json
import os
import sys
import zlib

import pandas

MIB = 1048576.0
CM = 1 / 2.54
DPI = 200
PLOT_CM = 7  # each plot's height; 18 cm wide

# SKA keys in a host object -> DataFrame column (str) or {sub key: column}.
HEADERS = [
    ("host_name", "Host"),
    ("time_stamps", "Timestamps"),
    ("cpu_percent_sys", "CPU load [%]"),
    ("cpu_percent", "Process CPU [%]"),
    ("cpu_time", "CPU time [s]"),
    ("memory_percent", "Memory [%]"),
    ("num_threads", "Threads"),
    ("num_fds", "File descriptors"),
    ("memory_info", {"rss": "RSS [bytes]", "vms": "VMS [bytes]", "shared": "Shared [bytes]"}),
    ("memory_full_info", {"uss": "USS [bytes]", "swap": "Swap [bytes]"}),
    (
        "io_counters",
        {
            "read_bytes": "Read [bytes]",
            "write_bytes": "Write [bytes]",
            "read_count": "Read count",
            "write_count": "Write count",
        },
    ),
    (
        "net_io_counters",
        {
            "bytes_sent": "Sent [bytes]",
            "bytes_recv": "Received [bytes]",
            "packets_sent": "Packets sent",
            "packets_recv": "Packets received",
        },
    ),
]
IB_HEADERS = (
    "ib_io_counters",
    {
        "port_xmit_data": "IB xmit data [bytes]",
        "port_rcv_data": "IB recv data [bytes]",
        "port_xmit_packets": "IB xmit packets",
        "port_rcv_packets": "IB recv packets",
    },
)
DOMAINS = ("package", "dram", "core", "uncore")


def label(name, units, conv=1.0, rate=False, comb="Total", log=False, cat=""):
    return dict(name=name, units=units, unit_conversion=conv, convert_to_rate=rate,
                comb=comb, log_scale=log, cat=cat, size=PLOT_CM)


# DataFrame column -> how SKA plots it (its report pages' names).
BASE_LABELS = {
    "CPU load [%]": label("CPU Load", "%", comb="Average"),
    "RSS [bytes]": label("Memory", "MiB", MIB, comb="Average"),
    "Sent [bytes]": label("Output Traffic", "MiB/s", MIB, True, log=True),
    "Received [bytes]": label("Input Traffic", "MiB/s", MIB, True, log=True),
    "Packets sent": label("Packets Output", "packets/s", 1.0, True, log=True),
    "Packets received": label("Packets Input", "packets/s", 1.0, True, log=True),
}
IB_LABELS = {
    "IB xmit data [bytes]": label("Interconnect Output Traffic", "MiB/s", MIB, True, log=True),
    "IB recv data [bytes]": label("Interconnect Input Traffic", "MiB/s", MIB, True, log=True),
    "IB xmit packets": label("Interconnect Packets Output", "packets/s", 1.0, True, log=True),
    "IB recv packets": label("Interconnect Packets Input", "packets/s", 1.0, True, log=True),
}
MEMBW_LABEL = {"Memory bandwidth [MiB/s]": label("Memory Bandwidth (Read)", "MiB/s", comb="Average")}
RAPL_LABELS = {
    d: {"RAPL %s" % d: label("RAPL %s Power" % ("DRAM" if d == "dram" else d.title()), "W", 1e6, True, cat="Energy")}
    for d in DOMAINS
}

PAGES = [
    ["Average_CPU_Load", "Average_Memory", "Average_Memory_Bandwidth_(Read)"],
    ["Total_Output_Traffic", "Total_Input_Traffic", "Total_Packets_Output", "Total_Packets_Input"],
    [
        "Total_Interconnect_Output_Traffic",
        "Total_Interconnect_Input_Traffic",
        "Total_Interconnect_Packets_Output",
        "Total_Interconnect_Packets_Input",
    ],
    ["Total_RAPL_Package_Power", "Total_RAPL_DRAM_Power", "Total_RAPL_Core_Power", "Total_RAPL_Uncore_Power"],
]


def find_key(obj, key):
    """Whether key is anywhere in the document (SKA searches it whole)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == key and v:
                return True
            if isinstance(v, dict) and find_key(v, key):
                return True
    return False


def header_table(content):
    headers = list(HEADERS)
    if find_key(content, "memory_bw"):
        headers.append(("memory_bw", "Memory bandwidth [MiB/s]"))
    if find_key(content, "port_xmit_data"):
        headers.append(IB_HEADERS)
    rapl = {}
    for d in DOMAINS:
        for s in range(8):
            if find_key(content, "%s-%d" % (d, s)):
                rapl["%s-%d" % (d, s)] = "RAPL %s %d [uJ]" % (d, s)
    if rapl:
        headers.append(("rapl_powercap", rapl))
    return headers


def dataframe(content):
    """One row per (host, time stamp), built as lists, as SKA builds it."""
    headers = header_table(content)
    total = sum(len(content[h]["time_stamps"]) for h in content["host_names"])
    rows = [[] for _ in range(total)]
    names = []
    first = 0
    for host in content["host_names"]:
        obj = content[host]
        n = len(obj["time_stamps"])

        def put(column, values):
            if column not in names:
                names.append(column)
            for i in range(n):
                rows[first + i].append(host if column == "Host" else values[i])

        def fit(values):
            if len(values) < n:
                return list(values) + [float("nan")] * (n - len(values))
            return values[:n]

        for key, column in headers:
            if column == "Host":
                put(column, None)
                continue
            try:
                v = obj[key]
                if isinstance(column, str):
                    put(column, fit(v))
                else:
                    for sub, sub_column in column.items():
                        put(sub_column, fit(v[sub]))
            except KeyError:
                pass
        first += n
    return pandas.DataFrame(rows, columns=names)


def labels_for(df):
    labels = dict(BASE_LABELS)
    if "IB recv data [bytes]" in df.columns:
        labels.update(IB_LABELS)
    if "Memory bandwidth [MiB/s]" in df.columns:
        labels.update(MEMBW_LABEL)
    for d in DOMAINS:
        if "RAPL %s 0 [uJ]" % d in df.columns:
            labels.update(RAPL_LABELS[d])
    return {k: dict(v) for k, v in labels.items()}


def repair(s):
    """Negative values become the preceding valid value, 0 at the start."""
    return s.mask(s.lt(0)).ffill().fillna(0).convert_dtypes()


class Pipeline:
    def __init__(self, draw, out_dir):
        self.draw = draw
        self.out_dir = out_dir
        if draw:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot

            self.plt = matplotlib.pyplot
        self.figures = {}

    def finish_plot(self, suffix, att, mm, ax):
        if not self.draw:
            return
        ax.set_xlabel("Time")
        ax.set_ylabel("%s [%s]" % (att["name"], att["units"]))
        if att["log_scale"]:
            ax.set_yscale("log", base=10)
        ax.set_title(
            "Average %s/Node: %.3f %s, Max %s/Node: %.3f %s"
            % (att["name"], mm[0], att["units"], att["name"], mm[1], att["units"]),
            weight="bold",
        )
        self.plt.legend(loc="upper right")
        self.plt.grid(visible=True, which="both", axis="both")
        self.plt.tight_layout()
        self.plt.savefig(os.path.join(self.out_dir, att["name"].replace(" ", "_") + suffix + ".png"), dpi=DPI)
        self.plt.close()

    def host_series(self, host, column, att, ax, data):
        dt = data["Timestamps"].diff()
        out = "%s %s" % (att["name"], att["units"])

        def one(src, dst):
            data[src] = data[src].div(att["unit_conversion"])
            if att["convert_to_rate"]:
                data[dst] = data[src].diff() / dt
            else:
                dst = src
            data[dst] = repair(data[dst])
            if self.draw:
                data.plot(ax=ax, x="Datetime", y=dst, style=["o-"], label=host)
            return dst, [data[dst].mean(), data[dst].max()]

        if att["cat"] == "Energy":
            parts, total = [], att["name"]
            for s in range(8):
                src = "%s %d [uJ]" % (column, s)
                if src in data.columns:
                    out, mm = one(src, out)
                    if total in data.columns:
                        data[total] += data[out]
                    else:
                        data[total] = data[out]
                    parts.append(mm)
            data[out] = data[total]
            mm = [sum(p[0] for p in parts) / len(parts), max(p[1] for p in parts)]
        else:
            out, mm = one(column, out)
        return out, mm, data

    def combined(self, column, att, times, series):
        t = pandas.concat(times, axis=1, ignore_index=True)
        v = pandas.concat(series, axis=1, ignore_index=True)
        agg = v.sum(axis=1) if att["comb"] == "Total" else v.mean(axis=1)
        df = pandas.concat([t.mean(axis=1), agg], axis=1)
        df.columns = ["Timestamps", column]
        if self.draw:
            df = with_dates(df)
        df[column] = repair(df[column])
        att["name"] = "%s %s" % (att["comb"], att["name"])
        mm = [df[column].mean(), df[column].max()]
        ax = None
        if self.draw:
            _, ax = self.plt.subplots(figsize=(18 * CM, att["size"] * CM))
            df.plot(ax=ax, x="Datetime", y=column, style=["o-"])
        self.finish_plot("_all_nodes", att, mm, ax)
        return mm

    def run(self, df):
        if self.draw:
            df = with_dates(df)
        for column, att in labels_for(df).items():
            ax = None
            if self.draw:
                _, ax = self.plt.subplots(figsize=(18 * CM, att["size"] * CM))
            times, series, per_host = [], [], []
            for host, data in df.groupby("Host"):
                out, mm, data = self.host_series(host, column, att, ax, data)
                series.append(data[out].reset_index(drop=True))
                times.append(data["Timestamps"].reset_index(drop=True))
                per_host.append(mm)
            mm = [sum(m[0] for m in per_host) / len(per_host), max(m[1] for m in per_host)]
            name = att["name"]
            self.finish_plot("_per_node", att, mm, ax)
            agg = self.combined(out, att, times, series)
            self.figures[name] = (mm, agg)


def with_dates(df):
    df["Datetime"] = df["Timestamps"].apply(
        lambda x: datetime.datetime.fromtimestamp(x).strftime("%m/%d/%Y\n %H:%M:%S")
    )
    return df


def png_parts(path):
    """(width, height, colours, deflated colour, deflated alpha or None).

    As fpdf2 does: Pillow decodes the PNG; an alpha channel becomes a
    separate grey image (the soft mask); each is deflated again."""
    from PIL import Image

    with Image.open(path) as im:
        im.load()
        alpha = None
        if im.mode in ("RGBA", "LA"):
            alpha = zlib.compress(im.getchannel("A").tobytes())
            im = im.convert("RGB" if im.mode == "RGBA" else "L")
        elif im.mode not in ("RGB", "L"):
            im = im.convert("RGB")
        colours = 3 if im.mode == "RGB" else 1
        return im.width, im.height, colours, zlib.compress(im.tobytes()), alpha


def pdf_write(path, pages, header):
    """A4 pages of PNG images placed as SKA's report places them."""
    objs = []

    def add(body):
        objs.append(body)
        return len(objs)

    page_ids, images = [], {}
    pages_id = add(None)
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Bold >>")
    fonti = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Italic >>")
    mm = 72 / 25.4
    for no, files in enumerate(pages, 1):
        ops = [
            b"BT /F1 10 Tf 18 %.2f Td (%s) Tj ET" % ((297 - 15) * mm, header.encode("latin-1")),
            b"10 %.2f 575.28 14.17 re S" % ((297 - 10 - 5) * mm),
            b"BT /F2 8 Tf 0.5 g 290 %.2f Td (Page %d) Tj ET" % (10 * mm, no),
        ]
        xobjs = []
        for k, f in enumerate(files):
            w, h, colours, colour, alpha = png_parts(f)
            smask = b""
            if alpha is not None:
                sid = add(
                    b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
                    b"/BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n" % (w, h, len(alpha))
                    + alpha
                    + b"\nendstream"
                )
                smask = b" /SMask %d 0 R" % sid
            iid = add(
                b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /%s "
                b"/BitsPerComponent 8 /Filter /FlateDecode%s /Length %d >>\nstream\n"
                % (w, h, b"DeviceRGB" if colours == 3 else b"DeviceGray", smask, len(colour))
                + colour
                + b"\nendstream"
            )
            images[iid] = True
            y = 18 if k == 0 else 18 + k * ((297 - 18) / len(files)) - 7
            pw, ph = 180, 180 * h / w
            ops.append(b"q %.2f 0 0 %.2f %.2f %.2f cm /I%d Do Q" % (pw * mm, ph * mm, 15 * mm, (297 - y - ph) * mm, iid))
            xobjs.append(b"/I%d %d 0 R" % (iid, iid))
        content = b"\n".join(ops)
        cid = add(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        page_ids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595.28 841.89] /Contents %d 0 R "
                b"/Resources << /Font << /F1 %d 0 R /F2 %d 0 R >> /XObject << %s >> >> >>"
                % (pages_id, cid, font, fonti, b" ".join(xobjs))
            )
        )
    objs[pages_id - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % p for p in page_ids),
        len(page_ids),
    )
    catalog = add(b"<< /Type /Catalog /Pages %d 0 R >>" % pages_id)
    with open(path, "wb") as f:
        f.write(b"%PDF-1.4\n")
        offsets = []
        for i, body in enumerate(objs, 1):
            offsets.append(f.tell())
            f.write(b"%d 0 obj\n" % i + body + b"\nendobj\n")
        xref = f.tell()
        f.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1))
        for o in offsets:
            f.write(b"%010d 00000 n \n" % o)
        f.write(b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, catalog, xref))


def report(content, out_dir):
    pages = [[p + "_all_nodes.png" for p in page] for page in PAGES]
    pages += [[p.split("_", 1)[1] + "_per_node.png" for p in page] for page in PAGES]
    pages = [[os.path.join(out_dir, f) for f in page if os.path.isfile(os.path.join(out_dir, f))] for page in pages]
    header = "Job ID: %-30s User: %-30s # Nodes: %-30d Date: %-30s" % (
        "bench",
        os.environ.get("USER", "bench"),
        len(content["host_names"]),
        datetime.datetime.now().strftime("%m/%d/%Y %H:%M:%S"),
    )
    pdf_write(os.path.join(out_dir, "job-report.pdf"), pages, header)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("compute", "all") or (sys.argv[1] == "all") != (len(sys.argv) == 4):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    draw = sys.argv[1] == "all"
    with open(os.path.join(sys.argv[2], "cpu_metrics.json")) as f:
        content = json.load(f)
    if not content.get("host_names"):
        sys.stderr.write("ska_pipeline.py: no host_names\n")
        return 1
    df = dataframe(content)
    if draw:
        os.makedirs(sys.argv[3], exist_ok=True)
    p = Pipeline(draw, sys.argv[3] if draw else None)
    p.run(df)
    if draw:
        report(content, sys.argv[3])
    for name, (mm, agg) in p.figures.items():
        print("%-30s per node %.3f / %.3f  all nodes %.3f / %.3f" % (name, mm[0], mm[1], agg[0], agg[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
