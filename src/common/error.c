/* Errors as values (error.h): a code and a message, set once where the
 * problem is found, prefixed with context on the way up, reported by the
 * program. */
#include "perfmon/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int pm_error_set(pm_error *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    err->sys = 0;
    return code;
}

int pm_error_sys(pm_error *err, int code, int sys, const char *fmt, ...)
{
    if (!err)
        return code;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof err->msg)
        snprintf(err->msg + n, sizeof err->msg - (size_t)n, ": %s", strerror(sys));
    err->code = code;
    err->sys = sys;
    return code;
}

void pm_error_prefix(pm_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char pre[512], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s%s", pre, old);
}

void pm_error_clear(pm_error *err)
{
    if (!err)
        return;
    err->code = 0;
    err->sys = 0;
    err->msg[0] = '\0';
}
