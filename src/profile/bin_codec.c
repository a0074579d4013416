/* Sample encoding of binary profile versions 2 and 3 (bin_codec.h,
 * docs/format.md "Version 2 samples", "Version 3 samples"). */
#include "bin_codec.h"
#include "perfmon/invariant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/endian.h"
#include "perfmon/mem.h"

/* The low bit of each 2-bit code in a word of codes. */
#define LANES_LOW 0x5555555555555555ull

static const double P10[PM_FORM_MAXSCALE + 1] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

int pm_codec_init(pm_codec *c, const pm_column *cols, size_t ncols, int decoder, int version)
{
    memset(c, 0, sizeof *c);
    c->nib = version >= 3;
    c->col = pm_alloc_array(ncols ? ncols : 1, sizeof *c->col);
    if (!c->col)
        return PM_ENOMEM;
    c->ncols = ncols;
    if (c->nib && decoder) {
        /* A record's lengths (ceil(ncols / 2) bytes) and numbers (8 bytes
         * each at most), and 16 bytes to read past them. */
        size_t nt = 0;
        if (pm_mul_size(ncols, 9, &nt) || nt > SIZE_MAX - 32 || !(c->tail = malloc(nt + 32))) {
            pm_codec_free(c);
            return PM_ENOMEM;
        }
    }
    if (c->nib && !decoder) {
        c->num = pm_alloc_array(ncols ? ncols : 1, sizeof *c->num);
        c->nform = pm_alloc_array(ncols ? ncols : 1, sizeof *c->nform);
        if (!c->num || !c->nform) {
            pm_codec_free(c);
            return PM_ENOMEM;
        }
    }
    if (decoder) {
        size_t nx = 0, nr = 0, n1 = ncols ? ncols : 1;
        c->nw = (ncols + 31) / 32;
        if (pm_mul_size(n1, PM_CODEC_BATCH, &nx) == 0 && pm_mul_size(n1, 3, &nr) == 0) {
            c->cw = pm_alloc_array(c->nw ? c->nw : 1, sizeof *c->cw);
            c->x = calloc(nx, sizeof *c->x);
            c->fm = pm_alloc_array(nx, sizeof *c->fm);
            c->none = pm_alloc_array(c->nw ? c->nw : 1, sizeof *c->none);
            c->rn = calloc(nr, sizeof *c->rn);
        }
        if (!c->cw || !c->x || !c->fm || !c->none || !c->rn) {
            pm_codec_free(c);
            return PM_ENOMEM;
        }
    }
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
    free(c->cw);
    free(c->x);
    free(c->fm);
    free(c->none);
    free(c->rn);
    free(c->num);
    free(c->nform);
    free(c->tail);
    c->tail = NULL;
    c->num = NULL;
    c->nform = NULL;
    c->col = NULL;
    c->cw = c->x = c->none = c->rn = NULL;
    c->fm = NULL;
}

/* Every column's form is none (the decoder's pass 1). */
static void reset_none(pm_codec *c)
{
    for (size_t k = 0; k < c->nw; k++) {
        size_t lanes = c->ncols - 32 * k < 32 ? c->ncols - 32 * k : 32;
        c->none[k] = LANES_LOW & (lanes == 32 ? ~0ull : (1ull << (2 * lanes)) - 1);
    }
}

void pm_codec_reset(pm_codec *c)
{
    for (size_t i = 0; i < c->ncols; i++) {
        c->col[i].m = c->col[i].d = 0;
        c->col[i].form = PM_FORM_NONE;
    }
    c->mono = c->mono_d = c->off = 0;
    if (c->none)
        reset_none(c);
}

size_t pm_codec_max_payload(size_t ncols)
{
    /* Two time varints, the codes, and per value an escape byte and at
     * most ten varint bytes (version 3: a form byte, half a length byte
     * and eight bytes); then the 8 bytes that version 3's last number
     * may be stored with. */
    return 28 + (ncols + 3) / 4 + 11 * ncols;
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

/* v as m / 10^k, exactly (the same bits back), or 0. */
static int as_int(double v, unsigned k, uint64_t *m)
{
    double s = v * P10[k];
    if (!(s >= -9007199254740992.0 && s <= 9007199254740992.0))
        return 0; /* also NaN */
    int64_t i = (int64_t)(s < 0 ? s - 0.5 : s + 0.5);
    double back = k ? (double)i / P10[k] : (double)i;
    if (pm_f64_bits(back) != pm_f64_bits(v))
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

/* Bytes of v as a version 3 number: 0 for 0, up to 8. */
static inline unsigned num_len(uint64_t v)
{
    return v ? (unsigned)(71 - __builtin_clzll(v)) / 8 : 0;
}

/* A number of code 2 or 3 (with its form byte for code 3, else -1): a
 * varint after the form byte (version 2, raw: 8 bytes), or kept for the
 * record's end (version 3). */
static inline unsigned char *put_num(pm_codec *c, unsigned char *p, size_t *k, size_t *f, int form,
                                     uint64_t v)
{
    if (c->nib) {
        if (form >= 0)
            c->nform[(*f)++] = (uint8_t)form;
        c->num[(*k)++] = v;
        return p;
    }
    if (form >= 0)
        *p++ = (unsigned char)form;
    if (form == PM_FORM_RAW) {
        pm_put_u64(p, v);
        return p + 8;
    }
    return put_varint(p, v);
}

/* Version 3's end of a record: the form bytes, the lengths (two a byte,
 * low nibble first), the numbers. */
static unsigned char *put_nums(const pm_codec *c, unsigned char *p, size_t k, size_t f)
{
    memcpy(p, c->nform, f);
    p += f;
    unsigned char *len = p;
    memset(len, 0, (k + 1) / 2);
    p += (k + 1) / 2;
    for (size_t i = 0; i < k; i++) {
        unsigned n = num_len(c->num[i]);
        len[i / 2] |= (unsigned char)(n << (4 * (i % 2)));
        pm_put_u64(p, c->num[i]); /* pm_codec_max_payload leaves 8 bytes */
        p += n;
    }
    return p;
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
    size_t ncodes = (c->ncols + 3) / 4, k = 0, f = 0;
    memset(codes, 0, ncodes);
    p += ncodes;
    for (size_t i = 0; i < c->ncols; i++) {
        if (!(present[i / 8] >> (i % 8) & 1))
            continue; /* code 0: not recorded; the state stays */
        pm_codec_col *s = &c->col[i];
        uint64_t m;
        int form;
        if (!s->u64 && s->form != PM_FORM_NONE && pm_f64_bits(vals[i].f) == s->bits &&
            (!s->counter || s->form == PM_FORM_RAW || s->d == 0)) {
            set_code(codes, i, 1); /* the same value, and no change expected */
            continue;
        }
        s->bits = pm_f64_bits(vals[i].f);
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
                varint_len(pm_f64_bits(vals[i].f) ^ s->m) > 1 + varint_len(zz(m)))
                form = s->hint;
        } else {
            form = find_scale(vals[i].f, &m);
            if (form >= 0)
                s->hint = (uint8_t)form;
        }
        if (form < 0) {
            uint64_t bits = pm_f64_bits(vals[i].f);
            if (s->form == PM_FORM_RAW) {
                uint64_t x = bits ^ s->m;
                set_code(codes, i, x ? 2 : 1);
                if (x)
                    p = put_num(c, p, &k, &f, -1, x);
            } else {
                set_code(codes, i, 3);
                p = put_num(c, p, &k, &f, PM_FORM_RAW, bits);
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
                p = put_num(c, p, &k, &f, -1, zz(x));
        } else {
            set_code(codes, i, 3);
            p = put_num(c, p, &k, &f, form, zz(m));
            s->form = (uint8_t)form;
            s->d = 0;
        }
        s->m = m;
    }
    if (c->nib)
        p = put_nums(c, p, k, f);
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

/* A varint whose bytes may be read up to lim (lim >= end: the bytes of
 * the file past the payload): one load, the first byte without its high
 * bit ends it, and the 7-bit groups are packed in three steps, without a
 * branch on its length. */
static inline int get_varint_lim(const unsigned char **pp, const unsigned char *end,
                                 const unsigned char *lim, uint64_t *v)
{
    const unsigned char *p = *pp;
    if (p < end && *p < 0x80) { /* one byte: a steady clock's change */
        *v = *p;
        *pp = p + 1;
        return 0;
    }
    if (lim - p >= 8) {
        uint64_t w = pm_get_u64(p);
        uint64_t stop = ~w & 0x8080808080808080ull;
        if (stop) {
            unsigned bits = (unsigned)__builtin_ctzll(stop) + 1;
            if (bits / 8 > (size_t)(end - p))
                return -1;
            uint64_t x = w & (~0ull >> (64 - bits));
            x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
            x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
            x = ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
            *v = x;
            *pp = p + bits / 8;
            return 0;
        }
    }
    return get_varint(pp, end, v);
}

/* Code 3 in pass 1: the form byte and the new m of column col. */
static int parse_new_form(pm_codec *c, size_t col, const unsigned char **pp,
                          const unsigned char *end, size_t slot)
{
    if (*pp == end)
        return -1;
    unsigned f = *(*pp)++;
    uint64_t m;
    if (f <= PM_FORM_MAXSCALE && (!c->col[col].u64 || f == 0)) {
        if (get_varint(pp, end, &m))
            return -1;
        m = unzz(m);
    } else if (f == PM_FORM_RAW && !c->col[col].u64) {
        if (end - *pp < 8)
            return -1;
        m = pm_get_u64(*pp);
        *pp += 8;
    } else {
        return -1;
    }
    c->x[slot] = m;
    c->fm[slot] = (uint8_t)f;
    return 0;
}

/* The low len bytes of a word. */
static const uint64_t NIB_MASK[9] = {0,
                                     0xffull,
                                     0xffffull,
                                     0xffffffull,
                                     0xffffffffull,
                                     0xffffffffffull,
                                     0xffffffffffffull,
                                     0xffffffffffffffull,
                                     ~0ull};

/* The lanes of code word k that hold a column: not those past the last
 * column (the last code byte's padding). */
static inline uint64_t lanes_of(const pm_codec *c, size_t k)
{
    PM_ASSERT(32 * k < c->ncols); /* word k holds a column */
    size_t n = c->ncols - 32 * k;
    return n >= 32 ? ~0ull : (1ull << (2 * n)) - 1;
}

/* Code word k of a record's codes (32 columns, as in the record), the
 * padding lanes 0. */
static inline uint64_t code_word(const pm_codec *c, const unsigned char *codes, size_t k,
                                 const unsigned char *lim)
{
    PM_ASSERT(8 * k < (c->ncols + 3) / 4); /* word k lies in the codes */
    size_t left = (c->ncols + 3) / 4 - 8 * k;
    if (left >= 8)
        return pm_get_u64(codes + 8 * k);
    if (lim - codes >= (ptrdiff_t)(8 * k + 8)) /* one load, the bytes past the codes masked */
        return pm_get_u64(codes + 8 * k) & lanes_of(c, k);
    uint64_t w = 0;
    for (size_t i = 0; i < left; i++)
        w |= (uint64_t)codes[8 * k + i] << (8 * i);
    return w & lanes_of(c, k);
}

/* The number of bits set in x, whose bits are all in the low bit of a
 * 2-bit lane (LANES_LOW): without -mpopcnt, __builtin_popcountll is a
 * call. */
static inline size_t lanes_set(uint64_t x)
{
    x = (x & 0x3333333333333333ull) + (x >> 2 & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (size_t)((x * 0x0101010101010101ull) >> 56);
}

/* The bytes that the numbers of 8 length bytes take (a word, 16
 * lengths), or -1 when a length is above 8: each byte's low and high
 * nibble apart, 7 added to each carries into the byte's bit 4 exactly
 * when it is 9 or more, and the bytes' sums (at most 16 each) add up in
 * the top byte of a multiply. */
static inline long nib_sum(uint64_t w)
{
    uint64_t lo = w & 0x0f0f0f0f0f0f0f0full, hi = w >> 4 & 0x0f0f0f0f0f0f0f0full;
    if (((lo + 0x0707070707070707ull) | (hi + 0x0707070707070707ull)) & 0x1010101010101010ull)
        return -1;
    return (long)(((lo + hi) * 0x0101010101010101ull) >> 56);
}

/* A row that pm_codec_parse refuses leaves nothing behind: its marks and
 * numbers go, so that pass 2 sees every other row as it was. */
static void drop_row(pm_codec *c, size_t r)
{
    PM_ASSERT(r < PM_CODEC_BATCH);
    uint64_t keep = ~(1ull << r);
    for (size_t col = 0; col < 3 * c->ncols; col++)
        c->rn[col] &= keep;
    for (size_t col = 0; col < c->ncols; col++)
        c->x[col * PM_CODEC_BATCH + r] = 0;
}

/* Version 3's codes, form bytes, lengths and numbers (pass 1), after the
 * times: every length is known before a number is read, so the numbers'
 * bytes are checked against the payload once, and each number is one
 * load and a mask. */
static int parse_nib(pm_codec *c, const unsigned char *p, const unsigned char *end,
                     const unsigned char *lim)
{
    /* The codec's fields in locals: the stores below go through uint64_t
     * pointers, which the compiler would otherwise take to change them. */
    const size_t ncols = c->ncols, nw = c->nw, r = c->nb, ncodes = (ncols + 3) / 4;
    uint64_t *const cw = c->cw, *const none = c->none, *const rn = c->rn;
    uint64_t *const x = c->x;
    if ((size_t)(end - p) < ncodes)
        return -1;
    const unsigned char *codes = p;
    p += ncodes;
    size_t nf = 0, nn = 0;
    const uint64_t row = 1ull << r;
    for (size_t k = 0; k < nw; k++) {
        uint64_t w = code_word(c, codes, k, lim);
        cw[k] = w;
        if (((w ^ w >> 1) & none[k]) != 0)
            return -1; /* codes 1 and 2 on a column whose form is none */
        uint64_t three = w & w >> 1 & LANES_LOW;
        if (three) {
            none[k] &= ~three;
            nf += lanes_set(three);
        }
        nn += lanes_set(w >> 1 & LANES_LOW);
    }
    size_t nl = (nn + 1) / 2;
    if ((size_t)(end - p) < nf + nl)
        return -1;
    const unsigned char *form = p, *len = p + nf;
    /* The lengths and the numbers: at most 8 bytes a number. */
    size_t rest = (size_t)(end - len);
    if (rest - nl > 8 * nn)
        return -1;
    /* With 16 bytes readable after them, the lengths are read 8 bytes at a
     * time and each number is one load; so that they are, those of the
     * file's last record are copied. */
    if ((size_t)(lim - len) < rest + 16) {
        memcpy(c->tail, len, rest);
        memset(c->tail + rest, 0, 16);
        len = c->tail;
    }
    size_t total = 0;
    for (size_t i = 0; i < nl; i += 8) {
        uint64_t w = pm_get_u64(len + i);
        if (nl - i < 8)
            w &= (1ull << (8 * (nl - i))) - 1;
        long t = nib_sum(w);
        if (t < 0)
            return -1; /* a length above 8 */
        total += (size_t)t;
    }
    const unsigned char *q = len + nl;
    if ((nn & 1 && len[nl - 1] >> 4) || total != rest - nl)
        return -1; /* the padding nibble not 0, bytes left or missing */
    uint64_t lw = 0;
    size_t i = 0;
    for (size_t k = 0; k < nw; k++) {
        uint64_t w = cw[k], num = w >> 1 & LANES_LOW;
        uint64_t zero = ~(w | w >> 1) & LANES_LOW & lanes_of(c, k);
        /* Lane b/2 of the word: column 32 k + b/2, its row r at
         * x[(32 k + b/2) * PM_CODEC_BATCH + r]. */
        uint64_t *xk = x + 32 * k * PM_CODEC_BATCH + r, *rk = rn + 32 * k;
        while (num) { /* codes 2 and 3 */
            size_t b = (unsigned)__builtin_ctzll(num);
            num &= num - 1;
            PM_ASSERT(32 * k + b / 2 < ncols); /* lanes_of masked the padding */
            if ((i & 15) == 0)
                lw = pm_get_u64(len + i / 2);
            unsigned n = (unsigned)lw & 15;
            lw >>= 4;
            i++;
            xk[b * (PM_CODEC_BATCH / 2)] = pm_get_u64(q) & NIB_MASK[n];
            q += n;
            rk[b / 2] |= row;
        }
        while (zero) { /* code 0: not recorded */
            size_t b = (unsigned)__builtin_ctzll(zero);
            zero &= zero - 1;
            rk[2 * ncols + b / 2] |= row;
        }
    }
    /* Code 3: the form bytes, in column order. */
    for (size_t k = 0; k < nw && nf; k++) {
        uint64_t three = cw[k] & cw[k] >> 1 & LANES_LOW;
        while (three) {
            size_t col = 32 * k + (unsigned)__builtin_ctzll(three) / 2,
                   slot = col * PM_CODEC_BATCH + r;
            three &= three - 1;
            unsigned f = *form++;
            if (f <= PM_FORM_MAXSCALE && (!c->col[col].u64 || f == 0))
                x[slot] = unzz(x[slot]);
            else if (f != PM_FORM_RAW || c->col[col].u64)
                return -1; /* not a form of this column */
            c->fm[slot] = (uint8_t)f;
            rn[ncols + col] |= row;
        }
    }
    return 0;
}

/* Version 2's codes and varints (pass 1), after the times. */
static int parse_varints(pm_codec *c, const unsigned char *p, const unsigned char *end,
                         const unsigned char *lim)
{
    size_t ncodes = (c->ncols + 3) / 4;
    if ((size_t)(end - p) < ncodes)
        return -1;
    const unsigned char *codes = p;
    p += ncodes;
    size_t r = c->nb;
    uint64_t row = 1ull << r, *rn = c->rn;
    for (size_t k = 0; k < c->nw; k++) {
        uint64_t w = code_word(c, codes, k, lim), lanes = lanes_of(c, k);
        /* Codes 1 and 2 on a column whose form is none: the same as, or a
         * change of, nothing. */
        if (((w ^ w >> 1) & c->none[k]) != 0)
            return -1;
        /* Visit the columns whose code is not 1: codes 2 and 3 carry
         * bytes, and pass 2 goes row by row only through these rows. */
        uint64_t not1 = w ^ LANES_LOW;
        uint64_t visit = (not1 | not1 >> 1) & LANES_LOW & lanes;
        while (visit) {
            unsigned bit = (unsigned)__builtin_ctzll(visit);
            visit &= visit - 1;
            size_t col = 32 * k + bit / 2, slot = col * PM_CODEC_BATCH + r;
            PM_ASSERT(col < c->ncols); /* lanes_of masked the padding */
            switch (w >> bit & 3) {
            case 2:
                if (get_varint_lim(&p, end, lim, &c->x[slot]))
                    return -1;
                rn[col] |= row;
                break;
            case 3:
                if (parse_new_form(c, col, &p, end, slot))
                    return -1;
                c->none[k] &= ~(1ull << bit);
                rn[col] |= row;
                rn[c->ncols + col] |= row;
                break;
            default: rn[2 * c->ncols + col] |= row; break; /* 0: not recorded */
            }
        }
    }
    return p != end ? -1 : 0;
}

int pm_codec_parse(pm_codec *c, int key, const unsigned char *p, size_t n, size_t avail,
                   int64_t *mono, int64_t *wall)
{
    const unsigned char *end = p + n, *lim = p + (avail > n ? avail : n);
    uint64_t a, b;
    if (key) {
        /* Only pass 1's state: the rows before this one in the batch
         * still need pass 2's.  Pass 2 needs no reset, since a column
         * whose code is 0 here is none and can only be coded 0 or 3
         * (a new form sets all of its state) until the next key. */
        c->mono = c->mono_d = c->off = 0;
        reset_none(c);
    }
    /* The caller flushes a full batch, and any batch before a key sample
     * (pm_codec_parse's contract): every row is a bit of a uint64_t. */
    PM_ASSERT(c->nb < PM_CODEC_BATCH);
    PM_ASSERT(!key || c->nb == 0);
    if (get_varint_lim(&p, end, lim, &a) || get_varint_lim(&p, end, lim, &b))
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
    if (c->nib ? parse_nib(c, p, end, lim) : parse_varints(c, p, end, lim)) {
        drop_row(c, c->nb);
        return -1;
    }
    c->nb++;
    return 0;
}

/* A column's state in pass 2. */
typedef struct col_run {
    uint64_t m, d, cmask;
    double last;
    unsigned form;
    int u64;
} col_run;

/* A column's value from its state in an integer form. */
static inline double int_value(uint64_t m, int u64, unsigned form)
{
    double v = u64 ? (double)m : (double)(int64_t)m;
    return form ? v / P10[form] : v;
}

static inline void fill(double *out, size_t n, double v)
{
    size_t r = 0;
    for (; r + 4 <= n; r += 4) {
        out[r] = v;
        out[r + 1] = v;
        out[r + 2] = v;
        out[r + 3] = v;
    }
    for (; r < n; r++)
        out[r] = v;
}

/* Do m + d, m + 2d, ..., m + n d (as int64) all lie within 2^53 of 0,
 * with 4 d, so that adding their doubles is exact? */
static inline int exact_steps(uint64_t m, uint64_t d, size_t n)
{
    /* x + 2^53 <= 2^54 (as uint64): |x| <= 2^53.  n <= 64 and |d| <= 2^51
     * keep n d from overflowing. */
    const uint64_t h = 1ull << 53;
    uint64_t top = m + d * n;
    return m + h <= 2 * h && d + h / 4 <= h / 2 && top + h <= 2 * h;
}

/* Two doubles: the compilers lower these to pairs of lanes (SSE2) or to
 * scalars. */
typedef double pm_v2d __attribute__((vector_size(16)));

/* out[r] = v + (r + 1) dv, where every such sum of integers is exact:
 * four chains in two pairs, so that no add waits on the one before. */
static inline void steps(double *out, size_t n, double v, double dv)
{
    size_t r = 0;
    pm_v2d a = {v + dv, v + 2 * dv}, b = {v + 3 * dv, v + 4 * dv}, d4 = {4 * dv, 4 * dv};
    for (; r + 4 <= n; r += 4) {
        memcpy(out + r, &a, sizeof a);
        memcpy(out + r + 2, &b, sizeof b);
        a += d4;
        b += d4;
    }
    double t = a[0];
    for (; r < n; r++) {
        out[r] = t;
        t += dv;
    }
}

/* Rows whose code is 1: the same value again, or a counter's steady
 * change (d is kept 0 for gauges and the raw form). */
static inline __attribute__((always_inline)) void run_ones(col_run *s, double *out, size_t n)
{
    if (n == 0)
        return;
    if (s->d == 0) {
        fill(out, n, s->last);
        return;
    }
    uint64_t m = s->m, d = s->d, span, top;
    /* A u64 counter that stays below 2^63 converts as an int64 (the same
     * value), without the branch on the top bit in each conversion. */
    int small = s->u64 && !__builtin_mul_overflow(d, n, &span) &&
                !__builtin_add_overflow(m, span, &top) && top >> 63 == 0;
    if (s->form == 0 && (!s->u64 || small) && exact_steps(m, d, n)) {
        steps(out, n, (double)(int64_t)m, (double)(int64_t)d);
        m += d * n;
    } else if (s->u64 && !small) {
        for (size_t r = 0; r < n; r++)
            out[r] = (double)(m += d);
    } else if (s->form == 0) {
        for (size_t r = 0; r < n; r++)
            out[r] = (double)(int64_t)(m += d);
    } else {
        double scale = P10[s->form];
        for (size_t r = 0; r < n; r++)
            out[r] = (double)(int64_t)(m += d) / scale;
    }
    s->m = m;
    s->last = out[n - 1];
}

/* A row whose code is 2; its number is taken (x left 0). */
static inline void row2(col_run *s, uint64_t *x, double *out)
{
    uint64_t v = *x;
    *x = 0;
    if (s->form == PM_FORM_RAW) {
        s->m ^= v;
        s->last = pm_bits_f64(s->m);
    } else {
        uint64_t t = s->d + unzz(v);
        s->m += t;
        s->d = t & s->cmask;
        s->last = int_value(s->m, s->u64, s->form);
    }
    *out = s->last;
}

/* Rows whose codes are 1 and 2 in an integer form, without a branch on
 * the code: a code 1 row's x is 0, which adds nothing to a gauge and
 * leaves a counter's change as it was. */
static inline __attribute__((always_inline)) void
dense_int(col_run *s, uint64_t *x, double *out, size_t n, int counter, int u64, int scaled)
{
    uint64_t m = s->m, d = s->d;
    double scale = P10[s->form];
    for (size_t r = 0; r < n; r++) {
        uint64_t t = unzz(x[r]);
        x[r] = 0;
        if (counter)
            m += d += t;
        else
            m += t;
        double v = u64 ? (double)m : (double)(int64_t)m;
        out[r] = scaled ? v / scale : v;
    }
    s->m = m;
    s->d = d;
}

/* Rows whose codes are 1 and 2, in the column's form (no code 3 among
 * them), each taking its number. */
static void dense(col_run *s, uint64_t *x, double *out, size_t n)
{
    if (s->form == PM_FORM_RAW) {
        uint64_t m = s->m;
        size_t r = 0;
        for (; r + 2 <= n; r += 2) {
            uint64_t m1 = m ^ x[r], m2 = m1 ^ x[r + 1];
            x[r] = x[r + 1] = 0;
            out[r] = pm_bits_f64(m1);
            out[r + 1] = pm_bits_f64(m2);
            m = m2;
        }
        if (r < n) {
            m ^= x[r];
            x[r] = 0;
            out[r] = pm_bits_f64(m);
        }
        s->m = m;
    } else if (s->u64) {
        if (s->cmask)
            dense_int(s, x, out, n, 1, 1, 0);
        else
            dense_int(s, x, out, n, 0, 1, 0);
    } else if (s->form == 0) {
        if (s->cmask)
            dense_int(s, x, out, n, 1, 0, 0);
        else
            dense_int(s, x, out, n, 0, 0, 0);
    } else {
        if (s->cmask)
            dense_int(s, x, out, n, 1, 0, 1);
        else
            dense_int(s, x, out, n, 0, 0, 1);
    }
    s->last = out[n - 1];
}

static inline uint64_t low_bits(size_t n)
{
    return n >= 64 ? ~0ull : (1ull << n) - 1;
}

/* The number of bits set (without -mpopcnt, __builtin_popcountll is a
 * call). */
static inline unsigned bits_set(uint64_t x)
{
    x -= x >> 1 & 0x5555555555555555ull;
    x = (x & 0x3333333333333333ull) + (x >> 2 & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

/* n rows whose codes are 1 and 2 (bit r of two: row r's is 2): where
 * many are 2, all in one loop; else a run of each stretch of 1s. */
static inline void rows12(col_run *s, uint64_t *x, double *out, size_t n, uint64_t two)
{
    if (!two) {
        run_ones(s, out, n);
        return;
    }
    if (two == low_bits(n) || ((two & (two - 1)) && 4 * bits_set(two) >= n)) {
        dense(s, x, out, n);
        return;
    }
    size_t at = 0;
    while (two) {
        size_t r = (size_t)__builtin_ctzll(two);
        two &= two - 1;
        run_ones(s, out + at, r - at);
        row2(s, x + r, out + r);
        at = r + 1;
    }
    run_ones(s, out + at, n - at);
}

void pm_codec_flush(pm_codec *c, double *const *dst)
{
    size_t nb = c->nb, nc = c->ncols;
    PM_ASSERT(nb <= PM_CODEC_BATCH);
    uint64_t *rn = c->rn, *r3 = rn + nc, *r0 = r3 + nc;
    for (size_t col = 0; col < nc; col++) {
        uint64_t ln = rn[col], l3 = r3[col], lz = r0[col];
        uint64_t *x = c->x + col * PM_CODEC_BATCH;
        double *out = dst[col];
        rn[col] = r3[col] = r0[col] = 0;
        if (!out) {
            /* Not decoded: its numbers are still taken. */
            for (; ln; ln &= ln - 1)
                x[__builtin_ctzll(ln)] = 0;
            continue;
        }
        if (nb == 0)
            continue;
        pm_codec_col *sc = &c->col[col];
        col_run s = {sc->m, sc->d, sc->counter ? ~0ull : 0, sc->last, sc->form, sc->u64};
        const uint8_t *fm = c->fm + col * PM_CODEC_BATCH;
        uint64_t two = ln & ~l3, sp = l3 | lz;
        /* Between the rows whose code is 0 or 3 (a key sample's row is one
         * of them in every column), stretches of codes 1 and 2 in one
         * form. */
        size_t at = 0;
        for (;;) {
            size_t r = sp ? (size_t)__builtin_ctzll(sp) : nb;
            if (r > at)
                rows12(&s, x + at, out + at, r - at, two >> at & low_bits(r - at));
            if (!sp)
                break;
            sp &= sp - 1;
            at = r + 1;
            if (!(l3 >> r & 1)) {
                out[r] = NAN; /* 0: not recorded; the state stays */
                continue;
            }
            s.form = fm[r]; /* 3: a new form */
            s.m = x[r];
            x[r] = 0;
            s.d = 0; /* also in the raw form, where code 1 leaves m */
            s.last = s.form == PM_FORM_RAW ? pm_bits_f64(s.m) : int_value(s.m, s.u64, s.form);
            out[r] = s.last;
        }
        sc->m = s.m;
        sc->d = s.d;
        sc->last = s.last;
        sc->form = (uint8_t)s.form;
    }
    c->nb = 0;
}
