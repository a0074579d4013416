/* The HTML report's charts (see html_int.h): the PDF's, in the PDF's
 * order (pm_chart_build), with a band chart's nodes as lines or as a
 * min/max pyramid level (docs/report.md, "What is exact at which zoom"). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_int.h"
#include "perfmon/mem.h"
#include "perfmon/units.h"
#include "report_int.h"

/* A band chart of a job of up to this many nodes has a line per node
 * (its own samples); above, a per-node min/max pyramid level. */
#define PM_HTML_LINE_NODES PM_REPORT_SERIES_HOSTS
/* The float32 bytes of all nodes' min/max in all band charts, at most
 * (before deflate), and the coarsest level that is still worth it. */
#define PM_HTML_PYR_BUDGET ((size_t)24 << 20)
#define PM_HTML_PYR_MIN_COLS 500

/* ---- charts --------------------------------------------------------------- */

/* The host a chart's line is of (its values are the host's series), or -1. */
static long line_host(const pm_analysis *a, const pm_metric_result *r, const pm_plot_series *s)
{
    for (size_t h = 0; h < a->in.nhosts; h++)
        if (r->host[h] && r->host[h]->v == s->v && r->host[h]->n == s->n)
            return (long)h;
    return -1;
}

/* A band chart's nodes (docs/report.md, "What is exact at which zoom"):
 * in a job of at most PM_HTML_LINE_NODES nodes a line per node that is
 * not a line already, its own samples (pm_report_series); above, each node's
 * minimum and maximum over blocks of c->pyr_block grid points, the nodes'
 * rows one after the other (NaN where a node has no data). */
static int band_nodes(html_ctx *c, const pm_metric_result *r, const pm_chart *ch, pm_error *err)
{
    const pm_analysis *a = c->a;
    const pm_plot_band *b = ch->plot.band;
    pm_buf *d = &c->data;
    size_t ng = b->n, nh = a->in.nhosts;
    if (ng == 0 || (nh > PM_HTML_LINE_NODES && !c->pyr_block))
        return 0;
    int rc = 0;
    if (nh <= PM_HTML_LINE_NODES) {
        pm_buf_puts(d, ",\"rows\":[");
        int first = 1;
        for (size_t h = 0; h < nh && !rc; h++) {
            int drawn = 0;
            for (size_t i = 0; i < ch->plot.nseries; i++)
                drawn |= line_host(a, r, &ch->plot.series[i]) == (long)h;
            float *t = NULL, *v = NULL;
            size_t n = 0;
            if (!r->host[h] || drawn)
                continue;
            if ((rc = pm_report_series(a, r, h, &t, &v, &n, err)) != 0)
                break;
            pm_buf_printf(d, "%s{", first ? "" : ",");
            html_json_key(d, "label", 1);
            pm_html_json_str(d, a->in.hosts[h].name);
            pm_buf_printf(d, ",\"node\":%zu", h);
            html_json_f32(c, "t", t, n);
            html_json_f32(c, "v", v, n);
            pm_buf_puts(d, "}");
            free(t);
            free(v);
            first = 0;
        }
        pm_buf_puts(d, "]");
        return rc;
    }
    double *row = pm_alloc_array(ng, sizeof *row);
    if (!row)
        return pm_error_set(err, PM_ENOMEM, "out of memory for the HTML report's series");
    size_t bk = c->pyr_block, nb = (ng + bk - 1) / bk;
    double *lo = pm_alloc_array(nh * nb, sizeof *lo), *hi = pm_alloc_array(nh * nb, sizeof *hi);
    double *t = pm_alloc_array(nb, sizeof *t);
    if (!lo || !hi || !t)
        rc = pm_error_set(err, PM_ENOMEM, "out of memory for the HTML report's series");
    for (size_t h = 0; h < nh && !rc; h++) {
        if (r->host[h])
            rc = pm_report_row(a, r, h, PM_REPORT_BAND_COLS, 0, ng, row, err);
        for (size_t j = 0; j < nb && !rc; j++) {
            double mn = INFINITY, mx = -INFINITY;
            for (size_t g = j * bk; g < (j + 1) * bk && g < ng && r->host[h]; g++)
                if (isfinite(row[g])) {
                    mn = fmin(mn, row[g]);
                    mx = fmax(mx, row[g]);
                }
            lo[h * nb + j] = mn <= mx ? mn : NAN;
            hi[h * nb + j] = mn <= mx ? mx : NAN;
        }
    }
    if (!rc) {
        for (size_t j = 0; j < nb; j++)
            t[j] = b->t[j * bk];
        pm_buf_printf(d, ",\"pyr\":{\"n\":%zu,\"block\":%zu", nb, bk);
        html_json_blob(c, "t", t, nb, a->t_start);
        html_json_blob(c, "lo", lo, nh * nb, 0);
        html_json_blob(c, "hi", hi, nh * nb, 0);
        pm_buf_puts(d, "}");
    }
    free(lo);
    free(hi);
    free(t);
    free(row);
    return rc;
}

static int chart_json(html_ctx *c, const pm_chart *ch, size_t m, int all, const char *group,
                      pm_error *err)
{
    const pm_analysis *a = c->a;
    const pm_metric_result *r = &a->metrics[m];
    pm_buf *d = &c->data;
    double t0 = a->t_start;
    pm_buf_printf(d, "%s{\"id\":\"c%zu\"", c->ncharts ? "," : "", c->ncharts);
    html_json_key(d, "metric", 0);
    pm_html_json_str(d, r->def->id);
    html_json_key(d, "group", 0);
    pm_html_json_str(d, group);
    pm_buf_printf(d, ",\"all\":%d,\"step\":%d", all, ch->plot.step);
    html_json_key(d, "title", 0);
    pm_html_json_str(d, ch->title);
    html_json_key(d, "ylabel", 0);
    pm_html_json_str(d, ch->ylabel);
    html_json_key(d, "unit", 0);
    pm_html_json_str(d, pm_unit_shown(r->def->unit));
    pm_buf_puts(d, ",\"lines\":[");
    for (size_t i = 0; i < ch->plot.nseries; i++) {
        const pm_plot_series *s = &ch->plot.series[i];
        pm_buf_puts(d, i ? ",{" : "{");
        html_json_key(d, "label", 1);
        pm_html_json_str(d, s->label);
        pm_buf_printf(d, ",\"node\":%ld", all ? -1L : line_host(a, r, s));
        html_json_blob(c, "t", s->t, s->n, t0);
        html_json_blob(c, "v", s->v, s->n, 0);
        pm_buf_puts(d, "}");
    }
    pm_buf_puts(d, "]");
    if (ch->plot.band) {
        const pm_plot_band *b = ch->plot.band;
        pm_buf_puts(d, ",\"band\":{");
        html_json_key(d, "label", 1);
        pm_html_json_str(d, b->label);
        html_json_blob(c, "t", b->t, b->n, t0);
        html_json_blob(c, "lo", b->lo, b->n, 0);
        html_json_blob(c, "p5", b->p5, b->n, 0);
        html_json_blob(c, "mid", b->mid, b->n, 0);
        html_json_blob(c, "p95", b->p95, b->n, 0);
        html_json_blob(c, "hi", b->hi, b->n, 0);
        pm_buf_puts(d, "}");
        int rc = band_nodes(c, r, ch, err);
        if (rc)
            return rc;
    }
    pm_buf_puts(d, ",\"repairs\":[");
    int first = 1;
    for (size_t i = 0; i < ch->plot.nspans; i++) {
        const pm_plot_span *s = &ch->plot.spans[i];
        if (s->kind != 0)
            continue; /* phases: the job's, shaded on every chart */
        pm_buf_printf(d, "%s[", first ? "" : ",");
        pm_buf_json_num(d, s->t0 - t0);
        pm_buf_puts(d, ",");
        pm_buf_json_num(d, s->t1 - t0);
        pm_buf_puts(d, "]");
        first = 0;
    }
    pm_buf_puts(d, "]}");
    return 0;
}

void html_figure(html_ctx *c, const char *title)
{
    pm_buf *b = &c->body;
    pm_buf_printf(b, "<figure class=\"chart\" id=\"c%zu\"><figcaption>", c->ncharts);
    pm_html_text(b, title);
    pm_buf_puts(b, "</figcaption><div class=\"plot\"></div></figure>\n");
}

/* The per-node minimum and maximum of the band charts of a job of more
 * than PM_HTML_LINE_NODES nodes: the finest level of the pyramid (blocks
 * of 1, 2, 4 ... points of the band's grid) whose float32 values for all
 * nodes and band charts fit PM_HTML_PYR_BUDGET bytes, as long as it has
 * PM_HTML_PYR_MIN_COLS columns; else none (c->pyr_block = 0). */
static void pyramid_level(html_ctx *c)
{
    const pm_analysis *a = c->a;
    c->pyr_block = 0;
    if (a->in.nhosts <= PM_HTML_LINE_NODES)
        return;
    size_t nband = 0;
    for (size_t m = 0; m < a->nmetrics; m++)
        nband += !c->flat[m] && a->metrics[m].nhosts_with_data > PM_LEGEND_MAX_HOSTS;
    double t0, step;
    size_t ng = pm_report_grid(a, PM_REPORT_BAND_COLS, &t0, &step);
    if (!nband || !ng)
        return;
    for (size_t bk = 1; bk <= ng; bk *= 2) {
        size_t cols = (ng + bk - 1) / bk;
        if (cols < PM_HTML_PYR_MIN_COLS && cols < ng)
            return;
        double bytes = (double)nband * (double)a->in.nhosts * (double)cols * 8.0;
        if (bytes <= (double)PM_HTML_PYR_BUDGET) {
            c->pyr_block = bk;
            return;
        }
    }
}

int html_chart_list_add(html_ctx *c, const html_chart_list *l, pm_error *err)
{
    int rc = 0, heading = 0;
    for (size_t k = 0; k < l->n && !rc; k++) {
        rc = l->build(c, l->arg, k, l->ch, err);
        if (rc == PM_ENOENT) {
            rc = 0;
            continue;
        }
        if (rc)
            break;
        if (!heading) {
            l->heading(c, l->arg);
            heading = 1;
        }
        html_figure(c, l->title(l->ch));
        rc = l->data(c, l->arg, k, l->ch, err);
        c->ncharts++;
        l->done(l->ch);
    }
    return rc;
}

/* A layout group's all-node (all) or per-node charts: chart k is metric k's,
 * none for a metric of another group, a flat one, or an all-node chart of a
 * metric that one node has. */
typedef struct job_list {
    size_t group;
    int all;
} job_list;

static int job_build(html_ctx *c, const void *arg, size_t m, void *ch, pm_error *err)
{
    const job_list *jl = arg;
    const pm_metric_result *r = &c->a->metrics[m];
    if (strcmp(r->def->page, c->l->groups[jl->group].page) != 0 || c->flat[m] ||
        (jl->all && r->nhosts_with_data <= 1))
        return PM_ENOENT;
    return pm_chart_build(c->a, m, jl->all, c->o->elapsed, ch, err);
}

static const char *job_title(const void *ch)
{
    return ((const pm_chart *)ch)->title;
}

static int job_data(html_ctx *c, const void *arg, size_t m, const void *ch, pm_error *err)
{
    const job_list *jl = arg;
    return chart_json(c, ch, m, jl->all, c->l->groups[jl->group].title, err);
}

static void job_done(void *ch)
{
    pm_chart_free(ch);
}

static void job_heading(html_ctx *c, const void *arg)
{
    const job_list *jl = arg;
    pm_buf_printf(&c->body, "<h3 id=\"g%zu-%s\">", jl->group, jl->all ? "all" : "node");
    pm_html_text(&c->body, c->l->groups[jl->group].title);
    pm_buf_printf(&c->body, ": %s</h3>\n", jl->all ? "all nodes" : "per node");
}

/* The charts in the PDF's order (report_plots.c): per layout group the
 * all-node charts, then the per-node ones; a metric of one node only its
 * per-node chart, a flat metric a row of the constant table. */
int html_charts(html_ctx *c, flat_row *fl, size_t *nfl, char *missing, size_t mcap, pm_error *err)
{
    const pm_analysis *a = c->a;
    const pm_layout *l = c->l;
    char *flat = c->flat;
    *nfl = 0;
    missing[0] = 0;
    for (size_t g = 0; g < l->ngroups; g++) {
        int seen = 0;
        for (size_t m = 0; m < a->nmetrics; m++) {
            const pm_metric_result *r = &a->metrics[m];
            if (strcmp(r->def->page, l->groups[g].page) != 0 || r->nhosts_with_data == 0)
                continue;
            seen = 1;
            double lo, hi;
            if (report_metric_constant(r, a->in.nhosts, &lo, &hi)) {
                flat[m] = 1;
                fl[(*nfl)++] = (flat_row){m, g, lo, hi};
            }
        }
        if (!seen) {
            size_t ml = strlen(missing);
            snprintf(missing + ml, mcap - ml, "%s%s", ml ? ", " : "", l->groups[g].title);
        }
    }
    pyramid_level(c);
    int rc = 0;
    for (size_t g = 0; g < l->ngroups && !rc; g++)
        for (int all = 1; all >= 0 && !rc; all--) {
            job_list jl = {g, all};
            pm_chart ch;
            html_chart_list cl = {&jl,       a->nmetrics, &ch,      job_build,
                                  job_title, job_data,    job_done, job_heading};
            rc = html_chart_list_add(c, &cl, err);
        }
    if (!rc && c->oom)
        rc = pm_error_set(err, PM_ENOMEM, "out of memory for the HTML report's series");
    return rc;
}
