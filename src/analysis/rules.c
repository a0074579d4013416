/* Efficiency notes: rules kept as data (templates/rules.json, format in
 * docs/analysis.md), evaluated on the analysis alone. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_verdict.h"
#include "rules.h"
#include "perfmon/analysis.h"
#include "perfmon/buf.h"
#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/json.h"
#include "perfmon/units.h"

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
    double min_share_pct; /* stopped: the stretch's share of the host's span */
    pm_host_rule hr;      /* stopped, memory, share: what the per-host step needs */
    pm_gpu_rule gr;       /* gpu (gpu_verdict.h) */
} rule;

/* What a per-host rule's message may name besides {host}, {value},
 * {threshold}: {time} (the onset as the report's time axis prints it),
 * {elapsed} (since the job's start), and the words of the finding. */
typedef struct sign_words {
    char time[40], elapsed[24], what[96], of[64], before[16], after[16], margin[16], last[16];
    char others[16], pct[16];
} sign_words;

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

/* Expand {host}, {value}, {threshold}, {metric}, {unit}, and with w the
 * words of a per-host rule's finding (sign_words). */
static char *expand(const rule *r, const char *host, double value, const char *unit,
                    const sign_words *w)
{
    const struct {
        const char *k;
        const char *v;
    } words[] = {
        {"time", w ? w->time : NULL},     {"elapsed", w ? w->elapsed : NULL},
        {"what", w ? w->what : NULL},     {"of", w ? w->of : NULL},
        {"before", w ? w->before : NULL}, {"after", w ? w->after : NULL},
        {"margin", w ? w->margin : NULL}, {"last", w ? w->last : NULL},
        {"others", w ? w->others : NULL}, {"pct", w ? w->pct : NULL},
    };
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
                size_t k = 0;
                for (; k < sizeof words / sizeof *words; k++)
                    if (words[k].v && strlen(words[k].k) == len &&
                        strncmp(p + 1, words[k].k, len) == 0)
                        break;
                if (k < sizeof words / sizeof *words) {
                    pm_buf_puts(&b, words[k].v);
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

static int add_note_at(pm_analysis *a, const rule *r, int host, double value, const char *unit,
                       double t, const sign_words *w)
{
    pm_note *nn = pm_realloc_array(a->notes, a->nnotes + 1, sizeof *nn);
    if (!nn)
        return PM_ENOMEM;
    a->notes = nn;
    pm_note *n = &nn[a->nnotes];
    memset(n, 0, sizeof *n);
    snprintf(n->rule, sizeof n->rule, "%s", r->id);
    snprintf(n->type, sizeof n->type, "%s", r->type);
    n->severity = r->severity;
    n->host = host;
    n->value = value;
    n->t = t;
    n->message = expand(r, host >= 0 ? a->in.hosts[host].name : NULL, value, unit, w);
    if (!n->message)
        return PM_ENOMEM;
    a->nnotes++;
    return 0;
}

static int add_note(pm_analysis *a, const rule *r, int host, double value, const char *unit)
{
    return add_note_at(a, r, host, value, unit, NAN, NULL);
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

/* PM_HR_* of a per-host rule type, 0 for the others. */
static int host_rule_kind(const char *type)
{
    if (!strcmp(type, "stopped"))
        return PM_HR_STOPPED;
    if (!strcmp(type, "memory"))
        return PM_HR_MEMORY;
    if (!strcmp(type, "share"))
        return PM_HR_SHARE;
    return 0;
}

/* The parameters of a per-host rule (docs/analysis.md, "Efficiency rules"). */
static int parse_host_rule(const cJSON *o, rule *r, int kind, const char *path, size_t i,
                           pm_error *err)
{
    pm_host_rule *h = &r->hr;
    h->kind = kind;
    h->threshold = r->threshold;
    h->early_pct = num_of(o, "early_pct", 20);
    h->min_level = num_of(o, "min_level", 10);
    r->min_share_pct = num_of(o, "min_share_pct", 10);
    if (kind == PM_HR_STOPPED &&
        (!(h->early_pct > 0 && h->early_pct <= 50) || !(r->threshold > 0 && r->threshold < 100) ||
         !(r->min_share_pct > 0 && r->min_share_pct <= 100)))
        return pm_error_set(err, PM_EFORMAT,
                            "%s: rules[%zu]: a stopped rule needs 0 < threshold < 100, "
                            "0 < early_pct <= 50 and 0 < min_share_pct <= 100",
                            path, i);
    if (kind != PM_HR_SHARE)
        return 0;
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(o, "sources");
    int ns = cJSON_GetArraySize(src);
    if (!cJSON_IsArray(src) || ns < 1 || ns > PM_RULE_SRCS)
        return pm_error_set(err, PM_EFORMAT,
                            "%s: rules[%zu].sources: a share rule needs 1 to %d sources", path, i,
                            PM_RULE_SRCS);
    const cJSON *x;
    cJSON_ArrayForEach(x, src) {
        pm_rule_src *rs = &h->src[h->nsrc];
        rs->column = str_of(x, "column");
        rs->per = str_of(x, "per");
        rs->what = str_of(x, "what");
        rs->scale = num_of(x, "scale", 1);
        if (!rs->column || !rs->what || !(rs->scale > 0))
            return pm_error_set(err, PM_EFORMAT,
                                "%s: rules[%zu].sources[%zu]: column and what are required, "
                                "scale above 0",
                                path, i, h->nsrc);
        h->nsrc++;
    }
    return 0;
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
    int per_host = host_rule_kind(r->type);
    if (!strcmp(r->type, "gpu"))
        return pm_gpu_rule_parse(o, r->threshold, &r->gr, path, i, err);
    if (!needs_fig && !needs_metric && !per_host && strcmp(r->type, "capacity"))
        return pm_error_set(err, PM_EFORMAT,
                            "%s: rules[%zu].type: \"%s\" is not node, job, outlier, imbalance, "
                            "slope, capacity, stopped, memory, share or gpu",
                            path, i, r->type);
    if (per_host)
        return parse_host_rule(o, r, per_host, path, i, err);
    if (needs_fig && (!r->figure || !pm_figure_find(r->figure)))
        return pm_error_set(err, PM_EFORMAT, "%s: rules[%zu].figure: unknown figure \"%s\"", path,
                            i, r->figure ? r->figure : "");
    if (needs_metric && !r->metric)
        return pm_error_set(err, PM_EFORMAT, "%s: rules[%zu].metric: required", path, i);
    return 0;
}

/* A time as the report's time axis prints it: UTC clock time, with the
 * date when the job spans more than a day. */
static void clock_words(const pm_analysis *a, double t, char *out, size_t cap)
{
    struct tm tm;
    /* (|t| < 1e15: any clock's time, and a time_t) */
    time_t tt = isfinite(t) && fabs(t) < 1e15 ? (time_t)floor(t) : 0;
    if (!isfinite(t) || !(fabs(t) < 1e15) || !gmtime_r(&tt, &tm)) {
        snprintf(out, cap, "-");
        return;
    }
    strftime(out, cap, a->t_end - a->t_start > 86400 ? "%m-%d %H:%M:%S UTC" : "%H:%M:%S UTC", &tm);
}

/* Seconds as h:mm:ss. */
static void hms_words(double s, char *out, size_t cap)
{
    long x = isfinite(s) && s > 0 && s < 1e15 ? lround(s) : 0;
    snprintf(out, cap, "%ld:%02ld:%02ld", x / 3600, (x / 60) % 60, x % 60);
}

static void pct_words(double v, char *out, size_t cap)
{
    if (!isfinite(v))
        snprintf(out, cap, "-");
    else if (fabs(v) < 9.95 && fabs(v - round(v)) >= 0.05)
        snprintf(out, cap, "%.1f", v);
    else
        snprintf(out, cap, "%.0f", v);
}

/* The per-host rules: each host's finding (s->sign[k], summary.c) against
 * the rule's threshold. */
static int eval_host_rule(pm_analysis *a, const rule *r, size_t k)
{
    int rc = 0;
    size_t nnodes = 0, nstopped = 0;
    if (r->hr.kind == PM_HR_STOPPED) {
        /* A node stopped while the others went on: most nodes did not. */
        for (size_t h = 0; h < a->in.nhosts; h++) {
            const pm_node_sign *g = &a->nodes[h].sign[k];
            if (a->in.hosts[h].gpu || !(a->nodes[h].wall_time_s >= r->min_duration_s) ||
                isnan(g->value))
                continue;
            nnodes++;
            nstopped += g->value >= r->min_share_pct;
        }
        if (nnodes < 2 || 2 * nstopped >= nnodes)
            return 0;
    }
    for (size_t h = 0; h < a->in.nhosts && !rc; h++) {
        const pm_node_sign *g = &a->nodes[h].sign[k];
        if (!(a->nodes[h].wall_time_s >= r->min_duration_s) || isnan(g->value))
            continue;
        sign_words w;
        memset(&w, 0, sizeof w);
        clock_words(a, g->t, w.time, sizeof w.time);
        pct_words(g->value, w.pct, sizeof w.pct);
        hms_words(g->t - a->t_start, w.elapsed, sizeof w.elapsed);
        if (r->hr.kind == PM_HR_STOPPED) {
            if (a->in.hosts[h].gpu || !(g->value >= r->min_share_pct))
                continue;
            pct_words(g->before, w.before, sizeof w.before);
            pct_words(g->after, w.after, sizeof w.after);
            snprintf(w.last, sizeof w.last, "%s", g->to_end ? "the last " : "");
            snprintf(w.others, sizeof w.others, "%zu", nnodes - nstopped);
            static const char *const src[] = {"its cgroup's CPU", "its processes' CPU",
                                              "its processes' CPU", "its CPU"};
            snprintf(w.what, sizeof w.what, "%s", src[g->what & 3]);
            rc = add_note_at(a, r, (int)h, g->value, "%", g->t, &w);
        } else if (r->hr.kind == PM_HR_MEMORY) {
            if (a->in.hosts[h].gpu || !compare(r->op, g->value, r->threshold) || isnan(g->t))
                continue;
            pct_words(100 - g->value > 0 ? 100 - g->value : 0, w.margin, sizeof w.margin);
            if (g->what == 1) {
                char lim[32];
                pm_fmt_bytes(g->before, lim, sizeof lim);
                snprintf(w.what, sizeof w.what, "the job's cgroup memory");
                snprintf(w.of, sizeof w.of, "its limit of %s", lim);
            } else {
                snprintf(w.what, sizeof w.what, "%s",
                         g->what == 2 ? "the job's memory" : "memory use");
                snprintf(w.of, sizeof w.of, "the node");
            }
            rc = add_note_at(a, r, (int)h, g->value, "%", g->t, &w);
        } else {
            if (!compare(r->op, g->value, r->threshold))
                continue;
            size_t s = (size_t)g->what < r->hr.nsrc ? (size_t)g->what : 0;
            snprintf(w.what, sizeof w.what, "%s", r->hr.src[s].what);
            rc = add_note_at(a, r, (int)h, g->value, "%", g->t, &w);
        }
    }
    return rc;
}

/* A gpu rule: the findings of gpu_verdict.c, in the words of its message. */
static int eval_gpu_rule(pm_analysis *a, const rule *r, int slot)
{
    pm_gpu_finding *f = NULL;
    size_t n = 0;
    int rc = pm_gpu_verdicts(a, &r->gr, slot, &f, &n);
    for (size_t k = 0; k < n && !rc; k++) {
        sign_words w;
        memset(&w, 0, sizeof w);
        clock_words(a, f[k].t, w.time, sizeof w.time);
        hms_words(f[k].t - a->t_start, w.elapsed, sizeof w.elapsed);
        hms_words(f[k].t_end - a->t_start, w.last, sizeof w.last);
        pct_words(f[k].value, w.pct, sizeof w.pct);
        pct_words(f[k].before, w.before, sizeof w.before);
        pct_words(f[k].after, w.after, sizeof w.after);
        snprintf(w.others, sizeof w.others, "%zu", f[k].others);
        snprintf(w.what, sizeof w.what, "%s", f[k].what);
        rc = add_note_at(a, r, f[k].host, f[k].value, "%", f[k].t, &w);
    }
    free(f);
    return rc;
}

static int eval_rule(pm_analysis *a, const rule *r)
{
    int rc = 0;
    if (!strcmp(r->type, "node")) {
        const pm_figure *f = pm_figure_find(r->figure);
        for (size_t h = 0; h < a->in.nhosts && !rc; h++) {
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
        double *v = calloc(a->in.nhosts ? a->in.nhosts : 1, sizeof *v);
        if (!v)
            return PM_ENOMEM;
        size_t n = 0;
        /* GPUs are compared with GPUs, nodes with nodes. */
        int gpu = !strncmp(f->key, "gpu_", 4);
        for (size_t h = 0; h < a->in.nhosts; h++) {
            double x = pm_figure_value(&a->nodes[h], f);
            if (!isnan(x) && a->in.hosts[h].gpu == gpu)
                v[n++] = x;
        }
        double med = n >= 2 ? pm_quantile_select(v, n, 0.5) : NAN;
        free(v);
        for (size_t h = 0; h < a->in.nhosts && !rc && med > 0; h++) {
            if (a->in.hosts[h].gpu != gpu)
                continue;
            double x = pm_figure_value(&a->nodes[h], f) / med;
            if (compare(r->op, x, r->threshold))
                rc = add_note(a, r, (int)h, x, "x");
        }
    } else if (!strcmp(r->type, "capacity")) {
        /* Peak process-tree RSS as a percentage of the node's memory. */
        for (size_t h = 0; h < a->in.nhosts && !rc; h++) {
            if (a->nodes[h].wall_time_s < r->min_duration_s)
                continue;
            double v = a->nodes[h].proc_peak_rss_bytes / a->in.hosts[h].mem_total * 100.0;
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
            for (size_t h = 0; h < a->in.nhosts && !rc; h++) {
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
        size_t i = 0, k = 0, g = 0;
        const cJSON *o;
        cJSON_ArrayForEach(o, arr) {
            rule r;
            if ((rc = parse_rule(o, &r, path, i, err)))
                break;
            if (!strcmp(r.type, "gpu")) {
                /* (numbered as pm_rules_plan_load numbered them) */
                int slot = pm_gpu_rule_walks(&r.gr) ? (int)g++ : -1;
                if ((rc = eval_gpu_rule(a, &r, slot))) {
                    rc = pm_error_set(err, rc, "out of memory");
                    break;
                }
                i++;
                continue;
            }
            /* The per-host rules in file order, as pm_rules_plan_load
             * numbered them (a->nodes[h].sign[k]). */
            if (r.hr.kind && k >= PM_NODE_SIGNS) {
                rc =
                    pm_error_set(err, PM_EFORMAT, "%s: more than %d stopped, memory or share rules",
                                 path, PM_NODE_SIGNS);
                break;
            }
            rc = r.hr.kind ? (a->rule_plan ? eval_host_rule(a, &r, k++) : 0) : eval_rule(a, &r);
            if (rc) {
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

int pm_rules_plan_load(pm_analysis *a, pm_error *err)
{
    const char *path = a->opts.rules_path;
    char *text = NULL;
    size_t len = 0;
    int rc = pm_read_whole(path, RULES_MAX_BYTES, &text, &len, err);
    if (rc)
        return rc;
    cJSON *root = pm_json_parse(path, text, len, "malformed JSON", err);
    free(text);
    if (!root)
        return PM_EFORMAT;
    pm_rule_plan *p = calloc(1, sizeof *p);
    if (!p) {
        cJSON_Delete(root);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    p->doc = root;
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "rules");
    if (!cJSON_IsArray(arr))
        rc = pm_error_set(err, PM_EFORMAT, "%s: rules: expected an array", path);
    size_t i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, arr) {
        if (rc)
            break;
        rule r;
        if ((rc = parse_rule(o, &r, path, i++, err)))
            break;
        if (!strcmp(r.type, "slope") && r.metric) {
            if (p->nslope < PM_RULE_SLOPES)
                p->slope[p->nslope++] = r.metric;
            else
                p->slope_all = 1;
        }
        if (!strcmp(r.type, "gpu") && pm_gpu_rule_walks(&r.gr)) {
            if (p->ngpu >= PM_NODE_GPU_SIGNS) {
                rc = pm_error_set(err, PM_EFORMAT,
                                  "%s: more than %d gpu rules of checks held_idle, starved, "
                                  "memory_bound or compute_bound",
                                  path, PM_NODE_GPU_SIGNS);
                break;
            }
            p->gpu[p->ngpu++] = r.gr;
        }
        if (!r.hr.kind)
            continue;
        if (p->n >= PM_NODE_SIGNS) {
            rc = pm_error_set(err, PM_EFORMAT, "%s: more than %d stopped, memory or share rules",
                              path, PM_NODE_SIGNS);
            break;
        }
        p->r[p->n++] = r.hr;
    }
    if (rc) {
        pm_rules_plan_free(p);
        return rc;
    }
    a->rule_plan = p;
    return 0;
}

int pm_rules_want_slope(const pm_analysis *a, const char *id)
{
    const pm_rule_plan *p = a->rule_plan;
    if (!p)
        return 0;
    if (p->slope_all)
        return 1;
    for (size_t i = 0; i < p->nslope; i++)
        if (!strcmp(p->slope[i], id))
            return 1;
    return 0;
}

void pm_rules_plan_free(pm_rule_plan *p)
{
    if (!p)
        return;
    cJSON_Delete(p->doc);
    free(p);
}
