/* align.h - the all-node series of a metric (align.c), whole or
 * one host at a time.
 * Private to src/analysis. */
#ifndef PM_ANALYSIS_ALIGN_H
#define PM_ANALYSIS_ALIGN_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/analysis.h"

/* The common grid's points, at most. */
#define PM_MAX_GRID_POINTS (8u << 20) /* 97 days at 1 Hz */

/* All-node series of r on the common grid (grid_tmp holds the grid's
 * point count) or by position (--align=index, --compat=ska); its arrays
 * come from arena (the analysis's). */
int pm_aggregate_time(const pm_analysis *a, pm_metric_result *r, size_t ngrid, double *grid_tmp,
                      pm_arena *arena) PM_WUR;
int pm_aggregate_index(const pm_analysis *a, pm_metric_result *r, pm_arena *arena) PM_WUR;
/* The same in steps, one host at a time in host order (the stream mode
 * folds hosts as they come): begin allocates (the grid, or n points by
 * position with *tc the count of times per point), add adds one host's
 * series (gk: its grid points or NULL; tmp: grid points of scratch), end
 * divides (by position: the first n points, n at most begin's). */
int pm_aggregate_time_begin(const pm_analysis *a, pm_metric_result *r, size_t ngrid,
                            pm_arena *arena) PM_WUR;
void pm_aggregate_time_add(const pm_analysis *a, pm_metric_result *r, const pm_series *s,
                           const uint32_t *gk, double *tmp);
void pm_aggregate_time_end(pm_metric_result *r);
int pm_aggregate_index_begin(pm_metric_result *r, size_t n, uint32_t **tc, pm_arena *arena) PM_WUR;
void pm_aggregate_index_add(pm_metric_result *r, const pm_series *s, uint32_t *tc);
void pm_aggregate_index_end(const pm_analysis *a, pm_metric_result *r, size_t n, uint32_t *tc);
/* The all-node series of a metric only one host has: that host's series. */
int pm_aggregate_one(const pm_series *s, pm_aggregate *g, pm_arena *arena) PM_WUR;

#endif
