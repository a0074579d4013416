/* The analysis pipeline: inputs -> hosts -> series -> aggregates -> stats.
 * Semantics: docs/analysis.md. */
#include "perfmon/analysis.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/parse.h"
#include "perfmon/mem.h"
#include "perfmon/ska.h"

#define MAX_INPUT_FILES 100000
#define MAX_GRID_POINTS (64u << 20)

void pm_analyze_opts_init(pm_analyze_opts *o)
{
    memset(o, 0, sizeof *o);
    o->repair = PM_REPAIR_HOLD;
    o->align = PM_ALIGN_TIME;
}

/* --- small helpers ------------------------------------------------------- */

static int add_str(char ***arr, size_t *n, const char *fmt, ...) PM_PRINTF(3, 4);
static int add_str(char ***arr, size_t *n, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int len = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (len < 0)
        return PM_ENOMEM;
    char **na = pm_realloc_array(*arr, *n + 1, sizeof **arr);
    if (!na) {
        free(s);
        return PM_ENOMEM;
    }
    *arr = na;
    na[(*n)++] = s;
    return 0;
}

static void free_strs(char **a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(a[i]);
    free(a);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(double *x, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(x, n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* --- collecting input files -------------------------------------------- */

static int collect_dir(const char *dir, char ***files, size_t *nfiles, pm_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return pm_error_sys(err, PM_ENOENT, errno, "%s: cannot open directory", dir);
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        if (pm_path_join(path, sizeof path, dir, e->d_name) != 0)
            continue;
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n >= MAX_INPUT_FILES) {
            rc = pm_error_set(err, PM_ELIMIT, "%s: more than %d files", dir, MAX_INPUT_FILES);
            break;
        }
        if ((rc = add_str(&names, &n, "%s", path))) {
            rc = pm_error_set(err, PM_ENOMEM, "out of memory");
            break;
        }
    }
    closedir(d);
    if (rc) {
        free_strs(names, n);
        return rc;
    }
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n && !rc; i++)
        if (add_str(files, nfiles, "%s", names[i]))
            rc = pm_error_set(err, PM_ENOMEM, "out of memory");
    free_strs(names, n);
    return rc;
}

/* --- reading ------------------------------------------------------------- */

typedef struct plist {
    pm_profile **p;
    size_t n;
} plist;

static int plist_add(plist *l, pm_profile *p)
{
    pm_profile **na = pm_realloc_array(l->p, l->n + 1, sizeof *na);
    if (!na)
        return PM_ENOMEM;
    l->p = na;
    na[l->n++] = p;
    return 0;
}

/* Assess the clock of one of our own profiles from its (monotonic, wall)
 * pairs, then put its time axis on the monotonic clock anchored at the
 * first wall time, so a wall-clock step inside the run cannot reorder
 * samples.  SKA imports have no monotonic times and keep wall times. */
static void fix_clock(pm_profile *p, pm_clock *c)
{
    memset(c, 0, sizeof *c);
    if (p->n == 0 || p->format == PM_FMT_SKA)
        return;
    for (size_t i = 0; i < p->n; i++)
        if (p->t_mono_ns[i] <= 0)
            return;
    c->method = 1;
    int64_t w0 = p->t_wall_ns[0], m0 = p->t_mono_ns[0];
    double d0 = (double)(w0 - m0);
    double prev = d0, step = 0;
    for (size_t i = 1; i < p->n; i++) {
        double d = (double)(p->t_wall_ns[i] - p->t_mono_ns[i]);
        if (fabs(d - prev) > step)
            step = fabs(d - prev);
        prev = d;
    }
    double span = (double)(p->t_mono_ns[p->n - 1] - m0);
    if (span > 0)
        c->drift_ppm = (prev - d0) / span * 1e6;
    c->step_max_s = step * 1e-9;
    for (size_t i = 0; i < p->n; i++)
        p->t_wall_ns[i] = w0 + (p->t_mono_ns[i] - m0);
}

/* What reading one input file produced; filled by a worker thread, merged
 * in file order by the main thread so results do not depend on timing. */
typedef struct slot {
    const char *path;
    pm_profile **got;      /* profiles read (SKA files hold several) */
    size_t ngot;
    pm_clock *clocks;      /* [ngot] */
    char *ignored;         /* why the file is not a profile, or NULL */
    int rc;
    pm_error err;
} slot;

static void read_slot(slot *sl)
{
    char head[4096];
    pm_error *err = &sl->err;
    pm_error_clear(err);
    ssize_t len = pm_read_small(AT_FDCWD, sl->path, head, sizeof head, NULL);
    if (len < 0) {
        sl->rc = pm_error_sys(err, PM_EIO, (int)-len, "%s: cannot read", sl->path);
        return;
    }
    int fmt = pm_profile_sniff(head, (size_t)len);
    int rc;
    if (fmt != PM_FMT_UNKNOWN) {
        pm_profile *one = NULL;
        rc = pm_profile_read(sl->path, &one, err);
        if (!rc) {
            sl->got = malloc(sizeof *sl->got);
            if (!sl->got) {
                pm_profile_free(one);
                rc = pm_error_set(err, PM_ENOMEM, "out of memory");
            } else {
                sl->got[0] = one;
                sl->ngot = 1;
            }
        }
    } else if (pm_ska_sniff(head, (size_t)len)) {
        rc = pm_ska_read(sl->path, &sl->got, &sl->ngot, err);
        if (rc == PM_ENOENT) {
            sl->ignored = pm_strdup(err->msg);
            pm_error_clear(err);
            rc = 0;
        }
    } else {
        if (asprintf(&sl->ignored, "%s: not a profile, ignored", sl->path) < 0)
            sl->ignored = NULL;
        rc = 0;
    }
    sl->rc = rc;
    if (rc || !sl->ngot)
        return;
    sl->clocks = calloc(sl->ngot, sizeof *sl->clocks);
    if (!sl->clocks) {
        sl->rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        return;
    }
    for (size_t i = 0; i < sl->ngot; i++)
        fix_clock(sl->got[i], &sl->clocks[i]);
}

typedef struct pool {
    slot *slots;
    size_t n;
    size_t next;
    size_t done;
    pthread_mutex_t lock;
    const pm_analyze_opts *opts;
    /* For the metric stage. */
    pm_analysis *a;
    int *rcs;
} pool;

/* Raw-column reference counts: refs[h][c] = metrics still to derive from
 * column c of host h (pm_analysis.refs). */
static void release_column(pm_analysis *a, size_t h, size_t c)
{
    pm_profile *p = a->hosts[h].prof;
    free(p->values[c]);
    p->values[c] = NULL;
}

static void *read_worker(void *arg)
{
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        size_t i = p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->n)
            break;
        read_slot(&p->slots[i]);
        pthread_mutex_lock(&p->lock);
        p->done++;
        if (p->opts->progress)
            p->opts->progress(p->done, p->n, p->opts->progress_user);
        pthread_mutex_unlock(&p->lock);
    }
    return NULL;
}

/* Worker threads: one per online CPU, at most 8 (PM_THREADS overrides). */
static size_t nthreads(size_t work)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("PM_THREADS");
    if (env && *env)
        n = strtol(env, NULL, 10);
    if (n < 1)
        n = 1;
    if (n > 8)
        n = 8;
    if ((size_t)n > work)
        n = (long)(work ? work : 1);
    return (size_t)n;
}

/* Run fn over the pool with nthreads() threads (the caller is one). */
static void run_pool(pool *p, void *(*fn)(void *), size_t work)
{
    size_t nt = nthreads(work);
    pthread_t th[8];
    size_t started = 0;
    for (size_t i = 1; i < nt; i++)
        if (pthread_create(&th[started], NULL, fn, p) == 0)
            started++;
    fn(p);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

/* Merge several profiles of one host into one, columns united by name,
 * samples in order of their first time (docs/analysis.md, "Inputs"). */
static int merge_profiles(pm_profile **ps, size_t np, pm_profile **out)
{
    pm_column *cols = NULL;
    size_t ncols = 0, total = 0;
    *out = NULL;
    for (size_t k = 0; k < np; k++) {
        total += ps[k]->n;
        for (size_t c = 0; c < ps[k]->ncols; c++) {
            size_t j;
            for (j = 0; j < ncols; j++)
                if (strcmp(cols[j].name, ps[k]->cols[c].name) == 0)
                    break;
            if (j < ncols)
                continue;
            if (ncols >= PM_MAX_COLUMNS) {
                free(cols);
                return PM_ELIMIT;
            }
            pm_column *nc = pm_realloc_array(cols, ncols + 1, sizeof *nc);
            if (!nc) {
                free(cols);
                return PM_ENOMEM;
            }
            cols = nc;
            cols[ncols++] = ps[k]->cols[c];
        }
    }
    pm_profile *m = pm_profile_new(ps[0]->path, ps[0]->format);
    if (!m || pm_profile_set_columns(m, cols, ncols) || pm_profile_reserve(m, total ? total : 1)) {
        free(cols);
        pm_profile_free(m);
        return PM_ENOMEM;
    }
    m->info = ps[0]->info;
    if (ps[0]->meta_json)
        m->meta_json = pm_strdup(ps[0]->meta_json);
    size_t at = 0;
    for (size_t k = 0; k < np; k++) {
        const pm_profile *p = ps[k];
        memcpy(m->t_wall_ns + at, p->t_wall_ns, p->n * sizeof *m->t_wall_ns);
        memcpy(m->t_mono_ns + at, p->t_mono_ns, p->n * sizeof *m->t_mono_ns);
        for (size_t j = 0; j < ncols; j++) {
            int c = pm_profile_column(p, cols[j].name);
            for (size_t i = 0; i < p->n; i++)
                m->values[j][at + i] = c >= 0 ? p->values[c][i] : NAN;
        }
        at += p->n;
        if (p->has_end) {
            m->has_end = 1;
            m->end = p->end;
        }
        if (!m->meta_json && p->meta_json)
            m->meta_json = pm_strdup(p->meta_json);
    }
    m->n = total;
    free(cols);
    *out = m;
    return 0;
}

static int64_t first_time(const pm_profile *p)
{
    return p->n ? p->t_wall_ns[0] : INT64_MAX;
}

typedef struct pref {
    pm_profile *p;
    pm_clock clock;
} pref;

static int cmp_pref(const void *a, const void *b)
{
    const pref *x = a, *y = b;
    int c = strcmp(x->p->info.host, y->p->info.host);
    if (c)
        return c;
    int64_t fx = first_time(x->p), fy = first_time(y->p);
    return fx < fy ? -1 : fx > fy;
}

static const char *format_name(int f)
{
    switch (f) {
    case PM_FMT_BIN:
        return "binary";
    case PM_FMT_JSONL:
        return "jsonl";
    case PM_FMT_SKA:
        return "ska";
    default:
        return "unknown";
    }
}

/* Build a->hosts from the profiles (sorted by host, then first time). */
static int group_hosts(pm_analysis *a, pref *prs, size_t np, pm_error *err)
{
    a->hosts = calloc(np ? np : 1, sizeof *a->hosts);
    if (!a->hosts)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    qsort(prs, np, sizeof *prs, cmp_pref);
    size_t i = 0;
    while (i < np) {
        size_t j = i + 1;
        while (j < np && strcmp(prs[j].p->info.host, prs[i].p->info.host) == 0)
            j++;
        pm_host *h = &a->hosts[a->nhosts++];
        h->name = pm_strdup(prs[i].p->info.host);
        h->clock = prs[i].clock;
        if (!h->name)
            return pm_error_set(err, PM_ENOMEM, "out of memory");
        snprintf(h->format, sizeof h->format, "%s", format_name(prs[i].p->format));
        for (size_t k = i; k < j; k++) {
            if (add_str(&h->files, &h->nfiles, "%s", prs[k].p->path))
                return pm_error_set(err, PM_ENOMEM, "out of memory");
            if (prs[k].p->format != prs[i].p->format)
                snprintf(h->format, sizeof h->format, "mixed");
            if (fabs(prs[k].clock.step_max_s) > fabs(h->clock.step_max_s))
                h->clock.step_max_s = prs[k].clock.step_max_s;
        }
        if (j - i == 1) {
            h->prof = prs[i].p;
            prs[i].p = NULL;
        } else {
            pm_profile *tmp[j - i];
            for (size_t k = i; k < j; k++)
                tmp[k - i] = prs[k].p;
            int rc = merge_profiles(tmp, j - i, &h->prof);
            if (rc)
                return pm_error_set(err, rc, "%s: cannot merge %zu profiles", h->name, j - i);
            for (size_t k = i; k < j; k++) {
                pm_profile_free(prs[k].p);
                prs[k].p = NULL;
            }
        }
        i = j;
    }
    return 0;
}

/* --- time axis, window, clocks -------------------------------------------- */

static int setup_times(pm_analysis *a, pm_error *err)
{
    const pm_analyze_opts *o = &a->opts;
    double job_start = INFINITY, job_end = -INFINITY;
    for (size_t h = 0; h < a->nhosts; h++) {
        pm_host *ho = &a->hosts[h];
        const pm_profile *p = ho->prof;
        double *t = pm_alloc_array(p->n ? p->n : 1, sizeof *t);
        size_t *idx = pm_alloc_array(p->n ? p->n : 1, sizeof *idx);
        if (!t || !idx) {
            free(t);
            free(idx);
            return pm_error_set(err, PM_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < p->n; i++)
            t[i] = p->t_wall_ns[i] == INT64_MIN ? NAN : (double)p->t_wall_ns[i] * 1e-9;
        size_t k;
        if (o->compat_ska) {
            /* SKA differences timestamps as they are. */
            k = 0;
            for (size_t i = 0; i < p->n; i++)
                if (isfinite(t[i]))
                    idx[k++] = i;
            ho->dropped_time = p->n - k;
        } else {
            k = pm_time_increasing(t, p->n, idx, &ho->dropped_time);
        }
        for (size_t i = 0; i < k; i++)
            t[i] = t[idx[i]];
        ho->t = t;
        ho->idx = idx;
        ho->n = k;
        if (k) {
            if (t[0] < job_start)
                job_start = t[0];
            if (t[k - 1] > job_end)
                job_end = t[k - 1];
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
        if (k == 0)
            continue;
        if (ho->t[0] < a->t_start)
            a->t_start = ho->t[0];
        if (ho->t[k - 1] > a->t_end)
            a->t_end = ho->t[k - 1];
        firsts[nf++] = ho->t[0];
        if (k > 1) {
            double *d = pm_alloc_array(k - 1, sizeof *d);
            if (!d) {
                free(firsts);
                free(ivals);
                return pm_error_set(err, PM_ENOMEM, "out of memory");
            }
            size_t nd = 0;
            for (size_t i = 1; i < k; i++)
                if (ho->t[i] > ho->t[i - 1])
                    d[nd++] = ho->t[i] - ho->t[i - 1];
            ho->interval = nd ? pm_quantile_select(d, nd, 0.5) : NAN;
            free(d);
            if (isfinite(ho->interval))
                ivals[ni++] = ho->interval;
        }
    }
    if (!isfinite(a->t_start))
        a->t_start = a->t_end = job_start;
    double med_first = median_of(firsts, nf);
    a->grid_step = median_of(ivals, ni);
    if (!(a->grid_step > 0))
        a->grid_step = 1.0;
    for (size_t h = 0; h < a->nhosts; h++) {
        pm_host *ho = &a->hosts[h];
        ho->clock.offset_s = ho->n ? ho->t[0] - med_first : NAN;
    }
    free(firsts);
    free(ivals);
    return 0;
}

/* --- series ---------------------------------------------------------------- */

static pm_series *series_new(size_t n, const double *t)
{
    pm_series *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->n = n;
    s->t = t;
    s->v = pm_alloc_array(n ? n : 1, sizeof *s->v);
    s->q = calloc(n ? n : 1, 1);
    if (!s->v || !s->q) {
        free(s->v);
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
    free(s->v);
    free(s->q);
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
    double *val, *tmp, *scratch;  /* [maxn] */
    uint8_t *q;                   /* [maxn] */
    double *all;                  /* [total points over hosts] */
    double *grid;                 /* [grid points] */
} work;

static int derive_series(const pm_analysis *a, const pm_host *ho, const pm_metric_def *def,
                         work *wk, pm_series **out, double *part_mean, double *part_max,
                         size_t *nparts)
{
    *out = NULL;
    const pm_profile *p = ho->prof;
    size_t n = ho->n;
    pm_series *s = NULL;
    double *val = wk->val, *tmp = wk->tmp, *scratch = wk->scratch;
    uint8_t *q = wk->q;
    for (size_t c = 0; c < p->ncols; c++) {
        if (!pm_metric_matches(def, p->cols[c].name))
            continue;
        /* Columns with no value at all do not make a metric present. */
        size_t have = 0;
        for (size_t i = 0; i < n && !have; i++)
            have = !isnan(p->values[c][ho->idx[i]]);
        if (!have)
            continue;
        if (!s) {
            s = series_new(n, ho->t);
            if (!s)
                return PM_ENOMEM;
        }
        derive_column(a, ho, def, &p->cols[c], p->values[c], val, q, tmp, &s->repaired,
                      &s->wraps);
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
        /* A sum over columns (sockets) is only as good as its worst part:
         * one missing column makes the point missing, so a gap in one
         * socket never shows as a dip in the total. */
        if (s->ncolumns == 0) {
            memcpy(s->v, val, n * sizeof *val);
            memcpy(s->q, q, n);
        } else {
            for (size_t i = 0; i < n; i++) {
                s->v[i] += val[i];
                if (isnan(val[i]))
                    s->q[i] = q[i] == PM_Q_DROPPED ? PM_Q_DROPPED : PM_Q_GAP;
                else if (s->q[i] == PM_Q_OK)
                    s->q[i] = q[i];
            }
        }
        s->ncolumns++;
    }
    if (s) {
        pm_qcounts_add(&s->qc, s->q, n);
        int w = a->opts.compat_ska ? PM_W_NONE : def->rate ? PM_W_STEP : PM_W_TRAPEZOID;
        pm_stats_compute(ho->t, s->v, n, w, scratch, &s->st);
    }
    *out = s;
    return 0;
}

/* --- alignment and aggregation ---------------------------------------------- */

size_t pm_grid_interp(const double *t, const double *v, size_t n, double t0, double step,
                      size_t ngrid, double *out)
{
    size_t filled = 0;
    for (size_t k = 0; k < ngrid; k++)
        out[k] = NAN;
    size_t i = 0;
    gsl_interp_accel *acc = gsl_interp_accel_alloc();
    if (!acc)
        return 0;
    while (i < n) {
        while (i < n && !isfinite(v[i]))
            i++;
        if (i >= n)
            break;
        size_t s = i;
        while (i < n && isfinite(v[i]))
            i++;
        size_t len = i - s;
        /* grid indices inside [t[s], t[s+len-1]] */
        double a = ceil((t[s] - t0) / step - 1e-9), b = floor((t[s + len - 1] - t0) / step + 1e-9);
        if (a < 0)
            a = 0;
        if (b > (double)ngrid - 1)
            b = (double)ngrid - 1;
        if (a > b)
            continue;
        if (len == 1) {
            out[(size_t)a] = v[s];
            filled++;
            continue;
        }
        gsl_interp *it = gsl_interp_alloc(gsl_interp_linear, len);
        if (!it || gsl_interp_init(it, t + s, v + s, len) != GSL_SUCCESS) {
            gsl_interp_free(it);
            continue;
        }
        gsl_interp_accel_reset(acc);
        for (size_t k = (size_t)a; k <= (size_t)b; k++) {
            double x = t0 + (double)k * step;
            if (x < t[s])
                x = t[s];
            if (x > t[s + len - 1])
                x = t[s + len - 1];
            out[k] = gsl_interp_eval(it, t + s, v + s, x, acc);
            filled++;
        }
        gsl_interp_free(it);
    }
    gsl_interp_accel_free(acc);
    return filled;
}

static int aggregate_time(const pm_analysis *a, pm_metric_result *r, work *wk)
{
    double span = a->t_end - a->t_start;
    double ng = floor(span / a->grid_step + 1e-9) + 1;
    if (!(ng >= 1) || ng > MAX_GRID_POINTS)
        return PM_ELIMIT;
    size_t n = (size_t)ng;
    pm_aggregate *g = &r->agg;
    g->n = n;
    g->t = pm_alloc_array(n, sizeof *g->t);
    g->v = calloc(n, sizeof *g->v);
    g->count = calloc(n, sizeof *g->count);
    double *tmp = wk->grid;
    if (!g->t || !g->v || !g->count)
        return PM_ENOMEM;
    for (size_t k = 0; k < n; k++)
        g->t[k] = a->t_start + (double)k * a->grid_step;
    for (size_t h = 0; h < a->nhosts; h++) {
        const pm_series *s = r->host[h];
        if (!s)
            continue;
        g->interpolated += pm_grid_interp(s->t, s->v, s->n, a->t_start, a->grid_step, n, tmp);
        for (size_t k = 0; k < n; k++)
            if (!isnan(tmp[k])) {
                g->v[k] += tmp[k];
                g->count[k]++;
            }
    }
    for (size_t k = 0; k < n; k++) {
        if (g->count[k] == 0)
            g->v[k] = NAN;
        else if (r->def->comb == PM_COMB_AVERAGE)
            g->v[k] /= g->count[k];
    }
    return 0;
}

/* Position-by-position combination (--align=index, --compat=ska): point i
 * combines every host's i-th point; its time is the mean of their times. */
static int aggregate_index(const pm_analysis *a, pm_metric_result *r)
{
    size_t n = 0;
    for (size_t h = 0; h < a->nhosts; h++)
        if (r->host[h] && r->host[h]->n > n)
            n = r->host[h]->n;
    pm_aggregate *g = &r->agg;
    g->n = n;
    g->t = calloc(n ? n : 1, sizeof *g->t);
    g->v = calloc(n ? n : 1, sizeof *g->v);
    g->count = calloc(n ? n : 1, sizeof *g->count);
    uint32_t *tc = calloc(n ? n : 1, sizeof *tc);
    if (!g->t || !g->v || !g->count || !tc) {
        free(tc);
        return PM_ENOMEM;
    }
    for (size_t h = 0; h < a->nhosts; h++) {
        const pm_series *s = r->host[h];
        if (!s)
            continue;
        for (size_t i = 0; i < s->n; i++) {
            g->t[i] += s->t[i];
            tc[i]++;
            if (!isnan(s->v[i])) {
                g->v[i] += s->v[i];
                g->count[i]++;
            }
        }
    }
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
    return 0;
}

/* Statistics over every host point (min/max carry their host), plus the
 * per-node title figures and the imbalance. */
static int metric_stats(const pm_analysis *a, pm_metric_result *r, double part_mean,
                        size_t nparts, double part_max, work *wk)
{
    double *all = wk->all;
    size_t m = 0;
    double sum_means = 0, max_mean = NAN, wsum = 0, wtot = 0;
    size_t nmeans = 0;
    pm_stats *st = &r->all;
    memset(st, 0, sizeof *st);
    st->min = st->max = st->t_min = st->t_max = NAN;
    st->host_min = st->host_max = -1;
    r->max_per_node = NAN;
    for (size_t h = 0; h < a->nhosts; h++) {
        const pm_series *s = r->host[h];
        if (!s)
            continue;
        st->n += s->n;
        for (size_t i = 0; i < s->n; i++)
            if (!isnan(s->v[i]))
                all[m++] = s->v[i];
        for (int k = 0; k < PM_Q_N; k++)
            r->qc.n[k] += s->qc.n[k];
        r->repaired += s->repaired;
        r->wraps += s->wraps;
        if (!s->st.nvalid)
            continue;
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
        sum_means += s->st.mean;
        nmeans++;
        if (isnan(max_mean) || s->st.mean > max_mean)
            max_mean = s->st.mean;
        if (isnan(r->max_per_node) || s->st.max > r->max_per_node)
            r->max_per_node = s->st.max;
        if (s->st.duration > 0) {
            wsum += s->st.mean * s->st.duration;
            wtot += s->st.duration;
        }
    }
    st->nvalid = m;
    r->avg_per_node = nmeans ? sum_means / (double)nmeans : NAN;
    if (a->opts.compat_ska && nparts > 1) {
        /* SKA's energy titles: per socket means and maxima. */
        r->avg_per_node = part_mean / (double)nparts;
        r->max_per_node = part_max;
    }
    r->imbalance = nmeans && r->avg_per_node != 0 ? max_mean / (sum_means / (double)nmeans) : NAN;
    st->mean = wtot > 0 ? wsum / wtot : r->avg_per_node;
    st->amean = NAN;
    st->p50 = st->p95 = st->sd = NAN;
    if (m) {
        double s = 0;
        for (size_t i = 0; i < m; i++)
            s += all[i];
        st->amean = s / (double)m;
        if (a->opts.compat_ska)
            st->mean = st->amean;
        if (m > 1)
            st->sd = pm_sd(all, m, st->amean);
        pm_p50_p95(all, m, &st->p50, &st->p95);
    }
    st->duration = a->t_end - a->t_start;
    return 0;
}

/* --- the whole run ------------------------------------------------------------ */

/* Grid size of the time alignment; 0 when too large. */
static size_t grid_points(const pm_analysis *a)
{
    double ng = floor((a->t_end - a->t_start) / a->grid_step + 1e-9) + 1;
    return ng >= 1 && ng <= MAX_GRID_POINTS ? (size_t)ng : 0;
}

/* One thread's scratch, reused across the metrics it builds, so that big
 * buffers are faulted in once, not once per metric and host. */
static int work_init(const pm_analysis *a, work *wk)
{
    size_t maxn = 1, total = 1;
    for (size_t h = 0; h < a->nhosts; h++) {
        if (a->hosts[h].n > maxn)
            maxn = a->hosts[h].n;
        total += a->hosts[h].n;
    }
    size_t ng = grid_points(a);
    wk->val = pm_alloc_array(maxn, sizeof *wk->val);
    wk->tmp = pm_alloc_array(maxn, sizeof *wk->tmp);
    wk->scratch = pm_alloc_array(maxn > ng ? maxn : ng ? ng : 1, sizeof *wk->scratch);
    wk->q = malloc(maxn);
    wk->all = pm_alloc_array(total, sizeof *wk->all);
    wk->grid = pm_alloc_array(ng ? ng : 1, sizeof *wk->grid);
    return wk->val && wk->tmp && wk->scratch && wk->q && wk->all && wk->grid ? 0 : PM_ENOMEM;
}

static void work_free(work *wk)
{
    free(wk->val);
    free(wk->tmp);
    free(wk->scratch);
    free(wk->q);
    free(wk->all);
    free(wk->grid);
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
        rc = derive_series(a, &a->hosts[h], r->def, wk, &r->host[h], &part_mean, &part_max,
                           &nparts);
        if (!rc && r->host[h])
            r->nhosts_with_data++;
    }
    if (rc || r->nhosts_with_data == 0)
        return rc;
    if (a->opts.compat_ska || a->opts.align == PM_ALIGN_INDEX)
        rc = aggregate_index(a, r);
    else
        rc = grid_points(a) ? aggregate_time(a, r, wk) : PM_ELIMIT;
    if (rc)
        return rc;
    pm_aggregate *g = &r->agg;
    /* wk->scratch holds max(longest host, grid) points: enough for either
     * kind of aggregate. */
    int w = a->opts.compat_ska ? PM_W_NONE : r->def->rate ? PM_W_STEP : PM_W_TRAPEZOID;
    pm_stats_compute(g->t, g->v, g->n, w, wk->scratch, &g->st);
    g->min_count = UINT32_MAX;
    for (size_t i = 0; i < g->n; i++)
        if (g->count[i] && g->count[i] < g->min_count)
            g->min_count = g->count[i];
    if (g->min_count == UINT32_MAX)
        g->min_count = 0;
    return metric_stats(a, r, part_mean, nparts, part_max, wk);
}

static void *metric_worker(void *arg)
{
    pool *p = arg;
    work wk;
    int wrc = work_init(p->a, &wk);
    for (;;) {
        pthread_mutex_lock(&p->lock);
        size_t i = p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->n)
            break;
        p->rcs[i] = wrc ? wrc : build_metric(p->a, &p->a->metrics[i], &wk);
        /* Columns no later metric needs are released; other threads only
         * read columns their own metric matches, whose counts are still
         * above zero. */
        pm_analysis *a = p->a;
        const pm_metric_def *def = a->metrics[i].def;
        pthread_mutex_lock(&p->lock);
        for (size_t h = 0; h < a->nhosts; h++) {
            const pm_profile *pr = a->hosts[h].prof;
            for (size_t c = 0; c < pr->ncols; c++)
                if (a->refs[h][c] && pm_metric_matches(def, pr->cols[c].name) &&
                    --a->refs[h][c] == 0)
                    release_column(a, h, c);
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
static void count_repairs(pm_analysis *a)
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
    pool mp = {.n = cat->n, .a = a, .rcs = rcs};
    pthread_mutex_init(&mp.lock, NULL);
    run_pool(&mp, metric_worker, cat->n);
    pthread_mutex_destroy(&mp.lock);
    for (size_t d = 0; d < cat->n; d++)
        if (rcs[d]) {
            int rc = rcs[d];
            free(rcs);
            return pm_error_set(err, rc, "%s: cannot derive or aggregate (%s)", cat->m[d].id,
                                rc == PM_ELIMIT ? "time grid too large" : "out of memory");
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
            free(r->agg.t);
            free(r->agg.v);
            free(r->agg.count);
            continue;
        }
        a->metrics[k++] = a->metrics[i];
    }
    a->nmetrics = k;
    return 0;
}

int pm_analysis_run(const char *const *paths, size_t npaths, const pm_analyze_opts *opts,
                    pm_analysis **out, pm_error *err)
{
    *out = NULL;
    gsl_set_error_handler_off();
    pm_analysis *a = calloc(1, sizeof *a);
    if (!a)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    a->opts = *opts;
    char **files = NULL;
    size_t nfiles = 0;
    plist pl = {NULL, 0};
    pm_clock *clocks = NULL;
    pref *prs = NULL;
    int rc = pm_catalog_load(opts->catalog_path ? opts->catalog_path : "templates/metrics.json",
                             &a->catalog, err);
    if (rc)
        goto fail;
    for (size_t i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            rc = pm_error_sys(err, PM_ENOENT, errno, "%s", paths[i]);
            goto fail;
        }
        if (S_ISDIR(st.st_mode)) {
            size_t before = nfiles;
            if ((rc = collect_dir(paths[i], &files, &nfiles, err)))
                goto fail;
            if (nfiles == before) {
                rc = pm_error_set(err, PM_ENOENT, "%s: directory holds no files", paths[i]);
                goto fail;
            }
        } else if (add_str(&files, &nfiles, "%s", paths[i])) {
            rc = pm_error_set(err, PM_ENOMEM, "out of memory");
            goto fail;
        }
    }
    {
        slot *slots = calloc(nfiles ? nfiles : 1, sizeof *slots);
        if (!slots) {
            rc = pm_error_set(err, PM_ENOMEM, "out of memory");
            goto fail;
        }
        pool rp = {.slots = slots, .n = nfiles, .opts = opts};
        pthread_mutex_init(&rp.lock, NULL);
        for (size_t i = 0; i < nfiles; i++)
            slots[i].path = files[i];
        run_pool(&rp, read_worker, nfiles);
        pthread_mutex_destroy(&rp.lock);
        /* Merge in file order; on the first fatal problem keep freeing. */
        for (size_t i = 0; i < nfiles; i++) {
            slot *sl = &slots[i];
            if (sl->ignored)
                (void)add_str(&a->ignored, &a->nignored, "%s", sl->ignored);
            free(sl->ignored);
            if (!rc && sl->rc && (sl->rc == PM_ENOMEM || opts->strict)) {
                *err = sl->err;
                rc = sl->rc;
            } else if (sl->rc) {
                (void)add_str(&a->warnings, &a->nwarnings, "%s", sl->err.msg);
            }
            for (size_t k = 0; k < sl->ngot; k++) {
                pm_profile *p = sl->got[k];
                for (size_t w = 0; w < p->nwarnings && !rc; w++)
                    (void)add_str(&a->warnings, &a->nwarnings, "%s", p->warnings[w]);
                pm_clock *nc = rc ? NULL : pm_realloc_array(clocks, pl.n + 1, sizeof *nc);
                if (nc)
                    clocks = nc;
                if (!nc || plist_add(&pl, p)) {
                    pm_profile_free(p);
                    if (!rc)
                        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
                    continue;
                }
                clocks[pl.n - 1] = sl->clocks[k];
            }
            free(sl->got);
            free(sl->clocks);
        }
        free(slots);
        if (rc)
            goto fail;
    }
    if (pl.n == 0) {
        rc = pm_error_set(err, PM_ENOENT, "no readable profile among %zu file%s%s%s", nfiles,
                          nfiles == 1 ? "" : "s", a->nwarnings ? "; " : "",
                          a->nwarnings ? a->warnings[0] : "");
        goto fail;
    }
    prs = calloc(pl.n, sizeof *prs);
    if (!prs) {
        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < pl.n; i++) {
        prs[i].p = pl.p[i];
        prs[i].clock = clocks[i];
        if (!prs[i].p->info.host[0]) {
            /* No host recorded: the file name stands in. */
            const char *b = strrchr(prs[i].p->path, '/');
            snprintf(prs[i].p->info.host, sizeof prs[i].p->info.host, "%s",
                     b ? b + 1 : prs[i].p->path);
        }
    }
    free(pl.p);
    pl.p = NULL;
    size_t np = pl.n;
    pl.n = 0;
    rc = group_hosts(a, prs, np, err);
    for (size_t i = 0; i < np; i++)
        pm_profile_free(prs[i].p);
    free(prs);
    prs = NULL;
    if (rc)
        goto fail;
    /* Node figures read raw columns, so they come first; raw columns are
     * then released as soon as no metric still needs them. */
    if ((rc = setup_times(a, err)) || (rc = pm_summary_compute(a, err)) ||
        (rc = init_refs(a, err)) || (rc = build_metrics(a, err)))
        goto fail;
    count_repairs(a);
    if (opts->rules_path && (rc = pm_rules_eval(a, opts->rules_path, err)))
        goto fail;
    free_strs(files, nfiles);
    free(clocks);
    *out = a;
    return 0;
fail:
    for (size_t i = 0; i < pl.n; i++)
        pm_profile_free(pl.p[i]);
    free(pl.p);
    free(clocks);
    free_strs(files, nfiles);
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
        free(r->agg.t);
        free(r->agg.v);
        free(r->agg.count);
    }
    free(a->metrics);
    for (size_t h = 0; h < a->nhosts; h++) {
        pm_host *ho = &a->hosts[h];
        free(ho->name);
        free_strs(ho->files, ho->nfiles);
        pm_profile_free(ho->prof);
        free(ho->t);
        free(ho->idx);
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
    free_strs(a->warnings, a->nwarnings);
    free_strs(a->ignored, a->nignored);
    pm_catalog_free(a->catalog);
    free(a);
}

int pm_metric_title(const pm_metric_result *r, int all_nodes, char *buf, size_t cap)
{
    const char *prefix = "";
    double avg = r->avg_per_node, max = r->max_per_node;
    if (all_nodes) {
        prefix = r->def->comb == PM_COMB_TOTAL ? "Total " : "Average ";
        avg = r->agg.st.mean;
        max = r->agg.st.max;
    }
    return snprintf(buf, cap, "Average %s%s/Node: %.3f %s, Max %s%s/Node: %.3f %s", prefix,
                    r->def->name, avg, r->def->unit, prefix, r->def->name, max, r->def->unit);
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
