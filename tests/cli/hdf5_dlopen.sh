#!/bin/sh
# --hdf5 opens the HDF5 library when it is asked for, not at start: the
# program does not link it (with what it pulls in, some 7 MB of resident
# size in every run), a missing or wrong library fails --hdf5 alone with
# exit 3 and the reason, and every other output is unaffected.
set -u
A="${PM_WRAP:-} $PM_BIN/perfmon-analyze"
F="$PM_ROOT/fixtures"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
run() { # run the analyzer; sets rc, output in $T/out and $T/err
    $A "$@" >"$T/out" 2>"$T/err"
    rc=$?
}

if command -v readelf >/dev/null 2>&1; then
    readelf -d "$PM_BIN/perfmon-analyze" >"$T/dyn"
    check "perfmon-analyze lists its libraries" has "$T/dyn" "NEEDED"
    check "perfmon-analyze does not link HDF5" sh -c "! grep -qi 'NEEDED.*hdf5' '$T/dyn'"
else
    echo "SKIP  readelf not installed: linked libraries not checked"
fi

run "$F/perfmon" --hdf5 "$T/out.h5" -q
check "--hdf5 exits 0" [ "$rc" -eq 0 ]
# The file signature of HDF5 (HDF5 specification, "Format Signature").
sig=$(head -c 8 "$T/out.h5" 2>/dev/null | od -An -tx1 | tr -d ' \n')
check "--hdf5 writes an HDF5 file" [ "$sig" = "894844460d0a1a0a" ]

PERFMON_HDF5_LIB="$T/no-such-lib.so" run "$F/perfmon" --hdf5 "$T/missing.h5"
check "no HDF5 library: --hdf5 exits 3" [ "$rc" -eq 3 ]
check "no HDF5 library: the reason is said" has "$T/err" "cannot open the HDF5 library"
check "no HDF5 library: the library is named" has "$T/err" "no-such-lib.so"
check "no HDF5 library: no file written" [ ! -e "$T/missing.h5" ]

# A library that is not HDF5 (the C library is always there).
libc=$(ldd "$PM_BIN/perfmon-analyze" 2>/dev/null | awk '/libc\.so/ {print $3; exit}')
if [ -n "$libc" ]; then
    PERFMON_HDF5_LIB="$libc" run "$F/perfmon" --hdf5 "$T/wrong.h5"
    check "not an HDF5 library: --hdf5 exits 3" [ "$rc" -eq 3 ]
    check "not an HDF5 library: said so" has "$T/err" "not an HDF5 library"
fi

# Everything else works without the library, with the same numbers.
run "$F/perfmon" --stats --json -q
cp "$T/out" "$T/stats-with.json"
PERFMON_HDF5_LIB="$T/no-such-lib.so" run "$F/perfmon" --stats --json -q
check "no HDF5 library: --stats exits 0" [ "$rc" -eq 0 ]
check "no HDF5 library: --stats unchanged" cmp -s "$T/out" "$T/stats-with.json"
PERFMON_HDF5_LIB="$T/no-such-lib.so" run "$F/perfmon" --csv "$T/out.csv" -q
check "no HDF5 library: --csv exits 0" [ "$rc" -eq 0 ]
run "$F/perfmon" --csv "$T/with.csv" -q
check "no HDF5 library: --csv unchanged" cmp -s "$T/out.csv" "$T/with.csv"
# In one command: --hdf5 fails, the other outputs are still written.
PERFMON_HDF5_LIB="$T/no-such-lib.so" run "$F/perfmon" --hdf5 "$T/both.h5" --csv "$T/both.csv" -q
check "--hdf5 and --csv without the library: exit 3" [ "$rc" -eq 3 ]
check "--hdf5 and --csv without the library: the CSV is written" cmp -s "$T/both.csv" "$T/with.csv"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
