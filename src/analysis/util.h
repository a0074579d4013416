/* util.h - small helpers of src/analysis (util.c).
 * Private to src/analysis. */
#ifndef PM_ANALYSIS_UTIL_H
#define PM_ANALYSIS_UTIL_H

#include <stddef.h>

/* Median of x[n] (sorted in place); NaN when empty. */
double pm_median(double *x, size_t n);

#endif
