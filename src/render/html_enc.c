/* Encoders of the HTML report (html.h): names from input as HTML text and
 * as JSON inside a script element, base64, and SHA-256 for the
 * Content-Security-Policy's hashes of the file's own script and style.
 *
 * The series are packed as a byte shuffle and a zlib stream (RFC 1950),
 * which the browser's DecompressionStream("deflate") reads.
 *
 * SHA-256 is FIPS 180-4, section 6.2; the test vectors of FIPS 180-2
 * appendix B are tests/unit/test_html.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "perfmon/html.h"

/* Length of the UTF-8 sequence at s (1 to 4), or 0 when it is not a
 * valid one (overlong forms, surrogates and code points past U+10FFFF
 * refused); *cp is its code point. */
static size_t utf8_seq(const unsigned char *s, uint32_t *cp)
{
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        v = c & 0x1F;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        v = c & 0x0F;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        v = c & 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0; /* also the NUL that ends the string */
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return n;
}

void pm_html_text(pm_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        uint32_t cp;
        size_t n = utf8_seq(p, &cp);
        if (n == 0) {
            pm_buf_puts(b, "\xEF\xBF\xBD");
            p++;
            continue;
        }
        switch (cp) {
        case '&': pm_buf_puts(b, "&amp;"); break;
        case '<': pm_buf_puts(b, "&lt;"); break;
        case '>': pm_buf_puts(b, "&gt;"); break;
        case '"': pm_buf_puts(b, "&quot;"); break;
        case '\'': pm_buf_puts(b, "&#39;"); break;
        default:
            if ((cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0x7F)
                pm_buf_puts(b, "\xEF\xBF\xBD");
            else
                pm_buf_add(b, p, n);
        }
        p += n;
    }
}

void pm_html_json_str(pm_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    pm_buf_add(b, "\"", 1);
    while (*p) {
        uint32_t cp;
        size_t n = utf8_seq(p, &cp);
        if (n == 0) {
            pm_buf_puts(b, "\\ufffd");
            p++;
            continue;
        }
        char esc[8];
        switch (cp) {
        case '"': pm_buf_puts(b, "\\\""); break;
        case '\\': pm_buf_puts(b, "\\\\"); break;
        case '\n': pm_buf_puts(b, "\\n"); break;
        case '\t': pm_buf_puts(b, "\\t"); break;
        case '<':
        case '>':
        case '&':
        case 0x2028:
        case 0x2029:
            snprintf(esc, sizeof esc, "\\u%04x", (unsigned)cp);
            pm_buf_puts(b, esc);
            break;
        default:
            if (cp < 0x20 || cp == 0x7F) {
                snprintf(esc, sizeof esc, "\\u%04x", (unsigned)cp);
                pm_buf_puts(b, esc);
            } else {
                pm_buf_add(b, p, n);
            }
        }
        p += n;
    }
    pm_buf_add(b, "\"", 1);
}

void pm_base64(pm_buf *b, const void *data, size_t n)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = data;
    char out[4];
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        out[0] = al[(v >> 18) & 63];
        out[1] = al[(v >> 12) & 63];
        out[2] = i + 1 < n ? al[(v >> 6) & 63] : '=';
        out[3] = i + 2 < n ? al[v & 63] : '=';
        pm_buf_add(b, out, 4);
    }
}

/* ---- packing: byte shuffle and deflate ------------------------------------ */

void pm_html_shuffle(const void *in, size_t n, size_t elem, void *out)
{
    const unsigned char *p = in;
    unsigned char *o = out;
    size_t count = elem ? n / elem : 0;
    for (size_t j = 0; j < elem; j++)
        for (size_t i = 0; i < count; i++)
            *o++ = p[i * elem + j];
    /* a tail shorter than one element stays as it is */
    memcpy(o, p + count * elem, n - count * elem);
}

int pm_html_deflate(const void *in, size_t n, unsigned char **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    if (n > (size_t)UINT32_MAX)
        return PM_ELIMIT;
    uLong bound = compressBound((uLong)n);
    unsigned char *z = malloc(bound ? bound : 1);
    if (!z)
        return PM_ENOMEM;
    uLongf zl = bound;
    /* Level 6 (zlib's default): level 9 is about twice the time here for
     * 1-2 % less on the report's series. */
    if (compress2(z, &zl, in, (uLong)n, 6) != Z_OK) {
        free(z);
        return PM_ENOMEM;
    }
    *out = z;
    *outlen = zl;
    return 0;
}

/* ---- SHA-256 ------------------------------------------------------------ */

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void sha_block(uint32_t h[8], const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 =
            k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
}

void pm_sha256(const void *data, size_t n, uint8_t out[32])
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const unsigned char *p = data;
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        sha_block(h, p + i);
    /* The tail, 0x80, zeros and the length in bits (big-endian): one or
     * two blocks. */
    unsigned char last[128];
    size_t rest = n - i;
    memset(last, 0, sizeof last);
    if (rest)
        memcpy(last, p + i, rest);
    last[rest] = 0x80;
    size_t nb = rest + 1 + 8 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)n * 8;
    for (int k = 0; k < 8; k++)
        last[nb - 1 - k] = (unsigned char)(bits >> (8 * k));
    sha_block(h, last);
    if (nb == 128)
        sha_block(h, last + 64);
    for (int k = 0; k < 8; k++) {
        out[4 * k] = (uint8_t)(h[k] >> 24);
        out[4 * k + 1] = (uint8_t)(h[k] >> 16);
        out[4 * k + 2] = (uint8_t)(h[k] >> 8);
        out[4 * k + 3] = (uint8_t)h[k];
    }
}
