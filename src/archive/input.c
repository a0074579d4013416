/* Inputs of perfmon-archive: telling the two kinds apart, parsing JSON
 * with a position in the message, and the dates of --since. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfmon/clock.h"
#include "perfmon/archive.h"
#include "perfmon/buf.h"
#include "perfmon/parse.h"
#include "perfmon/json.h"
#include "run_internal.h"

cJSON *pm_arch_json_parse(const char *file, const char *text, size_t len, pm_error *err)
{
    if (strlen(text) != len) {
        pm_error_set(err, PM_EFORMAT, "%s: offset %zu: a NUL byte", file, strlen(text));
        return NULL;
    }
    if (!pm_utf8_valid(text)) {
        pm_error_set(err, PM_EFORMAT, "%s: not valid UTF-8", file);
        return NULL;
    }
    return pm_json_parse(file, text, len, "not valid JSON (or nested too deeply)", err);
}

/* Read root with reader and finish the run (info, digest, checks). */
static int read_tree(const char *file, const char *text, size_t len, cJSON *root,
                     pm_arch_reader reader, const char *test, pm_arch_run **out, pm_error *err)
{
    pm_arch_run *r = pm_arch_run_new();
    if (!r) {
        cJSON_Delete(root);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", file);
    }
    int rc = reader(file, root, test, r, err);
    cJSON_Delete(root);
    if (rc == 0 && (rc = pm_arch_run_finish(r, text, len, err)) != 0)
        pm_error_prefix(err, "%s: ", file);
    if (rc) {
        pm_arch_run_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

static int parse_with(const char *file, const char *text, size_t len, pm_arch_reader reader,
                      const char *test, pm_arch_run **out, pm_error *err)
{
    *out = NULL;
    cJSON *root = pm_arch_json_parse(file, text, len, err);
    if (!root)
        return PM_EFORMAT;
    return read_tree(file, text, len, root, reader, test, out, err);
}

int pm_arch_parse_tf(const char *file, const char *text, size_t len, pm_arch_run **out,
                     pm_error *err)
{
    return parse_with(file, text, len, pm_arch_read_tf, NULL, out, err);
}

int pm_arch_parse_stats(const char *file, const char *text, size_t len, const char *test,
                        pm_arch_run **out, pm_error *err)
{
    return parse_with(file, text, len, pm_arch_read_stats, test, out, err);
}

int pm_arch_parse(const char *file, const char *text, size_t len, const char *test,
                  pm_arch_run **out, pm_error *err)
{
    *out = NULL;
    cJSON *root = pm_arch_json_parse(file, text, len, err);
    if (!root)
        return PM_EFORMAT;
    /* The statistics document always carries its "perfmon_analyze"
     * header object; anything else is read as TestResults. */
    pm_arch_reader reader =
        cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "perfmon_analyze"))
            ? pm_arch_read_stats
            : pm_arch_read_tf;
    return read_tree(file, text, len, root, reader, test, out, err);
}

int pm_arch_parse_date(const char *s, int64_t *us)
{
    if (!s || !*s)
        return -1;
    int64_t secs;
    if (pm_parse_i64(s, &secs) == 0) {
        if (secs < 0 || secs > 253402300799LL) /* 9999-12-31T23:59:59Z */
            return -1;
        *us = secs * 1000000;
        return 0;
    }
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(s, "%Y-%m-%d", &tm);
    if (end && *end == 'T')
        end = strptime(end + 1, "%H:%M:%S", &tm);
    if (!end || (*end && strcmp(end, "Z") != 0))
        return -1;
    time_t t = timegm(&tm);
    if (t == (time_t)-1 || t < 0 || t > 253402300799LL)
        return -1;
    *us = (int64_t)t * 1000000;
    return 0;
}

void pm_arch_format_time(int64_t us, char *out, size_t cap)
{
    int64_t secs = us / 1000000, frac = us % 1000000;
    if (frac < 0) {
        frac += 1000000;
        secs--;
    }
    if (pm_utc_iso_frac(secs, (long)frac, frac ? 6 : 0, out, cap) < 0)
        snprintf(out, cap, "%lld", (long long)us);
}
