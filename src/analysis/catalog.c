/* Metric catalog loading (templates/metrics.json, see docs/analysis.md). */
#include "perfmon/catalog.h"

#include <cJSON.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/json.h"

#define CATALOG_MAX_BYTES (4u << 20)
#define CATALOG_MAX_METRICS 4096

void pm_catalog_free(pm_catalog *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        for (size_t k = 0; k < c->m[i].npatterns; k++)
            free(c->m[i].patterns[k]);
        for (size_t k = 0; k < c->m[i].nper; k++)
            free(c->m[i].per[k]);
        for (size_t k = 0; k < c->m[i].nska_patterns; k++)
            free(c->m[i].ska_patterns[k]);
    }
    free(c->m);
    free(c->path);
    free(c);
}

static int copy_str(char *dst, size_t cap, const cJSON *obj, const char *key, int required,
                    const char *path, size_t idx, pm_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        if (required)
            return pm_error_set(err, PM_EFORMAT, "%s: metrics[%zu].%s: missing", path, idx, key);
        return 0;
    }
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= cap)
        return pm_error_set(err, PM_EFORMAT,
                            "%s: metrics[%zu].%s: expected a string of at most %zu bytes", path,
                            idx, key, cap - 1);
    memcpy(dst, v->valuestring, strlen(v->valuestring) + 1);
    return 0;
}

static int get_bool(const cJSON *obj, const char *key, int *out, const char *path, size_t idx,
                    pm_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        return 0;
    if (!cJSON_IsBool(v))
        return pm_error_set(err, PM_EFORMAT, "%s: metrics[%zu].%s: expected true or false", path,
                            idx, key);
    *out = cJSON_IsTrue(v);
    return 0;
}

/* An array of 1 to PM_CAT_MAX_PATTERNS column globs under key. */
static int patterns(const cJSON *o, const char *key, char **out, size_t *n, int required,
                    const char *path, size_t i, pm_error *err)
{
    const cJSON *cols = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cols && !required)
        return 0;
    if (!cJSON_IsArray(cols) || cJSON_GetArraySize(cols) < 1 ||
        cJSON_GetArraySize(cols) > PM_CAT_MAX_PATTERNS)
        return pm_error_set(err, PM_EFORMAT, "%s: metrics[%zu].%s: expected 1 to %d patterns", path,
                            i, key, PM_CAT_MAX_PATTERNS);
    const cJSON *c;
    cJSON_ArrayForEach(c, cols) {
        if (!cJSON_IsString(c) || !*c->valuestring)
            return pm_error_set(err, PM_EFORMAT, "%s: metrics[%zu].%s: expected strings", path, i,
                                key);
        out[*n] = pm_strdup(c->valuestring);
        if (!out[*n])
            return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
        (*n)++;
    }
    return 0;
}

/* "Total" or "Average" under key (absent: *out unchanged). */
static int get_comb(const cJSON *o, const char *key, int *out, const char *path, size_t i,
                    pm_error *err)
{
    char comb[16] = "";
    int rc = copy_str(comb, sizeof comb, o, key, 0, path, i, err);
    if (rc || !cJSON_GetObjectItemCaseSensitive(o, key))
        return rc;
    if (strcmp(comb, "Total") == 0)
        *out = PM_COMB_TOTAL;
    else if (strcmp(comb, "Average") == 0)
        *out = PM_COMB_AVERAGE;
    else
        return pm_error_set(err, PM_EFORMAT, "%s: metrics[%zu].%s: \"%s\" is not Total or Average",
                            path, i, key, comb);
    return 0;
}

static int parse_metric(const cJSON *o, pm_metric_def *d, const char *path, size_t i, pm_error *err)
{
    int rc;
    if (!cJSON_IsObject(o))
        return pm_error_set(err, PM_EFORMAT, "%s: metrics[%zu]: expected an object", path, i);
    if ((rc = copy_str(d->id, sizeof d->id, o, "id", 1, path, i, err)) ||
        (rc = copy_str(d->name, sizeof d->name, o, "name", 1, path, i, err)) ||
        (rc = copy_str(d->unit, sizeof d->unit, o, "unit", 1, path, i, err)) ||
        (rc = copy_str(d->category, sizeof d->category, o, "category", 0, path, i, err)) ||
        (rc = copy_str(d->page, sizeof d->page, o, "page", 0, path, i, err)))
        return rc;
    for (const char *s = d->id; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return pm_error_set(
                err, PM_EFORMAT,
                "%s: metrics[%zu].id: \"%s\" may hold only letters, digits, '_', '-', '.'", path, i,
                d->id);
    if ((rc = patterns(o, "columns", d->patterns, &d->npatterns, 1, path, i, err)))
        return rc;
    char derive[16] = "sum";
    if ((rc = copy_str(derive, sizeof derive, o, "derive", 0, path, i, err)))
        return rc;
    if (strcmp(derive, "ratio") == 0)
        d->derive = PM_DERIVE_RATIO;
    else if (strcmp(derive, "sum") != 0)
        return pm_error_set(err, PM_EFORMAT, "%s: metrics[%zu].derive: \"%s\" is not sum or ratio",
                            path, i, derive);
    if ((rc = patterns(o, "per", d->per, &d->nper, d->derive == PM_DERIVE_RATIO, path, i, err)))
        return rc;
    if (d->nper && d->derive != PM_DERIVE_RATIO)
        return pm_error_set(err, PM_EFORMAT,
                            "%s: metrics[%zu].per: only with \"derive\": \"ratio\"", path, i);
    d->conversion = 1.0;
    const cJSON *conv = cJSON_GetObjectItemCaseSensitive(o, "conversion");
    if (conv) {
        if (!cJSON_IsNumber(conv) || !isfinite(conv->valuedouble) || conv->valuedouble <= 0)
            return pm_error_set(err, PM_EFORMAT,
                                "%s: metrics[%zu].conversion: expected a positive number", path, i);
        d->conversion = conv->valuedouble;
    }
    d->size_cm = 6.0;
    const cJSON *sz = cJSON_GetObjectItemCaseSensitive(o, "size");
    if (cJSON_IsNumber(sz) && sz->valuedouble > 0 && sz->valuedouble < 100)
        d->size_cm = sz->valuedouble;
    if ((rc = get_bool(o, "rate", &d->rate, path, i, err)) ||
        (rc = get_bool(o, "log_scale", &d->log_scale, path, i, err)))
        return rc;
    if ((rc = get_comb(o, "comb", &d->comb, path, i, err)))
        return rc;
    d->ska_comb = -1;
    if ((rc = get_comb(o, "ska_comb", &d->ska_comb, path, i, err)))
        return rc;
    return patterns(o, "ska_columns", d->ska_patterns, &d->nska_patterns, 0, path, i, err);
}

void pm_catalog_use_ska(pm_catalog *c)
{
    for (size_t i = 0; i < c->n; i++) {
        pm_metric_def *d = &c->m[i];
        if (d->ska_comb >= 0)
            d->comb = d->ska_comb;
        if (d->nska_patterns == 0)
            continue;
        for (size_t k = 0; k < PM_CAT_MAX_PATTERNS; k++) {
            char *t = d->patterns[k];
            d->patterns[k] = d->ska_patterns[k];
            d->ska_patterns[k] = t;
        }
        size_t n = d->npatterns;
        d->npatterns = d->nska_patterns;
        d->nska_patterns = n;
    }
}

int pm_catalog_parse(const char *path, const char *text, pm_catalog **out, pm_error *err)
{
    *out = NULL;
    cJSON *root = pm_json_parse(path, text, strlen(text), "malformed JSON", err);
    if (!root)
        return PM_EFORMAT;
    int rc = 0;
    pm_catalog *c = calloc(1, sizeof *c);
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "metrics");
    if (!c || !(c->path = pm_strdup(path))) {
        rc = pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > CATALOG_MAX_METRICS) {
        rc = pm_error_set(err, PM_EFORMAT, "%s: metrics: expected an array of at most %d entries",
                          path, CATALOG_MAX_METRICS);
        goto out;
    }
    size_t n = (size_t)cJSON_GetArraySize(arr);
    c->m = calloc(n ? n : 1, sizeof *c->m);
    if (!c->m) {
        rc = pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    const cJSON *o;
    cJSON_ArrayForEach(o, arr) {
        rc = parse_metric(o, &c->m[c->n], path, c->n, err);
        c->n++;
        if (rc)
            goto out;
        for (size_t k = 0; k + 1 < c->n; k++)
            if (strcmp(c->m[k].id, c->m[c->n - 1].id) == 0) {
                rc = pm_error_set(err, PM_EFORMAT, "%s: metrics[%zu].id: \"%s\" is used twice",
                                  path, c->n - 1, c->m[k].id);
                goto out;
            }
    }
out:
    cJSON_Delete(root);
    if (rc) {
        pm_catalog_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int pm_catalog_load(const char *path, pm_catalog **out, pm_error *err)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = pm_read_whole(path, CATALOG_MAX_BYTES, &text, &len, err);
    if (rc)
        return rc;
    rc = pm_catalog_parse(path, text, out, err);
    free(text);
    return rc;
}

int pm_metric_role(const pm_metric_def *def, const char *column)
{
    for (size_t k = 0; k < def->npatterns; k++)
        if (fnmatch(def->patterns[k], column, 0) == 0)
            return PM_ROLE_VALUE;
    for (size_t k = 0; k < def->nper; k++)
        if (fnmatch(def->per[k], column, 0) == 0)
            return PM_ROLE_PER;
    return PM_ROLE_NONE;
}

int pm_metric_matches(const pm_metric_def *def, const char *column)
{
    return pm_metric_role(def, column) != PM_ROLE_NONE;
}

int pm_catalog_find(const pm_catalog *c, const char *id)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->m[i].id, id) == 0)
            return (int)i;
    return -1;
}
