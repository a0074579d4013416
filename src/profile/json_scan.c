/* The streaming JSON scanner (see perfmon/json_scan.h for the interface and
 * the order of calls).
 *
 * One pass over the text with a cursor: pm_jscan_top finds the top-level
 * members by skipping their values (brackets and strings only, 16 bytes at
 * a time where they are plain), and the caller then reads the members it
 * wants with the finer steps (keys, numbers, literals).  Nothing is copied
 * or decoded; errors carry the line and column of the offending byte.
 */
#include "perfmon/json_scan.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "perfmon/mem.h"
#include "perfmon/invariant.h"
#include "perfmon/vec.h"

/* The cursor stays inside the text it may read: every step checks the
 * end before it moves, so text <= p <= e between calls. */
#define CURSOR_OK(s) PM_ASSERT((s)->text <= (s)->p && (s)->p <= (s)->e)

void pm_jscan_init(pm_jscan *s, const char *path, const char *text, size_t len, int release,
                   pm_error *err)
{
    *s = (pm_jscan){path, text, text, text + len, err, release, text};
}

/* Give back the pages of the mapping below `to` (whole pages only), so a
 * 1 GB file does not stay resident while later hosts are parsed.  Only for
 * pm_ska_read()'s read-only private mapping, where a dropped page is simply
 * read again from the file if touched. */
void pm_jscan_release(pm_jscan *s, const char *to)
{
    if (!s->release || to <= s->released)
        return;
    uintptr_t page = 4096;
    uintptr_t lo = ((uintptr_t)s->released + page - 1) & ~(page - 1);
    uintptr_t hi = (uintptr_t)to & ~(page - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
    s->released = to;
}

int pm_jscan_fail(pm_jscan *s, const char *at, const char *what)
{
    PM_ASSERT(s->text <= at && at <= s->e); /* a place in the text */
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

int pm_jscan_string(pm_jscan *s)
{
    CURSOR_OK(s);
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
            return pm_jscan_fail(s, s->p - 1, "control character in string");
        }
    }
    return pm_jscan_fail(s, start, "unterminated string");
}

/* Byte classes for skipping: most bytes of a document are "plain". */
enum { C_PLAIN = 0, C_QUOTE, C_OPEN, C_CLOSE, C_BAD };

static unsigned char byte_class(unsigned char c)
{
    if (c == '"')
        return C_QUOTE;
    if (c == '[' || c == '{')
        return C_OPEN;
    if (c == ']' || c == '}')
        return C_CLOSE;
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == ' ' ||
        c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':' || c == '-' || c == '+' ||
        c == '.')
        return C_PLAIN;
    return C_BAD;
}

static unsigned char CLASS[256];
static pthread_once_t class_once = PTHREAD_ONCE_INIT;

static void class_init(void)
{
    for (int c = 0; c < 256; c++)
        CLASS[c] = byte_class((unsigned char)c);
}

/* The first byte at or after p (before e) that is not plain.  Most of a
 * document is plain (numbers, separators, indentation), so on x86-64 it is
 * tested 16 bytes at a time (SSE2, part of the base instruction set); the
 * table decides the rest and elsewhere. */
#if defined(__SSE2__)
static const unsigned char *skip_plain(const unsigned char *p, const unsigned char *e)
{
    const __m128i zero_m1 = _mm_set1_epi8('0' - 1), nine_p1 = _mm_set1_epi8('9' + 1);
    const __m128i a_m1 = _mm_set1_epi8('a' - 1), z_p1 = _mm_set1_epi8('z' + 1);
    const __m128i lower = _mm_set1_epi8(0x20);
    const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n'), comma = _mm_set1_epi8(','),
                  dot = _mm_set1_epi8('.');
    while (e - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        /* signed compares: bytes from 0x80 up are negative, never plain */
        __m128i m = _mm_and_si128(_mm_cmpgt_epi8(x, zero_m1), _mm_cmplt_epi8(x, nine_p1));
        /* Lists of numbers are digits, spaces, newlines, commas and
         * points: those first, the whole class only where they are not
         * all (a number list in json.dump's layout is then 8 operations
         * per 16 bytes, not 22). */
        __m128i common =
            _mm_or_si128(_mm_or_si128(m, _mm_cmpeq_epi8(x, sp)),
                         _mm_or_si128(_mm_cmpeq_epi8(x, nl), _mm_or_si128(_mm_cmpeq_epi8(x, comma),
                                                                          _mm_cmpeq_epi8(x, dot))));
        if (_mm_movemask_epi8(common) == 0xFFFF) {
            p += 16;
            continue;
        }
        __m128i l = _mm_or_si128(x, lower);
        m = _mm_or_si128(m, _mm_and_si128(_mm_cmpgt_epi8(l, a_m1), _mm_cmplt_epi8(l, z_p1)));
        m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8(' ')));
        m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8('\n')));
        m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8(',')));
        m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8('.')));
        m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8('-')));
        m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8(':')));
        m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8('+')));
        m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8('\t')));
        m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8('\r')));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask != 0xFFFF)
            return p + __builtin_ctz(~mask);
        p += 16;
    }
    while (p < e && CLASS[*p] == C_PLAIN)
        p++;
    return p;
}
#else
static const unsigned char *skip_plain(const unsigned char *p, const unsigned char *e)
{
    while (p < e && CLASS[*p] == C_PLAIN)
        p++;
    return p;
}
#endif

/* Skip one JSON value, checking bracket nesting and strings only; scalars
 * are checked when a host object is parsed.  Plain bytes (digits, spaces,
 * separators) are skipped by a table lookup each: this pass reads the
 * whole document once. */
int pm_jscan_skip(pm_jscan *s)
{
    CURSOR_OK(s);
    char stack[PM_JSCAN_MAX_DEPTH];
    int depth = 0;
    pthread_once(&class_once, class_init);
    pm_jscan_ws(s);
    if (s->p >= s->e)
        return pm_jscan_fail(s, s->p, "unexpected end of input, expected a value");
    unsigned char k = CLASS[(unsigned char)*s->p];
    if (k == C_QUOTE)
        return pm_jscan_string(s);
    if (k != C_OPEN) {
        const char *start = s->p;
        while (s->p < s->e && CLASS[(unsigned char)*s->p] == C_PLAIN && *s->p != ',' &&
               *s->p != ':' && *s->p != ' ' && *s->p != '\t' && *s->p != '\n' && *s->p != '\r')
            s->p++;
        return s->p > start ? 0 : pm_jscan_fail(s, s->p, "unexpected character");
    }
    const unsigned char *p = (const unsigned char *)s->p, *e = (const unsigned char *)s->e;
    while (p < e) {
        switch (CLASS[*p]) {
        case C_PLAIN: p = skip_plain(p + 1, e); break;
        case C_QUOTE: {
            s->p = (const char *)p;
            int rc = pm_jscan_string(s);
            if (rc)
                return rc;
            p = (const unsigned char *)s->p;
            break;
        }
        case C_OPEN:
            if (depth >= PM_JSCAN_MAX_DEPTH)
                return pm_jscan_fail(s, (const char *)p, "nesting too deep");
            stack[depth++] = *p == '{' ? '}' : ']';
            p++;
            break;
        case C_CLOSE:
            if (depth == 0 || stack[depth - 1] != (char)*p)
                return pm_jscan_fail(s, (const char *)p, "mismatched bracket");
            depth--;
            p++;
            if (depth == 0) {
                s->p = (const char *)p;
                return 0;
            }
            break;
        default: return pm_jscan_fail(s, (const char *)p, "unexpected character");
        }
    }
    return pm_jscan_fail(s, (const char *)p, "unexpected end of input");
}

/* Scan the top-level object into members[]. */
int pm_jscan_top(pm_jscan *s, pm_jmember **out, size_t *nout)
{
    CURSOR_OK(s);
    pm_jmember *m = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    *nout = 0;
    pm_jscan_ws(s);
    if (s->p >= s->e || *s->p != '{')
        return pm_jscan_fail(s, s->p, "expected a JSON object");
    s->p++;
    pm_jscan_ws(s);
    if (s->p < s->e && *s->p == '}') {
        s->p++;
        goto tail;
    }
    for (;;) {
        pm_jscan_ws(s);
        if (s->p >= s->e || *s->p != '"') {
            free(m);
            return pm_jscan_fail(s, s->p, "expected a member name");
        }
        const char *k = s->p + 1;
        int rc = pm_jscan_string(s);
        if (rc) {
            free(m);
            return rc;
        }
        size_t klen = (size_t)(s->p - 1 - k);
        pm_jscan_ws(s);
        if (s->p >= s->e || *s->p != ':') {
            free(m);
            return pm_jscan_fail(s, s->p, "expected ':'");
        }
        s->p++;
        pm_jscan_ws(s);
        const char *v = s->p;
        if ((rc = pm_jscan_skip(s))) {
            free(m);
            return rc;
        }
        if (PM_VEC_RESERVE(m, cap, n + 1, 16) != 0) {
            free(m);
            return pm_error_set(s->err, PM_ENOMEM, "%s: out of memory", s->path);
        }
        m[n++] = (pm_jmember){k, klen, v, (size_t)(s->p - v)};
        pm_jscan_release(s, s->p);
        pm_jscan_ws(s);
        if (s->p < s->e && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->e && *s->p == '}') {
            s->p++;
            break;
        }
        free(m);
        return pm_jscan_fail(s, s->p, "expected ',' or '}'");
    }
tail:
    pm_jscan_ws(s);
    if (s->p < s->e && *s->p != '\0') {
        free(m);
        return pm_jscan_fail(s, s->p, "trailing characters after the top-level object");
    }
    *out = m;
    *nout = n;
    return 0;
}

static const double EXACT_POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The run of ASCII digits that starts at p, at most eight of them (p has
 * eight bytes to read): its length, and its value in *val.  One 8-byte
 * load: XOR with '0' maps exactly the digits to 0-9, the first byte that
 * is not one ends the run, the bytes after it are shifted out, and three
 * multiplications add the digits up (Lemire's 8-digit method). */
static inline unsigned digit_run(const char *p, uint64_t *val)
{
    uint64_t x;
    memcpy(&x, p, 8);
    uint64_t t = x ^ 0x3030303030303030u;
    uint64_t other = ((t + 0x7676767676767676u) | t) & 0x8080808080808080u;
    unsigned n = other ? (unsigned)__builtin_ctzll(other) >> 3 : 8;
    if (n == 0) {
        *val = 0;
        return 0;
    }
    t <<= 8 * (8 - n); /* the run's last digit in the lowest place */
    t = (t * 2561) >> 8 & 0x00FF00FF00FF00FFu;
    t = (t * 6553601) >> 16 & 0x0000FFFF0000FFFFu;
    *val = (t * 42949672960001u) >> 32;
    return n;
}

static const uint64_t POW10_U64[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

/* The common case of pm_jscan_number: at most 15 significant digits, at
 * most 22 after the point, no exponent.  Returns the end of the number
 * with its value in *out, or NULL to leave the number (and any error) to
 * the general path.  The value is the general path's, bit for bit: the
 * same mantissa and power of ten, divided once. */
static inline const char *plain_number(const char *p, const char *e, double *out)
{
    int neg = 0;
    if (p < e && *p == '-') {
        neg = 1;
        p++;
    }
    if (p >= e || (unsigned)((unsigned char)*p - '0') > 9)
        return NULL;
    uint64_t m = 0, v;
    unsigned d, n;
    int digits = 0, frac = 0;
    if (*p == '0') {
        p++; /* JSON: a leading 0 stands alone */
    } else {
        /* every digit is significant */
        while (e - p >= 8) {
            n = digit_run(p, &v);
            digits += (int)n;
            if (digits > 15)
                return NULL;
            m = m * POW10_U64[n] + v;
            p += n;
            if (n < 8)
                goto point;
        }
        while (p < e && (d = (unsigned char)*p - '0') <= 9) {
            if (++digits > 15)
                return NULL;
            m = m * 10 + d;
            p++;
        }
    }
point:
    if (p < e && *p == '.') {
        p++;
        if (p >= e || (unsigned)((unsigned char)*p - '0') > 9)
            return NULL;
        /* Leading zeros after the point are not significant: digit by
         * digit until the first other digit. */
        while (m == 0 && p < e && *p == '0') {
            frac++;
            p++;
        }
        while (e - p >= 8) {
            n = digit_run(p, &v);
            digits += (int)n;
            frac += (int)n;
            if (digits > 15 || frac > 22)
                return NULL;
            m = m * POW10_U64[n] + v;
            p += n;
            if (n < 8)
                goto exponent;
        }
        while (p < e && (d = (unsigned char)*p - '0') <= 9) {
            m = m * 10 + d;
            frac++;
            digits++;
            if (digits > 15 || frac > 22)
                return NULL;
            p++;
        }
    }
exponent:
    if (p < e && (*p == 'e' || *p == 'E'))
        return NULL;
    double x = frac ? (double)m / EXACT_POW10[frac] : (double)m;
    *out = neg ? -x : x;
    return p;
}

/* Parse one JSON number at s->p.  Integers and decimals with at most 15
 * significant digits and a small exponent are converted exactly
 * (mantissa and power of ten both exact doubles, one correctly rounded
 * operation); anything else goes to strtod.  The JSON grammar is checked. */
int pm_jscan_number(pm_jscan *s, double *out)
{
    CURSOR_OK(s);
    const char *fast = plain_number(s->p, s->e, out);
    if (fast) {
        s->p = fast;
        return 0;
    }
    const char *p = s->p, *e = s->e, *start = p;
    int neg = 0;
    if (p < e && *p == '-') {
        neg = 1;
        p++;
    }
    if (p >= e || *p < '0' || *p > '9')
        return pm_jscan_fail(s, start, "malformed JSON: expected a number");
    uint64_t m = 0;
    int digits = 0, frac = 0, exact = 1;
    if (*p == '0') {
        p++;
    } else {
        while (p < e && *p >= '0' && *p <= '9') {
            if (digits < 19)
                m = m * 10 + (uint64_t)(*p - '0');
            else
                exact = 0;
            digits += m != 0;
            p++;
        }
    }
    if (p < e && *p == '.') {
        p++;
        if (p >= e || *p < '0' || *p > '9')
            return pm_jscan_fail(s, p, "malformed JSON: expected a digit");
        while (p < e && *p >= '0' && *p <= '9') {
            if (digits < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                frac++;
                digits += m != 0;
            } else {
                exact = 0;
            }
            p++;
        }
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        exact = 0;
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        if (p >= e || *p < '0' || *p > '9')
            return pm_jscan_fail(s, p, "malformed JSON: expected an exponent");
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    if (exact && digits <= 15 && frac <= 22) {
        double v = frac ? (double)m / EXACT_POW10[frac] : (double)m;
        *out = neg ? -v : v;
    } else {
        char buf[128];
        size_t len = (size_t)(p - start);
        if (len >= sizeof buf)
            return pm_jscan_fail(s, start, "number too long");
        memcpy(buf, start, len);
        buf[len] = 0;
        *out = strtod(buf, NULL);
    }
    s->p = p;
    return 0;
}

size_t pm_jscan_plain_numbers(pm_jscan *s, double *dst, size_t cap, int *closed)
{
    CURSOR_OK(s);
    size_t k = 0;
    *closed = 0;
    while (k < cap) {
        const char *at = s->p;
        pm_jscan_ws(s);
        const char *end = plain_number(s->p, s->e, &dst[k]);
        if (!end) {
            s->p = at;
            break;
        }
        s->p = end;
        pm_jscan_ws(s);
        if (s->p < s->e && *s->p == ',') {
            s->p++;
            k++;
            continue;
        }
        if (s->p < s->e && *s->p == ']') {
            s->p++;
            k++;
            *closed = 1;
            break;
        }
        s->p = at; /* not followed by a separator: the caller's error */
        break;
    }
    return k;
}

int pm_jscan_literal(pm_jscan *s, const char *lit)
{
    CURSOR_OK(s);
    size_t n = strlen(lit);
    if ((size_t)(s->e - s->p) < n || memcmp(s->p, lit, n) != 0)
        return pm_jscan_fail(s, s->p, "malformed JSON: unexpected value");
    s->p += n;
    return 0;
}

/* Read a member name at s->p into key (truncated names never match). */
int pm_jscan_key(pm_jscan *s, char *key, size_t cap)
{
    CURSOR_OK(s);
    pm_jscan_ws(s);
    if (s->p >= s->e || *s->p != '"')
        return pm_jscan_fail(s, s->p, "malformed JSON: expected a member name");
    const char *k = s->p + 1;
    int rc = pm_jscan_string(s);
    if (rc)
        return rc;
    size_t len = (size_t)(s->p - 1 - k);
    if (len >= cap || memchr(k, '\\', len))
        len = 0; /* escaped or overlong names are not SKA fields */
    memcpy(key, k, len);
    key[len] = 0;
    pm_jscan_ws(s);
    if (s->p >= s->e || *s->p != ':')
        return pm_jscan_fail(s, s->p, "malformed JSON: expected ':'");
    s->p++;
    pm_jscan_ws(s);
    return 0;
}

/* After a member value: ',' (returns 1: more) or the closing '}' (0). */
int pm_jscan_next(pm_jscan *s, int *more)
{
    CURSOR_OK(s);
    pm_jscan_ws(s);
    if (s->p < s->e && *s->p == ',') {
        s->p++;
        *more = 1;
        return 0;
    }
    if (s->p < s->e && *s->p == '}') {
        s->p++;
        *more = 0;
        return 0;
    }
    return pm_jscan_fail(s, s->p, "malformed JSON: expected ',' or '}'");
}
