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

/* Does the node summary (summary.c) read raw column `column`? */
int pm_summary_reads(const char *column);

struct pm_phase_stats;
/* The resource use per phase kind of st (phase_use.c), from a's metric
 * series: fills the cpu_*, mem_*, disk_* and net_* fields of every kind. */
void pm_phase_use_compute(const pm_analysis *a, struct pm_phase_stats *st);

#endif
