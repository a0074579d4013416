/* request_use.h - requested against used for an analysed job
 * (src/analysis/request_use.c): the request the sampler recorded in the
 * profiles (request.h says what it holds) set against what the job used.
 * docs/analysis.md "Requested vs used".
 *
 * Ownership: plain values; mem_used_from and cpu_used_from are static
 * strings. */
#ifndef PERFMON_REQUEST_USE_H
#define PERFMON_REQUEST_USE_H

#include <stddef.h>

struct pm_analysis;
/* Requested against used for a job (the first node whose profile has a
 * request; per node figures are the highest over nodes). */
typedef struct pm_request_use {
    int have; /* a request was recorded */
    char scheduler[16];
    double time_limit_s, wall_s, time_pct;
    double mem_req_bytes;      /* per node */
    double mem_used_bytes;     /* highest per node: job RSS (process tree), else node memory used */
    const char *mem_used_from; /* "job processes" or "node" */
    double mem_pct;
    double cpus_req;        /* per node */
    double cpu_used_core_s; /* job processes' CPU time, else the node's busy time (all nodes) */
    const char *cpu_used_from;
    double cpu_req_core_s; /* cpus_req x the node's wall time, summed over nodes */
    double cpu_pct;
} pm_request_use;

void pm_request_use_compute(const struct pm_analysis *a, pm_request_use *u);
/* The note for far-apart figures (less than 25 % of the request used):
 * "Used 6 % of the requested walltime (7.3 min of 2.0 h); peak memory 3 %
 * of the requested (1.9 GiB of 64.0 GiB per node)." into out; returns 0
 * when nothing is far apart (out ""). */
int pm_request_note(const pm_request_use *u, char *out, size_t cap);

#endif
