/* The report's plot pages and the plot renderer behind them.
 *
 * report_plot_pages lists the images in page order (per layout group the
 * all-node charts, then the per-node ones, then the colour maps; a flat
 * metric becomes a row of the "Constant over the job" table instead),
 * then lays them out one by one while worker threads render the next ones
 * into vector canvases (canvas.h).  The workers stay at most 4 items per
 * thread in front of the layout (an ordered bounded window, window.h), so
 * only a window of canvases is held at once; while the item the layout
 * needs is still being drawn, the layout thread draws the next unclaimed
 * item itself.  Order of calls inside: items listed -> workers started ->
 * take_item(i) for i = 0.. in order (placed with pdf_place_canvas) ->
 * window stopped, workers joined, canvases freed.
 *
 * This loop is not pm_pool (threads.h): pm_pool_run returns only when
 * every item is done, with no consumer running beside the workers and no
 * bound on how far they run ahead, which is what keeps the report's
 * memory flat in the number of plots.
 *
 * report_render_canvas and the draw callbacks are also the compare and
 * phases pages' plots.
 */
#include "report_int.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/canvas.h"
#include "perfmon/mem.h"
#include "perfmon/threads.h"
#include "perfmon/units.h"
#include "perfmon/window.h"

#define PDF_DPI 72 /* vectors: a series is decimated to one column per point */

/* ---- images --------------------------------------------------------------- */

void report_draw_chart(cairo_t *cr, double w, double h, const void *obj)
{
    pm_plot_draw(cr, 0, 0, w, h, 8.0, obj);
}

static void draw_heat(cairo_t *cr, double w, double h, const void *obj)
{
    pm_heatmap_draw(cr, 0, 0, w, h, 8.0, obj);
}

void report_draw_timeline(cairo_t *cr, double w, double h, const void *obj)
{
    pm_timeline_draw(cr, 0, 0, w, h, 8.0, obj);
}

/* Draw into a canvas that records vectors (see canvas.h); PDF_DPI sets
 * the pixel columns a series is decimated to (min and max per column). */
pm_canvas *report_render_canvas(report_draw_cb fn, const void *obj, double w, double h)
{
    pm_canvas *cv = pm_canvas_new(w, h, PDF_DPI);
    if (!cv)
        return NULL;
    fn(pm_canvas_cairo(cv), w, h, obj);
    if (pm_canvas_status(cv) != 0) {
        pm_canvas_free(cv);
        return NULL;
    }
    return cv;
}

/* ---- plot pages: rendered by workers ahead of the layout ---------------- */

/* One image of the plot pages, in page order. */
typedef struct plot_item {
    size_t group; /* layout group, or SIZE_MAX for a colour map */
    size_t metric;
    int all;     /* all-node chart (1) or per-node (0) */
    double w, h; /* size on the page, points */
    /* Set by the thread that renders it, before pm_window_put: */
    int rc; /* 0, PM_ENOENT (nothing to draw) or an error */
    pm_canvas *cv;
} plot_item;

/* The items and the window over them (window.h: the workers claim items
 * in page order, at most 4 per thread in front of the layout, which takes
 * them in page order). */
typedef struct plot_queue {
    const pm_analysis *a;
    int elapsed;
    plot_item *items;
    size_t n;
    pm_window win;
} plot_queue;

static void render_item(const plot_queue *q, plot_item *it)
{
    pm_error err;
    if (it->group != SIZE_MAX) {
        pm_chart c;
        int rc = pm_chart_build(q->a, it->metric, it->all, q->elapsed, &c, &err);
        if (rc) {
            it->rc = rc;
            return;
        }
        it->cv = report_render_canvas(report_draw_chart, &c.plot, it->w, it->h);
        pm_chart_free(&c);
    } else {
        pm_heatmap_data hd;
        if (pm_heatmap_build(q->a, it->metric, q->elapsed, PM_REPORT_HEAT_PDF, &hd, &err) != 0) {
            it->rc = PM_ENOENT;
            return;
        }
        it->cv = report_render_canvas(draw_heat, &hd.hm, it->w, it->h);
        pm_heatmap_data_free(&hd);
    }
    it->rc = it->cv ? 0 : PM_ENOMEM;
}

/* Item i rendered and handed to the layout (once the window is stopped,
 * its canvas stays in items[] for the end to free). */
static void render_put(plot_queue *q, size_t i)
{
    render_item(q, &q->items[i]);
    pm_window_put(&q->win, i, NULL);
}

static void *plot_worker(void *arg)
{
    plot_queue *q = arg;
    size_t i;
    while (pm_window_claim(&q->win, &i))
        render_put(q, i);
    return NULL;
}

/* Item i, rendered; NULL when the window was stopped.  While it is still
 * being drawn, the layout thread draws the next unclaimed item instead of
 * waiting idle. */
static plot_item *take_item(plot_queue *q, size_t i)
{
    size_t j;
    int rc;
    while ((rc = pm_window_take_or_claim(&q->win, i, NULL, &j)) == 1)
        render_put(q, j);
    return rc == 0 ? &q->items[i] : NULL;
}

static int metric_in_group(const pm_metric_result *r, const char *page)
{
    return strcmp(r->def->page, page) == 0;
}

/* Flat within noise: every node's series stays within this fraction of
 * its largest magnitude (an all-zero series is flat). */
#define FLAT_REL 1e-3

/* Whether every node's series of r is flat; lo..hi: the range of the
 * nodes' levels.  A metric without a finite value is not constant (it has
 * no data). */
void report_constant_cells(const pm_analysis *a, const pm_metric_result *r, double lo, double hi,
                           char *val, size_t vcap, char *nodes, size_t ncap)
{
    const char *u = pm_unit_shown(r->def->unit), *gap = *u ? " " : "";
    char v1[32], v2[32];
    pm_fmt_title_num(lo, v1, sizeof v1);
    pm_fmt_title_num(hi, v2, sizeof v2);
    if (strcmp(v1, v2) == 0)
        snprintf(val, vcap, "%s%s%s", v1, gap, u);
    else
        snprintf(val, vcap, "%s to %s%s%s", v1, v2, gap, u);
    snprintf(nodes, ncap, "%zu of %zu", r->nhosts_with_data, a->in.nhosts);
}

int report_metric_constant(const pm_metric_result *r, size_t nhosts, double *lo, double *hi)
{
    int any = 0;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t h = 0; h < nhosts; h++) {
        const pm_series *s = r->host[h];
        if (!s)
            continue;
        double mn, mx;
        pm_series_range(s, &mn, &mx);
        if (!(mx >= mn))
            continue;
        if (mx - mn > FLAT_REL * fmax(fabs(mn), fabs(mx)))
            return 0;
        any = 1;
        if (mn < *lo)
            *lo = mn;
        if (mx > *hi)
            *hi = mx;
    }
    return any;
}

typedef struct flat_metric {
    size_t metric, group;
    double lo, hi;
} flat_metric;

/* One row per constant metric instead of its plots, then the sections
 * the job has no data for, on one line. */
static void constant_table(pdf_doc *d, const flat_metric *fl, size_t nfl, const char *missing)
{
    const pm_analysis *a = d->a;
    if (nfl) {
        if (d->y + 80 > PAGE_H - BOTTOM)
            pdf_new_page(d);
        else
            d->y += 6;
        pdf_heading(d, "Constant over the job", 1);
        pdf_paragraph(
            d,
            "Each of these metrics stayed flat (within 0.1 % on every node) for the whole "
            "job, so it is given as a number instead of a plot.",
            8.5);
        d->y += 4;
        static const double w[4] = {110, 200, 131, 70};
        static const int right[4] = {0, 0, 1, 1};
        static const char *const head[4] = {"Section", "Metric", "Value", "Nodes"};
        pdf_table t = {4, w, right, head, 8};
        pdf_table_head(d, &t);
        for (size_t i = 0; i < nfl; i++) {
            const pm_metric_result *r = &a->metrics[fl[i].metric];
            char val[96], nodes[48];
            report_constant_cells(a, r, fl[i].lo, fl[i].hi, val, sizeof val, nodes, sizeof nodes);
            const char *cells[4] = {d->l->groups[fl[i].group].title, r->def->name, val, nodes};
            pdf_table_row(d, &t, cells, (int)(i % 2));
        }
        d->y += 6;
    }
    if (*missing) {
        char line[600];
        snprintf(line, sizeof line, "No data on this job for: %s.", missing);
        if (!nfl)
            d->y += 6;
        pdf_paragraph(d, line, 8.5);
    }
}

/* The plot pages in the layout's order: per group all-node charts, then
 * per-node charts, plots_per_page to a page; then the colour maps.  A
 * metric of one node gets its per-node chart only (the all-node one would
 * be the same curve), a constant metric a table row instead of plots. */
int report_plot_pages(pdf_doc *d, pm_error *err)
{
    const pm_analysis *a = d->a;
    int ppp = d->l->plots_per_page;
    double avail = PAGE_H - TOP - BOTTOM - 30;
    double slot = avail / ppp;
    size_t cap = 2 * a->nmetrics * (d->l->ngroups ? d->l->ngroups : 1) + d->l->nheatmaps + 1;
    plot_queue q;
    memset(&q, 0, sizeof q);
    q.a = a;
    q.elapsed = d->o->elapsed;
    q.items = calloc(cap, sizeof *q.items);
    flat_metric *fl = calloc(a->nmetrics ? a->nmetrics : 1, sizeof *fl);
    char *flat = calloc(a->nmetrics ? a->nmetrics : 1, 1);
    if (!q.items || !fl || !flat) {
        free(q.items);
        free(fl);
        free(flat);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    size_t nfl = 0;
    char missing[512] = "";
    for (size_t g = 0; g < d->l->ngroups; g++) {
        int seen = 0;
        for (size_t m = 0; m < a->nmetrics; m++) {
            const pm_metric_result *r = &a->metrics[m];
            if (!metric_in_group(r, d->l->groups[g].page) || r->nhosts_with_data == 0)
                continue;
            seen = 1;
            double lo, hi;
            if (report_metric_constant(r, a->in.nhosts, &lo, &hi)) {
                flat[m] = 1;
                fl[nfl++] = (flat_metric){m, g, lo, hi};
            }
        }
        if (!seen) {
            size_t ml = strlen(missing);
            snprintf(missing + ml, sizeof missing - ml, "%s%s", ml ? ", " : "",
                     d->l->groups[g].title);
        }
    }
    for (size_t g = 0; g < d->l->ngroups; g++)
        for (int all = 1; all >= 0; all--)
            for (size_t m = 0; m < a->nmetrics; m++)
                if (metric_in_group(&a->metrics[m], d->l->groups[g].page) && !flat[m] &&
                    !(all && a->metrics[m].nhosts_with_data <= 1))
                    q.items[q.n++] = (plot_item){g, m, all, CONTENT_W, slot - 8, 0, NULL};
    if (a->in.nhosts > PM_HEATMAP_MIN_HOSTS)
        for (size_t i = 0; i < d->l->nheatmaps; i++) {
            int m = pm_analysis_metric(a, d->l->heatmaps[i]);
            /* A flat metric is a row of the constant table, not a map. */
            if (m >= 0 && !flat[m])
                q.items[q.n++] =
                    (plot_item){SIZE_MAX, (size_t)m, 0, CONTENT_W, (avail - 10) / 2, 0, NULL};
        }
    d->plots_total = q.n;
    size_t nt = pm_thread_count(q.n);
    if (pm_window_init(&q.win, q.n, 4 * (nt ? nt : 1), 0) != 0) {
        free(q.items);
        free(fl);
        free(flat);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    pthread_t th[64];
    size_t started = 0;
    for (size_t i = 1; i < nt && started < 64; i++)
        if (pthread_create(&th[started], NULL, plot_worker, &q) == 0)
            started++;

    int rc = 0, placed = 0;
    size_t cur_group = SIZE_MAX - 1;
    int cur_all = -1;
    int heat_first = 1;
    for (size_t i = 0; i < q.n && rc == 0; i++) {
        plot_item *it = take_item(&q, i);
        if (!it) {
            rc = pm_error_set(err, PM_EUSAGE, "plot %zu of %zu was not drawn", i, q.n);
            break;
        }
        if (it->rc == PM_ENOENT)
            continue;
        if (it->rc) {
            rc = pm_error_set(err, it->rc, "cannot draw the %s %s", a->metrics[it->metric].def->id,
                              it->group == SIZE_MAX ? "colour map" : "plot");
            break;
        }
        if (it->group != SIZE_MAX) {
            int first = it->group != cur_group || it->all != cur_all;
            /* A new section starts under the last one when its heading and
             * first plot fit there: no page with one plot and a blank half. */
            if (first && placed > 0 && placed < ppp && d->y + 24 + it->h + 8 <= PAGE_H - BOTTOM) {
                d->y += 4;
                char title[160];
                snprintf(title, sizeof title, "%s: %s", d->l->groups[it->group].title,
                         it->all ? "all nodes" : "per node");
                pdf_heading(d, title, 1);
                cur_group = it->group;
                cur_all = it->all;
            } else if (first || placed == ppp || d->y + it->h > PAGE_H - BOTTOM) {
                pdf_new_page(d);
                char title[160];
                snprintf(title, sizeof title, "%s: %s%s", d->l->groups[it->group].title,
                         it->all ? "all nodes" : "per node", first ? "" : " (continued)");
                pdf_heading(d, title, first);
                placed = 0;
                cur_group = it->group;
                cur_all = it->all;
            }
        } else if (heat_first || placed == 2) {
            pdf_new_page(d);
            pdf_heading(
                d, heat_first ? "Imbalance: time x node" : "Imbalance: time x node (continued)",
                heat_first);
            placed = 0;
            heat_first = 0;
            cur_group = SIZE_MAX;
        }
        rc = pdf_place_canvas(d, it->cv, it->h);
        pm_canvas_free(it->cv);
        it->cv = NULL;
        if (rc)
            rc = pm_error_set(err, rc,
                              "cannot place the %s plot (PDF library error 0x%04X, "
                              "detail %u)",
                              a->metrics[it->metric].def->id, (unsigned)d->hpdf_error,
                              (unsigned)d->hpdf_detail);
        d->y += it->group == SIZE_MAX ? 10 : 8;
        placed++;
        d->plots_done++;
        pdf_progress(d);
    }
    pm_window_stop(&q.win);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    for (size_t i = 0; i < q.n; i++)
        pm_canvas_free(q.items[i].cv);
    free(q.items);
    pm_window_destroy(&q.win, NULL, NULL);
    if (rc == 0)
        constant_table(d, fl, nfl, missing);
    free(fl);
    free(flat);
    return rc;
}
