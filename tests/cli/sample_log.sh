#!/bin/sh
# perfmon-sample's reports on stderr come through the log sink its driver
# installs (src/perfmon-sample/cli.c; the library does not print): each
# line names the host and the level; a failure is said once at any
# verbosity, the sources' notes only with -v.
set -u
S="${PM_WRAP:-} $PM_BIN/perfmon-sample"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"

# An output directory that cannot be made: exit 2, one error line.
: >"$T/file"
$S -o "$T/file/sub" -d 1 --host node-a >"$T/out" 2>"$T/err"
rc=$?
check "unusable -o DIR: exit status 2" [ "$rc" -eq 2 ]
check "unusable -o DIR: one line on stderr" [ "$(wc -l <"$T/err")" -eq 1 ]
check "unusable -o DIR: the line names the host and the level" \
    has "$T/err" "^perfmon-sample\[node-a\]: error: $T/file/sub: cannot create directory"

# A clean run: silent without -v; with -v, info lines naming the host.
$S -o "$T/quiet" -i 0.05 -d 0.2 --host node-a -- true >"$T/out" 2>"$T/err"
rc=$?
check "clean run: exit status 0" [ "$rc" -eq 0 ]
check "clean run without -v: nothing on stderr" [ ! -s "$T/err" ]
$S -o "$T/loud" -i 0.05 -d 0.2 --host node-a -v -- true >"$T/out" 2>"$T/err"
check "clean run with -v: the profile it writes, said as info" \
    has "$T/err" "^perfmon-sample\[node-a\]: info: writing $T/loud/"
check "clean run with -v: every line names the host" \
    [ "$(grep -vc '^perfmon-sample\[node-a\]: ' "$T/err")" -eq 0 ]

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
