/* times.h - the time axes (times.c): every host's, and one
 * host's again (the stream mode).
 * Private to src/analysis. */
#ifndef PM_ANALYSIS_TIMES_H
#define PM_ANALYSIS_TIMES_H

#include "align.h"
#include "perfmon/analysis.h"

/* The common grid's point count; 0 when too large. */
size_t pm_grid_points(const pm_analysis *a);
/* Each host's time axis, window and grid points, and the common grid
 * (times.c); under --stream the hosts are read again for their times. */
int pm_times_setup(pm_analysis *a, pm_error *err) PM_WUR;
/* Host ho's time axis, window (a->win_lo, a->win_hi) and, with ngrid, its
 * grid points, from its profile ho->prof, in malloc'd ho->t, ho->idx and
 * ho->grid_k (pm_host_times_free); as pm_times_setup sets them up. */
int pm_host_times(const pm_analysis *a, pm_host *ho, size_t ngrid) PM_WUR;
void pm_host_times_free(pm_host *ho);

#endif
