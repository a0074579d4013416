/* Import of SKA SDP perfmon JSON (cpu_metrics.json and per-host files).
 *
 * The top level is scanned by hand (strings, brackets; nothing decoded), so
 * a 1 GB merged file never becomes one cJSON tree: each host object is
 * parsed alone, converted to doubles, and its tree freed before the next.
 */
#include "perfmon/ska.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmon/catalog.h"
#include "perfmon/mem.h"
#include "perfmon/parse.h"

#define SKA_MAX_DEPTH 256
#define SKA_MAX_HOSTS 100000
#define SKA_MAX_SAMPLES (1u << 28)

/* SKA field -> perfmon column.  SKA already multiplies the Infiniband data
 * counters by 4 (octets/4 in sysfs), and its packet counters too, so values
 * are taken as they are.  net_io_counters is psutil's pernic=False sum over
 * all interfaces, loopback included, hence net.all.*. */
static const struct ska_map {
    const char *group;   /* NULL: top-level list in the host object */
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
    {NULL, "memory_bw", "membw.read", "MiB/s", "memory", PM_GAUGE},
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

/* --- top-level scanner ------------------------------------------------------ */

typedef struct scan {
    const char *path;
    const char *text;
    const char *p;
    const char *e;
    pm_error *err;
} scan;

static int scan_fail(scan *s, const char *at, const char *what)
{
    int line, col;
    size_t off = (size_t)(at - s->text);
    /* pm_text_position stops at NUL; the text may not be NUL-terminated, so
     * count by hand. */
    line = 1;
    col = 1;
    for (size_t i = 0; i < off; i++) {
        if (s->text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return pm_error_set(s->err, PM_EFORMAT, "%s:%d:%d: %s", s->path, line, col, what);
}

static void skip_ws(scan *s)
{
    while (s->p < s->e && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static int skip_string(scan *s)
{
    const char *start = s->p;
    s->p++; /* opening quote */
    while (s->p < s->e) {
        char c = *s->p++;
        if (c == '\\') {
            if (s->p >= s->e)
                break;
            s->p++;
        } else if (c == '"') {
            return 0;
        } else if ((unsigned char)c < 0x20) {
            return scan_fail(s, s->p - 1, "control character in string");
        }
    }
    return scan_fail(s, start, "unterminated string");
}

/* Skip one JSON value, checking bracket nesting and strings only; scalars
 * are checked when the host object is parsed. */
static int skip_value(scan *s)
{
    char stack[SKA_MAX_DEPTH];
    int depth = 0;
    skip_ws(s);
    if (s->p >= s->e)
        return scan_fail(s, s->p, "unexpected end of input, expected a value");
    do {
        skip_ws(s);
        if (s->p >= s->e)
            return scan_fail(s, s->p, "unexpected end of input");
        char c = *s->p;
        if (c == '"') {
            int rc = skip_string(s);
            if (rc)
                return rc;
        } else if (c == '{' || c == '[') {
            if (depth >= SKA_MAX_DEPTH)
                return scan_fail(s, s->p, "nesting too deep");
            stack[depth++] = c == '{' ? '}' : ']';
            s->p++;
        } else if (c == '}' || c == ']') {
            if (depth == 0 || stack[depth - 1] != c)
                return scan_fail(s, s->p, "mismatched bracket");
            depth--;
            s->p++;
        } else if (c == ',' || c == ':') {
            if (depth == 0)
                return scan_fail(s, s->p, "unexpected separator");
            s->p++;
        } else if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' ||
                   c == 'E' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            while (s->p < s->e && ((*s->p >= '0' && *s->p <= '9') || *s->p == '-' ||
                                   *s->p == '+' || *s->p == '.' || *s->p == 'e' || *s->p == 'E' ||
                                   (*s->p >= 'a' && *s->p <= 'z') ||
                                   (*s->p >= 'A' && *s->p <= 'Z')))
                s->p++;
        } else {
            return scan_fail(s, s->p, "unexpected character");
        }
    } while (depth > 0);
    return 0;
}

typedef struct member {
    const char *key;     /* points into text, after the quote */
    size_t klen;
    const char *val;
    size_t vlen;
} member;

/* Scan the top-level object into members[]. */
static int scan_top(scan *s, member **out, size_t *nout)
{
    member *m = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    *nout = 0;
    skip_ws(s);
    if (s->p >= s->e || *s->p != '{')
        return scan_fail(s, s->p, "expected a JSON object");
    s->p++;
    skip_ws(s);
    if (s->p < s->e && *s->p == '}') {
        s->p++;
        goto tail;
    }
    for (;;) {
        skip_ws(s);
        if (s->p >= s->e || *s->p != '"') {
            free(m);
            return scan_fail(s, s->p, "expected a member name");
        }
        const char *k = s->p + 1;
        int rc = skip_string(s);
        if (rc) {
            free(m);
            return rc;
        }
        size_t klen = (size_t)(s->p - 1 - k);
        skip_ws(s);
        if (s->p >= s->e || *s->p != ':') {
            free(m);
            return scan_fail(s, s->p, "expected ':'");
        }
        s->p++;
        skip_ws(s);
        const char *v = s->p;
        if ((rc = skip_value(s))) {
            free(m);
            return rc;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            member *nm = pm_realloc_array(m, cap, sizeof *m);
            if (!nm) {
                free(m);
                return pm_error_set(s->err, PM_ENOMEM, "%s: out of memory", s->path);
            }
            m = nm;
        }
        m[n++] = (member){k, klen, v, (size_t)(s->p - v)};
        skip_ws(s);
        if (s->p < s->e && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->e && *s->p == '}') {
            s->p++;
            break;
        }
        free(m);
        return scan_fail(s, s->p, "expected ',' or '}'");
    }
tail:
    skip_ws(s);
    if (s->p < s->e && *s->p != '\0') {
        free(m);
        return scan_fail(s, s->p, "trailing characters after the top-level object");
    }
    *out = m;
    *nout = n;
    return 0;
}

/* --- one host --------------------------------------------------------------- */

static cJSON *parse_span(scan *s, const char *val, size_t vlen, int *rc)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(val, vlen, &end, 0);
    *rc = 0;
    if (!j)
        *rc = scan_fail(s, end && end >= val && end <= val + vlen ? end : val, "malformed JSON");
    return j;
}

static double num_of(const cJSON *v)
{
    if (cJSON_IsNumber(v))
        return v->valuedouble;
    double d;
    if (cJSON_IsString(v) && pm_parse_double(v->valuestring, &d) == 0)
        return d;
    return NAN;
}

typedef struct colbuf {
    pm_column col;
    const cJSON *arr;
} colbuf;

static int add_col(colbuf **cols, size_t *n, size_t *cap, const char *name, const char *unit,
                   const char *group, int kind, const cJSON *arr)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 32;
        colbuf *nc = pm_realloc_array(*cols, *cap, sizeof **cols);
        if (!nc)
            return PM_ENOMEM;
        *cols = nc;
    }
    colbuf *c = &(*cols)[(*n)++];
    memset(c, 0, sizeof *c);
    snprintf(c->col.name, sizeof c->col.name, "%s", name);
    snprintf(c->col.unit, sizeof c->col.unit, "%s", unit);
    snprintf(c->col.group, sizeof c->col.group, "%s", group);
    c->col.kind = (uint8_t)kind;
    c->col.type = PM_F64;
    c->arr = arr;
    return 0;
}

static int convert_host(const char *path, const char *name, const cJSON *h, pm_profile **out,
                        pm_error *err)
{
    *out = NULL;
    if (!cJSON_IsObject(h))
        return pm_error_set(err, PM_EFORMAT, "%s: host %s: expected an object", path, name);
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(h, "time_stamps");
    if (!cJSON_IsArray(ts))
        return pm_error_set(err, PM_EFORMAT, "%s: host %s: time_stamps: missing or not a list",
                            path, name);
    size_t n = (size_t)cJSON_GetArraySize(ts);
    if (n > SKA_MAX_SAMPLES)
        return pm_error_set(err, PM_ELIMIT, "%s: host %s: time_stamps: too many samples", path,
                            name);
    colbuf *cols = NULL;
    size_t ncols = 0, cap = 0;
    int rc = 0;
    for (size_t k = 0; k < SKA_NMAP && !rc; k++) {
        const struct ska_map *m = &SKA_MAP[k];
        const cJSON *parent = m->group ? cJSON_GetObjectItemCaseSensitive(h, m->group) : h;
        const cJSON *arr = cJSON_IsObject(parent) ? cJSON_GetObjectItemCaseSensitive(parent, m->field)
                                                  : NULL;
        if (!arr)
            continue;
        if (!cJSON_IsArray(arr)) {
            free(cols);
            return pm_error_set(err, PM_EFORMAT, "%s: host %s: %s%s%s: expected a list", path,
                                name, m->group ? m->group : "", m->group ? "." : "", m->field);
        }
        if (cJSON_GetArraySize(arr) == 0)
            continue;
        rc = add_col(&cols, &ncols, &cap, m->column, m->unit, m->cgroup, m->kind, arr);
    }
    /* RAPL: every domain present ("package-0", "dram-1", "psys"...) without a
     * fixed list, so new domains need no change here.  SKA does not record
     * max_energy_range_uj, so the wrap is unknown (0). */
    const cJSON *rapl = cJSON_GetObjectItemCaseSensitive(h, "rapl_powercap");
    const cJSON *d;
    if (cJSON_IsObject(rapl))
        cJSON_ArrayForEach(d, rapl) {
            if (rc)
                break;
            if (!cJSON_IsArray(d) || cJSON_GetArraySize(d) == 0 || !d->string ||
                strlen(d->string) > 80)
                continue;
            char cname[96];
            snprintf(cname, sizeof cname, "rapl.%s", d->string);
            rc = add_col(&cols, &ncols, &cap, cname, "uJ", "rapl", PM_COUNTER, d);
        }
    if (rc) {
        free(cols);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    }
    pm_profile *p = pm_profile_new(path, PM_FMT_SKA);
    pm_column *plain = pm_alloc_array(ncols ? ncols : 1, sizeof *plain);
    if (!p || !plain) {
        free(plain);
        free(cols);
        pm_profile_free(p);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    }
    for (size_t c = 0; c < ncols; c++)
        plain[c] = cols[c].col;
    if (pm_profile_set_columns(p, plain, ncols) || pm_profile_reserve(p, n ? n : 1)) {
        free(plain);
        free(cols);
        pm_profile_free(p);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    }
    free(plain);
    snprintf(p->info.host, sizeof p->info.host, "%s", name);
    snprintf(p->info.sampler, sizeof p->info.sampler, "ska-perfmon");
    snprintf(p->info.scheduler, sizeof p->info.scheduler, "unknown");
    p->n = n;
    size_t i = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, ts) {
        double sec = num_of(t);
        /* A timestamp that is not a number cannot be placed: mark it so the
         * analyser drops it as non-increasing. */
        if (!isfinite(sec) || fabs(sec) > 9.2e9)
            p->t_wall_ns[i] = INT64_MIN;
        else
            p->t_wall_ns[i] = (int64_t)llround(sec * 1e9);
        p->t_mono_ns[i] = 0;
        i++;
    }
    if (n > 1)
        p->info.interval_ns = (p->t_wall_ns[n - 1] - p->t_wall_ns[0]) / (int64_t)(n - 1);
    p->info.start_wall_ns = n ? p->t_wall_ns[0] : 0;
    for (size_t c = 0; c < ncols; c++) {
        double *v = p->values[c];
        size_t k = 0;
        const cJSON *x;
        cJSON_ArrayForEach(x, cols[c].arr) {
            if (k >= n)
                break;
            v[k++] = num_of(x);
        }
        size_t len = (size_t)cJSON_GetArraySize(cols[c].arr);
        if (len < n)
            (void)pm_profile_add_warning(p, "%s: host %s: %s: %zu values for %zu time stamps, padded with NaN",
                                         path, name, cols[c].col.name, len, n);
        else if (len > n)
            (void)pm_profile_add_warning(p, "%s: host %s: %s: %zu values for %zu time stamps, truncated",
                                         path, name, cols[c].col.name, len, n);
        for (; k < n; k++)
            v[k] = NAN;
    }
    free(cols);
    *out = p;
    return 0;
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

static int member_is(const member *m, const char *key)
{
    return m->klen == strlen(key) && memcmp(m->key, key, m->klen) == 0;
}

/* Host name from a member key: JSON escapes are decoded by cJSON on a tiny
 * document so that names with escapes come out right. */
static int key_name(const member *m, char *out, size_t cap)
{
    char buf[600];
    if (m->klen + 3 > sizeof buf)
        return -1;
    buf[0] = '"';
    memcpy(buf + 1, m->key, m->klen);
    buf[m->klen + 1] = '"';
    buf[m->klen + 2] = 0;
    cJSON *j = cJSON_Parse(buf);
    if (!cJSON_IsString(j) || strlen(j->valuestring) >= cap || !*j->valuestring) {
        cJSON_Delete(j);
        return -1;
    }
    memcpy(out, j->valuestring, strlen(j->valuestring) + 1);
    cJSON_Delete(j);
    return 0;
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

int pm_ska_decode(const char *path, const char *text, size_t len, pm_profile ***out,
                  size_t *nout, pm_error *err)
{
    *out = NULL;
    *nout = 0;
    scan s = {path, text, text, text + len, err};
    member *mem = NULL;
    size_t nmem = 0;
    int rc = scan_top(&s, &mem, &nmem);
    if (rc)
        return rc;
    pm_profile **list = NULL;
    size_t nlist = 0;
    const member *names = NULL, *stamps = NULL;
    for (size_t i = 0; i < nmem; i++) {
        if (member_is(&mem[i], "host_names"))
            names = &mem[i];
        else if (member_is(&mem[i], "time_stamps"))
            stamps = &mem[i];
    }
    if (stamps) {
        /* A per-host file: the object itself is the host. */
        cJSON *h = parse_span(&s, text, len, &rc);
        if (!h)
            goto fail;
        char name[256];
        const cJSON *hn = cJSON_GetObjectItemCaseSensitive(h, "host_name");
        if (!cJSON_IsString(hn))
            hn = cJSON_GetObjectItemCaseSensitive(h, "hostname");
        if (cJSON_IsString(hn) && *hn->valuestring && strlen(hn->valuestring) < sizeof name)
            snprintf(name, sizeof name, "%s", hn->valuestring);
        else
            base_name(path, name, sizeof name);
        pm_profile *p = NULL;
        rc = convert_host(path, name, h, &p, err);
        cJSON_Delete(h);
        if (rc)
            goto fail;
        if (push_profile(&list, &nlist, p)) {
            pm_profile_free(p);
            rc = pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
            goto fail;
        }
    } else if (names) {
        cJSON *hn = parse_span(&s, names->val, names->vlen, &rc);
        if (!hn)
            goto fail;
        if (!cJSON_IsArray(hn) || cJSON_GetArraySize(hn) > SKA_MAX_HOSTS) {
            cJSON_Delete(hn);
            rc = pm_error_set(err, PM_EFORMAT, "%s: host_names: expected a list of names", path);
            goto fail;
        }
        const cJSON *x;
        cJSON_ArrayForEach(x, hn) {
            if (!cJSON_IsString(x) || !*x->valuestring || strlen(x->valuestring) >= 256) {
                rc = pm_error_set(err, PM_EFORMAT, "%s: host_names: expected non-empty strings",
                                  path);
                break;
            }
            const member *hm = NULL;
            char key[256];
            for (size_t i = 0; i < nmem && !hm; i++)
                if (key_name(&mem[i], key, sizeof key) == 0 && strcmp(key, x->valuestring) == 0)
                    hm = &mem[i];
            if (!hm) {
                rc = pm_error_set(err, PM_EFORMAT, "%s: host %s: listed in host_names but has no data",
                                  path, x->valuestring);
                break;
            }
            cJSON *h = parse_span(&s, hm->val, hm->vlen, &rc);
            if (!h)
                break;
            pm_profile *p = NULL;
            rc = convert_host(path, x->valuestring, h, &p, err);
            cJSON_Delete(h);
            if (rc)
                break;
            if (push_profile(&list, &nlist, p)) {
                pm_profile_free(p);
                rc = pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
                break;
            }
        }
        cJSON_Delete(hn);
        if (rc)
            goto fail;
    } else {
        free(mem);
        return pm_error_set(err, PM_ENOENT, "%s: JSON without host_names or time_stamps: not SKA perfmon output",
                            path);
    }
    free(mem);
    *out = list;
    *nout = nlist;
    return 0;
fail:
    free(mem);
    free_list(list, nlist);
    return rc;
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
    int rc = pm_ska_decode(path, map, len, out, nout, err);
    munmap(map, len);
    return rc;
}
