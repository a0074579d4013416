/* TensorFlow TestResults JSON (tensorflow/core/util/test_log.proto in its
 * protobuf JSON mapping, as run_and_gather_logs writes it; seed 002):
 *
 *   {"name": "//pkg:bench", "startTime": "1700000000",
 *    "entries": {"entry": [{"name": "b1", "iters": "100", "wallTime": 0.25,
 *                           "cpuTime": 0.2, "extras": {...}}, ...]}, ...}
 *
 * startTime is whole seconds since the epoch (int64, so a string in the
 * JSON mapping; a number is accepted too).  wallTime is the wall time per
 * iteration in seconds and becomes the entry's timing; the whole entry
 * object (iterations, CPU time, throughput, extras) is kept as its info. */
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>

#include "perfmon/archive.h"
#include "perfmon/mem.h"
#include "perfmon/parse.h"
#include "run_internal.h"

#define LAST_SECOND 253402300799.0 /* 9999-12-31T23:59:59Z */

int pm_arch_json_double(const cJSON *item, double *out)
{
    if (cJSON_IsNumber(item)) {
        *out = item->valuedouble;
        return 0;
    }
    if (cJSON_IsString(item) && item->valuestring)
        return pm_parse_double(item->valuestring, out);
    return -1;
}

static int read_entry(const char *file, size_t i, const cJSON *e, pm_arch_run *r, pm_error *err)
{
    if (!cJSON_IsObject(e))
        return pm_error_set(err, PM_EFORMAT, "%s: entries.entry[%zu] is not an object", file, i);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    if (!cJSON_IsString(name) || pm_arch_name_ok(name->valuestring) != 0)
        return pm_error_set(err, PM_EFORMAT,
                            "%s: entries.entry[%zu]: \"name\" is missing, empty, not a string or "
                            "longer than %d bytes",
                            file, i, PM_ARCH_NAME_MAX);
    double wall;
    if (pm_arch_json_double(cJSON_GetObjectItemCaseSensitive(e, "wallTime"), &wall) != 0 ||
        !isfinite(wall))
        return pm_error_set(err, PM_EFORMAT,
                            "%s: entry \"%.200s\": \"wallTime\" is missing or not a finite number",
                            file, name->valuestring);
    char *info = cJSON_PrintUnformatted(e);
    if (!info)
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", file);
    int rc = pm_arch_run_add(r, name->valuestring, wall, info, err);
    free(info);
    if (rc)
        pm_error_prefix(err, "%s: ", file);
    return rc;
}

int pm_arch_read_tf(const char *file, const cJSON *root, const char *test, pm_arch_run *r,
                    pm_error *err)
{
    (void)test;
    r->kind = PM_ARCH_TENSORFLOW;
    if (!cJSON_IsObject(root))
        return pm_error_set(err, PM_EFORMAT,
                            "%s: neither TensorFlow TestResults nor perfmon-analyze statistics "
                            "(not a JSON object)",
                            file);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    const cJSON *start = cJSON_GetObjectItemCaseSensitive(root, "startTime");
    if (!name && !start)
        return pm_error_set(
            err, PM_EFORMAT,
            "%s: neither TensorFlow TestResults (no \"name\", no \"startTime\") nor "
            "perfmon-analyze statistics (no \"perfmon_analyze\")",
            file);
    if (!cJSON_IsString(name) || pm_arch_name_ok(name->valuestring) != 0)
        return pm_error_set(err, PM_EFORMAT,
                            "%s: \"name\" is missing, empty, not a string or longer than %d bytes",
                            file, PM_ARCH_NAME_MAX);
    double secs;
    if (pm_arch_json_double(start, &secs) != 0 || !(secs >= 0 && secs <= LAST_SECOND))
        return pm_error_set(err, PM_EFORMAT,
                            "%s: \"startTime\" is missing or not seconds since the epoch "
                            "(0 to 253402300799)",
                            file);
    r->start_us = (int64_t)llround(secs * 1e6);
    if (!(r->test = pm_strdup(name->valuestring)))
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", file);
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
    if (!entries)
        return 0; /* proto3 JSON leaves out an empty message */
    if (!cJSON_IsObject(entries))
        return pm_error_set(err, PM_EFORMAT, "%s: \"entries\" is not an object", file);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(entries, "entry");
    if (!list)
        return 0;
    if (!cJSON_IsArray(list))
        return pm_error_set(err, PM_EFORMAT, "%s: \"entries.entry\" is not an array", file);
    size_t i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        int rc = read_entry(file, i, e, r, err);
        if (rc)
            return rc;
    }
    return 0;
}
