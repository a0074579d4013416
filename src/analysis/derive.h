/* derive.h - derivation (derive.c), the contract the in-memory
 * analysis and the stream mode (stream.c) share: a host's series of one
 * metric, the fold of a metric's statistics over hosts, every metric
 * built at once.
 * Private to src/analysis. */
#ifndef PM_ANALYSIS_DERIVE_H
#define PM_ANALYSIS_DERIVE_H

#include <stddef.h>

#include "perfmon/analysis.h"

/* Every catalog metric derived, aggregated and summarised on the worker
 * threads (derive.c), raw columns released as soon as no metric still
 * needs them; metrics no host has are left out. */
int pm_metrics_build(pm_analysis *a, pm_error *err) PM_WUR;

/* A metric's statistics over all hosts, folded one host at a time in host
 * order: pm_metric_fold_init, pm_metric_fold for each host's series (NULL
 * where the host has none), pm_metric_fold_end.  The pooled sd, p50 and
 * p95 are left to the caller (acc->sum, acc->m: the sum and count of the
 * valid values in fold order). */
typedef struct pm_metric_acc {
    double sum_means, max_mean, wsum, wtot;
    size_t nmeans;
    double sum; /* of every valid value, in host and sample order */
    size_t m;
} pm_metric_acc;
void pm_metric_fold_init(pm_metric_result *r, pm_metric_acc *acc);
void pm_metric_fold(pm_metric_result *r, pm_metric_acc *acc, const pm_series *s, size_t h);
void pm_metric_fold_end(const pm_analysis *a, pm_metric_result *r, const pm_metric_acc *acc,
                        double part_mean, size_t nparts, double part_max);
/* The aggregate's statistics and smallest count (after it is built);
 * scratch holds g->n points. */
void pm_aggregate_stats(const pm_analysis *a, pm_metric_result *r, double *scratch);

/* One thread's scratch for deriving series (derive.c's struct work);
 * with a->opts.stream its series' v and q are calloc'd (free them with
 * pm_series_delete or by hand) and no pooled array is kept. */
struct work;
struct work *pm_work_new(const pm_analysis *a);
void pm_work_delete(struct work *wk);
/* Derive catalog entry def on host ho (its prof, t, idx, n, interval):
 * *out NULL when the host has no data for it. */
int pm_series_derive(const pm_analysis *a, const pm_metric_def *def, const pm_host *ho,
                     struct work *wk, pm_series **out) PM_WUR;
void pm_series_delete(pm_series *s);
/* Repairs per node, from the metrics' host series. */
void pm_count_repairs(pm_analysis *a);

#endif
