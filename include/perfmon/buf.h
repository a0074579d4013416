/* buf.h - a growable byte buffer with JSON-aware appenders.
 *
 * Used where perfmon writes JSON without a JSON library (the sampler links
 * libc only).  A buffer that failed to grow remembers it (b->oom) and
 * ignores further appends, so callers check once at the end.
 */
#ifndef PERFMON_BUF_H
#define PERFMON_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/error.h"

typedef struct pm_buf {
    char *data; /* NUL-terminated when len > 0 */
    size_t len;
    size_t cap;
    int oom;
} pm_buf;

void pm_buf_init(pm_buf *b);
void pm_buf_free(pm_buf *b);
void pm_buf_reset(pm_buf *b);
void pm_buf_add(pm_buf *b, const void *data, size_t len);
void pm_buf_puts(pm_buf *b, const char *s);
void pm_buf_printf(pm_buf *b, const char *fmt, ...) PM_PRINTF(2, 3);
/* Append s as a JSON string literal (quotes included); bytes that are not
 * valid UTF-8 become U+FFFD so the output is always valid JSON. */
void pm_buf_json_str(pm_buf *b, const char *s);
/* Append a JSON number; NaN and infinities become null. */
void pm_buf_json_num(pm_buf *b, double v);
/* Take the data (caller frees); the buffer is left empty. */
char *pm_buf_take(pm_buf *b);

/* 1 when the NUL-terminated s is valid UTF-8 (no overlong forms or
 * surrogates), else 0. */
int pm_utf8_valid(const char *s);

#endif
