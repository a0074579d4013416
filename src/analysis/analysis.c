/* The analysis pipeline: hosts -> series -> aggregates -> statistics.
 * Inputs are loaded by input.c, aggregation is in align.c.
 * Semantics: docs/analysis.md. */
#include "perfmon/clock.h"
#include "perfmon/analysis.h"
#include "perfmon/phase_stats.h"
#include "perfmon/split.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "input_slot.h"
#include "internal.h"
#include "perfmon/split.h"
#include "perfmon/mem.h"
#include "perfmon/parse.h"

void pm_analyze_opts_init(pm_analyze_opts *o)
{
    memset(o, 0, sizeof *o);
    o->repair = PM_REPAIR_HOLD;
    o->align = PM_ALIGN_TIME;
}

/* --- time axis, window, clocks -------------------------------------------- */

/* Nanoseconds since the epoch to seconds, rounded once: (double)ns alone
 * already rounds to 256 ns at today's dates, which would show as a
 * relative error of 3e-7 in a rate over one second. */
static double ns_to_s(int64_t ns)
{
    int64_t sec = ns / 1000000000, rem = ns % 1000000000;
    if (rem < 0) {
        rem += 1000000000;
        sec--;
    }
    return (double)sec + (double)rem * 1e-9;
}

/* Per host, on the worker threads: each host's time axis (phase 0), then
 * its window and median interval (phase 1). */
typedef struct times_ctx {
    pm_analysis *a;
    int phase;
    double lo, hi; /* the --start/--end window (phase 1) */
    size_t ngrid;  /* the common grid's points (phase 2) */
    int failed;    /* out of memory */
    int window;    /* --start or --end given */
    int rc;        /* the stream mode's failure to read a host again */
    pm_error err;
} times_ctx;

static void host_window(pm_host *ho, double lo, double hi, double *d);
void pm_host_times_free(pm_host *ho)
{
    free(ho->t);
    free(ho->idx);
    free(ho->grid_k);
    ho->t = NULL;
    ho->idx = NULL;
    ho->grid_k = NULL;
}

/* The axis's arrays come from arena, or from malloc when it is NULL (the
 * stream mode's, freed with the host). */
static int host_axis(const pm_analysis *a, pm_arena *arena, pm_host *ho)
{
    const pm_profile *p = ho->prof;
    if (p->n > UINT32_MAX)
        return PM_ELIMIT; /* 136 years at 1 s: not a profile */
    size_t n = p->n ? p->n : 1;
    double *t = arena ? pm_arena_alloc(arena, n, sizeof *t) : pm_alloc_array(n, sizeof *t);
    uint32_t *idx = arena ? pm_arena_alloc(arena, n, sizeof *idx) : pm_alloc_array(n, sizeof *idx);
    if (!t || !idx) {
        if (!arena) {
            free(t);
            free(idx);
        }
        return PM_ENOMEM;
    }
    for (size_t i = 0; i < p->n; i++)
        t[i] = p->t_wall_ns[i] == INT64_MIN ? NAN : ns_to_s(p->t_wall_ns[i]);
    size_t k = 0;
    if (a->opts.compat_ska) {
        /* SKA differences timestamps as they are. */
        for (size_t i = 0; i < p->n; i++)
            if (isfinite(t[i]))
                idx[k++] = (uint32_t)i;
    } else {
        /* pm_time_increasing, into 32-bit indices */
        double last = -INFINITY;
        for (size_t i = 0; i < p->n; i++)
            if (isfinite(t[i]) && t[i] > last) {
                idx[k++] = (uint32_t)i;
                last = t[i];
            }
    }
    ho->dropped_time = p->n - k;
    for (size_t i = 0; i < k; i++)
        t[i] = t[idx[i]];
    ho->t = t;
    ho->idx = idx;
    ho->n = k;
    return 0;
}

/* Keep the samples inside [lo, hi]; the median interval of the rest
 * (d: room for the host's samples). */
static void host_window(pm_host *ho, double lo, double hi, double *d)
{
    size_t k = 0;
    for (size_t i = 0; i < ho->n; i++) {
        if (ho->t[i] < lo || ho->t[i] > hi) {
            ho->outside_window++;
            continue;
        }
        ho->t[k] = ho->t[i];
        ho->idx[k++] = ho->idx[i];
    }
    ho->n = k;
    ho->interval = NAN;
    if (k > 1) {
        size_t nd = 0;
        for (size_t i = 1; i < k; i++)
            if (ho->t[i] > ho->t[i - 1])
                d[nd++] = ho->t[i] - ho->t[i - 1];
        ho->interval = nd ? pm_quantile_select(d, nd, 0.5) : NAN;
    }
}

/* The stream mode's survey of host h: its times read again (values not
 * decoded), its axis (phase 0) or also its window (phase 1, or phase 0
 * when there is no window), then only the figures setup_times reads are
 * kept (pm_host.t_first, t_last). */
static int stream_host_times(pm_pool *pool, times_ctx *tc, size_t h)
{
    pm_analysis *a = tc->a;
    pm_host *ho = &a->hosts[h];
    pm_profile *p = NULL;
    pm_error e;
    int rc = pm_input_host_load(a, h, 0, &p, &e);
    if (rc) {
        pthread_mutex_lock(&pool->lock);
        if (!tc->rc) {
            tc->rc = rc;
            tc->err = e;
        }
        pthread_mutex_unlock(&pool->lock);
        return 1;
    }
    pm_host hx = *ho;
    hx.prof = p;
    hx.outside_window = 0;
    rc = host_axis(a, NULL, &hx);
    double *d = rc ? NULL : pm_alloc_array(hx.n ? hx.n : 1, sizeof *d);
    if (d && (tc->phase == 1 || !tc->window))
        host_window(&hx, tc->lo, tc->hi, d);
    if (d) {
        ho->n = hx.n;
        ho->dropped_time = hx.dropped_time;
        ho->outside_window = hx.outside_window;
        ho->interval = hx.interval;
        ho->t_first = hx.n ? hx.t[0] : NAN;
        ho->t_last = hx.n ? hx.t[hx.n - 1] : NAN;
    }
    free(d);
    pm_host_times_free(&hx);
    pm_profile_free(p);
    return d == NULL;
}

/* opts.progress in the stream mode's survey of the times (under
 * pool->lock): hosts done in this pass, of passes known so far (this one
 * and a window pass still to come, the fold and a refine pass). */
static void stream_times_progress(const times_ctx *tc, size_t hosts_done)
{
    pm_analysis *a = tc->a;
    pm_progress pr = {.stage = PM_STAGE_DERIVE,
                      .hosts_done = hosts_done,
                      .hosts_total = a->nhosts,
                      .metrics_total = a->catalog->n,
                      .pass = a->stream_pass,
                      .passes = a->stream_pass + (tc->phase == 0 && tc->window) + 2};
    a->opts.progress(&pr, a->opts.progress_user);
}

static void *times_worker(void *arg)
{
    pm_pool *pool = arg;
    times_ctx *tc = pool->ctx;
    pm_analysis *a = tc->a;
    double *d = NULL;
    size_t dcap = 0;
    for (size_t h; (h = pm_pool_next(pool)) < pool->n;) {
        pm_host *ho = &a->hosts[h];
        int bad = 0;
        if (a->opts.stream && tc->phase < 2) {
            bad = stream_host_times(pool, tc, h);
        } else if (tc->phase == 0) {
            bad = host_axis(a, &a->arena, ho) != 0;
        } else if (tc->phase == 2) {
            /* Each sample's grid point, shared by every metric's
             * aggregation (the division per sample and metric was 6-10 %
             * of an analysis). */
            if (ho->n) {
                ho->grid_k = pm_arena_alloc(&a->arena, ho->n, sizeof *ho->grid_k);
                if (ho->grid_k)
                    pm_place_points(ho->t, ho->n, a->t_start, a->grid_step, tc->ngrid, ho->grid_k);
                else
                    bad = 1;
            }
        } else {
            if (ho->n > dcap) {
                free(d);
                dcap = ho->n;
                d = pm_alloc_array(dcap, sizeof *d);
                if (!d)
                    dcap = 0;
            }
            if (d || ho->n <= 1)
                host_window(ho, tc->lo, tc->hi, d);
            else
                bad = 1;
        }
        if (bad) {
            pthread_mutex_lock(&pool->lock);
            tc->failed = 1;
            pthread_mutex_unlock(&pool->lock);
        } else if (a->opts.stream && tc->phase < 2 && a->opts.progress) {
            pthread_mutex_lock(&pool->lock);
            stream_times_progress(tc, ++pool->done);
            pthread_mutex_unlock(&pool->lock);
        }
    }
    free(d);
    return NULL;
}

static int times_pass(pm_analysis *a, times_ctx *tc, int phase)
{
    tc->phase = phase;
    pm_pool pool = {.n = a->nhosts, .ctx = tc};
    if (a->opts.stream && phase < 2) {
        a->stream_pass++;
        if (a->opts.progress)
            stream_times_progress(tc, 0);
    }
    pthread_mutex_init(&pool.lock, NULL);
    pm_pool_run(&pool, times_worker, a->nhosts);
    pthread_mutex_destroy(&pool.lock);
    return tc->rc ? tc->rc : tc->failed ? PM_ENOMEM : 0;
}

/* First and last kept sample: the stream mode keeps them alone. */
static double host_first(const pm_host *ho)
{
    return ho->t ? ho->t[0] : ho->t_first;
}

static double host_last(const pm_host *ho)
{
    return ho->t ? ho->t[ho->n - 1] : ho->t_last;
}

int pm_host_times(const pm_analysis *a, pm_host *ho, size_t ngrid)
{
    ho->t = NULL;
    ho->idx = NULL;
    ho->grid_k = NULL;
    size_t dropped = ho->dropped_time, outside = ho->outside_window;
    ho->outside_window = 0;
    int rc = host_axis(a, NULL, ho);
    double *d = rc ? NULL : pm_alloc_array(ho->n ? ho->n : 1, sizeof *d);
    if (d) {
        host_window(ho, a->win_lo, a->win_hi, d);
        free(d);
        if (ngrid && ho->n && !a->opts.compat_ska && a->opts.align == PM_ALIGN_TIME) {
            ho->grid_k = pm_alloc_array(ho->n, sizeof *ho->grid_k);
            if (ho->grid_k)
                pm_place_points(ho->t, ho->n, a->t_start, a->grid_step, ngrid, ho->grid_k);
            else
                rc = PM_ENOMEM;
        }
    } else if (!rc) {
        rc = PM_ENOMEM;
    }
    /* the survey's counts, which these equal */
    ho->dropped_time = dropped;
    ho->outside_window = outside;
    if (rc)
        pm_host_times_free(ho);
    return rc;
}

static size_t grid_points(const pm_analysis *a);

static void fmt_utc_s(char *out, size_t cap, double t)
{
    if (pm_utc_iso(t, out, cap) < 0)
        snprintf(out, cap, "?");
}

static int setup_times(pm_analysis *a, pm_error *err)
{
    const pm_analyze_opts *o = &a->opts;
    times_ctx tc = {.a = a, .window = o->has_start || o->has_end, .lo = -INFINITY, .hi = INFINITY};
    int trc = times_pass(a, &tc, 0);
    if (trc)
        return tc.rc ? (*err = tc.err, trc) : pm_error_set(err, PM_ENOMEM, "out of memory");
    double job_start = INFINITY, job_end = -INFINITY;
    for (size_t h = 0; h < a->nhosts; h++) {
        const pm_host *ho = &a->hosts[h];
        if (ho->n) {
            if (host_first(ho) < job_start)
                job_start = host_first(ho);
            if (host_last(ho) > job_end)
                job_end = host_last(ho);
        }
    }
    if (!isfinite(job_start))
        job_start = job_end = 0;
    double lo = -INFINITY, hi = INFINITY;
    if (o->has_start)
        lo = o->start_rel ? job_start + o->start : o->start;
    if (o->has_end)
        hi = o->end_rel ? job_start + o->end : o->end;
    if (lo > hi)
        return pm_error_set(err, PM_EUSAGE, "--start is after --end");
    tc.lo = lo;
    tc.hi = hi;
    a->win_lo = lo;
    a->win_hi = hi;
    /* The stream mode's phase 0 applied the window already when there is
     * none to apply. */
    if ((!o->stream || tc.window) && (trc = times_pass(a, &tc, 1)))
        return tc.rc ? (*err = tc.err, trc) : pm_error_set(err, PM_ENOMEM, "out of memory");
    a->t_start = INFINITY;
    a->t_end = -INFINITY;
    double *firsts = pm_alloc_array(a->nhosts ? a->nhosts : 1, sizeof *firsts);
    double *ivals = pm_alloc_array(a->nhosts ? a->nhosts : 1, sizeof *ivals);
    if (!firsts || !ivals) {
        free(firsts);
        free(ivals);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    size_t nf = 0, ni = 0;
    for (size_t h = 0; h < a->nhosts; h++) {
        pm_host *ho = &a->hosts[h];
        size_t k = ho->n;
        if (k == 0)
            continue;
        if (host_first(ho) < a->t_start)
            a->t_start = host_first(ho);
        if (host_last(ho) > a->t_end)
            a->t_end = host_last(ho);
        /* A GPU shares its node's clock: counting it again would weigh
         * nodes by their GPUs. */
        if (!ho->gpu)
            firsts[nf++] = host_first(ho);
        if (isfinite(ho->interval) && !ho->gpu)
            ivals[ni++] = ho->interval;
    }
    if (!isfinite(a->t_start) && a->nhosts == 0) {
        /* Phases only (Scanner profiles, marks): their span is the job. */
        a->t_start = a->t_end = 0;
        for (size_t i = 0; i < a->phases.n; i++) {
            const pm_phase *p = &a->phases.v[i];
            if (i == 0 || p->t0 < a->t_start)
                a->t_start = p->t0;
            if (i == 0 || p->t1 > a->t_end)
                a->t_end = p->t1;
        }
        const pm_phase_set *ps = &a->phases;
        if (ps->scanner_files) {
            double s0 = ns_to_s(ps->scanner_start_ns), s1 = ns_to_s(ps->scanner_end_ns);
            if (ps->n == 0 || s0 < a->t_start)
                a->t_start = s0;
            if (ps->n == 0 || s1 > a->t_end)
                a->t_end = s1;
        }
    } else if (!isfinite(a->t_start)) {
        /* Nothing to analyse: say what there is (exit 1, not a report of
         * zeros). */
        free(firsts);
        free(ivals);
        char b0[32], b1[32];
        fmt_utc_s(b0, sizeof b0, job_start);
        fmt_utc_s(b1, sizeof b1, job_end);
        char w0[32] = "", w1[32] = "";
        fmt_utc_s(w0, sizeof w0, lo);
        fmt_utc_s(w1, sizeof w1, hi);
        if (o->has_start || o->has_end)
            return pm_error_set(err, PM_EEMPTY,
                                "no sample lies inside the --start/--end window (%s%s%s); the "
                                "%zu host%s' samples span %s .. %s",
                                o->has_start ? w0 : "", o->has_start ? " .. " : "up to ",
                                o->has_end ? w1 : "", a->nhosts, a->nhosts == 1 ? "" : "s", b0, b1);
        return pm_error_set(err, PM_EEMPTY, "the %zu profile%s of the inputs hold%s no sample",
                            a->nhosts, a->nhosts == 1 ? "" : "s", a->nhosts == 1 ? "s" : "");
    }
    double med_first = pm_median(firsts, nf);
    a->grid_step = pm_median(ivals, ni);
    if (!(a->grid_step > 0))
        a->grid_step = 1.0;
    for (size_t h = 0; h < a->nhosts; h++) {
        pm_host *ho = &a->hosts[h];
        ho->clock.offset_s = ho->n ? host_first(ho) - med_first : NAN;
    }
    free(firsts);
    free(ivals);
    tc.ngrid = grid_points(a);
    /* (the stream mode places each host when it reads it again) */
    if (!o->stream && !o->compat_ska && o->align == PM_ALIGN_TIME && tc.ngrid &&
        times_pass(a, &tc, 2))
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    return 0;
}

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
    /* Without an arena (stream mode) v and q are calloc'd, freed by the
     * caller once folded. */
    if (!arena) {
        s->v = calloc(n ? n : 1, sizeof *s->v);
        s->q = calloc(n ? n : 1, 1);
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

static void series_free(pm_series *s)
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
    for (size_t i = 0; i < n; i++)
        tmp[i] = raw[ho->idx[i]];
    memset(q, PM_Q_OK, n);
    int rate = def->rate && col->kind == PM_COUNTER;
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
    if (rate) {
        if (col->wrap > 0)
            *wraps += pm_unwrap(tmp, n, (double)col->wrap, q);
        if (!pm_rate_sparse(t, tmp, n, ho->interval, val, q))
            pm_rate(t, tmp, n, val, q);
        *repaired += pm_repair(val, q, n, a->opts.repair);
    } else {
        memcpy(val, tmp, n * sizeof *val);
    }
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
            derive_column(a, ho, &part, &p->cols[c], raw, val, q, tmp, &s->repaired, &s->wraps);
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
        sum_into(s->v, s->q, val, q, n, s->ncolumns == 0);
        s->ncolumns++;
    }
    if (s && ratio) {
        if (s->ncolumns == 0 || nper == 0) {
            /* A ratio needs both parts. */
            series_free(s);
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
    for (size_t i = 0; i < s->n; i++)
        if (!isnan(s->v[i])) {
            acc->sum += s->v[i];
            acc->m++;
        }
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
    for (size_t h = 0; h < a->nhosts; h++) {
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

/* Grid size of the time alignment; 0 when too large. */
static size_t grid_points(const pm_analysis *a)
{
    return pm_grid_points(a);
}

size_t pm_grid_points(const pm_analysis *a)
{
    double ng = floor((a->t_end - a->t_start) / a->grid_step + 1e-9) + 1;
    return ng >= 1 && ng <= PM_MAX_GRID_POINTS ? (size_t)ng : 0;
}

/* One thread's scratch, reused across the metrics it builds, so that big
 * buffers are faulted in once, not once per metric and host. */
static int work_init(const pm_analysis *a, work *wk, pm_arena *shared)
{
    pm_arena *own = &wk->own;
    pm_arena_init(own);
    wk->shared = shared;
    size_t maxn = 1, total = 1;
    for (size_t h = 0; h < a->nhosts; h++) {
        if (a->hosts[h].n > maxn)
            maxn = a->hosts[h].n;
        total += a->hosts[h].n;
    }
    size_t ng = grid_points(a);
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
    r->host = calloc(a->nhosts ? a->nhosts : 1, sizeof *r->host);
    if (!r->host)
        return PM_ENOMEM;
    int rc = 0;
    double part_mean = 0, part_max = NAN;
    size_t nparts = 0;
    for (size_t h = 0; h < a->nhosts && !rc; h++) {
        rc = derive_series(a, r->def, &a->hosts[h], h, wk, &r->host[h], &part_mean, &part_max,
                           &nparts);
        if (!rc && r->host[h])
            r->nhosts_with_data++;
    }
    if (rc || r->nhosts_with_data == 0)
        return rc;
    if (a->opts.compat_ska || a->opts.align == PM_ALIGN_INDEX)
        rc = pm_aggregate_index(a, r, wk->shared);
    else
        rc = pm_aggregate_time(a, r, grid_points(a), wk->grid, wk->shared);
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

void pm_series_delete(pm_series *s)
{
    series_free(s);
}

/* Raw-column reference counts: refs[h][c] = metrics still to derive from
 * column c of host h. */
static void release_column(pm_analysis *a, size_t h, size_t c)
{
    pm_profile_release_column(a->hosts[h].prof, c);
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
        for (size_t h = 0; h < a->nhosts; h++) {
            const pm_profile *pr = a->hosts[h].prof;
            for (size_t c = 0; c < pr->ncols; c++)
                if (a->refs[h][c] && pm_metric_matches(def, pr->cols[c].name) &&
                    --a->refs[h][c] == 0)
                    release_column(a, h, c);
        }
        p->done++;
        mc->series_done += a->nhosts;
        if (a->opts.progress) {
            pm_progress pr = {.stage = PM_STAGE_DERIVE,
                              .hosts_done = p->done == p->n ? a->nhosts : 0,
                              .hosts_total = a->nhosts,
                              .metrics_done = p->done,
                              .metrics_total = p->n,
                              .series_done = mc->series_done,
                              .series_total = p->n * a->nhosts};
            a->opts.progress(&pr, a->opts.progress_user);
        }
        pthread_mutex_unlock(&p->lock);
    }
    work_free(&wk);
    return NULL;
}

static int init_refs(pm_analysis *a, pm_error *err)
{
    a->refs = calloc(a->nhosts ? a->nhosts : 1, sizeof *a->refs);
    if (!a->refs)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    for (size_t h = 0; h < a->nhosts; h++) {
        const pm_profile *p = a->hosts[h].prof;
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
    for (size_t h = 0; h < a->nhosts; h++) {
        size_t rep = 0;
        for (size_t m = 0; m < a->nmetrics; m++)
            if (a->metrics[m].host[h])
                rep += a->metrics[m].host[h]->repaired;
        a->nodes[h].repaired = rep;
        a->job.repaired += rep;
    }
}

static int build_metrics(pm_analysis *a, pm_error *err)
{
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
            for (size_t h = 0; h < a->nhosts && r->host; h++)
                series_free(r->host[h]);
            free(r->host);
            continue;
        }
        a->metrics[k++] = a->metrics[i];
    }
    a->nmetrics = k;
    return 0;
}

/* Each host's events and end (job_end.c), while every raw column is
 * there; the stream mode scans each host in its fold (stream.c). */
static int job_end_scan(pm_analysis *a, pm_error *err)
{
    int rc = pm_job_end_begin(a);
    for (size_t h = 0; h < a->nhosts && !rc; h++)
        rc = pm_job_end_host(a, h, &a->hosts[h]);
    if (!rc)
        rc = pm_job_end_finish(a);
    return rc ? pm_error_set(err, rc, "out of memory") : 0;
}

int pm_analysis_run(const char *const *paths, size_t npaths, const pm_analyze_opts *opts,
                    pm_analysis **out, pm_error *err)
{
    *out = NULL;
    gsl_set_error_handler_off();
    pm_analysis *a = calloc(1, sizeof *a);
    if (!a)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    pm_arena_init(&a->arena);
    a->opts = *opts;
    int rc = pm_catalog_load(opts->catalog_path ? opts->catalog_path : "templates/metrics.json",
                             &a->catalog, err);
    if (!rc && opts->compat_ska)
        pm_catalog_use_ska(a->catalog);
    if (!rc && opts->rules_path)
        rc = pm_rules_plan_load(a, err);
    if (!rc && opts->stream && opts->compat_ska)
        rc = pm_error_set(err, PM_EUSAGE, "--stream: --compat=ska is not streamed yet");
    pm_split *sp = opts->split && opts->split->size > 1 ? opts->split : NULL;
    /* --stream under mpirun: after the survey, every rank takes part in
     * the passes (split_stream.c), also one that failed before, and rank 0
     * owes the others their end (pm_remote_end). */
    int owed = opts->stream && sp && sp->bcast && sp->threads;
    if (!rc && opts->stream && sp && !owed)
        rc = pm_error_set(err, PM_EUSAGE,
                          "--stream: under mpirun it needs an MPI that threads may call "
                          "(MPI_THREAD_SERIALIZED), which this one is not");
    if (!rc)
        rc = pm_input_load(a, paths, npaths, err);
    else if (owed)
        rc = pm_split_survey_end(sp, rc, err);
    else if (sp)
        rc = pm_split_finish(sp, rc, err); /* the other ranks wait for this one */
    if (sp && sp->rank) {
        if (owed) /* read and send its hosts at each pass */
            rc = pm_remote_serve(a, sp, rc, err);
        pm_analysis_free(a); /* a rank > 0 only reads (split.h) */
        return rc;
    }
    if (!rc && owed)
        rc = pm_remote_begin(a, sp, err);
    if (rc || (opts->compat_ska && (rc = pm_compat_ska_prepare(a, err))))
        goto fail;
    if (opts->stream && a->phases.scanner_files) {
        rc = pm_error_set(err, PM_EUSAGE, "--stream: Scanner profiles are not streamed yet");
        goto fail;
    }
    /* Node figures read raw columns, so they come first; raw columns are
     * then released as soon as no metric still needs them.  The stream
     * mode computes both one host at a time (stream.c). */
    if ((rc = setup_times(a, err)) ||
        (opts->stream ? (rc = pm_stream_build(a, err))
                      : ((rc = job_end_scan(a, err)) || (rc = pm_summary_compute(a, err)) ||
                         (rc = init_refs(a, err)) || (rc = build_metrics(a, err)))))
        goto fail;
    /* (the passes over the hosts are over) */
    if (owed && (owed = 0, rc = pm_remote_end(a, sp, 0, err)))
        goto fail;
    pm_count_repairs(a);
    /* (the stream mode's come from its fold) */
    if (!opts->stream && (rc = pm_phase_stats_compute(a, err)))
        goto fail;
    if (opts->rules_path && (rc = pm_rules_eval(a, opts->rules_path, err)))
        goto fail;
    *out = a;
    return 0;
fail:
    if (owed)
        rc = pm_remote_end(a, sp, rc, err);
    pm_analysis_free(a);
    return rc ? rc : PM_EFORMAT;
}

void pm_analysis_free(pm_analysis *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nmetrics; i++) {
        pm_metric_result *r = &a->metrics[i];
        for (size_t h = 0; h < a->nhosts; h++)
            series_free(r->host[h]);
        free(r->host);
    }
    free(a->metrics);
    for (size_t h = 0; h < a->nhosts; h++) {
        pm_host *ho = &a->hosts[h];
        free(ho->name);
        pm_strs_free(ho->files, ho->nfiles);
        pm_profile_free(ho->prof);
    }
    if (a->refs)
        for (size_t h = 0; h < a->nhosts; h++)
            free(a->refs[h]);
    free(a->refs);
    free(a->hosts);
    free(a->nodes);
    for (size_t i = 0; i < a->nnotes; i++)
        free(a->notes[i].message);
    free(a->notes);
    pm_strs_free(a->warnings, a->nwarnings);
    pm_strs_free(a->ignored, a->nignored);
    pm_catalog_free(a->catalog);
    pm_phase_set_free(&a->phases);
    pm_phase_stats_free(a->phase_stats);
    pm_report_keep_free(a->keep);
    pm_job_end_free(a);
    pm_rules_plan_free(a->rule_plan);
    pm_arena_free(&a->arena);
    pthread_mutex_destroy(&a->arena.lock);
    free(a);
}

void pm_fmt_title_num(double v, char *out, size_t cap)
{
    double a = fabs(v);
    if (!isfinite(v))
        snprintf(out, cap, "n/a");
    else if (a >= 1e4 && a < 1e9)
        snprintf(out, cap, "%.0f", v);
    else if (a != 0 && (a < 1e-3 || a >= 1e9))
        snprintf(out, cap, "%.3g", v);
    else
        snprintf(out, cap, "%.4g", v);
}

int pm_metric_title(const pm_metric_result *r, int all_nodes, char *buf, size_t cap)
{
    const pm_metric_def *d = r->def;
    const char *u = strcmp(d->unit, "1") == 0 ? "" : d->unit, *us = *u ? " " : "";
    char v1[32], v2[32];
    if (all_nodes) {
        /* The all-node series' own statistics: a different quantity from
         * the per-node figures (docs/analysis.md, "Which mean"). */
        pm_fmt_title_num(r->agg.st.mean, v1, sizeof v1);
        pm_fmt_title_num(r->agg.st.max, v2, sizeof v2);
        return snprintf(buf, cap, "%s %s (all-node series): mean %s%s%s, max %s%s%s",
                        d->comb == PM_COMB_TOTAL ? "Total" : "Average", d->name, v1, us, u, v2, us,
                        u);
    }
    pm_fmt_title_num(r->avg_per_node, v1, sizeof v1);
    pm_fmt_title_num(r->max_per_node, v2, sizeof v2);
    return snprintf(buf, cap, "Average %s/Node: %s%s%s, Max %s/Node: %s%s%s", d->name, v1, us, u,
                    d->name, v2, us, u);
}

const char *pm_analysis_info(const pm_analysis *a, size_t off)
{
    for (size_t h = 0; h < a->nhosts; h++) {
        const pm_profile *p = a->hosts[h].prof;
        if (!p || off >= sizeof p->info)
            continue;
        const char *s = (const char *)&p->info + off;
        if (*s)
            return s;
    }
    return "";
}

int pm_analysis_metric(const pm_analysis *a, const char *id)
{
    for (size_t i = 0; i < a->nmetrics; i++)
        if (strcmp(a->metrics[i].def->id, id) == 0)
            return (int)i;
    return -1;
}

int pm_parse_time_bound(const char *s, double *value, int *relative)
{
    if (!s || !*s)
        return -1;
    if (s[0] == '+') {
        int64_t ns;
        if (pm_parse_duration_ns(s + 1, &ns) != 0 || ns < 0)
            return -1;
        *value = (double)ns * 1e-9;
        *relative = 1;
        return 0;
    }
    double d;
    if (pm_parse_double(s, &d) == 0) {
        if (d < 0)
            return -1;
        *relative = d < 1e9;
        *value = d;
        return 0;
    }
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end || (*end && strcmp(end, "Z") != 0))
        return -1;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -1;
    *value = (double)t;
    *relative = 0;
    return 0;
}
