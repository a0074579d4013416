/* Small shared helpers of the analysis: string lists, median, thread pool. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "perfmon/mem.h"

int pm_strs_add(char ***arr, size_t *n, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int len = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (len < 0)
        return PM_ENOMEM;
    char **na = pm_realloc_array(*arr, *n + 1, sizeof **arr);
    if (!na) {
        free(s);
        return PM_ENOMEM;
    }
    *arr = na;
    na[(*n)++] = s;
    return 0;
}

void pm_strs_free(char **a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(a[i]);
    free(a);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double pm_median(double *x, size_t n)
{
    if (n == 0)
        return 0.0 / 0.0;
    qsort(x, n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

