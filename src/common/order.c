/* Ordering doubles (order.h): the comparator every sort of doubles uses,
 * the median of a sorted array, and a quantile by selection (GSL). */
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

#include "perfmon/invariant.h"
#include "perfmon/order.h"

int pm_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double pm_median_sorted(const double *x, size_t n)
{
    PM_ASSERT(n >= 1);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

double pm_median(double *x, size_t n)
{
    if (n == 0)
        return 0.0 / 0.0;
    qsort(x, n, sizeof *x, pm_cmp_double);
    return pm_median_sorted(x, n);
}

double pm_quantile_select(double *x, size_t n, double f)
{
    if (n == 0)
        return NAN;
    if (n == 1)
        return x[0];
    double h = (double)(n - 1) * f;
    size_t lo = (size_t)floor(h);
    if (lo >= n - 1)
        return gsl_stats_max(x, 1, n);
    double a = gsl_stats_select(x, 1, n, lo);
    /* After selection everything above index lo is >= a: the next order
     * statistic is the smallest of them. */
    double b = gsl_stats_min(x + lo + 1, 1, n - lo - 1);
    return a + (h - (double)lo) * (b - a);
}
