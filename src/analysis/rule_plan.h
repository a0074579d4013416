/* rule_plan.h - the per-host rules' parameters (types only): what
 * rules.c reads from the rules file before the node figures and
 * summary.c's per-host step applies to each host.  Private to
 * src/analysis. */
#ifndef PM_ANALYSIS_RULE_PLAN_H
#define PM_ANALYSIS_RULE_PLAN_H

#include <stddef.h>

#include "gpu_verdict.h"
#include "perfmon/analysis.h"

/* The per-host rules of the rules file (types stopped, memory, share;
 * rules.c), read before the node figures so that each host's findings are
 * computed in the per-host step both modes share: pm_rules_plan_load
 * fills a->rule_plan (NULL without a rules file), pm_rules_plan_free
 * frees it. */
typedef struct pm_rule_src {
    const char *column; /* a counter (share) */
    const char *per;    /* share: its denominator counter; NULL: elapsed time */
    const char *what;   /* words for {what} */
    double scale;       /* share: column x scale is seconds (without per) */
} pm_rule_src;
enum { PM_HR_STOPPED = 1, PM_HR_MEMORY = 2, PM_HR_SHARE = 3 };
#define PM_RULE_SRCS 4
typedef struct pm_host_rule {
    int kind;         /* PM_HR_* */
    double threshold; /* stopped: % of the earlier level; memory: % of capacity;
                       * share: % of the time */
    double early_pct; /* stopped: the first part of the host's span (%) whose
                       * median is the earlier level */
    double min_level; /* stopped: the earlier level must reach this (%) */
    size_t nsrc;
    pm_rule_src src[PM_RULE_SRCS];
} pm_host_rule;
#define PM_RULE_SLOPES 16
typedef struct pm_rule_plan {
    void *doc; /* the parsed rules file (cJSON), whose strings src borrows */
    size_t n;
    pm_host_rule r[PM_NODE_SIGNS];
    /* the metrics the slope rules read (the stream mode keeps each host's
     * slope of those alone); slope_all: more than PM_RULE_SLOPES */
    const char *slope[PM_RULE_SLOPES];
    size_t nslope;
    int slope_all;
    /* the gpu rules that walk each GPU's samples (pm_gpu_rule_walks), in
     * file order: --stream computes their findings in its per-host step
     * (pm_gpu_signs_host, a->nodes[h].gpu_sign[i]) */
    pm_gpu_rule gpu[PM_NODE_GPU_SIGNS];
    size_t ngpu;
} pm_rule_plan;

#endif
