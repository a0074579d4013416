/* Strict parsing (parse.h): whole-string numbers with end pointer and
 * ERANGE checks, a cursor-based scanner and field splitter for /proc text,
 * durations, and the --start/--end time bounds. */
#include "perfmon/parse.h"
#include "perfmon/invariant.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int pm_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE || *end != '\0')
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int pm_parse_i64(const char *s, int64_t *out)
{
    if (!s || !(isdigit((unsigned char)*s) || *s == '-' || *s == '+'))
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || *end != '\0' || end == s)
        return -1;
    *out = (int64_t)v;
    return 0;
}

int pm_parse_double(const char *s, double *out)
{
    if (!s || !*s || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno == ERANGE || *end != '\0' || end == s || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

void pm_skip_blanks(const char **p)
{
    while (**p == ' ' || **p == '\t')
        (*p)++;
}

int pm_scan_u64(const char **p, uint64_t *out)
{
    const char *s = *p;
    pm_skip_blanks(&s);
    if (!isdigit((unsigned char)*s))
        return -1;
    uint64_t v = 0;
    while (isdigit((unsigned char)*s)) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
        s++;
    }
    *out = v;
    *p = s;
    return 0;
}

int pm_scan_i64(const char **p, int64_t *out)
{
    const char *s = *p;
    pm_skip_blanks(&s);
    int neg = 0;
    if (*s == '-') {
        neg = 1;
        s++;
        /* The digits follow the sign at once: "- 5" is two fields. */
        if (!isdigit((unsigned char)*s))
            return -1;
    }
    uint64_t u;
    if (pm_scan_u64(&s, &u) != 0)
        return -1;
    if (u > (uint64_t)INT64_MAX + (uint64_t)neg)
        return -1;
    *out = neg ? (int64_t)(0 - u) : (int64_t)u;
    *p = s;
    return 0;
}

size_t pm_split_fields(char *line, char **fields, size_t max)
{
    size_t n = 0;
    char *p = line;
    while (*p && n < max) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!*p)
            break;
        fields[n++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n')
            p++;
        if (*p)
            *p++ = '\0';
    }
    PM_ASSERT(n <= max && p >= line);
    return n;
}

char *pm_next_line(char **cursor)
{
    char *s = *cursor;
    if (!s || !*s)
        return NULL;
    char *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        *cursor = nl + 1;
    } else {
        *cursor = s + strlen(s);
    }
    PM_ASSERT(*cursor > s); /* the cursor moves forward, within the text */
    return s;
}

int pm_kv_u64(const char *text, const char *key, uint64_t *out)
{
    size_t klen = strlen(key);
    const char *p = text;
    while (p && *p) {
        if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
            const char *v = p + klen + 1;
            return pm_scan_u64(&v, out);
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return -1;
}

int pm_parse_duration_ns(const char *s, int64_t *out)
{
    if (!s || !*s)
        return -1;
    char buf[64];
    size_t len = strlen(s);
    if (len >= sizeof buf)
        return -1;
    memcpy(buf, s, len + 1);
    double mult = 1.0;
    char last = buf[len - 1];
    if (last == 's' || last == 'm' || last == 'h' || last == 'd') {
        mult = last == 's' ? 1.0 : last == 'm' ? 60.0 : last == 'h' ? 3600.0 : 86400.0;
        buf[len - 1] = '\0';
        if (len >= 2 && last == 's' && buf[len - 2] == 'm') { /* "ms" */
            mult = 1e-3;
            buf[len - 2] = '\0';
        }
    }
    double v;
    if (pm_parse_double(buf, &v) != 0 || v < 0 || v * mult > 9.0e9)
        return -1;
    /* v * mult * 1e9 is in [0, 9e18]: rounding half up by hand keeps the
     * sampler free of libm (300 KiB less resident). */
    *out = (int64_t)(v * mult * 1e9 + 0.5);
    return 0;
}

int pm_parse_time_bound(const char *s, double *value, int *relative)
{
    if (!s || !*s)
        return -1;
    if (s[0] == '+') {
        int64_t ns;
        if (pm_parse_duration_ns(s + 1, &ns) != 0 || ns < 0)
            return -1;
        *value = (double)ns * 1e-9;
        *relative = 1;
        return 0;
    }
    double d;
    if (pm_parse_double(s, &d) == 0) {
        if (d < 0)
            return -1;
        *relative = d < 1e9;
        *value = d;
        return 0;
    }
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end || (*end && strcmp(end, "Z") != 0))
        return -1;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -1;
    *value = (double)t;
    *relative = 0;
    return 0;
}
