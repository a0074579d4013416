/* The HTML report's comparison with another job (--compare --html): job
 * B's report with a section that says what the PDF's comparison pages say
 * (report_compare.c), from the same functions: both jobs, the rule, how
 * each ended, the verdict, the table of every compared figure and metric,
 * the phases side by side (per phase kind its figures in A and in B), and
 * per metric both jobs' all-node series on one elapsed-time axis (A solid,
 * B dashed: pm_overlay_build), the metrics judged worse first.  The whole
 * report's time axis is then elapsed time, so the overlays zoom with every
 * other chart.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_int.h"
#include "perfmon/compare.h"
#include "perfmon/job_end.h"
#include "perfmon/mem.h"
#include "report_int.h"

/* Plotted in this order: worse, better, changed, noise, same. */
static int verdict_rank(int v)
{
    static const int rank[] = {4, 3, 2, 1, 0, 5};
    return v >= 0 && v <= PM_VERDICT_MISSING ? rank[v] : 7;
}

static void cell(pm_buf *b, const char *s, int num)
{
    pm_buf_puts(b, num ? "<td class=\"num\">" : "<td>");
    pm_html_text(b, s);
    pm_buf_puts(b, "</td>");
}

/* One row's cells after its name: unit, A, B, B - A, verdict (bytes as
 * MiB, as the PDF's table). */
static void row_cells(pm_buf *b, const pm_compare_row *r)
{
    char ca[48], cb[48], cp[48], cv[64];
    pm_compare_row_verdict(r, cv, sizeof cv);
    if (r->kind == PM_CMP_END) {
        cell(b, "", 0);
        cell(b, pm_end_state_name((int)r->a.mean), 0);
        cell(b, pm_end_state_name((int)r->b.mean), 0);
        cell(b, "", 1);
    } else {
        int bytes = strcmp(r->unit, "B") == 0;
        double sc = bytes ? 1.0 / 1048576 : 1;
        pdf_num(r->a.mean * sc, ca, sizeof ca);
        pdf_num(r->b.mean * sc, cb, sizeof cb);
        pm_compare_pct_text(r->pct, cp, sizeof cp);
        cell(b, bytes ? "MiB" : pm_unit_shown(r->unit), 0);
        cell(b, ca, 1);
        cell(b, cb, 1);
        cell(b, cp, 1);
    }
    pm_buf_printf(b, "<td class=\"v-%s\">", pm_verdict_name(r->verdict));
    pm_html_text(b, cv);
    pm_buf_puts(b, "</td>");
}

static void tables(html_ctx *c, const pm_comparison *cmp)
{
    pm_buf *b = &c->body;
    pm_buf_puts(b, "<table id=\"compare\"><thead><tr><th>Figure or metric</th><th>Unit</th>"
                   "<th>A</th><th>B</th><th>B - A</th><th>Verdict</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < cmp->nrows; i++) {
        const pm_compare_row *r = &cmp->rows[i];
        if (r->phase[0])
            continue;
        pm_buf_puts(b, "<tr>");
        cell(b, r->name, 0);
        row_cells(b, r);
        pm_buf_puts(b, "</tr>\n");
    }
    pm_buf_puts(b, "</tbody></table>\n");
    if (!cmp->nphase_kinds)
        return;
    /* The phases side by side: per phase kind (in the comparison's order)
     * its rows, the ones within the threshold counted, as the PDF does. */
    pm_buf_puts(b, "<h3 id=\"compare-phases\">Per phase, A beside B</h3>\n<table "
                   "id=\"compare-phase\"><thead><tr><th>Phase</th><th>Figure or metric</th>"
                   "<th>Unit</th><th>A</th><th>B</th><th>B - A</th><th>Verdict</th></tr></thead>"
                   "<tbody>\n");
    size_t hidden = 0;
    for (size_t i = 0; i < cmp->nrows; i++) {
        const pm_compare_row *r = &cmp->rows[i];
        if (!r->phase[0])
            continue;
        if (r->kind == PM_CMP_PHASE_METRIC && r->verdict == PM_VERDICT_SAME) {
            hidden++;
            continue;
        }
        pm_buf_puts(b, "<tr>");
        cell(b, r->phase, 0);
        cell(b, r->name, 0);
        row_cells(b, r);
        pm_buf_puts(b, "</tr>\n");
    }
    pm_buf_puts(b, "</tbody></table>\n");
    if (hidden)
        pm_buf_printf(b,
                      "<p class=\"help\">%zu resource figures during phases are within the "
                      "threshold and not listed.</p>\n",
                      hidden);
}

/* An overlay as a chart of two lines on elapsed time (its times are
 * already seconds since each job's start). */
static void overlay_json(html_ctx *c, const pm_overlay *ov, const pm_compare_row *r)
{
    pm_buf *d = &c->data;
    pm_buf_printf(d, "%s{\"id\":\"c%zu\"", c->ncharts ? "," : "", c->ncharts);
    html_json_key(d, "metric", 0);
    pm_html_json_str(d, r->key);
    html_json_key(d, "group", 0);
    pm_html_json_str(d, "Comparison");
    pm_buf_puts(d, ",\"all\":1,\"step\":0,\"cmp\":1");
    html_json_key(d, "title", 0);
    pm_html_json_str(d, ov->title);
    html_json_key(d, "ylabel", 0);
    pm_html_json_str(d, ov->ylabel);
    html_json_key(d, "unit", 0);
    pm_html_json_str(d, pm_unit_shown(r->unit));
    pm_buf_puts(d, ",\"lines\":[");
    for (size_t i = 0; i < 2; i++) {
        const pm_plot_series *s = &ov->series[i];
        pm_buf_puts(d, i ? ",{" : "{");
        html_json_key(d, "label", 1);
        pm_html_json_str(d, s->label);
        pm_buf_puts(d, ",\"node\":-1");
        html_json_blob(c, "t", s->t, s->n, 0);
        html_json_blob(c, "v", s->v, s->n, 0);
        pm_buf_puts(d, "}");
    }
    pm_buf_puts(d, "],\"repairs\":[]}");
}

/* The overlays of the metrics rows order[0..n) (html_chart_list). */
typedef struct cmp_list {
    const pm_comparison *cmp;
    const size_t *order;
} cmp_list;

static int cmp_build(html_ctx *c, const void *arg, size_t k, void *ov, pm_error *err)
{
    (void)c;
    const cmp_list *l = arg;
    return pm_overlay_build(l->cmp, l->order[k], ov, err);
}

static const char *cmp_title(const void *ov)
{
    return ((const pm_overlay *)ov)->title;
}

static int cmp_data(html_ctx *c, const void *arg, size_t k, const void *ov, pm_error *err)
{
    (void)err;
    const cmp_list *l = arg;
    overlay_json(c, ov, &l->cmp->rows[l->order[k]]);
    return 0;
}

static void cmp_done(void *ov)
{
    pm_overlay_free(ov);
}

static void cmp_heading(html_ctx *c, const void *arg)
{
    (void)arg;
    pm_buf_puts(&c->body, "<h3 id=\"compare-plots\">Both jobs on one time axis (elapsed; A "
                          "solid, B dashed)</h3>\n");
}

int html_compare(html_ctx *c, pm_error *err)
{
    const pm_comparison *cmp = c->o->compare;
    pm_buf *b = &c->body;
    char buf[1024], la[600], lb[600];
    pm_compare_job_label(cmp, 0, la, sizeof la);
    pm_compare_job_label(cmp, 1, lb, sizeof lb);
    pm_buf_puts(b, "<h2 id=\"comparison\">Comparison with another job</h2>\n<p>");
    snprintf(buf, sizeof buf, "%s is the reference; %s is the job of this report.", la, lb);
    pm_html_text(b, buf);
    char rule[512];
    pm_compare_rule_text(cmp, rule, sizeof rule);
    snprintf(buf, sizeof buf,
             " %c%s. Worse or better follows each metric's better direction, changed means it "
             "has none; (info) marks a row that is not gated. Series values are time-weighted "
             "means of the all-node series (Total or Average).",
             rule[0] == 'a' ? 'A' : rule[0], rule + 1);
    pm_html_text(b, buf);
    char ea[512], eb[512];
    pm_end_text(cmp->a, SIZE_MAX, ea, sizeof ea);
    pm_end_text(cmp->b, SIZE_MAX, eb, sizeof eb);
    snprintf(buf, sizeof buf, " How they ended: A %s; B %s.", ea, eb);
    pm_html_text(b, buf);
    pm_buf_puts(b, "</p>\n<p id=\"compare-verdict\"><b>Verdict: ");
    char verdict[900];
    pm_compare_verdict_text(cmp, verdict, sizeof verdict);
    pm_html_text(b, verdict);
    pm_buf_puts(b, ".</b> ");
    snprintf(buf, sizeof buf,
             "Of %zu comparisons: %zu worse, %zu better, %zu changed, %zu within the noise, "
             "%zu the same, %zu in one job only.",
             cmp->nrows, cmp->count[PM_VERDICT_WORSE], cmp->count[PM_VERDICT_BETTER],
             cmp->count[PM_VERDICT_CHANGED], cmp->count[PM_VERDICT_NOISE],
             cmp->count[PM_VERDICT_SAME], cmp->count[PM_VERDICT_MISSING]);
    pm_html_text(b, buf);
    pm_buf_puts(b, "</p>\n");
    tables(c, cmp);

    size_t *order = pm_alloc_array(cmp->nrows ? cmp->nrows : 1, sizeof *order), n = 0;
    if (!order)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    for (int rank = 0; rank <= 5; rank++)
        for (size_t i = 0; i < cmp->nrows; i++)
            if (cmp->rows[i].kind == PM_CMP_METRIC && verdict_rank(cmp->rows[i].verdict) == rank)
                order[n++] = i;
    cmp_list cml = {cmp, order};
    pm_overlay ov;
    html_chart_list cl = {&cml, n, &ov, cmp_build, cmp_title, cmp_data, cmp_done, cmp_heading};
    int rc = html_chart_list_add(c, &cl, err);
    free(order);
    if (!rc && c->oom)
        rc = pm_error_set(err, PM_ENOMEM, "out of memory for the HTML report's comparison");
    return rc;
}
