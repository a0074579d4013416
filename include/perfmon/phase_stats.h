/* phase_stats.h - statistics of job phases over an analysis: per phase
 * kind across nodes (durations, start spread, resource use during the
 * phase) and per node and kind (docs/analysis.md, "Phases").
 *
 * Ownership: owned by the pm_analysis (a->phase_stats) and freed with it. */
#ifndef PERFMON_PHASE_STATS_H
#define PERFMON_PHASE_STATS_H

#include <stddef.h>

#include "perfmon/error.h"

struct pm_analysis;

typedef struct pm_phase_kind_stats {
    char *name;
    size_t hosts;      /* nodes on which the kind occurs */
    size_t count;      /* phases of this kind, all nodes */
    double total_s;    /* summed durations, all nodes */
    double avg_host_s; /* per node: summed duration, averaged over its nodes */
    double min_host_s, max_host_s;
    double start_min, start_max; /* earliest and latest first start over nodes (s) */
    double start_spread_s;       /* start_max - start_min */
    double start_sd_s;           /* standard deviation of the first starts */
    /* Resource use during the phase, per analysis metric ([a->nmetrics]):
     * the duration-weighted mean of each node's values inside its phases
     * (NaN where no node has data), and for power metrics (unit W) the
     * energy in J used during the phases, summed over nodes. */
    double *mean;
    double *energy_j;
    /* Resource use of the whole job during the phases of this kind
     * (phase_use.c; docs/analysis.md, "Resource use per phase"), NaN where
     * no node recorded the metric: core-seconds of CPU used (cpu_usage x
     * the node's CPUs) and allocated (the node's CPUs x the phase's
     * duration) summed over the kind's phases on all nodes, their ratio in
     * %, the highest memory used on one node, and bytes read from and
     * written to disk, sent and received over the network, summed. */
    double cpu_core_s, cpu_alloc_core_s, cpu_share_pct;
    double mem_peak_bytes;
    double disk_read_bytes, disk_write_bytes;
    double net_sent_bytes, net_recv_bytes;
    /* Energy during the phases of this kind, summed over them and their
     * nodes (J, NaN where not measured): the CPUs' from RAPL's package and
     * DRAM counters, the GPUs' from NVML's energy counter, or, for a GPU
     * without one, its power integrated over the phase.  gpu_energy_from:
     * PM_ENERGY_FROM_* bits, which of the two the GPUs' sum holds. */
    double cpu_energy_j, gpu_energy_j;
    int gpu_energy_from;
} pm_phase_kind_stats;
#define PM_ENERGY_FROM_COUNTER 1 /* NVML's total energy counter */
#define PM_ENERGY_FROM_POWER 2   /* the power readings integrated (no counter) */

typedef struct pm_phase_host_stats {
    const char *host; /* borrowed from the phase set */
    const char *name;
    size_t count;
    double total_s;
    double first_start; /* s since the epoch */
} pm_phase_host_stats;

typedef struct pm_phase_stats {
    pm_phase_kind_stats *kinds; /* sorted by earliest start, then name */
    size_t nkinds;
    pm_phase_host_stats *rows; /* by host, then first start */
    size_t nrows;
    size_t nmetrics;
} pm_phase_stats;

/* Compute a->phase_stats from a->in.phases (nothing when there are none). */
int pm_phase_stats_compute(struct pm_analysis *a, pm_error *err) PM_WUR;
void pm_phase_stats_free(pm_phase_stats *s);

#endif
