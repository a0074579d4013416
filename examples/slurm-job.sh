#!/bin/bash
# A SLURM batch job monitored by perfmon: one sampler per node in the
# background, the job's steps, then the IPC file tells the samplers to stop.
#SBATCH --job-name=perfmon-example
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --time=00:30:00
#SBATCH --output=slurm-%j.out

set -eu
OUT=$PWD/perfmon-$SLURM_JOB_ID          # must be visible from every node
IPC=$OUT/ipc                            # samplers stop when it says FINISHED
mkdir -p "$OUT"
# A requeued job keeps its id, so the last run's FINISHED is still there:
# remove it once, before any sampler starts (a sampler refuses to start on
# a FINISHED file; --ipc-reset would clear it, but a sampler that starts
# late on one node could then clear the FINISHED of this run).
rm -f "$IPC"

# One sampler per node; --overlap lets the job's own steps share the nodes.
srun --overlap --ntasks-per-node=1 --nodes="$SLURM_JOB_NUM_NODES" \
    perfmon-sample -o "$OUT" -i 1 --ipc "$IPC" &
SAMPLERS=$!
sleep 2

# The job itself.  To profile one step's process tree instead of the whole
# node, wrap it: srun perfmon-sample -o "$OUT" -- ./solver
srun ./matmul-io -n 2000 -t "${SLURM_CPUS_ON_NODE:-4}" -r 10 -d /tmp

echo FINISHED > "$IPC"
wait "$SAMPLERS"
perfmon-analyze "$OUT" --run last --stats --pdf "$OUT/job-report-$SLURM_JOB_ID.pdf"
