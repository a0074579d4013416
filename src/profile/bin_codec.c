/* Sample encoding of binary profile version 2 (bin_codec.h,
 * docs/format.md "Version 2 samples"). */
#include "bin_codec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/endian.h"
#include "perfmon/mem.h"

/* The decoder's classes of column state (pm_codec_col.op). */
enum {
    OP_NONE,
    OP_RAW,
    OP_GAUGE_I,
    OP_GAUGE_U,
    OP_GAUGE_S, /* int64, u64, m / 10^k */
    OP_COUNTER_I,
    OP_COUNTER_U,
    OP_COUNTER_S
};

static const double P10[PM_FORM_MAXSCALE + 1] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

int pm_codec_init(pm_codec *c, const pm_column *cols, size_t ncols)
{
    memset(c, 0, sizeof *c);
    c->col = pm_alloc_array(ncols ? ncols : 1, sizeof *c->col);
    if (!c->col)
        return PM_ENOMEM;
    c->ncols = ncols;
    for (size_t i = 0; i < ncols; i++) {
        memset(&c->col[i], 0, sizeof c->col[i]);
        c->col[i].counter = cols[i].kind == PM_COUNTER;
        c->col[i].u64 = cols[i].type == PM_U64;
    }
    pm_codec_reset(c);
    return 0;
}

void pm_codec_free(pm_codec *c)
{
    free(c->col);
    c->col = NULL;
}

void pm_codec_reset(pm_codec *c)
{
    for (size_t i = 0; i < c->ncols; i++) {
        c->col[i].m = c->col[i].d = 0;
        c->col[i].form = PM_FORM_NONE;
        c->col[i].op = OP_NONE;
    }
    c->mono = c->mono_d = c->off = 0;
}

size_t pm_codec_max_payload(size_t ncols)
{
    /* Two time varints, the codes, and per value an escape byte and at
     * most ten varint bytes. */
    return 20 + (ncols + 3) / 4 + 11 * ncols;
}

static inline uint64_t zz(uint64_t x)
{
    return (x << 1) ^ (uint64_t) - (int64_t)(x >> 63);
}
static inline uint64_t unzz(uint64_t x)
{
    return (x >> 1) ^ (uint64_t) - (int64_t)(x & 1);
}

static inline unsigned char *put_varint(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static inline size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint64_t f64_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static inline double bits_f64(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* v as m / 10^k, exactly (the same bits back), or 0. */
static int as_int(double v, unsigned k, uint64_t *m)
{
    double s = v * P10[k];
    if (!(s >= -9007199254740992.0 && s <= 9007199254740992.0))
        return 0; /* also NaN */
    int64_t i = (int64_t)(s < 0 ? s - 0.5 : s + 0.5);
    double back = k ? (double)i / P10[k] : (double)i;
    if (f64_bits(back) != f64_bits(v))
        return 0; /* not that decimal, or -0.0 */
    *m = (uint64_t)i;
    return 1;
}

static int find_scale(double v, uint64_t *m)
{
    for (unsigned k = 0; k <= PM_FORM_MAXSCALE; k++)
        if (as_int(v, k, m))
            return (int)k;
    return -1;
}

static void set_code(unsigned char *codes, size_t c, unsigned code)
{
    codes[c / 4] |= (unsigned char)(code << (2 * (c % 4)));
}

size_t pm_codec_encode(pm_codec *c, int key, int64_t mono, int64_t wall, const pm_value *vals,
                       const uint8_t *present, unsigned char *out)
{
    unsigned char *p = out;
    uint64_t off = (uint64_t)wall - (uint64_t)mono;
    if (key)
        pm_codec_reset(c);
    if (key) {
        p = put_varint(p, zz((uint64_t)mono));
        p = put_varint(p, zz(off));
        c->mono_d = 0;
    } else {
        uint64_t d = (uint64_t)mono - (uint64_t)c->mono;
        p = put_varint(p, zz(d - (uint64_t)c->mono_d));
        p = put_varint(p, zz(off - (uint64_t)c->off));
        c->mono_d = (int64_t)d;
    }
    c->mono = mono;
    c->off = (int64_t)off;
    unsigned char *codes = p;
    size_t ncodes = (c->ncols + 3) / 4;
    memset(codes, 0, ncodes);
    p += ncodes;
    for (size_t i = 0; i < c->ncols; i++) {
        if (!(present[i / 8] >> (i % 8) & 1))
            continue; /* code 0: not recorded; the state stays */
        pm_codec_col *s = &c->col[i];
        uint64_t m;
        int form;
        if (!s->u64 && s->form != PM_FORM_NONE && f64_bits(vals[i].f) == s->bits &&
            (!s->counter || s->form == PM_FORM_RAW || s->d == 0)) {
            set_code(codes, i, 1); /* the same value, and no change expected */
            continue;
        }
        s->bits = f64_bits(vals[i].f);
        if (s->u64) {
            m = vals[i].u;
            form = 0;
        } else if (s->form <= PM_FORM_MAXSCALE && as_int(vals[i].f, s->form, &m)) {
            form = s->form;
        } else if (s->form == PM_FORM_RAW) {
            /* A true float: only the scale the column last had is tried
             * (searching all ten on every sample would cost the sampler
             * more than it saves), and the raw form is left only when
             * that is shorter. */
            form = -1;
            if (as_int(vals[i].f, s->hint, &m) &&
                varint_len(f64_bits(vals[i].f) ^ s->m) > 1 + varint_len(zz(m)))
                form = s->hint;
        } else {
            form = find_scale(vals[i].f, &m);
            if (form >= 0)
                s->hint = (uint8_t)form;
        }
        if (form < 0) {
            uint64_t bits = f64_bits(vals[i].f);
            if (s->form == PM_FORM_RAW) {
                uint64_t x = bits ^ s->m;
                set_code(codes, i, x ? 2 : 1);
                if (x)
                    p = put_varint(p, x);
            } else {
                set_code(codes, i, 3);
                *p++ = PM_FORM_RAW;
                pm_put_u64(p, bits);
                p += 8;
                s->form = PM_FORM_RAW;
            }
            s->m = bits;
            continue;
        }
        if (s->form == (unsigned)form) {
            uint64_t d = m - s->m, x = d;
            if (s->counter) {
                x = d - s->d;
                s->d = d;
            }
            set_code(codes, i, x ? 2 : 1);
            if (x)
                p = put_varint(p, zz(x));
        } else {
            set_code(codes, i, 3);
            *p++ = (unsigned char)form;
            p = put_varint(p, zz(m));
            s->form = (uint8_t)form;
            s->d = 0;
        }
        s->m = m;
    }
    return (size_t)(p - out);
}

static inline int get_varint(const unsigned char **pp, const unsigned char *end, uint64_t *v)
{
    const unsigned char *p = *pp;
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (p == end)
            return -1;
        unsigned b = *p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *v = x;
            *pp = p;
            return 0;
        }
    }
    return -1; /* more than ten bytes */
}

static inline double value_of(const pm_codec_col *s)
{
    if (s->u64)
        return (double)s->m;
    if (s->form == 0)
        return (double)(int64_t)s->m;
    return (double)(int64_t)s->m / P10[s->form];
}

int pm_codec_key_times(const unsigned char *p, size_t n, int64_t *mono, int64_t *wall)
{
    const unsigned char *end = p + n;
    uint64_t a, b;
    if (get_varint(&p, end, &a) || get_varint(&p, end, &b))
        return -1;
    *mono = (int64_t)unzz(a);
    *wall = (int64_t)(unzz(a) + unzz(b));
    return 0;
}

/* Varints of up to eight bytes without a loop when eight bytes remain:
 * one load, the first byte without its high bit ends it, and the 7-bit
 * groups are packed in three steps. */
static inline int get_varint_fast(const unsigned char **pp, const unsigned char *end, uint64_t *v)
{
    const unsigned char *p = *pp;
    if (p < end && *p < 0x80) {
        *v = *p;
        *pp = p + 1;
        return 0;
    }
    if (end - p >= 8) {
        uint64_t w = pm_get_u64(p);
        uint64_t stop = ~w & 0x8080808080808080ull;
        if (stop) {
            unsigned bytes = ((unsigned)__builtin_ctzll(stop) + 1) / 8;
            uint64_t x = bytes == 8 ? w : w & ((1ull << (8 * bytes)) - 1);
            x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
            x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
            x = ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
            *v = x;
            *pp = p + bytes;
            return 0;
        }
    }
    return get_varint(pp, end, v);
}

/* One column of a sample: its code, the column's state, where the value
 * goes, and the payload cursor.  Inlined eight times (two code bytes),
 * so that each of the eight jumps sees one column in eight and predicts
 * better. */
static inline __attribute__((always_inline)) int col_decode(pm_codec_col *s, unsigned code,
                                                            double *dst, const unsigned char **pp,
                                                            const unsigned char *end)
{
    uint64_t x;
    /* One jump on the code and the column's class. */
    switch (code << 3 | s->op) {
    case 0 << 3 | OP_NONE:
    case 0 << 3 | OP_RAW:
    case 0 << 3 | OP_GAUGE_I:
    case 0 << 3 | OP_GAUGE_U:
    case 0 << 3 | OP_GAUGE_S:
    case 0 << 3 | OP_COUNTER_I:
    case 0 << 3 | OP_COUNTER_U:
    case 0 << 3 | OP_COUNTER_S:
        *dst = NAN; /* not recorded */
        return 0;
    case 1 << 3 | OP_RAW:
    case 1 << 3 | OP_GAUGE_I:
    case 1 << 3 | OP_GAUGE_U:
    case 1 << 3 | OP_GAUGE_S:
        *dst = s->last; /* unchanged */
        return 0;
    /* Counters: the same change again. */
    case 1 << 3 | OP_COUNTER_I:
        s->m += s->d;
        *dst = s->last = (double)(int64_t)s->m;
        return 0;
    case 1 << 3 | OP_COUNTER_U:
        s->m += s->d;
        *dst = s->last = (double)s->m;
        return 0;
    case 1 << 3 | OP_COUNTER_S:
        s->m += s->d;
        *dst = s->last = (double)(int64_t)s->m / P10[s->form];
        return 0;
    case 2 << 3 | OP_RAW:
        if (get_varint_fast(pp, end, &x))
            return -1;
        s->m ^= x;
        *dst = s->last = bits_f64(s->m);
        return 0;
    case 2 << 3 | OP_GAUGE_I:
    case 2 << 3 | OP_GAUGE_U:
    case 2 << 3 | OP_GAUGE_S:
        if (get_varint_fast(pp, end, &x))
            return -1;
        s->m += unzz(x);
        *dst = s->last = value_of(s);
        return 0;
    case 2 << 3 | OP_COUNTER_I:
    case 2 << 3 | OP_COUNTER_U:
    case 2 << 3 | OP_COUNTER_S:
        if (get_varint_fast(pp, end, &x))
            return -1;
        s->d += unzz(x);
        s->m += s->d;
        *dst = s->last = value_of(s);
        return 0;
    case 1 << 3 | OP_NONE:
    case 2 << 3 | OP_NONE: return -1; /* a change of nothing */
    default: break;
    }
    if (*pp == end)
        return -1;
    x = *(*pp)++;
    if (x <= PM_FORM_MAXSCALE && (!s->u64 || x == 0)) {
        if (get_varint(pp, end, &s->m))
            return -1;
        s->m = unzz(s->m);
        s->d = 0;
        s->form = (uint8_t)x;
        s->op = (uint8_t)((s->counter ? OP_COUNTER_I : OP_GAUGE_I) + (s->u64 ? 1 : x ? 2 : 0));
        s->last = value_of(s);
    } else if (x == PM_FORM_RAW && !s->u64) {
        if (end - *pp < 8)
            return -1;
        s->m = pm_get_u64(*pp);
        *pp += 8;
        s->form = (uint8_t)x;
        s->op = OP_RAW;
        s->last = bits_f64(s->m);
    } else {
        return -1;
    }
    *dst = s->last;
    return 0;
}

int pm_codec_decode(pm_codec *c, int key, const unsigned char *p, size_t n, int64_t *mono,
                    int64_t *wall, double *const *values, size_t row)
{
    const unsigned char *end = p + n;
    uint64_t a, b;
    if (key)
        pm_codec_reset(c);
    if (get_varint(&p, end, &a) || get_varint(&p, end, &b))
        return -1;
    /* After the reset, a key sample's absolute times come out of the same
     * sums as a delta sample's. */
    uint64_t d = (uint64_t)c->mono_d + unzz(a);
    uint64_t m = (uint64_t)c->mono + d;
    uint64_t off = (uint64_t)c->off + unzz(b);
    c->mono = (int64_t)m;
    c->mono_d = key ? 0 : (int64_t)d;
    c->off = (int64_t)off;
    *mono = (int64_t)m;
    *wall = (int64_t)(m + off);
    size_t ncodes = (c->ncols + 3) / 4;
    if ((size_t)(end - p) < ncodes)
        return -1;
    const unsigned char *codes = p;
    p += ncodes;
    size_t i = 0;
    for (; i + 8 <= c->ncols; i += 8) {
        unsigned cb = (unsigned)codes[i / 4] | (unsigned)codes[i / 4 + 1] << 8;
        if (col_decode(&c->col[i], cb & 3, &values[i][row], &p, end) ||
            col_decode(&c->col[i + 1], cb >> 2 & 3, &values[i + 1][row], &p, end) ||
            col_decode(&c->col[i + 2], cb >> 4 & 3, &values[i + 2][row], &p, end) ||
            col_decode(&c->col[i + 3], cb >> 6 & 3, &values[i + 3][row], &p, end) ||
            col_decode(&c->col[i + 4], cb >> 8 & 3, &values[i + 4][row], &p, end) ||
            col_decode(&c->col[i + 5], cb >> 10 & 3, &values[i + 5][row], &p, end) ||
            col_decode(&c->col[i + 6], cb >> 12 & 3, &values[i + 6][row], &p, end) ||
            col_decode(&c->col[i + 7], cb >> 14, &values[i + 7][row], &p, end))
            return -1;
    }
    for (; i < c->ncols; i++)
        if (col_decode(&c->col[i], codes[i / 4] >> (2 * (i % 4)) & 3, &values[i][row], &p, end))
            return -1;
    return p == end ? 0 : -1;
}
