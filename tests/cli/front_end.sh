#!/bin/sh
# One front end for the programs (include/perfmon/cli.h):
#  - every long option that a program's --help names is in its man page
#    (docs/man/), and every one the man page names is in some --help;
#  - every command line of each man page's EXAMPLES runs, as written, on
#    the bundled fixtures laid out under the names the examples use;
#  - each program refuses an unknown option and a missing value with the
#    same words and exit status 2, and answers --version.
set -u
. "$PM_ROOT/tests/support/cli.sh"
W=${PM_WRAP:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# The long options in a text (a man page's \- unescaped).
longopts() { sed 's/\\-/-/g' | grep -o -- '--[a-z][a-z0-9-]*' | sort -u; }

# prog: the --help texts to read (subcommands included)
helps() {
    case $1 in
    perfmon-sample) $W "$PM_BIN/perfmon-sample" --help; $W "$PM_BIN/perfmon-sample" mark --help ;;
    perfmon-analyze) $W "$PM_BIN/perfmon-analyze" --help ;;
    perfmon-archive)
        for c in "" add list history check plot; do $W "$PM_BIN/perfmon-archive" $c --help; done ;;
    esac
}
# Options a man page names that belong to another program (srun's).
foreign() {
    case $1 in
    perfmon-sample) printf '%s\n' --ntasks-per-node --overlap ;;
    esac
}
for p in perfmon-sample perfmon-analyze perfmon-archive; do
    man="$PM_ROOT/docs/man/$p.1"
    helps "$p" | longopts >"$T/$p.help"
    longopts <"$man" >"$T/$p.man.all"
    foreign "$p" | sort >"$T/$p.foreign"
    comm -23 "$T/$p.man.all" "$T/$p.foreign" >"$T/$p.man"
    comm -23 "$T/$p.help" "$T/$p.man" >"$T/$p.help-only"
    comm -13 "$T/$p.help" "$T/$p.man" >"$T/$p.man-only"
    check "$p: $(wc -l <"$T/$p.help") long options in --help" [ -s "$T/$p.help" ]
    check "$p: every --help option is in the man page ($(tr '\n' ' ' <"$T/$p.help-only"))" \
        [ ! -s "$T/$p.help-only" ]
    check "$p: every man page option is in --help ($(tr '\n' ' ' <"$T/$p.man-only"))" \
        [ ! -s "$T/$p.man-only" ]
done

# Each --help starts with "usage: PROGRAM" and ends with one or two example
# command lines under an "example:" or "examples:" heading.
for spec in "perfmon-sample" "perfmon-sample mark" "perfmon-analyze" "perfmon-archive" \
    "perfmon-archive add" "perfmon-archive list" "perfmon-archive history" \
    "perfmon-archive check" "perfmon-archive plot"; do
    # shellcheck disable=SC2086
    $W "$PM_BIN"/$spec --help >"$T/h" 2>&1
    prog=${spec%% *}
    tail -n 1 "$T/h" | grep -q "^  $prog "
    check "$spec --help ends with an example" [ $? -eq 0 ]
    tail -n 3 "$T/h" | grep -qiE '^examples?:$'
    check "$spec --help: an 'example(s):' heading above it" [ $? -eq 0 ]
    head -n 1 "$T/h" | grep -q "^usage: $spec"
    check "$spec --help: 'usage: $spec' first" [ $? -eq 0 ]
done

# Refused options: one wording, one exit status.
refuse() { # DESC WANT PROG ARGS...
    desc=$1 want=$2
    shift 2
    $W "$@" >"$T/out" 2>"$T/err" </dev/null
    rc=$?
    check "$desc: exit 2" [ "$rc" -eq 2 ]
    check "$desc: '$want'" grep -qx -- "$want" "$T/err"
}
refuse "analyze --bogus" "perfmon-analyze: unknown option --bogus (see --help)" \
    "$PM_BIN/perfmon-analyze" --bogus x
refuse "analyze --start" "perfmon-analyze: option --start needs a value (see --help)" \
    "$PM_BIN/perfmon-analyze" --start
refuse "sample --bogus" "perfmon-sample: unknown option --bogus (see --help)" \
    "$PM_BIN/perfmon-sample" --bogus
refuse "sample --output" "perfmon-sample: option --output needs a value (see --help)" \
    "$PM_BIN/perfmon-sample" --output
refuse "sample mark --bogus" "perfmon-sample mark: unknown option --bogus (see --help)" \
    "$PM_BIN/perfmon-sample" mark --bogus
refuse "sample mark --output" "perfmon-sample mark: option --output needs a value (see --help)" \
    "$PM_BIN/perfmon-sample" mark --output
refuse "archive add --bogus" "perfmon-archive add: unknown option --bogus (see --help)" \
    "$PM_BIN/perfmon-archive" add --bogus
refuse "archive add --db" "perfmon-archive add: option --db needs a value (see --help)" \
    "$PM_BIN/perfmon-archive" add --db
refuse "archive list -x" "perfmon-archive list: unknown option -x (see --help)" \
    "$PM_BIN/perfmon-archive" list -x
for spec in "perfmon-sample" "perfmon-sample mark" "perfmon-analyze" "perfmon-archive"; do
    # shellcheck disable=SC2086
    $W "$PM_BIN"/$spec --version >"$T/v" 2>&1
    rc=$?
    check "$spec --version: exit 0" [ "$rc" -eq 0 ]
    check "$spec --version: '$spec VERSION'" grep -qx "$spec [0-9][0-9.]*" "$T/v"
done

# The man pages' examples, on the fixtures under the names they use.
E="$T/ex"
mkdir -p "$E/metrics" "$E/incoming" "$E/done"
cp -R "$PM_ROOT/fixtures/compare/base" "$E/job-1234"
cp -R "$PM_ROOT/fixtures/compare/base" "$E/nightly-1233"
cp -R "$PM_ROOT/fixtures/compare/rerun" "$E/nightly-1234"
cp "$PM_ROOT/fixtures/ska/cpu_metrics.json" "$E/metrics/"
cp "$PM_ROOT/fixtures/archive/tf-results.json" "$E/incoming/"
cp "$PM_BUILD/examples/matmul-io" "$E/"
# A requeued job: two runs of one job id in one directory (a bare sampler).
for i in 1 2; do
    "$PM_BIN/perfmon-sample" -o "$E/requeued-job" -j 77 -i 0.05 -- sleep 0.3 >/dev/null 2>&1
done
# EXAMPLES: the lines between .nf and .fi, man escapes undone.
examples() {
    awk '/^\.SH EXAMPLES/ { p = 1; next } /^\.SH/ { p = 0 } p && /^\.nf/ { q = 1; next }
         p && /^\.fi/ { q = 0; next } p && q' "$1" | sed 's/\\-/-/g'
}
n=0
for p in perfmon-analyze perfmon-archive perfmon-sample; do
    examples "$PM_ROOT/docs/man/$p.1" >"$T/ex.$p"
    while IFS= read -r line; do
        case $line in
        *srun* | *'$OUT'*) echo "SKIP  $p example needs SLURM: $line"; continue ;;
        *mpirun*) echo "SKIP  $p example runs under mpirun (tests/cli/mpi.sh runs it): $line"; continue ;;
        *gnuplot*) command -v gnuplot >/dev/null 2>&1 ||
            { echo "SKIP  $p example needs gnuplot: $line"; continue; } ;;
        esac
        n=$((n + 1))
        (cd "$E" && PATH="$PM_BIN:$PATH" sh -c "$line") >"$T/exout" 2>&1
        rc=$?
        [ "$rc" -eq 0 ] || sed 's/^/      /' "$T/exout" | tail -n 5
        check "$p example runs: $line" [ "$rc" -eq 0 ]
    done <"$T/ex.$p"
done
check "examples found in the man pages ($n)" [ "$n" -ge 12 ]
check "the examples wrote their outputs" \
    sh -c "[ -s '$E/stats.json' ] && [ -s '$E/report.pdf' ] && [ -s '$E/minute.csv' ] &&
           [ -s '$E/matmul.png' ] && [ -d '$E/out' ] && [ -s '$E/done/tf-results.json' ]"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
