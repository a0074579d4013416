/* The report's statistics appendix: each figure per node, laid out by
 * how many nodes there are (few: a column per node; many: a row per node
 * in blocks of columns, or the distribution across nodes and the
 * outliers).  Called last among the pages by pm_report_write.
 */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/mem.h"
#include "perfmon/units.h"

#define STATS_MAX_COLS 6 /* value columns per statistics table */

static void figure_head(const pm_figure *f, char *out, size_t cap)
{
    if (strcmp(f->unit, "1") == 0)
        snprintf(out, cap, "%s", f->title);
    else
        snprintf(out, cap, "%s (%s)", f->title, f->unit);
}

/* Few nodes: one row per figure, one column per node (and the job). */
static void statistics_by_figure(pdf_doc *d)
{
    const pm_analysis *a = d->a;
    size_t nh = a->in.nhosts;
    double w[2 + STATS_MAX_COLS];
    int right[2 + STATS_MAX_COLS];
    const char *head[2 + STATS_MAX_COLS];
    w[0] = 171;
    right[0] = 0;
    head[0] = "Figure";
    for (size_t h = 0; h < nh; h++) {
        w[1 + h] = fmin(90, (CONTENT_W - 171) / (double)(nh + 1));
        right[1 + h] = 1;
        head[1 + h] = a->in.hosts[h].name;
    }
    w[1 + nh] = w[1];
    right[1 + nh] = 1;
    head[1 + nh] = "Job";
    pdf_table t = {2 + nh, w, right, head, 7.5};
    pdf_table_head(d, &t);
    for (size_t i = 0; i < PM_NFIGURES; i++) {
        const pm_figure *f = &PM_FIGURES[i];
        char c[2 + STATS_MAX_COLS][64];
        const char *cells[2 + STATS_MAX_COLS];
        figure_head(f, c[0], sizeof c[0]);
        for (size_t h = 0; h < nh; h++)
            pdf_num(pm_figure_value(&a->nodes[h], f), c[1 + h], sizeof c[0]);
        pdf_num(pm_figure_value(&a->job, f), c[1 + nh], sizeof c[0]);
        for (size_t k = 0; k < 2 + nh; k++)
            cells[k] = c[k];
        pdf_table_row(d, &t, cells, (int)(i % 2));
    }
}

/* Many nodes: one row per node, the figures in blocks of columns. */
static void statistics_by_node(pdf_doc *d)
{
    const pm_analysis *a = d->a;
    const size_t per = STATS_MAX_COLS;
    for (size_t f0 = 0; f0 < PM_NFIGURES; f0 += per) {
        size_t nf = PM_NFIGURES - f0 < per ? PM_NFIGURES - f0 : per;
        double w[1 + STATS_MAX_COLS];
        int right[1 + STATS_MAX_COLS];
        const char *head[1 + STATS_MAX_COLS];
        char heads[STATS_MAX_COLS][96];
        w[0] = 91;
        right[0] = 0;
        head[0] = "Host";
        for (size_t i = 0; i < nf; i++) {
            w[1 + i] = (CONTENT_W - 91) / (double)per;
            right[1 + i] = 1;
            figure_head(&PM_FIGURES[f0 + i], heads[i], sizeof heads[i]);
            head[1 + i] = heads[i];
        }
        pdf_table t = {1 + nf, w, right, head, 7};
        pdf_table_head(d, &t);
        for (size_t h = 0; h <= a->in.nhosts; h++) {
            /* The last row is the job. */
            const pm_node_summary *s = h < a->in.nhosts ? &a->nodes[h] : &a->job;
            char c[1 + STATS_MAX_COLS][48];
            const char *cells[1 + STATS_MAX_COLS];
            snprintf(c[0], 48, "%s", h < a->in.nhosts ? a->in.hosts[h].name : "Job");
            cells[0] = c[0];
            for (size_t i = 0; i < nf; i++) {
                pdf_num(pm_figure_value(s, &PM_FIGURES[f0 + i]), c[1 + i], 48);
                cells[1 + i] = c[1 + i];
            }
            pdf_table_row(d, &t, cells, (int)(h % 2));
        }
        d->y += 10;
    }
}

/* Many nodes: each figure's distribution across the nodes and the job's
 * value, then the least and the most busy nodes with the reason; every
 * node's row stays in the attached JSON and --stats. */
static void statistics_spread(pdf_doc *d)
{
    const pm_analysis *a = d->a;
    size_t n = a->in.nhosts;
    double *v = pm_alloc_array(n ? n : 1, sizeof *v);
    if (!v) {
        d->oom = 1;
        return;
    }
    static const double w[7] = {155, 57, 57, 57, 57, 57, 71};
    static const int right[7] = {0, 1, 1, 1, 1, 1, 1};
    static const char *const head[7] = {"Figure",   "Min", "5th pct", "Median",
                                        "95th pct", "Max", "Job"};
    pdf_table t = {7, w, right, head, 7.5};
    pdf_table_head(d, &t);
    size_t row = 0;
    for (size_t i = 0; i < PM_NFIGURES; i++) {
        const pm_figure *f = &PM_FIGURES[i];
        for (size_t h = 0; h < n; h++)
            v[h] = pm_figure_value(&a->nodes[h], f);
        pm_spread sp;
        if (pm_spread_of(v, n, &sp) != 0) {
            d->oom = 1;
            break;
        }
        if (sp.n == 0)
            continue;
        char c[7][64];
        const double vals[6] = {sp.min, sp.p5,  sp.median,
                                sp.p95, sp.max, pm_figure_value(&a->job, f)};
        /* Bytes scaled to their size, each on its own (as the key figures). */
        double bytes = !strcmp(f->unit, "MiB") ? 1048576.0 : !strcmp(f->unit, "B") ? 1.0 : 0;
        if (bytes > 0)
            snprintf(c[0], sizeof c[0], "%s", f->title);
        else
            figure_head(f, c[0], sizeof c[0]);
        for (int k = 0; k < 6; k++) {
            if (bytes > 0 && isfinite(vals[k]))
                pm_fmt_bytes(vals[k] * bytes, c[1 + k], 64);
            else
                pdf_num(vals[k], c[1 + k], 64);
        }
        const char *cells[7] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
        pdf_table_row(d, &t, cells, (int)(row++ % 2));
    }
    free(v);
    d->y += 8;
    pm_node_rank worst[PM_SPREAD_OUTLIERS], best[PM_SPREAD_OUTLIERS];
    size_t nw = 0, nb = 0;
    if (pm_usage_outliers(a, worst, &nw, best, &nb, PM_SPREAD_OUTLIERS) != 0) {
        d->oom = 1;
        return;
    }
    if (nw) {
        char title[96];
        snprintf(title, sizeof title,
                 "The %zu least busy nodes (most idle time first; idle: "
                 "CPU below %.0f %%)",
                 nw, PM_IDLE_BELOW_PCT);
        report_outlier_table(d, title, worst, nw);
        d->y += 8;
    }
    if (nb) {
        char title[96];
        snprintf(title, sizeof title, "The %zu busiest nodes", nb);
        report_outlier_table(d, title, best, nb);
        d->y += 8;
    }
}

void report_statistics_pages(pdf_doc *d)
{
    pdf_new_page(d);
    pdf_heading(d, "Statistics per node", 1);
    if (d->a->in.nhosts > PM_SPREAD_MIN_NODES)
        pdf_paragraph(d,
                      "The per-node figures of perfmon-analyze --stats as their distribution "
                      "across the nodes (every node's value is in the attached perfmon-stats.json "
                      "and in --stats); the job column sums, averages or takes the maximum as each "
                      "figure requires (see docs/analysis.md).",
                      8.5);
    else
        pdf_paragraph(d,
                      "The per-node figures of perfmon-analyze --stats, the same numbers as the "
                      "attached perfmon-stats.json; the job column sums, averages or takes the "
                      "maximum as each figure requires (see docs/analysis.md).",
                      8.5);
    d->y += 4;
    if (d->a->in.nhosts <= STATS_MAX_COLS - 1)
        statistics_by_figure(d);
    else if (d->a->in.nhosts <= PM_SPREAD_MIN_NODES)
        statistics_by_node(d);
    else
        statistics_spread(d);
}
