/* The analysis in bounded memory (--stream): hosts are read again one at a
 * time, derived on the worker threads and folded into per-metric
 * accumulators in host order, so that every sum is formed in the order of
 * the in-memory analysis and the results are the same, bit for bit.
 * Design and state: docs/analysis.md, "Analysis in bounded memory". */
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "derive.h"
#include "gpu_verdict.h"
#include "perfmon/input.h"
#include "phase_contrib.h"
#include "report_keep.h"
#include "rules.h"
#include "stream.h"
#include "stream_spill.h"
#include "summary.h"
#include "times.h"
#include "perfmon/mem.h"
#include "perfmon/threads.h"

/* The exact histogram behind p50 and p95: each value's order-preserving
 * 64-bit key, bucketed by its top HBITS bits. */
#define HBITS 16
#define NBUCKETS ((size_t)1 << HBITS)
#define NRANKS 4 /* p50's two order statistics, then p95's */

static uint64_t order_key(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

static size_t bucket_of(double v)
{
    return (size_t)(order_key(v) >> (64 - HBITS));
}

/* A wanted bucket holding more values than this is narrowed by another
 * histogram, of the key's next 16 bits, before its values are gathered;
 * the environment variable PM_STREAM_GATHER overrides it (the tests make
 * every bucket narrowed). */
#define GATHER_MAX ((size_t)1 << 18)
/* Larger buckets are gathered too while they add up to at most this many
 * values in a refine pass (16 MiB): a narrowing pass costs another pass
 * over every value (over every host, without the spill), and its result
 * is the same. */
#define GATHER_ALL ((size_t)1 << 21)

static size_t gather_max(void)
{
    const char *e = getenv("PM_STREAM_GATHER");
    char *end;
    unsigned long long v = e ? strtoull(e, &end, 10) : 0;
    return e && *e && !*end ? (size_t)v : GATHER_MAX;
}

/* One order statistic being found: the values whose key starts with
 * prefix (the key's bits from shift up) hold it, at rank within. */
typedef struct rank_want {
    size_t rank;     /* 0-based order statistic */
    uint64_t prefix; /* key >> shift of its bucket */
    int shift;       /* 48, 32, 16 or 0 */
    size_t within;   /* its rank among the bucket's values */
    size_t count;    /* the bucket's values */
    int known;       /* found (v), or the bucket's values are all equal */
    double v;
    /* a refine pass: the bucket's histogram of the next 16 bits, or its
     * values; share >= 0: another rank's bucket is the same */
    int share;
    uint64_t *sub;
    double *smin, *smax;
    double *got;
    size_t ngot, capgot;
} rank_want;

/* One metric's state across the passes. */
typedef struct macc {
    pm_metric_acc acc;
    /* time alignment: the first host's series (times, grid points, values),
     * until a second host comes */
    double *pend_t, *pend_v;
    uint32_t *pend_k;
    size_t pend_n;
    int begun;
    /* alignment by position */
    uint32_t *tc;
    size_t nidx;
    /* pass 1: histogram; pass 2: sd sums and the wanted buckets' values */
    uint64_t *count;
    double *bmin, *bmax;
    rank_want want[NRANKS];
    double ss, comp;
} macc;

typedef struct sctx {
    pm_analysis *a;
    pm_metric_result *res; /* [catalog size] */
    macc *acc;             /* [catalog size] */
    int pass;              /* 1: fold, 2 and on: refine */
    size_t hpass;          /* the passes over the hosts so far (refine passes
                            * from the spill read none) */
    size_t passes;         /* passes over the hosts known so far, for opts.progress */
    size_t pass0;          /* the survey's passes over the hosts before */
    pm_phase_contrib pc;   /* each phase's figures, filled in the fold */
    unsigned char *need;   /* [catalog size] a refine pass derives the metric */
    size_t ngrid;
    double *tmp;    /* [ngrid] placing a host on the grid (folds are serial) */
    pm_spill sp;    /* the fold's values, for the refine passes */
    int sp_open;    /* sp is set up */
    int spill;      /* the fold writes them (no output needs the hosts again) */
    int from_spill; /* the refine passes read them (no write failed; the
                     * metrics the spill refused are read again) */
    /* the sequencer: host h folds when turn == h */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    size_t turn;
    int rc;
    pm_error err;
} sctx;

static void fail(sctx *c, int rc, const pm_error *e)
{
    if (!c->rc) {
        c->rc = rc;
        if (e)
            c->err = *e;
        else
            pm_error_set(&c->err, rc, "out of memory");
    }
}

static void pend_free(macc *m)
{
    free(m->pend_t);
    free(m->pend_v);
    free(m->pend_k);
    m->pend_t = m->pend_v = NULL;
    m->pend_k = NULL;
}

static int report_fold(sctx *c, size_t d, pm_series **sp);

/* Whether every valid value of s has the same bits: equal least and
 * largest values, not zeros (-0 and +0 are equal, with other bits). */
static int series_constant(const pm_series *s)
{
    return s->st.nvalid && s->st.min == s->st.max && s->st.min != 0;
}

/* Pass 1: host h's series s of metric d, in host order (hx: the host, its
 * times and grid points). */
static void fold1(sctx *c, size_t d, size_t h, pm_series **sp, const pm_host *hx)
{
    pm_analysis *a = c->a;
    pm_metric_result *r = &c->res[d];
    macc *m = &c->acc[d];
    pm_series *s = *sp;
    r->host[h] = s;
    if (!s)
        return;
    r->nhosts_with_data++;
    if (a->keep && report_fold(c, d, sp))
        return;
    pm_metric_fold(r, &m->acc, s, h);
    if (series_constant(s)) {
        /* every value the same bits: one bucket, as the loop would */
        double v = s->st.min;
        size_t b = bucket_of(v);
        if (m->count[b] == 0 || v < m->bmin[b])
            m->bmin[b] = v;
        if (m->count[b] == 0 || v > m->bmax[b])
            m->bmax[b] = v;
        m->count[b] += s->st.nvalid;
    }
    for (size_t i = 0; i < s->n && !series_constant(s); i++) {
        double v = s->v[i];
        if (isnan(v))
            continue;
        size_t b = bucket_of(v);
        if (m->count[b]++ == 0 || v < m->bmin[b])
            m->bmin[b] = v;
        if (m->count[b] == 1 || v > m->bmax[b])
            m->bmax[b] = v;
    }
    if (a->opts.align == PM_ALIGN_INDEX) {
        if (!m->tc) {
            size_t nmax = 0;
            for (size_t k = 0; k < a->in.nhosts; k++)
                if (a->in.hosts[k].n > nmax)
                    nmax = a->in.hosts[k].n;
            if (pm_aggregate_index_begin(r, nmax, &m->tc, &a->arena)) {
                fail(c, PM_ENOMEM, NULL);
                return;
            }
        }
        pm_aggregate_index_add(r, s, m->tc);
        if (s->n > m->nidx)
            m->nidx = s->n;
        return;
    }
    if (r->nhosts_with_data == 1) {
        /* A metric of one host is that host's series (pm_aggregate_time). */
        size_t n = s->n ? s->n : 1;
        m->pend_v = pm_alloc_array(n, sizeof *m->pend_v);
        m->pend_t = pm_alloc_array(n, sizeof *m->pend_t);
        m->pend_k = hx->grid_k ? pm_alloc_array(n, sizeof *m->pend_k) : NULL;
        if (!m->pend_v || !m->pend_t || (hx->grid_k && !m->pend_k)) {
            fail(c, PM_ENOMEM, NULL);
            return;
        }
        memcpy(m->pend_v, s->v, s->n * sizeof *s->v);
        memcpy(m->pend_t, s->t, s->n * sizeof *s->t);
        if (m->pend_k)
            memcpy(m->pend_k, hx->grid_k, s->n * sizeof *m->pend_k);
        m->pend_n = s->n;
        return;
    }
    if (!m->begun) {
        int rc = pm_aggregate_time_begin(a, r, c->ngrid, &a->arena);
        if (rc) {
            pm_error e;
            if (rc == PM_ELIMIT)
                pm_error_set(&e, rc,
                             "the hosts span %.0f s at a %.3g s interval: more than %u grid "
                             "points; use --start/--end or --align=index",
                             a->t_end - a->t_start, a->grid_step, PM_MAX_GRID_POINTS);
            else
                pm_error_set(&e, rc, "%s: cannot derive or aggregate: out of memory", r->def->id);
            fail(c, rc, &e);
            return;
        }
        m->begun = 1;
        pm_series first = {.n = m->pend_n, .t = m->pend_t, .v = m->pend_v};
        pm_aggregate_time_add(a, r, &first, m->pend_k, c->tmp);
        pend_free(m);
    }
    pm_aggregate_time_add(a, r, s, hx->grid_k, c->tmp);
}

/* The report's digest in the fold (report_keep.c): the repair times in
 * host order, and in a job of at most PM_LEGEND_MAX_HOSTS hosts every
 * series whole (the per-node plots draw each). */
static int report_fold(sctx *c, size_t d, pm_series **sp)
{
    pm_analysis *a = c->a;
    pm_series *s = *sp;
    if (pm_report_keep_repairs(a, d, s)) {
        fail(c, PM_ENOMEM, NULL);
        return 1;
    }
    if (a->in.nhosts <= PM_LEGEND_MAX_HOSTS) {
        double *t = pm_alloc_array(s->n ? s->n : 1, sizeof *t);
        if (!t) {
            fail(c, PM_ENOMEM, NULL);
            return 1;
        }
        memcpy(t, s->t, s->n * sizeof *t);
        s->t = t;
        s->kept = 1;
        *sp = NULL; /* (the worker leaves it) */
    }
    return 0;
}

/* Refine passes: the pooled sd's sums (the first one), and the values of
 * the wanted buckets, or their histograms of the next 16 bits: n values
 * of a host's series of metric d, in host order; a metric's on one thread
 * at a time.  Returns 0 or PM_ENOMEM. */
static int fold2(sctx *c, size_t d, const double *val, size_t n)
{
    macc *m = &c->acc[d];
    if (c->pass == 2) {
        /* pm_sd's sums, in the same order */
        double mean = c->res[d].all.amean, ss = m->ss, comp = m->comp;
        for (size_t i = 0; i < n; i++) {
            double v = val[i];
            if (isnan(v))
                continue;
            double dv = v - mean;
            ss += dv * dv;
            comp += dv;
        }
        m->ss = ss;
        m->comp = comp;
    }
    /* each wanted bucket still to search (one for ranks that share it) */
    for (int k = 0; k < NRANKS; k++) {
        rank_want *w = &m->want[k];
        if (w->known || w->share >= 0)
            continue;
        int shift = w->shift;
        uint64_t prefix = w->prefix;
        for (size_t i = 0; i < n; i++) {
            double v = val[i];
            if (isnan(v))
                continue;
            uint64_t key = order_key(v);
            if (key >> shift != prefix)
                continue;
            if (w->sub) {
                size_t b = (size_t)(key >> (shift - HBITS)) & (NBUCKETS - 1);
                if (w->sub[b]++ == 0 || v < w->smin[b])
                    w->smin[b] = v;
                if (w->sub[b] == 1 || v > w->smax[b])
                    w->smax[b] = v;
                continue;
            }
            if (w->ngot == w->capgot) {
                size_t nc = w->capgot ? 2 * w->capgot : 1024;
                double *g = pm_realloc_array(w->got, nc, sizeof *g);
                if (!g)
                    return PM_ENOMEM;
                w->got = g;
                w->capgot = nc;
            }
            w->got[w->ngot++] = v;
        }
    }
    return 0;
}

/* Whether the refine passes read metric d's values from the spill. */
static int spilled(const sctx *c, size_t d)
{
    return c->from_spill && pm_spill_holds(&c->sp, d);
}

/* fold2 of n values x (a constant series, which the spill leaves out):
 * the same sums, one value at a time, and x gathered n times. */
static int fold2_const(sctx *c, size_t d, double x, size_t n)
{
    macc *m = &c->acc[d];
    if (c->pass == 2) {
        double mean = c->res[d].all.amean, ss = m->ss, comp = m->comp;
        double dv = x - mean;
        for (size_t i = 0; i < n; i++) {
            ss += dv * dv;
            comp += dv;
        }
        m->ss = ss;
        m->comp = comp;
    }
    uint64_t key = order_key(x);
    for (int k = 0; k < NRANKS; k++) {
        rank_want *w = &m->want[k];
        if (w->known || w->share >= 0 || key >> w->shift != w->prefix)
            continue;
        if (w->sub) {
            size_t b = (size_t)(key >> (w->shift - HBITS)) & (NBUCKETS - 1);
            if (w->sub[b] == 0 || x < w->smin[b])
                w->smin[b] = x;
            if (w->sub[b] == 0 || x > w->smax[b])
                w->smax[b] = x;
            w->sub[b] += n;
            continue;
        }
        if (w->capgot - w->ngot < n) {
            size_t nc = w->capgot ? w->capgot : 1024;
            while (nc - w->ngot < n)
                nc *= 2;
            double *g = pm_realloc_array(w->got, nc, sizeof *g);
            if (!g)
                return PM_ENOMEM;
            w->got = g;
            w->capgot = nc;
        }
        for (size_t i = 0; i < n; i++)
            w->got[w->ngot++] = x;
    }
    return 0;
}

/* opts.progress: hosts folded in this pass (under c->lock, in host order,
 * so never two calls at once). */
static void report_progress(sctx *c, size_t hosts_done)
{
    pm_analysis *a = c->a;
    pm_progress pr = {.stage = PM_STAGE_DERIVE,
                      .hosts_done = hosts_done,
                      .hosts_total = a->in.nhosts,
                      .metrics_total = a->catalog->n,
                      .pass = c->pass0 + c->hpass,
                      .passes = c->pass0 + c->passes};
    a->opts.progress(&pr, a->opts.progress_user);
}

static void *host_worker(void *arg)
{
    pm_pool *pool = arg;
    sctx *c = pool->ctx;
    pm_analysis *a = c->a;
    const pm_catalog *cat = a->catalog;
    struct work *wk = pm_work_new(a);
    pm_series **ser = calloc(cat->n ? cat->n : 1, sizeof *ser);
    size_t maxng = a->keep && a->keep->maxng ? a->keep->maxng : 1;
    double *rowbuf = pm_alloc_array(maxng, sizeof *rowbuf);
    for (size_t h; (h = pm_pool_next(pool)) < pool->n;) {
        pm_error e;
        pm_error_clear(&e);
        int rc = wk && ser && rowbuf ? 0 : PM_ENOMEM;
        pm_profile *prof = NULL;
        if (!rc)
            rc = pm_input_host_load(&a->in, h, 1, &prof, &e);
        else
            pm_input_host_drop(&a->in, h); /* under mpirun, another rank sends it all the same */
        pm_host hx = a->in.hosts[h];
        hx.prof = prof;
        if (!rc)
            rc = pm_host_times(a, &hx, c->ngrid);
        /* A profile still being written has grown since the survey: its
         * new samples come after those the survey counted, and the grid,
         * the window and the aggregates were sized from those. */
        if (!rc && hx.n > a->in.hosts[h].n)
            hx.n = a->in.hosts[h].n;
        if (!rc && c->pass == 1) {
            /* (the host's own slot and event list: no lock) */
            rc = pm_job_end_host(a, h, &hx);
            pm_summary_host(a, &hx, &a->nodes[h]);
            a->in.hosts[h].ncpus = hx.ncpus;
            a->in.hosts[h].mem_total = hx.mem_total;
        }
        for (size_t d = 0; d < cat->n && !rc; d++) {
            if (c->pass >= 2 && (!c->need[d] || spilled(c, d)))
                continue;
            rc = pm_series_derive(a, &cat->m[d], &hx, wk, &ser[d]);
            if (!rc && ser[d] && c->pass == 1) {
                pm_series *s = ser[d];
                /* (the slope rules read it, not the values) */
                if (pm_rules_want_slope(a, cat->m[d].id))
                    s->slope_ok = pm_slope(s->t, s->v, s->n, &s->slope, &s->slope_r2) == 0;
                if (a->keep)
                    rc = pm_report_keep_host(a, d, h, s, rowbuf, &e);
                /* (a constant series is replayed from its statistics) */
                if (!rc && c->spill && !series_constant(s))
                    pm_spill_put(&c->sp, d, h, s->v, s->n);
            }
        }
        /* (the host's own slots: no lock) */
        if (!rc && c->pass == 1 && a->in.phases.n)
            pm_phase_contrib_host(a, &c->pc, h, ser);
        /* the gpu rules' per-sample findings (the host's own slot) */
        if (!rc && c->pass == 1)
            rc = pm_gpu_signs_host(a, h, ser, &a->nodes[h]);
        pm_profile_recycle(prof); /* (no column was taken: a->refs is NULL) */
        pthread_mutex_lock(&c->lock);
        while (c->turn != h)
            pthread_cond_wait(&c->cond, &c->lock);
        if (rc)
            fail(c, rc, e.msg[0] ? &e : NULL);
        for (size_t d = 0; d < cat->n && !c->rc; d++) {
            if (c->pass == 1)
                fold1(c, d, h, &ser[d], &hx);
            else if (ser[d] && fold2(c, d, ser[d]->v, ser[d]->n))
                fail(c, PM_ENOMEM, NULL);
        }
        if (!c->rc && c->pass == 2 && a->opts.host_out)
            a->opts.host_out(a->opts.host_out_user, a, c->res, cat->n, h, &hx,
                             (const pm_series *const *)ser);
        c->turn++;
        if (a->opts.progress)
            report_progress(c, c->turn);
        pthread_cond_broadcast(&c->cond);
        pthread_mutex_unlock(&c->lock);
        for (size_t d = 0; d < cat->n && ser; d++) {
            pm_series *s = ser[d];
            ser[d] = NULL;
            if (!s)
                continue;
            /* the values go; pass 1's statistics stay in r->host[h] */
            free(s->v);
            free(s->q);
            s->v = NULL;
            s->q = NULL;
            s->t = NULL;
            s->owns_v = 0;
            if (c->pass >= 2 || c->res[d].host[h] != s)
                pm_series_delete(s);
        }
        pm_host_times_free(&hx);
    }
    free(ser);
    free(rowbuf);
    pm_work_delete(wk);
    return NULL;
}

static int run_pass(sctx *c, int pass)
{
    c->pass = pass;
    c->turn = 0;
    c->hpass++;
    c->a->in.stream_pass = c->pass0 + c->hpass;
    if (c->passes < c->hpass)
        c->passes = c->hpass;
    if (c->a->opts.progress)
        report_progress(c, 0);
    pm_pool pool = {.n = c->a->in.nhosts, .ctx = c};
    pthread_mutex_init(&pool.lock, NULL);
    pm_pool_run(&pool, host_worker, c->a->in.nhosts);
    pthread_mutex_destroy(&pool.lock);
    return c->rc;
}

/* A refine pass from the spill: each metric on one thread, its hosts in
 * host order, their values read back a block at a time. */
#define SPILL_BLOCK ((size_t)1 << 16)

static void *spill_worker(void *arg)
{
    pm_pool *pool = arg;
    sctx *c = pool->ctx;
    pm_analysis *a = c->a;
    double *buf = pm_alloc_array(SPILL_BLOCK, sizeof *buf);
    for (size_t d; (d = pm_pool_next(pool)) < pool->n;) {
        pm_error e;
        pm_error_clear(&e);
        int rc = buf ? 0 : PM_ENOMEM;
        const pm_metric_result *r = &c->res[d];
        for (size_t h = 0; h < a->in.nhosts && c->need[d] && spilled(c, d) && !rc; h++) {
            const pm_series *s = r->host[h];
            if (s && series_constant(s)) {
                rc = fold2_const(c, d, s->st.min, s->st.nvalid);
                continue;
            }
            for (size_t i = 0; s && i < s->n && !rc; i += SPILL_BLOCK) {
                size_t k = s->n - i < SPILL_BLOCK ? s->n - i : SPILL_BLOCK;
                rc = pm_spill_get(&c->sp, d, h, i, buf, k, &e);
                if (!rc)
                    rc = fold2(c, d, buf, k);
            }
        }
        if (rc) {
            pthread_mutex_lock(&c->lock);
            fail(c, rc, e.msg[0] ? &e : NULL);
            pthread_mutex_unlock(&c->lock);
        }
    }
    free(buf);
    return NULL;
}

static int spill_pass(sctx *c, int pass)
{
    c->pass = pass; /* (not a pass over the hosts: no progress) */
    size_t nm = c->a->catalog->n;
    pm_pool pool = {.n = nm, .ctx = c};
    pthread_mutex_init(&pool.lock, NULL);
    pm_pool_run(&pool, spill_worker, nm);
    pthread_mutex_destroy(&pool.lock);
    return c->rc;
}

/* After pass 1: where the ranks that p50 and p95 need lie (those of
 * pm_p50_p95_range on m values). */
static void locate_ranks(macc *m, size_t nvalid)
{
    double h50 = (double)(nvalid - 1) * 0.5, h95 = (double)(nvalid - 1) * 0.95;
    size_t r50 = (size_t)floor(h50), r95 = (size_t)floor(h95);
    size_t ranks[NRANKS] = {r50, r50 + 1 < nvalid ? r50 + 1 : r50, r95,
                            r95 + 1 < nvalid ? r95 + 1 : r95};
    for (int k = 0; k < NRANKS; k++) {
        size_t cum = 0, b = 0;
        while (cum + m->count[b] <= ranks[k])
            cum += m->count[b++];
        rank_want *w = &m->want[k];
        w->rank = ranks[k];
        w->prefix = b;
        w->shift = 64 - HBITS;
        w->within = ranks[k] - cum;
        w->count = m->count[b];
        w->known = m->bmin[b] == m->bmax[b];
        w->v = m->bmin[b];
    }
}

static void want_clear(rank_want *w)
{
    free(w->sub);
    free(w->smin);
    free(w->smax);
    free(w->got);
    w->sub = NULL;
    w->smin = w->smax = w->got = NULL;
    w->ngot = w->capgot = 0;
}

/* Before a refine pass: what each rank still to find collects (a bucket
 * of more than cap values is gathered while *budget, the values the
 * larger buckets of this pass may still gather, allows, else narrowed).
 * Returns whether any is left, -1 when out of memory. */
static int refine_plan(macc *m, size_t cap, size_t *budget)
{
    int left = 0;
    for (int k = 0; k < NRANKS; k++) {
        rank_want *w = &m->want[k];
        w->share = -1;
        if (w->known)
            continue;
        left = 1;
        for (int j = 0; j < k && w->share < 0; j++)
            if (!m->want[j].known && m->want[j].shift == w->shift && m->want[j].prefix == w->prefix)
                w->share = j;
        if (w->share >= 0 || w->count <= cap || w->shift == 0)
            continue;
        if (w->count <= *budget) {
            *budget -= w->count;
            /* room for all of them at once: doubling would hold up to
             * three times as much while it copies */
            w->got = pm_alloc_array(w->count ? w->count : 1, sizeof *w->got);
            if (!w->got)
                return -1;
            w->capgot = w->count ? w->count : 1;
            continue;
        }
        w->sub = calloc(NBUCKETS, sizeof *w->sub);
        w->smin = pm_alloc_array(NBUCKETS, sizeof *w->smin);
        w->smax = pm_alloc_array(NBUCKETS, sizeof *w->smax);
        if (!w->sub || !w->smin || !w->smax)
            return -1;
    }
    return left;
}

/* After a refine pass: each rank found among its bucket's values, or
 * placed in a bucket of the next 16 bits. */
static void refine_resolve(macc *m)
{
    for (int k = 0; k < NRANKS; k++) {
        rank_want *w = &m->want[k];
        if (w->known)
            continue;
        rank_want *src = w->share >= 0 ? &m->want[w->share] : w;
        if (src->sub) {
            size_t cum = 0, b = 0;
            while (cum + src->sub[b] <= w->within)
                cum += src->sub[b++];
            w->prefix = w->prefix << HBITS | b;
            w->shift -= HBITS;
            w->within -= cum;
            w->count = src->sub[b];
            w->known = src->smin[b] == src->smax[b];
            w->v = src->smin[b];
            continue;
        }
        /* Selected, not sorted (a bucket may hold millions): the values
         * that compare equal in one bucket have the same bits (-0 and +0
         * are in different buckets), so any order statistic is those
         * bits.  Selection leaves the array a permutation of itself, so
         * the ranks that share it select in turn. */
        w->v = w->within < src->ngot ? gsl_stats_select(src->got, 1, src->ngot, w->within) : NAN;
        w->known = 1;
    }
    for (int k = 0; k < NRANKS; k++)
        want_clear(&m->want[k]);
}

/* After the refine passes: the pooled sd, p50 and p95 (pm_sd,
 * pm_p50_p95_range). */
static void finish_pooled(macc *m, pm_stats *st)
{
    size_t n = st->nvalid;
    if (n == 0)
        return;
    if (n > 1)
        st->sd = sqrt((m->ss - m->comp * m->comp / (double)n) / (double)(n - 1));
    if (n == 1) {
        st->p50 = st->p95 = m->want[0].v;
        return;
    }
    if (n >= 4 && st->min == st->max) {
        st->p50 = st->p95 = st->min;
        return;
    }
    double h50 = (double)(n - 1) * 0.5, h95 = (double)(n - 1) * 0.95;
    st->p50 = m->want[0].v + (h50 - (double)m->want[0].rank) * (m->want[1].v - m->want[0].v);
    st->p95 = m->want[2].v + (h95 - (double)m->want[2].rank) * (m->want[3].v - m->want[2].v);
}

static void macc_free(macc *m)
{
    pend_free(m);
    free(m->tc);
    free(m->count);
    free(m->bmin);
    free(m->bmax);
    for (int k = 0; k < NRANKS; k++)
        want_clear(&m->want[k]);
}

/* After the fold, for the report of a job of more than
 * PM_LEGEND_MAX_HOSTS hosts: the series that the per-node plots draw
 * whole, those of a metric that at most PM_LEGEND_MAX_HOSTS hosts have
 * and those of the band plots' outlying hosts (pm_report_outliers: known
 * once every host's mean is), read and derived again, one host at a
 * time. */
static int report_whole(pm_analysis *a, size_t ngrid, pm_error *err)
{
    size_t nm = a->nmetrics, nh = a->in.nhosts;
    unsigned char *want = calloc(nh && nm ? nh * nm : 1, 1);
    unsigned char *any = calloc(nh ? nh : 1, 1);
    struct work *wk = pm_work_new(a);
    int rc = want && any && wk ? 0 : PM_ENOMEM;
    for (size_t m = 0; m < nm && !rc; m++) {
        const pm_metric_result *r = &a->metrics[m];
        size_t o[PM_REPORT_OUTLIERS];
        if (nh <= PM_LEGEND_MAX_HOSTS) /* (kept in the fold) */
            break;
        if (r->nhosts_with_data <= PM_LEGEND_MAX_HOSTS) {
            for (size_t h = 0; h < nh; h++)
                if (r->host[h])
                    want[h * nm + m] = any[h] = 1;
            continue;
        }
        size_t n = pm_report_outliers(a, r, o);
        if (n == SIZE_MAX)
            rc = PM_ENOMEM;
        for (size_t i = 0; i < n && !rc; i++)
            want[o[i] * nm + m] = any[o[i]] = 1;
    }
    if (rc)
        pm_error_set(err, rc, "out of memory");
    for (size_t h = 0; h < nh && !rc; h++) {
        if (!any[h])
            continue;
        pm_profile *prof = NULL;
        /* read here, even under mpirun: a few hosts, outside the other
         * ranks' passes over all of them */
        if ((rc = pm_input_host_read(&a->in, h, 1, &prof, err)))
            break;
        pm_host hx = a->in.hosts[h];
        hx.prof = prof;
        if ((rc = pm_host_times(a, &hx, ngrid)))
            pm_error_set(err, rc, "%s: out of memory", hx.name);
        if (!rc && hx.n > a->in.hosts[h].n)
            hx.n = a->in.hosts[h].n;
        for (size_t m = 0; m < nm && !rc; m++) {
            pm_series *dst = a->metrics[m].host[h], *s = NULL;
            if (!want[h * nm + m] || !dst)
                continue;
            if ((rc = pm_series_derive(a, a->metrics[m].def, &hx, wk, &s))) {
                pm_error_set(err, rc, "%s: %s: cannot derive", hx.name, a->metrics[m].def->id);
                break;
            }
            double *t = s ? pm_alloc_array(s->n ? s->n : 1, sizeof *t) : NULL;
            if (s && t) {
                memcpy(t, s->t, s->n * sizeof *t);
                dst->t = t;
                dst->v = s->v;
                dst->q = s->q;
                dst->kept = 1;
                s->v = NULL;
                s->q = NULL;
                s->owns_v = 0;
            } else if (s) {
                rc = pm_error_set(err, PM_ENOMEM, "out of memory");
            }
            pm_series_delete(s);
        }
        pm_host_times_free(&hx);
        pm_profile_free(prof);
    }
    pm_work_delete(wk);
    free(want);
    free(any);
    return rc;
}

int pm_stream_build(pm_analysis *a, pm_error *err)
{
    const pm_catalog *cat = a->catalog;
    size_t nm = cat->n;
    sctx c = {.a = a, .pass0 = a->in.stream_pass};
    c.ngrid = pm_grid_points(a);
    a->nodes = calloc(a->in.nhosts ? a->in.nhosts : 1, sizeof *a->nodes);
    c.res = calloc(nm ? nm : 1, sizeof *c.res);
    c.acc = calloc(nm ? nm : 1, sizeof *c.acc);
    c.tmp = pm_alloc_array(c.ngrid ? c.ngrid : 1, sizeof *c.tmp);
    c.need = calloc(nm ? nm : 1, 1);
    size_t maxn = 1;
    for (size_t h = 0; h < a->in.nhosts; h++)
        if (a->in.hosts[h].n > maxn)
            maxn = a->in.hosts[h].n;
    double *scratch = pm_alloc_array(maxn > c.ngrid ? maxn : c.ngrid, sizeof *scratch);
    int rc = a->nodes && c.res && c.acc && c.tmp && c.need && scratch ? 0 : PM_ENOMEM;
    if (!rc)
        rc = pm_job_end_begin(a);
    if (!rc && a->in.phases.n)
        rc = pm_phase_contrib_init(a, &c.pc);
    for (size_t d = 0; d < nm && !rc; d++) {
        pm_metric_result *r = &c.res[d];
        macc *m = &c.acc[d];
        r->def = &cat->m[d];
        r->host = calloc(a->in.nhosts ? a->in.nhosts : 1, sizeof *r->host);
        m->count = calloc(NBUCKETS, sizeof *m->count);
        m->bmin = pm_alloc_array(NBUCKETS, sizeof *m->bmin);
        m->bmax = pm_alloc_array(NBUCKETS, sizeof *m->bmax);
        if (!r->host || !m->count || !m->bmin || !m->bmax)
            rc = PM_ENOMEM;
        else
            pm_metric_fold_init(r, &m->acc);
    }
    if (rc) {
        rc = pm_error_set(err, rc, "out of memory");
        goto out;
    }
    if ((rc = pm_report_keep_open(a, err)))
        goto out;
    c.spill = pm_spill_wanted(a);
    if (c.spill) {
        c.sp_open = 1;
        if ((rc = pm_spill_open(&c.sp, a, err)))
            goto out;
        c.spill = !c.sp.off;
    }
    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.cond, NULL);
    /* the fold, and the first refine pass unless it reads the spill */
    c.passes = c.spill ? 1 : 2;
    rc = run_pass(&c, 1);
    c.from_spill = c.spill && !c.sp.off;
    /* (the outputs written host by host need the first refine pass) */
    int refine = a->opts.host_out != NULL;
    for (size_t d = 0; d < nm && !rc; d++) {
        pm_metric_result *r = &c.res[d];
        macc *m = &c.acc[d];
        if (!r->nhosts_with_data)
            continue;
        if (a->opts.align == PM_ALIGN_INDEX) {
            pm_aggregate_index_end(a, r, m->nidx, m->tc);
            m->tc = NULL;
        } else if (r->nhosts_with_data == 1) {
            pm_series one = {.n = m->pend_n, .t = m->pend_t, .v = m->pend_v};
            if (pm_aggregate_one(&one, &r->agg, &a->arena))
                rc = PM_ENOMEM;
            pend_free(m);
        } else {
            pm_aggregate_time_end(r);
        }
        pm_aggregate_stats(a, r, scratch);
        pm_metric_fold_end(a, r, &m->acc, 0, 0, NAN);
        if (r->all.nvalid) {
            locate_ranks(m, r->all.nvalid);
            refine = 1;
        }
    }
    if (rc && !c.rc)
        fail(&c, rc, NULL);
    /* Refine passes until every wanted order statistic is found: the
     * first also sums the pooled sd's squares. */
    size_t cap = gather_max();
    for (int pass = 2; !c.rc && refine; pass++) {
        refine = 0;
        /* (under the tests' PM_STREAM_GATHER, 16 times its buckets) */
        size_t budget = cap == GATHER_MAX ? GATHER_ALL : 16 * cap;
        for (size_t d = 0; d < nm && !c.rc; d++) {
            int have = c.res[d].nhosts_with_data && c.res[d].all.nvalid;
            int left = have ? refine_plan(&c.acc[d], cap, &budget) : 0;
            if (left < 0)
                fail(&c, PM_ENOMEM, NULL);
            refine |= left > 0;
            c.need[d] =
                pass == 2 ? have || (a->opts.host_out && c.res[d].nhosts_with_data) : left > 0;
        }
        /* (the sd needs the first pass even when every rank is known) */
        if (c.rc || (!refine && pass > 2))
            break;
        /* the metrics whose values the spill holds from it, the others
         * (and the outputs written host by host) from the hosts */
        int reread = pass == 2 && a->opts.host_out, fromsp = 0;
        for (size_t d = 0; d < nm; d++)
            if (c.need[d]) {
                fromsp |= spilled(&c, d);
                reread |= !spilled(&c, d);
            }
        if (reread)
            rc = run_pass(&c, pass);
        if (!rc && !c.rc && fromsp)
            rc = spill_pass(&c, pass);
        for (size_t d = 0; d < nm && !c.rc; d++)
            if (c.res[d].nhosts_with_data && c.res[d].all.nvalid)
                refine_resolve(&c.acc[d]);
        refine = 1;
    }
    pthread_cond_destroy(&c.cond);
    pthread_mutex_destroy(&c.lock);
    if (c.rc) {
        *err = c.err;
        rc = c.rc;
        goto out;
    }
    pm_summary_job(a);
    if ((rc = pm_job_end_finish(a))) {
        rc = pm_error_set(err, rc, "out of memory");
        goto out;
    }
    /* The metrics no host has are left out, as build_metrics does. */
    a->metrics = calloc(nm ? nm : 1, sizeof *a->metrics);
    if (!a->metrics) {
        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t d = 0; d < nm; d++) {
        pm_metric_result *r = &c.res[d];
        if (!r->nhosts_with_data)
            continue;
        finish_pooled(&c.acc[d], &r->all);
        a->metrics[a->nmetrics++] = *r;
        r->host = NULL;
    }
    /* The phases' figures, combined as in memory. */
    if ((rc = pm_phase_stats_from(a, &c.pc, err)))
        goto out;
    if (a->keep && (rc = report_whole(a, c.ngrid, err)))
        goto out;
    if (a->opts.progress) {
        /* the last state: every host of the last pass, every catalog
         * metric derived (as build_metrics counts them) */
        pm_progress pr = {.stage = PM_STAGE_DERIVE,
                          .hosts_done = a->in.nhosts,
                          .hosts_total = a->in.nhosts,
                          .metrics_done = nm,
                          .metrics_total = nm,
                          .pass = c.pass0 + c.hpass,
                          .passes = c.pass0 + c.hpass};
        a->opts.progress(&pr, a->opts.progress_user);
    }
out:
    for (size_t d = 0; c.res && d < nm; d++) {
        for (size_t h = 0; c.res[d].host && h < a->in.nhosts; h++)
            pm_series_delete(c.res[d].host[h]);
        free(c.res[d].host);
    }
    for (size_t d = 0; c.acc && d < nm; d++)
        macc_free(&c.acc[d]);
    free(c.res);
    free(c.acc);
    free(c.tmp);
    free(c.need);
    free(scratch);
    pm_phase_contrib_free(&c.pc);
    if (c.sp_open)
        pm_spill_close(&c.sp);
    return rc;
}
