/* Ordering doubles (order.h): the comparator every sort of doubles uses,
 * and the median of a sorted array. */
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
