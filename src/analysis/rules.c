/* Efficiency notes: rules kept as data (templates/rules.json, format in
 * docs/analysis.md), evaluated on the analysis alone. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/analysis.h"
#include "perfmon/buf.h"
#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/json.h"

#define RULES_MAX_BYTES (1u << 20)

typedef struct rule {
    const char *id;
    const char *type;   /* "node", "job", "imbalance", "slope", "capacity" */
    const char *figure; /* node/job figure key */
    const char *metric; /* catalog id (imbalance, slope) */
    const char *op;     /* "<", "<=", ">", ">=" */
    double threshold;
    double min_r2;         /* slope */
    double min_duration_s; /* slope, node rules */
    int severity;
    const char *message;
} rule;

static int compare(const char *op, double v, double thr)
{
    if (isnan(v))
        return 0;
    if (strcmp(op, "<") == 0)
        return v < thr;
    if (strcmp(op, "<=") == 0)
        return v <= thr;
    if (strcmp(op, ">") == 0)
        return v > thr;
    if (strcmp(op, ">=") == 0)
        return v >= thr;
    return 0;
}

/* Expand {host}, {value}, {threshold}, {metric}, {unit}. */
static char *expand(const rule *r, const char *host, double value, const char *unit)
{
    pm_buf b;
    pm_buf_init(&b);
    for (const char *p = r->message; *p; p++) {
        if (*p == '{') {
            const char *e = strchr(p, '}');
            if (e) {
                size_t len = (size_t)(e - p - 1);
                if (len == 4 && strncmp(p + 1, "host", 4) == 0) {
                    pm_buf_puts(&b, host ? host : "job");
                    p = e;
                    continue;
                }
                if (len == 5 && strncmp(p + 1, "value", 5) == 0) {
                    pm_buf_printf(&b, "%.4g", value);
                    p = e;
                    continue;
                }
                if (len == 9 && strncmp(p + 1, "threshold", 9) == 0) {
                    pm_buf_printf(&b, "%.4g", r->threshold);
                    p = e;
                    continue;
                }
                if (len == 6 && strncmp(p + 1, "metric", 6) == 0) {
                    pm_buf_puts(&b, r->metric ? r->metric : r->figure ? r->figure : "");
                    p = e;
                    continue;
                }
                if (len == 4 && strncmp(p + 1, "unit", 4) == 0) {
                    pm_buf_puts(&b, unit ? unit : "");
                    p = e;
                    continue;
                }
            }
        }
        pm_buf_add(&b, p, 1);
    }
    pm_buf_add(&b, "", 1);
    return b.oom ? (pm_buf_free(&b), NULL) : pm_buf_take(&b);
}

static int add_note(pm_analysis *a, const rule *r, int host, double value, const char *unit)
{
    pm_note *nn = pm_realloc_array(a->notes, a->nnotes + 1, sizeof *nn);
    if (!nn)
        return PM_ENOMEM;
    a->notes = nn;
    pm_note *n = &nn[a->nnotes];
    memset(n, 0, sizeof *n);
    snprintf(n->rule, sizeof n->rule, "%s", r->id);
    n->severity = r->severity;
    n->host = host;
    n->value = value;
    n->message = expand(r, host >= 0 ? a->hosts[host].name : NULL, value, unit);
    if (!n->message)
        return PM_ENOMEM;
    a->nnotes++;
    return 0;
}

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num_of(const cJSON *o, const char *key, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static int parse_rule(const cJSON *o, rule *r, const char *path, size_t i, pm_error *err)
{
    memset(r, 0, sizeof *r);
    r->id = str_of(o, "id");
    r->type = str_of(o, "type");
    r->figure = str_of(o, "figure");
    r->metric = str_of(o, "metric");
    r->op = str_of(o, "op");
    r->message = str_of(o, "message");
    const char *sev = str_of(o, "severity");
    const cJSON *thr = cJSON_GetObjectItemCaseSensitive(o, "threshold");
    if (!r->id || !r->type || !r->op || !r->message || !cJSON_IsNumber(thr))
        return pm_error_set(err, PM_EFORMAT,
                            "%s: rules[%zu]: id, type, op, threshold and message are required",
                            path, i);
    r->threshold = thr->valuedouble;
    r->min_r2 = num_of(o, "min_r2", 0.8);
    r->min_duration_s = num_of(o, "min_duration_s", 0);
    if (strcmp(r->op, "<") && strcmp(r->op, "<=") && strcmp(r->op, ">") && strcmp(r->op, ">="))
        return pm_error_set(err, PM_EFORMAT,
                            "%s: rules[%zu].op: \"%s\" is not <, <=, > or >=", path, i, r->op);
    r->severity = PM_SEV_WARNING;
    if (sev && strcmp(sev, "info") == 0)
        r->severity = PM_SEV_INFO;
    else if (sev && strcmp(sev, "critical") == 0)
        r->severity = PM_SEV_CRITICAL;
    else if (sev && strcmp(sev, "warning") != 0)
        return pm_error_set(err, PM_EFORMAT,
                            "%s: rules[%zu].severity: \"%s\" is not info, warning or critical",
                            path, i, sev);
    int needs_fig =
        !strcmp(r->type, "node") || !strcmp(r->type, "job") || !strcmp(r->type, "outlier");
    int needs_metric = !strcmp(r->type, "imbalance") || !strcmp(r->type, "slope");
    if (!needs_fig && !needs_metric && strcmp(r->type, "capacity"))
        return pm_error_set(
            err, PM_EFORMAT,
            "%s: rules[%zu].type: \"%s\" is not node, job, outlier, imbalance, slope or capacity",
            path, i, r->type);
    if (needs_fig && (!r->figure || !pm_figure_find(r->figure)))
        return pm_error_set(err, PM_EFORMAT, "%s: rules[%zu].figure: unknown figure \"%s\"", path,
                            i, r->figure ? r->figure : "");
    if (needs_metric && !r->metric)
        return pm_error_set(err, PM_EFORMAT, "%s: rules[%zu].metric: required", path, i);
    return 0;
}

static int eval_rule(pm_analysis *a, const rule *r)
{
    int rc = 0;
    if (!strcmp(r->type, "node")) {
        const pm_figure *f = pm_figure_find(r->figure);
        for (size_t h = 0; h < a->nhosts && !rc; h++) {
            if (a->nodes[h].wall_time_s < r->min_duration_s)
                continue;
            double v = pm_figure_value(&a->nodes[h], f);
            if (compare(r->op, v, r->threshold))
                rc = add_note(a, r, (int)h, v, f->unit);
        }
    } else if (!strcmp(r->type, "job")) {
        const pm_figure *f = pm_figure_find(r->figure);
        double v = pm_figure_value(&a->job, f);
        if (a->job.wall_time_s >= r->min_duration_s && compare(r->op, v, r->threshold))
            rc = add_note(a, r, -1, v, f->unit);
    } else if (!strcmp(r->type, "outlier")) {
        /* A node's figure over the median of all nodes' (2 nodes or more). */
        const pm_figure *f = pm_figure_find(r->figure);
        double *v = calloc(a->nhosts ? a->nhosts : 1, sizeof *v);
        if (!v)
            return PM_ENOMEM;
        size_t n = 0;
        /* GPUs are compared with GPUs, nodes with nodes. */
        int gpu = !strncmp(f->key, "gpu_", 4);
        for (size_t h = 0; h < a->nhosts; h++) {
            double x = pm_figure_value(&a->nodes[h], f);
            if (!isnan(x) && a->hosts[h].gpu == gpu)
                v[n++] = x;
        }
        double med = n >= 2 ? pm_quantile_select(v, n, 0.5) : NAN;
        free(v);
        for (size_t h = 0; h < a->nhosts && !rc && med > 0; h++) {
            if (a->hosts[h].gpu != gpu)
                continue;
            double x = pm_figure_value(&a->nodes[h], f) / med;
            if (compare(r->op, x, r->threshold))
                rc = add_note(a, r, (int)h, x, "x");
        }
    } else if (!strcmp(r->type, "capacity")) {
        /* Peak process-tree RSS as a percentage of the node's memory. */
        for (size_t h = 0; h < a->nhosts && !rc; h++) {
            if (a->nodes[h].wall_time_s < r->min_duration_s)
                continue;
            double v = a->nodes[h].proc_peak_rss_bytes / a->hosts[h].mem_total * 100.0;
            if (isfinite(v) && compare(r->op, v, r->threshold))
                rc = add_note(a, r, (int)h, v, "%");
        }
    } else {
        int m = pm_analysis_metric(a, r->metric);
        if (m < 0)
            return 0;
        const pm_metric_result *res = &a->metrics[m];
        if (!strcmp(r->type, "imbalance")) {
            if (res->nhosts_with_data > 1 && compare(r->op, res->imbalance, r->threshold))
                rc = add_note(a, r, res->all.host_max, res->imbalance, "x");
        } else { /* slope: growth per hour as a percentage of the mean */
            for (size_t h = 0; h < a->nhosts && !rc; h++) {
                const pm_series *s = res->host[h];
                double slope, r2;
                if (!s || s->st.duration < r->min_duration_s || !(s->st.mean > 0))
                    continue;
                /* --stream keeps the slope, not the values */
                if (s->v ? pm_slope(s->t, s->v, s->n, &slope, &r2) != 0 : !s->slope_ok)
                    continue;
                if (!s->v) {
                    slope = s->slope;
                    r2 = s->slope_r2;
                }
                if (r2 < r->min_r2)
                    continue;
                double pct_h = slope * 3600.0 / s->st.mean * 100.0;
                if (compare(r->op, pct_h, r->threshold))
                    rc = add_note(a, r, (int)h, pct_h, "%/h");
            }
        }
    }
    return rc;
}

int pm_rules_eval(pm_analysis *a, const char *path, pm_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = pm_read_whole(path, RULES_MAX_BYTES, &text, &len, err);
    if (rc)
        return rc;
    cJSON *root = pm_json_parse(path, text, len, "malformed JSON", err);
    if (!root) {
        free(text);
        return PM_EFORMAT;
    }
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "rules");
    if (!cJSON_IsArray(arr)) {
        rc = pm_error_set(err, PM_EFORMAT, "%s: rules: expected an array", path);
    } else {
        size_t i = 0;
        const cJSON *o;
        cJSON_ArrayForEach(o, arr) {
            rule r;
            if ((rc = parse_rule(o, &r, path, i, err)))
                break;
            if ((rc = eval_rule(a, &r))) {
                rc = pm_error_set(err, rc, "out of memory");
                break;
            }
            i++;
        }
    }
    cJSON_Delete(root);
    free(text);
    return rc;
}
