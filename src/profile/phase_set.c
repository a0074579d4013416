/* The phase set: intervals, counters and problems (see phase.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/mem.h"
#include "perfmon/phase.h"
#include "perfmon/vec.h"

void pm_phase_set_free(pm_phase_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].host);
        free(s->v[i].name);
        free(s->v[i].key);
        free(s->v[i].track);
        free(s->v[i].attrs);
    }
    free(s->v);
    for (size_t i = 0; i < s->ncounters; i++) {
        free(s->counters[i].kind);
        free(s->counters[i].name);
    }
    free(s->counters);
    free(s->chash);
    for (size_t i = 0; i < s->nproblems; i++)
        free(s->problems[i]);
    free(s->problems);
    memset(s, 0, sizeof *s);
}

int pm_phase_add(pm_phase_set *s, const char *host, const char *name, const char *key,
                 const char *track, double t0, double t1, const char *attrs)
{
    if (PM_VEC_RESERVE(s->v, s->cap, s->n + 1, 16))
        return PM_ENOMEM;
    pm_phase *p = &s->v[s->n];
    p->host = pm_strdup(host ? host : "");
    p->name = pm_strdup(name ? name : "");
    p->key = pm_strdup(key ? key : "");
    p->track = pm_strdup(track ? track : "");
    p->attrs = pm_strdup(attrs ? attrs : "{}");
    p->t0 = t0;
    p->t1 = t1;
    if (!p->host || !p->name || !p->key || !p->track || !p->attrs) {
        free(p->host);
        free(p->name);
        free(p->key);
        free(p->track);
        free(p->attrs);
        return PM_ENOMEM;
    }
    s->n++;
    return 0;
}

/* FNV-1a over kind, NUL, name and the time flag. */
static size_t counter_hash(const char *kind, const char *name, int is_time)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = kind; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h = (h ^ 0xffu) * 1099511628211ull;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h = (h ^ (unsigned)(is_time != 0)) * 1099511628211ull;
    return (size_t)(h ^ h >> 32);
}

/* Rebuild the index with room for twice the counters (a power of two; a
 * slot holds index + 1, 0 when empty). */
static int rehash(pm_phase_set *s)
{
    size_t cap = 64;
    while (cap < 2 * (s->ncounters + 1))
        cap *= 2;
    size_t *h = calloc(cap, sizeof *h);
    if (!h)
        return PM_ENOMEM;
    for (size_t i = 0; i < s->ncounters; i++) {
        const pm_phase_counter *c = &s->counters[i];
        size_t k = counter_hash(c->kind, c->name, c->is_time) & (cap - 1);
        while (h[k])
            k = (k + 1) & (cap - 1);
        h[k] = i + 1;
    }
    free(s->chash);
    s->chash = h;
    s->chash_cap = cap;
    return 0;
}

int pm_phase_counter_add(pm_phase_set *s, const char *kind, const char *name, int is_time,
                         int64_t value)
{
    is_time = is_time != 0;
    if (2 * (s->ncounters + 1) > s->chash_cap && rehash(s))
        return PM_ENOMEM;
    size_t k = counter_hash(kind, name, is_time) & (s->chash_cap - 1);
    for (; s->chash[k]; k = (k + 1) & (s->chash_cap - 1)) {
        pm_phase_counter *c = &s->counters[s->chash[k] - 1];
        if (c->is_time != is_time || strcmp(c->kind, kind) != 0 || strcmp(c->name, name) != 0)
            continue;
        /* Saturate rather than overflow on hostile totals. */
        int64_t *v = &c->value;
        if (value > 0 && *v > INT64_MAX - value)
            *v = INT64_MAX;
        else if (value < 0 && *v < INT64_MIN - value)
            *v = INT64_MIN;
        else
            *v += value;
        return 0;
    }
    if (PM_VEC_RESERVE(s->counters, s->ccap, s->ncounters + 1, 16))
        return PM_ENOMEM;
    pm_phase_counter *c = &s->counters[s->ncounters];
    c->kind = pm_strdup(kind);
    c->name = pm_strdup(name);
    c->is_time = is_time;
    c->value = value;
    if (!c->kind || !c->name) {
        free(c->kind);
        free(c->name);
        return PM_ENOMEM;
    }
    s->chash[k] = ++s->ncounters;
    return 0;
}

int pm_phase_set_take(pm_phase_set *dst, pm_phase_set *src)
{
    /* Phases move by pointer: the array grows once, no string is copied. */
    if (src->n) {
        if (PM_VEC_APPEND(dst->v, dst->n, dst->cap, src->v, src->n))
            return PM_ENOMEM;
        src->n = 0;
    }
    for (size_t i = 0; i < src->ncounters; i++) {
        const pm_phase_counter *c = &src->counters[i];
        if (pm_phase_counter_add(dst, c->kind, c->name, c->is_time, c->value))
            return PM_ENOMEM;
    }
    for (size_t i = 0; i < src->nproblems; i++)
        if (pm_phase_problem(dst, "%s", src->problems[i]))
            return PM_ENOMEM;
    if (src->scanner_files) {
        if (!dst->scanner_files || src->scanner_start_ns < dst->scanner_start_ns)
            dst->scanner_start_ns = src->scanner_start_ns;
        if (!dst->scanner_files || src->scanner_end_ns > dst->scanner_end_ns)
            dst->scanner_end_ns = src->scanner_end_ns;
        dst->scanner_files += src->scanner_files;
        dst->scanner_total_s = (double)(dst->scanner_end_ns - dst->scanner_start_ns) / 1e9;
    }
    pm_phase_set_free(src);
    return 0;
}

int pm_phase_problem(pm_phase_set *s, const char *fmt, ...)
{
    if (PM_VEC_RESERVE(s->problems, s->pcap, s->nproblems + 1, 16))
        return PM_ENOMEM;
    va_list ap;
    va_start(ap, fmt);
    char *m = NULL;
    int r = vasprintf(&m, fmt, ap);
    va_end(ap);
    if (r < 0)
        return PM_ENOMEM;
    s->problems[s->nproblems++] = m;
    return 0;
}
