/* What the report reads of the series (report_keep.c), against hand
 * computations: the report grid, a series' range and first gap (from its
 * values, and as the stream mode keeps them once the values are gone),
 * the repair spans in host order, the outlying hosts, a host's row, and a
 * host's series as the HTML report embeds it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/analysis.h"

static void test_grid(void **state)
{
    (void)state;
    pm_analysis a;
    memset(&a, 0, sizeof a);
    a.t_start = 1000;
    a.t_end = 1100;
    a.grid_step = 1;
    double t0, step;
    /* 101 points at 1 s fit in 4,000 */
    assert_int_equal(pm_report_grid(&a, 4000, &t0, &step), 101);
    assert_true(t0 == 1000 && step == 1);
    /* at most 11 points: 10 s apart */
    assert_int_equal(pm_report_grid(&a, 11, &t0, &step), 11);
    assert_true(step == 10);
    a.t_end = a.t_start;
    assert_int_equal(pm_report_grid(&a, 11, &t0, &step), 0);
}

static void test_range_and_gap(void **state)
{
    (void)state;
    double t[5] = {0, 1, 2, 3, 4}, v[5] = {NAN, 3, -2, INFINITY, 7};
    uint8_t q[5] = {PM_Q_GAP, PM_Q_OK, PM_Q_OK, PM_Q_OK, PM_Q_OK};
    pm_series s;
    memset(&s, 0, sizeof s);
    s.n = 5;
    s.t = t;
    s.v = v;
    s.q = q;
    double lo, hi;
    pm_series_range(&s, &lo, &hi);
    assert_true(lo == -2 && hi == 7);
    assert_true(pm_series_first_gap(&s));
    q[0] = PM_Q_OK;
    assert_false(pm_series_first_gap(&s));
    /* once the values are gone: what was kept */
    s.v = NULL;
    s.q = NULL;
    s.vlo = 1.5;
    s.vhi = 2.5;
    s.first_gap = 1;
    pm_series_range(&s, &lo, &hi);
    assert_true(lo == 1.5 && hi == 2.5);
    assert_true(pm_series_first_gap(&s));
    /* no finite value */
    double none[2] = {NAN, NAN};
    s.v = none;
    s.n = 2;
    pm_series_range(&s, &lo, &hi);
    assert_true(lo == INFINITY && hi == -INFINITY);
}

static void test_repairs_and_outliers(void **state)
{
    (void)state;
    /* three hosts; host 0 resets at its third point, host 2 has a dropped
     * first point and a reset at its last */
    double t0[4] = {10, 11, 12, 13}, t2[3] = {20, 22, 24};
    double v0[4] = {1, 2, 3, 4}, v2[3] = {9, 9, 9};
    uint8_t q0[4] = {PM_Q_OK, PM_Q_OK, PM_Q_RESET, PM_Q_OK};
    uint8_t q2[3] = {PM_Q_DROPPED, PM_Q_OK, PM_Q_RESET};
    pm_series s[3];
    memset(s, 0, sizeof s);
    s[0] = (pm_series){.n = 4, .t = t0, .v = v0, .q = q0};
    s[2] = (pm_series){.n = 3, .t = t2, .v = v2, .q = q2};
    s[0].st.mean = 2.5;
    s[2].st.mean = 9;
    pm_series *hosts[3] = {&s[0], NULL, &s[2]};
    pm_metric_result r;
    memset(&r, 0, sizeof r);
    r.host = hosts;
    pm_analysis a;
    memset(&a, 0, sizeof a);
    a.in.nhosts = 3;
    double *p = NULL;
    size_t n = 0;
    assert_int_equal(pm_report_repairs(&a, &r, &p, &n), 0);
    assert_int_equal(n, 3);
    /* each span runs from the point before to the point */
    double want[6] = {11, 12, 20, 20, 22, 24};
    for (int i = 0; i < 6; i++)
        assert_true(p[i] == want[i]);
    free(p);
    /* means 2.5 and 9: the median 5.75, both 3.25 away: the first
     * host first, then the other */
    size_t o[PM_REPORT_OUTLIERS];
    assert_int_equal(pm_report_outliers(&a, &r, o), 2);
    assert_int_equal(o[0], 0);
    assert_int_equal(o[1], 2);
    /* a third host with the median mean: not an outlier (distance 0) */
    double v1[1] = {5.75}, t1[1] = {10};
    s[1] = (pm_series){.n = 1, .t = t1, .v = v1};
    s[1].st.mean = 5.75;
    hosts[1] = &s[1];
    assert_int_equal(pm_report_outliers(&a, &r, o), 2);
}

static void test_row(void **state)
{
    (void)state;
    pm_analysis a;
    memset(&a, 0, sizeof a);
    a.in.nhosts = 2;
    a.t_start = 0;
    a.t_end = 4;
    a.grid_step = 1;
    double t[3] = {0, 2, 4}, v[3] = {0, 10, 20};
    pm_series s;
    memset(&s, 0, sizeof s);
    s = (pm_series){.n = 3, .t = t, .v = v};
    pm_series *hosts[2] = {&s, NULL};
    pm_metric_result r;
    memset(&r, 0, sizeof r);
    r.host = hosts;
    double row[5];
    pm_error err;
    /* linear between the samples, the whole grid and a stretch of it */
    assert_int_equal(pm_report_row(&a, &r, 0, 4000, 0, 5, row, &err), 0);
    for (int g = 0; g < 5; g++)
        assert_true(fabs(row[g] - 5.0 * g) < 1e-12);
    assert_int_equal(pm_report_row(&a, &r, 0, 4000, 1, 3, row, &err), 0);
    assert_true(fabs(row[0] - 5) < 1e-12 && fabs(row[1] - 10) < 1e-12);
    /* a host without the series: NaN */
    assert_int_equal(pm_report_row(&a, &r, 1, 4000, 0, 5, row, &err), 0);
    for (int g = 0; g < 5; g++)
        assert_true(isnan(row[g]));
}

static void test_series(void **state)
{
    (void)state;
    pm_analysis a;
    memset(&a, 0, sizeof a);
    a.in.nhosts = 3;
    a.t_start = 1700000000.25;
    a.t_end = 1700000003.25;
    double t[4] = {1700000000.25, 1700000001.25, 1700000002.5, 1700000003.25};
    double v[4] = {1.0 / 3, NAN, INFINITY, -2.5e9};
    pm_series s, gone;
    s = (pm_series){.n = 4, .t = t, .v = v};
    gone = (pm_series){.n = 4}; /* (--stream: the values went in the fold) */
    pm_series *hosts[3] = {&s, NULL, &gone};
    pm_metric_result r;
    memset(&r, 0, sizeof r);
    r.host = hosts;
    pm_metric_def def = {.id = "cpu_usage"};
    r.def = &def;
    char names[3][3] = {"n0", "n1", "n2"};
    pm_host hs[3] = {{.name = names[0]}, {.name = names[1]}, {.name = names[2]}};
    a.in.hosts = hs;
    float *ft = NULL, *fv = NULL;
    size_t n = 99;
    pm_error err;
    /* float32 seconds since the start and float32 values, NaN where not
     * finite: what the HTML report embeds, the same in both modes */
    assert_int_equal(pm_report_series(&a, &r, 0, &ft, &fv, &n, &err), 0);
    assert_int_equal(n, 4);
    assert_true(ft[0] == 0.0f && ft[1] == 1.0f && ft[2] == 2.25f && ft[3] == 3.0f);
    assert_true(fv[0] == (float)(1.0 / 3) && isnan(fv[1]) && isnan(fv[2]) && fv[3] == -2.5e9f);
    free(ft);
    free(fv);
    assert_true(isnan(pm_report_f32(-INFINITY)) && pm_report_f32(0.1) == 0.1f);
    /* a host without the series: none */
    assert_int_equal(pm_report_series(&a, &r, 1, &ft, &fv, &n, &err), 0);
    assert_true(ft == NULL && fv == NULL && n == 0);
    /* the values gone and nothing kept (no --html): an error, not zeros */
    assert_int_not_equal(pm_report_series(&a, &r, 2, &ft, &fv, &n, &err), 0);
    assert_true(ft == NULL && fv == NULL && n == 0);
    assert_non_null(strstr(err.msg, "n2's series of cpu_usage not kept"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid),
        cmocka_unit_test(test_range_and_gap),
        cmocka_unit_test(test_repairs_and_outliers),
        cmocka_unit_test(test_row),
        cmocka_unit_test(test_series),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
