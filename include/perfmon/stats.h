/* stats.h - statistics of one series (time-weighted mean, extremes with
 * their time, percentiles, standard deviation) and of sets of series.
 *
 * NaN points are left out of every figure.  Percentiles interpolate
 * linearly between order statistics (numpy's default), computed by
 * selection (GSL gsl_stats_select), not by sorting.
 */
#ifndef PERFMON_STATS_H
#define PERFMON_STATS_H

#include <stddef.h>

#include "perfmon/order.h"

/* How a point is weighted in the time-weighted mean. */
enum pm_weighting {
    PM_W_TRAPEZOID = 0, /* gauges: linear between consecutive valid points */
    PM_W_STEP = 1,      /* rates: value i covers (t[i-1], t[i]] */
    PM_W_NONE = 2       /* arithmetic mean (SKA compatibility) */
};

typedef struct pm_stats {
    size_t n;      /* points */
    size_t nvalid; /* finite points used */
    double mean;   /* time-weighted (see enum pm_weighting) */
    double amean;  /* arithmetic mean of the valid points */
    double min, max;
    double t_min, t_max;    /* time (s since the epoch) of the first min / max */
    int host_min, host_max; /* host index of min / max; -1 when not known */
    double p50, p95;
    double sd;       /* sample standard deviation (n-1), NaN below 2 points */
    double duration; /* seconds between the first and last valid point */
    double integral; /* the weighted sum (mean * weight), in value*s */
} pm_stats;

/* Compute s over t[n], v[n].  scratch must hold n doubles (its contents
 * are destroyed).  All fields are NaN (counts 0) when no point is valid. */
void pm_stats_compute(const double *t, const double *v, size_t n, int weighting, double *scratch,
                      pm_stats *s);

/* Sample standard deviation (n-1) of x[n] around its mean; NaN if n < 2. */
double pm_sd(const double *x, size_t n, double mean);

/* Both p50 and p95 of x[n] (reordered; no NaN), exactly, as
 * pm_quantile_select would give them. */
void pm_p50_p95(double *x, size_t n, double *p50, double *p95);
/* The same when the smallest and largest of x are known. */
void pm_p50_p95_range(double *x, size_t n, double min, double max, double *p50, double *p95);

/* Least-squares slope of v over t (value per second) over the finite
 * points, without copying them; *r2 gets the coefficient of determination.
 * Returns 0, or -1 with fewer than 3 valid points. */
int pm_slope(const double *t, const double *v, size_t n, double *slope, double *r2);

#endif
