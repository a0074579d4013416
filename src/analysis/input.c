/* Input stage: collect files, read them by content (perfmon binary, JSON
 * Lines, SKA JSON) on worker threads, merge several files per host, and
 * build the hosts.  Semantics: docs/analysis.md, "Inputs". */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/phase.h"
#include "perfmon/scanner.h"
#include "perfmon/ska.h"

#define MAX_INPUT_FILES 100000

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
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
        if ((rc = pm_strs_add(&names, &n, "%s", path))) {
            rc = pm_error_set(err, PM_ENOMEM, "out of memory");
            break;
        }
    }
    closedir(d);
    if (rc) {
        pm_strs_free(names, n);
        return rc;
    }
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n && !rc; i++)
        if (pm_strs_add(files, nfiles, "%s", names[i]))
            rc = pm_error_set(err, PM_ENOMEM, "out of memory");
    pm_strs_free(names, n);
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
    /* r[i]: how far the wall clock moved against the monotonic one since
     * the first sample (small numbers, so doubles keep nanoseconds). */
    int64_t base = p->t_wall_ns[0] - p->t_mono_ns[0];
    double *r = pm_alloc_array(p->n, sizeof *r);
    double prev = 0, step = 0;
    for (size_t i = 0; i < p->n; i++) {
        double d = (double)((p->t_wall_ns[i] - p->t_mono_ns[i]) - base);
        if (fabs(d - prev) > step)
            step = fabs(d - prev);
        prev = d;
        if (r)
            r[i] = d;
    }
    double span = (double)(p->t_mono_ns[p->n - 1] - p->t_mono_ns[0]);
    if (span > 0)
        c->drift_ppm = prev / span * 1e6;
    c->step_max_s = step * 1e-9;
    /* Anchor the monotonic axis at the median wall-clock offset: a clock
     * that was wrong for a while (before NTP stepped it) does not move the
     * whole run. */
    double med = r ? pm_quantile_select(r, p->n, 0.5) : 0;
    free(r);
    int64_t anchor = base + (int64_t)llround(med);
    for (size_t i = 0; i < p->n; i++)
        p->t_wall_ns[i] = p->t_mono_ns[i] + anchor;
}

/* What reading one input file produced; filled by a worker thread, merged
 * in file order by the main thread so results do not depend on timing. */
typedef struct slot {
    const char *path;
    pm_profile **got;      /* profiles read (SKA files hold several) */
    size_t ngot;
    pm_clock *clocks;      /* [ngot] */
    char *ignored;         /* why the file is not a profile, or NULL */
    pm_event_list events;  /* an events file's phase marks */
    pm_phase_set phases;   /* a Scanner profile's intervals and totals */
    int rc;
    pm_error err;
} slot;

/* A column that not exactly one catalog metric derives from is released
 * by itself (at once, or after several metrics): such columns are placed
 * together (pm_read_hint), where giving them back frees whole huge pages.
 * A column exactly one metric reads becomes that metric's series. */
static int released_alone(const char *column, void *ctx)
{
    const pm_catalog *cat = ctx;
    size_t n = 0;
    for (size_t d = 0; d < cat->n && n < 2; d++)
        n += (size_t)pm_metric_matches(&cat->m[d], column);
    return n != 1;
}

static void read_slot(slot *sl, const pm_read_hint *hint, pm_read_buf *rb)
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
        rc = pm_profile_read_hinted(sl->path, hint, rb, &one, err);
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
    } else if (pm_events_sniff(head, (size_t)len)) {
        size_t bad = 0;
        rc = pm_events_read(sl->path, &sl->events, &bad, err);
        if (rc == 0 && bad) {
            /* Kept what was readable; the first bad line is in err. */
            if (asprintf(&sl->ignored, "%s (%zu bad line%s skipped)", err->msg, bad,
                         bad == 1 ? "" : "s") < 0)
                sl->ignored = NULL;
            pm_error_clear(err);
        }
        sl->rc = rc;
        return;
    } else if (pm_scanner_sniff(head, (size_t)len)) {
        /* Before the SKA test: a start time whose low byte is '{' would
         * pass for JSON there, while no text passes this test (the node
         * number needs five zero bytes). */
        size_t nw = 0;
        rc = pm_scanner_read(sl->path, &sl->phases, &nw, err);
        if (rc && nw) {
            /* The whole workers before the damage are kept (and merged). */
            size_t ml = strlen(err->msg);
            snprintf(err->msg + ml, sizeof err->msg - ml, " (the %zu worker%s before it kept)", nw,
                     nw == 1 ? "" : "s");
        }
        sl->rc = rc;
        return;
    } else if (pm_ska_sniff(head, (size_t)len)) {
        rc = pm_ska_read(sl->path, &sl->got, &sl->ngot, err);
        if (rc == PM_ENOENT) {
            sl->ignored = pm_strdup(err->msg);
            pm_error_clear(err);
            rc = 0;
        }
    } else {
        if (asprintf(&sl->ignored, len == 0 ? "%s: empty file, ignored" : "%s: not a profile, ignored",
                     sl->path) < 0)
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

/* SKA perfmon reads only the merged cpu_metrics.json of a directory, never
 * the per-host <jobid>_<host>.json files its samplers wrote before the
 * merge (seed 003, CreateDataFrame.go): beside a readable cpu_metrics.json
 * those are not read twice, and say so (-v). */
static int is_ska_host_file(const slot *sl)
{
    if (sl->rc || sl->ngot != 1 || sl->got[0]->format != PM_FMT_SKA)
        return 0;
    const char *b = strrchr(sl->path, '/');
    b = b ? b + 1 : sl->path;
    const char *us = strchr(b, '_');
    const char *host = pm_profile_host(sl->got[0]);
    size_t hl = strlen(host);
    return us && us > b && strlen(us + 1) == hl + 5 && strncmp(us + 1, host, hl) == 0 &&
           strcmp(us + 1 + hl, ".json") == 0;
}

static size_t dir_len(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? (size_t)(b - path) : 0;
}

static void skip_ska_host_files(slot *slots, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const slot *m = &slots[i];
        size_t dl = dir_len(m->path);
        if (m->rc || !m->ngot || m->got[0]->format != PM_FMT_SKA ||
            strcmp(m->path + dl + (dl || m->path[0] == '/'), "cpu_metrics.json") != 0)
            continue;
        for (size_t j = 0; j < n; j++) {
            slot *sl = &slots[j];
            if (j == i || sl->ignored || dir_len(sl->path) != dl ||
                strncmp(sl->path, m->path, dl) != 0 || !is_ska_host_file(sl))
                continue;
            if (asprintf(&sl->ignored, "%s: per-host SKA file not read: %s holds the merged data (as SKA perfmon, which reads only that)",
                         sl->path, m->path) < 0)
                sl->ignored = NULL;
            pm_profile_free(sl->got[0]);
            free(sl->got);
            free(sl->clocks);
            sl->got = NULL;
            sl->clocks = NULL;
            sl->ngot = 0;
        }
    }
}

typedef struct read_ctx {
    slot *slots;
    const pm_analyze_opts *opts;
    const pm_read_hint *hint;
} read_ctx;

static void *read_worker(void *arg)
{
    pm_pool *p = arg;
    read_ctx *rc = p->ctx;
    pm_read_buf rb = {0}; /* this thread's, from one file to the next */
    for (size_t i; (i = pm_pool_next(p)) < p->n;) {
        read_slot(&rc->slots[i], rc->hint, &rb);
        pthread_mutex_lock(&p->lock);
        p->done++;
        if (rc->opts->progress)
            rc->opts->progress(p->done, p->n, rc->opts->progress_user);
        pthread_mutex_unlock(&p->lock);
    }
    pm_read_buf_free(&rb);
    return NULL;
}

/* Move src's events to the end of dst (src is left empty). */
static int events_take(pm_event_list *dst, pm_event_list *src)
{
    if (dst->n + src->n > dst->cap) {
        size_t nc = dst->n + src->n;
        pm_event *nv = pm_realloc_array(dst->v, nc, sizeof *nv);
        if (!nv)
            return PM_ENOMEM;
        dst->v = nv;
        dst->cap = nc;
    }
    memcpy(dst->v + dst->n, src->v, src->n * sizeof *src->v);
    dst->n += src->n;
    free(src->v);
    src->v = NULL;
    src->n = src->cap = 0;
    return 0;
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
    if (ps[0]->host_long && !(m->host_long = pm_strdup(ps[0]->host_long))) {
        free(cols);
        pm_profile_free(m);
        return PM_ENOMEM;
    }
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
    int gpu;       /* split off a node's profile by pm_gpu_split */
} pref;

/* Nodes first, then GPUs; by name, then by first time. */
static int cmp_pref(const void *a, const void *b)
{
    const pref *x = a, *y = b;
    if (x->gpu != y->gpu)
        return x->gpu - y->gpu;
    int c = strcmp(pm_profile_host(x->p), pm_profile_host(y->p));
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

/* Give each GPU recorded in a node's profile a profile of its own (gpu.c),
 * appended to *prs with the node's clock. */
static int split_gpus(pref **prs, size_t *np, pm_error *err)
{
    size_t nodes = *np;
    for (size_t i = 0; i < nodes; i++) {
        pm_profile **g = NULL;
        size_t ng = 0;
        if (pm_gpu_split((*prs)[i].p, &g, &ng) != 0)
            return pm_error_set(err, PM_ENOMEM, "out of memory");
        pref *grown = ng ? pm_realloc_array(*prs, *np + ng, sizeof *grown) : *prs;
        if (!grown) {
            for (size_t k = 0; k < ng; k++)
                pm_profile_free(g[k]);
            free(g);
            return pm_error_set(err, PM_ENOMEM, "out of memory");
        }
        *prs = grown;
        for (size_t k = 0; k < ng; k++)
            (*prs)[(*np)++] = (pref){g[k], (*prs)[i].clock, 1};
        free(g);
    }
    return 0;
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
        while (j < np && prs[j].gpu == prs[i].gpu &&
               strcmp(pm_profile_host(prs[j].p), pm_profile_host(prs[i].p)) == 0)
            j++;
        pm_host *h = &a->hosts[a->nhosts++];
        h->name = pm_strdup(pm_profile_host(prs[i].p));
        h->clock = prs[i].clock;
        h->gpu = prs[i].gpu;
        if (!h->name)
            return pm_error_set(err, PM_ENOMEM, "out of memory");
        snprintf(h->format, sizeof h->format, "%s", format_name(prs[i].p->format));
        for (size_t k = i; k < j; k++) {
            if (pm_strs_add(&h->files, &h->nfiles, "%s", prs[k].p->path))
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

/* Scanner numbers its nodes; perfmon names its hosts and records each
 * one's rank in the job (SLURM_NODEID and the like).  A Scanner phase on
 * "node <n>" moves to the one host whose rank is n, so that its resource
 * use can be read during it; without such a host it stays on "node <n>". */
static int map_scanner_nodes(pm_analysis *a, pm_error *err)
{
    for (size_t i = 0; i < a->phases.n; i++) {
        pm_phase *p = &a->phases.v[i];
        if (!p->track[0] || strncmp(p->host, "node ", 5) != 0)
            continue; /* marks have no track */
        const char *rank = p->host + 5;
        const pm_host *match = NULL;
        for (size_t h = 0; h < a->nhosts; h++)
            if (strcmp(a->hosts[h].prof->info.node_rank, rank) == 0) {
                if (match) { /* two hosts of one rank: no mapping */
                    match = NULL;
                    break;
                }
                match = &a->hosts[h];
            }
        if (!match)
            continue;
        char *name = pm_strdup(match->name);
        if (!name)
            return pm_error_set(err, PM_ENOMEM, "out of memory");
        free(p->host);
        p->host = name;
    }
    return 0;
}

int pm_input_load(pm_analysis *a, const char *const *paths, size_t npaths, pm_error *err)
{
    const pm_analyze_opts *opts = &a->opts;
    char **files = NULL;
    size_t nfiles = 0;
    plist pl = {NULL, 0};
    pm_clock *clocks = NULL;
    pref *prs = NULL;
    int rc = 0;
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
        } else if (pm_strs_add(&files, &nfiles, "%s", paths[i])) {
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
        pm_read_hint hint = {released_alone, a->catalog};
        read_ctx ctx = {slots, opts, a->catalog ? &hint : NULL};
        pm_pool rp = {.n = nfiles, .ctx = &ctx};
        pthread_mutex_init(&rp.lock, NULL);
        for (size_t i = 0; i < nfiles; i++)
            slots[i].path = files[i];
        pm_pool_run(&rp, read_worker, nfiles);
        pthread_mutex_destroy(&rp.lock);
        skip_ska_host_files(slots, nfiles);
        /* Merge in file order; on the first fatal problem keep freeing. */
        pm_event_list events = {NULL, 0, 0};
        for (size_t i = 0; i < nfiles; i++) {
            slot *sl = &slots[i];
            if (sl->ignored) {
                /* Bad lines of an events file are a warning, not a note. */
                if (sl->events.n)
                    (void)pm_strs_add(&a->warnings, &a->nwarnings, "%s", sl->ignored);
                else
                    (void)pm_strs_add(&a->ignored, &a->nignored, "%s", sl->ignored);
            }
            free(sl->ignored);
            if (sl->events.n && !rc && events_take(&events, &sl->events) != 0)
                rc = pm_error_set(err, PM_ENOMEM, "out of memory");
            pm_event_list_free(&sl->events);
            if (sl->phases.scanner_files && !rc && pm_phase_set_take(&a->phases, &sl->phases))
                rc = pm_error_set(err, PM_ENOMEM, "out of memory");
            pm_phase_set_free(&sl->phases);
            if (!rc && sl->rc && (sl->rc == PM_ENOMEM || opts->strict)) {
                *err = sl->err;
                rc = sl->rc;
            } else if (sl->rc) {
                (void)pm_strs_add(&a->warnings, &a->nwarnings, "%s", sl->err.msg);
            }
            for (size_t k = 0; k < sl->ngot; k++) {
                pm_profile *p = sl->got[k];
                for (size_t w = 0; w < p->nwarnings && !rc; w++)
                    (void)pm_strs_add(&a->warnings, &a->nwarnings, "%s", p->warnings[w]);
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
        if (!rc && events.n) {
            rc = pm_phases_pair(&events, &a->phases, err);
            for (size_t i = 0; i < a->phases.nproblems && !rc; i++)
                (void)pm_strs_add(&a->warnings, &a->nwarnings, "%s", a->phases.problems[i]);
        }
        pm_event_list_free(&events);
        if (rc)
            goto fail;
    }
    /* Phases alone (Scanner profiles, marks) are an analysis too. */
    if (pl.n == 0 && a->phases.n == 0 && !a->phases.scanner_files) {
        rc = pm_error_set(err, PM_ENOENT, "no readable profile among %zu file%s%s%s", nfiles,
                          nfiles == 1 ? "" : "s", a->nwarnings ? "; " : "",
                          a->nwarnings ? a->warnings[0] : "");
        goto fail;
    }
    prs = calloc(pl.n ? pl.n : 1, sizeof *prs);
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
    rc = split_gpus(&prs, &np, err);
    if (rc == 0)
        rc = group_hosts(a, prs, np, err);
    for (size_t i = 0; i < np; i++)
        pm_profile_free(prs[i].p);
    free(prs);
    prs = NULL;
    if (rc)
        goto fail;
    if ((rc = map_scanner_nodes(a, err)))
        goto fail;
    pm_strs_free(files, nfiles);
    free(clocks);
    return 0;
fail:
    for (size_t i = 0; i < pl.n; i++)
        pm_profile_free(pl.p[i]);
    free(pl.p);
    free(clocks);
    pm_strs_free(files, nfiles);
    return rc ? rc : PM_EFORMAT;
}
