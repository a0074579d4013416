/* internal.h - what the files of src/analysis share and nobody else sees:
 * string lists, a median, the worker pool, input loading and alignment.
 * Not installed; not part of the API. */
#ifndef PERFMON_ANALYSIS_INTERNAL_H
#define PERFMON_ANALYSIS_INTERNAL_H

#include <pthread.h>
#include <stddef.h>

#include "perfmon/analysis.h"
#include "perfmon/strs.h"
#include "perfmon/threads.h"

#define PM_MAX_GRID_POINTS (8u << 20) /* 97 days at 1 Hz */

/* Median of x[n] (sorted in place); NaN when empty. */
double pm_median(double *x, size_t n);

/* Collect the input files of paths, read them (in parallel), and group the
 * profiles into a->hosts (sorted by name, several files per host merged).
 * Warnings and ignored files go to a. */
int pm_input_load(pm_analysis *a, const char *const *paths, size_t npaths, pm_error *err) PM_WUR;

/* --compat=ska: make the SKA hosts' columns what SKA's DataFrame holds
 * (compat_ska.c): a column of any SKA host is given to all, zero where
 * missing or never valid; RAPL columns after a host's first missing key
 * are zeroed (SKA's KeyError).  Before the time axes are set up. */
int pm_compat_ska_prepare(pm_analysis *a, pm_error *err) PM_WUR;

/* Move the gpu.<n>.<metric> columns of p into one new profile per GPU,
 * host gpu-<n>.<p's host>, columns gpu.<metric> (gpu.c).  *out gets the
 * new profiles (the caller owns them and the array), *nout their count.
 * Returns 0 or PM_ENOMEM. */
int pm_gpu_split(pm_profile *p, pm_profile ***out, size_t *nout) PM_WUR;

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

/* --- shared by the in-memory analysis (derive.c) and the stream mode
 * (stream.c) --- */

/* The common grid's point count; 0 when too large. */
size_t pm_grid_points(const pm_analysis *a);

/* Each host's time axis, window and grid points, and the common grid
 * (times.c); under --stream the hosts are read again for their times. */
int pm_times_setup(pm_analysis *a, pm_error *err) PM_WUR;
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

/* The stream mode's report digest (report_keep.c): the rows of each
 * (catalog metric, host) on each report grid in the unlinked file fd, host
 * by host within a metric, and each metric's repair times in host order. */
#define PM_REPORT_KEEP_WHOLE 12 /* = PM_LEGEND_MAX_HOSTS: series kept whole */
#define PM_REPORT_HEAT_MIN 16   /* = PM_HEATMAP_MIN_HOSTS */
typedef struct pm_report_keep {
    int fd;
    size_t nhosts, nm;
    size_t ngrids, cols[3], ng[3], maxng;
    size_t per_metric; /* doubles per catalog metric */
    double **rep;      /* [nm] (start, end) pairs */
    size_t *nrep, *caprep;
} pm_report_keep;
/* With opts.stream and opts.report: sets a->keep up (before the fold). */
int pm_report_keep_open(pm_analysis *a, pm_error *err) PM_WUR;
void pm_report_keep_free(pm_report_keep *k);
/* Host h's series s of catalog metric d: its rows written (buf holds the
 * largest grid), its range and first gap kept in s; any thread. */
int pm_report_keep_host(const pm_analysis *a, size_t d, size_t h, pm_series *s, double *buf,
                        pm_error *err) PM_WUR;
/* s's repair times appended to metric d's, in host order (the fold). */
int pm_report_keep_repairs(pm_analysis *a, size_t d, const pm_series *s) PM_WUR;

/* Stream mode (stream.c, docs/analysis.md "Analysis in bounded memory"):
 * with the hosts' times set up from the survey (values not decoded),
 * reload each host, compute its node figures and series, and fold them
 * into a->nodes, a->job and a->metrics. */
int pm_stream_build(pm_analysis *a, pm_error *err) PM_WUR;
/* Host h's merged profile read again (input.c), with the analysis's column
 * projection (values) or its times alone: the same files, clock fix, GPU
 * split and merge as pm_input_load.  *out is owned by the caller. */
int pm_input_host_load(const pm_analysis *a, size_t h, int values, pm_profile **out,
                       pm_error *err) PM_WUR;
/* pm_input_host_load's read from the files, on this process even under
 * mpirun (input.c): for the report's few hosts read after the passes. */
int pm_input_host_read(const pm_analysis *a, size_t h, int values, pm_profile **out,
                       pm_error *err) PM_WUR;
/* Host h will not be loaded in this pass (a worker that failed before):
 * under mpirun, its profile is taken from the other ranks and dropped. */
void pm_input_host_drop(const pm_analysis *a, size_t h);
/* Host ho's time axis, window (a->win_lo, a->win_hi) and, with ngrid, its
 * grid points, from its profile ho->prof, in malloc'd ho->t, ho->idx and
 * ho->grid_k (pm_host_times_free); as setup_times sets them up. */
int pm_host_times(const pm_analysis *a, pm_host *ho, size_t ngrid) PM_WUR;
void pm_host_times_free(pm_host *ho);
/* The node figures of one host (summary.c): sets ho->ncpus and
 * ho->mem_total, fills *s; and the job's figures from a->nodes. */
void pm_summary_host(const pm_analysis *a, pm_host *ho, pm_node_summary *s);
void pm_summary_job(pm_analysis *a);

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
typedef struct pm_rule_plan {
    void *doc; /* the parsed rules file (cJSON), whose strings src borrows */
    size_t n;
    pm_host_rule r[PM_NODE_SIGNS];
} pm_rule_plan;
int pm_rules_plan_load(pm_analysis *a, pm_error *err) PM_WUR;
void pm_rules_plan_free(pm_rule_plan *p);
/* Fill s->sign[] for host h (summary.c, from pm_summary_host). */
void pm_summary_signs(const pm_analysis *a, const pm_host *h, pm_node_summary *s);

/* Does the node summary (summary.c) read raw column `column`? */
int pm_summary_reads(const char *column);

/* Each phase's figures from the series of the hosts it covers, computed
 * one host at a time (pm_phase_contrib_host) so that the stream mode
 * fills them in its fold and the in-memory path from its series, and
 * pm_phase_stats_compute combines them in the same order in both. */
enum {
    PM_PU_CPU_PCT_S, /* cpu_usage's step integral (NaN: no series) */
    PM_PU_CPU_COV,   /* its seconds with a value */
    PM_PU_MEM,       /* step max of proc_rss, else mem_used, converted */
    PM_PU_BYTES,     /* disk_read, disk_write, net_out, net_in: 4 */
    PM_PU_N = PM_PU_BYTES + 4
};
typedef struct pm_phase_contrib {
    size_t ncat;     /* catalog metrics */
    size_t *first;   /* [phases + 1]: phase i's members x ncat means at mean + first[i] */
    double *mean;    /* window means by (phase, member of its node, catalog metric) */
    double *use;     /* [phases * PM_PU_N] the figures of phase_use.c, of the node */
    size_t *hfirst;  /* [nhosts + 1]: host h fills entries hfirst[h] .. hfirst[h + 1] - 1 */
    size_t *hphase;  /* of phase hphase[k], */
    size_t *hmember; /* as member hmember[k] of its node, or SIZE_MAX: the use */
} pm_phase_contrib;

/* Which slots each host fills (a->phases, a->hosts set).  Returns 0 or
 * PM_ENOMEM; pm_phase_contrib_free(NULL) and of a zeroed one are no-ops. */
int pm_phase_contrib_init(const pm_analysis *a, pm_phase_contrib *pc);
void pm_phase_contrib_free(pm_phase_contrib *pc);
/* Host h's slots, from its series by catalog index (ser[d], NULL where
 * the host has none); slots are the host's own, so hosts may run at once. */
void pm_phase_contrib_host(const pm_analysis *a, pm_phase_contrib *pc, size_t h,
                           pm_series *const *ser);
/* The use figures of phase p of host h (phase_use.c). */
void pm_phase_use_host(const pm_analysis *a, const pm_phase *p, pm_series *const *ser, double *use);

/* pm_phase_stats_compute with the contributions given (the stream mode's),
 * or computed here from the series when given is NULL. */
int pm_phase_stats_from(pm_analysis *a, pm_phase_contrib *given, pm_error *err) PM_WUR;

struct pm_phase_stats;
/* The resource use per phase kind of st (phase_use.c), from each phase's
 * figures in pc: fills the cpu_*, mem_*, disk_* and net_* fields of every
 * kind. */
void pm_phase_use_compute(const pm_analysis *a, const pm_phase_contrib *pc,
                          struct pm_phase_stats *st);

#endif
