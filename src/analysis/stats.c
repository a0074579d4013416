/* Series statistics (docs/analysis.md, "Statistics"). */
#include "perfmon/stats.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

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

void pm_stats_compute(const double *t, const double *v, size_t n, int weighting,
                      double *scratch, pm_stats *s)
{
    s->n = n;
    s->nvalid = 0;
    s->mean = s->amean = s->min = s->max = s->t_min = s->t_max = NAN;
    s->p50 = s->p95 = s->sd = NAN;
    s->duration = 0;
    s->integral = 0;
    s->host_min = s->host_max = -1;
    size_t m = 0;
    double sum = 0, wsum = 0, wtot = 0;
    double first_t = NAN, last_t = NAN;
    size_t prev = (size_t)-1; /* index of the previous valid point */
    for (size_t i = 0; i < n; i++) {
        double x = v[i];
        if (isnan(x))
            continue;
        scratch[m++] = x;
        sum += x;
        if (isnan(s->min) || x < s->min) {
            s->min = x;
            s->t_min = t[i];
        }
        if (isnan(s->max) || x > s->max) {
            s->max = x;
            s->t_max = t[i];
        }
        if (isnan(first_t))
            first_t = t[i];
        last_t = t[i];
        if (weighting == PM_W_STEP && i > 0) {
            double dt = t[i] - t[i - 1];
            if (dt > 0) {
                wsum += x * dt;
                wtot += dt;
            }
        } else if (weighting == PM_W_TRAPEZOID && prev != (size_t)-1 && prev == i - 1) {
            double dt = t[i] - t[prev];
            if (dt > 0) {
                wsum += (x + v[prev]) / 2 * dt;
                wtot += dt;
            }
        }
        prev = i;
    }
    s->nvalid = m;
    if (m == 0)
        return;
    s->amean = sum / (double)m;
    if (wtot > 0 && weighting != PM_W_NONE) {
        s->mean = wsum / wtot;
        s->integral = wsum;
    } else {
        s->mean = s->amean;
        s->integral = s->amean * (last_t - first_t);
    }
    s->duration = last_t - first_t;
    if (m > 1)
        s->sd = pm_sd(scratch, m, s->amean);
    pm_p50_p95(scratch, m, &s->p50, &s->p95);
}

/* The 0.95 order statistics lie above the median's, so the second
 * selection only scans the upper part that the first one left. */
void pm_p50_p95(double *x, size_t n, double *p50, double *p95)
{
    *p50 = *p95 = NAN;
    if (n == 0)
        return;
    if (n < 4) {
        *p50 = pm_quantile_select(x, n, 0.50);
        *p95 = pm_quantile_select(x, n, 0.95);
        return;
    }
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
