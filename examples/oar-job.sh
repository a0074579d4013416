#!/bin/bash
# An OAR job monitored by perfmon: oarsh starts one sampler per node.
#OAR -n perfmon-example
#OAR -l nodes=2,walltime=00:30:00

set -eu
OUT=$PWD/perfmon-$OAR_JOB_ID
IPC=$OUT/ipc
mkdir -p "$OUT"
rm -f "$IPC"    # a rerun job would find the last run's FINISHED (see slurm-job.sh)

for node in $(sort -u "$OAR_NODEFILE"); do
    oarsh "$node" "OAR_JOB_ID=$OAR_JOB_ID OAR_NODEFILE=$OAR_NODEFILE \
        perfmon-sample -o '$OUT' -i 1 --ipc '$IPC'" &
done
sleep 2

mpirun -machinefile "$OAR_NODEFILE" -np "$(sort -u "$OAR_NODEFILE" | wc -l)" \
    ./matmul-io -n 2000 -t 4 -r 10 -d /tmp

echo FINISHED > "$IPC"
wait
perfmon-analyze "$OUT" --run last --stats --pdf "$OUT/job-report.pdf"
