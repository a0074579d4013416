/* The regression gate's statistics against hand-computed medians, MADs,
 * robust z-scores and verdicts (docs/archive.md, "check"). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/archive_check.h"

#define S PM_MAD_TO_SD
#define INF INFINITY

static int same(double a, double b)
{
    if (isinf(b))
        return a == b;
    if (isnan(b))
        return isnan(a);
    return fabs(a - b) < 1e-12 * (1 + fabs(b));
}

static void test_verdicts(void **state)
{
    (void)state;
    static const struct {
        size_t n, window;
        double v[12];
        int verdict;
        size_t used;
        double median, mad, z, change;
    } rows[] = {
        /* sorted 9 10 10 11 12: median 10; |dev| 0 0 1 1 2: MAD 1; 5 / 1.4826 > 3 */
        {6, 10, {10, 11, 9, 10, 12, 15}, PM_CHECK_REGRESSION, 5, 10, 1, 5 / S, 0.5},
        /* 4 / 1.4826 = 2.70: within the noise */
        {6, 10, {10, 11, 9, 10, 12, 14}, PM_CHECK_OK, 5, 10, 1, 4 / S, 0.4},
        /* faster is never a regression */
        {6, 10, {10, 11, 9, 10, 12, 2}, PM_CHECK_OK, 5, 10, 1, -8 / S, -0.8},
        /* a steady history (MAD 0): the minimum change decides, 4 % < 5 % ... */
        {5, 10, {5, 5, 5, 5, 5.2}, PM_CHECK_OK, 4, 5, 0, INF, 0.04},
        /* ... 6 % >= 5 % */
        {5, 10, {5, 5, 5, 5, 5.3}, PM_CHECK_REGRESSION, 4, 5, 0, INF, 0.06},
        /* unchanged */
        {5, 10, {5, 5, 5, 5, 5}, PM_CHECK_OK, 4, 5, 0, 0, 0},
        /* even count: median 2.5, |dev| 1.5 .5 .5 1.5: MAD 1 */
        {5, 10, {1, 2, 3, 4, 10}, PM_CHECK_REGRESSION, 4, 2.5, 1, 7.5 / S, 3},
        /* the window: only the last 5 before the latest (1 2 1 2 1: median 1, MAD 0) */
        {9, 5, {100, 100, 100, 1, 2, 1, 2, 1, 2.4}, PM_CHECK_REGRESSION, 5, 1, 0, INF, 1.4},
        /* the same with all 8: median 2, |dev| 98 98 98 1 0 1 0 1: MAD 1 */
        {9, 10, {100, 100, 100, 1, 2, 1, 2, 1, 2.4}, PM_CHECK_OK, 8, 2, 1, 0.4 / S, 0.2},
        /* too little history */
        {3, 10, {1, 1, 9}, PM_CHECK_SHORT, 2, NAN, NAN, NAN, NAN},
        {1, 10, {1}, PM_CHECK_SHORT, 0, NAN, NAN, NAN, NAN},
        {0, 10, {0}, PM_CHECK_SHORT, 0, NAN, NAN, NAN, NAN},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        pm_check_opts o;
        pm_check_opts_init(&o);
        o.window = rows[i].window;
        o.min_history = 3;
        pm_check_result r;
        pm_check_series(rows[i].v, rows[i].n, &o, &r);
        if (r.verdict != rows[i].verdict || r.n != rows[i].used ||
            !same(r.median, rows[i].median) || !same(r.mad, rows[i].mad) || !same(r.z, rows[i].z) ||
            !same(r.change, rows[i].change))
            fail_msg("row %zu: verdict %d n %zu median %g mad %g z %g change %g", i, r.verdict, r.n,
                     r.median, r.mad, r.z, r.change);
    }
}

/* Directions from the table: a throughput is worse when it falls, an
 * informational figure is never a regression, the absolute minimum. */
static void test_directions(void **state)
{
    (void)state;
    static const double up[] = {10, 11, 9, 10, 12, 15};  /* +50 %, z 3.37 */
    static const double down[] = {10, 11, 9, 10, 12, 5}; /* -50 %, z -3.37 */
    static const struct {
        const double *v;
        int better;
        double min_abs;
        int verdict;
    } rows[] = {
        {up, PM_CHECK_LOWER, 0, PM_CHECK_REGRESSION},
        {up, PM_CHECK_HIGHER, 0, PM_CHECK_OK},  /* more throughput: better */
        {up, PM_CHECK_NONE, 0, PM_CHECK_OK},    /* informational */
        {down, PM_CHECK_LOWER, 0, PM_CHECK_OK}, /* faster */
        {down, PM_CHECK_HIGHER, 0, PM_CHECK_REGRESSION},
        {down, PM_CHECK_NONE, 0, PM_CHECK_OK},
        {up, PM_CHECK_LOWER, 5, PM_CHECK_OK}, /* |15 - 10| = 5 is not above 5 */
        {up, PM_CHECK_LOWER, 4.9, PM_CHECK_REGRESSION},
        {down, PM_CHECK_HIGHER, 5, PM_CHECK_OK},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        pm_check_opts o;
        pm_check_opts_init(&o);
        o.better = rows[i].better;
        o.min_abs = rows[i].min_abs;
        pm_check_result r;
        pm_check_series(rows[i].v, 6, &o, &r);
        if (r.verdict != rows[i].verdict)
            fail_msg("row %zu: verdict %d, want %d", i, r.verdict, rows[i].verdict);
    }
}

static void test_thresholds(void **state)
{
    (void)state;
    static const double v[] = {10, 11, 9, 10, 12, 15}; /* z 3.37, +50 % */
    pm_check_opts o;
    pm_check_opts_init(&o);
    pm_check_result r;
    o.threshold = 3.5;
    pm_check_series(v, 6, &o, &r);
    assert_int_equal(r.verdict, PM_CHECK_OK);
    o.threshold = 3.3;
    pm_check_series(v, 6, &o, &r);
    assert_int_equal(r.verdict, PM_CHECK_REGRESSION);
    o.min_change = 0.6;
    pm_check_series(v, 6, &o, &r);
    assert_int_equal(r.verdict, PM_CHECK_OK);
    o.min_change = 0.05;
    o.min_history = 6;
    pm_check_series(v, 6, &o, &r);
    assert_int_equal(r.verdict, PM_CHECK_SHORT);
    assert_int_equal(r.n, 5);
    /* the input is not reordered */
    assert_true(v[0] == 10 && v[4] == 12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_thresholds),
        cmocka_unit_test(test_directions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
