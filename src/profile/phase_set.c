/* The phase set: intervals, counters and problems (see phase.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/mem.h"
#include "perfmon/phase.h"

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
    for (size_t i = 0; i < s->nproblems; i++)
        free(s->problems[i]);
    free(s->problems);
    memset(s, 0, sizeof *s);
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 16;
    void *np = pm_realloc_array(*p, nc, size);
    if (!np)
        return PM_ENOMEM;
    *p = np;
    *cap = nc;
    return 0;
}

int pm_phase_add(pm_phase_set *s, const char *host, const char *name, const char *key,
                 const char *track, double t0, double t1, const char *attrs)
{
    if (grow((void **)&s->v, &s->cap, s->n, sizeof *s->v))
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

int pm_phase_counter_add(pm_phase_set *s, const char *kind, const char *name, int64_t value)
{
    for (size_t i = 0; i < s->ncounters; i++)
        if (strcmp(s->counters[i].kind, kind) == 0 && strcmp(s->counters[i].name, name) == 0) {
            /* Saturate rather than overflow on hostile totals. */
            int64_t *v = &s->counters[i].value;
            if (value > 0 && *v > INT64_MAX - value)
                *v = INT64_MAX;
            else if (value < 0 && *v < INT64_MIN - value)
                *v = INT64_MIN;
            else
                *v += value;
            return 0;
        }
    if (grow((void **)&s->counters, &s->ccap, s->ncounters, sizeof *s->counters))
        return PM_ENOMEM;
    pm_phase_counter *c = &s->counters[s->ncounters];
    c->kind = pm_strdup(kind);
    c->name = pm_strdup(name);
    c->value = value;
    if (!c->kind || !c->name) {
        free(c->kind);
        free(c->name);
        return PM_ENOMEM;
    }
    s->ncounters++;
    return 0;
}

int pm_phase_problem(pm_phase_set *s, const char *fmt, ...)
{
    if (grow((void **)&s->problems, &s->pcap, s->nproblems, sizeof *s->problems))
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
