/* Input stage: collect files, read them by content (perfmon binary, JSON
 * Lines, SKA JSON) on worker threads, merge several files per host, and
 * build the hosts.  Semantics: docs/analysis.md, "Inputs". */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "input_slot.h"
#include "internal.h"
#include "perfmon/clock.h"
#include "perfmon/buf.h"
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

/* Column projection: only the columns a catalog metric derives from or
 * the node summary reads are decoded.  The outputs (--csv, --data, --hdf5,
 * plots, the report) are all made of the metrics' series and the node
 * figures, so they need no other column. */
static int wanted(const char *column, void *ctx)
{
    const pm_catalog *cat = ctx;
    if (pm_summary_reads(column) || pm_job_end_reads(column))
        return 1;
    for (size_t d = 0; d < cat->n; d++)
        if (pm_metric_matches(&cat->m[d], column))
            return 1;
    return 0;
}

/* The stream mode's survey (docs/analysis.md, "Analysis in bounded
 * memory"): times, columns and metadata, no values. */
static int wanted_none(const char *column, void *ctx)
{
    (void)column;
    (void)ctx;
    return 0;
}

/* The stream mode's survey keeps of each profile only what the run
 * selection and the grouping read: its first sample and the samples of
 * its earliest and latest wall times (first_time, span_of), in a fresh
 * small profile, so that the survey of many hosts holds no samples; the
 * hosts' times are read again one host at a time (setup_times). */
static int survey_shrink(pm_profile **pp)
{
    pm_profile *p = *pp;
    if (p->n <= 3)
        return 0;
    size_t lo = 0, hi = 0, k[3];
    for (size_t i = 0; i < p->n; i++) {
        int64_t t = p->t_wall_ns[i];
        if (t == INT64_MIN)
            continue;
        if (p->t_wall_ns[lo] == INT64_MIN || t < p->t_wall_ns[lo])
            lo = i;
        if (p->t_wall_ns[hi] == INT64_MIN || t > p->t_wall_ns[hi])
            hi = i;
    }
    k[0] = 0;
    k[1] = lo;
    k[2] = hi;
    pm_profile *m = pm_profile_new(p->path, p->format);
    if (!m || pm_profile_set_columns(m, p->cols, p->ncols) ||
        !(m->unread = calloc(p->ncols ? p->ncols : 1, 1))) {
        pm_profile_free(m);
        return PM_ENOMEM;
    }
    memset(m->unread, 1, p->ncols);
    if (pm_profile_reserve(m, 3)) {
        pm_profile_free(m);
        return PM_ENOMEM;
    }
    for (int j = 0; j < 3; j++) {
        m->t_wall_ns[j] = p->t_wall_ns[k[j]];
        m->t_mono_ns[j] = p->t_mono_ns[k[j]];
    }
    m->n = 3;
    m->info = p->info;
    m->host_long = p->host_long;
    m->meta_json = p->meta_json;
    m->has_end = p->has_end;
    m->end = p->end;
    m->notes = p->notes;
    m->nnotes = p->nnotes;
    m->bad_records = p->bad_records;
    m->skipped_bytes = p->skipped_bytes;
    m->warnings = p->warnings;
    m->nwarnings = p->nwarnings;
    p->host_long = p->meta_json = NULL;
    p->notes = p->warnings = NULL;
    p->nnotes = p->nwarnings = 0;
    pm_profile_free(p);
    *pp = m;
    return 0;
}

static int times_only(const char *column, void *ctx)
{
    (void)column;
    (void)ctx;
    return 0;
}

void pm_input_read_slot(slot *sl, const pm_read_hint *hint, pm_read_buf *rb)
{
    char head[4096];
    pm_error *err = &sl->err;
    pm_error_clear(err);
    struct stat st;
    sl->size = stat(sl->path, &st) == 0 ? st.st_size : -1;
    ssize_t len = pm_read_small(AT_FDCWD, sl->path, head, sizeof head, NULL);
    if (len < 0) {
        sl->rc = pm_error_sys(err, PM_EIO, (int)-len, "%s: cannot read", sl->path);
        return;
    }
    if (len == 0) {
        if (asprintf(&sl->ignored, "%s: empty file, ignored", sl->path) < 0)
            sl->ignored = NULL;
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
        /* Say what the file starts with, printable bytes only. */
        char what[40];
        size_t k = 0;
        for (ssize_t i = 0; i < len && k + 1 < sizeof what && i < 24; i++) {
            unsigned char ch = (unsigned char)head[i];
            what[k++] = ch >= 0x20 && ch < 0x7f && ch != '"' ? (char)ch : '.';
        }
        what[k] = 0;
        if (asprintf(&sl->ignored,
                     "%s: offset 0: not a profile (neither perfmon binary or JSON Lines, SKA "
                     "JSON, phase marks nor Scanner; it starts with \"%s\"), ignored",
                     sl->path, what) < 0)
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
    if (hint && hint->want == wanted_none) {
        sl->nfull = calloc(sl->ngot, sizeof *sl->nfull);
        for (size_t i = 0; i < sl->ngot && sl->nfull; i++) {
            sl->nfull[i] = sl->got[i]->n;
            if (survey_shrink(&sl->got[i]))
                break;
        }
        if (!sl->nfull)
            sl->rc = pm_error_set(err, PM_ENOMEM, "out of memory");
    }
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
            if (asprintf(
                    &sl->ignored,
                    "%s: per-host SKA file not read: %s holds the merged data (as SKA perfmon, which reads only that)",
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
    uint64_t bytes_done, bytes_total; /* for opts->progress */
} read_ctx;

static void *read_worker(void *arg)
{
    pm_pool *p = arg;
    read_ctx *rc = p->ctx;
    pm_read_buf rb = {0}; /* this thread's, from one file to the next */
    for (size_t i; (i = pm_pool_next(p)) < p->n;) {
        pm_input_read_slot(&rc->slots[i], rc->hint, &rb);
        pthread_mutex_lock(&p->lock);
        p->done++;
        if (rc->opts->progress) {
            rc->bytes_done += rc->slots[i].size > 0 ? (uint64_t)rc->slots[i].size : 0;
            if (rc->bytes_done > rc->bytes_total) /* a file grew since it was counted */
                rc->bytes_total = rc->bytes_done;
            pm_progress pr = {.stage = PM_STAGE_READ,
                              .files_done = p->done,
                              .files_total = p->n,
                              .bytes_done = rc->bytes_done,
                              .bytes_total = rc->bytes_total};
            rc->opts->progress(&pr, rc->opts->progress_user);
        }
        pthread_mutex_unlock(&p->lock);
    }
    pm_read_buf_free(&rb);
    return NULL;
}

void pm_input_read_slots(slot *slots, size_t n, const pm_analyze_opts *opts,
                         const pm_read_hint *hint)
{
    read_ctx ctx = {slots, opts, hint, 0, 0};
    for (size_t i = 0; i < n && opts->progress; i++) {
        struct stat fst; /* the bytes to read, for the progress line */
        if (stat(slots[i].path, &fst) == 0 && fst.st_size > 0)
            ctx.bytes_total += (uint64_t)fst.st_size;
    }
    pm_pool rp = {.n = n, .ctx = &ctx};
    pthread_mutex_init(&rp.lock, NULL);
    pm_pool_run(&rp, read_worker, n);
    pthread_mutex_destroy(&rp.lock);
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
    int rc = !m || pm_profile_set_columns(m, cols, ncols);
    /* A column the reader did not decode (pm_read_hint.want) in any part
     * is not decoded in the whole either. */
    if (!rc && !(m->unread = calloc(ncols ? ncols : 1, 1)))
        rc = 1;
    for (size_t k = 0; k < np && !rc; k++)
        for (size_t c = 0; c < ps[k]->ncols; c++)
            if (ps[k]->unread && ps[k]->unread[c])
                m->unread[pm_profile_column(m, ps[k]->cols[c].name)] = 1;
    if (rc || pm_profile_reserve(m, total ? total : 1)) {
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
            if (!m->values[j])
                continue;
            int c = pm_profile_column(p, cols[j].name);
            const double *src = c >= 0 ? p->values[c] : NULL;
            for (size_t i = 0; i < p->n; i++)
                m->values[j][at + i] = src ? src[i] : NAN;
        }
        at += p->n;
        if (p->has_end) {
            m->has_end = 1;
            m->end = p->end;
        }
        if (!m->meta_json && p->meta_json)
            m->meta_json = pm_strdup(p->meta_json);
        /* the notes of every part, in order: the event notes of each */
        for (size_t i = 0; i < p->nnotes; i++)
            if (pm_profile_add_note(m, p->notes[i], strlen(p->notes[i]))) {
                free(cols);
                pm_profile_free(m);
                return PM_ENOMEM;
            }
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
    int gpu;                /* split off a node's profile by pm_gpu_split */
    const char *incomplete; /* why it may be unfinished, or NULL */
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
    case PM_FMT_BIN: return "binary";
    case PM_FMT_JSONL: return "jsonl";
    case PM_FMT_SKA: return "ska";
    default: return "unknown";
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
            (*prs)[(*np)++] = (pref){g[k], (*prs)[i].clock, 1, (*prs)[i].incomplete};
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
            /* "still running" says more than "no end record". */
            if (prs[k].incomplete && (!h->incomplete[0] || prs[k].incomplete[0] == 't'))
                snprintf(h->incomplete, sizeof h->incomplete, "%s", prs[k].incomplete);
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

/* --- jobs and runs (docs/analysis.md, "Jobs and runs") ------------------- */

/* One profile on its way to a host. */
typedef struct ent {
    pm_profile *p;
    pm_clock clock;
    off_t size;    /* the file's size when read, -1 unknown */
    size_t nfull;  /* its samples (the survey keeps few of them) */
    double t0, t1; /* first and last sample (s); the start time if none */
    size_t run;    /* its run (index into the runs) */
    int drop;      /* a copy of another file's run, or not selected */
} ent;

typedef struct run_grp {
    const char *job; /* borrowed from a profile */
    double t0, t1;
    size_t num; /* 1-based, in order of start time */
    int sel;
} run_grp;

static void span_of(const pm_profile *p, double *t0, double *t1)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < p->n; i++) {
        int64_t t = p->t_wall_ns[i];
        if (t == INT64_MIN)
            continue;
        if (t < lo)
            lo = t;
        if (t > hi)
            hi = t;
    }
    if (lo > hi)
        lo = hi = p->info.start_wall_ns;
    *t0 = (double)lo * 1e-9;
    *t1 = (double)hi * 1e-9;
}

/* Two files of one sampler run (-f both, or a copy): the run id, or for
 * files written before it, the sampler's pid and start time. */
static int same_run(const pm_profile *x, const pm_profile *y)
{
    if (x->format == PM_FMT_SKA || y->format == PM_FMT_SKA ||
        strcmp(pm_profile_host(x), pm_profile_host(y)) != 0 ||
        strcmp(x->info.job_id, y->info.job_id) != 0)
        return 0;
    if (x->info.run_id[0] || y->info.run_id[0])
        return strcmp(x->info.run_id, y->info.run_id) == 0;
    /* The JSON form keeps microseconds, read back through a double. */
    int64_t d = x->info.start_wall_ns - y->info.start_wall_ns;
    return x->info.sampler_pid > 0 && x->info.sampler_pid == y->info.sampler_pid && d > -2000 &&
           d < 2000;
}

/* Is x the copy to read rather than y?  The binary form (exact times and
 * values), then the one with more samples, then the first. */
static int better_copy(const ent *x, const ent *y)
{
    int bx = x->p->format == PM_FMT_BIN, by = y->p->format == PM_FMT_BIN;
    if (bx != by)
        return bx;
    return x->nfull > y->nfull;
}

static int cmp_ent_host(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    int c = strcmp(pm_profile_host(x->p), pm_profile_host(y->p));
    if (c)
        return c;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static int cmp_ent_job(const void *a, const void *b)
{
    const ent *x = *(const ent *const *)a, *y = *(const ent *const *)b;
    int c = strcmp(x->p->info.job_id, y->p->info.job_id);
    if (c)
        return c;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static void fmt_utc(char *out, size_t cap, double t)
{
    if (pm_utc_iso(t, out, cap) < 0)
        snprintf(out, cap, "%.0f", t);
}

static const char *job_name(const char *job)
{
    return *job ? job : "(none)";
}

/* Short host names compare equal ("n01" and "n01.cluster"). */
static int same_host_name(const char *a, const char *b)
{
    size_t la = strcspn(a, "."), lb = strcspn(b, ".");
    return la == lb && strncmp(a, b, la) == 0;
}

/* Is the sampler that wrote this profile still running here?  Its host is
 * this one and a process with its pid started when it did: proc(5)
 * /proc/<pid>/stat field 22, starttime in clock ticks after boot, against
 * the profile's start on CLOCK_MONOTONIC (a reused pid started later). */
static int sampler_alive(const pm_profile_info *in)
{
    if (in->sampler_pid <= 1 || in->sampler_pid > INT32_MAX || in->start_mono_ns <= 0)
        return 0;
    char me[256] = "";
    const char *slurm = getenv("SLURMD_NODENAME");
    if (gethostname(me, sizeof me - 1) != 0)
        me[0] = 0;
    if (!(me[0] && same_host_name(me, in->host)) && !(slurm && same_host_name(slurm, in->host)))
        return 0;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)in->sampler_pid);
    if (pm_read_small(AT_FDCWD, path, buf, sizeof buf, NULL) <= 0)
        return 0;
    const char *q = strrchr(buf, ')');
    if (!q)
        return 0;
    q++;
    for (int field = 3; field < 22; field++) { /* skip fields 3..21 */
        while (*q == ' ')
            q++;
        while (*q && *q != ' ')
            q++;
    }
    while (*q == ' ')
        q++;
    char *end;
    errno = 0;
    unsigned long long ticks = strtoull(q, &end, 10);
    long hz = sysconf(_SC_CLK_TCK);
    if (end == q || errno || hz <= 0)
        return 0;
    double d = (double)in->start_mono_ns * 1e-9 - (double)ticks / (double)hz;
    return d > -2 && d < 600;
}

static const char *incomplete_reason(const ent *e)
{
    const pm_profile *p = e->p;
    if ((p->format != PM_FMT_BIN && p->format != PM_FMT_JSONL) || p->has_end)
        return NULL;
    struct stat st;
    if (sampler_alive(&p->info) ||
        (e->size >= 0 && stat(p->path, &st) == 0 && st.st_size != e->size))
        return "the sampler was still running";
    return "no end record";
}

/* A run's line in the listing: number, job, start, span, hosts, run ids,
 * files (each list shortened after a few). */
static char *run_line(const run_grp *r, size_t ri, const ent *es, size_t ne)
{
    char t0[40];
    fmt_utc(t0, sizeof t0, r->t0);
    pm_buf b;
    pm_buf_init(&b);
    pm_buf_printf(&b, "run %zu: job %s, from %s for %.0f s", r->num, job_name(r->job), t0,
                  r->t1 - r->t0);
    const char *what[3] = {"host", "run id", "file"};
    for (int k = 0; k < 3; k++) {
        size_t n = 0;
        pm_buf items;
        pm_buf_init(&items);
        for (size_t i = 0; i < ne; i++) {
            if (es[i].drop || es[i].run != ri)
                continue;
            const char *s = k == 0   ? pm_profile_host(es[i].p)
                            : k == 1 ? es[i].p->info.run_id
                                     : es[i].p->path;
            if (!*s)
                continue;
            int seen = 0; /* each once (an SKA file holds several hosts) */
            for (size_t j = 0; j < i && !seen; j++)
                seen = !es[j].drop && es[j].run == ri &&
                       strcmp(k == 0   ? pm_profile_host(es[j].p)
                              : k == 1 ? es[j].p->info.run_id
                                       : es[j].p->path,
                              s) == 0;
            if (seen)
                continue;
            if (n < 4)
                pm_buf_printf(&items, "%s%s", n ? ", " : "", s);
            n++;
        }
        if (n > 4)
            pm_buf_printf(&items, ", and %zu more", n - 4);
        if (n)
            pm_buf_printf(&b, "; %zu %s%s: %s", n, what[k], n == 1 ? "" : "s",
                          items.len ? items.data : "");
        pm_buf_free(&items);
    }
    if (b.oom) {
        pm_buf_free(&b);
        return NULL;
    }
    return b.data;
}

/* One events file serves every run that wrote marks into a directory (a
 * requeued job's, a second run's): a phase mark belongs to the run whose
 * span is nearest to its start (0 inside it), and the marks of runs not
 * chosen are dropped, so --run picks the phases with the samples.  Scanner
 * intervals (their own track) are left alone. */
static void keep_run_phases(pm_analysis *a, const run_grp *runs, size_t nr)
{
    pm_phase_set *ps = &a->phases;
    size_t kept = 0, dropped = 0;
    for (size_t i = 0; i < ps->n; i++) {
        pm_phase *ph = &ps->v[i];
        size_t best = 0;
        double bd = INFINITY;
        for (size_t r = 0; r < nr; r++) {
            double d = ph->t0 < runs[r].t0   ? runs[r].t0 - ph->t0
                       : ph->t0 > runs[r].t1 ? ph->t0 - runs[r].t1
                                             : 0;
            if (d <= bd) {
                bd = d;
                best = r;
            }
        }
        if (ph->track[0] || runs[best].sel) {
            ps->v[kept++] = *ph;
            continue;
        }
        free(ph->host);
        free(ph->name);
        free(ph->key);
        free(ph->track);
        free(ph->attrs);
        dropped++;
    }
    ps->n = kept;
    if (dropped)
        (void)pm_strs_add(&a->ignored, &a->nignored,
                          "%zu phase%s marked during runs not selected: not used", dropped,
                          dropped == 1 ? "" : "s");
}
/* Decide which profiles are analysed: drop a second copy of one sampler
 * run (the JSON Lines file of -f both), group the rest by job id and by
 * run (profiles that overlap or follow within tol in time), keep the run
 * opts->job/opts->run select, and refuse several runs, or one host sampled
 * twice at once.  Lines explaining a refusal go to *details. */
static int select_run(pm_analysis *a, ent *es, size_t ne, char ***details, size_t *ndetails,
                      pm_error *err)
{
    const pm_analyze_opts *o = &a->opts;
    int rc = 0;
    if (ne) /* Scanner profiles alone: none */
        qsort(es, ne, sizeof *es, cmp_ent_host);
    /* Copies, and two samplers of one host at once. */
    char **clash = NULL;
    size_t nclash = 0;
    size_t *clash_ent = NULL; /* [2 nclash] the two entries of each clash */
    for (size_t i = 0; i < ne; i++) {
        for (size_t j = i + 1;
             j < ne && strcmp(pm_profile_host(es[j].p), pm_profile_host(es[i].p)) == 0; j++) {
            ent *x = &es[i], *y = &es[j];
            if (x->drop || y->drop)
                continue;
            if (same_run(x->p, y->p)) {
                ent *keep = better_copy(y, x) ? y : x, *copy = keep == x ? y : x;
                copy->drop = 1;
                (void)pm_strs_add(&a->ignored, &a->nignored,
                                  "%s: the same sampler run as %s (run id %s); only that one is "
                                  "read",
                                  copy->p->path, keep->p->path,
                                  keep->p->info.run_id[0] ? keep->p->info.run_id : "not recorded");
                if (x->drop)
                    break;
                continue;
            }
            double ov = fmin(x->t1, y->t1) - fmax(x->t0, y->t0);
            if (ov <= 0 || (x->p->format == PM_FMT_SKA && y->p->format == PM_FMT_SKA))
                continue;
            size_t *nc = pm_realloc_array(clash_ent, 2 * (nclash + 1), sizeof *nc);
            if (!nc ||
                pm_strs_add(&clash, &nclash,
                            "host %s was sampled twice at once: %s (pid %lld, run id %s) and "
                            "%s (pid %lld, run id %s) overlap for %.0f s",
                            pm_profile_host(x->p), x->p->path, (long long)x->p->info.sampler_pid,
                            x->p->info.run_id[0] ? x->p->info.run_id : "-", y->p->path,
                            (long long)y->p->info.sampler_pid,
                            y->p->info.run_id[0] ? y->p->info.run_id : "-", ov)) {
                free(nc ? nc : clash_ent);
                pm_strs_free(clash, nclash);
                return pm_error_set(err, PM_ENOMEM, "out of memory");
            }
            clash_ent = nc;
            clash_ent[2 * nclash - 2] = i;
            clash_ent[2 * nclash - 1] = j;
        }
    }
    /* Runs: by job id, then profiles that overlap in time or follow within
     * tol (a restarted sampler). */
    ent **ord = pm_alloc_array(ne ? ne : 1, sizeof *ord);
    run_grp *runs = pm_alloc_array(ne ? ne : 1, sizeof *runs);
    if (!ord || !runs) {
        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        goto out;
    }
    size_t no = 0, nr = 0;
    for (size_t i = 0; i < ne; i++) {
        es[i].run = SIZE_MAX;
        if (!es[i].drop)
            ord[no++] = &es[i];
    }
    qsort(ord, no, sizeof *ord, cmp_ent_job);
    /* A host seen again in the current run starts a new run unless another
     * host was still sampling then (a sampler restarted in a running job);
     * top[0], top[1]: the latest end over the run and over the hosts other
     * than top[0]'s. */
    double tol = 0;
    struct {
        const char *host;
        double t1;
    } top[2] = {{NULL, -INFINITY}, {NULL, -INFINITY}};
    for (size_t i = 0; i < no; i++) {
        ent *e = ord[i];
        const char *host = pm_profile_host(e->p);
        double iv = (double)e->p->info.interval_ns * 1e-9;
        double t = fmax(10.0, 3 * (isfinite(iv) ? iv : 0));
        int fresh = nr == 0 || strcmp(runs[nr - 1].job, e->p->info.job_id) != 0 ||
                    e->t0 > runs[nr - 1].t1 + fmax(tol, t);
        if (!fresh) {
            int again = 0;
            size_t me = (size_t)(e - es);
            for (size_t j = me; j-- > 0 && strcmp(pm_profile_host(es[j].p), host) == 0 && !again;)
                again = es[j].run == nr - 1;
            for (size_t j = me + 1; j < ne && strcmp(pm_profile_host(es[j].p), host) == 0 && !again;
                 j++)
                again = es[j].run == nr - 1;
            double others = top[0].host && strcmp(top[0].host, host) != 0 ? top[0].t1 : top[1].t1;
            fresh = again && !(others >= e->t0);
        }
        if (fresh) {
            runs[nr++] = (run_grp){e->p->info.job_id, e->t0, e->t1, 0, 1};
            tol = t;
            top[0].host = host;
            top[0].t1 = e->t1;
            top[1].host = NULL;
            top[1].t1 = -INFINITY;
        } else {
            run_grp *r = &runs[nr - 1];
            if (e->t1 > r->t1)
                r->t1 = e->t1;
            if (t > tol)
                tol = t;
            if (strcmp(top[0].host, host) == 0) {
                top[0].t1 = fmax(top[0].t1, e->t1);
            } else if (e->t1 > top[0].t1) {
                top[1] = top[0];
                top[0].host = host;
                top[0].t1 = e->t1;
            } else if (e->t1 > top[1].t1) {
                top[1].host = host;
                top[1].t1 = e->t1;
            }
        }
        e->run = nr - 1;
    }
    /* Numbered by start time. */
    for (size_t r = 0; r < nr; r++) {
        runs[r].num = 1;
        for (size_t q = 0; q < nr; q++)
            runs[r].num += runs[q].t0 < runs[r].t0 || (runs[q].t0 == runs[r].t0 && q < r);
    }
    size_t nsel = nr;
    if (o->job) {
        nsel = 0;
        for (size_t r = 0; r < nr; r++)
            nsel += runs[r].sel = strcmp(runs[r].job, o->job) == 0;
        if (nsel == 0) {
            rc = pm_error_set(err, PM_EUSAGE, "--job %s: no profile of that job among the inputs",
                              o->job);
            goto listing;
        }
    }
    if (o->run) {
        char *end;
        errno = 0;
        unsigned long long k = strtoull(o->run, &end, 10);
        size_t len = strlen(o->run), found = 0, which = 0;
        int by_num = *o->run && !*end && errno == 0 && k >= 1 && k <= nr;
        /* "last": the latest run (of --job, when given), what a job script
         * that reuses its directory across requeues wants. */
        if (strcmp(o->run, "last") == 0) {
            by_num = 1;
            k = 0;
            for (size_t r = 0; r < nr; r++)
                if (runs[r].sel && runs[r].num > k)
                    k = runs[r].num;
        }
        for (size_t r = 0; r < nr; r++) {
            int hit = 0;
            if (by_num)
                hit = runs[r].num == k;
            else
                for (size_t i = 0; i < ne && !hit && len >= 4; i++)
                    hit = !es[i].drop && es[i].run == r &&
                          strncmp(es[i].p->info.run_id, o->run, len) == 0;
            if (hit && runs[r].sel) {
                found++;
                which = r;
            }
        }
        if (found > 1) {
            rc = pm_error_set(err, PM_EUSAGE,
                              "--run %s: several runs match; give more of the "
                              "run id",
                              o->run);
            goto listing;
        }
        if (!found) {
            rc = pm_error_set(err, PM_EUSAGE, "--run %s: no such run among the inputs%s", o->run,
                              o->job ? " of that --job" : "");
            goto listing;
        }
        for (size_t r = 0; r < nr; r++)
            runs[r].sel = r == which;
        nsel = 1;
    }
    if (nsel > 1) {
        size_t njobs = 0;
        for (size_t r = 0; r < nr; r++) {
            int first = runs[r].sel;
            for (size_t q = 0; q < r && first; q++)
                first = !(runs[q].sel && strcmp(runs[q].job, runs[r].job) == 0);
            njobs += first;
        }
        rc = pm_error_set(err, PM_EUSAGE,
                          "the inputs hold %zu runs of %zu job%s, which are not analysed as one; "
                          "pick one with --run N (or its run id)%s, or name its files",
                          nsel, njobs, njobs == 1 ? "" : "s", njobs > 1 ? ", --job ID" : "");
        goto listing;
    }
    /* The chosen run: a host sampled twice at once cannot be read as one. */
    for (size_t c = 0; c < nclash; c++)
        if (es[clash_ent[2 * c]].run == es[clash_ent[2 * c + 1]].run &&
            runs[es[clash_ent[2 * c]].run].sel) {
            rc = pm_error_set(err, PM_EUSAGE, "%s; name the files of one sampler", clash[c]);
            goto listing;
        }
    for (size_t i = 0; i < ne; i++)
        if (!es[i].drop && !runs[es[i].run].sel) {
            es[i].drop = 2;
            (void)pm_strs_add(&a->ignored, &a->nignored, "%s: job %s, run %zu: not selected",
                              es[i].p->path, job_name(es[i].p->info.job_id), runs[es[i].run].num);
        }
    if (nsel < nr)
        keep_run_phases(a, runs, nr);
    goto out;
listing:
    /* Each run (those selected first, else all), then each clash. */
    for (size_t k = 1; k <= nr; k++)
        for (size_t r = 0; r < nr; r++) {
            if (runs[r].num != k || (nsel && !runs[r].sel))
                continue;
            char *line = run_line(&runs[r], r, es, ne);
            if (line) {
                (void)pm_strs_add(details, ndetails, "%s", line);
                /* Without a caller to show the lines, the message holds
                 * the start of each. */
                size_t ml = strlen(err->msg);
                if (!o->input_msg && ml + 4 < sizeof err->msg)
                    snprintf(err->msg + ml, sizeof err->msg - ml, "%s%.*s", k == 1 ? ": " : " | ",
                             (int)strcspn(line, ";"), line);
            }
            free(line);
        }
    for (size_t c = 0; c < nclash; c++)
        (void)pm_strs_add(details, ndetails, "%s", clash[c]);
out:
    free(ord);
    free(runs);
    free(clash_ent);
    pm_strs_free(clash, nclash);
    return rc;
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

/* The end of the inputs' exchange under a split: with --stream, the
 * hosts' exchange follows (split_stream.c), and the status waits for it. */
static int split_end(const pm_analyze_opts *opts, int rc, pm_error *err)
{
    if (opts->stream)
        return pm_split_survey_end(opts->split, rc, err);
    return pm_split_finish(opts->split, rc, err);
}

int pm_input_load(pm_analysis *a, const char *const *paths, size_t npaths, pm_error *err)
{
    const pm_analyze_opts *opts = &a->opts;
    char **files = NULL, **details = NULL;
    size_t nfiles = 0, ndetails = 0, nevfiles = 0;
    ent *es = NULL;
    size_t ne = 0;
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
        pm_read_hint hint = {
            .late = released_alone, .want = opts->stream ? wanted_none : wanted, .ctx = a->catalog};
        for (size_t i = 0; i < nfiles; i++)
            slots[i].path = files[i];
        /* Under mpirun each rank reads a share (split.c); a rank > 0 has
         * sent it to rank 0 and is done. */
        if (opts->split && opts->split->size > 1) {
            rc = pm_split_read(opts->split, slots, nfiles, opts, a->catalog ? &hint : NULL, err);
            if (opts->split->rank) {
                free(slots);
                goto fail;
            }
        } else {
            pm_input_read_slots(slots, nfiles, opts, a->catalog ? &hint : NULL);
        }
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
            nevfiles += sl->events.n > 0;
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
                ent *grown = rc ? NULL : pm_realloc_array(es, ne + 1, sizeof *grown);
                if (!grown) {
                    pm_profile_free(p);
                    if (!rc)
                        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
                    continue;
                }
                es = grown;
                es[ne++] = (ent){.p = p,
                                 .clock = sl->clocks[k],
                                 .size = sl->size,
                                 .nfull = sl->nfull ? sl->nfull[k] : p->n};
            }
            free(sl->got);
            free(sl->clocks);
            free(sl->nfull);
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
    if (ne == 0 && a->phases.n == 0 && !a->phases.scanner_files) {
        /* Say why, for the first file at least (-v and the warnings list
         * every one). */
        const char *why = a->nwarnings ? a->warnings[0] : a->nignored ? a->ignored[0] : "";
        rc = pm_error_set(err, PM_ENOENT, "no readable profile among %zu file%s%s%s", nfiles,
                          nfiles == 1 ? "" : "s", *why ? ": " : "", why);
        goto fail;
    }
    /* Scanner profiles alone are an analysis (of phases); marks alone are
     * not: they say when, not what was used. */
    if (ne == 0 && !a->phases.scanner_files) {
        rc = pm_error_set(err, PM_EEMPTY,
                          "no resource profile among %zu file%s: found only %zu phase%s marked in "
                          "%zu events file%s",
                          nfiles, nfiles == 1 ? "" : "s", a->phases.n, a->phases.n == 1 ? "" : "s",
                          nevfiles, nevfiles == 1 ? "" : "s");
        goto fail;
    }
    for (size_t i = 0; i < ne; i++) {
        pm_profile *p = es[i].p;
        if (!p->info.host[0]) {
            /* No host recorded: the file name stands in. */
            const char *b = strrchr(p->path, '/');
            snprintf(p->info.host, sizeof p->info.host, "%s", b ? b + 1 : p->path);
        }
        span_of(p, &es[i].t0, &es[i].t1);
    }
    if ((rc = select_run(a, es, ne, &details, &ndetails, err)))
        goto fail;
    prs = calloc(ne ? ne : 1, sizeof *prs);
    if (!prs) {
        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        goto fail;
    }
    size_t np = 0;
    for (size_t i = 0; i < ne; i++) {
        if (es[i].drop) {
            pm_profile_free(es[i].p);
            continue;
        }
        prs[np++] = (pref){es[i].p, es[i].clock, 0, incomplete_reason(&es[i])};
    }
    free(es);
    es = NULL;
    ne = 0;
    rc = split_gpus(&prs, &np, err);
    if (rc == 0)
        rc = group_hosts(a, prs, np, err);
    for (size_t i = 0; i < np; i++)
        pm_profile_free(prs[i].p);
    free(prs);
    prs = NULL;
    if (rc)
        goto fail;
    for (size_t h = 0; h < a->nhosts; h++)
        if (a->hosts[h].incomplete[0] && !a->hosts[h].gpu)
            (void)pm_strs_add(&a->warnings, &a->nwarnings, "%s: incomplete: %s (%s)",
                              a->hosts[h].name, a->hosts[h].incomplete, a->hosts[h].files[0]);
    if ((rc = map_scanner_nodes(a, err)))
        goto fail;
    if (opts->split && opts->split->size > 1 && (rc = split_end(opts, 0, err)))
        goto fail;
    pm_strs_free(files, nfiles);
    return 0;
fail:
    /* Every rank ends its part of the exchange, also on failure. */
    if (opts->split && opts->split->size > 1)
        rc = split_end(opts, rc, err);
    if (opts->input_msg) {
        for (size_t i = 0; i < ndetails; i++)
            opts->input_msg(PM_MSG_DETAIL, details[i], opts->input_msg_user);
        for (size_t i = 0; i < a->nwarnings; i++)
            opts->input_msg(PM_MSG_WARNING, a->warnings[i], opts->input_msg_user);
        for (size_t i = 0; i < a->nignored; i++)
            opts->input_msg(PM_MSG_IGNORED, a->ignored[i], opts->input_msg_user);
    }
    for (size_t i = 0; i < ne; i++)
        pm_profile_free(es[i].p);
    free(es);
    pm_strs_free(details, ndetails);
    pm_strs_free(files, nfiles);
    if (opts->split && opts->split->size > 1 && opts->split->rank)
        return rc; /* a rank > 0 ends here, also when all went well */
    return rc ? rc : PM_EFORMAT;
}

/* The profiles of host ho among what one file gave (sl): those of its
 * name, with their GPUs split off (a node) or the one GPU it is. */
static int host_parts(const pm_host *ho, slot *sl, pm_profile ***parts, size_t *np)
{
    for (size_t k = 0; k < sl->ngot; k++) {
        pm_profile *p = sl->got[k];
        if (!p->info.host[0]) {
            const char *b = strrchr(p->path, '/');
            snprintf(p->info.host, sizeof p->info.host, "%s", b ? b + 1 : p->path);
        }
        pm_profile **g = NULL;
        size_t ng = 0;
        if (pm_gpu_split(p, &g, &ng) != 0)
            return PM_ENOMEM;
        pm_profile *keep = NULL;
        if (!ho->gpu && strcmp(pm_profile_host(p), ho->name) == 0) {
            keep = p;
            sl->got[k] = NULL;
        }
        for (size_t i = 0; i < ng; i++) {
            if (ho->gpu && !keep && strcmp(pm_profile_host(g[i]), ho->name) == 0)
                keep = g[i];
            else
                pm_profile_free(g[i]);
        }
        free(g);
        if (!keep)
            continue;
        pm_profile **grown = pm_realloc_array(*parts, *np + 1, sizeof *grown);
        if (!grown) {
            pm_profile_free(keep);
            return PM_ENOMEM;
        }
        *parts = grown;
        (*parts)[(*np)++] = keep;
    }
    return 0;
}

void pm_input_host_hint(const pm_analysis *a, int values, pm_read_hint *hint)
{
    /* the times alone: not wanted_none, whose read shrinks the profile */
    *hint = (pm_read_hint){
        .late = released_alone, .want = values ? wanted : times_only, .ctx = a->catalog};
}

int pm_input_host_load(const pm_analysis *a, size_t h, int values, pm_profile **out, pm_error *err)
{
    if (a->remote)
        return pm_remote_fetch(a, h, values, out, err);
    return pm_input_host_read(a, h, values, out, err);
}

void pm_input_host_drop(const pm_analysis *a, size_t h)
{
    if (a->remote)
        pm_remote_drop(a, h);
}

int pm_input_host_read(const pm_analysis *a, size_t h, int values, pm_profile **out, pm_error *err)
{
    const pm_host *ho = &a->hosts[h];
    pm_read_hint hint;
    pm_input_host_hint(a, values, &hint);
    pm_read_buf rb = {0};
    pm_profile **parts = NULL;
    size_t np = 0;
    int rc = 0;
    *out = NULL;
    for (size_t f = 0; f < ho->nfiles && !rc; f++) {
        slot sl = {.path = ho->files[f]};
        pm_input_read_slot(&sl, &hint, &rb);
        if (sl.rc)
            rc = pm_error_set(err, sl.rc, "%s", sl.err.msg);
        else if (host_parts(ho, &sl, &parts, &np))
            rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        for (size_t k = 0; k < sl.ngot; k++)
            pm_profile_free(sl.got[k]);
        free(sl.got);
        free(sl.clocks);
        free(sl.nfull);
        free(sl.ignored);
        pm_event_list_free(&sl.events);
        pm_phase_set_free(&sl.phases);
    }
    pm_read_buf_free(&rb);
    if (!rc && np == 0)
        rc = pm_error_set(err, PM_EFORMAT, "%s: read again, it holds no profile of host %s",
                          ho->nfiles ? ho->files[0] : "?", ho->name);
    if (!rc && np == 1) {
        *out = parts[0];
        np = 0;
    } else if (!rc) {
        /* in the survey's order: by first time (cmp_pref) */
        for (size_t i = 1; i < np; i++)
            for (size_t j = i; j > 0 && first_time(parts[j]) < first_time(parts[j - 1]); j--) {
                pm_profile *t = parts[j];
                parts[j] = parts[j - 1];
                parts[j - 1] = t;
            }
        int mrc = merge_profiles(parts, np, out);
        if (mrc)
            rc = pm_error_set(err, mrc, "%s: cannot merge %zu profiles", ho->name, np);
    }
    for (size_t i = 0; i < np; i++)
        pm_profile_free(parts[i]);
    free(parts);
    return rc;
}

size_t pm_analysis_incomplete(const pm_analysis *a, char *buf, size_t cap)
{
    size_t n = 0, shown = 0, len = 0;
    const char *why = NULL;
    char hosts[160] = "";
    if (cap)
        buf[0] = 0;
    for (size_t h = 0; h < a->nhosts; h++) {
        const pm_host *ho = &a->hosts[h];
        if (!ho->incomplete[0] || ho->gpu)
            continue;
        n++;
        if (!why || ho->incomplete[0] == 't') /* "the sampler was still running" */
            why = ho->incomplete;
        if (shown < 3 && len + 2 < sizeof hosts) {
            int w = snprintf(hosts + len, sizeof hosts - len, "%s%s", shown ? ", " : "", ho->name);
            len = w > 0 && (size_t)w < sizeof hosts - len ? len + (size_t)w : sizeof hosts - 1;
            shown++;
        }
    }
    if (n && cap) {
        if (n > shown)
            snprintf(buf, cap, "incomplete: %s (%s and %zu more)", why, hosts, n - shown);
        else
            snprintf(buf, cap, "incomplete: %s (%s)", why, hosts);
    }
    return n;
}
