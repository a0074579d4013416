/* Grid interpolation and cross-node aggregation: skewed clocks, ragged
 * hosts, gaps, no extrapolation, index alignment. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../support/testutil.h"
#include "perfmon/analysis.h"
#include "synth.h"

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

static void test_grid_interp(void **state)
{
    (void)state;
    static const struct {
        size_t n, ngrid, filled;
        double t0, step;
        double t[6], v[6], want[8];
    } rows[] = {
        /* host half a step late: interior points interpolated, none
         * extrapolated before its first or after its last sample */
        {3, 4, 2, 0, 1, {0.5, 1.5, 2.5}, {1, 3, 5}, {X, 2, 4, X}},
        /* on the grid: values unchanged */
        {3, 3, 3, 10, 2, {10, 12, 14}, {1, 2, 3}, {1, 2, 3}},
        /* a NaN splits the series: no interpolation across the gap */
        {5, 5, 4, 0, 1, {0, 1, 2, 3, 4}, {0, 1, X, 3, 4}, {0, 1, X, 3, 4}},
        /* an isolated valid point lands only on its own grid time */
        {3, 3, 1, 0, 1, {0, 1, 2}, {X, 5, X}, {X, 5, X}},
        /* ragged: host ends early, later grid points stay NaN */
        {2, 5, 2, 0, 1, {0, 1}, {2, 4}, {2, 4, X, X, X}},
        /* uneven sampling onto a finer grid */
        {3, 5, 5, 0, 0.5, {0, 1, 2}, {0, 10, 0}, {0, 5, 10, 5, 0}},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        double out[8];
        size_t f = pm_grid_interp(rows[r].t, rows[r].v, rows[r].n, rows[r].t0, rows[r].step,
                                  rows[r].ngrid, out);
        assert_int_equal(f, rows[r].filled);
        assert_series(out, rows[r].want, rows[r].ngrid);
    }
}

/* The interpolation as first written: every finite run found first,
 * then the grid points inside it; pm_interp must give the same. */
static size_t ref_interp(const double *t, const double *v, size_t n, double t0, double step,
                         size_t ngrid, double *out)
{
    size_t filled = 0;
    for (size_t k = 0; k < ngrid; k++)
        out[k] = NAN;
    size_t i = 0;
    while (i < n) {
        while (i < n && !isfinite(v[i]))
            i++;
        if (i >= n)
            break;
        size_t s = i;
        while (i < n && isfinite(v[i]))
            i++;
        size_t e = i;
        double a = ceil((t[s] - t0) / step - 1e-9), b = floor((t[e - 1] - t0) / step + 1e-9);
        if (a < 0)
            a = 0;
        if (b > (double)ngrid - 1)
            b = (double)ngrid - 1;
        if (a > b)
            continue;
        if (e - s == 1) {
            out[(size_t)a] = v[s];
            filled++;
            continue;
        }
        size_t j = s;
        for (size_t k = (size_t)a; k <= (size_t)b; k++) {
            double x = t0 + (double)k * step;
            if (x < t[s])
                x = t[s];
            if (x > t[e - 1])
                x = t[e - 1];
            while (j + 2 < e && t[j + 1] <= x)
                j++;
            double dx = t[j + 1] - t[j];
            out[k] = dx > 0 ? v[j] + (x - t[j]) / dx * (v[j + 1] - v[j]) : v[j];
            filled++;
        }
    }
    return filled;
}

/* Random uneven series with gaps (runs of NaN, single points), on grids
 * finer and coarser than the samples, starting before and after them:
 * one call, and a stretch at a time of any length, equal the reference
 * bit for bit. */
static void test_interp_in_stretches(void **state)
{
    (void)state;
    enum { N = 400, G = 1500 };
    static double t[N], v[N], want[G], whole[G], part[G];
    unsigned seed = 7;
    const double steps[] = {0.75, 0.1, 3.0, 1.0};
    const double starts[] = {0, 5.0, 100.0, -3.0};
    for (int round = 0; round < 16; round++) {
        double tt = 3.3;
        for (size_t i = 0; i < N; i++) {
            seed = seed * 1103515245u + 12345u;
            tt += round % 4 == 3 ? 1.0 : 0.2 + (seed >> 16) % 100 / 50.0;
            t[i] = tt;
            int gap = (seed >> 8) % (round % 2 ? 3 : 9) == 0;
            v[i] = gap ? NAN : (double)((seed >> 4) % 1000);
        }
        double step = steps[round % 4], t0 = starts[round / 4];
        size_t fr = ref_interp(t, v, N, t0, step, G, want);
        size_t fw = pm_grid_interp(t, v, N, t0, step, G, whole);
        assert_int_equal(fw, fr);
        assert_memory_equal(whole, want, sizeof want);
        const size_t lens[] = {1, 2, 3, 64, 1499, 1500, 4000};
        for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
            pm_interp it;
            pm_interp_init(&it, t, v, N, t0, step, G);
            size_t fp = 0;
            for (size_t k = 0; k < G; k += lens[l])
                fp += pm_interp_next(&it, k, k + lens[l], part + k);
            assert_int_equal(fp, fr);
            assert_memory_equal(part, want, sizeof want);
        }
    }
}

static char *make_job(size_t n_b, double skew_b, double step_b)
{
    char *tmp = pm_test_tmpdir();
    assert_non_null(tmp);
    static char dir[256];
    snprintf(dir, sizeof dir, "%s", tmp);
    char path[512];
    pm_synth s;
    pm_error err;
    pm_synth_init(&s, "a");
    s.n = 30;
    snprintf(path, sizeof path, "%s/a.pmp", dir);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    pm_synth_init(&s, "b");
    s.n = n_b;
    s.start_s += skew_b;
    s.wall_step_s = step_b;
    snprintf(path, sizeof path, "%s/b.pmp", dir);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    return dir;
}

static pm_analysis *analyse(const char *dir, int align)
{
    char cat[4096];
    snprintf(cat, sizeof cat, "%s/../templates/metrics.json", pm_test_fixtures());
    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    o.catalog_path = cat;
    o.align = align;
    pm_analysis *a = NULL;
    pm_error err;
    const char *paths[] = {dir};
    if (pm_analysis_run(paths, 1, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    return a;
}

static void test_skewed_clocks_no_sawtooth(void **state)
{
    (void)state;
    /* b starts 0.4 s late and stops after 20 samples. */
    char *dir = make_job(20, 0.4, 0);
    pm_analysis *a = analyse(dir, PM_ALIGN_TIME);
    int m = pm_analysis_metric(a, "net_out");
    assert_true(m >= 0);
    const pm_aggregate *g = &a->metrics[m].agg;
    assert_true(fabs(a->grid_step - 1.0) < 1e-9);
    size_t two = 0, one = 0;
    for (size_t i = 0; i < g->n; i++) {
        if (isnan(g->v[i])) {
            assert_int_equal(g->count[i], 0);
            continue;
        }
        /* each host sends 1 MiB/s: the Total is exactly 1 per contributing
         * node, never a saw-tooth between 1 and 2 */
        assert_true(fabs(g->v[i] - g->count[i]) < 1e-6);
        two += g->count[i] == 2;
        one += g->count[i] == 1;
    }
    assert_true(two >= 17);
    assert_true(one >= 9);
    assert_int_equal(g->min_count, 1);
    /* Clock offsets from the start spread: median of {0, 0.4} is 0.2. */
    assert_true(fabs(a->in.hosts[0].clock.offset_s + 0.2) < 1e-6);
    assert_true(fabs(a->in.hosts[1].clock.offset_s - 0.2) < 1e-6);
    /* Average metric: mean of the hosts present. */
    int c = pm_analysis_metric(a, "cpu_usage");
    for (size_t i = 0; i < a->metrics[c].agg.n; i++)
        if (a->metrics[c].agg.count[i])
            assert_true(fabs(a->metrics[c].agg.v[i] - 50) < 1e-9);
    pm_analysis_free(a);
    pm_test_rmrf(dir);
}

static void test_index_alignment(void **state)
{
    (void)state;
    char *dir = make_job(20, 0.4, 0);
    pm_analysis *a = analyse(dir, PM_ALIGN_INDEX);
    int m = pm_analysis_metric(a, "net_out");
    const pm_aggregate *g = &a->metrics[m].agg;
    assert_int_equal(g->n, 30);
    /* position 5: both hosts, time = mean of 1.7e9+5 and 1.7e9+5.4 */
    assert_true(fabs(g->t[5] - (1.7e9 + 5.2)) < 1e-6);
    assert_int_equal(g->count[5], 2);
    assert_true(fabs(g->v[5] - 2) < 1e-6);
    assert_int_equal(g->count[25], 1);
    assert_true(isnan(g->v[0])); /* first rate of both hosts */
    pm_analysis_free(a);
    pm_test_rmrf(dir);
}

static void test_wall_step_uses_monotonic(void **state)
{
    (void)state;
    /* b's wall clock steps back 5 s halfway: its monotonic clock keeps the
     * samples in order, nothing is dropped, and the step is reported. */
    char *dir = make_job(31, 0, -5);
    pm_analysis *a = analyse(dir, PM_ALIGN_TIME);
    const pm_host *b = &a->in.hosts[1];
    assert_string_equal(b->name, "b");
    assert_int_equal(b->dropped_time, 0);
    assert_int_equal(b->n, 31);
    /* 16 of 31 samples carry the stepped clock: the median offset wins */
    assert_true(fabs(b->t[0] - (1.7e9 - 5)) < 1e-6);
    assert_true(fabs(b->t[30] - b->t[0] - 30) < 1e-6);
    assert_int_equal(b->clock.method, 1);
    assert_true(fabs(b->clock.step_max_s - 5) < 1e-6);
    int m = pm_analysis_metric(a, "net_out");
    assert_true(fabs(a->metrics[m].host[1]->st.max - 1.0) < 1e-9);
    pm_analysis_free(a);
    pm_test_rmrf(dir);
}

/* The grid point a lone sample is placed on: the nearest, ties to the even
 * one (nearbyint in the default rounding mode, here the reference). */
static long placed_at(double t, double t0, double step, size_t ngrid)
{
    double v = 7, out[64];
    pm_place it;
    assert_true(ngrid <= 64);
    pm_place_init(&it, &t, &v, 1, t0, step, ngrid);
    pm_place_next(&it, 0, ngrid, out);
    long at = -1;
    for (size_t k = 0; k < ngrid; k++)
        if (!isnan(out[k])) {
            assert_int_equal(at, -1); /* one point only */
            at = (long)k;
        }
    return at;
}

static void test_place_nearest_ties_even(void **state)
{
    (void)state;
    /* exact halves: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, 3.5 -> 4 ... */
    for (int k = 0; k < 20; k++) {
        long want = k % 2 == 0 ? k : k + 1;
        assert_int_equal(placed_at(k + 0.5, 0, 1, 40), want);
        assert_int_equal(placed_at(1e9 + 0.25 * (k + 0.5), 1e9, 0.25, 40), want);
    }
    /* before the grid: its first point; past it: its last */
    assert_int_equal(placed_at(-3.7, 0, 1, 10), 0);
    assert_int_equal(placed_at(-0.4, 0, 1, 10), 0);
    assert_int_equal(placed_at(1e300, 0, 1, 10), 9);
    /* a million pseudo-random offsets against libm's nearbyint */
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 1000000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double step = 0.05 + (double)(x % 1000) / 100.0;
        double t0 = 1.7e9 + (double)(x >> 40) / 1024.0;
        double t = t0 + ((double)(x % 4096) - 8.0) / 64.0 * step;
        double kd = nearbyint((t - t0) / step);
        long want = kd <= 0 ? 0 : kd >= 63 ? 63 : (long)kd;
        long got = placed_at(t, t0, step, 64);
        if (got != want)
            fail_msg("t %.17g t0 %.17g step %.17g: at %ld, want %ld", t, t0, step, got, want);
    }
}

/* Grid points computed once per host (pm_place_points, as the analysis
 * does for all its metrics) place every sample where computing them on
 * the way does: ragged, jittered times with NaN runs. */
static void test_place_points_same(void **state)
{
    (void)state;
    enum { N = 5000, G = 3000 };
    double *t = malloc(N * sizeof *t), *v = malloc(N * sizeof *v);
    double *o1 = malloc(G * sizeof *o1), *o2 = malloc(G * sizeof *o2);
    uint32_t *k = malloc(N * sizeof *k);
    assert_true(t && v && o1 && o2 && k);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    double tt = 1.7e9 - 3.3;
    for (size_t i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        tt += 0.2 + (double)(x % 1000) / 1000.0; /* 0.2-1.2 s apart */
        t[i] = tt;
        v[i] = x % 11 == 0 ? NAN : (double)(x % 100000) / 7.0;
    }
    double t0 = 1.7e9, step = 0.7;
    pm_place_points(t, N, t0, step, G, k);
    for (size_t i = 0; i < N; i++) {
        double kd = nearbyint((t[i] - t0) / step);
        uint32_t want = kd <= 0 ? 0 : kd >= G - 1 ? G - 1 : (uint32_t)kd;
        assert_int_equal(k[i], want);
    }
    pm_place a, b;
    pm_place_init(&a, t, v, N, t0, step, G);
    pm_place_init_k(&b, t, k, v, N, t0, step, G);
    /* in uneven chunks, as --data asks for them */
    for (size_t k0 = 0; k0 < G; k0 += 97) {
        size_t k1 = k0 + 97 < G ? k0 + 97 : G;
        assert_int_equal(pm_place_next(&a, k0, k1, o1), pm_place_next(&b, k0, k1, o2));
    }
    pm_place_init(&a, t, v, N, t0, step, G);
    pm_place_init_k(&b, t, k, v, N, t0, step, G);
    pm_place_next(&a, 0, G, o1);
    pm_place_next(&b, 0, G, o2);
    size_t set = 0;
    for (size_t i = 0; i < G; i++) {
        if (memcmp(&o1[i], &o2[i], sizeof o1[i]) != 0)
            fail_msg("grid point %zu: %.17g vs %.17g", i, o1[i], o2[i]);
        set += !isnan(o1[i]);
    }
    assert_true(set > G / 2);
    free(t);
    free(v);
    free(o1);
    free(o2);
    free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_interp),
        cmocka_unit_test(test_interp_in_stretches),
        cmocka_unit_test(test_skewed_clocks_no_sawtooth),
        cmocka_unit_test(test_index_alignment),
        cmocka_unit_test(test_wall_step_uses_monotonic),
        cmocka_unit_test(test_place_nearest_ties_even),
        cmocka_unit_test(test_place_points_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
