/* Derivation: a host's raw columns -> its series of one catalog metric
 * (rates, unwrapping, repair, units), the all-node aggregate and each
 * metric's statistics folded host by host.  The in-memory analysis builds
 * every metric here on the worker threads (pm_metrics_build); the stream
 * mode (stream.c) derives and folds one host at a time with the same
 * functions.  Semantics: docs/analysis.md. */
#include <gsl/gsl_errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "align.h"
#include "derive.h"
#include "times.h"
#include "perfmon/mem.h"
#include "perfmon/threads.h"

/* --- series ---------------------------------------------------------------- */

/* q comes from the analysis's arena; so does v unless the caller adopts
 * a profile column for it (v_taken, owned when owns_v). */
static pm_series *series_new(pm_arena *arena, size_t n, const double *t, double *v_taken,
                             int owns_v)
{
    pm_series *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->n = n;
    s->t = t;
    s->owns_v = v_taken && owns_v;
    /* Without an arena (stream mode) v and q are malloc'd, freed by the
     * caller once folded; derive_series writes every point of both
     * before anything reads them (zeroing them was 2 % of the stream's
     * CPU time). */
    if (!arena) {
        s->v = pm_alloc_array(n ? n : 1, sizeof *s->v);
        s->q = malloc(n ? n : 1);
    } else {
        s->v = v_taken ? v_taken : pm_arena_alloc(arena, n ? n : 1, sizeof *s->v);
        s->q = pm_arena_alloc(arena, n ? n : 1, 1);
    }
    if (!s->v || !s->q) {
        if (s->owns_v || !arena)
            free(s->v);
        if (!arena)
            free(s->q);
        free(s);
        return NULL;
    }
    return s;
}

void pm_series_delete(pm_series *s)
{
    if (!s)
        return;
    if (s->owns_v || s->kept)
        free(s->v);
    if (s->kept) {
        free(s->q);
        free((void *)(uintptr_t)s->t);
    }
    free(s);
}

/* Derive one column's contribution (display units) into val/q. */
static void derive_column(const pm_analysis *a, const pm_host *ho, const pm_metric_def *def,
                          const pm_column *col, const double *raw, double *val, uint8_t *q,
                          double *tmp, size_t *repaired, size_t *wraps)
{
    size_t n = ho->n;
    const double *t = ho->t;
    const uint32_t *idx = ho->idx;
    int rate = def->rate && col->kind == PM_COUNTER;
    if (!rate && !a->opts.compat_ska) {
        /* A gauge in one pass: the value or a gap.  val may be raw itself
         * (a column taken as the series' storage): idx increases, so
         * idx[i] >= i, and raw[idx[i]] is read before val[i] is written
         * and never after. */
        double conv = def->conversion;
        for (size_t i = 0; i < n; i++) {
            double x = raw[idx[i]];
            int gap = isnan(x);
            q[i] = gap ? PM_Q_GAP : PM_Q_OK;
            val[i] = gap ? x : x / conv;
        }
        return;
    }
    for (size_t i = 0; i < n; i++)
        tmp[i] = raw[idx[i]];
    memset(q, PM_Q_OK, n);
    if (a->opts.compat_ska) {
        /* SKA: unit conversion, then diff / time diff, then every negative
         * or missing value takes the preceding one (0 at the start). */
        for (size_t i = 0; i < n; i++)
            tmp[i] /= def->conversion;
        if (rate) {
            if (n)
                val[0] = NAN;
            for (size_t i = 1; i < n; i++)
                val[i] = (tmp[i] - tmp[i - 1]) / (t[i] - t[i - 1]);
        } else {
            memcpy(val, tmp, n * sizeof *val);
        }
        for (size_t i = 0; i < n; i++) {
            double before = val[i];
            if (isnan(before) || before < 0)
                q[i] = isnan(before) ? PM_Q_GAP : PM_Q_RESET;
        }
        size_t r = 0;
        for (size_t i = 0; i < n; i++)
            r += q[i] == PM_Q_RESET;
        *repaired += r;
        (void)pm_ska_replace_neg(val, n);
        return;
    }
    if (col->wrap > 0)
        *wraps += pm_unwrap(tmp, n, (double)col->wrap, q);
    if (!pm_rate_sparse(t, tmp, n, ho->interval, val, q))
        pm_rate(t, tmp, n, val, q);
    *repaired += pm_repair(val, q, n, a->opts.repair);
    for (size_t i = 0; i < n; i++) {
        if (isnan(val[i])) {
            if (q[i] != PM_Q_DROPPED)
                q[i] = PM_Q_GAP;
        } else {
            val[i] /= def->conversion;
        }
    }
}

/* Scratch arrays reused across the hosts of one metric, so that each
 * series does not fault in fresh zeroed pages. */
typedef struct work {
    pm_arena *shared;            /* the analysis's arena (results) */
    pm_arena own;                /* this thread's scratch below */
    double *val, *tmp, *scratch; /* [maxn] */
    uint8_t *q;                  /* [maxn] */
    double *den;                 /* [maxn] a ratio's denominator */
    uint8_t *dq;                 /* [maxn] its quality */
    double *all;                 /* [total points over hosts] */
    double *grid;                /* [grid points] */
} work;

/* Add one column's derived values into the running sum v/sq (the first
 * column is copied).  A sum over columns (sockets) is only as good as its
 * worst part: one missing column makes the point missing, so a gap in one
 * socket never shows as a dip in the total. */
static void sum_into(double *v, uint8_t *sq, const double *val, const uint8_t *q, size_t n,
                     int first)
{
    if (first) {
        memcpy(v, val, n * sizeof *val);
        memcpy(sq, q, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        v[i] += val[i];
        if (isnan(val[i]))
            sq[i] = q[i] == PM_Q_DROPPED ? PM_Q_DROPPED : PM_Q_GAP;
        else if (sq[i] == PM_Q_OK)
            sq[i] = q[i];
    }
}

static int derive_series(const pm_analysis *a, const pm_metric_def *def, const pm_host *ho,
                         size_t h, work *wk, pm_series **out, double *part_mean, double *part_max,
                         size_t *nparts)
{
    *out = NULL;
    const pm_profile *p = ho->prof;
    size_t n = ho->n;
    pm_series *s = NULL;
    double *val = wk->val, *tmp = wk->tmp, *scratch = wk->scratch;
    uint8_t *q = wk->q;
    int ratio = def->derive == PM_DERIVE_RATIO;
    /* A ratio's parts are summed in raw units; the conversion applies to
     * the quotient. */
    pm_metric_def part = *def;
    if (ratio)
        part.conversion = 1.0;
    size_t nper = 0;
    for (size_t c = 0; c < p->ncols; c++) {
        int role = pm_metric_role(def, p->cols[c].name);
        if (role == PM_ROLE_NONE)
            continue;
        /* Columns with no value at all do not make a metric present. */
        size_t have = 0;
        for (size_t i = 0; i < n && !have; i++)
            have = !isnan(p->values[c][ho->idx[i]]);
        if (!have)
            continue;
        if (!s) {
            /* A column only this metric reads becomes the series' storage
             * (derive_column copies it out before the series is written):
             * no fresh memory to fault in, and nothing to release. */
            double *taken = NULL;
            int in_block = 0;
            if (role != PM_ROLE_PER && a->refs && a->refs[h][c] == 1)
                taken = pm_profile_take_column(ho->prof, c, &in_block);
            const double *raw = taken ? taken : p->values[c];
            s = series_new(wk->shared, n, ho->t, taken, !in_block);
            if (!s) {
                if (taken && !in_block)
                    free(taken);
                return PM_ENOMEM;
            }
            if (role != PM_ROLE_PER) {
                /* the first column: derived into the series itself (over
                 * its raw values when taken: derive_column reads each
                 * before it writes it) */
                derive_column(a, ho, &part, &p->cols[c], raw, s->v, s->q, tmp, &s->repaired,
                              &s->wraps);
                val = s->v;
                q = s->q;
            } else {
                /* (a series that no value column comes into stays zeros,
                 * as the arena's fresh memory is) */
                if (!wk->shared) {
                    memset(s->v, 0, n * sizeof *s->v);
                    memset(s->q, 0, n);
                }
                derive_column(a, ho, &part, &p->cols[c], raw, val, q, tmp, &s->repaired, &s->wraps);
            }
        } else {
            derive_column(a, ho, &part, &p->cols[c], p->values[c], val, q, tmp, &s->repaired,
                          &s->wraps);
        }
        if (role == PM_ROLE_PER) {
            sum_into(wk->den, wk->dq, val, q, n, nper == 0);
            nper++;
            continue;
        }
        if (a->opts.compat_ska && part_mean) {
            pm_stats ps;
            pm_stats_compute(ho->t, val, n, PM_W_NONE, scratch, &ps);
            if (ps.nvalid) {
                *part_mean += ps.amean;
                if (isnan(*part_max) || ps.max > *part_max)
                    *part_max = ps.max;
                (*nparts)++;
            }
        }
        if (val != s->v)
            sum_into(s->v, s->q, val, q, n, s->ncolumns == 0);
        s->ncolumns++;
        val = wk->val;
        q = wk->q;
    }
    if (s && ratio) {
        if (s->ncolumns == 0 || nper == 0) {
            /* A ratio needs both parts. */
            pm_series_delete(s);
            return 0;
        }
        for (size_t i = 0; i < n; i++) {
            double d = wk->den[i];
            if (isnan(s->v[i]) || isnan(d) || d <= 0) {
                /* No quotient: nothing counted (an idle interval) or a part missing. */
                if (s->q[i] != PM_Q_DROPPED)
                    s->q[i] = isnan(d) && wk->dq[i] == PM_Q_DROPPED ? PM_Q_DROPPED : PM_Q_GAP;
                s->v[i] = NAN;
            } else {
                s->v[i] = s->v[i] / d / def->conversion;
                if (s->q[i] == PM_Q_OK)
                    s->q[i] = wk->dq[i];
            }
        }
    }
    if (s && !a->opts.compat_ska && !def->rate && !ratio)
        (void)pm_hold_sparse(ho->t, s->v, s->q, n, ho->interval, tmp);
    if (s) {
        pm_qcounts_add(&s->qc, s->q, n);
        int w = a->opts.compat_ska ? PM_W_NONE : def->rate ? PM_W_STEP : PM_W_TRAPEZOID;
        pm_stats_compute(ho->t, s->v, n, w, scratch, &s->st);
    }
    *out = s;
    return 0;
}

void pm_metric_fold_init(pm_metric_result *r, pm_metric_acc *acc)
{
    memset(acc, 0, sizeof *acc);
    acc->max_mean = NAN;
    pm_stats *st = &r->all;
    memset(st, 0, sizeof *st);
    st->min = st->max = st->t_min = st->t_max = NAN;
    st->host_min = st->host_max = -1;
    r->max_per_node = NAN;
}

void pm_metric_fold(pm_metric_result *r, pm_metric_acc *acc, const pm_series *s, size_t h)
{
    pm_stats *st = &r->all;
    if (!s)
        return;
    st->n += s->n;
    /* (in locals: a store to acc->sum could otherwise change s->v) */
    const double *v = s->v;
    double sum = acc->sum;
    size_t m = acc->m;
    for (size_t i = 0; i < s->n; i++)
        if (!isnan(v[i])) {
            sum += v[i];
            m++;
        }
    acc->sum = sum;
    acc->m = m;
    for (int k = 0; k < PM_Q_N; k++)
        r->qc.n[k] += s->qc.n[k];
    r->repaired += s->repaired;
    r->wraps += s->wraps;
    if (!s->st.nvalid)
        return;
    if (isnan(st->min) || s->st.min < st->min) {
        st->min = s->st.min;
        st->t_min = s->st.t_min;
        st->host_min = (int)h;
    }
    if (isnan(st->max) || s->st.max > st->max) {
        st->max = s->st.max;
        st->t_max = s->st.t_max;
        st->host_max = (int)h;
    }
    acc->sum_means += s->st.mean;
    acc->nmeans++;
    if (isnan(acc->max_mean) || s->st.mean > acc->max_mean)
        acc->max_mean = s->st.mean;
    if (isnan(r->max_per_node) || s->st.max > r->max_per_node)
        r->max_per_node = s->st.max;
    if (s->st.duration > 0) {
        acc->wsum += s->st.mean * s->st.duration;
        acc->wtot += s->st.duration;
    }
}

void pm_metric_fold_end(const pm_analysis *a, pm_metric_result *r, const pm_metric_acc *acc,
                        double part_mean, size_t nparts, double part_max)
{
    pm_stats *st = &r->all;
    size_t m = acc->m, nmeans = acc->nmeans;
    double sum_means = acc->sum_means;
    st->nvalid = m;
    r->avg_per_node = nmeans ? sum_means / (double)nmeans : NAN;
    if (a->opts.compat_ska && nparts > 1) {
        /* SKA's energy titles: per socket means and maxima. */
        r->avg_per_node = part_mean / (double)nparts;
        r->max_per_node = part_max;
    }
    r->imbalance =
        nmeans && r->avg_per_node != 0 ? acc->max_mean / (sum_means / (double)nmeans) : NAN;
    st->mean = acc->wtot > 0 ? acc->wsum / acc->wtot : r->avg_per_node;
    st->amean = NAN;
    st->p50 = st->p95 = st->sd = NAN;
    if (m) {
        st->amean = acc->sum / (double)m;
        if (a->opts.compat_ska)
            st->mean = st->amean;
    }
    st->duration = a->t_end - a->t_start;
}

static int metric_stats(const pm_analysis *a, pm_metric_result *r, double part_mean, size_t nparts,
                        double part_max, work *wk)
{
    double *all = wk->all;
    size_t m = 0;
    pm_metric_acc acc;
    pm_metric_fold_init(r, &acc);
    for (size_t h = 0; h < a->in.nhosts; h++) {
        const pm_series *s = r->host[h];
        pm_metric_fold(r, &acc, s, h);
        for (size_t i = 0; s && i < s->n; i++)
            if (!isnan(s->v[i]))
                all[m++] = s->v[i];
    }
    pm_metric_fold_end(a, r, &acc, part_mean, nparts, part_max);
    pm_stats *st = &r->all;
    if (m) {
        if (m > 1)
            st->sd = pm_sd(all, m, st->amean);
        pm_p50_p95_range(all, m, st->min, st->max, &st->p50, &st->p95);
    }
    return 0;
}

/* --- the whole run ------------------------------------------------------------ */

/* One thread's scratch, reused across the metrics it builds, so that big
 * buffers are faulted in once, not once per metric and host. */
static int work_init(const pm_analysis *a, work *wk, pm_arena *shared)
{
    pm_arena *own = &wk->own;
    pm_arena_init(own);
    wk->shared = shared;
    size_t maxn = 1, total = 1;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        if (a->in.hosts[h].n > maxn)
            maxn = a->in.hosts[h].n;
        total += a->in.hosts[h].n;
    }
    size_t ng = pm_grid_points(a);
    wk->val = pm_arena_alloc(own, maxn, sizeof *wk->val);
    wk->tmp = pm_arena_alloc(own, maxn, sizeof *wk->tmp);
    wk->scratch = pm_arena_alloc(own, maxn > ng ? maxn : ng ? ng : 1, sizeof *wk->scratch);
    wk->q = pm_arena_alloc(own, maxn, 1);
    wk->den = pm_arena_alloc(own, maxn, sizeof *wk->den);
    wk->dq = pm_arena_alloc(own, maxn, 1);
    /* The stream mode pools no values (stream.c). */
    wk->all = a->opts.stream ? NULL : pm_arena_alloc(own, total, sizeof *wk->all);
    wk->grid = pm_arena_alloc(own, ng ? ng : 1, sizeof *wk->grid);
    return wk->val && wk->tmp && wk->scratch && wk->q && wk->den && wk->dq &&
                   (wk->all || a->opts.stream) && wk->grid
               ? 0
               : PM_ENOMEM;
}

static void work_free(work *wk)
{
    pm_arena_free(&wk->own);
    pthread_mutex_destroy(&wk->own.lock);
}

/* Derive, aggregate and summarise catalog entry r->def (one thread). */
static int build_metric(const pm_analysis *a, pm_metric_result *r, work *wk)
{
    r->host = calloc(a->in.nhosts ? a->in.nhosts : 1, sizeof *r->host);
    if (!r->host)
        return PM_ENOMEM;
    int rc = 0;
    double part_mean = 0, part_max = NAN;
    size_t nparts = 0;
    for (size_t h = 0; h < a->in.nhosts && !rc; h++) {
        rc = derive_series(a, r->def, &a->in.hosts[h], h, wk, &r->host[h], &part_mean, &part_max,
                           &nparts);
        if (!rc && r->host[h])
            r->nhosts_with_data++;
    }
    if (rc || r->nhosts_with_data == 0)
        return rc;
    if (a->opts.compat_ska || a->opts.align == PM_ALIGN_INDEX)
        rc = pm_aggregate_index(a, r, wk->shared);
    else
        rc = pm_aggregate_time(a, r, pm_grid_points(a), wk->grid, wk->shared);
    if (rc)
        return rc;
    /* wk->scratch holds max(longest host, grid) points: enough for either
     * kind of aggregate. */
    pm_aggregate_stats(a, r, wk->scratch);
    return metric_stats(a, r, part_mean, nparts, part_max, wk);
}

void pm_aggregate_stats(const pm_analysis *a, pm_metric_result *r, double *scratch)
{
    pm_aggregate *g = &r->agg;
    int w = a->opts.compat_ska ? PM_W_NONE : r->def->rate ? PM_W_STEP : PM_W_TRAPEZOID;
    pm_stats_compute(g->t, g->v, g->n, w, scratch, &g->st);
    g->min_count = UINT32_MAX;
    for (size_t i = 0; i < g->n; i++)
        if (g->count[i] && g->count[i] < g->min_count)
            g->min_count = g->count[i];
    if (g->min_count == UINT32_MAX)
        g->min_count = 0;
}

struct work *pm_work_new(const pm_analysis *a)
{
    work *wk = calloc(1, sizeof *wk);
    if (wk && work_init(a, wk, NULL) != 0) {
        pm_work_delete(wk);
        return NULL;
    }
    return wk;
}

void pm_work_delete(struct work *wk)
{
    if (!wk)
        return;
    work_free(wk);
    free(wk);
}

int pm_series_derive(const pm_analysis *a, const pm_metric_def *def, const pm_host *ho,
                     struct work *wk, pm_series **out)
{
    return derive_series(a, def, ho, 0, wk, out, NULL, NULL, NULL);
}

/* Raw-column reference counts: refs[h][c] = metrics still to derive from
 * column c of host h. */
static void release_column(pm_analysis *a, size_t h, size_t c)
{
    pm_profile_release_column(a->in.hosts[h].prof, c);
}

typedef struct metric_ctx {
    pm_analysis *a;
    int *rcs;
    size_t series_done; /* for opts.progress */
} metric_ctx;

static void *metric_worker(void *arg)
{
    pm_pool *p = arg;
    metric_ctx *mc = p->ctx;
    pm_analysis *a = mc->a;
    work wk;
    int wrc = work_init(a, &wk, &a->arena);
    for (size_t i; (i = pm_pool_next(p)) < p->n;) {
        mc->rcs[i] = wrc ? wrc : build_metric(a, &a->metrics[i], &wk);
        /* Columns no later metric needs are released; other threads only
         * read columns their own metric matches, whose counts are still
         * above zero. */
        const pm_metric_def *def = a->metrics[i].def;
        pthread_mutex_lock(&p->lock);
        for (size_t h = 0; h < a->in.nhosts; h++) {
            const pm_profile *pr = a->in.hosts[h].prof;
            for (size_t c = 0; c < pr->ncols; c++)
                if (a->refs[h][c] && pm_metric_matches(def, pr->cols[c].name) &&
                    --a->refs[h][c] == 0)
                    release_column(a, h, c);
        }
        p->done++;
        mc->series_done += a->in.nhosts;
        if (a->opts.progress) {
            pm_progress pr = {.stage = PM_STAGE_DERIVE,
                              .hosts_done = p->done == p->n ? a->in.nhosts : 0,
                              .hosts_total = a->in.nhosts,
                              .metrics_done = p->done,
                              .metrics_total = p->n,
                              .series_done = mc->series_done,
                              .series_total = p->n * a->in.nhosts};
            a->opts.progress(&pr, a->opts.progress_user);
        }
        pthread_mutex_unlock(&p->lock);
    }
    work_free(&wk);
    return NULL;
}

static int init_refs(pm_analysis *a, pm_error *err)
{
    a->refs = calloc(a->in.nhosts ? a->in.nhosts : 1, sizeof *a->refs);
    if (!a->refs)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    for (size_t h = 0; h < a->in.nhosts; h++) {
        const pm_profile *p = a->in.hosts[h].prof;
        a->refs[h] = calloc(p->ncols ? p->ncols : 1, sizeof **a->refs);
        if (!a->refs[h])
            return pm_error_set(err, PM_ENOMEM, "out of memory");
        for (size_t c = 0; c < p->ncols; c++) {
            for (size_t d = 0; d < a->catalog->n; d++)
                a->refs[h][c] += (uint32_t)pm_metric_matches(&a->catalog->m[d], p->cols[c].name);
            if (a->refs[h][c] == 0)
                release_column(a, h, c);
        }
    }
    return 0;
}

/* Repairs per node, known once the metrics are built. */
void pm_count_repairs(pm_analysis *a)
{
    a->job.repaired = 0;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        size_t rep = 0;
        for (size_t m = 0; m < a->nmetrics; m++)
            if (a->metrics[m].host[h])
                rep += a->metrics[m].host[h]->repaired;
        a->nodes[h].repaired = rep;
        a->job.repaired += rep;
    }
}

int pm_metrics_build(pm_analysis *a, pm_error *err)
{
    int rrc = init_refs(a, err);
    if (rrc)
        return rrc;
    const pm_catalog *cat = a->catalog;
    a->metrics = calloc(cat->n ? cat->n : 1, sizeof *a->metrics);
    int *rcs = calloc(cat->n ? cat->n : 1, sizeof *rcs);
    if (!a->metrics || !rcs) {
        free(rcs);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    for (size_t d = 0; d < cat->n; d++)
        a->metrics[d].def = &cat->m[d];
    a->nmetrics = cat->n;
    metric_ctx ctx = {a, rcs, 0};
    pm_pool mp = {.n = cat->n, .ctx = &ctx};
    pthread_mutex_init(&mp.lock, NULL);
    pm_pool_run(&mp, metric_worker, cat->n);
    pthread_mutex_destroy(&mp.lock);
    for (size_t d = 0; d < cat->n; d++)
        if (rcs[d]) {
            int rc = rcs[d];
            free(rcs);
            if (rc == PM_ELIMIT)
                return pm_error_set(err, rc,
                                    "the hosts span %.0f s at a %.3g s interval: more than %u grid "
                                    "points; use --start/--end or --align=index",
                                    a->t_end - a->t_start, a->grid_step, PM_MAX_GRID_POINTS);
            return pm_error_set(err, rc, "%s: cannot derive or aggregate: out of memory",
                                cat->m[d].id);
        }
    free(rcs);
    /* Omit metrics that no host has. */
    size_t k = 0;
    for (size_t i = 0; i < a->nmetrics; i++) {
        if (a->metrics[i].nhosts_with_data == 0) {
            pm_metric_result *r = &a->metrics[i];
            for (size_t h = 0; h < a->in.nhosts && r->host; h++)
                pm_series_delete(r->host[h]);
            free(r->host);
            continue;
        }
        a->metrics[k++] = a->metrics[i];
    }
    a->nmetrics = k;
    return 0;
}
