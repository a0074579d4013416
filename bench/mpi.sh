#!/bin/sh
# bench/mpi.sh DIR [ARGS...]: perfmon-analyze DIR ARGS (default --stats)
# alone, then under mpirun -n 1..4 on this machine, twice each; prints
# per run the wall time, the CPU time (user + system) of all ranks and of
# rank 0, rank 0's peak RSS, and what rank 0 read, received and how long that took
# (its -v notes; with --stream, also the hosts it received at each pass).
# docs/analysis.md, "MPI", has the figures.
#   PM_BENCH_RANKS="1 2 3 4"   the rank counts
#   BUILD=build/release
set -u
D=${1:?usage: bench/mpi.sh DIR [ARGS...]}
shift
[ $# -gt 0 ] || set -- --stats
A="$(cd "${BUILD:-build/release}/bin" && pwd)/perfmon-analyze"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_hwloc_base_binding_policy=none
# Each rank under GNU time: wall, user, system, peak RSS (KiB).
cat >"$T/rank.sh" <<EOS
#!/bin/sh
exec /usr/bin/time -f "%e %U %S %M" -o "$T/r.\${OMPI_COMM_WORLD_RANK:-0}" "$A" "\$@"
EOS
chmod +x "$T/rank.sh"
report() { # LABEL: sums the ranks' files
    awk -v label="$1" '{ if ($1 > wall) wall = $1; cpu += $2 + $3; if (FNR == 1 && FILENAME ~ /r\.0$/) { rss = $4; cpu0 = $2 + $3 } }
        END { printf "%-10s wall %6.2f s  cpu %6.2f s (rank 0 %6.2f s)  rank 0 peak RSS %5.0f MB  ", label, wall, cpu, cpu0, rss / 1024 }' "$T"/r.*
    sed -n 's/.*note: mpi: \(.*\)/\1/p' "$T/err" | tr '\n' ' '
    echo
    rm -f "$T"/r.*
}
for k in 1 2; do
    /usr/bin/time -f "%e %U %S %M" -o "$T/r.0" "$A" "$D" "$@" -q >/dev/null 2>"$T/err"
    report alone
done
for n in ${PM_BENCH_RANKS:-1 2 3 4}; do
    for k in 1 2; do
        mpirun -n "$n" "$T/rank.sh" "$D" "$@" -v >/dev/null 2>"$T/err"
        report "$n ranks"
    done
done
