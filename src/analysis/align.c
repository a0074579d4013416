/* Alignment and cross-node aggregation: linear interpolation onto the
 * common grid, Total/Average with per-point node counts, and SKA's
 * position-by-position combination.  Semantics: docs/analysis.md,
 * "Alignment and aggregation". */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "perfmon/mem.h"

/* --- alignment and aggregation ---------------------------------------------- */

void pm_interp_init(pm_interp *it, const double *t, const double *v, size_t n, double t0,
                    double step, size_t ngrid)
{
    memset(it, 0, sizeof *it);
    it->t = t;
    it->v = v;
    it->n = n;
    it->t0 = t0;
    it->step = step;
    it->ngrid = ngrid;
}

/* The least index in [lo, hi) whose time is above x, or hi, for times
 * that increase there: a gallop, then halving (the grid's points are
 * tens of samples apart on a long series, and a walk read every time). */
static inline size_t first_above(const double *t, size_t lo, size_t hi, double x)
{
    if (lo >= hi || t[lo] > x)
        return lo;
    size_t a = lo, step = 1; /* t[a] <= x */
    while (step < hi - a && t[a + step] <= x) {
        a += step;
        step *= 2;
    }
    size_t b = step < hi - a ? a + step : hi; /* t[b] > x, or b == hi */
    while (b - a > 1) {
        size_t mid = a + (b - a) / 2;
        if (t[mid] <= x)
            a = mid;
        else
            b = mid;
    }
    return b;
}

/* The first index from r on whose value is not finite, or n: four
 * values a step, by their exponent bits (all ones: infinite or NaN). */
static size_t finite_end(const double *v, size_t r, size_t n)
{
    const uint64_t e = 0x7ff0000000000000ull;
    for (; r + 4 <= n; r += 4) {
        uint64_t b[4];
        memcpy(b, v + r, sizeof b);
        if (((b[0] & e) == e) | ((b[1] & e) == e) | ((b[2] & e) == e) | ((b[3] & e) == e))
            break;
    }
    while (r < n && isfinite(v[r]))
        r++;
    return r;
}

/* Start the next run of finite values at or after it->i; 0 when none is
 * left.  Its end (the first value that is not finite) is found first, so
 * that the grid's walk through its times can gallop. */
static int start_run(pm_interp *it)
{
    const double *v = it->v;
    size_t i = it->i, n = it->n;
    while (i < n && !isfinite(v[i]))
        i++;
    if (i >= n) {
        it->i = n;
        it->have = 0;
        return 0;
    }
    it->s = it->j = i;
    it->f = i + 1;
    it->ended = 0;
    it->r = finite_end(v, i + 1, n);
    /* the first grid point at or after t[s] (within 1e-9 of a step) */
    it->a = ceil((it->t[i] - it->t0) / it->step - 1e-9);
    it->have = 1;
    return 1;
}

size_t pm_interp_next(pm_interp *it, size_t k0, size_t k1, double *out)
{
    size_t filled = 0;
    const double *t = it->t, *v = it->v;
    if (k1 > it->ngrid)
        k1 = it->ngrid;
    for (size_t k = k0; k < k1; k++) {
        double kd = (double)k, x = it->t0 + kd * it->step;
        for (;;) {
            if (!it->have && !start_run(it))
                break;
            if (kd < it->a) /* before the run: no extrapolation */
                break;
            /* Points verified until one lies past x (and two at least),
             * or the run ends: the least f >= max(f, s + 2) with
             * t[f - 1] > x, at most the run's end r. */
            size_t f = it->f, r = it->r;
            if (!it->ended) {
                size_t lo = f < it->s + 2 ? it->s + 2 : f;
                size_t g = lo > r ? r + 1 : 1 + first_above(t, lo - 1, r, x);
                if (g <= r) {
                    f = g;
                } else {
                    f = r;
                    it->ended = 1;
                }
            }
            it->f = f;
            if (!it->ended || !(kd > floor((t[f - 1] - it->t0) / it->step + 1e-9)))
                break;
            /* k lies past this run's last grid point: on to the next run. */
            it->i = f;
            it->have = 0;
        }
        if (!it->have || kd < it->a) {
            out[k - k0] = NAN;
            continue;
        }
        size_t s = it->s, e = it->f; /* [s, e): the points verified so far */
        if (it->ended && e - s == 1) {
            out[k - k0] = v[s];
            filled++;
            continue;
        }
        /* Grid times and sample times both increase, so one forward walk
         * finds each bracketing pair [t[j], t[j+1]] (the pair GSL's
         * bsearch would find: the last j <= e-2 with t[j] <= x), and the
         * value is GSL's linear formula.  GSL's own evaluation costs an
         * allocation per run and a lookup per point: 3x the time here. */
        if (x < t[s])
            x = t[s];
        if (x > t[e - 1])
            x = t[e - 1];
        size_t j = it->j;
        if (j + 2 < e)
            j = first_above(t, j + 1, e - 1, x) - 1;
        it->j = j;
        double dx = t[j + 1] - t[j];
        out[k - k0] = dx > 0 ? v[j] + (x - t[j]) / dx * (v[j + 1] - v[j]) : v[j];
        filled++;
    }
    return filled;
}

size_t pm_grid_interp(const double *t, const double *v, size_t n, double t0, double step,
                      size_t ngrid, double *out)
{
    pm_interp it;
    pm_interp_init(&it, t, v, n, t0, step, ngrid);
    return pm_interp_next(&it, 0, ngrid, out);
}

/* --- placing samples on the grid (pm_place) --------------------------------- */

/* nearbyint(x) in the default rounding mode (to nearest, ties to even),
 * without the call: libm's nearbyint saves and restores the floating-point
 * environment, and was a third of --stats on 16 x 86,400.  Adding 2^52
 * leaves no fraction bits, so the addition itself rounds to an integer. */
static inline double round_even(double x)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    const double two52 = 4503599627370496.0;
    double a = fabs(x);
    if (!(a < two52))
        return x; /* already an integer, or NaN or infinite */
    /* (a + 2^52) - 2^52 is not a, and without -ffast-math no compiler
     * folds it to a. */
    return copysign((a + two52) - two52, x);
#else
    return nearbyint(x);
#endif
}

static inline size_t grid_point(double t, double t0, double step, size_t ngrid)
{
    double kd = round_even((t - t0) / step);
    return kd <= 0 ? 0 : kd >= (double)(ngrid - 1) ? ngrid - 1 : (size_t)kd;
}

void pm_place_points(const double *t, size_t n, double t0, double step, size_t ngrid, uint32_t *k)
{
    for (size_t i = 0; i < n; i++)
        k[i] = (uint32_t)grid_point(t[i], t0, step, ngrid);
}

static inline size_t place_k(const pm_place *it, size_t i)
{
    return it->k ? it->k[i] : grid_point(it->t[i], it->t0, it->step, it->ngrid);
}

/* Read the next group: the valid samples from it->i on that share one
 * nearest grid point (NaNs between them skipped).  *adj: no NaN between
 * the previous group and this one.  Returns 0 when no sample is left. */
static int read_group(pm_place *it, size_t *k, double *mean, double *first, int *adj)
{
    const double *v = it->v;
    size_t i = it->i, n = it->n;
    int nan = !it->started;
    while (i < n && isnan(v[i])) {
        nan = 1;
        i++;
    }
    if (i >= n) {
        it->i = n;
        return 0;
    }
    *k = place_k(it, i);
    *first = v[i];
    double sum = v[i];
    uint32_t cnt = 1;
    i++;
    for (;;) {
        size_t j = i;
        while (j < n && isnan(v[j]))
            j++;
        if (j >= n || place_k(it, j) != *k)
            break;
        sum += v[j];
        cnt++;
        i = j + 1;
    }
    it->i = i;
    it->started = 1;
    *mean = cnt == 1 ? sum : sum / cnt;
    *adj = !nan;
    return 1;
}

void pm_place_init(pm_place *it, const double *t, const double *v, size_t n, double t0, double step,
                   size_t ngrid)
{
    pm_place_init_k(it, t, NULL, v, n, t0, step, ngrid);
}

void pm_place_init_k(pm_place *it, const double *t, const uint32_t *k, const double *v, size_t n,
                     double t0, double step, size_t ngrid)
{
    memset(it, 0, sizeof *it);
    it->t = t;
    it->k = k;
    it->v = v;
    it->n = n;
    it->t0 = t0;
    it->step = step;
    it->ngrid = ngrid;
    if (ngrid == 0)
        return;
    it->have1 = read_group(it, &it->k1, &it->m1, &it->f1, &it->adj1);
    if (it->have1)
        it->have2 = read_group(it, &it->k2, &it->m2, &it->f2, &it->adj2);
}

size_t pm_place_next(pm_place *it, size_t k0, size_t k1, double *out)
{
    size_t filled = 0;
    if (k1 > it->ngrid)
        k1 = it->ngrid;
    for (size_t k = k0; k < k1; k++) {
        while (it->have2 && it->k2 <= k) {
            it->k1 = it->k2;
            it->m1 = it->m2;
            it->f1 = it->f2;
            it->adj1 = it->adj2;
            it->have2 = read_group(it, &it->k2, &it->m2, &it->f2, &it->adj2);
        }
        double x = NAN;
        if (it->have1 && k == it->k1) {
            x = it->m1;
        } else if (it->have1 && k > it->k1 && it->have2 && it->adj2 && k < it->k2) {
            /* between two consecutive samples: linear, from the earlier
             * point's value to the later point's first sample */
            double f = (double)(k - it->k1) / (double)(it->k2 - it->k1);
            x = it->m1 + f * (it->f2 - it->m1);
            filled++;
        }
        out[k - k0] = x;
    }
    return filled;
}

/* The series of the only host with data, on its own times: a one-node
 * Total or Average is that node, point for point. */
static int aggregate_one(const pm_series *s, pm_aggregate *g, pm_arena *arena)
{
    size_t n = s->n;
    g->n = n;
    g->t = pm_arena_alloc(arena, n ? n : 1, sizeof *g->t);
    g->v = pm_arena_alloc(arena, n ? n : 1, sizeof *g->v);
    g->count = pm_arena_alloc(arena, n ? n : 1, sizeof *g->count);
    if (!g->t || !g->v || !g->count)
        return PM_ENOMEM;
    memcpy(g->t, s->t, n * sizeof *g->t);
    memcpy(g->v, s->v, n * sizeof *g->v);
    for (size_t i = 0; i < n; i++)
        g->count[i] = !isnan(s->v[i]);
    return 0;
}

int pm_aggregate_time_begin(const pm_analysis *a, pm_metric_result *r, size_t ngrid,
                            pm_arena *arena)
{
    pm_aggregate *g = &r->agg;
    if (ngrid == 0 || ngrid > PM_MAX_GRID_POINTS)
        return PM_ELIMIT;
    size_t n = ngrid;
    g->n = n;
    g->t = pm_arena_alloc(arena, n, sizeof *g->t);
    g->v = pm_arena_alloc(arena, n, sizeof *g->v);
    g->count = pm_arena_alloc(arena, n, sizeof *g->count);
    if (!g->t || !g->v || !g->count)
        return PM_ENOMEM;
    for (size_t k = 0; k < n; k++)
        g->t[k] = a->t_start + (double)k * a->grid_step;
    return 0;
}

int pm_place_consecutive(const uint32_t *k, size_t n, size_t ngrid)
{
    if (!k || !n || (size_t)k[0] + n > ngrid)
        return 0;
    uint32_t k0 = k[0];
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= k[i] == k0 + (uint32_t)i;
    return ok;
}

void pm_aggregate_time_add(const pm_analysis *a, pm_metric_result *r, const pm_series *s,
                           const uint32_t *gk, double *tmp)
{
    pm_aggregate *g = &r->agg;
    size_t n = g->n;
    if (pm_place_consecutive(gk, s->n, n)) {
        /* Each sample on a grid point of its own, the next one: each
         * value is its own grid point's. */
        double *gv = g->v + gk[0];
        uint32_t *gc = g->count + gk[0];
        for (size_t i = 0; i < s->n; i++)
            if (!isnan(s->v[i])) {
                gv[i] += s->v[i];
                gc[i]++;
            }
        return;
    }
    pm_place it;
    pm_place_init_k(&it, s->t, gk, s->v, s->n, a->t_start, a->grid_step, n);
    g->interpolated += pm_place_next(&it, 0, n, tmp);
    for (size_t k = 0; k < n; k++)
        if (!isnan(tmp[k])) {
            g->v[k] += tmp[k];
            g->count[k]++;
        }
}

void pm_aggregate_time_end(pm_metric_result *r)
{
    pm_aggregate *g = &r->agg;
    for (size_t k = 0; k < g->n; k++) {
        if (g->count[k] == 0)
            g->v[k] = NAN;
        else if (r->def->comb == PM_COMB_AVERAGE)
            g->v[k] /= g->count[k];
    }
}

int pm_aggregate_one(const pm_series *s, pm_aggregate *g, pm_arena *arena)
{
    return aggregate_one(s, g, arena);
}

int pm_aggregate_time(const pm_analysis *a, pm_metric_result *r, size_t ngrid, double *grid_tmp,
                      pm_arena *arena)
{
    if (r->nhosts_with_data == 1)
        for (size_t h = 0; h < a->in.nhosts; h++)
            if (r->host[h])
                return aggregate_one(r->host[h], &r->agg, arena);
    int rc = pm_aggregate_time_begin(a, r, ngrid, arena);
    if (rc)
        return rc;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        const pm_series *s = r->host[h];
        if (!s)
            continue;
        /* the host's grid points, when they are those of this grid */
        const uint32_t *gk = s->t == a->in.hosts[h].t ? a->in.hosts[h].grid_k : NULL;
        pm_aggregate_time_add(a, r, s, gk, grid_tmp);
    }
    pm_aggregate_time_end(r);
    return 0;
}

int pm_aggregate_index_begin(pm_metric_result *r, size_t n, uint32_t **tc, pm_arena *arena)
{
    pm_aggregate *g = &r->agg;
    g->n = n;
    g->t = pm_arena_alloc(arena, n ? n : 1, sizeof *g->t);
    g->v = pm_arena_alloc(arena, n ? n : 1, sizeof *g->v);
    g->count = pm_arena_alloc(arena, n ? n : 1, sizeof *g->count);
    *tc = calloc(n ? n : 1, sizeof **tc);
    if (!g->t || !g->v || !g->count || !*tc) {
        free(*tc);
        *tc = NULL;
        return PM_ENOMEM;
    }
    return 0;
}

void pm_aggregate_index_add(pm_metric_result *r, const pm_series *s, uint32_t *tc)
{
    pm_aggregate *g = &r->agg;
    for (size_t i = 0; i < s->n; i++) {
        g->t[i] += s->t[i];
        tc[i]++;
        if (!isnan(s->v[i])) {
            g->v[i] += s->v[i];
            g->count[i]++;
        }
    }
}

void pm_aggregate_index_end(const pm_analysis *a, pm_metric_result *r, size_t n, uint32_t *tc)
{
    pm_aggregate *g = &r->agg;
    g->n = n;
    for (size_t i = 0; i < n; i++) {
        g->t[i] /= tc[i];
        if (g->count[i] == 0)
            /* pandas sums an all-NaN row to 0 and averages it to NaN. */
            g->v[i] = a->opts.compat_ska && r->def->comb == PM_COMB_TOTAL ? 0 : NAN;
        else if (r->def->comb == PM_COMB_AVERAGE)
            g->v[i] /= g->count[i];
    }
    free(tc);
    if (a->opts.compat_ska)
        (void)pm_ska_replace_neg(g->v, n);
}

/* Position-by-position combination (--align=index, --compat=ska): point i
 * combines every host's i-th point; its time is the mean of their times. */
int pm_aggregate_index(const pm_analysis *a, pm_metric_result *r, pm_arena *arena)
{
    size_t n = 0;
    for (size_t h = 0; h < a->in.nhosts; h++)
        if (r->host[h] && r->host[h]->n > n)
            n = r->host[h]->n;
    uint32_t *tc;
    int rc = pm_aggregate_index_begin(r, n, &tc, arena);
    if (rc)
        return rc;
    for (size_t h = 0; h < a->in.nhosts; h++)
        if (r->host[h])
            pm_aggregate_index_add(r, r->host[h], tc);
    pm_aggregate_index_end(a, r, n, tc);
    return 0;
}

/* Statistics over every host point (min/max carry their host), plus the
 * per-node title figures and the imbalance. */
