/* A profile as one byte string (pack.h): what a rank of perfmon-analyze
 * under mpirun sends to rank 0 (docs/analysis.md, "MPI"). */
#include "perfmon/pack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/endian.h"
#include "perfmon/mem.h"

#define PACK_MAGIC "PMPK"
#define PACK_VERSION 1
/* Bound of any one string: metadata JSON is the longest. */
#define PACK_MAX_STR PM_MAX_HEADER_BYTES

void pm_pack_u8(pm_buf *b, unsigned v)
{
    unsigned char c = (unsigned char)v;
    pm_buf_add(b, &c, 1);
}

void pm_pack_varint(pm_buf *b, uint64_t v)
{
    unsigned char t[10];
    size_t n = 0;
    while (v >= 0x80) {
        t[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    t[n++] = (unsigned char)v;
    pm_buf_add(b, t, n);
}

void pm_pack_str(pm_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    pm_pack_varint(b, n);
    if (n)
        pm_buf_add(b, s, n);
}

int pm_unpack_u8(const unsigned char *buf, size_t len, size_t *pos, unsigned *v)
{
    if (*pos >= len)
        return -1;
    *v = buf[(*pos)++];
    return 0;
}

int pm_unpack_varint(const unsigned char *buf, size_t len, size_t *pos, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*pos >= len)
            return -1;
        unsigned char c = buf[(*pos)++];
        if (shift == 63 && c > 1)
            return -1;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

void pm_pack_f64(pm_buf *b, double v)
{
    pm_pack_varint(b, pm_f64_bits(v));
}

int pm_unpack_f64(const unsigned char *buf, size_t len, size_t *pos, double *v)
{
    uint64_t u;
    if (pm_unpack_varint(buf, len, pos, &u))
        return -1;
    *v = pm_bits_f64(u);
    return 0;
}

int pm_unpack_str(const unsigned char *buf, size_t len, size_t *pos, size_t max, char **s)
{
    uint64_t n;
    *s = NULL;
    if (pm_unpack_varint(buf, len, pos, &n) || n > max || n > len - *pos)
        return -1;
    char *t = malloc((size_t)n + 1);
    if (!t)
        return -1;
    memcpy(t, buf + *pos, (size_t)n);
    t[n] = 0;
    if (memchr(t, 0, (size_t)n)) { /* a NUL inside would cut it short */
        free(t);
        return -1;
    }
    *pos += (size_t)n;
    *s = t;
    return 0;
}

static void put_i64(pm_buf *b, int64_t v)
{
    unsigned char t[8];
    pm_put_u64(t, (uint64_t)v);
    pm_buf_add(b, t, 8);
}

static int get_i64(const unsigned char *buf, size_t len, size_t *pos, int64_t *v)
{
    if (len - *pos < 8 || *pos > len)
        return -1;
    *v = (int64_t)pm_get_u64(buf + *pos);
    *pos += 8;
    return 0;
}

/* A string into a fixed array of cap bytes. */
static int get_fixed(const unsigned char *buf, size_t len, size_t *pos, char *dst, size_t cap)
{
    char *s;
    if (pm_unpack_str(buf, len, pos, cap - 1, &s))
        return -1;
    memcpy(dst, s, strlen(s) + 1);
    free(s);
    return 0;
}

static void put_strs(pm_buf *b, char *const *v, size_t n)
{
    pm_pack_varint(b, n);
    for (size_t i = 0; i < n; i++)
        pm_pack_str(b, v[i]);
}

static int get_strs(const unsigned char *buf, size_t len, size_t *pos, char ***v, size_t *n)
{
    uint64_t k;
    if (pm_unpack_varint(buf, len, pos, &k) || k > len - *pos)
        return -1;
    *v = calloc(k ? (size_t)k : 1, sizeof **v);
    if (!*v)
        return -1;
    for (*n = 0; *n < k; (*n)++)
        if (pm_unpack_str(buf, len, pos, PACK_MAX_STR, &(*v)[*n]))
            return -1;
    return 0;
}

/* n values of 8 bytes (int64_t or double), little-endian: every bit
 * pattern (NaNs included) comes back. */
static void put_arr(pm_buf *b, const void *v, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    pm_buf_add(b, v, n * 8);
#else
    const uint64_t *u = v;
    for (size_t i = 0; i < n && !b->oom; i++) {
        unsigned char t[8];
        pm_put_u64(t, u[i]);
        pm_buf_add(b, t, 8);
    }
#endif
}

static void get_arr(const unsigned char *src, void *v, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(v, src, n * 8);
#else
    uint64_t *u = v;
    for (size_t i = 0; i < n; i++)
        u[i] = pm_get_u64(src + 8 * i);
#endif
}

/* A column not decoded (unread) travels as such; a decoded one that is
 * already released (NULL) cannot be packed. */
static int col_read(const pm_profile *p, size_t c)
{
    return !(p->unread && p->unread[c]);
}

int pm_profile_pack(const pm_profile *p, pm_buf *b)
{
    pm_buf_add(b, PACK_MAGIC, 4);
    pm_pack_u8(b, PACK_VERSION);
    pm_pack_str(b, p->path);
    pm_pack_u8(b, (unsigned)p->format);
    const pm_profile_info *in = &p->info;
    pm_pack_str(b, in->host);
    pm_pack_str(b, in->job_id);
    pm_pack_str(b, in->scheduler);
    pm_pack_str(b, in->node_rank);
    pm_pack_str(b, in->user);
    pm_pack_str(b, in->command);
    pm_pack_str(b, in->sampler);
    pm_pack_str(b, in->run_id);
    put_i64(b, in->start_wall_ns);
    put_i64(b, in->start_mono_ns);
    put_i64(b, in->interval_ns);
    put_i64(b, in->sampler_pid);
    pm_pack_u8(b, p->host_long != NULL);
    if (p->host_long)
        pm_pack_str(b, p->host_long);
    pm_pack_u8(b, p->meta_json != NULL);
    if (p->meta_json)
        pm_pack_str(b, p->meta_json);
    pm_pack_varint(b, p->ncols);
    for (size_t c = 0; c < p->ncols; c++) {
        const pm_column *co = &p->cols[c];
        pm_pack_str(b, co->name);
        pm_pack_str(b, co->unit);
        pm_pack_str(b, co->group);
        pm_pack_u8(b, co->kind);
        pm_pack_u8(b, co->type);
        pm_pack_varint(b, co->wrap);
        pm_pack_u8(b, p->unread && p->unread[c]);
    }
    pm_pack_u8(b, p->has_end != 0);
    if (p->has_end) {
        const pm_profile_end *e = &p->end;
        put_i64(b, e->end_wall_ns);
        put_i64(b, e->end_mono_ns);
        pm_pack_varint(b, e->samples);
        pm_pack_varint(b, e->late);
        pm_pack_varint(b, e->missed);
        put_i64(b, e->self_cpu_ns);
        pm_pack_varint(b, e->self_maxrss_kb);
        put_i64(b, e->exit_status);
        pm_pack_str(b, e->reason);
    }
    put_strs(b, p->notes, p->nnotes);
    pm_pack_varint(b, p->bad_records);
    pm_pack_varint(b, p->skipped_bytes);
    put_strs(b, p->warnings, p->nwarnings);
    pm_pack_varint(b, p->n);
    for (size_t c = 0; c < p->ncols; c++)
        if (col_read(p, c) && !p->values[c] && p->n)
            return PM_EUSAGE;
    /* The samples, column by column as they lie in memory: rank 0 copies
     * them into place, where a coded form would cost it a decode per value
     * (as much as reading the file). */
    put_arr(b, p->t_mono_ns, p->n);
    put_arr(b, p->t_wall_ns, p->n);
    for (size_t c = 0; c < p->ncols; c++)
        if (col_read(p, c))
            put_arr(b, p->values[c], p->n);
    return b->oom ? PM_ENOMEM : 0;
}

int pm_profile_unpack(const char *what, const unsigned char *buf, size_t len, size_t *pos,
                      const pm_read_hint *hint, pm_profile **out, pm_error *err)
{
    *out = NULL;
    size_t at = *pos;
    const char *why = "truncated or malformed";
    pm_profile *p = NULL;
    char *s = NULL;
    unsigned u = 0, has = 0;
    uint64_t v = 0;
    pm_column *cols = NULL;
    unsigned char *unread = NULL;
    int rc = PM_EFORMAT;
#define NEED(x)       \
    do {              \
        if (x)        \
            goto bad; \
    } while (0)
    NEED(len < at || len - at < 5 || memcmp(buf + at, PACK_MAGIC, 4) != 0);
    at += 4;
    NEED(pm_unpack_u8(buf, len, &at, &u) || u != PACK_VERSION);
    NEED(pm_unpack_str(buf, len, &at, PACK_MAX_STR, &s) || pm_unpack_u8(buf, len, &at, &u));
    p = pm_profile_new(s, (int)u);
    free(s);
    s = NULL;
    if (!p) {
        rc = PM_ENOMEM;
        why = "out of memory";
        goto bad;
    }
    pm_profile_info *in = &p->info;
    NEED(get_fixed(buf, len, &at, in->host, sizeof in->host) ||
         get_fixed(buf, len, &at, in->job_id, sizeof in->job_id) ||
         get_fixed(buf, len, &at, in->scheduler, sizeof in->scheduler) ||
         get_fixed(buf, len, &at, in->node_rank, sizeof in->node_rank) ||
         get_fixed(buf, len, &at, in->user, sizeof in->user) ||
         get_fixed(buf, len, &at, in->command, sizeof in->command) ||
         get_fixed(buf, len, &at, in->sampler, sizeof in->sampler) ||
         get_fixed(buf, len, &at, in->run_id, sizeof in->run_id));
    NEED(get_i64(buf, len, &at, &in->start_wall_ns) || get_i64(buf, len, &at, &in->start_mono_ns) ||
         get_i64(buf, len, &at, &in->interval_ns) || get_i64(buf, len, &at, &in->sampler_pid));
    NEED(pm_unpack_u8(buf, len, &at, &has) ||
         (has && pm_unpack_str(buf, len, &at, PACK_MAX_STR, &p->host_long)));
    NEED(pm_unpack_u8(buf, len, &at, &has) ||
         (has && pm_unpack_str(buf, len, &at, PACK_MAX_STR, &p->meta_json)));
    NEED(pm_unpack_varint(buf, len, &at, &v) || v > PM_MAX_COLUMNS || v > len - at);
    size_t ncols = (size_t)v;
    cols = calloc(ncols ? ncols : 1, sizeof *cols);
    unread = calloc(ncols ? ncols : 1, 1);
    if (!cols || !unread) {
        rc = PM_ENOMEM;
        why = "out of memory";
        goto bad;
    }
    for (size_t c = 0; c < ncols; c++) {
        pm_column *co = &cols[c];
        unsigned kind, type, ur;
        NEED(get_fixed(buf, len, &at, co->name, sizeof co->name) ||
             get_fixed(buf, len, &at, co->unit, sizeof co->unit) ||
             get_fixed(buf, len, &at, co->group, sizeof co->group) ||
             pm_unpack_u8(buf, len, &at, &kind) || pm_unpack_u8(buf, len, &at, &type) ||
             pm_unpack_varint(buf, len, &at, &co->wrap) || pm_unpack_u8(buf, len, &at, &ur) ||
             kind > PM_COUNTER || type > PM_U64 || ur > 1);
        co->kind = (uint8_t)kind;
        co->type = (uint8_t)type;
        unread[c] = (unsigned char)ur;
    }
    if (pm_profile_set_columns(p, cols, ncols)) {
        rc = PM_ENOMEM;
        why = "out of memory";
        goto bad;
    }
    p->unread = unread;
    unread = NULL;
    NEED(pm_unpack_u8(buf, len, &at, &has) || has > 1);
    p->has_end = (int)has;
    if (has) {
        pm_profile_end *e = &p->end;
        int64_t st;
        NEED(get_i64(buf, len, &at, &e->end_wall_ns) || get_i64(buf, len, &at, &e->end_mono_ns) ||
             pm_unpack_varint(buf, len, &at, &e->samples) ||
             pm_unpack_varint(buf, len, &at, &e->late) ||
             pm_unpack_varint(buf, len, &at, &e->missed) ||
             get_i64(buf, len, &at, &e->self_cpu_ns) ||
             pm_unpack_varint(buf, len, &at, &e->self_maxrss_kb) || get_i64(buf, len, &at, &st) ||
             st < INT32_MIN || st > INT32_MAX ||
             get_fixed(buf, len, &at, e->reason, sizeof e->reason));
        e->exit_status = (int32_t)st;
    }
    NEED(get_strs(buf, len, &at, &p->notes, &p->nnotes));
    NEED(pm_unpack_varint(buf, len, &at, &v));
    p->bad_records = (size_t)v;
    NEED(pm_unpack_varint(buf, len, &at, &p->skipped_bytes));
    NEED(get_strs(buf, len, &at, &p->warnings, &p->nwarnings));
    /* The times and each decoded column: n values each. */
    NEED(pm_unpack_varint(buf, len, &at, &v));
    size_t n = (size_t)v, nread = 2, bytes = 0;
    for (size_t c = 0; c < ncols; c++)
        nread += !p->unread[c];
    NEED(pm_mul_size(n, 8, &bytes) || pm_mul_size(bytes, nread, &bytes) || bytes > len - at);
    if (n) {
        int r = hint ? pm_profile_reserve_block(p, n, hint) : pm_profile_reserve(p, n);
        if (r) {
            rc = PM_ENOMEM;
            why = "out of memory";
            goto bad;
        }
        get_arr(buf + at, p->t_mono_ns, n);
        at += n * 8;
        get_arr(buf + at, p->t_wall_ns, n);
        at += n * 8;
        for (size_t c = 0; c < ncols; c++)
            if (!p->unread[c]) {
                get_arr(buf + at, p->values[c], n);
                at += n * 8;
            }
    }
    p->n = n;
#undef NEED
    free(cols);
    *pos = at;
    *out = p;
    return 0;
bad:
    free(s);
    free(cols);
    free(unread);
    pm_profile_free(p);
    return pm_error_set(err, rc, "%s: offset %zu: packed profile %s", what, at, why);
}
