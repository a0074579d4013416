/* templates/compare.json: which direction is better per metric and job
 * figure, thresholds (docs/analysis.md, "Comparing two jobs"). */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/catalog.h"
#include "perfmon/compare.h"
#include "perfmon/fileio.h"
#include "perfmon/json.h"

#define CFG_MAX_BYTES (1u << 20)
#define CFG_MAX_ENTRIES 4096

static const char *const BETTER[] = {"none", "lower", "higher"};
static const char *const VERDICT[] = {"same", "noise", "changed", "better", "worse", "missing"};

int pm_better_parse(const char *s)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(s, BETTER[i]) == 0)
            return i;
    return -1;
}

const char *pm_better_name(int better)
{
    return better >= 0 && better < 3 ? BETTER[better] : "?";
}

const char *pm_verdict_name(int verdict)
{
    return verdict >= 0 && verdict < 6 ? VERDICT[verdict] : "?";
}

void pm_compare_cfg_free(pm_compare_cfg *c)
{
    if (!c)
        return;
    free(c->metrics);
    free(c->figures);
    free(c->tf);
    free(c);
}

int pm_compare_is_sampler(const char *name)
{
    return strncmp(name, "sampler_", 8) == 0;
}

static const pm_compare_rule *find_rule(const pm_compare_rule *r, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].key, key) == 0)
            return &r[i];
    return NULL;
}

void pm_compare_cfg_entry(const pm_compare_cfg *c, const char *entry, pm_compare_rule *out)
{
    memset(out, 0, sizeof *out);
    out->threshold_pct = NAN;
    /* perfmon-analyze --stats --json's job counts of data repair: about
     * the profile, not the job; informational. */
    static const char *const quality[] = {"repaired", "dropped_timestamps"};
    const pm_compare_rule *r = NULL;
    int is_quality = 0;
    for (size_t i = 0; i < sizeof quality / sizeof *quality; i++)
        is_quality |= strcmp(entry, quality[i]) == 0;
    if (is_quality) {
        snprintf(out->key, sizeof out->key, "%s", entry);
        out->better = PM_BETTER_NONE;
    } else if (pm_figure_find(entry)) {
        r = find_rule(c->figures, c->nfigures, entry);
        snprintf(out->key, sizeof out->key, "%s", entry);
    } else if (strncmp(entry, "phase:", 6) == 0) {
        snprintf(out->key, sizeof out->key, "phase");
        out->better = c->phase_better;
        out->gate = c->phase_gate;
    } else {
        r = find_rule(c->tf, c->ntf, "wallTime");
        if (!r) { /* a table without TensorFlow fields: timings are lower-is-better, gated */
            snprintf(out->key, sizeof out->key, "wallTime");
            out->better = PM_BETTER_LOWER;
            out->gate = 1;
        }
    }
    if (r)
        *out = *r;
    if (!isfinite(out->threshold_pct))
        out->threshold_pct = c->threshold_pct;
    if (out->better == PM_BETTER_NONE || pm_compare_is_sampler(entry))
        out->gate = 0;
}

static int on_list(const char *const *l, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i], name) == 0)
            return 1;
    return 0;
}

int pm_gate_decide(const pm_gate_names *g, const char *name, int better, int rule_gate)
{
    if (better == PM_BETTER_NONE || pm_compare_is_sampler(name))
        return 0;
    if (g && on_list(g->off, g->noff, name))
        return 0;
    if (g && on_list(g->on, g->non, name))
        return 1;
    return rule_gate != 0;
}

int pm_gate_parse_list(const char *arg, int gate, char *buf, size_t bufcap, const char **list,
                       size_t n, size_t cap)
{
    size_t len = strlen(arg);
    if (len + 1 > bufcap)
        return -1;
    memcpy(buf, arg, len + 1);
    for (char *p = buf;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = 0;
        if (!*p || n == cap || (gate && pm_compare_is_sampler(p)))
            return -1;
        list[n++] = p;
        if (!comma)
            break;
        p = comma + 1;
    }
    return (int)n;
}

void pm_gate_list_why(const char *arg, int gate, size_t have, size_t cap, char *out, size_t outcap)
{
    size_t names = 1;
    for (const char *p = arg; *p; p++)
        names += *p == ',';
    const char *p = arg;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), p);
        if (len == 0) {
            snprintf(out, outcap, "an empty name; give names separated by commas (a,b)");
            return;
        }
        if (gate && pm_compare_is_sampler(name)) {
            snprintf(out, outcap,
                     "%s is one of the sampler's own figures, which are never gated (they "
                     "measure perfmon, not the job)",
                     name);
            return;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    if (have + names > cap)
        snprintf(out, outcap, "more than %zu names in all", cap);
    else
        snprintf(out, outcap, "the list is too long");
}

const pm_compare_rule *pm_compare_cfg_metric(const pm_compare_cfg *c, const char *id)
{
    for (size_t i = 0; i < c->nmetrics; i++)
        if (strcmp(c->metrics[i].key, id) == 0)
            return &c->metrics[i];
    return NULL;
}

/* A non-negative number at key (absent: *out unchanged). */
static int get_num(const cJSON *o, const char *key, double *out, const char *path,
                   const char *where, pm_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
        return pm_error_set(err, PM_EFORMAT, "%s: %s%s: expected a number >= 0", path, where, key);
    *out = v->valuedouble;
    return 0;
}

static int get_better(const cJSON *o, const char *key, int *out, const char *path,
                      const char *where, pm_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return 0;
    int b = cJSON_IsString(v) ? pm_better_parse(v->valuestring) : -1;
    if (b < 0)
        return pm_error_set(err, PM_EFORMAT, "%s: %s%s: expected \"lower\", \"higher\" or \"none\"",
                            path, where, key);
    *out = b;
    return 0;
}

static int get_bool(const cJSON *o, const char *key, int *out, const char *path, const char *where,
                    pm_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return 0;
    if (!cJSON_IsBool(v))
        return pm_error_set(err, PM_EFORMAT, "%s: %s%s: expected true or false", path, where, key);
    *out = cJSON_IsTrue(v);
    return 0;
}

/* One array of rules; name_key is "id" (metrics) or "key" (figures). */
static int parse_rules(const cJSON *root, const char *arr_key, const char *name_key,
                       int default_better, pm_compare_rule **out, size_t *nout, const char *path,
                       pm_error *err)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, arr_key);
    *out = NULL;
    *nout = 0;
    if (!arr)
        return 0;
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > CFG_MAX_ENTRIES)
        return pm_error_set(err, PM_EFORMAT, "%s: %s: expected an array of at most %d entries",
                            path, arr_key, CFG_MAX_ENTRIES);
    size_t n = (size_t)cJSON_GetArraySize(arr);
    pm_compare_rule *r = calloc(n ? n : 1, sizeof *r);
    if (!r)
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    size_t i = 0;
    const cJSON *o;
    int rc = 0;
    cJSON_ArrayForEach(o, arr) {
        char where[96];
        snprintf(where, sizeof where, "%s[%zu].", arr_key, i);
        const cJSON *k = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, name_key) : NULL;
        if (!cJSON_IsString(k) || !*k->valuestring || strlen(k->valuestring) >= sizeof r[i].key) {
            rc = pm_error_set(err, PM_EFORMAT, "%s: %s%s: expected a string of 1 to %zu bytes",
                              path, where, name_key, sizeof r[i].key - 1);
            break;
        }
        snprintf(r[i].key, sizeof r[i].key, "%s", k->valuestring);
        int figures = strcmp(arr_key, "figures") == 0;
        if (figures && !pm_figure_find(r[i].key)) {
            rc = pm_error_set(err, PM_EFORMAT, "%s: %s%s: \"%s\" is not a job figure", path, where,
                              name_key, r[i].key);
            break;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(r[j].key, r[i].key) == 0) {
                rc = pm_error_set(err, PM_EFORMAT, "%s: %s%s: \"%s\" is listed twice", path, where,
                                  name_key, r[i].key);
                break;
            }
        if (rc)
            break;
        r[i].better = default_better;
        r[i].threshold_pct = NAN;
        r[i].min_abs = 0;
        r[i].gate = strcmp(arr_key, "tensorflow") == 0; /* benchmark fields: gated unless said */
        if ((rc = get_better(o, "better", &r[i].better, path, where, err)) ||
            (rc = get_num(o, "threshold_pct", &r[i].threshold_pct, path, where, err)) ||
            (rc = get_num(o, "min_abs", &r[i].min_abs, path, where, err)) ||
            (rc = get_bool(o, "gate", &r[i].gate, path, where, err)))
            break;
        if (r[i].gate && pm_compare_is_sampler(r[i].key)) {
            rc = pm_error_set(err, PM_EFORMAT,
                              "%s: %sgate: \"%s\" is the sampler's own and is never gated", path,
                              where, r[i].key);
            break;
        }
        if (r[i].better == PM_BETTER_NONE && !cJSON_GetObjectItemCaseSensitive(o, "gate"))
            r[i].gate = 0; /* informational */
        if (r[i].gate && r[i].better == PM_BETTER_NONE) {
            rc = pm_error_set(err, PM_EFORMAT,
                              "%s: %sgate: \"%s\" has no better direction (\"none\") and cannot "
                              "be gated",
                              path, where, r[i].key);
            break;
        }
        const cJSON *ser = cJSON_GetObjectItemCaseSensitive(o, "series");
        if (ser && (!figures || !cJSON_IsString(ser) || !*ser->valuestring ||
                    strlen(ser->valuestring) >= sizeof r[i].series)) {
            rc = pm_error_set(err, PM_EFORMAT, "%s: %sseries: expected a catalog metric id%s", path,
                              where, figures ? "" : " (figures only)");
            break;
        }
        if (ser)
            snprintf(r[i].series, sizeof r[i].series, "%s", ser->valuestring);
        i++;
    }
    if (rc) {
        free(r);
        return rc;
    }
    *out = r;
    *nout = i;
    return 0;
}

int pm_compare_cfg_parse(const char *path, const char *text, pm_compare_cfg **out, pm_error *err)
{
    *out = NULL;
    cJSON *root = pm_json_parse(path, text, strlen(text), "malformed JSON", err);
    if (!root)
        return PM_EFORMAT;
    int rc = 0;
    pm_compare_cfg *c = calloc(1, sizeof *c);
    if (!c) {
        rc = pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    if (!cJSON_IsObject(root)) {
        rc = pm_error_set(err, PM_EFORMAT, "%s: expected an object", path);
        goto out;
    }
    c->threshold_pct = PM_COMPARE_DEFAULT_THRESHOLD;
    c->z = PM_COMPARE_DEFAULT_Z;
    c->default_better = PM_BETTER_NONE;
    c->phase_better = PM_BETTER_LOWER;
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(root, "phases");
    if (ph && !cJSON_IsObject(ph)) {
        rc = pm_error_set(err, PM_EFORMAT, "%s: phases: expected an object", path);
        goto out;
    }
    if ((rc = get_num(root, "threshold_pct", &c->threshold_pct, path, "", err)) ||
        (rc = get_num(root, "z", &c->z, path, "", err)) ||
        (rc = get_better(root, "default_better", &c->default_better, path, "", err)) ||
        (ph && (rc = get_better(ph, "better", &c->phase_better, path, "phases.", err))) ||
        (ph && (rc = get_bool(ph, "gate", &c->phase_gate, path, "phases.", err))))
        goto out;
    if (c->phase_gate && c->phase_better == PM_BETTER_NONE) {
        rc = pm_error_set(err, PM_EFORMAT,
                          "%s: phases.gate: phases without a better direction "
                          "cannot be gated",
                          path);
        goto out;
    }
    if ((rc = parse_rules(root, "metrics", "id", c->default_better, &c->metrics, &c->nmetrics, path,
                          err)) ||
        (rc = parse_rules(root, "figures", "key", PM_BETTER_NONE, &c->figures, &c->nfigures, path,
                          err)) ||
        (rc = parse_rules(root, "tensorflow", "key", PM_BETTER_LOWER, &c->tf, &c->ntf, path, err)))
        goto out;
out:
    cJSON_Delete(root);
    if (rc) {
        pm_compare_cfg_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int pm_compare_cfg_load(const char *path, pm_compare_cfg **out, pm_error *err)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = pm_read_whole(path, CFG_MAX_BYTES, &text, &len, err);
    if (rc)
        return rc;
    rc = pm_compare_cfg_parse(path, text, out, err);
    free(text);
    return rc;
}
