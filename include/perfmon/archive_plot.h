/* archive_plot.h - `perfmon-archive plot`: an entry's history drawn with
 * Cairo (src/render/plot.c), every run a point, the runs that the check
 * of archive_check.h finds beyond their noise (each judged alone against
 * the runs before it) ringed in red, and the change points of
 * archive_changepoint.h as a level line with a shaded, labelled band at
 * each step.
 *
 * Ownership: everything is borrowed.
 */
#ifndef PERFMON_ARCHIVE_PLOT_H
#define PERFMON_ARCHIVE_PLOT_H

#include <stddef.h>

#include "perfmon/archive_changepoint.h"
#include "perfmon/archive_check.h"
#include "perfmon/archive_store.h"
#include "perfmon/error.h"

/* The kind of file path names by its ending (any case): 'p' ".png",
 * 'd' ".pdf", 's' ".svg", 0 none of them. */
int pm_arch_plot_kind(const char *path);

/* Write the history of pts (one entry, in start order) to path: a PNG,
 * PDF or SVG by its ending (anything else is PM_EUSAGE).  The y axis is labelled
 * "entry (unit)"; o carries the entry's direction; runs are marked only
 * when the entry is gated.  cps[0..ncp): the change points of pts (their
 * at indexes pts).  *nregressions (may be NULL) receives the number of
 * points marked. */
int pm_arch_plot(const char *path, const char *test, const char *entry, const char *unit,
                 const pm_store_point *pts, size_t n, const pm_check_opts *o, int gated,
                 const pm_cp *cps, size_t ncp, size_t *nregressions, pm_error *err) PM_WUR;

#endif
