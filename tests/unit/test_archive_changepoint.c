/* Change points by the windowed rank test (docs/archive.md, "Change
 * points"): steps found where they are, with their size and sides; flat,
 * one-outlier, tiny-step and short series give none. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "perfmon/archive_changepoint.h"

/* A repeatable 1 % jitter around base. */
static double jitter(size_t i, double base)
{
    static const double d[] = {0, 0.01, -0.01, 0.005, -0.005, 0.008, -0.008};
    return base * (1 + d[i % 7]);
}

static void test_series(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        size_t n;
        size_t step_at;  /* first index of the new level (0: none) */
        double factor;   /* the new level / the old */
        size_t outlier;  /* index of one +30 % value (0: none) */
        size_t step2_at; /* a second step (0: none) */
        size_t want;     /* change points expected */
        size_t at[2];
        double step[2];
    } rows[] = {
        {"flat", 30, 0, 1, 0, 0, 0, {0}, {0}},
        {"one +30 % outlier", 30, 0, 1, 12, 0, 0, {0}, {0}},
        {"+10 % from 12 on", 30, 12, 1.10, 0, 0, 1, {12}, {0.10}},
        {"-20 % from 20 on (faster)", 30, 20, 0.80, 0, 0, 1, {20}, {-0.20}},
        {"+3 %: below the smallest step", 30, 12, 1.03, 0, 0, 0, {0}, {0}},
        {"+10 % with 4 runs after it", 16, 12, 1.10, 0, 0, 1, {12}, {0.10}},
        {"+10 % with 3 runs after it: too few", 15, 12, 1.10, 0, 0, 0, {0}, {0}},
        {"+10 % at 10 and again at 25", 40, 10, 1.10, 0, 25, 2, {10, 25}, {0.10, 0.10}},
        /* a high value just before a step reads as its first run */
        {"+10 % with a +30 % run just before", 30, 12, 1.10, 11, 0, 1, {11}, {0.10}},
        {"too short", 5, 0, 1, 0, 0, 0, {0}, {0}},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        double v[64];
        for (size_t i = 0; i < rows[r].n; i++) {
            double f = rows[r].step_at && i >= rows[r].step_at ? rows[r].factor : 1;
            if (rows[r].step2_at && i >= rows[r].step2_at)
                f *= rows[r].factor;
            v[i] = jitter(i, 2.0) * f * (rows[r].outlier && i == rows[r].outlier ? 1.3 : 1);
        }
        pm_cp_opts o;
        pm_cp_opts_init(&o);
        pm_cp *cp = NULL;
        size_t n = 99;
        pm_error err;
        pm_error_clear(&err);
        assert_int_equal(pm_cp_find(v, rows[r].n, &o, &cp, &n, &err), 0);
        if (n != rows[r].want)
            fail_msg("%s: %zu change points, want %zu", rows[r].what, n, rows[r].want);
        for (size_t k = 0; k < n; k++) {
            if (cp[k].at != rows[r].at[k])
                fail_msg("%s: change point %zu at %zu, want %zu", rows[r].what, k, cp[k].at,
                         rows[r].at[k]);
            if (fabs(cp[k].step - rows[r].step[k]) > 0.02)
                fail_msg("%s: step %g, want about %g", rows[r].what, cp[k].step, rows[r].step[k]);
            assert_true(cp[k].before >= o.min_side && cp[k].before <= o.window);
            assert_true(cp[k].after >= o.min_side && cp[k].after <= o.window);
            assert_true((cp[k].z > 0) == (rows[r].step[k] > 0));
            assert_true(fabs(cp[k].z) >= o.z_min);
            /* the step is the sides' medians */
            assert_true(fabs(cp[k].median_after / cp[k].median_before - 1 - cp[k].step) < 1e-12);
        }
        free(cp);
    }
}

static void test_refused(void **state)
{
    (void)state;
    double v[20];
    for (size_t i = 0; i < 20; i++)
        v[i] = 1;
    v[7] = NAN;
    pm_cp_opts o;
    pm_cp_opts_init(&o);
    pm_cp *cp = NULL;
    size_t n = 0;
    pm_error err;
    pm_error_clear(&err);
    assert_int_equal(pm_cp_find(v, 20, &o, &cp, &n, &err), PM_EFORMAT);
    assert_null(cp);
    assert_int_equal(n, 0);
    v[7] = INFINITY;
    assert_int_equal(pm_cp_find(v, 20, &o, &cp, &n, &err), PM_EFORMAT);
    /* empty and constant series: nothing, no error */
    assert_int_equal(pm_cp_find(v, 0, &o, &cp, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_int_equal(pm_cp_find(v, 7, &o, &cp, &n, &err), 0);
    assert_int_equal(n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
