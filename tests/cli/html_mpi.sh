#!/bin/sh
# --html under mpirun (docs/report.md, "The HTML report"; docs/analysis.md,
# "MPI"): with SOURCE_DATE_EPOCH the file that `mpirun -n 2` and `-n 3`
# write is byte for byte the one of one process, on a generated 20-node job
# (band charts, the per-node pyramid, colour maps, phases: everything the
# ranks gather), with --stream, on a 14-node job whose per-node lines are
# each node's own samples, on the names that are markup
# (fixtures/html/hostile) and with --compare; an output that cannot be
# written and a damaged chart library are reported once, every rank exits
# with the single process's status, and nothing is left behind.
# Skipped where perfmon-analyze is built without MPI or mpirun is missing,
# and under valgrind (PM_WRAP): valgrind cannot follow the ranks that
# mpirun's daemon starts (html.sh runs the same writer under valgrind).
set -u
. "$PM_ROOT/tests/support/cli.sh"
A="$PM_BIN/perfmon-analyze"
if [ -n "${PM_WRAP:-}" ]; then
    echo "SKIP  under PM_WRAP (valgrind): mpirun starts the ranks, valgrind cannot follow them"
    exit 0
fi
if ! "$A" --version | grep -q "^MPI: built in"; then
    echo "SKIP  perfmon-analyze is built without MPI (no mpicc, or MPI=0): $("$A" --version | tail -1)"
    exit 0
fi
for tool in mpirun python3; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "SKIP  $tool not installed"
        exit 0
    fi
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# One machine, as tests/cli/mpi.sh: shared memory, loopback, root in CI,
# more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_btl_base_warn_component_unused=0
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
export PERFMON_TEMPLATES="$PM_ROOT/templates"
export SOURCE_DATE_EPOCH=1700000000
mpi() { # N ARGS...: mpirun -n N perfmon-analyze ARGS; sets rc
    _n=$1
    shift
    timeout 120 mpirun -n "$_n" "$A" "$@" 2>"$T/mpi.err"
    rc=$?
}

python3 "$PM_ROOT/tests/support/html_job.py" "$T/job" 20
check "one process: --html written" "$A" -q "$T/job" --html "$T/one.html"
check "the job has band charts, a pyramid, colour maps and phases" python3 - "$T/one.html" <<'EOF'
import json, re, sys
d = json.loads(re.search(r'id="pm-data">(.*?)</script>', open(sys.argv[1], encoding="utf-8").read(), re.S).group(1))
sys.exit(0 if any(c.get("band") for c in d["charts"]) and any(c.get("pyr") for c in d["charts"])
         and d["heat"] and d["phases"] and len(d["nodes"]) == 20 else 1)
EOF
for n in 2 3; do
    mpi $n -q "$T/job" --html "$T/mpi$n.html"
    check "mpirun -n $n: exit 0, the same bytes as one process" sh -c "[ $rc -eq 0 ] && cmp '$T/one.html' '$T/mpi$n.html'"
done
mpi 2 -q --stream "$T/job" --html "$T/stream.html"
check "mpirun -n 2 --stream: the same bytes" sh -c "[ $rc -eq 0 ] && cmp '$T/one.html' '$T/stream.html'"
# 14 nodes of 5,000 samples: each node's per-node line its own samples,
# which --stream keeps in its rows' file on rank 0 (docs/report.md, "What
# is exact at which zoom").
python3 "$PM_ROOT/tests/support/html_job.py" "$T/n14" 14 5000
"$A" -q "$T/n14" --html "$T/n14.html"
mpi 2 -q --stream "$T/n14" --html "$T/n14s.html"
check "14 x 5,000, mpirun -n 2 --stream: the same bytes as one process" sh -c \
    "[ $rc -eq 0 ] && cmp '$T/n14.html' '$T/n14s.html'"

H="$PM_ROOT/fixtures/html/hostile"
"$A" -q "$H" --html "$T/h1.html"
mpi 2 -q "$H" --html "$T/h2.html"
check "mpirun -n 2, names that are markup: the same bytes" sh -c "[ $rc -eq 0 ] && cmp '$T/h1.html' '$T/h2.html'"

F="$PM_ROOT/fixtures/compare"
"$A" -q --compare "$F/base" "$F/slow" --html "$T/c1.html"
one=$?
mpi 2 -q --compare "$F/base" "$F/slow" --html "$T/c2.html"
check "mpirun -n 2 --compare: exit $one as one process, the same bytes" sh -c "[ $rc -eq $one ] && cmp '$T/c1.html' '$T/c2.html'"

# Errors: once, with the name; the status of one process; no file.
mpi 2 -q "$T/job" --html "$T/none/x.html"
check "mpirun -n 2, an output that cannot be created: exit 3, said once" sh -c \
    "[ $rc -eq 3 ] && [ \$(grep -c 'none/x.html.tmp: cannot create' '$T/mpi.err') -eq 1 ]"
cp -R "$PM_ROOT/templates" "$T/tpl"
for f in "$T"/tpl/html/vendor/uplot-*/uPlot.iife.min.js; do printf ' ' >>"$f"; done
mpi 2 -q --templates "$T/tpl" "$T/job" --html "$T/damaged.html"
check "mpirun -n 2, a damaged uPlot: exit 2, said once, no file" sh -c \
    "[ $rc -eq 2 ] && [ \$(grep -c 'uPlot.iife.min.js: does not match its SHA-256' '$T/mpi.err') -eq 1 ] && [ ! -e '$T/damaged.html' ]"
[ "$fails" -eq 0 ] || exit 1
