/* perfmon's own `perfmon-analyze --stats --json` document (keys in
 * docs/analysis.md, "Outputs") as a run:
 *
 *   test    --test NAME, else the document's job id ("job"."job_id" or a
 *           top-level "job_id"); without either the file is refused
 *   start   "job"."start" (seconds since the epoch)
 *   entries every job figure in "job" that is a number (figures that are
 *           null, i.e. not recorded, are left out), and per phase kind
 *           "phase:<name>" with its summed duration ("total_s"; a null
 *           duration is left out too)
 *
 * The job's span and layout keys (hosts, start, end, grid_step_s) are not
 * figures and are not entries. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/archive.h"
#include "perfmon/mem.h"
#include "run_internal.h"

#define STATS_SCHEMA 1

static const char *const not_figures[] = {"hosts", "start", "end", "grid_step_s"};

static int is_figure(const char *key)
{
    for (size_t i = 0; i < sizeof not_figures / sizeof *not_figures; i++)
        if (strcmp(key, not_figures[i]) == 0)
            return 0;
    return 1;
}

static const char *job_id(const cJSON *root, const cJSON *job)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(job, "job_id");
    if (!cJSON_IsString(id))
        id = cJSON_GetObjectItemCaseSensitive(root, "job_id");
    return cJSON_IsString(id) && id->valuestring[0] ? id->valuestring : NULL;
}

static int add_figures(const char *file, const cJSON *job, pm_arch_run *r, pm_error *err)
{
    for (const cJSON *f = job->child; f; f = f->next) {
        if (!f->string || !cJSON_IsNumber(f) || !is_figure(f->string) || !isfinite(f->valuedouble))
            continue;
        cJSON *info = cJSON_CreateObject();
        char *text = NULL;
        if (info && cJSON_AddStringToObject(info, "source", "job") &&
            cJSON_AddStringToObject(info, "figure", f->string))
            text = cJSON_PrintUnformatted(info);
        cJSON_Delete(info);
        if (!text)
            return pm_error_set(err, PM_ENOMEM, "%s: out of memory", file);
        int rc = pm_arch_run_add(r, f->string, f->valuedouble, text, err);
        free(text);
        if (rc) {
            pm_error_prefix(err, "%s: job figure: ", file);
            return rc;
        }
    }
    return 0;
}

static int add_phases(const char *file, const cJSON *root, pm_arch_run *r, pm_error *err)
{
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(root, "phases");
    if (!ph)
        return 0;
    const cJSON *kinds = cJSON_GetObjectItemCaseSensitive(ph, "kinds");
    if (!cJSON_IsObject(ph) || (kinds && !cJSON_IsArray(kinds)))
        return pm_error_set(err, PM_EFORMAT, "%s: \"phases.kinds\" is not an array", file);
    size_t i = 0;
    for (const cJSON *k = kinds ? kinds->child : NULL; k; k = k->next, i++) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "name");
        const cJSON *total = cJSON_GetObjectItemCaseSensitive(k, "total_s");
        if (cJSON_IsString(name) && cJSON_IsNull(total))
            continue; /* a kind without a duration (no phase on any node) */
        if (!cJSON_IsString(name) || !cJSON_IsNumber(total))
            return pm_error_set(
                err, PM_EFORMAT,
                "%s: phases.kinds[%zu]: \"name\" or \"total_s\" missing or mistyped", file, i);
        if (strlen(name->valuestring) > PM_ARCH_NAME_MAX - 6)
            return pm_error_set(err, PM_EFORMAT, "%s: phases.kinds[%zu]: the name is too long",
                                file, i);
        char entry[PM_ARCH_NAME_MAX + 1];
        snprintf(entry, sizeof entry, "phase:%s", name->valuestring);
        char *text = cJSON_PrintUnformatted(k);
        if (!text)
            return pm_error_set(err, PM_ENOMEM, "%s: out of memory", file);
        int rc = pm_arch_run_add(r, entry, total->valuedouble, text, err);
        free(text);
        if (rc) {
            pm_error_prefix(err, "%s: ", file);
            return rc;
        }
    }
    return 0;
}

int pm_arch_read_stats(const char *file, const cJSON *root, const char *test, pm_arch_run *r,
                       pm_error *err)
{
    r->kind = PM_ARCH_PERFMON_STATS;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "perfmon_analyze");
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(meta, "schema");
    if (!cJSON_IsObject(meta) || !cJSON_IsNumber(schema))
        return pm_error_set(
            err, PM_EFORMAT,
            "%s: not perfmon-analyze statistics (no \"perfmon_analyze\".\"schema\")", file);
    if (schema->valuedouble != STATS_SCHEMA)
        return pm_error_set(err, PM_EFORMAT,
                            "%s: statistics schema %g is not supported (this perfmon-archive "
                            "reads %d)",
                            file, schema->valuedouble, STATS_SCHEMA);
    const cJSON *job = cJSON_GetObjectItemCaseSensitive(root, "job");
    if (!cJSON_IsObject(job))
        return pm_error_set(err, PM_EFORMAT, "%s: \"job\" is missing or not an object", file);
    const cJSON *start = cJSON_GetObjectItemCaseSensitive(job, "start");
    if (!cJSON_IsNumber(start) ||
        !(start->valuedouble >= 0 && start->valuedouble <= 253402300799.0))
        return pm_error_set(err, PM_EFORMAT,
                            "%s: \"job.start\" is missing or not seconds since the epoch", file);
    r->start_us = (int64_t)llround(start->valuedouble * 1e6);
    const char *name = test ? test : job_id(root, job);
    if (!name)
        return pm_error_set(err, PM_EFORMAT,
                            "%s: the statistics have no job id: give the test name with --test",
                            file);
    if (pm_arch_name_ok(name) != 0)
        return pm_error_set(err, PM_EFORMAT, "%s: the test name is empty or longer than %d bytes",
                            file, PM_ARCH_NAME_MAX);
    if (!(r->test = pm_strdup(name)))
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", file);
    int rc = add_figures(file, job, r, err);
    return rc ? rc : add_phases(file, root, r, err);
}
