/* Reading events files (phase marks, one JSON object per line; docs/
 * format.md, "Events") and pairing marks into phases.  Reading skips a
 * malformed line and counts it, so one torn line never loses the others. */
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "events_internal.h"
#include "perfmon/clock.h"
#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/parse.h"
#include "perfmon/phase.h"
#include "perfmon/vec.h"

#define EVENTS_FILE_MAX ((size_t)1 << 30)

int pm_events_sniff(const void *head, size_t len)
{
    return len >= sizeof PM_EVENT_MAGIC - 1 &&
           memcmp(head, PM_EVENT_MAGIC, sizeof PM_EVENT_MAGIC - 1) == 0;
}

void pm_event_list_free(pm_event_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].host);
        free(l->v[i].name);
        free(l->v[i].key);
        free(l->v[i].attrs);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* ---- reading ---------------------------------------------------------------- */

static int get_ns(const cJSON *o, const char *k, int64_t *out)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsString(x))
        return -1;
    return pm_parse_i64(x->valuestring, out) == 0 ? 0 : -1;
}

static const char *get_str(const cJSON *o, const char *k, size_t max)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsString(x) || strlen(x->valuestring) >= max)
        return NULL;
    return x->valuestring;
}

/* Parse one line into e; returns NULL or what is wrong. */
static const char *parse_line(const char *line, size_t len, pm_event *e)
{
    cJSON *o = cJSON_ParseWithLength(line, len);
    if (!o)
        return "malformed JSON";
    const char *why = NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "perfmon_event");
    const char *host = get_str(o, "host", 256), *name = get_str(o, "name", PM_EVENT_NAME_MAX);
    const char *edge = get_str(o, "edge", 16);
    const cJSON *pid = cJSON_GetObjectItemCaseSensitive(o, "pid");
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(o, "attrs");
    int ed = -1;
    for (int i = 0; edge && i < 3; i++)
        if (strcmp(edge, PM_EDGE_NAMES[i]) == 0)
            ed = i;
    if (!cJSON_IsNumber(v) || v->valuedouble != 1)
        why = "not a version 1 event";
    else if (!host || !*host)
        why = "no host";
    else if (!name || !*name)
        why = "no name (or longer than 63 bytes)";
    else if (ed < 0)
        why = "edge is not start, end or once";
    else if (get_ns(o, "wall_ns", &e->wall_ns) || get_ns(o, "mono_ns", &e->mono_ns))
        why = "wall_ns and mono_ns must be strings of decimal nanoseconds";
    else if (attrs && !cJSON_IsObject(attrs))
        why = "attrs is not an object";
    if (!why && ed == PM_EDGE_ONESHOT) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "diff_s");
        if (!cJSON_IsNumber(d) || !isfinite(d->valuedouble) || d->valuedouble < 0)
            why = "a once event needs diff_s >= 0";
        else
            e->diff_s = d->valuedouble;
    }
    if (why) {
        cJSON_Delete(o);
        return why;
    }
    e->edge = ed;
    e->pid = cJSON_IsNumber(pid) && pid->valuedouble >= 0 && pid->valuedouble < 1e9
                 ? (int)pid->valuedouble
                 : 0;
    if (ed != PM_EDGE_ONESHOT)
        e->diff_s = NAN;
    /* The pairing key: img (as Batch Shipyard), else key, else id. */
    const char *key = "";
    static const char *const keys[] = {"img", "key", "id"};
    for (size_t i = 0; i < 3 && !*key; i++) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(attrs, keys[i]);
        if (cJSON_IsString(k))
            key = k->valuestring;
    }
    char *at = attrs ? cJSON_PrintUnformatted(attrs) : pm_strdup("{}");
    e->host = pm_strdup(host);
    e->name = pm_strdup(name);
    e->key = pm_strdup(key);
    e->attrs = at;
    cJSON_Delete(o);
    if (!e->host || !e->name || !e->key || !e->attrs) {
        free(e->host);
        free(e->name);
        free(e->key);
        free(e->attrs);
        return "out of memory";
    }
    return NULL;
}

int pm_events_read(const char *path, pm_event_list *out, size_t *bad, pm_error *err)
{
    memset(out, 0, sizeof *out);
    *bad = 0;
    char *text = NULL;
    size_t len = 0;
    int rc = pm_read_whole(path, EVENTS_FILE_MAX, &text, &len, err);
    if (rc)
        return rc;
    rc = pm_events_decode(path, text, len, out, bad, err);
    free(text);
    return rc;
}

int pm_events_decode(const char *path, const char *text, size_t len, pm_event_list *out,
                     size_t *bad, pm_error *err)
{
    memset(out, 0, sizeof *out);
    *bad = 0;
    size_t lineno = 0, first_bad_line = 0;
    const char *first_why = NULL;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        lineno++;
        size_t ll = end - pos;
        if (ll > 0) {
            const char *why = NULL;
            pm_event e;
            memset(&e, 0, sizeof e);
            if (ll > PM_EVENT_LINE_MAX)
                why = "line too long";
            else if (out->n >= PM_EVENTS_MAX)
                why = "too many events";
            else
                why = parse_line(text + pos, ll, &e);
            if (why && strcmp(why, "out of memory") == 0) {
                pm_event_list_free(out);
                return pm_error_set(err, PM_ENOMEM, "out of memory");
            }
            if (why) {
                if (!*bad) {
                    first_why = why;
                    first_bad_line = lineno;
                }
                (*bad)++;
            } else {
                if (PM_VEC_RESERVE(out->v, out->cap, out->n + 1, 64) != 0) {
                    free(e.host);
                    free(e.name);
                    free(e.key);
                    free(e.attrs);
                    pm_event_list_free(out);
                    return pm_error_set(err, PM_ENOMEM, "out of memory");
                }
                e.line = lineno;
                out->v[out->n++] = e;
            }
        }
        pos = nl ? end + 1 : len;
    }
    if (*bad)
        pm_error_set(err, PM_EFORMAT, "%s:%zu: %s", path, first_bad_line, first_why);
    if (out->n == 0) {
        if (!*bad)
            pm_error_set(err, PM_EFORMAT, "%s: no events", path);
        return PM_EFORMAT;
    }
    return 0;
}

/* ---- pairing ---------------------------------------------------------------- */

static int cmp_event(const void *pa, const void *pb)
{
    const pm_event *a = *(const pm_event *const *)pa, *b = *(const pm_event *const *)pb;
    int c = strcmp(a->host, b->host);
    if (c)
        return c;
    if (a->wall_ns != b->wall_ns)
        return a->wall_ns < b->wall_ns ? -1 : 1;
    /* Same instant: starts before ends, then file order. */
    if (a->edge != b->edge)
        return a->edge < b->edge ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/* Start attributes, with the end's added where the start has none. */
static char *merge_attrs(const char *start, const char *end)
{
    if (!end || strcmp(end, "{}") == 0)
        return pm_strdup(start);
    cJSON *s = cJSON_Parse(start), *e = cJSON_Parse(end);
    char *out = NULL;
    if (s && e) {
        for (const cJSON *x = e->child; x; x = x->next)
            if (!cJSON_GetObjectItemCaseSensitive(s, x->string))
                cJSON_AddItemToObject(s, x->string, cJSON_Duplicate(x, 1));
        out = cJSON_PrintUnformatted(s);
    }
    cJSON_Delete(s);
    cJSON_Delete(e);
    return out ? out : pm_strdup(start);
}

int pm_phases_pair(const pm_event_list *events, pm_phase_set *out, pm_error *err)
{
    size_t n = events->n;
    if (n == 0)
        return 0;
    const pm_event **ord = pm_alloc_array(n, sizeof *ord);
    const pm_event **open = pm_alloc_array(n, sizeof *open);
    if (!ord || !open) {
        free(ord);
        free(open);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        ord[i] = &events->v[i];
    qsort(ord, n, sizeof *ord, cmp_event);
    int rc = 0;
    size_t nopen = 0;
    char when[48];
    for (size_t i = 0; i <= n && rc == 0; i++) {
        /* A new host (or the end): what is still open has no end. */
        if (i == n || (i > 0 && strcmp(ord[i]->host, ord[i - 1]->host) != 0)) {
            for (size_t k = 0; k < nopen && rc == 0; k++) {
                (void)pm_utc_iso_ns(open[k]->wall_ns, 3, when, sizeof when);
                rc = pm_phase_problem(out, "%s: start of %s%s%s at %s has no end", open[k]->host,
                                      open[k]->name, *open[k]->key ? " " : "", open[k]->key, when);
            }
            nopen = 0;
            if (i == n)
                break;
        }
        const pm_event *e = ord[i];
        double t = (double)e->wall_ns / 1e9;
        if (e->edge == PM_EDGE_START) {
            open[nopen++] = e;
        } else if (e->edge == PM_EDGE_ONESHOT) {
            rc = pm_phase_add(out, e->host, e->name, e->key, "", t - e->diff_s, t, e->attrs);
        } else {
            size_t k = nopen;
            while (k > 0 && !(strcmp(open[k - 1]->name, e->name) == 0 &&
                              strcmp(open[k - 1]->key, e->key) == 0))
                k--;
            if (k == 0) {
                (void)pm_utc_iso_ns(e->wall_ns, 3, when, sizeof when);
                rc = pm_phase_problem(out, "%s: end of %s%s%s at %s has no start", e->host, e->name,
                                      *e->key ? " " : "", e->key, when);
                continue;
            }
            const pm_event *s = open[k - 1];
            memmove(&open[k - 1], &open[k], (nopen - k) * sizeof *open);
            nopen--;
            char *attrs = merge_attrs(s->attrs, e->attrs);
            if (!attrs)
                rc = PM_ENOMEM;
            else
                rc = pm_phase_add(out, e->host, e->name, e->key, "", (double)s->wall_ns / 1e9, t,
                                  attrs);
            free(attrs);
        }
    }
    free(ord);
    free(open);
    if (rc)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    return 0;
}
