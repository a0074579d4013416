/* Per-microarchitecture event tables (templates/events/NAME.events).
 *
 * A table is line-oriented text, one directive per line, '#' to the end of
 * a line is a comment:
 *
 *   arch   NAME
 *   title  free text
 *   match  VENDOR FAMILY MODEL[,MODEL-MODEL...]
 *   group
 *   event  NAME event=0xC7 umask=0x01 [cmask=N] [edge] [inv] [config1=0x...]
 *   derive ID UNIT [WEIGHT*]EVENT [+ [WEIGHT*]EVENT ...]
 *
 * The raw config follows the x86 PERFEVTSEL layout that the kernel's
 * "cpu" PMU takes for PERF_TYPE_RAW (Intel SDM vol. 3B 20.2; AMD APM
 * vol. 2 13.2.1): event select bits 0-7 (AMD: bits 8-11 of the event
 * number go to config bits 32-35), unit mask 8-15, edge 18, invert 23,
 * counter mask 24-31.
 */
#include "perfmon/perfev.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/fileio.h"

#define MAX_TOKENS 72
#define MAX_LINE 2048

static int bad(pm_error *err, const char *path, int line, const char *fmt, const char *arg)
{
    char what[256];
    snprintf(what, sizeof what, fmt, arg);
    return pm_error_set(err, PM_EFORMAT, "%s:%d: %s", path, line, what);
}

/* Unsigned number in C notation (decimal or 0x hex), whole string. */
static int number(const char *s, uint64_t max, uint64_t *out)
{
    if (!s || !((*s >= '0' && *s <= '9')))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno == ERANGE || *end != '\0' || v > max)
        return -1;
    *out = v;
    return 0;
}

static int name_ok(const char *s, size_t cap, int dots)
{
    size_t n = strlen(s);
    if (n == 0 || n >= cap)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || (dots && *s == '.')))
            return 0;
    return 1;
}

static int find_event(const pm_pev_table *t, const char *name)
{
    for (size_t i = 0; i < t->nev; i++)
        if (strcmp(t->ev[i].name, name) == 0)
            return (int)i;
    return -1;
}

static int parse_match(const char *path, int ln, char **tok, int nt, pm_pev_table *t, pm_error *err)
{
    if (nt != 4)
        return bad(err, path, ln, "match: expected VENDOR FAMILY MODELS%s", "");
    if (t->nm >= PM_PEV_MAX_MATCH)
        return bad(err, path, ln, "more than %s match lines", "8");
    pm_pev_match *m = &t->m[t->nm];
    memset(m, 0, sizeof *m);
    uint64_t fam;
    if (!name_ok(tok[1], sizeof m->vendor, 0))
        return bad(err, path, ln, "match: \"%s\" is not a CPUID vendor string", tok[1]);
    strcpy(m->vendor, tok[1]);
    if (number(tok[2], 0xfff, &fam) != 0)
        return bad(err, path, ln, "match: family \"%s\" is not a number up to 0xfff", tok[2]);
    m->family = (int)fam;
    char *save = NULL;
    for (char *r = strtok_r(tok[3], ",", &save); r; r = strtok_r(NULL, ",", &save)) {
        if (m->nr >= PM_PEV_MAX_RANGES)
            return bad(err, path, ln, "match: more than %s model ranges", "16");
        char *dash = strchr(r, '-');
        uint64_t lo, hi;
        if (dash)
            *dash = '\0';
        if (number(r, 0xffff, &lo) != 0 ||
            (dash ? number(dash + 1, 0xffff, &hi) : (hi = lo, 0)) != 0 || hi < lo)
            return bad(err, path, ln, "match: bad model or model range \"%s\"", r);
        m->lo[m->nr] = (uint16_t)lo;
        m->hi[m->nr] = (uint16_t)hi;
        m->nr++;
    }
    if (m->nr == 0)
        return bad(err, path, ln, "match: no model given%s", "");
    t->nm++;
    return 0;
}

static int parse_event(const char *path, int ln, char **tok, int nt, int group, pm_pev_table *t,
                       pm_error *err)
{
    if (nt < 3)
        return bad(err, path, ln, "event: expected NAME event=CODE [umask=MASK ...]%s", "");
    if (t->nev >= PM_PEV_MAX_EVENTS)
        return bad(err, path, ln, "more than %s events", "48");
    if (!name_ok(tok[1], sizeof t->ev[0].name, 1))
        return bad(err, path, ln, "event: \"%s\" is not a valid event name", tok[1]);
    if (find_event(t, tok[1]) >= 0)
        return bad(err, path, ln, "event: \"%s\" is defined twice", tok[1]);
    pm_pev_event *e = &t->ev[t->nev];
    memset(e, 0, sizeof *e);
    strcpy(e->name, tok[1]);
    e->group = group;
    int have_event = 0;
    for (int i = 2; i < nt; i++) {
        char *k = tok[i], *v = strchr(k, '=');
        uint64_t x;
        if (!v) {
            if (strcmp(k, "edge") == 0)
                e->config |= 1ull << 18;
            else if (strcmp(k, "inv") == 0)
                e->config |= 1ull << 23;
            else
                return bad(err, path, ln, "event: unknown flag \"%s\"", k);
            continue;
        }
        *v++ = '\0';
        if (strcmp(k, "event") == 0) {
            if (number(v, 0xfff, &x) != 0)
                return bad(err, path, ln, "event: event=%s is not a number up to 0xfff", v);
            e->config |= (x & 0xff) | ((x >> 8) & 0xf) << 32;
            have_event = 1;
        } else if (strcmp(k, "umask") == 0) {
            if (number(v, 0xff, &x) != 0)
                return bad(err, path, ln, "event: umask=%s is not a number up to 0xff", v);
            e->config |= x << 8;
        } else if (strcmp(k, "cmask") == 0) {
            if (number(v, 0xff, &x) != 0)
                return bad(err, path, ln, "event: cmask=%s is not a number up to 0xff", v);
            e->config |= x << 24;
        } else if (strcmp(k, "config1") == 0) {
            if (number(v, UINT64_MAX, &x) != 0)
                return bad(err, path, ln, "event: config1=%s is not a number", v);
            e->config1 = x;
        } else {
            return bad(err, path, ln, "event: unknown field \"%s\"", k);
        }
    }
    if (!have_event)
        return bad(err, path, ln, "event %s: event=CODE missing", e->name);
    t->nev++;
    return 0;
}

static int parse_derive(const char *path, int ln, char **tok, int nt, pm_pev_table *t,
                        pm_error *err)
{
    if (nt < 4)
        return bad(err, path, ln, "derive: expected ID UNIT TERM [+ TERM ...]%s", "");
    if (t->nd >= PM_PEV_MAX_DERIVED)
        return bad(err, path, ln, "more than %s derive lines", "12");
    pm_pev_derived *d = &t->d[t->nd];
    memset(d, 0, sizeof *d);
    if (!name_ok(tok[1], sizeof d->id, 0))
        return bad(err, path, ln, "derive: \"%s\" is not a valid id", tok[1]);
    for (size_t i = 0; i < t->nd; i++)
        if (strcmp(t->d[i].id, tok[1]) == 0)
            return bad(err, path, ln, "derive: \"%s\" is defined twice", tok[1]);
    if (!name_ok(tok[2], sizeof d->unit, 0))
        return bad(err, path, ln, "derive: \"%s\" is not a valid unit", tok[2]);
    strcpy(d->id, tok[1]);
    strcpy(d->unit, tok[2]);
    int want_term = 1;
    for (int i = 3; i < nt; i++) {
        if (!want_term) {
            if (strcmp(tok[i], "+") != 0)
                return bad(err, path, ln, "derive: expected '+' before \"%s\"", tok[i]);
            want_term = 1;
            continue;
        }
        if (d->nt >= PM_PEV_MAX_TERMS)
            return bad(err, path, ln, "derive: more than %s terms", "16");
        char *ev = tok[i], *star = strchr(tok[i], '*');
        double w = 1.0;
        if (star) {
            *star = '\0';
            char *end;
            errno = 0;
            w = strtod(tok[i], &end);
            if (end == tok[i] || *end || errno || !isfinite(w) || w <= 0 || w > 1e6)
                return bad(err, path, ln, "derive: weight \"%s\" is not a positive number", tok[i]);
            ev = star + 1;
        }
        int idx = find_event(t, ev);
        if (idx < 0)
            return bad(err, path, ln, "derive: event \"%s\" is not defined above", ev);
        d->t[d->nt].event = idx;
        d->t[d->nt].weight = w;
        d->nt++;
        want_term = 0;
    }
    if (want_term)
        return bad(err, path, ln, "derive %s: ends without a term", d->id);
    t->nd++;
    return 0;
}

int pm_pev_parse(const char *path, const char *text, pm_pev_table *t, pm_error *err)
{
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    int ln = 0, group = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        ln++;
        char line[MAX_LINE];
        if (len >= sizeof line)
            return bad(err, path, ln, "line longer than %s bytes", "2047");
        memcpy(line, p, len);
        line[len] = '\0';
        p += len + (nl ? 1 : 0);
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        for (char *c = line; *c; c++) {
            if (*c == '\t' || *c == '\r')
                *c = ' ';
            else if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f)
                return bad(err, path, ln, "control character in line%s", "");
        }
        char *start = line + strspn(line, " ");
        if (strncmp(start, "title", 5) == 0 && (start[5] == ' ' || start[5] == '\0')) {
            char *v = start + 5;
            v += strspn(v, " ");
            size_t vl = strlen(v);
            while (vl && v[vl - 1] == ' ')
                v[--vl] = '\0';
            if (vl >= sizeof t->title)
                return bad(err, path, ln, "title longer than %s bytes", "127");
            memcpy(t->title, v, vl + 1);
            continue;
        }
        char *tok[MAX_TOKENS], *save = NULL;
        int nt = 0;
        for (char *w = strtok_r(start, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
            if (nt >= MAX_TOKENS)
                return bad(err, path, ln, "more than %s words", "72");
            tok[nt++] = w;
        }
        if (nt == 0)
            continue;
        int rc = 0;
        if (strcmp(tok[0], "arch") == 0) {
            if (nt != 2 || !name_ok(tok[1], sizeof t->arch, 1))
                return bad(err, path, ln,
                           "arch: expected one name of letters, digits, '-', '_', '.'%s", "");
            if (t->arch[0])
                return bad(err, path, ln, "arch given twice%s", "");
            strcpy(t->arch, tok[1]);
        } else if (strcmp(tok[0], "match") == 0) {
            rc = parse_match(path, ln, tok, nt, t, err);
        } else if (strcmp(tok[0], "group") == 0) {
            if (nt != 1)
                return bad(err, path, ln, "group takes no arguments%s", "");
            /* A new group starts once the current one has an event. */
            if (t->nev > 0 && t->ev[t->nev - 1].group == group)
                group++;
        } else if (strcmp(tok[0], "event") == 0) {
            rc = parse_event(path, ln, tok, nt, group, t, err);
        } else if (strcmp(tok[0], "derive") == 0) {
            rc = parse_derive(path, ln, tok, nt, t, err);
        } else {
            return bad(err, path, ln, "unknown directive \"%s\"", tok[0]);
        }
        if (rc)
            return rc;
    }
    if (!t->arch[0])
        return pm_error_set(err, PM_EFORMAT, "%s: no arch line", path);
    if (t->nm == 0)
        return pm_error_set(err, PM_EFORMAT, "%s: no match line", path);
    if (t->nev == 0)
        return pm_error_set(err, PM_EFORMAT, "%s: no events", path);
    t->ngroups = t->ev[t->nev - 1].group + 1;
    return 0;
}

int pm_pev_matches(const pm_pev_table *t, const char *vendor, int family, int model)
{
    for (size_t i = 0; i < t->nm; i++) {
        const pm_pev_match *m = &t->m[i];
        if (strcmp(m->vendor, vendor) != 0 || m->family != family)
            continue;
        for (size_t r = 0; r < m->nr; r++)
            if (model >= m->lo[r] && model <= m->hi[r])
                return 1;
    }
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int pm_pev_select(const char *dir, const char *vendor, int family, int model, pm_pev_table *out,
                  pm_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return pm_error_sys(err, PM_ENOENT, errno, "%s: no event tables", dir);
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < sizeof names / sizeof *names) {
        size_t l = strlen(e->d_name);
        if (l > 7 && strcmp(e->d_name + l - 7, ".events") == 0 && e->d_name[0] != '.')
            if ((names[n] = strdup(e->d_name)) != NULL)
                n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_name);
    int rc = PM_ENOENT, found = 0;
    pm_pev_table *t = malloc(sizeof *t);
    if (!t)
        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
    for (size_t i = 0; t && i < n && !found; i++) {
        char path[4096];
        char *text = NULL;
        size_t len;
        if (pm_path_join(path, sizeof path, dir, names[i]) != 0)
            continue;
        if ((rc = pm_read_whole(path, PM_PEV_MAX_BYTES, &text, &len, err)) != 0)
            break;
        rc = pm_pev_parse(path, text, t, err);
        free(text);
        if (rc)
            break;
        if (pm_pev_matches(t, vendor, family, model)) {
            *out = *t;
            found = 1;
        }
        rc = 0;
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(t);
    if (rc)
        return rc;
    if (!found)
        return pm_error_set(err, PM_ENOENT,
                            "no event table in %s for %s family %d model %d "
                            "(0x%x)",
                            dir, vendor, family, model, (unsigned)model);
    return 0;
}

double pm_pev_derive(const pm_pev_derived *d, const double *counts)
{
    double s = 0;
    for (size_t i = 0; i < d->nt; i++) {
        double c = counts[d->t[i].event];
        if (isnan(c))
            return NAN;
        s += d->t[i].weight * c;
    }
    return s;
}
