/* request.h - what a job asked its batch system for (CPUs, memory, time
 * limit), as the sampler reads it at start (src/sampler/request.c).  The
 * analysis's requested-vs-used figures are request_use.h's.
 * docs/perfmon-sample.md "What the job asked for".
 *
 * Ownership: plain values; nothing to free. */
#ifndef PERFMON_REQUEST_H
#define PERFMON_REQUEST_H

#include <stddef.h>

#include "perfmon/buf.h"

/* NaN where the scheduler does not tell. */
typedef struct pm_request {
    char scheduler[16]; /* "slurm", "pbs", "oar"; "" outside a job */
    double cpus;        /* CPUs of the job on this node */
    double cpus_per_task, ntasks, nodes;
    char cpus_per_node_list[64]; /* SLURM_JOB_CPUS_PER_NODE as written ("4(x2),2") */
    double mem_bytes;            /* memory for the job on this node */
    double mem_per_node_bytes, mem_per_cpu_bytes;
    double time_limit_s;      /* the job's time limit */
    char time_limit_from[32]; /* "SLURM_JOB_END_TIME", "squeue", "PBS_WALLTIME", ... */
    double start_time;        /* the job's start (s since the epoch), SLURM >= 23.02 */
} pm_request;

/* Read the request from the environment; for a SLURM without
 * SLURM_JOB_END_TIME run `squeue -h -j $SLURM_JOB_ID -o %l` (from PATH),
 * killed after timeout_ms (0: not run). */
void pm_request_detect(pm_request *r, int timeout_ms);
/* Append ,"request":{...} to a metadata object being written (nothing
 * outside a job); only the known keys. */
void pm_request_json(const pm_request *r, pm_buf *b);
/* A SLURM or PBS time ("2-12:00:00", "1:30:00", "90:00", "30" minutes for
 * SLURM, "UNLIMITED") in seconds; NaN when not a limit. */
double pm_request_parse_time(const char *s);

#endif
