/* archive_changepoint.h - where an entry's history changed level, for
 * `perfmon-archive history` and `plot` (docs/archive.md, "Change points").
 *
 * A windowed rank test: at every split i of the series (value i the first
 * of the new level) the up to `window` values before it are compared with
 * the up to `window` values from it on by the Mann-Whitney U statistic,
 * standardised to z = (U - nb na / 2) / sqrt(nb na (nb + na + 1) / 12).
 * A split is a candidate when |z| >= z_min, both sides hold at least
 * min_side values and the step between the sides' medians,
 * (median after - median before) / |median before|, is at least min_step
 * in size.  The candidate with the largest |z| is taken (of equal |z|,
 * the one whose sides' means differ most), candidates less
 * than `window` values from it are dropped, and so on.  Ranks make one
 * heavy-tailed value count as one value, whatever its size; the step
 * filter keeps a significant but tiny drift from being reported.
 *
 * Ownership: pm_cp_find returns an array the caller frees with free().
 */
#ifndef PERFMON_ARCHIVE_CHANGEPOINT_H
#define PERFMON_ARCHIVE_CHANGEPOINT_H

#include <stddef.h>

#include "perfmon/error.h"

typedef struct pm_cp_opts {
    size_t window;   /* values compared on each side (default 8) */
    size_t min_side; /* fewest values on a side (default 4) */
    double z_min;    /* standardised U at least this in size (default 2.5) */
    double min_step; /* relative step at least this in size (default 0.05) */
} pm_cp_opts;

typedef struct pm_cp {
    size_t at;            /* index of the first value of the new level */
    size_t before, after; /* values compared on each side */
    double median_before, median_after;
    double step; /* (median_after - median_before) / |median_before| */
    double z;    /* the standardised U (> 0: the level went up) */
    double gap;  /* |mean after - mean before|: breaks ties of |z| */
} pm_cp;

void pm_cp_opts_init(pm_cp_opts *o);

/* The change points of v[0..n) (oldest first; non-finite values are
 * refused as PM_EINVAL), in index order, into *out (NULL when none) and
 * *nout.  Returns 0, PM_EFORMAT or PM_ENOMEM with err set. */
int pm_cp_find(const double *v, size_t n, const pm_cp_opts *o, pm_cp **out, size_t *nout,
               pm_error *err) PM_WUR;

#endif
