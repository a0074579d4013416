/* spread.h - a per-node column summarised across nodes, and the nodes that
 * stand out, for the report of a big job.
 *
 * Above PM_SPREAD_MIN_NODES nodes the report does not print one row per
 * node: it gives each column's distribution over the nodes (min, p5,
 * median, p95, max) and the nodes at both ends with the reason in words
 * ("idle 80 % of the job", "lost 12 samples", "clock offset 3 s").  The
 * full per-node table stays in --stats and the JSON attached to the PDF.
 *
 * Ownership: plain values and caller-sized arrays; nothing is allocated
 * that the caller must free.
 */
#ifndef PERFMON_SPREAD_H
#define PERFMON_SPREAD_H

#include <stddef.h>

#include "perfmon/analysis.h"

/* Above this many nodes the report's per-node tables are summarised. */
#define PM_SPREAD_MIN_NODES 16
/* Nodes named at each end of an outlier table. */
#define PM_SPREAD_OUTLIERS 10
/* A node counts as idle at a sample where its CPU is below this (%), the
 * threshold of the figure cpu_avg_utilization_over20_pct. */
#define PM_IDLE_BELOW_PCT 20.0

typedef struct pm_spread {
    size_t n;                         /* finite values */
    double min, p5, median, p95, max; /* NaN when n == 0 */
} pm_spread;

/* The distribution of v[0..n) over its finite values: percentiles
 * interpolated between order statistics (p at rank p (n - 1), as numpy's
 * default and GSL's quantile).  Returns 0, or PM_ENOMEM. */
int pm_spread_of(const double *v, size_t n, pm_spread *out);

/* One node's data-quality figures (the columns of the report's table). */
typedef struct pm_quality_row {
    double samples, interval_s, dropped, repaired, gaps, clock_offset_s;
    double sampler_cpu_pct, sampler_mib, missed;
    double lost; /* samples the span of most nodes (pm_quality_span) at
                  * the node's interval would hold beyond those it has (>= 0) */
} pm_quality_row;

/* The span most nodes cover: the median over the nodes of their last
 * sample's time less the median of their first (s).  Unlike the job's
 * span (earliest first to latest last sample) it does not grow with a few
 * nodes whose clock is offset, which would count every other node's
 * samples as lost.  NaN without samples. */
double pm_quality_span(const pm_analysis *a);
/* Node host's figures; span from pm_quality_span(a). */
void pm_quality_row_of(const pm_analysis *a, size_t host, double span, pm_quality_row *q);

/* A node at one end of a table and why. */
typedef struct pm_node_rank {
    size_t host;
    double score; /* the ranking value (higher = worse for quality) */
    char reason[200];
} pm_node_rank;

/* Data quality: the nodes with something wrong (lost, missed, dropped or
 * repaired samples, missing values, a clock offset of a second or more, a
 * sampler above 1 % CPU), worst first, at most max; *total: how many
 * nodes have something wrong.  Returns how many were stored. */
size_t pm_quality_worst(const pm_analysis *a, pm_node_rank *out, size_t max, size_t *total);

/* Resource use: the nodes with the lowest CPU use (the most idle time
 * first) into worst, the busiest into best, at most max each; *nw and *nb
 * receive the counts.  GPU hosts are left out.  Returns 0 or PM_ENOMEM. */
int pm_usage_outliers(const pm_analysis *a, pm_node_rank *worst, size_t *nw, pm_node_rank *best,
                      size_t *nb, size_t max);

/* A node's idle share: % of its samples with CPU below PM_IDLE_BELOW_PCT
 * (100 - cpu_avg_utilization_over20_pct), NaN without CPU data. */
double pm_idle_share(const pm_node_summary *s);

#endif
