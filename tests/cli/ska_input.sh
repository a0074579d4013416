#!/bin/sh
# Awkward SKA-layout inputs (issue 14, item 12): each rejected file is named
# with its reason, a 10,000-byte host name is accepted (whole in the JSON,
# shortened in the text tables), a host listed without data is a warning
# while the other hosts are analysed.
set -u
. "$PM_ROOT/tests/support/cli.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"

mkdir "$T/notjson" "$T/empty" "$T/deep" "$T/onlynames" "$T/nonames" "$T/long" "$T/nodata"
printf '{"host_names": ["a"],\n "a": {"time_stamps": [1, 2], oops}}\n' >"$T/notjson/cpu_metrics.json"
: >"$T/empty/cpu_metrics.json"
deep=$(printf '%0300d' 0 | tr 0 '[')
close=$(printf '%0300d' 0 | tr 0 ']')
printf '{"host_names": ["a"], "a": {"time_stamps": [1, 2], "x": %s%s}}\n' "$deep" "$close" >"$T/deep/cpu_metrics.json"
printf '{"host_names": ["a", "b"]}\n' >"$T/onlynames/cpu_metrics.json"
printf '{"host_names": []}\n' >"$T/nonames/cpu_metrics.json"
long=$(printf '%010000d' 0 | tr 0 h)
printf '{"host_names": ["%s", "b"], "%s": {"time_stamps": [1, 2, 3], "cpu_percent_sys": [1, 2, 3]},\n "b": {"time_stamps": [1, 2, 3], "cpu_percent_sys": [4, 5, 6]}}\n' \
    "$long" "$long" >"$T/long/cpu_metrics.json"
printf '{"host_names": ["a", "ghost"], "a": {"time_stamps": [1, 2, 3], "cpu_percent_sys": [1, 2, 3]}}\n' \
    >"$T/nodata/cpu_metrics.json"

# Rejected: exit 2, one message naming the file and saying what is wrong.
rejected() { # case expected-reason
    $A --stats "$T/$1" >"$T/$1.out" 2>"$T/$1.err"
    rc=$?
    [ "$rc" -eq 2 ] && grep -q -- "$T/$1/cpu_metrics.json" "$T/$1.err" && grep -q -- "$2" "$T/$1.err" ||
        { echo "  exit $rc: $(cat "$T/$1.err")"; return 1; }
}
check "not JSON: file:line:col and what" rejected notjson "cpu_metrics.json:2:31: malformed JSON: expected a member name"
check "nested too deeply: file:line:col" rejected deep "cpu_metrics.json:1:.*: nesting too deep"
check "only host_names: none has data" rejected onlynames "none of the 2 hosts in host_names has data"
check "empty host_names" rejected nonames "host_names is empty"
empty_named() { # beside a readable file, so that the analysis runs and -v lists it
    $A --stats -v "$T/empty/cpu_metrics.json" "$T/nodata/cpu_metrics.json" >/dev/null 2>"$T/empty.err"
    [ $? -eq 0 ] && grep -q -- "$T/empty/cpu_metrics.json: empty file" "$T/empty.err" ||
        { cat "$T/empty.err"; return 1; }
}
check "empty file: named as empty (-v)" empty_named

# A 10,000-byte host name: analysed; whole in the JSON, shortened in the text.
$A --stats --json "$T/long" >"$T/long.json" 2>"$T/long.err" || { echo "FAIL  long name: exit $?"; cat "$T/long.err"; fails=$((fails + 1)); }
check "10,000-byte host name kept whole in the JSON" python3 -c "
import json, sys
d = json.load(open('$T/long.json'))
sys.exit(sorted(len(n['host']) for n in d['nodes']) != [1, 10000] or
         sorted(d['metrics'][0]['hosts']) != ['b', 'h' * 10000])"
$A --stats "$T/long" >"$T/long.txt" 2>&1
check "10,000-byte host name shortened in the text tables" sh -c \
    "grep -q '^  hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh\.\.\. ' '$T/long.txt' && [ \$(awk '{ if (length(\$0) > m) m = length(\$0) } END { print m }' '$T/long.txt') -lt 400 ]"

# Two 10,000-byte names alike but for their last byte: distinct HDF5 groups.
mkdir "$T/long2"
printf '{"host_names": ["%sa", "%sb"], "%sa": {"time_stamps": [1, 2], "cpu_percent_sys": [1, 2]},\n "%sb": {"time_stamps": [1, 2], "cpu_percent_sys": [3, 4]}}\n' \
    "$long" "$long" "$long" "$long" >"$T/long2/cpu_metrics.json"
check "two long names alike: HDF5 written" $A -q --hdf5 "$T/long2.h5" "$T/long2"

# A host without data: a warning naming it; the other host is analysed.
$A --stats --json "$T/nodata" >"$T/nodata.json" 2>"$T/nodata.err"
rc=$?
check "host without data: exit 0" [ "$rc" -eq 0 ]
check "host without data: a warning names it" grep -q "host ghost: listed in host_names but has no data" "$T/nodata.err"
check "host without data: the other host analysed" python3 -c "
import json, sys
d = json.load(open('$T/nodata.json'))
sys.exit([n['host'] for n in d['nodes']] != ['a'] or not any('ghost' in w for w in d['warnings']))"
# A host whose time_stamps is empty (SKA's sampler started and wrote
# nothing): a warning naming the host and the file, no run of its own dated
# 1970, the other hosts analysed, in both modes.
mkdir "$T/nosamples"
printf '{"host_names": ["a", "b", "idle"], "a": {"time_stamps": [1700000000, 1700000001, 1700000002], "cpu_percent_sys": [1, 2, 3]},\n "b": {"time_stamps": [1700000000, 1700000001, 1700000002], "cpu_percent_sys": [4, 5, 6]},\n "idle": {"time_stamps": [], "cpu_percent_sys": []}}\n' \
    >"$T/nosamples/cpu_metrics.json"
for mode in "" --stream; do
    $A --stats --json $mode "$T/nosamples" >"$T/nosamples.json" 2>"$T/nosamples.err"
    rc=$?
    check "host without samples$mode: exit 0, not 2 runs" [ "$rc" -eq 0 ]
    check "host without samples$mode: a warning names the host and the file" \
        grep -q "nosamples/cpu_metrics.json: host idle: no samples" "$T/nosamples.err"
    check "host without samples$mode: the other hosts analysed" python3 -c "
import json, sys
d = json.load(open('$T/nosamples.json'))
sys.exit([n['host'] for n in d['nodes']] != ['a', 'b'] or d['job']['start'] < 1e9)"
done
[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
