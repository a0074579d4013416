/* Statistics against hand-computed values. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/stats.h"

#define X NAN
static void close_to(double a, double b, int line)
{
    if (!(fabs(a - b) < 1e-9 * (1 + fabs(b))))
        fail_msg("line %d: got %.17g, want %.17g", line, a, b);
}
#define CLOSE(a, b) close_to((a), (b), __LINE__)

static void test_weighted_means(void **state)
{
    (void)state;
    static const struct {
        int w;
        size_t n;
        double t[6], v[6];
        double mean, amean, min, t_min, max, t_max;
        size_t nvalid;
    } rows[] = {
        /* gauge, uneven spacing: (0+2)/2*1 + (2+2)/2*2 = 5 over 3 s */
        {PM_W_TRAPEZOID, 3, {0, 1, 3}, {0, 2, 2}, 5.0 / 3, 4.0 / 3, 0, 0, 2, 1, 3},
        /* rate: value i covers (t[i-1], t[i]]: (10*1 + 1*2) / 3 */
        {PM_W_STEP, 3, {0, 1, 3}, {X, 10, 1}, 4, 5.5, 1, 3, 10, 1, 2},
        /* NaN breaks the trapezoids; no pair left: arithmetic mean */
        {PM_W_TRAPEZOID, 3, {0, 1, 2}, {1, X, 3}, 2, 2, 1, 0, 3, 2, 2},
        /* SKA: arithmetic, first (0) counts */
        {PM_W_NONE, 4, {0, 1, 5, 6}, {0, 4, 4, 8}, 4, 4, 0, 0, 8, 6, 4},
        /* ties: the first occurrence gives the time */
        {PM_W_TRAPEZOID, 4, {0, 1, 2, 3}, {5, 1, 5, 1}, 3, 3, 1, 1, 5, 0, 4},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        double scratch[6];
        pm_stats s;
        pm_stats_compute(rows[r].t, rows[r].v, rows[r].n, rows[r].w, scratch, &s);
        assert_int_equal(s.nvalid, rows[r].nvalid);
        CLOSE(s.mean, rows[r].mean);
        CLOSE(s.amean, rows[r].amean);
        CLOSE(s.min, rows[r].min);
        CLOSE(s.t_min, rows[r].t_min);
        CLOSE(s.max, rows[r].max);
        CLOSE(s.t_max, rows[r].t_max);
        assert_int_equal(s.host_min, -1);
    }
}

static void test_percentiles_sd(void **state)
{
    (void)state;
    double t[] = {0, 1, 2, 3, 4}, v[] = {4, X, 1, 3, 2}, scratch[5];
    pm_stats s;
    pm_stats_compute(t, v, 5, PM_W_TRAPEZOID, scratch, &s);
    CLOSE(s.p50, 2.5);          /* numpy.percentile([1,2,3,4], 50) */
    CLOSE(s.p95, 3.85);         /* 3 + 0.85 * (4 - 3) */
    CLOSE(s.sd, sqrt(5.0 / 3)); /* sample sd of 1..4 */
    CLOSE(s.duration, 4);

    double x[] = {7};
    CLOSE(pm_quantile_select(x, 1, 0.95), 7);
    double y[] = {9, 1, 5};
    CLOSE(pm_quantile_select(y, 3, 1.0), 9);
    double z[] = {9, 1, 5};
    CLOSE(pm_quantile_select(z, 3, 0.0), 1);
    assert_true(isnan(pm_quantile_select(z, 0, 0.5)));
    assert_true(isnan(pm_sd(x, 1, 7)));
    double big[] = {1e9 + 1, 1e9 + 2, 1e9 + 3};
    CLOSE(pm_sd(big, 3, 1e9 + 2), 1.0); /* no cancellation at large offsets */
}

/* pm_p50_p95 agrees with two independent selections on awkward sizes. */
static void test_p50_p95_agree(void **state)
{
    (void)state;
    for (size_t n = 1; n < 60; n++) {
        double a[60], b[60], c[60];
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] = c[i] = (double)((i * 37 + 11) % 17) + (i % 3) * 0.25;
        double p50, p95;
        pm_p50_p95(a, n, &p50, &p95);
        CLOSE(p50, pm_quantile_select(b, n, 0.50));
        CLOSE(p95, pm_quantile_select(c, n, 0.95));
    }
}

/* Big inputs take the histogram path: it must agree with selection bit
 * for bit on every shape of data, ties at the ranks included. */
static void test_p50_p95_big(void **state)
{
    (void)state;
    enum { N = 100003 };
    static double a[N], b[N], c[N];
    unsigned seed = 12345;
    for (int shape = 0; shape < 8; shape++) {
        size_t n = shape % 2 ? N : 20000;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            double r = (double)(seed >> 8) / 16777216.0;
            double v;
            switch (shape) {
            case 0: v = r; break;                                 /* uniform */
            case 1: v = r < 0.9 ? 0 : r * 100; break;             /* mostly one value */
            case 2: v = (double)(i % 7); break;                   /* few values, ties */
            case 3: v = r < 0.999 ? r : 1e12 * r; break;          /* far outliers */
            case 4: v = (double)i; break;                         /* sorted */
            case 5: v = -(double)i * 0.5; break;                  /* reverse sorted */
            case 6: v = r < 0.5 ? 1.0 : 2.0; break;               /* two values */
            default: v = exp(r * 40) * (r < 0.5 ? -1 : 1); break; /* wide, both signs */
            }
            a[i] = b[i] = c[i] = v;
        }
        double p50, p95;
        pm_p50_p95(a, n, &p50, &p95);
        double w50 = pm_quantile_select(b, n, 0.50), w95 = pm_quantile_select(c, n, 0.95);
        if (p50 != w50 || p95 != w95)
            fail_msg("shape %d: p50 %.17g want %.17g, p95 %.17g want %.17g", shape, p50, w50, p95,
                     w95);
    }
}

static void test_empty_and_all_nan(void **state)
{
    (void)state;
    double t[] = {0, 1}, v[] = {X, X}, scratch[2];
    pm_stats s;
    pm_stats_compute(t, v, 2, PM_W_STEP, scratch, &s);
    assert_int_equal(s.nvalid, 0);
    assert_true(isnan(s.mean) && isnan(s.max) && isnan(s.p50) && isnan(s.sd));
    pm_stats_compute(NULL, NULL, 0, PM_W_STEP, scratch, &s);
    assert_int_equal(s.n, 0);
}

static void test_slope(void **state)
{
    (void)state;
    double t[] = {100, 101, 102, 103, 104}, v[] = {1, 3, X, 7, 9}, slope, r2;
    assert_int_equal(pm_slope(t, v, 5, &slope, &r2), 0);
    CLOSE(slope, 2);
    CLOSE(r2, 1);
    double w[] = {1, 2, 1, 2, 1};
    assert_int_equal(pm_slope(t, w, 5, &slope, &r2), 0);
    assert_true(r2 < 0.2);
    assert_int_equal(pm_slope(t, v, 2, &slope, &r2), -1);
    /* An imperfect fit, by hand: Sxx = 5, Sxy = 5.5, Syy = 8.75. */
    double t2[] = {0, 1, 2, 3}, y[] = {1, 3, 2, 5};
    assert_int_equal(pm_slope(t2, y, 4, &slope, &r2), 0);
    CLOSE(slope, 1.1);
    CLOSE(r2, 5.5 * 5.5 / (5 * 8.75));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weighted_means),    cmocka_unit_test(test_percentiles_sd),
        cmocka_unit_test(test_p50_p95_agree),     cmocka_unit_test(test_p50_p95_big),
        cmocka_unit_test(test_empty_and_all_nan), cmocka_unit_test(test_slope),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
