#!/bin/sh
# Every dependency points down (tests/layers.sh, docs/architecture.md): the
# tree as built passes; a profile file that includes and calls the analysis
# (a layer above it) is refused, with the file, the header and the symbol;
# so is a sampler file that includes a header of the input stage (a module
# of its own layer, which the sampler knows nothing of), an input file that
# calls the analysis above it, and an analysis file that calls the sampler
# (a branch of its own, which only the programs use).
set -u
. "$PM_ROOT/tests/support/cli.sh"
cd "$PM_ROOT" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check "the tree: no module includes or calls a module above it" \
    sh tests/layers.sh . "$PM_BUILD"

# A copy of the sources and the objects (linked), plus one wrong file.
cp -R src include "$tmp/"
for o in "$PM_BUILD"/src/*/*.o; do
    m=$(basename "$(dirname "$o")")
    mkdir -p "$tmp/build/src/$m"
    ln -s "$o" "$tmp/build/src/$m/"
done

# wrong MODULE/NAME WHAT: compile $tmp/src/MODULE/NAME.c (its text on
# stdin) into the copy, run tests/layers.sh over it (its output in
# $tmp/out), check that it is refused, and take the file out again.
wrong() {
    cat >"$tmp/src/$1.c"
    check "$2: the file compiles" \
        cc -std=gnu11 -D_GNU_SOURCE -I"$tmp/include" -c "$tmp/src/$1.c" -o "$tmp/build/src/$1.o"
    sh tests/layers.sh "$tmp" "$tmp/build" >"$tmp/out" 2>&1
    _rc=$?
    sed 's/^/      /' "$tmp/out"
    check "$2: refused (exit 1)" [ "$_rc" -eq 1 ]
    rm -f "$tmp/src/$1.c" "$tmp/build/src/$1.o"
}

wrong profile/zz_wrong "profile -> analysis" <<'C'
#include "perfmon/compare.h"
int pm_zz_wrong(const pm_analysis *a, pm_comparison **out, pm_error *err);
int pm_zz_wrong(const pm_analysis *a, pm_comparison **out, pm_error *err)
{
    return pm_compare_run(a, a, 0, 0, out, err);
}
C
check "names the call" has "$tmp/out" "src/profile/zz_wrong.c -> src/analysis/compare.c (calls pm_compare_run)"
check "names the include" has "$tmp/out" "src/profile/zz_wrong.c -> include/perfmon/compare.h"

# A sibling's header: the sampler includes the input stage's input.h.
wrong sampler/zz_sibling "a sibling's header" <<'C'
#include "perfmon/input.h"
size_t pm_zz_sibling(void);
size_t pm_zz_sibling(void)
{
    return sizeof(pm_inputs);
}
C
check "names the sibling's header" has "$tmp/out" \
    "src/sampler/zz_sibling.c -> include/perfmon/input.h (a header of src/input"

# The input stage calls the analysis above it.
wrong input/zz_up "input -> analysis" <<'C'
#include "perfmon/analysis.h"
int pm_zz_up(const pm_analysis *a);
int pm_zz_up(const pm_analysis *a)
{
    return pm_analysis_metric(a, "cpu");
}
C
check "names the input's call" has "$tmp/out" \
    "src/input/zz_up.c -> src/analysis/result.c (calls pm_analysis_metric)"

# The analysis, a layer above the sampler, calls it all the same.
wrong analysis/zz_branch "analysis -> sampler" <<'C'
#include "perfmon/sampler.h"
int pm_zz_branch(const pm_sampler_opts *o);
int pm_zz_branch(const pm_sampler_opts *o)
{
    return pm_sampler_run(o);
}
C
check "names the call into the sampler" has "$tmp/out" \
    "src/analysis/zz_branch.c -> src/sampler/run.c (calls pm_sampler_run)"
check "names the sampler's header" has "$tmp/out" \
    "src/analysis/zz_branch.c -> include/perfmon/sampler.h (a header of src/sampler"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
