/* JSON Lines profile reader (docs/format.md, "JSON Lines form").  The first line
 * is the header; a line that does not parse is skipped with a warning that
 * names its line number, so one damaged line costs one sample. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/mem.h"
#include "perfmon/profile.h"

static void get_str(const cJSON *o, const char *key, char *dst, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsString(v) && v->valuestring)
        snprintf(dst, cap, "%s", v->valuestring);
}

static int64_t seconds_ns(const cJSON *v)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || fabs(v->valuedouble) > 9.2e9)
        return INT64_MIN;
    return (int64_t)llround(v->valuedouble * 1e9);
}

/* A JSON number as an integer in [lo, hi] (truncated toward zero), or -1
 * when it is no number or out of range: converting a double outside the
 * target type's range is undefined behaviour. */
static int json_int(const cJSON *v, double lo, double hi, double *out)
{
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi))
        return -1;
    *out = trunc(v->valuedouble);
    return 0;
}

/* Bounds as doubles: 2^63 and 2^64 are exact; the largest doubles below
 * them convert safely. */
#define I64_LIM 9223372036854774784.0  /* largest double < 2^63 */
#define U64_LIM 18446744073709549568.0 /* largest double < 2^64 */

static int json_u64(const cJSON *v, uint64_t *out)
{
    double d;
    if (json_int(v, 0, U64_LIM, &d))
        return -1;
    *out = (uint64_t)d;
    return 0;
}

static int parse_header(pm_profile *p, const cJSON *h, pm_error *err)
{
    const char *path = p->path;
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(h, "format");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "perfmon-profile") != 0)
        return pm_error_set(err, PM_EFORMAT, "%s:1: header has no \"format\":\"perfmon-profile\"",
                            path);
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(h, "version");
    if (!cJSON_IsNumber(ver) || ver->valuedouble != PM_PROFILE_JSONL_VERSION)
        return pm_error_set(err, PM_EFORMAT, "%s:1: field 'version' must be %d", path,
                            PM_PROFILE_JSONL_VERSION);
    pm_profile_info *in = &p->info;
    get_str(h, "host", in->host, sizeof in->host);
    get_str(h, "job_id", in->job_id, sizeof in->job_id);
    get_str(h, "scheduler", in->scheduler, sizeof in->scheduler);
    get_str(h, "node_rank", in->node_rank, sizeof in->node_rank);
    get_str(h, "user", in->user, sizeof in->user);
    get_str(h, "command", in->command, sizeof in->command);
    get_str(h, "sampler", in->sampler, sizeof in->sampler);
    get_str(h, "run_id", in->run_id, sizeof in->run_id);
    int64_t x;
    if ((x = seconds_ns(cJSON_GetObjectItemCaseSensitive(h, "start"))) != INT64_MIN)
        in->start_wall_ns = x;
    if ((x = seconds_ns(cJSON_GetObjectItemCaseSensitive(h, "start_mono"))) != INT64_MIN)
        in->start_mono_ns = x;
    if ((x = seconds_ns(cJSON_GetObjectItemCaseSensitive(h, "interval"))) != INT64_MIN)
        in->interval_ns = x;
    double pid;
    if (json_int(cJSON_GetObjectItemCaseSensitive(h, "pid"), -I64_LIM, I64_LIM, &pid) == 0)
        in->sampler_pid = (int64_t)pid;

    const cJSON *cols = cJSON_GetObjectItemCaseSensitive(h, "columns");
    if (!cJSON_IsArray(cols))
        return pm_error_set(err, PM_EFORMAT, "%s:1: field 'columns' is missing or not an array",
                            path);
    int n = cJSON_GetArraySize(cols);
    if (n < 0 || (unsigned)n > PM_MAX_COLUMNS)
        return pm_error_set(err, PM_ELIMIT, "%s:1: %d columns exceed the limit", path, n);
    pm_column *cv = calloc((size_t)n + 1, sizeof *cv);
    if (!cv)
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    int i = 0, rc = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cols) {
        pm_column *col = &cv[i];
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
        if (!cJSON_IsString(name) || !*name->valuestring ||
            strlen(name->valuestring) >= sizeof col->name) {
            rc = pm_error_set(err, PM_EFORMAT, "%s:1: columns[%d]: 'name' missing or too long",
                              path, i);
            break;
        }
        snprintf(col->name, sizeof col->name, "%s", name->valuestring);
        get_str(c, "unit", col->unit, sizeof col->unit);
        get_str(c, "group", col->group, sizeof col->group);
        char kind[16] = "gauge", type[8] = "f64";
        get_str(c, "kind", kind, sizeof kind);
        get_str(c, "type", type, sizeof type);
        if (strcmp(kind, "gauge") != 0 && strcmp(kind, "counter") != 0) {
            rc = pm_error_set(err, PM_EFORMAT,
                              "%s:1: columns[%d]: kind '%s' is neither gauge "
                              "nor counter",
                              path, i, kind);
            break;
        }
        col->kind = strcmp(kind, "counter") == 0 ? PM_COUNTER : PM_GAUGE;
        col->type = strcmp(type, "u64") == 0 ? PM_U64 : PM_F64;
        const cJSON *wrap = cJSON_GetObjectItemCaseSensitive(c, "wrap");
        uint64_t w;
        if (json_u64(wrap, &w) == 0)
            col->wrap = w;
        for (int k = 0; k < i; k++)
            if (strcmp(cv[k].name, col->name) == 0) {
                rc = pm_error_set(err, PM_EFORMAT, "%s:1: column '%s' appears twice", path,
                                  col->name);
                break;
            }
        if (rc)
            break;
        i++;
    }
    if (rc == 0 && pm_profile_set_columns(p, cv, (size_t)i) != 0)
        rc = pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    free(cv);
    return rc;
}

static void decode_end(pm_profile *p, const cJSON *e)
{
    pm_profile_end *d = &p->end;
    int64_t x;
    if ((x = seconds_ns(cJSON_GetObjectItemCaseSensitive(e, "t"))) != INT64_MIN)
        d->end_wall_ns = x;
    if ((x = seconds_ns(cJSON_GetObjectItemCaseSensitive(e, "mono"))) != INT64_MIN)
        d->end_mono_ns = x;
    if ((x = seconds_ns(cJSON_GetObjectItemCaseSensitive(e, "self_cpu"))) != INT64_MIN)
        d->self_cpu_ns = x;
    uint64_t u;
    if (json_u64(cJSON_GetObjectItemCaseSensitive(e, "samples"), &u) == 0)
        d->samples = u;
    if (json_u64(cJSON_GetObjectItemCaseSensitive(e, "late"), &u) == 0)
        d->late = u;
    if (json_u64(cJSON_GetObjectItemCaseSensitive(e, "missed"), &u) == 0)
        d->missed = u;
    if (json_u64(cJSON_GetObjectItemCaseSensitive(e, "self_maxrss_kb"), &u) == 0)
        d->self_maxrss_kb = u;
    double st;
    if (json_int(cJSON_GetObjectItemCaseSensitive(e, "exit_status"), INT32_MIN, INT32_MAX, &st) ==
        0)
        d->exit_status = (int32_t)st;
    get_str(e, "reason", d->reason, sizeof d->reason);
    p->has_end = 1;
}

static int add_sample(pm_profile *p, const cJSON *s, size_t *cap, size_t lineno)
{
    int64_t t = seconds_ns(cJSON_GetObjectItemCaseSensitive(s, "t"));
    int64_t m = seconds_ns(cJSON_GetObjectItemCaseSensitive(s, "mono"));
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, "v");
    if (t == INT64_MIN || !cJSON_IsArray(v)) {
        pm_profile_add_warning(p, "%s:%zu: sample without 't' or 'v' skipped", p->path, lineno);
        return 0;
    }
    if (cJSON_GetArraySize(v) != (int)p->ncols) {
        pm_profile_add_warning(p, "%s:%zu: sample has %d values, header declares %zu; skipped",
                               p->path, lineno, cJSON_GetArraySize(v), p->ncols);
        return 0;
    }
    if (p->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        if (pm_profile_reserve(p, nc) != 0)
            return PM_ENOMEM;
        *cap = nc;
    }
    size_t i = p->n;
    p->t_wall_ns[i] = t;
    p->t_mono_ns[i] = m == INT64_MIN ? 0 : m;
    size_t c = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, v) {
        if (p->values[c]) /* NULL: not decoded (pm_read_hint.want) */
            p->values[c][i] = cJSON_IsNumber(x) && isfinite(x->valuedouble) ? x->valuedouble : NAN;
        c++;
    }
    p->n++;
    return 0;
}

int pm_profile_decode_jsonl(const char *path, const char *text, size_t len, pm_profile **out,
                            pm_error *err)
{
    return pm_profile_decode_jsonl_hinted(path, text, len, NULL, out, err);
}

int pm_profile_decode_jsonl_hinted(const char *path, const char *text, size_t len,
                                   const pm_read_hint *hint, pm_profile **out, pm_error *err)
{
    *out = NULL;
    pm_profile *p = pm_profile_new(path, PM_FMT_JSONL);
    if (!p)
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    size_t off = 0, lineno = 0, cap = 0;
    int have_header = 0, rc = 0;
    while (off < len) {
        const char *line = text + off;
        const char *nl = memchr(line, '\n', len - off);
        size_t ll = nl ? (size_t)(nl - line) : len - off;
        off += ll + (nl ? 1 : 0);
        lineno++;
        /* JSON whitespace around a line's object (CRLF line ends, blank
         * lines) is JSON too. */
        while (ll && (line[ll - 1] == '\r' || line[ll - 1] == ' ' || line[ll - 1] == '\t'))
            ll--;
        if (ll == 0)
            continue;
        const char *endp = NULL;
        cJSON *j = cJSON_ParseWithLengthOpts(line, ll, &endp, 0);
        if (!j) {
            size_t col = endp && endp >= line ? (size_t)(endp - line) + 1 : 1;
            if (!have_header) {
                rc = pm_error_set(err, PM_EFORMAT, "%s:%zu:%zu: header line is not valid JSON",
                                  path, lineno, col);
                break;
            }
            if (!nl)
                pm_profile_add_warning(p, "%s:%zu: torn last line (%zu bytes) skipped", path,
                                       lineno, ll);
            else
                pm_profile_add_warning(p, "%s:%zu:%zu: line is not valid JSON; skipped", path,
                                       lineno, col);
            p->bad_records++;
            p->skipped_bytes += ll;
            continue;
        }
        if (!have_header) {
            rc = parse_header(p, j, err);
            if (rc == 0 && pm_profile_project(p, hint) != 0)
                rc = pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
            cJSON_Delete(j);
            if (rc)
                break;
            have_header = 1;
            continue;
        }
        const cJSON *x;
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "v")) != NULL) {
            rc = add_sample(p, j, &cap, lineno);
            if (rc)
                pm_error_set(err, rc, "%s: out of memory", path);
        } else if ((x = cJSON_GetObjectItemCaseSensitive(j, "metadata")) != NULL) {
            if (!p->meta_json)
                p->meta_json = cJSON_PrintUnformatted(x);
        } else if ((x = cJSON_GetObjectItemCaseSensitive(j, "note")) != NULL) {
            if (cJSON_IsString(x))
                pm_profile_add_note(p, x->valuestring, strlen(x->valuestring));
        } else if ((x = cJSON_GetObjectItemCaseSensitive(j, "end")) != NULL) {
            decode_end(p, x);
        } else {
            pm_profile_add_warning(p, "%s:%zu: unknown line kind skipped", path, lineno);
        }
        cJSON_Delete(j);
        if (rc)
            break;
    }
    if (rc == 0 && !have_header)
        rc = pm_error_set(err, PM_EFORMAT, "%s: empty file, no header line", path);
    if (rc) {
        pm_profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}
