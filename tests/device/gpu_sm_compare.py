#!/usr/bin/env python3
"""gpu-sm-check.sh's comparison: perfmon-sample's SM activity per phase of
the load (wide, narrow, idle) and against the reference's levels.

usage: gpu_sm_compare.py OUT_DIR dcgm|smi|none START_EPOCH
OUT_DIR holds prof/*.jsonl, phases.log (the load's "start EPOCH" and
"phase KIND FROM TO" lines) and ref.txt (dcgmi dmon or nvidia-smi dmon).
Exit 0, 1 or 2 as gpu-sm-check.sh says."""
import glob, json, re, sys
out, ref, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
prof = glob.glob(out + "/prof/*.jsonl")
if not prof:
    print("gpu-sm-check: no profile written; see sample.log"); sys.exit(2)
rows = [json.loads(l) for l in open(prof[0]) if l.strip()]
meta = next((r for r in rows if "hostname" in r or "gpus" in r), {})
cols = next(r["columns"] for r in rows if "columns" in r)
names = [c["name"] if isinstance(c, dict) else c for c in cols]
samples = [(r["t"], dict(zip(names, r["v"]))) for r in rows if "v" in r]
if "gpu.0.sm_active" not in names:
    why = [g.get("sm_activity") for g in meta.get("gpus", [])] if isinstance(meta, dict) else []
    print(f"gpu-sm-check: no gpu.0.sm_active column: {why}"); sys.exit(2)
# The load's phases, from its own clock (the sampler's command starts about
# when the sampler does; the phases program prints seconds since its start).
phases = []
for l in open(out + "/phases.log"):
    m = re.match(r"phase (\d) ([\d.]+) ([\d.]+)", l)
    if m: phases.append((int(m.group(1)), float(m.group(2)), float(m.group(3))))
m = re.search(r"start ([\d.]+)", open(out + "/phases.log").read())
t0 = float(m.group(1)) if m else start
# A sample is the mean over the interval before it (0.5 s): it belongs to a
# phase when that whole interval lies inside the phase; an idle second ends
# where the next phase begins.
spans = []
for i, (k, a, b) in enumerate(phases):
    end = b if k != 2 else (phases[i + 1][1] if i + 1 < len(phases) else a + 2)
    spans.append((k, a, end))
# Reference: one value of SM activity (0-100) per line, with its time.
refv = []
for l in open(out + "/ref.txt"):
    f = l.split()
    if not f or f[0].startswith("#"): continue
    try:
        if ref == "dcgm" and f[0] == "GPU" and f[1] == "0":
            refv.append((None, float(f[2]) * 100))
        elif ref == "smi" and len(f) >= 4 and f[2] == "0":
            # -o T: date time gpu gpm:2 gpm:3 (no-data is "-")
            refv.append((f[1], float(f[3])))
    except ValueError:
        pass
def kind_at(t):
    for k, a, b in spans:
        if a + 0.55 <= t - t0 <= b + 0.02: return k
    return None
by = {0: [], 1: [], 2: []}
for t, v in samples:
    k = kind_at(t)
    if k is not None:
        by[k].append((v.get("gpu.0.util"), v.get("gpu.0.sm_active")))
lines = []
for k, label in ((0, "wide"), (1, "narrow"), (2, "idle")):
    xs = [x for x in by[k] if x[0] is not None and x[1] is not None]
    if xs:
        u = sum(x[0] for x in xs) / len(xs); s = sum(x[1] for x in xs) / len(xs)
        lines.append(f"{label:6s}: {len(xs)} samples, utilisation {u:.1f} %, SM activity {s:.1f} %")
print("\n".join(lines))
narrow = [x for x in by[1] if x[0] is not None and x[1] is not None]
starved = sum(1 for u, s in narrow if u >= 90 and s <= 10)
wide = [x for x in by[0] if x[1] is not None]
print(f"gpu-sm-check: narrow-slot samples with utilisation >= 90 and SM activity <= 10: {starved} of {len(narrow)}")
print(f"gpu-sm-check: wide samples with SM activity >= 80: {sum(1 for x in wide if x[1] >= 80)} of {len(wide)}")
# Reference against perfmon: the distribution per phase kind must agree
# (the reference's own clock is not the sampler's: compared as levels).
if refv:
    rs = sorted(v for _, v in refv)
    hi = [v for v in rs if v >= 50]; lo = [v for v in rs if v < 50]
    print(f"gpu-sm-check: reference ({ref}) {len(rs)} values: {len(hi)} >= 50 (mean {sum(hi)/max(len(hi),1):.1f}), "
          f"{len(lo)} < 50 (mean {sum(lo)/max(len(lo),1):.1f})")
    pm = sorted(x[1] for x in by[0] + by[1] + by[2] if x[1] is not None)
    phi = [v for v in pm if v >= 50]
    share_ref = len(hi) / len(rs); share_pm = len(phi) / max(len(pm), 1)
    print(f"gpu-sm-check: share of samples with SM activity >= 50: reference {share_ref:.2f}, perfmon {share_pm:.2f}")
    agree = abs(share_ref - share_pm) <= 0.15 and (not hi or not phi or abs(sum(hi)/len(hi) - sum(phi)/len(phi)) <= 10)
else:
    print("gpu-sm-check: the reference gave no values (see ref.txt); perfmon's levels alone are judged")
    agree = True
ok = narrow and starved >= 0.8 * len(narrow) and wide and sum(1 for x in wide if x[1] >= 80) >= 0.8 * len(wide) and agree
open(out + "/compare.txt", "w").write("\n".join(lines) + "\n")
sys.exit(0 if ok else 1)
