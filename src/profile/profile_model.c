/* The in-memory profile (profile.h): its columns, the column projection
 * of a read (pm_read_hint: columns not wanted stay undecoded, columns
 * released alone are placed together so whole pages can be given back),
 * growing the sample arrays, and the notes and warnings a reader adds. */
#include "perfmon/profile.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/mem.h"

pm_profile *pm_profile_new(const char *path, int format)
{
    pm_profile *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->path = pm_strdup(path ? path : "");
    if (!p->path) {
        free(p);
        return NULL;
    }
    p->format = format;
    p->end.exit_status = -1;
    return p;
}

int pm_profile_set_columns(pm_profile *p, const pm_column *cols, size_t ncols)
{
    if (ncols > PM_MAX_COLUMNS)
        return PM_ELIMIT;
    p->cols = pm_alloc_array(ncols, sizeof *cols);
    p->values = calloc(ncols ? ncols : 1, sizeof *p->values);
    if (!p->cols || !p->values)
        return PM_ENOMEM;
    if (ncols)
        memcpy(p->cols, cols, ncols * sizeof *cols);
    p->ncols = ncols;
    return 0;
}

int pm_profile_project(pm_profile *p, const pm_read_hint *hint)
{
    if (!hint || !hint->want || p->unread || p->block)
        return 0;
    p->unread = calloc(p->ncols ? p->ncols : 1, 1);
    if (!p->unread)
        return PM_ENOMEM;
    for (size_t c = 0; c < p->ncols; c++)
        p->unread[c] = !hint->want(p->cols[c].name, hint->ctx);
    return 0;
}

static int is_unread(const pm_profile *p, size_t c)
{
    return p->unread && p->unread[c];
}

int pm_profile_reserve(pm_profile *p, size_t n)
{
    /* The capacity is not stored: arrays are always sized by the caller's
     * request, and readers reserve in doubling steps. */
    int64_t *tm = pm_realloc_array(p->t_mono_ns, n, sizeof *tm);
    if (!tm)
        return PM_ENOMEM;
    p->t_mono_ns = tm;
    int64_t *tw = pm_realloc_array(p->t_wall_ns, n, sizeof *tw);
    if (!tw)
        return PM_ENOMEM;
    p->t_wall_ns = tw;
    for (size_t c = 0; c < p->ncols; c++) {
        if (is_unread(p, c))
            continue;
        double *v = pm_realloc_array(p->values[c], n, sizeof *v);
        if (!v)
            return PM_ENOMEM;
        p->values[c] = v;
    }
    return 0;
}

/* The calling thread's spare block (pm_profile_recycle), given back when
 * the thread ends. */
typedef struct spare_block {
    void *p;
    size_t bytes;
} spare_block;

static pthread_key_t spare_key;
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;
static int spare_usable;

static void spare_drop(void *arg)
{
    spare_block *sb = arg;
    pm_block_free(sb->p, sb->bytes);
    free(sb);
}

static void spare_init(void)
{
    spare_usable = pthread_key_create(&spare_key, spare_drop) == 0;
}

static spare_block *spare_get(void)
{
    pthread_once(&spare_once, spare_init);
    return spare_usable ? pthread_getspecific(spare_key) : NULL;
}

/* A block of at least bytes: the thread's spare when it is big enough
 * (its own size in *got), else a fresh one. */
static void *block_take(size_t bytes, size_t *got)
{
    spare_block *sb = spare_get();
    if (sb && sb->p && sb->bytes >= bytes) {
        void *b = sb->p;
        *got = sb->bytes;
        sb->p = NULL;
        sb->bytes = 0;
        return b;
    }
    *got = bytes;
    return pm_block_alloc(bytes);
}

int pm_profile_reserve_block(pm_profile *p, size_t n, const pm_read_hint *hint)
{
    /* The two time arrays, then each column, each on its own page, so
     * that a column can be released alone. */
    size_t per = 0, bytes = 0, nread = 0;
    if (p->block)
        return PM_EUSAGE; /* reserved once */
    for (size_t c = 0; c < p->ncols; c++)
        nread += !is_unread(p, c);
    if (n && nread && !pm_mul_size(n, sizeof(double), &per) && (per = pm_block_round(per)) &&
        !pm_mul_size(per, nread + 2, &bytes))
        p->block = block_take(bytes, &bytes);
    if (!p->block)
        return pm_profile_reserve(p, n);
    free(p->t_mono_ns);
    free(p->t_wall_ns);
    p->t_mono_ns = (int64_t *)p->block;
    p->t_wall_ns = (int64_t *)(void *)((char *)p->block + per);
    /* The columns the hint calls late after the others. */
    size_t slot = 2;
    for (int late = 0; late < 2; late++)
        for (size_t c = 0; c < p->ncols; c++) {
            int is_late = hint && hint->late && hint->late(p->cols[c].name, hint->ctx);
            if (is_late != late || is_unread(p, c))
                continue;
            free(p->values[c]);
            p->values[c] = (double *)(void *)((char *)p->block + slot++ * per);
        }
    p->block_bytes = bytes;
    p->block_slot = per;
    /* (a recycled block may hold more slots than these columns use) */
    p->released = calloc(bytes / per, 1);
    if (!p->released)
        return PM_ENOMEM;
    return 0;
}

/* Is every slot that shares bytes with [w0, w1) a released column?  The
 * time slots (0 and 1) never are. */
static int window_released(const pm_profile *p, size_t w0, size_t w1)
{
    size_t per = p->block_slot;
    size_t nslots = p->block_bytes / per;
    for (size_t k = w0 / per; k * per < w1 && k < nslots; k++)
        if (!p->released[k])
            return 0;
    return 1;
}

/* Give back the pages of block column c that no live slot shares.  A huge
 * page is given back whole, once every column on it is released: giving
 * back part of one splits it into 4 KiB pages, and the columns still on it
 * (series adopted by the analysis) then cost a TLB miss per 4 KiB, which
 * made deriving and interpolating them 2.5x slower. */
static void release_block_column(pm_profile *p, size_t c)
{
    const size_t huge = PM_BLOCK_HUGE;
    char *base = p->block;
    size_t per = p->block_slot, s0 = (size_t)((char *)p->values[c] - base), s1 = s0 + per;
    p->released[s0 / per] = 1;
    for (size_t w0 = s0 / huge * huge; w0 < s1; w0 += huge) {
        size_t w1 = w0 + huge;
        if (w1 <= p->block_bytes) {
            if (window_released(p, w0, w1))
                pm_block_release(base + w0, huge);
        } else {
            /* The block's tail, short of a huge page, has small pages. */
            size_t a = w0 > s0 ? w0 : s0, b = s1 < p->block_bytes ? s1 : p->block_bytes;
            if (a < b)
                pm_block_release(base + a, b - a);
        }
    }
}

void pm_profile_release_column(pm_profile *p, size_t c)
{
    if (c >= p->ncols || !p->values[c])
        return;
    if (p->block && p->released)
        release_block_column(p, c);
    else if (!p->block)
        free(p->values[c]);
    p->values[c] = NULL;
}

double *pm_profile_take_column(pm_profile *p, size_t c, int *in_block)
{
    if (c >= p->ncols)
        return NULL;
    double *v = p->values[c];
    p->values[c] = NULL;
    *in_block = p->block != NULL;
    return v;
}

static int push_string(char ***arr, size_t *n, const char *s, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return PM_ENOMEM;
    memcpy(copy, s, len);
    copy[len] = '\0';
    char **na = pm_realloc_array(*arr, *n + 1, sizeof *na);
    if (!na) {
        free(copy);
        return PM_ENOMEM;
    }
    na[(*n)++] = copy;
    *arr = na;
    return 0;
}

int pm_profile_add_warning(pm_profile *p, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (len < 0)
        return PM_EFORMAT;
    if ((size_t)len >= sizeof msg)
        len = (int)sizeof msg - 1;
    /* Bound the list: a file of garbage must not grow it without limit. */
    if (p->nwarnings >= 1000)
        return 0;
    return push_string(&p->warnings, &p->nwarnings, msg, (size_t)len);
}

int pm_profile_add_note(pm_profile *p, const char *text, size_t len)
{
    if (p->nnotes >= 100000)
        return 0;
    return push_string(&p->notes, &p->nnotes, text, len);
}

int pm_profile_column(const pm_profile *p, const char *name)
{
    for (size_t c = 0; c < p->ncols; c++)
        if (strcmp(p->cols[c].name, name) == 0)
            return (int)c;
    return -1;
}

void pm_profile_recycle(pm_profile *p)
{
    if (!p)
        return;
    if (p->block) {
        spare_block *sb = spare_get();
        if (!sb && spare_usable && (sb = calloc(1, sizeof *sb)) &&
            pthread_setspecific(spare_key, sb) != 0) {
            free(sb);
            sb = NULL;
        }
        if (sb && (!sb->p || sb->bytes < p->block_bytes)) {
            pm_block_free(sb->p, sb->bytes);
            sb->p = p->block;
            sb->bytes = p->block_bytes;
            p->block = NULL;
            p->block_bytes = 0;
            /* (the times and values lived in it) */
            p->t_mono_ns = p->t_wall_ns = NULL;
            for (size_t c = 0; p->values && c < p->ncols; c++)
                p->values[c] = NULL;
        }
    }
    pm_profile_free(p);
}

void pm_profile_free(pm_profile *p)
{
    if (!p)
        return;
    free(p->path);
    free(p->host_long);
    if (p->values && !p->block)
        for (size_t c = 0; c < p->ncols; c++)
            free(p->values[c]);
    if (!p->block) {
        free(p->t_mono_ns);
        free(p->t_wall_ns);
    }
    pm_block_free(p->block, p->block_bytes);
    free(p->released);
    free(p->unread);
    free(p->values);
    free(p->cols);
    free(p->meta_json);
    for (size_t i = 0; i < p->nnotes; i++)
        free(p->notes[i]);
    free(p->notes);
    for (size_t i = 0; i < p->nwarnings; i++)
        free(p->warnings[i]);
    free(p->warnings);
    free(p);
}

const char *pm_profile_host(const pm_profile *p)
{
    return p->host_long ? p->host_long : p->info.host;
}

const char *pm_kind_name(int kind)
{
    return kind == PM_COUNTER ? "counter" : "gauge";
}
const char *pm_vtype_name(int type)
{
    return type == PM_U64 ? "u64" : "f64";
}
