/* Rates, unwrapping, repairs and timestamp filtering, against hand-computed
 * rows (awkward ones included: first sample, wraps at 32 bits and at a RAPL
 * range, reset, NaN, empty). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/series.h"

#define N 8
#define X NAN

static void assert_series(const double *got, const double *want, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (isnan(want[i])) {
            if (!isnan(got[i]))
                fail_msg("point %zu: got %g, want NaN", i, got[i]);
        } else if (isnan(got[i]) || fabs(got[i] - want[i]) > 1e-9 * (1 + fabs(want[i]))) {
            fail_msg("point %zu: got %g, want %g", i, got[i], want[i]);
        }
    }
}

static void test_rate(void **state)
{
    (void)state;
    static const struct {
        size_t n;
        double t[N], v[N], want[N];
        uint8_t q[N];
    } rows[] = {
        /* even spacing */
        {4, {0, 1, 2, 3}, {0, 10, 30, 60}, {X, 10, 20, 30}, {PM_Q_GAP, 0, 0, 0}},
        /* uneven: real time deltas, not the nominal interval */
        {4, {0, 1, 3, 3.5}, {0, 10, 30, 31}, {X, 10, 10, 2}, {PM_Q_GAP, 0, 0, 0}},
        /* NaN makes both neighbouring rates gaps, never 0 */
        {5,
         {0, 1, 2, 3, 4},
         {0, 1, X, 3, 4},
         {X, 1, X, X, 1},
         {PM_Q_GAP, 0, PM_Q_GAP, PM_Q_GAP, 0}},
        /* a decrease is a negative rate (repaired later) */
        {3, {0, 2, 4}, {100, 50, 70}, {X, -25, 10}, {PM_Q_GAP, 0, 0}},
        /* single sample */
        {1, {5}, {1}, {X}, {PM_Q_GAP}},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        double out[N];
        uint8_t q[N] = {0};
        pm_rate(rows[r].t, rows[r].v, rows[r].n, out, q);
        assert_series(out, rows[r].want, rows[r].n);
        assert_memory_equal(q, rows[r].q, rows[r].n);
    }
    pm_rate(NULL, NULL, 0, NULL, NULL); /* empty: no access */
}

/* A counter read every fourth sample (the pressure counters at -i 0.25):
 * each reading's rate over the span since the one before stands for the
 * span's points; a longer silence is a gap; a dense counter is left to
 * pm_rate. */
static void test_rate_sparse(void **state)
{
    (void)state;
    enum { M = 14 };
    const double H = PM_Q_HELD, G = PM_Q_GAP;
    double t[M], v[M], out[M];
    uint8_t q[M];
    for (int i = 0; i < M; i++) {
        t[i] = 0.25 * i;
        v[i] = X;
    }
    /* readings at 0, 1, 2 s (40 units a second, then 80), none at 3, one
     * at 3.25 (after 1.25 s: within 1.5 x the median of 1 s) */
    v[0] = 100, v[4] = 140, v[8] = 220, v[13] = 320;
    memset(q, 0, sizeof q);
    assert_int_equal(pm_rate_sparse(t, v, M, 0.25, out, q), 1);
    const double want[M] = {X, 40, 40, 40, 40, 80, 80, 80, 80, 80, 80, 80, 80, 80};
    const double wq[M] = {G, H, H, H, 0, H, H, H, 0, H, H, H, H, 0};
    assert_series(out, want, M);
    for (int i = 0; i < M; i++)
        assert_int_equal(q[i], (uint8_t)wq[i]);
    /* A silence longer than 1.5 x the median gap (2.5 s) is no rate. */
    double v2[M];
    for (int i = 0; i < M; i++)
        v2[i] = X;
    v2[0] = 0, v2[2] = 10, v2[4] = 20, v2[13] = 90;
    memset(q, 0, sizeof q);
    assert_int_equal(pm_rate_sparse(t, v2, M, 0.25, out, q), 1);
    assert_true(fabs(out[1] - 20) < 1e-12);
    assert_int_equal(q[1], PM_Q_HELD);
    for (int i = 5; i < M; i++) {
        assert_true(isnan(out[i]));
        assert_int_equal(q[i], PM_Q_GAP);
    }
    /* Dense (every sample, the odd gap): not sparse, nothing decided. */
    double v3[M];
    for (int i = 0; i < M; i++)
        v3[i] = i == 6 ? X : 10.0 * i;
    memset(q, 0, sizeof q);
    assert_int_equal(pm_rate_sparse(t, v3, M, 0.25, out, q), 0);
}

static void test_unwrap(void **state)
{
    (void)state;
    const double M32 = 4294967296.0, RAPL = 262143328850.0 + 1;
    static struct {
        double mod;
        size_t n, wraps;
        double v[N], want[N];
    } rows[] = {
        {0, 3, 0, {5, 3, 4}, {5, 3, 4}},                        /* no range: untouched */
        {0, 4, 1, {4294967000.0, 4294967295.0, 100, 400}, {0}}, /* 32-bit, filled below */
        {0, 4, 2, {262143328000.0, 500, 262143328000.0, 10}, {0}},
        {0, 4, 1, {10, X, 5, 6}, {0}}, /* NaN skipped, wrap vs last valid */
    };
    rows[1].mod = M32;
    double w1[] = {4294967000.0, 4294967295.0, M32 + 100, M32 + 400};
    memcpy(rows[1].want, w1, sizeof w1);
    rows[2].mod = RAPL;
    double w2[] = {262143328000.0, RAPL + 500, RAPL + 262143328000.0, 2 * RAPL + 10};
    memcpy(rows[2].want, w2, sizeof w2);
    rows[3].mod = 100;
    double w3[] = {10, X, 105, 106};
    memcpy(rows[3].want, w3, sizeof w3);
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        double v[N];
        uint8_t q[N] = {0};
        memcpy(v, rows[r].v, sizeof v);
        assert_int_equal(pm_unwrap(v, rows[r].n, rows[r].mod, q), rows[r].wraps);
        assert_series(v, rows[r].want, rows[r].n);
    }
    /* The wrap flag survives differencing. */
    double t[] = {0, 1, 2}, v[] = {90, 99, 4}, out[3];
    uint8_t q[3] = {0};
    assert_int_equal(pm_unwrap(v, 3, 100, q), 1);
    pm_rate(t, v, 3, out, q);
    assert_int_equal(q[2], PM_Q_WRAP);
    assert_true(fabs(out[2] - 5) < 1e-12);
}

static void test_repair_modes(void **state)
{
    (void)state;
    static const struct {
        int mode;
        size_t n, count;
        double v[N], want[N];
    } rows[] = {
        {PM_REPAIR_HOLD, 6, 3, {-1, 2, -5, 4, -3, X}, {0, 2, 2, 4, 4, X}},
        {PM_REPAIR_INTERP, 6, 3, {-1, 2, -5, 4, -3, X}, {2, 2, 3, 4, 4, X}},
        {PM_REPAIR_INTERP, 5, 2, {1, -1, -1, 5, 7}, {1, 3, 3, 5, 7}},
        {PM_REPAIR_INTERP, 2, 2, {-1, -2}, {0, 0}},
        {PM_REPAIR_ZERO, 4, 2, {3, -1, 4, -9}, {3, 0, 4, 0}},
        {PM_REPAIR_DROP, 4, 2, {3, -1, 4, -9}, {3, X, 4, X}},
        {PM_REPAIR_HOLD, 0, 0, {0}, {0}},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        double v[N];
        uint8_t q[N] = {0};
        memcpy(v, rows[r].v, sizeof v);
        assert_int_equal(pm_repair(v, q, rows[r].n, rows[r].mode), rows[r].count);
        assert_series(v, rows[r].want, rows[r].n);
        for (size_t i = 0; i < rows[r].n; i++)
            if (!isnan(rows[r].v[i]) && rows[r].v[i] < 0)
                assert_int_equal(q[i], rows[r].mode == PM_REPAIR_DROP ? PM_Q_DROPPED : PM_Q_RESET);
    }
}

static void test_ska_replace(void **state)
{
    (void)state;
    double v[] = {X, -1, 3, -2, X, 5, INFINITY};
    double want[] = {0, 0, 3, 3, 3, 5, INFINITY};
    assert_int_equal(pm_ska_replace_neg(v, 7), 4);
    for (size_t i = 0; i < 7; i++)
        assert_true(v[i] == want[i]);
}

static void test_time_increasing(void **state)
{
    (void)state;
    double t[] = {1, 2, 2, 1.5, X, 3, 4, 4};
    size_t keep[8], dropped = 0;
    size_t k = pm_time_increasing(t, 8, keep, &dropped);
    assert_int_equal(k, 4);
    assert_int_equal(dropped, 4);
    size_t want[] = {0, 1, 5, 6};
    assert_memory_equal(keep, want, sizeof want);
    assert_int_equal(pm_time_increasing(t, 0, keep, &dropped), 0);
    assert_int_equal(dropped, 0);
}

static void test_names(void **state)
{
    (void)state;
    assert_int_equal(pm_repair_parse("hold"), PM_REPAIR_HOLD);
    assert_int_equal(pm_repair_parse("interp"), PM_REPAIR_INTERP);
    assert_int_equal(pm_repair_parse("zero"), PM_REPAIR_ZERO);
    assert_int_equal(pm_repair_parse("drop"), PM_REPAIR_DROP);
    assert_int_equal(pm_repair_parse("Hold"), -1);
    assert_string_equal(pm_quality_name(PM_Q_WRAP), "wrap");
    assert_string_equal(pm_quality_name(99), "?");
    pm_qcounts c;
    memset(&c, 0, sizeof c);
    uint8_t q[] = {0, 3, 3, 1, 9};
    pm_qcounts_add(&c, q, 5);
    assert_int_equal(c.n[PM_Q_GAP], 2);
    assert_int_equal(c.n[PM_Q_OK], 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rate),        cmocka_unit_test(test_rate_sparse),
        cmocka_unit_test(test_unwrap),      cmocka_unit_test(test_repair_modes),
        cmocka_unit_test(test_ska_replace), cmocka_unit_test(test_time_increasing),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
