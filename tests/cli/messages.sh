#!/bin/sh
# Messages that name the cause and the remedy, and equal causes that give
# equal exit codes across the programs (docs/analysis.md "Bad input and
# exit status"): templates not found, a font named wrong, a gate list
# refused, an option --compare does not take, a malformed layout (exit 2
# like a malformed catalog or rules file, before any analysis), an
# unknown PERFMON_PROFILE_VERSION, -V everywhere, archive plot's format by
# the file's ending.
set -u
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
S="${PM_WRAP:-} $PM_BIN/perfmon-sample"
B="${PM_WRAP:-} $PM_BIN/perfmon-archive"
F="$PM_ROOT/fixtures"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
run() { # sets rc; output in $T/out and $T/err
    "$@" >"$T/out" 2>"$T/err"
    rc=$?
}
not() { ! "$@"; }

# No templates directory anywhere the program looks: exit 2, and how to
# give one.  (A copy of the program, outside the tree, in an empty
# directory; skipped where perfmon is installed system-wide.)
if [ -e /usr/local/share/perfmon/templates/metrics.json ]; then
    echo "SKIP  templates installed in /usr/local/share/perfmon: not-found case not checked"
else
    mkdir "$T/bin" "$T/empty"
    cp "$PM_BIN/perfmon-analyze" "$T/bin/"
    (cd "$T/empty" && env -u PERFMON_TEMPLATES ${PM_WRAP:-} "$T/bin/perfmon-analyze" \
        "$F/perfmon" --stats >"$T/out" 2>"$T/err")
    rc=$?
    check "no templates: exit 2" [ "$rc" -eq 2 ]
    check "no templates: --templates and PERFMON_TEMPLATES named" \
        grep -q "no templates directory found.*--templates DIR or set PERFMON_TEMPLATES" "$T/err"
fi

# A font path typed wrong: the option and the file, not a package to install.
run $A "$F/perfmon" --pdf "$T/r.pdf" --font "$T/nope.ttf" -q
check "--font typo: exit 2" [ "$rc" -eq 2 ]
check "--font typo: names the file and the option" \
    has "$T/err" "$T/nope.ttf: --font: cannot read the font file: No such file"
check "--font typo: no package advice" not has "$T/err" "fonts-dejavu-core"
check "--font typo: no PDF" [ ! -e "$T/r.pdf" ]

# One sampler figure given to --gate: why it is refused, not a syntax lesson.
run $A --compare "$F/compare/base" "$F/compare/slow" --gate sampler_cpu_pct
check "--gate sampler_cpu_pct: exit 2" [ "$rc" -eq 2 ]
check "--gate sampler_cpu_pct: names it as the sampler's own" \
    has "$T/err" "sampler_cpu_pct is one of the sampler's own figures, which are never gated"
check "--gate sampler_cpu_pct: no 'separated by commas'" not has "$T/err" "separated by commas"
run $A --compare "$F/compare/base" "$F/compare/slow" --gate "a,,b"
check "--gate a,,b: the empty name" has "$T/err" "an empty name"

# An output --compare does not make: that option is named.
run $A --compare "$F/compare/base" "$F/compare/slow" --csv "$T/c.csv"
check "--compare --csv: exit 2" [ "$rc" -eq 2 ]
check "--compare --csv: --csv named" has "$T/err" "^perfmon-analyze: --csv does not go with --compare"
run $A --compare "$F/compare/base" "$F/compare/slow" --stream
check "--compare --stream: --stream named" has "$T/err" "^perfmon-analyze: --stream does not go with --compare"

# A malformed layout is bad input like a malformed catalog: exit 2, both
# before the analysis.
printf '{"version": 1, "pages": [' >"$T/bad.json"
run $A "$F/perfmon" --pdf "$T/r.pdf" --layout "$T/bad.json" -q
check "malformed layout: exit 2" [ "$rc" -eq 2 ]
check "malformed layout: the file named" has "$T/err" "$T/bad.json"
check "malformed layout: no PDF" [ ! -e "$T/r.pdf" ]
run $A "$F/perfmon" --stats --catalog "$T/bad.json" -q
check "malformed catalog: exit 2 too" [ "$rc" -eq 2 ]

# The binary profile's version: 1, 2 or 3, anything else refused.
PERFMON_PROFILE_VERSION=4 $S -o "$T/pv" -i 0.1 -d 0.2 >"$T/out" 2>"$T/err"
rc=$?
check "PERFMON_PROFILE_VERSION=4: exit 2" [ "$rc" -eq 2 ]
check "PERFMON_PROFILE_VERSION=4: said" has "$T/err" "PERFMON_PROFILE_VERSION=4: give 1, 2 or 3"
check "PERFMON_PROFILE_VERSION=4: nothing written" [ ! -e "$T/pv" ]

# -V is --version in every program.
for p in "$A" "$S" "$B"; do
    run $p -V
    name=$(basename "${p##* }")
    check "$name -V: exit 0" [ "$rc" -eq 0 ]
    check "$name -V: the version" grep -q "^$name [0-9]" "$T/out"
done

# perfmon-archive plot: the format by the file's ending; an ending it
# cannot write is refused before the database is opened.
run $B plot --db "$T/none.sqlite" t e -o "$T/w.txt"
check "archive plot -o w.txt: exit 2" [ "$rc" -eq 2 ]
check "archive plot -o w.txt: the endings it writes" has "$T/err" "give a file name ending in .png, .pdf or .svg"
mkdir "$T/in" "$T/done"
printf '{"name":"t","startTime":"1700000000","entries":{"entry":[{"name":"e","iters":"10","wallTime":1.5}]}}\n' \
    >"$T/in/r.json"
$B add --db "$T/a.sqlite" --datadir "$T/in" --archivedir "$T/done" >/dev/null 2>&1
run $B plot --db "$T/a.sqlite" t e -o "$T/w.svg"
check "archive plot -o w.svg: exit 0" [ "$rc" -eq 0 ]
check "archive plot -o w.svg: SVG, not PNG bytes" grep -q "<svg" "$T/w.svg"

[ "$fails" -eq 0 ] || { echo "$fails checks failed"; exit 1; }
