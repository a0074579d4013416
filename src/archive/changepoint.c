/* Change points of an entry's history by a windowed rank test (see
 * archive_changepoint.h). */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/archive_changepoint.h"
#include "perfmon/mem.h"

/* Largest window: the work arrays live on the stack. */
#define CP_WINDOW_MAX 256

void pm_cp_opts_init(pm_cp_opts *o)
{
    o->window = 8;
    o->min_side = 4;
    o->z_min = 2.5;
    o->min_step = 0.05;
}

static double median(const double *x, size_t n, double *work)
{
    memcpy(work, x, n * sizeof *work);
    gsl_sort(work, 1, n);
    return gsl_stats_median_from_sorted_data(work, 1, n);
}

/* The split at i: fills c; returns 1 when it is a candidate. */
static int split(const double *v, size_t n, size_t i, const pm_cp_opts *o, size_t w, pm_cp *c)
{
    const double *b = v + (i > w ? i - w : 0), *a = v + i;
    size_t nb = i < w ? i : w, na = n - i < w ? n - i : w;
    if (nb < o->min_side || na < o->min_side)
        return 0;
    double u = 0;
    for (size_t x = 0; x < na; x++)
        for (size_t y = 0; y < nb; y++)
            u += a[x] > b[y] ? 1 : a[x] == b[y] ? 0.5 : 0;
    double mb = (double)nb, ma = (double)na;
    double sd = sqrt(mb * ma * (mb + ma + 1) / 12);
    double work[CP_WINDOW_MAX];
    c->at = i;
    c->before = nb;
    c->after = na;
    c->z = (u - mb * ma / 2) / sd;
    c->median_before = median(b, nb, work);
    c->median_after = median(a, na, work);
    double d = c->median_after - c->median_before;
    c->step = c->median_before != 0 ? d / fabs(c->median_before)
              : d != 0              ? copysign(INFINITY, d)
                                    : 0;
    c->gap = fabs(gsl_stats_mean(a, 1, na) - gsl_stats_mean(b, 1, nb));
    return fabs(c->z) >= o->z_min && fabs(c->step) >= o->min_step;
}

static int by_index(const void *x, const void *y)
{
    const pm_cp *a = x, *b = y;
    return (a->at > b->at) - (a->at < b->at);
}

int pm_cp_find(const double *v, size_t n, const pm_cp_opts *o, pm_cp **out, size_t *nout,
               pm_error *err)
{
    *out = NULL;
    *nout = 0;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return pm_error_set(err, PM_EFORMAT, "change points: value %zu is not finite", i + 1);
    size_t w = o->window < CP_WINDOW_MAX ? o->window : CP_WINDOW_MAX;
    if (w < 1 || n < 2)
        return 0;
    pm_cp *c = pm_alloc_array(n, sizeof *c);
    if (!c)
        return pm_error_set(err, PM_ENOMEM, "change points: out of memory");
    size_t nc = 0;
    for (size_t i = 1; i < n; i++)
        if (split(v, n, i, o, w, &c[nc]))
            nc++;
    /* Greedy: the strongest candidate first (of equal rank statistics, the
     * one whose sides' means differ most: a complete separation scores
     * the same one run early or late), its neighbourhood dropped;
     * state[k]: 0 a candidate, 1 taken, 2 dropped. */
    unsigned char *state = calloc(nc ? nc : 1, 1);
    if (!state) {
        free(c);
        return pm_error_set(err, PM_ENOMEM, "change points: out of memory");
    }
    for (;;) {
        size_t best = nc;
        for (size_t k = 0; k < nc; k++)
            if (state[k] == 0 && (best == nc || fabs(c[k].z) > fabs(c[best].z) ||
                                  (fabs(c[k].z) == fabs(c[best].z) && c[k].gap > c[best].gap)))
                best = k;
        if (best == nc)
            break;
        state[best] = 1;
        for (size_t k = 0; k < nc; k++) {
            size_t d = c[k].at > c[best].at ? c[k].at - c[best].at : c[best].at - c[k].at;
            if (state[k] == 0 && d < w)
                state[k] = 2;
        }
    }
    size_t kept = 0;
    for (size_t k = 0; k < nc; k++)
        if (state[k] == 1)
            c[kept++] = c[k];
    free(state);
    if (kept == 0) {
        free(c);
        return 0;
    }
    qsort(c, kept, sizeof *c, by_index); /* already in order: kept in index order */
    *out = c;
    *nout = kept;
    return 0;
}
