#!/bin/bash
# A PBS job monitored by perfmon.  PBS_NODEFILE exists only on the first
# node, so it is copied to the shared directory and passed on as
# PBS_NODEFILE_LOCAL, which perfmon-sample uses to number the nodes.
#PBS -N perfmon-example
#PBS -l select=2:ncpus=4:mpiprocs=1
#PBS -l walltime=00:30:00
#PBS -j oe

set -eu
cd "$PBS_O_WORKDIR"
OUT=$PWD/perfmon-${PBS_JOBID%%.*}
IPC=$OUT/ipc
mkdir -p "$OUT"
rm -f "$IPC"    # a rerun job would find the last run's FINISHED (see slurm-job.sh)
cp "$PBS_NODEFILE" "$OUT/nodefile"
NODES=$(sort -u "$PBS_NODEFILE" | wc -l)

mpirun --map-by node -np "$NODES" -x PBS_NODEFILE_LOCAL="$OUT/nodefile" -x PBS_JOBID \
    perfmon-sample -o "$OUT" -i 1 --ipc "$IPC" &
SAMPLERS=$!
sleep 2

mpirun --map-by node -np "$NODES" ./matmul-io -n 2000 -t 4 -r 10 -d /tmp

echo FINISHED > "$IPC"
wait "$SAMPLERS"
perfmon-analyze "$OUT" --run last --stats --pdf "$OUT/job-report.pdf"
