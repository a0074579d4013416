#!/bin/sh
# perfmon-analyze under mpirun (docs/analysis.md, "MPI"): on a generated
# 12-host job and on fixtures, 1, 2, 3 and 4 ranks on this machine
# (loopback, shared memory) give the same --stats, --stats --json, --csv,
# --data files and PDF bytes (SOURCE_DATE_EPOCH) as one process, with the
# same warnings; a missing input and a bad file on another rank than 0 are
# reported once, with the name, every rank exits non-zero, and none hangs;
# and with --stream (rank 0 folds, the others read the hosts at each
# pass) the same --stats and --stats --json for 1-4 ranks, with a window,
# and the same errors.
# Skipped where perfmon-analyze is built without MPI or mpirun is missing,
# and under valgrind (PM_WRAP): valgrind cannot follow the ranks that
# mpirun's daemon starts (test_split checks the exchange under valgrind).
set -u
A="$PM_BIN/perfmon-analyze"
F="$PM_ROOT/fixtures"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
if [ -n "${PM_WRAP:-}" ]; then
    echo "SKIP  under PM_WRAP (valgrind): mpirun starts the ranks, valgrind cannot follow them"
    exit 0
fi
if ! "$A" --version | grep -q "^MPI: built in"; then
    echo "SKIP  perfmon-analyze is built without MPI (no mpicc, or MPI=0): $("$A" --version | tail -1)"
    exit 0
fi
if ! command -v mpirun >/dev/null 2>&1; then
    echo "SKIP  mpirun not installed (openmpi-bin)"
    exit 0
fi
# One machine: shared memory between the ranks, the launcher on loopback,
# no network probing; root in CI; more ranks than the 2 cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_btl_base_warn_component_unused=0
# Open MPI's own allocations are not perfmon's (SAN=1 builds).
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
export SOURCE_DATE_EPOCH=1700000000
mpi() { # N ARGS...: mpirun -n N perfmon-analyze ARGS; sets rc
    _n=$1
    shift
    timeout 120 mpirun -n "$_n" "$A" "$@"
    rc=$?
}

# A 12-host job, 600 samples each, from the JSON Lines form of
# fixtures/perfmon/node-c.jsonl (its header, its last sample as the scale):
# gauges wave per host, counters grow at a rate per host.
D="$T/job"
mkdir "$D"
head -n 2 "$F/perfmon/node-c.jsonl" >"$T/head"
last=$(sed -n '$p' "$F/perfmon/node-c.jsonl" | grep -v '"end"' || sed -n '42p' "$F/perfmon/node-c.jsonl")
kinds=$(head -n 1 "$F/perfmon/node-c.jsonl" | grep -o '"kind":"[a-z]*"' | sed 's/.*:"\(.\).*/\1/' | tr -d '\n')
for h in 0 1 2 3 4 5 6 7 8 9 10 11; do
    sed "s/\"host\":\"node-c\"/\"host\":\"gen$h\"/" "$T/head" >"$D/gen$h.jsonl"
    echo "$last" | awk -v h="$h" -v k="$kinds" -v n=600 '{
        s = $0; sub(/.*"v":\[/, "", s); sub(/\].*/, "", s); m = split(s, L, ",")
        for (i = 0; i < n; i++) {
            line = sprintf("{\"t\":%.6f,\"mono\":%.6f,\"v\":[", 1699999999.7 + 0.1 * h + i, 1 + i)
            for (j = 1; j <= m; j++) {
                if (substr(k, j, 1) == "c") v = L[j] * i / 39 * (1 + 0.05 * h)
                else if (j == 5 || j == 8) v = L[j]
                else v = L[j] * (1 + 0.3 * sin(i / 9 + h))
                line = line sprintf("%s%.6g", j > 1 ? "," : "", v)
            }
            print line "]}"
        }
        printf "{\"end\":{\"t\":%.6f,\"mono\":%.6f,\"samples\":%d,\"late\":0,\"missed\":0,\"self_cpu\":0.1,\"self_maxrss_kb\":4096,\"exit_status\":0,\"reason\":\"command exited\"}}\n", 1699999999.7 + 0.1 * h + n - 1, n, n
    }' >>"$D/gen$h.jsonl"
done

"$A" "$D" --stats >"$T/one.txt" 2>"$T/one.err"
check "one process reads the generated job: 12 hosts" has "$T/one.txt" "^perfmon-analyze: 12 hosts,"
check "one process reads the generated job: 600 samples each" \
    [ "$(grep -c "^  gen[0-9]* *jsonl *600 " "$T/one.txt")" -eq 12 ]
"$A" "$D" --stats --json >"$T/one.json" 2>/dev/null
"$A" "$D" --csv "$T/one.csv" --data "$T/one.data" --pdf "$T/one.pdf" -q
for n in 1 2 3 4; do
    mpi $n "$D" --stats >"$T/$n.txt" 2>"$T/$n.err"
    check "$n ranks: exit 0" [ "$rc" -eq 0 ]
    check "$n ranks: --stats the same" cmp -s "$T/one.txt" "$T/$n.txt"
    check "$n ranks: stderr the same" cmp -s "$T/one.err" "$T/$n.err"
    mpi $n "$D" --stats --json >"$T/$n.json" 2>/dev/null
    check "$n ranks: --stats --json the same" cmp -s "$T/one.json" "$T/$n.json"
    mpi $n "$D" --csv "$T/$n.csv" --data "$T/$n.data" --pdf "$T/$n.pdf" -q
    check "$n ranks: --csv the same" cmp -s "$T/one.csv" "$T/$n.csv"
    check "$n ranks: --data the same" diff -r "$T/one.data" "$T/$n.data"
    check "$n ranks: PDF the same bytes" cmp -s "$T/one.pdf" "$T/$n.pdf"
done
# The ranks really shared the reading: rank 0 read 3 of the 12 files.
mpi 4 "$D" --stats -v >/dev/null 2>"$T/v.err"
check "4 ranks: rank 0 read 3 files, received 9" \
    has "$T/v.err" "note: mpi: 4 ranks; rank 0 read 3 files and received 9 ("

# --stream: rank 0 folds in bounded memory, the other ranks read and
# decode the hosts at each pass; the same bytes as one process, streamed
# or in memory, and the same warnings.
"$A" "$D" --stream --stats >"$T/s1.txt" 2>"$T/s1.err"
check "one process --stream: the same --stats as in memory" cmp -s "$T/one.txt" "$T/s1.txt"
"$A" "$D" --stream --stats --json >"$T/s1.json" 2>/dev/null
check "one process --stream: the same --json as in memory" cmp -s "$T/one.json" "$T/s1.json"
for n in 1 2 3 4; do
    mpi $n "$D" --stream --stats >"$T/s$n.txt" 2>"$T/s$n.err"
    check "$n ranks --stream: exit 0" [ "$rc" -eq 0 ]
    check "$n ranks --stream: --stats the same" cmp -s "$T/one.txt" "$T/s$n.txt"
    check "$n ranks --stream: stderr the same" cmp -s "$T/s1.err" "$T/s$n.err"
    mpi $n "$D" --stream --stats --json >"$T/s$n.json" 2>/dev/null
    check "$n ranks --stream: --stats --json the same" cmp -s "$T/one.json" "$T/s$n.json"
done
# Each pass's 12 hosts came from ranks 1-3: the survey's times and the
# fold (the refine passes read rank 0's spill of the fold's values); with
# PM_STREAM_SPILL=0, a refine pass reads them all again.
mpi 4 "$D" --stream --stats -v >/dev/null 2>"$T/sv.err"
check "4 ranks --stream: 2 passes, 24 hosts received" \
    has "$T/sv.err" "note: mpi: --stream: 2 passes over the hosts; rank 0 received 24 hosts' profiles ("
check "4 ranks --stream -v: rank 0's own CPU time said" \
    has "$T/sv.err" "note: mpi: rank 0's CPU time through the analysis: [0-9]*[.][0-9][0-9] s user, [0-9]*[.][0-9][0-9] s system$"
PM_STREAM_SPILL=0 mpi 4 "$D" --stream --stats --json -v >"$T/sr.json" 2>"$T/sr.err"
check "4 ranks --stream, no spill: the same --json, 3 passes, 36 hosts received" \
    sh -c "cmp -s '$T/one.json' '$T/sr.json' && grep -q \"note: mpi: --stream: 3 passes over the hosts; rank 0 received 36 hosts' profiles (\" '$T/sr.err'"
# The spill is bounded by an eighth of --memory: beyond, a refine pass.
mpi 2 "$D" --stream --stats --json --memory 64K -v >"$T/sm.json" 2>"$T/sm.err"
check "2 ranks --stream --memory 64K (no room for the spill): the same --json, 3 passes" \
    sh -c "cmp -s '$T/one.json' '$T/sm.json' && grep -q \"note: mpi: --stream: 3 passes over the hosts; rank 0 received 36 hosts' profiles (\" '$T/sm.err'"
mpi 2 "$D" --stream --stats --json --memory 8G -v >"$T/sb.json" 2>"$T/sb.err"
check "2 ranks --stream --memory 8G: the same --json, 2 passes" \
    sh -c "cmp -s '$T/one.json' '$T/sb.json' && grep -q \"note: mpi: --stream: 2 passes over the hosts; rank 0 received 24 hosts' profiles (\" '$T/sb.err'"
# A window: the survey's times take a second pass.
"$A" "$D" --stats --json --start +100 --end +400 >"$T/w.json" 2>/dev/null
mpi 3 "$D" --stream --stats --json --start +100 --end +400 -v >"$T/w3.json" 2>"$T/w3.err"
check "3 ranks --stream --start/--end: the same --json as in memory" \
    sh -c "[ $rc -eq 0 ] && cmp -s '$T/w.json' '$T/w3.json'"
check "3 ranks --stream --start/--end: 3 passes" \
    has "$T/w3.err" "note: mpi: --stream: 3 passes over the hosts; rank 0 received 36 hosts' profiles ("

# Fixtures: mixed formats and a torn file (its warnings once), events
# files (read again by rank 0), an SKA file of two hosts read by rank 1,
# Scanner profiles (phases only).
for fx in "$F/perfmon" "$F/compare/base" "$F/ska/single-host.json $F/ska/cpu_metrics.json --run 1" \
    "$F/scanner"; do
    name=$(echo "$fx" | sed "s|$F/||g")
    # shellcheck disable=SC2086
    "$A" $fx --stats >"$T/f1.txt" 2>"$T/f1.err"
    # shellcheck disable=SC2086
    "$A" $fx --pdf "$T/f1.pdf" -q
    # shellcheck disable=SC2086
    mpi 3 $fx --stats >"$T/fn.txt" 2>"$T/fn.err"
    check "$name, 3 ranks: --stats and warnings the same" \
        sh -c "[ $rc -eq 0 ] && cmp -s '$T/f1.txt' '$T/fn.txt' && cmp -s '$T/f1.err' '$T/fn.err'"
    # shellcheck disable=SC2086
    mpi 2 $fx --pdf "$T/fn.pdf" -q
    check "$name, 2 ranks: PDF the same bytes" cmp -s "$T/f1.pdf" "$T/fn.pdf"
done

# Errors: a missing directory, once, exit 2 on every rank (mpirun's).
mpi 3 "$T/no-such-dir" --stats >/dev/null 2>"$T/e.err"
check "missing directory: exit 2" [ "$rc" -eq 2 ]
check "missing directory: said once" [ "$(grep -c "perfmon-analyze: .*no-such-dir" "$T/e.err")" -eq 1 ]
# A damaged header in the file that rank 2 of 4 reads (the third, sorted),
# with --strict: rank 0 reports that rank's error, exit 1 as alone.
B="$T/bad"
mkdir "$B"
cp "$D"/gen0.jsonl "$D"/gen1.jsonl "$D"/gen3.jsonl "$B"/
printf '{"format":"perfmon-profile","version":1,"host":' >"$B/gen2.jsonl"
"$A" "$B" --stats --strict >/dev/null 2>"$T/b1.err"
want=$?
mpi 4 "$B" --stats --strict >/dev/null 2>"$T/b4.err"
check "bad file on rank 2, --strict: exit $want as one process" [ "$rc" -eq "$want" ] && [ "$want" -ne 0 ]
check "bad file on rank 2: its message once, with the name" \
    [ "$(grep -c "^perfmon-analyze: .*gen2.jsonl" "$T/b4.err")" -eq 1 ]
check "bad file on rank 2: the same message as one process" grep -qxF "$(head -n 1 "$T/b1.err")" "$T/b4.err"
# Without --strict: a warning, the others analysed, as one process.
"$A" "$B" --stats >"$T/w1.txt" 2>"$T/w1.err"
mpi 4 "$B" --stats >"$T/w4.txt" 2>"$T/w4.err"
check "bad file without --strict: same output and warning" \
    sh -c "[ $rc -eq 0 ] && cmp -s '$T/w1.txt' '$T/w4.txt' && cmp -s '$T/w1.err' '$T/w4.err'"
# The same with --stream: the survey's gather brings rank 2's error.
"$A" "$B" --stream --stats --strict >/dev/null 2>"$T/sb1.err"
want=$?
mpi 4 "$B" --stream --stats --strict >/dev/null 2>"$T/sb4.err"
check "--stream, bad file on rank 2, --strict: exit $want as one process" \
    [ "$rc" -eq "$want" ] && [ "$want" -ne 0 ]
check "--stream, bad file on rank 2: its message once, with the name" \
    [ "$(grep -c "^perfmon-analyze: .*gen2.jsonl" "$T/sb4.err")" -eq 1 ]
check "--stream, bad file on rank 2: the same message as one process" \
    grep -qxF "$(head -n 1 "$T/sb1.err")" "$T/sb4.err"
mpi 4 "$B" --stream --stats >"$T/sw4.txt" 2>"$T/sw4.err"
check "--stream, bad file without --strict: same output and warning as in memory" \
    sh -c "[ $rc -eq 0 ] && cmp -s '$T/w1.txt' '$T/sw4.txt' && cmp -s '$T/w1.err' '$T/sw4.err'"
# --stream with a missing input: said once, exit 2, no rank left waiting.
mpi 3 "$T/no-such-dir" --stream --stats >/dev/null 2>"$T/se.err"
check "--stream, missing directory: exit 2, said once" \
    sh -c "[ $rc -eq 2 ] && [ \$(grep -c 'no-such-dir' '$T/se.err') -eq 1 ]"

# --stream's report and exports under mpirun, in a job of more than 12
# nodes (whose band plots draw the outlier nodes' series, read again on
# rank 0 after the passes): the same PDF, CSV and data files as one
# process in memory, and the same trace.
D16="$T/job16"
mkdir "$D16"
cp "$D"/gen*.jsonl "$D16"/
for h in 12 13 14 15; do
    sed "s/\"host\":\"gen$((h - 12))\"/\"host\":\"gen$h\"/" "$D/gen$((h - 12)).jsonl" >"$D16/gen$h.jsonl"
done
"$A" "$D16" -q --no-stream --stats --pdf "$T/m.pdf" --csv "$T/m.csv" --data "$T/md" \
    --trace "$T/m.trace" >"$T/m.txt"
mpi 3 "$D16" -q --stream --stats --pdf "$T/s3.pdf" --csv "$T/s3.csv" --data "$T/s3d" \
    --trace "$T/s3.trace" >"$T/s3.txt"
check "3 ranks --stream, 16 hosts: --pdf --csv --data --trace exit 0" [ "$rc" -eq 0 ]
check "3 ranks --stream, 16 hosts: --stats as in memory" cmp -s "$T/m.txt" "$T/s3.txt"
check "3 ranks --stream, 16 hosts: the PDF of one process in memory" cmp -s "$T/m.pdf" "$T/s3.pdf"
check "3 ranks --stream, 16 hosts: the CSV of one process in memory" cmp -s "$T/m.csv" "$T/s3.csv"
check "3 ranks --stream, 16 hosts: the data files of one process in memory" diff -r "$T/md" "$T/s3d"
check "3 ranks --stream, 16 hosts: the trace of one process in memory" cmp -s "$T/m.trace" "$T/s3.trace"

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
