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

job() { python3 "$PM_ROOT/tests/support/html_job.py" "$@"; }

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
    "timeline=$T/six.html#@#timeline" \
    "zoom=$T/six.html#zoom=30,45@#c2" \
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
