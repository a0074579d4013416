#!/bin/sh
# Replay every saved fuzz input through its target (make check): the seeds
# in fixtures/fuzz/<name>/ and every past crash in fixtures/fuzz/crashes/
# <name>/, with the gcc-built replay drivers (no clang needed; under SAN=1
# they carry the sanitizers).  Every tests/fuzz/fuzz_<name>.c must have its
# driver and its seeds.
set -u
R="$PM_BUILD/fuzz-replay"
fails=0
for src in "$PM_ROOT"/tests/fuzz/fuzz_*.c; do
    [ -f "$src" ] || continue
    name=$(basename "$src" .c)
    name=${name#fuzz_}
    bin="$R/replay_$name"
    if [ ! -x "$bin" ]; then
        echo "FAIL  $name: no replay driver $bin"
        fails=$((fails + 1))
        continue
    fi
    seeds="$PM_ROOT/fixtures/fuzz/$name"
    if [ -z "$(ls "$seeds" 2>/dev/null)" ]; then
        echo "FAIL  $name: no seeds in fixtures/fuzz/$name/"
        fails=$((fails + 1))
        continue
    fi
    set -- "$seeds"
    [ -d "$PM_ROOT/fixtures/fuzz/crashes/$name" ] && set -- "$@" "$PM_ROOT/fixtures/fuzz/crashes/$name"
    if out=$(${PM_WRAP:-} "$bin" "$@" 2>&1); then
        echo "ok    $name: $out"
    else
        echo "FAIL  $name"
        echo "$out" | tail -n 30
        fails=$((fails + 1))
    fi
done
[ "$fails" -eq 0 ]
