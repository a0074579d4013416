/* The regression gate's statistics with GSL (see archive_check.h). */
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <string.h>

#include "perfmon/archive_check.h"

/* Largest window: the work arrays live on the stack. */
#define WINDOW_MAX 4096

void pm_check_opts_init(pm_check_opts *o)
{
    o->window = 10;
    o->min_history = 4;
    o->threshold = 3.0;
    o->min_change = 0.05;
    o->min_abs = 0;
    o->better = PM_CHECK_LOWER;
}

void pm_check_series(const double *v, size_t n, const pm_check_opts *o, pm_check_result *r)
{
    memset(r, 0, sizeof *r);
    r->verdict = PM_CHECK_SHORT;
    r->latest = n ? v[n - 1] : NAN;
    r->median = r->mad = r->z = r->change = NAN;
    if (n == 0)
        return;
    size_t w = o->window < WINDOW_MAX ? o->window : WINDOW_MAX;
    size_t k = n - 1 < w ? n - 1 : w;
    r->n = k;
    if (k == 0 || k < o->min_history)
        return;
    double hist[WINDOW_MAX], work[WINDOW_MAX];
    memcpy(hist, v + (n - 1 - k), k * sizeof *hist);
    r->mad = gsl_stats_mad0(hist, 1, k, work);
    r->median = gsl_stats_median(hist, 1, k); /* sorts hist: after the MAD */
    double d = r->latest - r->median, s = PM_MAD_TO_SD * r->mad;
    r->z = s > 0 ? d / s : (d > 0 ? INFINITY : d < 0 ? -INFINITY : 0);
    r->change = r->median != 0 ? d / fabs(r->median) : (d > 0 ? INFINITY : d < 0 ? -INFINITY : 0);
    /* Worse is up for lower-is-better figures, down for higher-is-better
     * ones; an informational figure is never a regression. */
    double sign = o->better == PM_CHECK_LOWER ? 1 : o->better == PM_CHECK_HIGHER ? -1 : 0;
    r->verdict = sign != 0 && sign * d > 0 && sign * r->z > o->threshold &&
                         sign * r->change >= o->min_change && fabs(d) > o->min_abs
                     ? PM_CHECK_REGRESSION
                     : PM_CHECK_OK;
}
