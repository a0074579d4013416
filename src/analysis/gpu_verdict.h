/* gpu_verdict.h - what the GPUs really did, as findings for the rules of
 * type "gpu" (templates/rules.json, docs/analysis.md "GPU verdicts"):
 * a GPU held but idle, busy but starved, memory- or compute-bound, one
 * GPU of several idle, SM activity not measured.  Private to the
 * analysis; rules.c turns the findings into notes.
 *
 * They read the GPU devices' series of the catalog metrics gpu_sm_active,
 * gpu_util, gpu_dram_active and the pipe activities (gpu_fp64_active,
 * gpu_fp32_active, gpu_fp16_active, gpu_tensor_active), whose values the
 * sampler records from NVML's GPM interface (docs/format.md "GPU").
 *
 * Ownership: findings are returned in a malloc'd array the caller frees.
 */
#ifndef PERFMON_GPU_VERDICT_H
#define PERFMON_GPU_VERDICT_H

#include <cJSON.h>
#include <stddef.h>

#include "perfmon/analysis.h"
#include "perfmon/error.h"

enum pm_gpu_check {
    PM_GPU_HELD_IDLE = 1, /* SM activity under threshold for min_share_pct of the time */
    PM_GPU_STARVED,       /* utilisation >= util_min while sm_min <= SM activity < threshold */
    PM_GPU_MEMORY_BOUND,  /* DRAM share >= threshold and >= ratio x the busiest pipe */
    PM_GPU_COMPUTE_BOUND, /* the busiest pipe >= threshold and >= ratio x DRAM */
    PM_GPU_ONE_IDLE,      /* a GPU under threshold while another worked */
    PM_GPU_UNMEASURED     /* GPUs without SM activity: what the verdicts cannot tell */
};

typedef struct pm_gpu_rule {
    int check;             /* enum pm_gpu_check */
    double threshold;      /* % (see the checks) */
    double util_min;       /* starved: NVML utilisation at or above (%) */
    double sm_min;         /* starved: SM activity at least (%): below, the GPU is idle */
    double min_share_pct;  /* held_idle, starved: share of the GPU's samples (%) */
    double ratio;          /* memory_bound, compute_bound */
    double min_duration_s; /* the GPU's span at least */
} pm_gpu_rule;

typedef struct pm_gpu_finding {
    int host;        /* index in a->in.hosts */
    double value;    /* held_idle, starved: share of the samples (%); bound: the
                      * leading activity (%); one_idle: the GPU's activity (%) */
    double t, t_end; /* the first and last sample concerned (s since the epoch) */
    double before;   /* NVML utilisation's mean over those samples (%);
                      * bound: DRAM share (%) */
    double after;    /* SM activity's mean over them (%); bound: the busiest
                      * pipe's (%); one_idle: the other GPUs' mean activity */
    size_t others;   /* one_idle: GPUs that worked; unmeasured: GPUs concerned */
    char what[96];   /* bound: the pipe; one_idle: "SM activity" or
                      * "utilisation"; unmeasured: the first GPUs' names */
} pm_gpu_finding;

/* Read a "gpu" rule's parameters (check, util_min, sm_min, min_share_pct, ratio,
 * min_duration_s) from o; threshold is the rule's.  Returns 0 or
 * PM_EFORMAT with err naming path and rules[i]. */
int pm_gpu_rule_parse(const cJSON *o, double threshold, pm_gpu_rule *r, const char *path, size_t i,
                      pm_error *err) PM_WUR;

/* Does rule r walk each GPU's samples (held_idle, starved, memory_bound,
 * compute_bound)?  Those are computed per host under --stream. */
int pm_gpu_rule_walks(const pm_gpu_rule *r);

/* --stream's per-host step: the findings of the plan's gpu rules
 * (a->rule_plan->gpu) on host h from its series by catalog index (ser[d],
 * NULL where the host has none) into s->gpu_sign (every slot NaN first;
 * a node, or no plan, gets only those).  Touches host h's slot alone, so
 * hosts may run at once.  Returns 0 or PM_ENOMEM. */
int pm_gpu_signs_host(const pm_analysis *a, size_t h, pm_series *const *ser,
                      pm_node_summary *s) PM_WUR;

/* The findings of rule r on a; slot: r's place among the plan's gpu
 * rules that walk the samples (-1: none), whose per-host findings
 * --stream reads.  Returns 0 or PM_ENOMEM. */
int pm_gpu_verdicts(const pm_analysis *a, const pm_gpu_rule *r, int slot, pm_gpu_finding **out,
                    size_t *n) PM_WUR;

/* Is host a MIG instance's device name (gpu-<n>.mig<gi>.<node>)? */
int pm_gpu_host_is_mig(const char *host);

#endif
