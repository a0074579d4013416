/* Reading: one input file into a slot by its content (perfmon binary,
 * JSON Lines, SKA JSON, events, Scanner), with the clock fix and the
 * column projection of the read hint; the files on worker threads; one
 * host's files again (the stream mode); a host's profiles merged.  The
 * lowest floor of the input stage: it calls neither the ranks' exchange
 * nor the grouping above it.  Semantics: docs/analysis.md, "Inputs". */
#include <pthread.h>
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

#include "gpu.h"
#include "read.h"
#include "perfmon/clock.h"
#include "perfmon/buf.h"
#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/order.h"
#include "perfmon/phase.h"
#include "perfmon/scanner.h"
#include "perfmon/ska.h"
#include "perfmon/threads.h"
#include "perfmon/vec.h"

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
    if (sl->survey) {
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

typedef struct read_ctx {
    slot *slots;
    const pm_input_opts *opts;
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

void pm_input_read_slots(slot *slots, size_t n, const pm_input_opts *opts, const pm_read_hint *hint)
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
int pm_input_events_take(pm_event_list *dst, pm_event_list *src)
{
    if (PM_VEC_APPEND(dst->v, dst->n, dst->cap, src->v, src->n))
        return PM_ENOMEM;
    free(src->v);
    src->v = NULL;
    src->n = src->cap = 0;
    return 0;
}

/* Merge several profiles of one host into one, columns united by name,
 * samples in order of their first time (docs/analysis.md, "Inputs"). */
int pm_input_merge(pm_profile **ps, size_t np, pm_profile **out)
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

int64_t pm_input_first_time(const pm_profile *p)
{
    return p->n ? p->t_wall_ns[0] : INT64_MAX;
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

void pm_input_host_hint(const pm_inputs *in, int values, pm_read_hint *hint)
{
    *hint = values ? in->read_values : in->read_times;
}

int pm_input_host_read(const pm_inputs *in, size_t h, int values, pm_profile **out, pm_error *err)
{
    const pm_host *ho = &in->hosts[h];
    pm_read_hint hint;
    pm_input_host_hint(in, values, &hint);
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
            for (size_t j = i;
                 j > 0 && pm_input_first_time(parts[j]) < pm_input_first_time(parts[j - 1]); j--) {
                pm_profile *t = parts[j];
                parts[j] = parts[j - 1];
                parts[j - 1] = t;
            }
        int mrc = pm_input_merge(parts, np, out);
        if (mrc)
            rc = pm_error_set(err, mrc, "%s: cannot merge %zu profiles", ho->name, np);
    }
    for (size_t i = 0; i < np; i++)
        pm_profile_free(parts[i]);
    free(parts);
    return rc;
}

void pm_input_survey_hint(const pm_inputs *in, pm_read_hint *hint)
{
    *hint = in->read_first;
}
