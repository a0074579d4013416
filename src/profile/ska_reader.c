/* Import of SKA SDP perfmon JSON (cpu_metrics.json and per-host files).
 *
 * Interface: pm_ska_sniff, pm_ska_read (maps the file), pm_ska_decode (a
 * text in memory), see perfmon/ska.h.
 *
 * Order of work: the streaming scanner (json_scan.c) finds the top-level
 * members without decoding them; a per-host file is one host, a merged
 * file (cpu_metrics.json) names its hosts in host_names, and each host's
 * span is then read by its own thread (pm_pool) straight into growing
 * arrays of doubles, one per column of SKA_MAP: no JSON tree is built for
 * a host (only host_names and escaped names go through cJSON).  Each host
 * becomes a pm_profile, its lists cut or NaN-padded to time_stamps.  With
 * pm_ska_read the pages of the mapping already read are given back, so a
 * 1 GB file never stays resident.
 */
#include "perfmon/ska.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmon/json_scan.h"
#include "perfmon/mem.h"
#include "perfmon/parse.h"
#include "perfmon/threads.h"
#include "perfmon/vec.h"

#define SKA_MAX_HOSTS 100000
#define SKA_MAX_SAMPLES (1u << 28)
#define SKA_MAX_NAME 65536 /* bytes of a host name (a 10,000-byte one is fine) */

/* SKA field -> perfmon column.  SKA already multiplies the Infiniband data
 * counters by 4 (octets/4 in sysfs), and its packet counters too, so values
 * are taken as they are.  net_io_counters is psutil's pernic=False sum over
 * all interfaces, loopback included, hence net.all.*. */
static const struct ska_map {
    const char *group; /* NULL: top-level list in the host object */
    const char *field;
    const char *column;
    const char *unit;
    const char *cgroup;
    int kind;
} SKA_MAP[] = {
    {NULL, "cpu_percent_sys", "cpu.percent", "%", "cpu", PM_GAUGE},
    {NULL, "cpu_percent", "proc.cpu_percent", "%", "proc", PM_GAUGE},
    {NULL, "cpu_time", "proc.cpu_time", "s", "proc", PM_COUNTER},
    {NULL, "memory_percent", "proc.mem_percent", "%", "proc", PM_GAUGE},
    {NULL, "num_threads", "proc.threads", "1", "proc", PM_GAUGE},
    {NULL, "num_fds", "proc.fds", "1", "proc", PM_GAUGE},
    {NULL, "memory_bw", "membw.read", "B/s", "memory", PM_GAUGE},
    {"memory_info", "rss", "proc.rss", "B", "proc", PM_GAUGE},
    {"memory_info", "vms", "proc.vms", "B", "proc", PM_GAUGE},
    {"memory_info", "shared", "proc.shared", "B", "proc", PM_GAUGE},
    {"memory_full_info", "uss", "proc.uss", "B", "proc", PM_GAUGE},
    {"memory_full_info", "pss", "proc.pss", "B", "proc", PM_GAUGE},
    {"memory_full_info", "swap", "proc.swap", "B", "proc", PM_GAUGE},
    {"io_counters", "read_bytes", "proc.read_bytes", "B", "proc", PM_COUNTER},
    {"io_counters", "write_bytes", "proc.write_bytes", "B", "proc", PM_COUNTER},
    {"io_counters", "read_count", "proc.read_ops", "1", "proc", PM_COUNTER},
    {"io_counters", "write_count", "proc.write_ops", "1", "proc", PM_COUNTER},
    {"net_io_counters", "bytes_sent", "net.all.bytes_sent", "B", "net", PM_COUNTER},
    {"net_io_counters", "bytes_recv", "net.all.bytes_recv", "B", "net", PM_COUNTER},
    {"net_io_counters", "packets_sent", "net.all.packets_sent", "1", "net", PM_COUNTER},
    {"net_io_counters", "packets_recv", "net.all.packets_recv", "1", "net", PM_COUNTER},
    {"ib_io_counters", "port_xmit_data", "ib.bytes_sent", "B", "ib", PM_COUNTER},
    {"ib_io_counters", "port_rcv_data", "ib.bytes_recv", "B", "ib", PM_COUNTER},
    {"ib_io_counters", "port_xmit_packets", "ib.packets_sent", "1", "ib", PM_COUNTER},
    {"ib_io_counters", "port_rcv_packets", "ib.packets_recv", "1", "ib", PM_COUNTER},
};
#define SKA_NMAP (sizeof SKA_MAP / sizeof SKA_MAP[0])

int pm_ska_sniff(const void *head, size_t len)
{
    const char *h = head;
    size_t i = 0;
    while (i < len && (h[i] == ' ' || h[i] == '\t' || h[i] == '\r' || h[i] == '\n'))
        i++;
    if (i >= len || h[i] != '{')
        return 0;
    return pm_profile_sniff(head, len) == PM_FMT_UNKNOWN;
}

/* --- one host, parsed straight into doubles ----------------------------------- */

/* A growing array of decoded values for one column. */
typedef struct col {
    pm_column c;
    double *v;
    size_t n, cap;
    size_t hint; /* length of the host's lists so far: the first capacity */
    int seen;    /* the field was present (even if empty) */
} col;

typedef struct host {
    col *cols;
    size_t ncols, capcols;
    col ts; /* time_stamps */
    int have_ts;
    char *full;    /* the host's name (host_names, host_name or the file's) */
    char name[96]; /* the same, shortened for messages */
} host;

/* src shortened to fit cap for a message: its start and "...", cut at a
 * UTF-8 character boundary. */
static void short_name(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n < cap) {
        memcpy(dst, src, n + 1);
        return;
    }
    size_t k = cap - 4;
    while (k > 0 && ((unsigned char)src[k] & 0xC0) == 0x80)
        k--;
    memcpy(dst, src, k);
    memcpy(dst + k, "...", 4);
}

static int host_set_name(host *h, const char *name)
{
    char *d = pm_strdup(name);
    if (!d)
        return PM_ENOMEM;
    free(h->full);
    h->full = d;
    short_name(h->name, sizeof h->name, name);
    return 0;
}

/* A JSON string's text (without quotes, len bytes, escapes undecoded)
 * decoded, or NULL when it is empty, too long or not a valid string. */
static char *decode_name(const char *text, size_t len)
{
    if (len == 0 || len > 6 * SKA_MAX_NAME)
        return NULL;
    char *buf = malloc(len + 3);
    if (!buf)
        return NULL;
    buf[0] = '"';
    memcpy(buf + 1, text, len);
    buf[len + 1] = '"';
    buf[len + 2] = 0;
    cJSON *j = cJSON_ParseWithLength(buf, len + 2);
    free(buf);
    char *out = NULL;
    if (cJSON_IsString(j) && *j->valuestring && strlen(j->valuestring) <= SKA_MAX_NAME)
        out = pm_strdup(j->valuestring);
    cJSON_Delete(j);
    return out;
}

static void host_free(host *h)
{
    free(h->full);
    for (size_t i = 0; i < h->ncols; i++)
        free(h->cols[i].v);
    free(h->cols);
    free(h->ts.v);
}

static col *host_col(host *h, const char *name, const char *unit, const char *group, int kind)
{
    for (size_t i = 0; i < h->ncols; i++)
        if (strcmp(h->cols[i].c.name, name) == 0)
            return &h->cols[i];
    if (PM_VEC_RESERVE(h->cols, h->capcols, h->ncols + 1, 32) != 0)
        return NULL;
    /* A host's lists are (nearly) all as long as its time stamps: size a
     * new one like the longest so far, not by doubling from small. */
    size_t hint = h->ts.n;
    for (size_t i = 0; i < h->ncols; i++)
        if (h->cols[i].n > hint)
            hint = h->cols[i].n;
    col *c = &h->cols[h->ncols++];
    memset(c, 0, sizeof *c);
    c->hint = hint;
    snprintf(c->c.name, sizeof c->c.name, "%s", name);
    snprintf(c->c.unit, sizeof c->c.unit, "%s", unit);
    snprintf(c->c.group, sizeof c->c.group, "%s", group);
    c->c.kind = (uint8_t)kind;
    c->c.type = PM_F64;
    return c;
}

/* Map the fresh pages of a list in one call rather than trapping on each
 * 4 KiB as it fills (on a VM a fault costs several system calls' worth);
 * a hint, without effect where MADV_POPULATE_WRITE is unknown. */
static void prefault(double *v, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = 4096, a = ((uintptr_t)v + page - 1) & ~(page - 1);
    uintptr_t b = ((uintptr_t)(v + n)) & ~(page - 1);
    if (b > a + 2 * page)
        (void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#else
    (void)v;
    (void)n;
#endif
}

static int col_push(col *c, double v)
{
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : c->hint ? c->hint + 1 : 1024;
        if (nc > SKA_MAX_SAMPLES)
            return PM_ELIMIT;
        double *nv = pm_realloc_array(c->v, nc, sizeof *nv);
        if (!nv)
            return PM_ENOMEM;
        prefault(nv + c->n, nc - c->n);
        c->v = nv;
        c->cap = nc;
    }
    c->v[c->n++] = v;
    return 0;
}

/* A string holding a number ("0" in SKA's swap lists), else NaN. */
static int scan_string_number(pm_jscan *s, double *out)
{
    const char *start = s->p + 1;
    int rc = pm_jscan_string(s);
    if (rc)
        return rc;
    size_t len = (size_t)(s->p - 1 - start);
    char buf[64];
    *out = NAN;
    if (len < sizeof buf) {
        memcpy(buf, start, len);
        buf[len] = 0;
        double d;
        if (pm_parse_double(buf, &d) == 0)
            *out = d;
    }
    return 0;
}

/* A list of numbers (strings with numbers and null accepted) into c. */
static int scan_number_list(pm_jscan *s, col *c, const char *what)
{
    pm_jscan_ws(s);
    if (s->p >= s->e || *s->p != '[') {
        char m[160];
        snprintf(m, sizeof m, "%s: expected a list", what);
        return pm_jscan_fail(s, s->p, m);
    }
    s->p++;
    c->seen = 1;
    pm_jscan_ws(s);
    if (s->p < s->e && *s->p == ']') {
        s->p++;
        return 0;
    }
    for (;;) {
        /* The plain numbers that fit, straight into the column; the
         * element after them (or the one that would grow it) below. */
        int closed = 0;
        if (c->n < c->cap)
            c->n += pm_jscan_plain_numbers(s, c->v + c->n, c->cap - c->n, &closed);
        if (closed)
            return 0;
        pm_jscan_ws(s);
        if (s->p >= s->e)
            return pm_jscan_fail(s, s->p, "malformed JSON: unexpected end of input");
        double v = NAN;
        int rc;
        char ch = *s->p;
        if (ch == '"') {
            rc = scan_string_number(s, &v);
        } else if (ch == 'n') {
            rc = pm_jscan_literal(s, "null");
        } else if (ch == 't') {
            rc = pm_jscan_literal(s, "true");
            v = 1;
        } else if (ch == 'f') {
            rc = pm_jscan_literal(s, "false");
            v = 0;
        } else {
            rc = pm_jscan_number(s, &v);
        }
        if (rc)
            return rc;
        if ((rc = col_push(c, v)))
            return rc == PM_ENOMEM ? pm_error_set(s->err, rc, "%s: out of memory", s->path)
                                   : pm_jscan_fail(s, s->p, "too many values");
        pm_jscan_ws(s);
        if (s->p < s->e && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->e && *s->p == ']') {
            s->p++;
            return 0;
        }
        return pm_jscan_fail(s, s->p, "malformed JSON: expected ',' or ']'");
    }
}

static const struct ska_map *map_find(const char *group, const char *field)
{
    for (size_t k = 0; k < SKA_NMAP; k++) {
        const struct ska_map *m = &SKA_MAP[k];
        if ((m->group == NULL) != (group == NULL))
            continue;
        if (group && strcmp(m->group, group) != 0)
            continue;
        if (strcmp(m->field, field) == 0)
            return m;
    }
    return NULL;
}

static int is_group(const char *key)
{
    if (strcmp(key, "rapl_powercap") == 0)
        return 1;
    for (size_t k = 0; k < SKA_NMAP; k++)
        if (SKA_MAP[k].group && strcmp(SKA_MAP[k].group, key) == 0)
            return 1;
    return 0;
}

/* A group object ("memory_info": {"rss": [...], ...}). */
static int scan_group(pm_jscan *s, host *h, const char *group)
{
    if (s->p >= s->e || *s->p != '{') {
        /* not an object: SKA never writes that; skip it like any
         * unknown value */
        return pm_jscan_skip(s);
    }
    s->p++;
    pm_jscan_ws(s);
    if (s->p < s->e && *s->p == '}') {
        s->p++;
        return 0;
    }
    int more = 1, rc;
    while (more) {
        char key[96];
        if ((rc = pm_jscan_key(s, key, sizeof key)))
            return rc;
        const struct ska_map *m = map_find(group, key);
        char what[200];
        snprintf(what, sizeof what, "host %s: %s.%s", h->name, group, key);
        if (m || (strcmp(group, "rapl_powercap") == 0 && *key && strlen(key) <= 80 && s->p < s->e &&
                  *s->p == '[')) {
            char cname[96];
            col *c;
            if (m) {
                c = host_col(h, m->column, m->unit, m->cgroup, m->kind);
            } else {
                snprintf(cname, sizeof cname, "rapl.%s", key);
                c = host_col(h, cname, "uJ", "rapl", PM_COUNTER);
            }
            if (!c)
                return pm_error_set(s->err, PM_ENOMEM, "%s: out of memory", s->path);
            if ((rc = scan_number_list(s, c, what)))
                return rc;
        } else if ((rc = pm_jscan_skip(s))) {
            return rc;
        }
        pm_jscan_release(s, s->p);
        if ((rc = pm_jscan_next(s, &more)))
            return rc;
    }
    return 0;
}

/* Parse one host object at s->p (the whole span val..val+vlen). */
static int scan_host(pm_jscan *s, host *h)
{
    pm_jscan_ws(s);
    if (s->p >= s->e || *s->p != '{')
        return pm_error_set(s->err, PM_EFORMAT, "%s: host %s: expected an object", s->path,
                            h->name);
    s->p++;
    pm_jscan_ws(s);
    if (s->p < s->e && *s->p == '}') {
        s->p++;
        return 0;
    }
    int more = 1, rc;
    while (more) {
        char key[96];
        if ((rc = pm_jscan_key(s, key, sizeof key)))
            return rc;
        char what[200];
        snprintf(what, sizeof what, "host %s: %s", h->name, key);
        const struct ska_map *m = map_find(NULL, key);
        if (strcmp(key, "time_stamps") == 0) {
            if (s->p >= s->e || *s->p != '[')
                return pm_error_set(s->err, PM_EFORMAT,
                                    "%s: host %s: time_stamps: missing or not a list", s->path,
                                    h->name);
            h->have_ts = 1;
            rc = scan_number_list(s, &h->ts, what);
        } else if (m) {
            col *c = host_col(h, m->column, m->unit, m->cgroup, m->kind);
            if (!c)
                return pm_error_set(s->err, PM_ENOMEM, "%s: out of memory", s->path);
            if (s->p < s->e && *s->p != '[')
                return pm_error_set(s->err, PM_EFORMAT, "%s: host %s: %s: expected a list", s->path,
                                    h->name, key);
            rc = scan_number_list(s, c, what);
        } else if (is_group(key)) {
            if (s->p < s->e && *s->p == '{') {
                rc = scan_group(s, h, key);
            } else {
                rc = pm_jscan_skip(s);
            }
        } else if ((strcmp(key, "host_name") == 0 || strcmp(key, "hostname") == 0) && s->p < s->e &&
                   *s->p == '"') {
            const char *v = s->p + 1;
            rc = pm_jscan_string(s);
            char *name = rc ? NULL : decode_name(v, (size_t)(s->p - 1 - v));
            if (name && host_set_name(h, name))
                rc = pm_error_set(s->err, PM_ENOMEM, "%s: out of memory", s->path);
            free(name);
        } else {
            rc = pm_jscan_skip(s);
        }
        /* A list read is a list done with: each thread keeps the page or
         * two of text it is reading resident, not its whole host. */
        pm_jscan_release(s, s->p);
        if (rc || (rc = pm_jscan_next(s, &more)))
            return rc;
    }
    return 0;
}

/* Turn the decoded host into a profile: lists truncated or NaN-padded to
 * time_stamps, with a warning each. */
static int host_profile(const char *path, host *h, pm_profile **out, pm_error *err)
{
    *out = NULL;
    if (!h->have_ts)
        return pm_error_set(err, PM_EFORMAT, "%s: host %s: time_stamps: missing or not a list",
                            path, h->name);
    size_t n = h->ts.n, ncols = 0;
    for (size_t c = 0; c < h->ncols; c++)
        ncols += h->cols[c].n > 0;
    pm_profile *p = pm_profile_new(path, PM_FMT_SKA);
    pm_column *plain = pm_alloc_array(ncols ? ncols : 1, sizeof *plain);
    if (!p || !plain) {
        free(plain);
        pm_profile_free(p);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    }
    size_t k = 0;
    for (size_t c = 0; c < h->ncols; c++)
        if (h->cols[c].n > 0)
            plain[k++] = h->cols[c].c;
    int rc = pm_profile_set_columns(p, plain, ncols);
    free(plain);
    /* The lists become the profile's columns (grown to n where short). */
    if (!rc) {
        /* SKA records no monotonic clock: zeros, which calloc gives
         * without writing where the memory is fresh (no resident pages). */
        p->t_mono_ns = calloc(n ? n : 1, sizeof *p->t_mono_ns);
        p->t_wall_ns = pm_alloc_array(n ? n : 1, sizeof *p->t_wall_ns);
        k = 0;
        for (size_t c = 0; c < h->ncols && p->t_mono_ns && p->t_wall_ns; c++) {
            col *cl = &h->cols[c];
            if (cl->n == 0)
                continue;
            if (cl->cap < n) {
                double *nv = pm_realloc_array(cl->v, n, sizeof *nv);
                if (!nv)
                    break;
                cl->v = nv;
                cl->cap = n;
            }
            p->values[k++] = cl->v;
            cl->v = NULL; /* the profile's now (host_free leaves it) */
        }
        if (k < ncols || !p->t_mono_ns || !p->t_wall_ns)
            rc = PM_ENOMEM;
    }
    if (rc) {
        pm_profile_free(p);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    }
    snprintf(p->info.host, sizeof p->info.host, "%s", h->full);
    if (strlen(h->full) >= sizeof p->info.host && !(p->host_long = pm_strdup(h->full))) {
        pm_profile_free(p);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    }
    snprintf(p->info.sampler, sizeof p->info.sampler, "ska-perfmon");
    snprintf(p->info.scheduler, sizeof p->info.scheduler, "unknown");
    p->n = n;
    for (size_t i = 0; i < n; i++) {
        double sec = h->ts.v[i];
        /* A timestamp that is not a number cannot be placed: the analyser
         * drops it as non-increasing. */
        if (!isfinite(sec) || fabs(sec) > 9.2e9) {
            p->t_wall_ns[i] = INT64_MIN;
            continue;
        }
        /* Whole seconds and the (exact) fraction apart: sec * 1e9 would
         * round to 256 ns. */
        double whole = floor(sec);
        p->t_wall_ns[i] = (int64_t)whole * 1000000000 + (int64_t)llround((sec - whole) * 1e9);
    }
    if (n > 1 && p->t_wall_ns[0] != INT64_MIN && p->t_wall_ns[n - 1] != INT64_MIN)
        p->info.interval_ns = (p->t_wall_ns[n - 1] - p->t_wall_ns[0]) / (int64_t)(n - 1);
    p->info.start_wall_ns = n && p->t_wall_ns[0] != INT64_MIN ? p->t_wall_ns[0] : 0;
    k = 0;
    for (size_t c = 0; c < h->ncols; c++) {
        const col *cl = &h->cols[c];
        if (cl->n == 0)
            continue;
        double *v = p->values[k++];
        size_t m = cl->n < n ? cl->n : n;
        for (size_t i = m; i < n; i++)
            v[i] = NAN;
        if (cl->n < n)
            (void)pm_profile_add_warning(
                p, "%s: host %s: %s: %zu values for %zu time stamps, padded with NaN", path,
                h->name, cl->c.name, cl->n, n);
        else if (cl->n > n)
            (void)pm_profile_add_warning(
                p, "%s: host %s: %s: %zu values for %zu time stamps, truncated", path, h->name,
                cl->c.name, cl->n, n);
    }
    *out = p;
    return 0;
}

/* Whether a host's profile holds a sample with a usable time: a host
 * whose time_stamps is empty (or holds no number) would otherwise become a
 * run of its own dated 1970. */
static int has_samples(const pm_profile *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->t_wall_ns[i] != INT64_MIN)
            return 1;
    return 0;
}

/* Parse the host value at val..val+vlen into a profile. */
static int convert_span(pm_jscan *s, const char *name, int may_rename, const char *val, size_t vlen,
                        pm_profile **out)
{
    host h;
    memset(&h, 0, sizeof h);
    if (host_set_name(&h, name))
        return pm_error_set(s->err, PM_ENOMEM, "%s: out of memory", s->path);
    pm_jscan hs = *s;
    hs.p = val;
    hs.e = val + vlen;
    hs.released = val;
    int rc = scan_host(&hs, &h);
    pm_jscan_release(&hs, val + vlen);
    if (!rc && !may_rename && strcmp(h.full, name) != 0 && host_set_name(&h, name))
        rc = pm_error_set(s->err, PM_ENOMEM, "%s: out of memory", s->path);
    if (!rc)
        rc = host_profile(s->path, &h, out, s->err);
    host_free(&h);
    return rc;
}

/* The hosts of a merged file, converted in parallel (each host is its own
 * span of the text, its own scan and its own error). */
typedef struct host_job {
    const char *name;
    const pm_jmember *m;
    pm_profile *prof;
    int rc;
    pm_error err;
} host_job;

typedef struct host_jobs {
    const pm_jscan *s;
    host_job *v;
} host_jobs;

static void *host_worker(void *arg)
{
    pm_pool *pool = arg;
    host_jobs *j = pool->ctx;
    for (size_t i; (i = pm_pool_next(pool)) < pool->n;) {
        host_job *hj = &j->v[i];
        pm_jscan hs = *j->s;
        hs.err = &hj->err;
        pm_error_clear(&hj->err);
        hj->rc = convert_span(&hs, hj->name, 0, hj->m->val, hj->m->vlen, &hj->prof);
    }
    return NULL;
}

static void convert_hosts(const pm_jscan *s, host_job *v, size_t n)
{
    host_jobs j = {s, v};
    pm_pool pool = {.n = n, .ctx = &j};
    pthread_mutex_init(&pool.lock, NULL);
    pm_pool_run(&pool, host_worker, n);
    pthread_mutex_destroy(&pool.lock);
}

static int push_profile(pm_profile ***arr, size_t *n, pm_profile *p)
{
    pm_profile **na = pm_realloc_array(*arr, *n + 1, sizeof **arr);
    if (!na)
        return PM_ENOMEM;
    *arr = na;
    na[(*n)++] = p;
    return 0;
}

static void free_list(pm_profile **arr, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pm_profile_free(arr[i]);
    free(arr);
}

static int member_is(const pm_jmember *m, const char *key)
{
    return m->klen == strlen(key) && memcmp(m->key, key, m->klen) == 0;
}

/* Host name from a member key (JSON escapes decoded), or NULL. */
static char *key_name(const pm_jmember *m)
{
    return decode_name(m->key, m->klen);
}

static const char *base_name(const char *path, char *out, size_t cap)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(out, cap, "%s", b);
    char *dot = strrchr(out, '.');
    if (dot && dot != out)
        *dot = 0;
    return out;
}

/* A per-host file: the object itself is the host, named after the file;
 * its profile appended to *list.  0 or a PM_E* code. */
static int decode_host_file(pm_jscan *s, const char *path, const char *text, size_t len,
                            pm_profile ***list, size_t *nlist, pm_error *err)
{
    int rc;
    char name[256];
    base_name(path, name, sizeof name);
    pm_profile *p = NULL;
    if ((rc = convert_span(s, name, 1, text, len, &p)))
        return rc;
    if (!has_samples(p)) {
        char shown[96];
        short_name(shown, sizeof shown, p->info.host);
        pm_profile_free(p);
        rc = pm_error_set(err, PM_EFORMAT,
                          "%s: host %s: no samples (time_stamps holds no time), not analysed", path,
                          shown);
        return rc;
    }
    if (push_profile(list, nlist, p)) {
        pm_profile_free(p);
        rc = pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
        return rc;
    }
    return 0;
}

/* host_names' entries matched to the file's members (keys: the members'
 * decoded names): jobs[*njp], *nxp names read, the first name without
 * data (*nodatap) and how many (*nnodatap).  0 or PM_EFORMAT. */
static int match_hosts(const char *path, const cJSON *hn, const pm_jmember *mem, char **keys,
                       size_t nmem, host_job *jobs, size_t *njp, size_t *nxp, const cJSON **nodatap,
                       size_t *nnodatap, pm_error *err)
{
    int rc = 0;
    size_t nj = 0, nx = 0;
    const cJSON *x, *nodata = NULL;
    size_t nnodata = 0;
    cJSON_ArrayForEach(x, hn) {
        if (!cJSON_IsString(x) || !*x->valuestring) {
            rc = pm_error_set(err, PM_EFORMAT, "%s: host_names[%zu]: expected a non-empty string",
                              path, nx);
            break;
        }
        if (strlen(x->valuestring) > SKA_MAX_NAME) {
            rc = pm_error_set(err, PM_EFORMAT,
                              "%s: host_names[%zu]: a name of %zu bytes (at most %d)", path, nx,
                              strlen(x->valuestring), SKA_MAX_NAME);
            break;
        }
        nx++;
        const pm_jmember *hm = NULL;
        for (size_t i = 0; i < nmem && !hm; i++)
            if (keys[i] && strcmp(keys[i], x->valuestring) == 0)
                hm = &mem[i];
        if (!hm) {
            /* SKA's own merge lists a host whose sampler wrote nothing;
             * the other hosts are still the job's data. */
            if (!nodata)
                nodata = x;
            nnodata++;
            continue;
        }
        jobs[nj].name = x->valuestring;
        jobs[nj++].m = hm;
    }
    if (!rc && nj == 0)
        rc =
            nx == 0
                ? pm_error_set(err, PM_EFORMAT, "%s: host_names is empty: no host's data", path)
                : pm_error_set(err, PM_EFORMAT, "%s: none of the %zu host%s in host_names has data",
                               path, nx, nx == 1 ? "" : "s");
    *njp = nj;
    *nxp = nx;
    *nodatap = nodata;
    *nnodatap = nnodata;
    return rc;
}

/* A host without samples forms no run: it is left out, named in a
 * warning, and the other hosts are analysed; so is one that host_names
 * lists without data (nodata, nnodata).  *njp: the hosts kept.  0 or
 * PM_EFORMAT. */
static int keep_hosts_with_samples(const char *path, host_job *jobs, size_t *njp, size_t nx,
                                   const cJSON *nodata, size_t nnodata, pm_error *err)
{
    int rc = 0;
    size_t nj = *njp;
    size_t nempty = 0, nkept = 0;
    const char *empty = NULL;
    for (size_t i = 0; i < nj && !rc; i++) {
        if (has_samples(jobs[i].prof)) {
            jobs[nkept++] = jobs[i];
            continue;
        }
        if (!empty)
            empty = jobs[i].name;
        nempty++;
        pm_profile_free(jobs[i].prof);
        jobs[i].prof = NULL;
    }
    if (!rc && nempty) {
        nj = nkept;
        if (nj == 0)
            rc = pm_error_set(err, PM_EFORMAT,
                              "%s: none of the %zu host%s in host_names has samples", path, nx,
                              nx == 1 ? "" : "s");
    }
    if (!rc && nempty) {
        char shown[96];
        short_name(shown, sizeof shown, empty);
        if (nempty == 1)
            (void)pm_profile_add_warning(
                jobs[0].prof,
                "%s: host %s: no samples (time_stamps holds no time), not analysed (the other hosts are)",
                path, shown);
        else
            (void)pm_profile_add_warning(
                jobs[0].prof,
                "%s: %zu hosts have no samples (time_stamps holds no time), the first %s; not analysed (the other hosts are)",
                path, nempty, shown);
    }
    if (!rc && nodata) {
        char shown[96];
        short_name(shown, sizeof shown, nodata->valuestring);
        if (nnodata == 1)
            (void)pm_profile_add_warning(
                jobs[0].prof,
                "%s: host %s: listed in host_names but has no data (the other hosts are analysed)",
                path, shown);
        else
            (void)pm_profile_add_warning(
                jobs[0].prof,
                "%s: %zu hosts listed in host_names have no data, the first %s (the other hosts are analysed)",
                path, nnodata, shown);
    }
    *njp = nj;
    return rc;
}

/* A merged file: host_names (names) lists the hosts, each a member of the
 * object; converted on worker threads, appended to *list in host_names'
 * order.  0 or a PM_E* code. */
static int decode_merged(pm_jscan *s, const char *path, const pm_jmember *names,
                         const pm_jmember *mem, size_t nmem, pm_profile ***list, size_t *nlist,
                         pm_error *err)
{
    int rc = 0;
    cJSON *hn = cJSON_ParseWithLength(names->val, names->vlen);
    if (!cJSON_IsArray(hn) || cJSON_GetArraySize(hn) > SKA_MAX_HOSTS) {
        cJSON_Delete(hn);
        return pm_error_set(err, PM_EFORMAT, "%s: host_names: expected a list of names", path);
    }
    /* Decode every member name once. */
    char **keys = calloc(nmem ? nmem : 1, sizeof *keys);
    size_t nh = (size_t)cJSON_GetArraySize(hn);
    host_job *jobs = keys ? calloc(nh ? nh : 1, sizeof *jobs) : NULL;
    if (!jobs) {
        free(keys);
        cJSON_Delete(hn);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    }
    for (size_t i = 0; i < nmem; i++)
        keys[i] = key_name(&mem[i]);
    size_t nj = 0, nx = 0, nnodata = 0;
    const cJSON *nodata = NULL;
    rc = match_hosts(path, hn, mem, keys, nmem, jobs, &nj, &nx, &nodata, &nnodata, err);
    if (!rc) {
        convert_hosts(s, jobs, nj);
        /* The first host in the file's order that failed is the error. */
        for (size_t i = 0; i < nj && !rc; i++)
            if (jobs[i].rc) {
                rc = jobs[i].rc;
                *err = jobs[i].err;
            }
        if (!rc)
            rc = keep_hosts_with_samples(path, jobs, &nj, nx, nodata, nnodata, err);
        for (size_t i = 0; i < nj && !rc; i++) {
            if (push_profile(list, nlist, jobs[i].prof)) {
                rc = pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
                break;
            }
            jobs[i].prof = NULL;
        }
    }
    for (size_t i = 0; i < nj; i++)
        pm_profile_free(jobs[i].prof);
    free(jobs);
    for (size_t i = 0; i < nmem; i++)
        free(keys[i]);
    free(keys);
    cJSON_Delete(hn);
    return rc;
}

static int ska_decode(const char *path, const char *text, size_t len, int release,
                      pm_profile ***out, size_t *nout, pm_error *err)
{
    *out = NULL;
    *nout = 0;
    pm_jscan s;
    pm_jscan_init(&s, path, text, len, release, err);
    pm_jmember *mem = NULL;
    size_t nmem = 0;
    int rc = pm_jscan_top(&s, &mem, &nmem);
    if (rc)
        return rc;
    const pm_jmember *names = NULL, *stamps = NULL;
    for (size_t i = 0; i < nmem; i++) {
        if (member_is(&mem[i], "host_names"))
            names = &mem[i];
        else if (member_is(&mem[i], "time_stamps"))
            stamps = &mem[i];
    }
    if (!stamps && !names) {
        free(mem);
        return pm_error_set(err, PM_ENOENT,
                            "%s: JSON without host_names or time_stamps: not SKA perfmon output",
                            path);
    }
    pm_profile **list = NULL;
    size_t nlist = 0;
    rc = stamps ? decode_host_file(&s, path, text, len, &list, &nlist, err)
                : decode_merged(&s, path, names, mem, nmem, &list, &nlist, err);
    free(mem);
    if (rc) {
        free_list(list, nlist);
        return rc;
    }
    *out = list;
    *nout = nlist;
    return 0;
}

int pm_ska_decode(const char *path, const char *text, size_t len, pm_profile ***out, size_t *nout,
                  pm_error *err)
{
    return ska_decode(path, text, len, 0, out, nout, err);
}

int pm_ska_read(const char *path, pm_profile ***out, size_t *nout, pm_error *err)
{
    *out = NULL;
    *nout = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot open", path);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        close(fd);
        return pm_error_set(err, PM_EFORMAT, "%s: not a regular non-empty file", path);
    }
    size_t len = (size_t)st.st_size;
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    int merr = errno;
    close(fd);
    if (map == MAP_FAILED)
        return pm_error_sys(err, PM_EIO, merr, "%s: cannot map", path);
    madvise(map, len, MADV_SEQUENTIAL);
    int rc = ska_decode(path, map, len, 1, out, nout, err);
    munmap(map, len);
    return rc;
}
