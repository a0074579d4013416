/* perfmon-analyze --compare: the aligned text table and the JSON document
 * (keys in docs/analysis.md, "Comparing two jobs"). */
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "perfmon/units.h"
#include "perfmon/compare.h"
#include "perfmon/export.h"
#include "perfmon/json.h"

/* ---- text ------------------------------------------------------------------ */

static void fnum(char *b, size_t cap, double v)
{
    if (isnan(v))
        snprintf(b, cap, "-");
    else if (v != 0 && (fabs(v) >= 1e7 || fabs(v) < 1e-3))
        snprintf(b, cap, "%.3e", v);
    else
        snprintf(b, cap, "%.4g", v);
}

static void fz(char *b, size_t cap, double z)
{
    if (isnan(z))
        snprintf(b, cap, "-");
    else if (fabs(z) >= 1000)
        snprintf(b, cap, "%s", z > 0 ? ">999" : "<-999");
    else
        snprintf(b, cap, "%.1f", z);
}

/* A label fit for a terminal: control bytes become '?'. */
static void clean(char *out, size_t cap, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 1 < cap; i++)
        out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
    out[i] = 0;
}

static void job_line(FILE *f, const pm_comparison *c, int which)
{
    char l[600];
    const pm_analysis *a = which ? c->b : c->a;
    pm_compare_job_label(c, which, l, sizeof l);
    fprintf(f, "  %s, %zu host%s, %.1f s\n", l, a->in.nhosts, a->in.nhosts == 1 ? "" : "s",
            a->t_end - a->t_start);
}

static int shown_unit_w(const pm_comparison *c)
{
    size_t w = 4;
    for (size_t i = 0; i < c->nrows; i++) {
        const char *u = c->rows[i].unit;
        size_t l = !strcmp(u, "J") || !strcmp(u, "kWh") ? strlen("energy") : strlen(u);
        if (l > w)
            w = l;
    }
    return (int)(w > 12 ? 12 : w);
}

/* Job figures are single numbers: no z, p95 or maximum columns. */
static void figure_text(FILE *f, const pm_compare_row *r, int kw, int uw)
{
    char a[32], b[32], p[32];
    double joules = !strcmp(r->unit, "J") ? 1 : !strcmp(r->unit, "kWh") ? 3.6e6 : 0;
    const char *unit = r->unit;
    if (joules > 0) { /* an energy scaled to its size (pm_fmt_energy, as the report) */
        pm_fmt_energy(r->a.mean * joules, a, sizeof a);
        pm_fmt_energy(r->b.mean * joules, b, sizeof b);
        unit = "energy";
    } else {
        fnum(a, sizeof a, r->a.mean);
        fnum(b, sizeof b, r->b.mean);
    }
    pm_compare_pct_text(r->pct, p, sizeof p);
    char v[64];
    pm_compare_row_verdict(r, v, sizeof v);
    fprintf(f, "  %-*.*s %-*.*s %10s %10s %8s %-6s %s\n", kw, kw, r->key, uw, uw, unit, a, b, p,
            pm_better_name(r->better), v);
}

static void row_text(FILE *f, const pm_compare_row *r, int kw, int uw)
{
    char a[32], b[32], p[32], z[32], pa[32], pb[32], ma[32], mb[32];
    fnum(a, sizeof a, r->a.mean);
    fnum(b, sizeof b, r->b.mean);
    pm_compare_pct_text(r->pct, p, sizeof p);
    fz(z, sizeof z, r->zscore);
    fnum(pa, sizeof pa, r->a.p95);
    fnum(pb, sizeof pb, r->b.p95);
    fnum(ma, sizeof ma, r->a.max);
    fnum(mb, sizeof mb, r->b.max);
    char v[64];
    pm_compare_row_verdict(r, v, sizeof v);
    fprintf(f, "  %-*.*s %-*.*s %10s %10s %8s %6s %10s %10s %10s %10s %-6s %s\n", kw, kw, r->key,
            uw, uw, r->unit, a, b, p, z, pa, pb, ma, mb, pm_better_name(r->better), v);
}

static void head_text(FILE *f, const char *first, int kw, int uw)
{
    fprintf(f, "  %-*s %-*s %10s %10s %8s %6s %10s %10s %10s %10s %-6s %s\n", kw, first, uw, "unit",
            "A", "B", "B-A %", "z", "p95 A", "p95 B", "max A", "max B", "better", "verdict");
}

int pm_compare_text(const pm_comparison *c, FILE *f, pm_error *err)
{
    int kw = 8, uw = shown_unit_w(c);
    for (size_t i = 0; i < c->nrows; i++)
        if ((int)strlen(c->rows[i].key) > kw)
            kw = (int)strlen(c->rows[i].key);
    if (kw > 32)
        kw = 32;
    fprintf(f, "perfmon-analyze --compare: B against A\n");
    job_line(f, c, 0);
    job_line(f, c, 1);
    char rule[512];
    pm_compare_rule_text(c, rule, sizeof rule);
    fprintf(f, "  %s\n", rule);

    fprintf(f, "\nHow the jobs ended\n");
    for (size_t i = 0; i < c->nrows; i++) {
        const pm_compare_row *r = &c->rows[i];
        if (r->kind != PM_CMP_END)
            continue;
        for (int w = 0; w < 2; w++) {
            char t[512], cl[512];
            pm_end_text(w ? c->b : c->a, SIZE_MAX, t, sizeof t);
            clean(cl, sizeof cl, t);
            fprintf(f, "  %s  %-10s %s\n", w ? "B" : "A",
                    pm_end_state_name((int)(w ? r->b.mean : r->a.mean)), cl);
        }
        fprintf(f, "  verdict: %s%s\n", pm_verdict_name(r->verdict),
                r->gated ? "" : " (not gated)");
    }

    fprintf(f, "\nJob figures");
    if (c->runs_a > 1 || c->runs_b > 1)
        fprintf(f,
                " (A and B: the medians of %zu and %zu runs; a gated figure is worse when every "
                "run of B is beyond A's noise and the threshold, suspect when some are)",
                c->runs_a, c->runs_b);
    fprintf(f, "\n  %-*s %-*s %10s %10s %8s %-6s %s\n", kw, "figure", uw, "unit", "A", "B", "B-A %",
            "better", "verdict");
    for (size_t i = 0; i < c->nrows; i++)
        if (c->rows[i].kind == PM_CMP_FIGURE)
            figure_text(f, &c->rows[i], kw, uw);

    fprintf(
        f,
        "\nMetrics (all-node series, Total or Average over nodes, as in the all-node plot titles; "
        "A and B: that series' time-weighted means)\n");
    head_text(f, "metric", kw, uw);
    for (size_t i = 0; i < c->nrows; i++)
        if (c->rows[i].kind == PM_CMP_METRIC)
            row_text(f, &c->rows[i], kw, uw);

    for (size_t i = 0; i < c->nrows; i++) {
        const pm_compare_row *r = &c->rows[i];
        if (r->kind != PM_CMP_PHASE_DURATION)
            continue;
        char ph[80];
        clean(ph, sizeof ph, r->phase);
        fprintf(
            f,
            "\nPhase %s (duration: mean over nodes; metrics: all-node series while a node is in it)\n",
            ph);
        head_text(f, "metric", kw, uw);
        row_text(f, r, kw, uw);
        size_t same = 0;
        for (size_t k = i + 1; k < c->nrows && c->rows[k].kind == PM_CMP_PHASE_METRIC; k++) {
            if (c->rows[k].verdict == PM_VERDICT_SAME)
                same++;
            else
                row_text(f, &c->rows[k], kw, uw);
        }
        if (same)
            fprintf(f, "  (%zu metric%s within the threshold not shown; --json lists all)\n", same,
                    same == 1 ? "" : "s");
    }

    char *verdict = NULL;
    size_t vn = pm_compare_verdict_text(c, NULL, 0);
    if ((verdict = malloc(vn + 1)) == NULL)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    pm_compare_verdict_text(c, verdict, vn + 1);
    char *cl = malloc(vn + 1);
    if (cl) {
        clean(cl, vn + 1, verdict);
        fprintf(f, "\nVerdict: %s\n", cl);
    }
    free(cl);
    free(verdict);
    fprintf(f,
            "  %zu worse, %zu better, %zu changed (no better direction), %zu within the noise, "
            "%zu the same, %zu in one job only\n",
            c->count[PM_VERDICT_WORSE], c->count[PM_VERDICT_BETTER], c->count[PM_VERDICT_CHANGED],
            c->count[PM_VERDICT_NOISE], c->count[PM_VERDICT_SAME], c->count[PM_VERDICT_MISSING]);
    if (c->gated_suspect)
        fprintf(f,
                "  %zu gated figure%s suspect: worse in some run of B, not confirmed by every "
                "one; rerun B and compare again\n",
                c->gated_suspect, c->gated_suspect == 1 ? "" : "s");
    if (ferror(f))
        return pm_error_set(err, PM_EIO, "write failed");
    return 0;
}

/* ---- JSON ------------------------------------------------------------------ */

static const char *overall_name(int o)
{
    static const char *const names[] = {"not worse", "worse", "better", "mixed"};
    return o >= 0 && o < 4 ? names[o] : "?";
}

static void side_json(cJSON *o, const char *k, const pm_compare_side *s)
{
    cJSON *x = cJSON_AddObjectToObject(o, k);
    if (!x)
        return;
    pm_json_num(x, "n", (double)s->n);
    pm_json_num(x, "mean", s->mean);
    pm_json_num(x, "p95", s->p95);
    pm_json_num(x, "max", s->max);
    pm_json_num(x, "se", s->se);
}

static cJSON *row_json(const pm_compare_row *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "key", r->key);
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddStringToObject(o, "unit", r->unit);
    cJSON_AddStringToObject(o, "better", pm_better_name(r->better));
    pm_json_num(o, "threshold_pct", r->threshold_pct);
    pm_json_num(o, "min_abs", r->min_abs);
    side_json(o, "a", &r->a);
    side_json(o, "b", &r->b);
    pm_json_num(o, "diff", r->diff);
    /* +-inf (A is 0) has no JSON number: null with diff telling the sign. */
    pm_json_num(o, "diff_pct", r->pct);
    pm_json_num(o, "se", r->se);
    pm_json_num(o, "z", r->zscore);
    cJSON_AddBoolToObject(o, "significant", r->significant);
    cJSON_AddStringToObject(o, "verdict", pm_verdict_name(r->verdict));
    cJSON_AddBoolToObject(o, "gated", r->gated);
    if (r->kind == PM_CMP_FIGURE) {
        pm_json_num(o, "runs_a", (double)r->runs_a);
        pm_json_num(o, "runs_b", (double)r->runs_b);
        pm_json_num(o, "runs_beyond", (double)r->runs_beyond);
        cJSON_AddBoolToObject(o, "suspect", r->suspect);
    }
    return o;
}

static void job_json(cJSON *root, const char *k, const char *label, const pm_analysis *a)
{
    cJSON *o = cJSON_AddObjectToObject(root, k);
    if (!o)
        return;
    cJSON_AddStringToObject(o, "path", label);
    cJSON_AddStringToObject(o, "job", pm_analysis_job_id(a));
    pm_json_num(o, "hosts", (double)a->in.nhosts);
    pm_json_num(o, "start", a->t_start);
    pm_json_num(o, "end", a->t_end);
    cJSON *e = cJSON_AddObjectToObject(o, "end_state");
    if (e) {
        char t[512];
        pm_end_text(a, SIZE_MAX, t, sizeof t);
        cJSON_AddStringToObject(e, "state", pm_end_state_name(a->end.state));
        cJSON_AddStringToObject(e, "detail", t);
    }
}

char *pm_compare_json_string(const pm_comparison *c)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON *hd = cJSON_AddObjectToObject(root, "perfmon_compare");
    if (hd) {
        pm_json_num(hd, "schema", PM_COMPARE_JSON_SCHEMA);
        pm_json_num(hd, "threshold_pct", c->threshold_pct);
        pm_json_num(hd, "z", c->z);
    }
    job_json(root, "a", c->label_a, c->a);
    job_json(root, "b", c->label_b, c->b);
    cJSON_AddStringToObject(root, "verdict",
                            c->overall == PM_OVERALL_WORSE   ? "worse"
                            : c->overall == PM_OVERALL_MIXED ? "mixed"
                            : c->gated_suspect               ? "suspect"
                                                             : "ok");
    cJSON_AddStringToObject(root, "overall", overall_name(c->overall));
    size_t vn = pm_compare_verdict_text(c, NULL, 0);
    char *vt = malloc(vn + 1);
    if (vt) {
        pm_compare_verdict_text(c, vt, vn + 1);
        cJSON_AddStringToObject(root, "verdict_text", vt);
        free(vt);
    }
    char rule[512];
    pm_compare_rule_text(c, rule, sizeof rule);
    cJSON_AddStringToObject(root, "rule", rule);
    cJSON *cnt = cJSON_AddObjectToObject(root, "counts");
    for (int v = 0; cnt && v <= PM_VERDICT_MISSING; v++)
        pm_json_num(cnt, pm_verdict_name(v), (double)c->count[v]);
    if (cnt)
        pm_json_num(cnt, "suspect", (double)c->gated_suspect);
    cJSON *figs = cJSON_AddArrayToObject(root, "figures");
    cJSON *mets = cJSON_AddArrayToObject(root, "metrics");
    cJSON *phs = cJSON_AddArrayToObject(root, "phases");
    cJSON *cur = NULL; /* the current phase kind's "metrics" */
    int oom = !figs || !mets || !phs;
    for (size_t i = 0; i < c->nrows && !oom; i++) {
        const pm_compare_row *r = &c->rows[i];
        cJSON *o = row_json(r);
        if (!o) {
            oom = 1;
            break;
        }
        switch (r->kind) {
        case PM_CMP_END:
            cJSON_AddStringToObject(o, "a_state", pm_end_state_name((int)r->a.mean));
            cJSON_AddStringToObject(o, "b_state", pm_end_state_name((int)r->b.mean));
            cJSON_AddItemToObject(root, "end", o);
            break;
        case PM_CMP_FIGURE: cJSON_AddItemToArray(figs, o); break;
        case PM_CMP_METRIC: cJSON_AddItemToArray(mets, o); break;
        case PM_CMP_PHASE_DURATION: {
            cJSON *p = cJSON_CreateObject();
            if (!p || !cJSON_AddItemToArray(phs, p)) {
                cJSON_Delete(p);
                cJSON_Delete(o);
                oom = 1;
                break;
            }
            cJSON_AddStringToObject(p, "name", r->phase);
            cJSON_AddItemToObject(p, "duration", o);
            cur = cJSON_AddArrayToObject(p, "metrics");
            break;
        }
        default:
            if (cur)
                cJSON_AddItemToArray(cur, o);
            else
                cJSON_Delete(o);
            break;
        }
    }
    char *s = oom ? NULL : cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

int pm_compare_json(const pm_comparison *c, FILE *f, pm_error *err)
{
    char *s = pm_compare_json_string(c);
    if (!s)
        return pm_error_set(err, PM_ENOMEM, "out of memory for the comparison");
    int bad = fputs(s, f) < 0 || fputc('\n', f) == EOF;
    free(s);
    if (bad)
        return pm_error_set(err, PM_EIO, "write failed");
    return 0;
}
