/* order.h - ordering doubles: the one comparator for qsort and the one
 * median of the library (src/common/order.c).
 *
 * Ownership: nothing is allocated; pm_median sorts its argument in place. */
#ifndef PERFMON_ORDER_H
#define PERFMON_ORDER_H

#include <stddef.h>

/* qsort's comparator for ascending doubles: -1, 0 or 1.  A NaN compares
 * equal to everything, so callers sort finite values. */
int pm_cmp_double(const void *a, const void *b);
/* The median of sorted x[n], n >= 1: the middle value, or the mean of the
 * two middle ones. */
double pm_median_sorted(const double *x, size_t n);
/* Sort x[n] in place (pm_cmp_double) and return its median; NaN when n is
 * 0. */
double pm_median(double *x, size_t n);
/* Linear-interpolated quantile f in [0,1] of x[n] (reordered in place);
 * NaN when n is 0. */
double pm_quantile_select(double *x, size_t n, double f);

#endif
