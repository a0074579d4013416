/* Strings shared by every layer: a growable list of formatted strings and
 * the file-name-safe token (strs.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "perfmon/error.h"
#include "perfmon/mem.h"
#include "perfmon/strs.h"

int pm_strs_add(char ***arr, size_t *n, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int len = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (len < 0)
        return PM_ENOMEM;
    char **na = pm_realloc_array(*arr, *n + 1, sizeof **arr);
    if (!na) {
        free(s);
        return PM_ENOMEM;
    }
    *arr = na;
    na[(*n)++] = s;
    return 0;
}

void pm_strs_free(char **a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(a[i]);
    free(a);
}

void pm_sanitize_name(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    if (cap == 0)
        return;
    for (; s && *s && n + 1 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        out[n++] = ok ? (char)c : '_';
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, cap, "unknown");
    else if (out[0] == '.')
        out[0] = '_';
}
