/* The time axes: each host's times (its clock, the --start/--end window,
 * its median interval) and the common grid, on the worker threads; the
 * stream mode's hosts read again for their times alone.
 * Semantics: docs/analysis.md, "Time axis and clocks". */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/input.h"
#include "stream_spill.h"
#include "times.h"
#include "perfmon/order.h"
#include "perfmon/clock.h"
#include "perfmon/mem.h"
#include "perfmon/threads.h"

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
    pm_host *ho = &a->in.hosts[h];
    pm_profile *p = NULL;
    pm_error e;
    int rc = pm_input_host_load(&a->in, h, 0, &p, &e);
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
                      .hosts_total = a->in.nhosts,
                      .metrics_total = a->catalog->n,
                      .pass = a->in.stream_pass,
                      .passes = a->in.stream_pass + (tc->phase == 0 && tc->window) + 1 +
                                !pm_spill_wanted(a)};
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
        pm_host *ho = &a->in.hosts[h];
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
    pm_pool pool = {.n = a->in.nhosts, .ctx = tc};
    if (a->opts.stream && phase < 2) {
        a->in.stream_pass++;
        if (a->opts.progress)
            stream_times_progress(tc, 0);
    }
    pthread_mutex_init(&pool.lock, NULL);
    pm_pool_run(&pool, times_worker, a->in.nhosts);
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

static void fmt_utc_s(char *out, size_t cap, double t)
{
    if (pm_utc_iso(t, out, cap) < 0)
        snprintf(out, cap, "?");
}

int pm_times_setup(pm_analysis *a, pm_error *err)
{
    const pm_analyze_opts *o = &a->opts;
    times_ctx tc = {.a = a, .window = o->has_start || o->has_end, .lo = -INFINITY, .hi = INFINITY};
    int trc = times_pass(a, &tc, 0);
    if (trc)
        return tc.rc ? (*err = tc.err, trc) : pm_error_set(err, PM_ENOMEM, "out of memory");
    double job_start = INFINITY, job_end = -INFINITY;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        const pm_host *ho = &a->in.hosts[h];
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
    double *firsts = pm_alloc_array(a->in.nhosts ? a->in.nhosts : 1, sizeof *firsts);
    double *ivals = pm_alloc_array(a->in.nhosts ? a->in.nhosts : 1, sizeof *ivals);
    if (!firsts || !ivals) {
        free(firsts);
        free(ivals);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    size_t nf = 0, ni = 0;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        pm_host *ho = &a->in.hosts[h];
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
    if (!isfinite(a->t_start) && a->in.nhosts == 0) {
        /* Phases only (Scanner profiles, marks): their span is the job. */
        a->t_start = a->t_end = 0;
        for (size_t i = 0; i < a->in.phases.n; i++) {
            const pm_phase *p = &a->in.phases.v[i];
            if (i == 0 || p->t0 < a->t_start)
                a->t_start = p->t0;
            if (i == 0 || p->t1 > a->t_end)
                a->t_end = p->t1;
        }
        const pm_phase_set *ps = &a->in.phases;
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
                                o->has_end ? w1 : "", a->in.nhosts, a->in.nhosts == 1 ? "" : "s",
                                b0, b1);
        return pm_error_set(err, PM_EEMPTY, "the %zu profile%s of the inputs hold%s no sample",
                            a->in.nhosts, a->in.nhosts == 1 ? "" : "s",
                            a->in.nhosts == 1 ? "s" : "");
    }
    double med_first = pm_median(firsts, nf);
    a->grid_step = pm_median(ivals, ni);
    if (!(a->grid_step > 0))
        a->grid_step = 1.0;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        pm_host *ho = &a->in.hosts[h];
        ho->clock.offset_s = ho->n ? host_first(ho) - med_first : NAN;
    }
    free(firsts);
    free(ivals);
    tc.ngrid = pm_grid_points(a);
    /* (the stream mode places each host when it reads it again) */
    if (!o->stream && !o->compat_ska && o->align == PM_ALIGN_TIME && tc.ngrid &&
        times_pass(a, &tc, 2))
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    return 0;
}

size_t pm_grid_points(const pm_analysis *a)
{
    double ng = floor((a->t_end - a->t_start) / a->grid_step + 1e-9) + 1;
    return ng >= 1 && ng <= PM_MAX_GRID_POINTS ? (size_t)ng : 0;
}
