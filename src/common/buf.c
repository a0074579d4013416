/* Growable byte buffers (buf.h): appending bytes, text, printf output, and
 * JSON strings and numbers; an allocation failure is kept in the buffer
 * (oom) and said once by whoever takes it, not at every append. */
#include "perfmon/buf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/invariant.h"
#include "perfmon/vec.h"

void pm_buf_init(pm_buf *b)
{
    memset(b, 0, sizeof *b);
}

void pm_buf_free(pm_buf *b)
{
    free(b->data);
    pm_buf_init(b);
}

void pm_buf_reset(pm_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

/* A buffer's invariant: its text and the NUL after it fit the capacity,
 * and data is NUL-terminated once it exists. */
static void buf_check(const pm_buf *b)
{
    PM_ASSERT(b->data ? b->len < b->cap && b->data[b->len] == '\0' : b->len == 0 && b->cap == 0);
}

static int grow(pm_buf *b, size_t extra)
{
    buf_check(b);
    if (b->oom)
        return -1;
    if (extra > SIZE_MAX / 2 - b->len) {
        b->oom = 1;
        return -1;
    }
    if (PM_VEC_RESERVE(b->data, b->cap, b->len + extra + 1, 256) != 0) {
        b->oom = 1;
        return -1;
    }
    return 0;
}

void pm_buf_add(pm_buf *b, const void *data, size_t len)
{
    if (grow(b, len) != 0)
        return;
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    buf_check(b);
}

void pm_buf_puts(pm_buf *b, const char *s)
{
    pm_buf_add(b, s, strlen(s));
}

void pm_buf_printf(pm_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        pm_buf_add(b, small, (size_t)n);
        return;
    }
    if (grow(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    buf_check(b);
}

/* Length of the valid UTF-8 sequence at s, or 0 when it is not valid. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if ((c & 0xe0) == 0xc0) {
        n = 2;
        min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        n = 3;
        min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        n = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    unsigned cp = c & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void pm_buf_json_str(pm_buf *b, const char *s)
{
    pm_buf_add(b, "\"", 1);
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            pm_buf_add(b, esc, 2);
            p++;
        } else if (c < 0x20 || c == 0x7f) {
            pm_buf_printf(b, "\\u%04x", c);
            p++;
        } else if (c < 0x80) {
            pm_buf_add(b, p, 1);
            p++;
        } else {
            size_t n = utf8_len(p);
            if (n == 0) {
                pm_buf_puts(b, "\xef\xbf\xbd");
                p++;
            } else {
                pm_buf_add(b, p, n);
                p += n;
            }
        }
    }
    pm_buf_add(b, "\"", 1);
}

void pm_buf_json_num(pm_buf *b, double v)
{
    if (!isfinite(v)) {
        pm_buf_puts(b, "null");
        return;
    }
    /* Range first: converting a double outside int64_t is undefined. */
    if (fabs(v) < 9.0e15 && v == (double)(int64_t)v) {
        pm_buf_printf(b, "%lld", (long long)v);
        return;
    }
    /* Shortest of %.15g/%.17g that reads back exactly. */
    char tmp[40];
    snprintf(tmp, sizeof tmp, "%.15g", v);
    if (strtod(tmp, NULL) != v)
        snprintf(tmp, sizeof tmp, "%.17g", v);
    pm_buf_puts(b, tmp);
}

char *pm_buf_take(pm_buf *b)
{
    char *d = b->data;
    if (!d)
        d = calloc(1, 1);
    pm_buf_init(b);
    return d;
}

int pm_utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = utf8_len(p);
        if (n == 0)
            return 0;
        p += n;
    }
    return 1;
}
