/* Series statistics (docs/analysis.md, "Statistics"). */
#include "perfmon/stats.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/mem.h"

/* Two passes in double: gsl_stats_sd accumulates in long double (x87),
 * which made it the single largest cost of a big analysis; with the mean
 * known, the second pass is as accurate for these magnitudes. */
double pm_sd(const double *x, size_t n, double mean)
{
    if (n < 2)
        return NAN;
    double ss = 0, comp = 0;
    for (size_t i = 0; i < n; i++) {
        double d = x[i] - mean;
        ss += d * d;
        comp += d;
    }
    /* corrected two-pass formula (Chan, Golub, LeVeque) */
    return sqrt((ss - comp * comp / (double)n) / (double)(n - 1));
}

/* The sums of pm_stats_compute over the valid points, for one weighting
 * (a constant where it is inlined, so that the loop has no branch on it),
 * in locals: written through s, every store to scratch could change them. */
typedef struct stats_sums {
    size_t m;
    double sum, wsum, wtot, min, max, t_min, t_max, first_t, last_t;
} stats_sums;

static inline __attribute__((always_inline)) void stats_sums_of(const double *t, const double *v,
                                                                size_t n, int weighting,
                                                                double *scratch, stats_sums *o)
{
    size_t i = 0;
    while (i < n && isnan(v[i]))
        i++;
    if (i == n)
        return;
    double x = v[i];
    size_t m = 0, prev = i;
    double sum = 0, wsum = 0, wtot = 0, min = x, max = x, t_min = t[i], t_max = t[i];
    double first_t = t[i];
    /* the first valid point: as the loop below would take it */
    scratch[m++] = x;
    sum += x;
    if (weighting == PM_W_STEP && i > 0) {
        double dt = t[i] - t[i - 1];
        if (dt > 0) {
            wsum += x * dt;
            wtot += dt;
        }
    }
    for (i++; i < n; i++) {
        x = v[i];
        if (isnan(x))
            continue;
        scratch[m++] = x;
        sum += x;
        if (x < min) {
            min = x;
            t_min = t[i];
        }
        if (x > max) {
            max = x;
            t_max = t[i];
        }
        if (weighting == PM_W_STEP) {
            double dt = t[i] - t[i - 1];
            if (dt > 0) {
                wsum += x * dt;
                wtot += dt;
            }
        } else if (weighting == PM_W_TRAPEZOID && prev == i - 1) {
            double dt = t[i] - t[prev];
            if (dt > 0) {
                wsum += (x + v[prev]) / 2 * dt;
                wtot += dt;
            }
        }
        prev = i;
    }
    *o = (stats_sums){m, sum, wsum, wtot, min, max, t_min, t_max, first_t, t[prev]};
}

void pm_stats_compute(const double *t, const double *v, size_t n, int weighting, double *scratch,
                      pm_stats *s)
{
    s->n = n;
    s->nvalid = 0;
    s->mean = s->amean = s->min = s->max = s->t_min = s->t_max = NAN;
    s->p50 = s->p95 = s->sd = NAN;
    s->duration = 0;
    s->integral = 0;
    s->host_min = s->host_max = -1;
    stats_sums o = {0};
    if (weighting == PM_W_STEP)
        stats_sums_of(t, v, n, PM_W_STEP, scratch, &o);
    else if (weighting == PM_W_TRAPEZOID)
        stats_sums_of(t, v, n, PM_W_TRAPEZOID, scratch, &o);
    else
        stats_sums_of(t, v, n, PM_W_NONE, scratch, &o);
    size_t m = o.m;
    s->nvalid = m;
    if (m == 0)
        return;
    s->min = o.min;
    s->max = o.max;
    s->t_min = o.t_min;
    s->t_max = o.t_max;
    s->amean = o.sum / (double)m;
    if (o.wtot > 0 && weighting != PM_W_NONE) {
        s->mean = o.wsum / o.wtot;
        s->integral = o.wsum;
    } else {
        s->mean = s->amean;
        s->integral = s->amean * (o.last_t - o.first_t);
    }
    s->duration = o.last_t - o.first_t;
    if (m > 1)
        s->sd = pm_sd(scratch, m, s->amean);
    pm_p50_p95_range(scratch, m, s->min, s->max, &s->p50, &s->p95);
}

/* The 0.95 order statistics lie above the median's, so the second
 * selection only scans the upper part that the first one left. */
static void p50_p95_select(double *x, size_t n, double *p50, double *p95)
{
    double h50 = (double)(n - 1) * 0.5, h95 = (double)(n - 1) * 0.95;
    size_t lo = (size_t)floor(h50), hi = (size_t)floor(h95);
    double a = gsl_stats_select(x, 1, n, lo);
    /* x[lo+1..n) >= a now */
    double *up = x + lo + 1;
    size_t nu = n - lo - 1;
    double b = gsl_stats_min(up, 1, nu);
    *p50 = a + (h50 - (double)lo) * (b - a);
    if (hi == lo) {
        *p95 = a + (h95 - (double)lo) * (b - a);
        return;
    }
    size_t k = hi - lo - 1; /* index of order statistic hi inside up[] */
    double c = gsl_stats_select(up, 1, nu, k);
    double d = k + 1 < nu ? gsl_stats_min(up + k + 1, 1, nu - k - 1) : c;
    *p95 = c + (h95 - (double)hi) * (d - c);
}

/* Exact order statistics by histogram (two passes that stream the values,
 * instead of quickselect's partitioning passes): the values are counted
 * into HBINS bins between min and max (the bin is a monotone function of
 * the value, so bins are ordered); the bins holding the wanted ranks are
 * known from the counts; their values alone are then gathered and
 * selected among.  A bin whose values are all equal needs no selection,
 * so a series that sits at one value most of the time costs no more than
 * one that varies.  Same results as p50_p95_select, bit for bit. */
#define HBINS 4096

typedef struct hsel {
    double lo, scale;
    uint32_t count[HBINS];
} hsel;

static inline size_t hbin(const hsel *h, double v)
{
    size_t b = (size_t)((v - h->lo) * h->scale);
    return b < HBINS ? b : HBINS - 1;
}

/* Order statistic r (0-based) of x[n], and the next one (r + 1 < n). */
typedef struct want {
    size_t r;
    size_t bin, bin_next; /* bins of ranks r and r + 1 */
    double v, v_next;
} want;

static int p50_p95_hist(double *x, size_t n, double min, double max, double *p50, double *p95)
{
    static _Thread_local hsel h;
    double range = max - min;
    h.lo = min;
    h.scale = (double)HBINS / range;
    if (!(range > 0) || !isfinite(h.scale) || !(h.scale > 0) || n > UINT32_MAX)
        return -1;
    memset(h.count, 0, sizeof h.count);
    for (size_t i = 0; i < n; i++)
        h.count[hbin(&h, x[i])]++;
    double h50 = (double)(n - 1) * 0.5, h95 = (double)(n - 1) * 0.95;
    want w[2] = {{.r = (size_t)floor(h50)}, {.r = (size_t)floor(h95)}};
    /* the bins of ranks r and r + 1, and how many values lie below each */
    size_t below[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        size_t cum = 0, b = 0;
        while (cum + h.count[b] <= w[k].r)
            cum += h.count[b++];
        w[k].bin = b;
        below[k] = cum;
        size_t b2 = b;
        if (w[k].r + 1 >= cum + h.count[b]) { /* r is the last of its bin */
            b2 = b + 1;
            while (b2 < HBINS && h.count[b2] == 0)
                b2++;
        }
        w[k].bin_next = b2 < HBINS ? b2 : b; /* r + 1 == n: unused */
    }
    /* One pass: the smallest and largest value of each bin involved, and
     * the values of the rank bins gathered at the front of x. */
    size_t bins[4] = {w[0].bin, w[0].bin_next, w[1].bin, w[1].bin_next};
    double bmin[4], bmax[4];
    for (int j = 0; j < 4; j++)
        bmin[j] = INFINITY, bmax[j] = -INFINITY;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        size_t b = hbin(&h, v);
        if (b != bins[0] && b != bins[1] && b != bins[2] && b != bins[3])
            continue;
        for (int j = 0; j < 4; j++)
            if (b == bins[j]) {
                if (v < bmin[j])
                    bmin[j] = v;
                if (v > bmax[j])
                    bmax[j] = v;
            }
        if (b == w[0].bin || b == w[1].bin)
            x[m++] = v;
    }
    /* The lower rank bin's values first, then the upper one's. */
    size_t nlow = m;
    if (w[0].bin != w[1].bin) {
        size_t i = 0, j = m;
        while (i < j) {
            if (hbin(&h, x[i]) == w[0].bin) {
                i++;
            } else {
                double t = x[i];
                x[i] = x[--j];
                x[j] = t;
            }
        }
        nlow = i;
    }
    for (int k = 0; k < 2; k++) {
        double *reg = k == 0 || w[0].bin == w[1].bin ? x : x + nlow;
        size_t nreg = k == 0 || w[0].bin == w[1].bin ? nlow : m - nlow;
        size_t rr = w[k].r - below[k]; /* rank inside the bin */
        int jb = k * 2, jn = k * 2 + 1;
        if (bmin[jb] == bmax[jb]) {
            w[k].v = bmin[jb];
            w[k].v_next = w[k].bin_next == w[k].bin ? bmin[jb] : bmin[jn];
        } else {
            w[k].v = gsl_stats_select(reg, 1, nreg, rr);
            if (w[k].bin_next != w[k].bin)
                w[k].v_next = bmin[jn];
            else
                w[k].v_next = gsl_stats_min(reg + rr + 1, 1, nreg - rr - 1);
        }
        if (w[k].r + 1 >= n)
            w[k].v_next = w[k].v;
    }
    *p50 = w[0].v + (h50 - (double)w[0].r) * (w[0].v_next - w[0].v);
    *p95 = w[1].v + (h95 - (double)w[1].r) * (w[1].v_next - w[1].v);
    return 0;
}

void pm_p50_p95_range(double *x, size_t n, double min, double max, double *p50, double *p95)
{
    *p50 = *p95 = NAN;
    if (n == 0)
        return;
    if (n < 4) {
        *p50 = pm_quantile_select(x, n, 0.50);
        *p95 = pm_quantile_select(x, n, 0.95);
        return;
    }
    if (min == max) {
        *p50 = *p95 = min;
        return;
    }
    /* Below a few thousand values the histogram's fixed cost dominates. */
    if (n < 4 * HBINS || p50_p95_hist(x, n, min, max, p50, p95) != 0)
        p50_p95_select(x, n, p50, p95);
}

void pm_p50_p95(double *x, size_t n, double *p50, double *p95)
{
    double min = INFINITY, max = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (x[i] < min)
            min = x[i];
        if (x[i] > max)
            max = x[i];
    }
    pm_p50_p95_range(x, n, min, max, p50, p95);
}

int pm_slope(const double *t, const double *v, size_t n, double *slope, double *r2)
{
    /* Centred sums in two passes over the points in place: the same
     * estimate as gsl_fit_linear on copies of them, without copying a
     * series (two fresh arrays per call were most of a big analysis's
     * page faults). */
    size_t m = 0;
    double t0 = NAN, sx = 0, sy = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]) && isfinite(t[i])) {
            if (m == 0)
                t0 = t[i];
            sx += t[i] - t0;
            sy += v[i];
            m++;
        }
    if (m < 3)
        return -1;
    double mx = sx / (double)m, my = sy / (double)m;
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]) && isfinite(t[i])) {
            double dx = t[i] - t0 - mx, dy = v[i] - my;
            sxx += dx * dx;
            sxy += dx * dy;
            syy += dy * dy;
        }
    if (!(sxx > 0))
        return -1;
    double c1 = sxy / sxx;
    if (!isfinite(c1))
        return -1;
    *slope = c1;
    /* 1 - residual / total sum of squares; the residual is syy - sxy^2/sxx */
    *r2 = syy > 0 ? sxy * sxy / (sxx * syy) : 0.0;
    return 0;
}
