#!/bin/sh
# perfmon-analyze --compare DIR_A DIR_B: the text table, the JSON parsed
# back, the PDF section, exit codes (0 not worse, 1 worse, 2 bad input, 3
# output) and messages, on the synthetic pair in fixtures/compare (base,
# rerun: the same job an hour later with other CPU noise, slow: 30 %
# longer) and on fixtures/perfmon and fixtures/ska.
set -u
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
F="$PM_ROOT/fixtures"
C="$F/compare"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
run() { # sets rc; output in $T/out and $T/err
    $A "$@" >"$T/out" 2>"$T/err"
    rc=$?
}
if command -v python3 >/dev/null 2>&1; then py=1; else
    py=0; echo "SKIP  python3 not installed: JSON contents not checked"; fi

run --help
check "--help names --compare" has "$T/out" "--compare"
check "--help names --threshold" has "$T/out" "--threshold PCT"

# The same job twice: nothing differs, exit 0.
run --compare "$C/base" "$C/base"
check "same job twice exits 0" [ "$rc" -eq 0 ]
check "same job twice: not worse" has "$T/out" "^Verdict: B is not worse than A"
check "same job twice: every row the same" grep -q "^  0 worse, 0 better, 0 changed (no better direction), 0 within the noise, [0-9]* the same, 0 in one job only" "$T/out"
check "both jobs named" has "$T/out" "^  A: $C/base (job synthetic), 2 hosts, 119.0 s"

# A rerun with other noise is not worse.
run --compare "$C/base" "$C/rerun"
check "rerun exits 0" [ "$rc" -eq 0 ]
check "rerun: cpu_usage the same" grep -q "^  cpu_usage  *% .* none   same$" "$T/out"
check "rerun: compute phase the same" grep -A2 "^Phase compute" "$T/out" | grep -q "^  duration .* lower  same$"

# 30 % longer: worse, exit 1, and the rows say why.
run --compare "$C/base" "$C/slow"
check "slow job exits 1" [ "$rc" -eq 1 ]
check "wall time +30.3 % worse" grep -q "^  wall_time_s  *s  *119  *155  *+30.3% lower  worse (suspect: one run of each)$" "$T/out"
# CPU hours inherit the noise of cpu_usage (a 7.8 % standard error of the
# mean here): +30.3 % is 2.6 standard errors, within the noise.
check "CPU hours within the noise of cpu_usage" grep -q "^  node_cpu_hours .* +30.3% lower  noise$" "$T/out"
check "energy worse, but informational" grep -q "^  energy_j .* +30.3% lower  worse (info)$" "$T/out"
check "disk read changed (no direction)" grep -q "^  total_disk_io_read_mb .* none   changed$" "$T/out"
check "compute phase 90 s -> 126 s worse" grep -A2 "^Phase compute" "$T/out" | grep -q "^  duration  *s  *90  *126  *+40.0%  *>999 .* lower  worse$"
check "verdict line names the gated worse rows" grep -q "^Verdict: B is worse than A: wall_time_s +30.3% (4 worse rows informational, not gated)$" "$T/out"
check "the informational worse rows are counted" has "$T/out" "(4 worse rows informational, not gated)"
check "nothing on stderr" [ ! -s "$T/err" ]

# Swapped: B is the faster one, exit 0 with "better" rows.
run --compare "$C/slow" "$C/base"
check "faster job exits 0" [ "$rc" -eq 0 ]
check "wall time better" grep -q "^  wall_time_s .* -23.2% lower  better$" "$T/out"

# Worse both ways is impossible: each row's verdict mirrors when A and B
# swap, and the pair is worse only when no gated row is better.
not_both() { [ "$1" -ne 1 ] || [ "$2" -ne 1 ]; }
for g in "" "--gate=energy_j,phase:compute,node_cpu_hours,cpu_usage"; do
    run --compare --json $g "$C/base" "$C/slow"
    cp "$T/out" "$T/ab.json"
    rab=$rc
    run --compare --json $g "$C/slow" "$C/base"
    check "A vs B and B vs A ${g:-(defaults)}: exits $rab and $rc, not 1 both" not_both "$rab" "$rc"
    check "A vs B ${g:-(defaults)} is worse" [ "$rab" -eq 1 ]
    if [ "$py" = 1 ]; then
        check "every row mirrors ${g:-(defaults)}" python3 - "$T/ab.json" "$T/out" <<'EOF'
import json, sys
ab, ba = (json.load(open(f)) for f in sys.argv[1:3])
mirror = {"worse": "better", "better": "worse"}
rows = lambda d: d["figures"] + d["metrics"] + [p["duration"] for p in d["phases"]] + [m for p in d["phases"] for m in p["metrics"]]
for x, y in zip(rows(ab), rows(ba)):
    assert x["key"] == y["key"] and mirror.get(x["verdict"], x["verdict"]) == y["verdict"], (x, y)
assert ab["verdict"] == "worse" and ba["verdict"] == "ok" and ba["overall"] == "better", (ab["verdict"], ba["verdict"])
EOF
    fi
done
run --compare --gate energy_j "$C/base" "$C/slow"
check "--gate energy_j names it in the verdict" grep -q "^Verdict: B is worse than A: wall_time_s +30.3%, energy_j +30.3% (3 worse rows informational, not gated)$" "$T/out"
run --compare --no-gate wall_time_s "$C/base" "$C/slow"
check "--no-gate wall_time_s: nothing gated is worse, exit 0" [ "$rc" -eq 0 ]
check "--no-gate: the verdict says so" has "$T/out" "^Verdict: B is not worse than A"
run --compare --gate sampler_cpu_pct "$C/base" "$C/slow"
check "--gate of a sampler figure exits 2" [ "$rc" -eq 2 ]
check "and says it is never gated" has "$T/err" "never gated"
run --gate wall_time_s "$C/base"
check "--gate without --compare exits 2" [ "$rc" -eq 2 ]

# --threshold overrides compare.json's thresholds.
run --compare --threshold 50 "$C/base" "$C/slow"
check "--threshold 50 exits 0" [ "$rc" -eq 0 ]
check "--threshold 50 is said" has "$T/out" "exceeds 50 % of the smaller of A and B"
run --compare --threshold=30 "$C/base" "$C/slow"
check "--threshold=30: +30.3 % still worse" [ "$rc" -eq 1 ]

# JSON, parsed back.
run --compare --json "$C/base" "$C/slow"
check "--json exits 1 for the slow job" [ "$rc" -eq 1 ]
if [ "$py" = 1 ]; then
    python3 - "$T/out" <<'EOF' >"$T/py" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["perfmon_compare"] == {"schema": 1, "threshold_pct": 10, "z": 3}, d["perfmon_compare"]
assert d["verdict"] == "worse"
assert d["a"]["hosts"] == 2 and d["a"]["job"] == "synthetic" and d["a"]["path"].endswith("compare/base")
rows = [d["end"]] + d["figures"] + d["metrics"] + [p["duration"] for p in d["phases"]] + [m for p in d["phases"] for m in p["metrics"]]
assert sum(d["counts"].values()) == len(rows), (d["counts"], len(rows))
assert d["counts"]["worse"] == sum(r["verdict"] == "worse" for r in rows)
w = {r["key"]: r for r in d["figures"]}["wall_time_s"]
assert w["a"]["mean"] == 119 and w["b"]["mean"] == 155, w
assert abs(w["diff_pct"] - 3600 / 119) < 1e-9 and w["diff"] == 36
assert w["better"] == "lower" and w["verdict"] == "worse" and w["se"] is None and w["significant"]
cpu = {r["key"]: r for r in d["metrics"]}["cpu_usage"]
assert cpu["a"]["se"] > 0 and cpu["a"]["n"] > 100 and cpu["verdict"] == "same", cpu
assert set(cpu) >= {"key", "name", "unit", "better", "threshold_pct", "min_abs", "a", "b", "diff", "diff_pct", "se", "z", "significant", "verdict"}
ph = {p["name"]: p for p in d["phases"]}
assert set(ph) == {"setup", "compute"}
assert ph["compute"]["duration"]["a"]["mean"] == 90 and ph["compute"]["duration"]["verdict"] == "worse"
assert ph["compute"]["duration"]["a"]["n"] == 2
assert any(m["key"] == "cpu_usage" for m in ph["compute"]["metrics"])
print("json ok")
EOF
    check "JSON parses back with the expected rows" has "$T/py" "json ok"
    [ -s "$T/py" ] && ! grep -q "json ok" "$T/py" && cat "$T/py"
fi

# The fixtures of the other tests: perfmon and SKA, each against itself.
run --compare "$F/perfmon" "$F/perfmon"
check "perfmon fixture against itself exits 0" [ "$rc" -eq 0 ]
check "input warnings say which job" has "$T/err" "^perfmon-analyze: A: warning: .*torn.pmp"
run --compare -q "$F/ska/cpu_metrics.json" "$F/ska/cpu_metrics.json"
check "SKA fixture against itself exits 0" [ "$rc" -eq 0 ]
check "-q: no warnings" [ ! -s "$T/err" ]
# Different jobs with different metrics: rows of one job only are not judged.
run --compare -q "$F/perfmon" "$F/ska/cpu_metrics.json"
check "metrics of one job only are missing" grep -q "^  mem_used .* lower  missing$" "$T/out"

# The PDF: job B's report with the comparison section.
run --compare "$C/base" "$C/slow" --pdf "$T/c.pdf"
check "--pdf exits 1 for the slow job" [ "$rc" -eq 1 ]
check "--pdf writes a PDF" [ -s "$T/c.pdf" ]
check "--pdf alone prints no table" [ ! -s "$T/out" ]
if command -v pdftotext >/dev/null 2>&1; then
    pdftotext -layout "$T/c.pdf" "$T/c.txt" 2>/dev/null
    check "comparison section in the PDF" has "$T/c.txt" "Comparison with another job"
    check "PDF verdict" has "$T/c.txt" "Verdict: B is worse than A: wall_time_s +30.3%"
    # The PDF states the verdict the exit status gives, in the text's words:
    # with wall_time_s not gated, exit 0, and "not worse" in both.
    run --compare "$C/base" "$C/slow" --no-gate wall_time_s --stats --pdf "$T/ng.pdf"
    check "--no-gate wall_time_s: exit 0" [ "$rc" -eq 0 ]
    pdftotext "$T/ng.pdf" - 2>/dev/null | tr '\n' ' ' | tr -s ' ' >"$T/ng.txt"
    check "--no-gate wall_time_s: the PDF's verdict is the text's" \
        has "$T/ng.txt" "$(sed -n 's/^Verdict: //p' "$T/out")"
    check "--no-gate wall_time_s: not worse in the PDF" has "$T/ng.txt" "Verdict: B is not worse than A (5 worse rows informational"
    check "--no-gate wall_time_s: informational rows marked in the PDF" has "$T/ng.txt" "worse (info)"
    check "the threshold rule is the text's, in the PDF" has "$T/ng.txt" "of the smaller of A and B"
    check "min_abs shown where it decides" grep -q "^  total_net_io_lo_sent_mb .* +30.3% none   same (|B-A| <= 1)$" "$T/out"
    check "PDF overlays" has "$T/c.txt" "Comparison: all-node series, A and B on elapsed time"
    check "PDF names the reference job" has "$T/c.txt" "(job synthetic) is the reference; B:"
else
    echo "SKIP  poppler-utils not installed: PDF text not checked"
fi

# Bad input: exit 2 with a message.
run --compare "$C/base"
check "one input exits 2" [ "$rc" -eq 2 ]
check "one input is explained" has "$T/err" "takes two inputs"
run --compare "$C/base" "$C/slow" "$C/rerun"
check "three inputs exit 2" [ "$rc" -eq 2 ]
run --compare "$C/base" "$T/missing"
check "a missing job exits 2" [ "$rc" -eq 2 ]
check "the missing job is named" has "$T/err" "^perfmon-analyze: B: .*$T/missing"
run --compare --threshold ten "$C/base" "$C/slow"
check "a bad threshold exits 2" [ "$rc" -eq 2 ]
check "the bad threshold is named" has "$T/err" '"ten" is not a percentage'
run --compare --threshold -5 "$C/base" "$C/slow"
check "a negative threshold exits 2" [ "$rc" -eq 2 ]
run --threshold 5 "$C/base"
check "--threshold without --compare exits 2" [ "$rc" -eq 2 ]
run --compare --csv "$T/x.csv" "$C/base" "$C/slow"
check "--compare with --csv exits 2" [ "$rc" -eq 2 ]
mkdir "$T/tpl"
cp "$PM_ROOT/templates/metrics.json" "$PM_ROOT/templates/rules.json" "$T/tpl/"
printf '{"metrics": [{"id": "cpu_usage", "better": "sideways"}]}' >"$T/tpl/compare.json"
run --compare --templates "$T/tpl" "$C/base" "$C/slow"
check "a bad compare.json exits 2" [ "$rc" -eq 2 ]
check "the bad entry is named" has "$T/err" "$T/tpl/compare.json: metrics\[0\].better: expected"
# A direction is data: make cpu_usage "higher is better" and cut its threshold.
printf '{"threshold_pct": 10, "metrics": [{"id": "cpu_usage", "better": "lower", "threshold_pct": 0}]}' >"$T/tpl/compare.json"
run --compare --templates "$T/tpl" "$C/base" "$C/rerun"
check "a custom compare.json applies (noise only: exit 0)" [ "$rc" -eq 0 ]
check "cpu_usage judged as noise at threshold 0" grep -q "^  cpu_usage .* lower  noise$" "$T/out"

# A trade-off: slower, but (say the table) more data read is better and
# gated.  Mixed, exit 4, the same both ways; never "worse" both ways.
printf '{"figures": [{"key": "wall_time_s", "better": "lower", "gate": true}, {"key": "total_disk_io_read_mb", "better": "higher", "gate": true}]}' >"$T/tpl/compare.json"
run --compare --templates "$T/tpl" "$C/base" "$C/slow"
check "a gated trade-off is mixed: exit 4" [ "$rc" -eq 4 ]
check "the mixed verdict names both sides" grep -q "^Verdict: mixed: B is worse than A on wall_time_s +30.3%; better on total_disk_io_read_mb +30.3%" "$T/out"
run --compare --templates "$T/tpl" "$C/slow" "$C/base"
check "swapped, still mixed: exit 4" [ "$rc" -eq 4 ]
run --compare --templates "$T/tpl" --no-gate total_disk_io_read_mb "$C/base" "$C/slow"
check "--no-gate of the better side: worse, exit 1" [ "$rc" -eq 1 ]

# Output failure: exit 3, said once.
if [ -w /dev/full ]; then
    $A --compare "$C/base" "$C/slow" >/dev/full 2>"$T/err"
    rc=$?
    check "a full stdout exits 3" [ "$rc" -eq 3 ]
    check "the write failure is told once" [ "$(grep -c 'write failed' "$T/err")" -eq 1 ]
else
    echo "SKIP  no /dev/full: output failure not checked"
fi

[ "$fails" -eq 0 ]
