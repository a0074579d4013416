/* Charts of a pm_analysis: what one plot shows, built from the analysis
 * (see report.h).
 *
 * pm_chart_build turns metric m into a pm_chart: per node (a line per
 * node, or a median with a p5-p95 band and the outlying nodes when there
 * are many) or all nodes (their sum), with the shaded spans where values
 * were repaired, the job's phases as bands, and the title, axes and file
 * name; pm_heatmap_build turns it into a colour map (a row per node,
 * similar nodes together).  Both only describe: plot.c draws them (pm_plot_draw,
 * pm_heatmap_draw), into the PDF (report_plots.c) or PNG files
 * (plots_write.c).  Order of calls: build, draw, pm_chart_free or
 * pm_heatmap_data_free.
 */
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/export.h"
#include "perfmon/mem.h"
#include "perfmon/phase_stats.h"
#include "perfmon/report.h"
#include "perfmon/vec.h"
#include "perfmon/order.h"

#define MAX_SPANS 256
#define MAX_GRID PM_REPORT_BAND_COLS

void pm_chart_name(const char *name, char *out, size_t cap)
{
    size_t n = 0;
    int under = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p && n + 1 < cap; p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                 *p == '-';
        if (ok) {
            out[n++] = (char)*p;
            under = 0;
        } else if (!under && n > 0) {
            out[n++] = '_';
            under = 1;
        }
    }
    while (n > 0 && out[n - 1] == '_')
        n--;
    out[n] = '\0';
    if (n == 0)
        snprintf(out, cap, "metric");
}

static void fmt_title_num(double v, char *out, size_t cap)
{
    pm_fmt_title_num(v, out, cap);
}

const char *pm_unit_shown(const char *unit)
{
    return strcmp(unit, "1") == 0 ? "" : unit;
}

static const char *unit_gap(const char *unit)
{
    return *pm_unit_shown(unit) ? " " : "";
}

static const char *comb_name(const pm_metric_def *d)
{
    return d->comb == PM_COMB_TOTAL ? "Total" : "Average";
}

void pm_chart_free(pm_chart *c)
{
    if (!c)
        return;
    if (c->labels)
        for (size_t i = 0; i < c->plot.nseries; i++)
            free(c->labels[i]);
    free(c->labels);
    free(c->series);
    free(c->band_t);
    free(c->band_lo);
    free(c->band_mid);
    free(c->band_hi);
    free(c->band_p5);
    free(c->band_p95);
    free(c->spans);
    free(c->nodes_n);
    memset(c, 0, sizeof *c);
}

/* Spans of time where some host's value was repaired, merged, at most
 * MAX_SPANS (closest neighbours merged first by widening the join gap). */
static int repair_spans(const pm_analysis *a, const pm_metric_result *r, pm_chart *c)
{
    double *p = NULL;
    size_t n = 0;
    if (pm_report_repairs(a, r, &p, &n))
        return PM_ENOMEM;
    pm_plot_span *s = pm_alloc_array(n ? n : 1, sizeof *s);
    if (!s) {
        free(p);
        return PM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        s[i] = (pm_plot_span){p[2 * i], p[2 * i + 1], 0, NULL, 0};
    free(p);
    if (n == 0) {
        free(s);
        return 0;
    }
    /* Sort by start, then merge overlaps; widen the join gap until the
     * count is bounded. */
    for (size_t i = 1; i < n; i++) {
        pm_plot_span x = s[i];
        size_t j = i;
        while (j > 0 && s[j - 1].t0 > x.t0) {
            s[j] = s[j - 1];
            j--;
        }
        s[j] = x;
        if (i > 20000)
            break; /* insertion sort bound; later ones are merged coarsely */
    }
    double gap = 0;
    for (;;) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            if (m && s[i].t0 <= s[m - 1].t1 + gap) {
                if (s[i].t1 > s[m - 1].t1)
                    s[m - 1].t1 = s[i].t1;
            } else {
                s[m++] = s[i];
            }
        }
        n = m;
        if (n <= MAX_SPANS)
            break;
        double span = s[n - 1].t1 - s[0].t0;
        gap = gap > 0 ? gap * 2 : span / 1000;
    }
    c->spans = s;
    c->plot.spans = s;
    c->plot.nspans = n;
    return 0;
}

static int add_series(pm_chart *c, size_t cap, const char *label, const double *t, const double *v,
                      size_t n)
{
    size_t i = c->plot.nseries;
    if (i >= cap)
        return 0;
    if (n && !v)
        return PM_EFORMAT; /* (--stream: a series not kept whole) */
    c->labels[i] = pm_strdup(label);
    if (!c->labels[i])
        return PM_ENOMEM;
    c->series[i] = (pm_plot_series){c->labels[i], t, v, n};
    c->plot.nseries = i + 1;
    return 0;
}

/* The band's statistics at one grid point from the hosts' values there
 * (col[m], finite, sorted here). */
static void band_point(pm_chart *c, size_t g, double *col, size_t m)
{
    if (m == 0) {
        c->band_lo[g] = c->band_mid[g] = c->band_hi[g] = NAN;
        c->band_p5[g] = c->band_p95[g] = NAN;
        return;
    }
    qsort(col, m, sizeof *col, pm_cmp_double);
    c->band_lo[g] = col[0];
    c->band_hi[g] = col[m - 1];
    c->band_mid[g] = pm_median_sorted(col, m);
    c->band_p5[g] = gsl_stats_quantile_from_sorted_data(col, 1, m, 0.05);
    c->band_p95[g] = gsl_stats_quantile_from_sorted_data(col, 1, m, 0.95);
}

/* The hosts' rows on the band's grid are read a block of grid points at a
 * time (--stream reads them from its file: BAND_BLOCK bytes for all hosts
 * at once; the environment variable PM_STREAM_BAND_BLOCK overrides it, so
 * that the tests cut a small job's band into blocks); in memory the block
 * is the whole grid. */
#define BAND_BLOCK ((size_t)32 << 20)

static size_t band_block(void)
{
    const char *e = getenv("PM_STREAM_BAND_BLOCK");
    char *end;
    unsigned long long v = e ? strtoull(e, &end, 10) : 0;
    return e && *e && !*end && v ? (size_t)v : BAND_BLOCK;
}

static int build_band(const pm_analysis *a, const pm_metric_result *r, pm_chart *c, pm_error *err)
{
    double t0 = 0, step = 1;
    size_t ng = pm_report_grid(a, MAX_GRID, &t0, &step);
    size_t k = 0;
    for (size_t h = 0; h < a->in.nhosts; h++)
        if (r->host[h])
            k++;
    if (ng == 0 || k == 0)
        return 0;
    size_t bw = ng, block = a->keep ? band_block() : 0;
    if (a->keep && k * ng * sizeof(double) > block)
        bw = block / sizeof(double) / k ? block / sizeof(double) / k : 1;
    double *rows = pm_alloc_array(k * bw, sizeof *rows);
    double *col = pm_alloc_array(k, sizeof *col);
    c->band_t = pm_alloc_array(ng, sizeof *c->band_t);
    c->band_lo = pm_alloc_array(ng, sizeof *c->band_lo);
    c->band_mid = pm_alloc_array(ng, sizeof *c->band_mid);
    c->band_hi = pm_alloc_array(ng, sizeof *c->band_hi);
    c->band_p5 = pm_alloc_array(ng, sizeof *c->band_p5);
    c->band_p95 = pm_alloc_array(ng, sizeof *c->band_p95);
    if (!rows || !col || !c->band_t || !c->band_lo || !c->band_mid || !c->band_hi || !c->band_p5 ||
        !c->band_p95) {
        free(rows);
        free(col);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory building the chart", r->def->id);
    }
    int rc = 0;
    for (size_t g0 = 0; g0 < ng && !rc; g0 += bw) {
        size_t g1 = g0 + bw < ng ? g0 + bw : ng, w = g1 - g0;
        size_t row = 0;
        for (size_t h = 0; h < a->in.nhosts && !rc; h++)
            if (r->host[h])
                rc = pm_report_row(a, r, h, MAX_GRID, g0, g1, rows + row++ * w, err);
        for (size_t g = g0; g < g1 && !rc; g++) {
            size_t m = 0;
            for (size_t j = 0; j < k; j++) {
                double v = rows[j * w + g - g0];
                if (isfinite(v))
                    col[m++] = v;
            }
            c->band_t[g] = t0 + (double)g * step;
            band_point(c, g, col, m);
        }
    }
    free(rows);
    free(col);
    if (rc)
        return rc;
    c->band = (pm_plot_band){c->band_t, c->band_lo,    c->band_mid, c->band_hi,
                             ng,        c->band_label, c->band_p5,  c->band_p95};
    snprintf(c->band_label, sizeof c->band_label,
             "%zu nodes: min-max, 5-95th pct (darker), median line", k);
    c->plot.band = &c->band;
    return 0;
}

/* Phase bands for an all-node chart: per phase kind the union of its
 * phases over all nodes (at most MAX_SPANS per kind), tinted by kind and
 * labelled at the first band of each kind.  Appended to the repair spans. */
static int phase_spans(const pm_analysis *a, pm_chart *c)
{
    const pm_phase_stats *st = a->phase_stats;
    if (!st || a->in.phases.n == 0)
        return 0;
    size_t have = c->plot.nspans, cap = have + a->in.phases.n;
    pm_plot_span *s = pm_realloc_array(c->spans, cap, sizeof *s);
    if (!s)
        return PM_ENOMEM;
    c->spans = s;
    size_t n = have;
    for (size_t k = 0; k < st->nkinds; k++) {
        size_t k0 = n;
        for (size_t i = 0; i < a->in.phases.n; i++) {
            const pm_phase *p = &a->in.phases.v[i];
            if (strcmp(p->name, st->kinds[k].name) == 0 && p->t1 >= p->t0)
                s[n++] = (pm_plot_span){p->t0, p->t1, 1, NULL, (int)(k + 1)};
        }
        /* Sort this kind's spans by start and merge overlaps (widening the
         * join gap until at most MAX_SPANS remain). */
        for (size_t i = k0 + 1; i < n; i++) {
            pm_plot_span x = s[i];
            size_t j = i;
            while (j > k0 && s[j - 1].t0 > x.t0) {
                s[j] = s[j - 1];
                j--;
            }
            s[j] = x;
        }
        double gap = 0;
        for (;;) {
            size_t m = k0;
            for (size_t i = k0; i < n; i++) {
                if (m > k0 && s[i].t0 <= s[m - 1].t1 + gap)
                    s[m - 1].t1 = fmax(s[m - 1].t1, s[i].t1);
                else
                    s[m++] = s[i];
            }
            n = m;
            if (n - k0 <= MAX_SPANS || n == k0)
                break;
            double span = s[n - 1].t1 - s[k0].t0;
            gap = gap > 0 ? gap * 2 : span / 1000;
        }
        if (n > k0)
            s[k0].label = st->kinds[k].name;
    }
    c->plot.spans = s;
    c->plot.nspans = n;
    return 0;
}

int pm_chart_build(const pm_analysis *a, size_t m, int all_nodes, int elapsed, pm_chart *c,
                   pm_error *err)
{
    memset(c, 0, sizeof *c);
    if (m >= a->nmetrics)
        return pm_error_set(err, PM_EUSAGE, "no metric %zu", m);
    const pm_metric_result *r = &a->metrics[m];
    const pm_metric_def *d = r->def;
    char base[128];
    pm_chart_name(d->name, base, sizeof base);
    c->plot.time_axis = elapsed ? PM_AXIS_ELAPSED : PM_AXIS_CLOCK;
    c->plot.t_origin = a->t_start;
    c->plot.logy = d->log_scale;
    /* A rate covers the interval before its sample; a sparse gauge (held
     * between refreshes) holds its value until the next one. */
    c->plot.step = d->rate ? PM_STEP_BEFORE : r->qc.n[PM_Q_HELD] ? PM_STEP_AFTER : PM_STEP_NONE;
    c->plot.title = c->title;
    c->plot.ylabel = c->ylabel;
    const char *us = unit_gap(d->unit), *u = pm_unit_shown(d->unit);
    if (*u)
        snprintf(c->ylabel, sizeof c->ylabel, "%s (%s)", d->name, u);
    else
        snprintf(c->ylabel, sizeof c->ylabel, "%s", d->name);
    size_t cap = a->in.nhosts + PM_REPORT_OUTLIERS + 1;
    c->series = calloc(cap, sizeof *c->series);
    c->labels = calloc(cap, sizeof *c->labels);
    if (!c->series || !c->labels) {
        pm_chart_free(c);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    c->plot.series = c->series;
    int rc = 0;
    if (all_nodes) {
        const pm_aggregate *g = &r->agg;
        if (g->n == 0 || g->st.nvalid == 0) {
            pm_chart_free(c);
            return PM_ENOENT;
        }
        (void)pm_metric_title(r, 1, c->title, sizeof c->title);
        snprintf(c->file, sizeof c->file, "%s_%s_all_nodes.png", comb_name(d), base);
        char lab[160];
        size_t ngpu = 0; /* GPU metrics have GPU hosts only */
        for (size_t h = 0; h < a->in.nhosts; h++)
            ngpu += r->host[h] && a->in.hosts[h].gpu;
        snprintf(lab, sizeof lab, "%s over %zu %s", comb_name(d), r->nhosts_with_data,
                 ngpu ? "GPUs" : "nodes");
        rc = add_series(c, cap, lab, g->t, g->v, g->n);
        if (rc == 0 && g->count) {
            c->nodes_n = pm_alloc_array(g->n, sizeof *c->nodes_n);
            if (!c->nodes_n)
                rc = PM_ENOMEM;
            else {
                /* Only between the first and the last point any node
                 * reported: a rate has no value at the first sample. */
                size_t i0 = 0, i1 = g->n;
                while (i0 < g->n && g->count[i0] == 0)
                    i0++;
                while (i1 > i0 && g->count[i1 - 1] == 0)
                    i1--;
                for (size_t i = i0; i < i1; i++)
                    c->nodes_n[i - i0] = g->count[i];
                c->plot.nodes_t = g->t + i0;
                c->plot.nodes_n = c->nodes_n;
                c->plot.nodes_len = i1 - i0;
                c->plot.nodes_total = (int)r->nhosts_with_data;
            }
        }
        c->plot.legend = 0;
    } else {
        if (r->nhosts_with_data == 0) {
            pm_chart_free(c);
            return PM_ENOENT;
        }
        (void)pm_metric_title(r, 0, c->title, sizeof c->title);
        snprintf(c->file, sizeof c->file, "%s_per_node.png", base);
        c->plot.legend = 1;
        if (r->nhosts_with_data <= PM_LEGEND_MAX_HOSTS) {
            for (size_t h = 0; h < a->in.nhosts && rc == 0; h++)
                if (r->host[h])
                    rc = add_series(c, cap, a->in.hosts[h].name, r->host[h]->t, r->host[h]->v,
                                    r->host[h]->n);
        } else {
            if ((rc = build_band(a, r, c, err))) {
                pm_chart_free(c);
                return rc;
            }
            /* Name the hosts whose mean is furthest from the median mean. */
            size_t o[PM_REPORT_OUTLIERS];
            size_t no = pm_report_outliers(a, r, o);
            if (no == SIZE_MAX)
                rc = PM_ENOMEM;
            for (size_t i = 0; i < no && rc == 0; i++) {
                size_t bh = o[i];
                char lab[300], mv[32];
                fmt_title_num(r->host[bh]->st.mean, mv, sizeof mv);
                snprintf(lab, sizeof lab, "%s (mean %s%s%s)", a->in.hosts[bh].name, mv, us, u);
                const pm_series *s = r->host[bh];
                rc = add_series(c, cap, lab, s->t, s->v, s->n);
            }
        }
    }
    if (rc == 0)
        rc = repair_spans(a, r, c);
    if (rc == 0 && all_nodes)
        rc = phase_spans(a, c);
    if (rc != 0) {
        pm_chart_free(c);
        if (rc == PM_EFORMAT)
            return pm_error_set(err, rc, "%s: a series to draw was not kept (--stream)", d->id);
        return pm_error_set(err, rc, "%s: out of memory building the chart", d->id);
    }
    return 0;
}

void pm_heatmap_data_free(pm_heatmap_data *h)
{
    if (!h)
        return;
    free(h->t);
    free(h->values);
    free(h->rows);
    free(h->group);
    memset(h, 0, sizeof *h);
}

/* Similar nodes together (docs/report.md, "Colour maps"): each node's
 * row on the grid is cut into HEAT_BUCKETS stretches of time and their
 * means (a stretch without data takes the mean of all nodes there) are
 * the node's shape; the shapes are grouped by k-means, at most
 * HEAT_MAX_GROUPS groups, seeded farthest first: a node starts a new group
 * when its shape is further than HEAT_SPLIT of the value range (root mean
 * square over the stretches) from every group's, so nodes that differ
 * only by noise stay one group.  Groups by their mean, highest first;
 * nodes in a group by their mean, highest first, nodes without data last.
 * Cost: hosts x buckets x groups per pass, HEAT_PASSES passes. */
#define HEAT_BUCKETS 8
#define HEAT_MAX_GROUPS 8
#define HEAT_SPLIT 0.1
#define HEAT_PASSES 10

typedef struct heat_key {
    uint32_t group;
    double gmean, mean;
    size_t host;
} heat_key;

static int cmp_heat(const void *x, const void *y)
{
    const heat_key *a = x, *b = y;
    int na = !isfinite(a->mean), nb = !isfinite(b->mean);
    if (na != nb)
        return na - nb; /* nodes without data last */
    if (!na && a->group != b->group) {
        if (a->gmean != b->gmean)
            return a->gmean < b->gmean ? 1 : -1;
        return a->group < b->group ? -1 : 1;
    }
    if (!na && a->mean != b->mean)
        return a->mean < b->mean ? 1 : -1;
    return (a->host > b->host) - (a->host < b->host);
}

static double shape_dist2(const double *x, const double *y)
{
    double d = 0;
    for (int b = 0; b < HEAT_BUCKETS; b++)
        d += (x[b] - y[b]) * (x[b] - y[b]);
    return d;
}

/* The shapes (shape[h * HEAT_BUCKETS + b]) of the rows values[h * ng ..]
 * and the value range over them; has[h]: the row has a finite value. */
static double heat_shapes(const double *values, size_t nh, size_t ng, double *shape,
                          unsigned char *has)
{
    double colsum[HEAT_BUCKETS] = {0};
    size_t colcnt[HEAT_BUCKETS] = {0};
    for (size_t h = 0; h < nh; h++) {
        has[h] = 0;
        for (size_t b = 0; b < HEAT_BUCKETS; b++) {
            size_t g0 = b * ng / HEAT_BUCKETS, g1 = (b + 1) * ng / HEAT_BUCKETS;
            double s = 0;
            size_t k = 0;
            for (size_t g = g0; g < g1; g++)
                if (isfinite(values[h * ng + g])) {
                    s += values[h * ng + g];
                    k++;
                }
            shape[h * HEAT_BUCKETS + b] = k ? s / (double)k : NAN;
            if (k) {
                colsum[b] += s / (double)k;
                colcnt[b]++;
                has[h] = 1;
            }
        }
    }
    double lo = INFINITY, hi = -INFINITY;
    for (size_t h = 0; h < nh; h++)
        for (size_t b = 0; b < HEAT_BUCKETS; b++) {
            double *v = &shape[h * HEAT_BUCKETS + b];
            if (!isfinite(*v))
                *v = colcnt[b] ? colsum[b] / (double)colcnt[b] : 0;
            if (has[h] && *v < lo)
                lo = *v;
            if (has[h] && *v > hi)
                hi = *v;
        }
    return hi > lo ? hi - lo : 0;
}

/* k-means of the shapes into group[h]; returns the number of groups. */
static size_t heat_groups(const double *shape, const unsigned char *has, size_t nh, double range,
                          uint32_t *group, double *cent /* [HEAT_MAX_GROUPS * HEAT_BUCKETS] */)
{
    double split2 = HEAT_SPLIT * HEAT_SPLIT * range * range * HEAT_BUCKETS;
    size_t k = 0, first = nh;
    for (size_t h = 0; h < nh && first == nh; h++)
        if (has[h])
            first = h;
    if (first == nh)
        return 0;
    memcpy(cent, shape + first * HEAT_BUCKETS, sizeof(double) * HEAT_BUCKETS);
    k = 1;
    /* Farthest first: the node furthest from every seed, while it is
     * further than the split distance. */
    while (k < HEAT_MAX_GROUPS) {
        double best = -1;
        size_t bh = nh;
        for (size_t h = 0; h < nh; h++) {
            if (!has[h])
                continue;
            double dmin = INFINITY;
            for (size_t c = 0; c < k; c++) {
                double d = shape_dist2(shape + h * HEAT_BUCKETS, cent + c * HEAT_BUCKETS);
                if (d < dmin)
                    dmin = d;
            }
            if (dmin > best) {
                best = dmin;
                bh = h;
            }
        }
        if (bh == nh || !(best > split2))
            break;
        memcpy(cent + k * HEAT_BUCKETS, shape + bh * HEAT_BUCKETS, sizeof(double) * HEAT_BUCKETS);
        k++;
    }
    for (int pass = 0; pass < HEAT_PASSES; pass++) {
        int moved = 0;
        for (size_t h = 0; h < nh; h++) {
            if (!has[h])
                continue;
            uint32_t bc = 0;
            double dmin = INFINITY;
            for (size_t c = 0; c < k; c++) {
                double d = shape_dist2(shape + h * HEAT_BUCKETS, cent + c * HEAT_BUCKETS);
                if (d < dmin) {
                    dmin = d;
                    bc = (uint32_t)c;
                }
            }
            if (pass == 0 || group[h] != bc)
                moved = 1;
            group[h] = bc;
        }
        if (!moved)
            break;
        double sum[HEAT_MAX_GROUPS * HEAT_BUCKETS] = {0};
        size_t cnt[HEAT_MAX_GROUPS] = {0};
        for (size_t h = 0; h < nh; h++) {
            if (!has[h])
                continue;
            cnt[group[h]]++;
            for (int b = 0; b < HEAT_BUCKETS; b++)
                sum[group[h] * HEAT_BUCKETS + b] += shape[h * HEAT_BUCKETS + b];
        }
        for (size_t c = 0; c < k; c++)
            if (cnt[c])
                for (int b = 0; b < HEAT_BUCKETS; b++)
                    cent[c * HEAT_BUCKETS + b] = sum[c * HEAT_BUCKETS + b] / (double)cnt[c];
    }
    return k;
}

/* The colour map's row order (order[k] = host of row k) and each row's
 * group (grp[k]); values: the hosts' rows in host order.  Returns the
 * number of groups, or SIZE_MAX when out of memory. */
static size_t heat_order(const pm_analysis *a, const pm_metric_result *r, const double *values,
                         size_t ng, size_t *order, uint32_t *grp)
{
    size_t nh = a->in.nhosts;
    heat_key *key = pm_alloc_array(nh ? nh : 1, sizeof *key);
    double *shape = pm_alloc_array(nh ? nh : 1, sizeof *shape * HEAT_BUCKETS);
    unsigned char *has = pm_alloc_array(nh ? nh : 1, 1);
    uint32_t *group = pm_alloc_array(nh ? nh : 1, sizeof *group);
    if (!key || !shape || !has || !group) {
        free(key);
        free(shape);
        free(has);
        free(group);
        return SIZE_MAX;
    }
    double range = heat_shapes(values, nh, ng, shape, has);
    double cent[HEAT_MAX_GROUPS * HEAT_BUCKETS];
    size_t k = heat_groups(shape, has, nh, range, group, cent);
    double gsum[HEAT_MAX_GROUPS] = {0};
    size_t gcnt[HEAT_MAX_GROUPS] = {0};
    for (size_t h = 0; h < nh; h++) {
        double mean = r->host[h] ? r->host[h]->st.mean : NAN;
        if (!has[h] || !isfinite(mean)) {
            group[h] = (uint32_t)k; /* without data: after every group */
            mean = NAN;
        } else {
            gsum[group[h]] += mean;
            gcnt[group[h]]++;
        }
        key[h] = (heat_key){group[h], 0, mean, h};
    }
    for (size_t h = 0; h < nh; h++)
        if (key[h].group < k)
            key[h].gmean = gsum[key[h].group] / (double)gcnt[key[h].group];
    qsort(key, nh, sizeof *key, cmp_heat);
    /* Groups numbered in row order. */
    uint32_t renum[HEAT_MAX_GROUPS + 1];
    for (size_t c = 0; c <= HEAT_MAX_GROUPS; c++)
        renum[c] = UINT32_MAX;
    uint32_t next = 0;
    for (size_t i = 0; i < nh; i++) {
        if (renum[key[i].group] == UINT32_MAX)
            renum[key[i].group] = next++;
        order[i] = key[i].host;
        grp[i] = renum[key[i].group];
    }
    free(key);
    free(shape);
    free(has);
    free(group);
    return next;
}

int pm_heatmap_build(const pm_analysis *a, size_t m, int elapsed, size_t max_cols,
                     pm_heatmap_data *h, pm_error *err)
{
    memset(h, 0, sizeof *h);
    const pm_metric_result *r = &a->metrics[m];
    double t0 = 0, step = 1;
    size_t cols = max_cols < 2 ? 2 : max_cols;
    size_t ng = pm_report_grid(a, cols, &t0, &step);
    int rc = 0;
    if (ng == 0 || r->nhosts_with_data == 0)
        return PM_ENOENT;
    size_t nh = a->in.nhosts;
    h->t = pm_alloc_array(ng, sizeof *h->t);
    h->values = pm_alloc_array(nh * ng, sizeof *h->values);
    h->rows = calloc(nh, sizeof *h->rows);
    h->group = pm_alloc_array(nh, sizeof *h->group);
    double *byhost = h->values; /* in host order, then permuted into row order */
    size_t *order = pm_alloc_array(nh, sizeof *order);
    double *tmp = pm_alloc_array(ng, sizeof *tmp);
    unsigned char *done = calloc(nh ? nh : 1, 1);
    size_t ngroups = SIZE_MAX;
    if (h->t && h->values && h->rows && h->group && order && tmp && done) {
        for (size_t g = 0; g < ng; g++)
            h->t[g] = t0 + (double)g * step;
        for (size_t hk = 0; hk < nh; hk++) {
            if (rc == 0)
                rc = pm_report_row(a, r, hk, cols, 0, ng, byhost + hk * ng, err);
        }
        if (rc == 0)
            ngroups = heat_order(a, r, byhost, ng, order, h->group);
    }
    if (rc) {
        free(order);
        free(tmp);
        free(done);
        pm_heatmap_data_free(h);
        return rc;
    }
    if (ngroups == SIZE_MAX) {
        free(order);
        free(tmp);
        free(done);
        pm_heatmap_data_free(h);
        return pm_error_set(err, PM_ENOMEM, "out of memory for a colour map");
    }
    /* Row k = host order[k], in place: follow each cycle of the
     * permutation with one row aside. */
    for (size_t k = 0; k < nh; k++) {
        h->rows[k] = a->in.hosts[order[k]].name;
        if (done[k])
            continue;
        memcpy(tmp, h->values + k * ng, ng * sizeof *tmp);
        size_t j = k;
        while (order[j] != k) {
            memcpy(h->values + j * ng, h->values + order[j] * ng, ng * sizeof *tmp);
            done[j] = 1;
            j = order[j];
        }
        memcpy(h->values + j * ng, tmp, ng * sizeof *tmp);
        done[j] = 1;
    }
    free(order);
    free(tmp);
    free(done);
    h->ngroups = ngroups;
    snprintf(h->title, sizeof h->title, "%s per node (%s), similar nodes together", r->def->name,
             r->def->unit);
    h->hm = (pm_heatmap){h->title,   r->def->unit, elapsed ? PM_AXIS_ELAPSED : PM_AXIS_CLOCK,
                         a->t_start, h->rows,      nh,
                         h->t,       ng,           h->values,
                         h->group,   ngroups};
    return 0;
}

void pm_timeline_data_free(pm_timeline_data *t)
{
    free(t->rows);
    free(t->kinds);
    free(t->bars);
    free(t->row);
    free(t->marks);
    memset(t, 0, sizeof *t);
}

int pm_timeline_build(const pm_analysis *a, int elapsed, pm_timeline_data *t, pm_error *err)
{
    memset(t, 0, sizeof *t);
    const pm_phase_stats *st = a->phase_stats;
    const pm_phase_set *ps = &a->in.phases;
    size_t nph = st ? ps->n : 0, nkinds = nph ? st->nkinds : 0;
    if (nph == 0 && a->nevents == 0)
        return PM_ENOENT;
    t->rows = pm_alloc_array(nph + a->in.nhosts + 1, sizeof *t->rows);
    t->kinds = pm_alloc_array(nkinds ? nkinds : 1, sizeof *t->kinds);
    t->bars = pm_alloc_array(nph ? nph : 1, sizeof *t->bars);
    t->row = pm_alloc_array(nph ? nph : 1, sizeof *t->row);
    t->marks = pm_alloc_array(a->nevents ? a->nevents : 1, sizeof *t->marks);
    if (!t->rows || !t->kinds || !t->bars || !t->row || !t->marks) {
        pm_timeline_data_free(t);
        return pm_error_set(err, PM_ENOMEM, "out of memory for the phase timeline");
    }
    double t0 = a->t_start, t1 = a->t_end;
    size_t nrows = nph ? pm_phase_rows(a, t->rows, t->row, &t0, &t1) : 0;
    for (size_t i = 0; i < nph; i++) {
        size_t k;
        for (k = 0; k < st->nkinds; k++)
            if (strcmp(st->kinds[k].name, ps->v[i].name) == 0)
                break;
        t->bars[i] = (pm_timeline_bar){t->row[i], k, ps->v[i].t0, ps->v[i].t1};
    }
    for (size_t k = 0; k < nkinds; k++)
        t->kinds[k] = st->kinds[k].name;
    /* The events' marks, on their host's row (a row of its own where the
     * host has no phase), inside the time shown. */
    size_t nmarks = 0;
    for (size_t i = 0; i < a->nevents; i++) {
        const pm_job_event *e = &a->events[i];
        if (e->kind == PM_EV_CGROUP || !(e->t >= t0 && e->t <= t1))
            continue;
        const char *host = a->in.hosts[e->host].name;
        size_t r;
        for (r = 0; r < nrows; r++)
            if (strcmp(t->rows[r], host) == 0)
                break;
        if (r == nrows)
            t->rows[nrows++] = host;
        t->marks[nmarks++] = (pm_timeline_mark){r, e->t, e->severity};
    }
    t->tl = (pm_timeline){!nph     ? "Events per node"
                          : nmarks ? "Phases and events per node"
                                   : "Phases per node",
                          elapsed ? PM_AXIS_ELAPSED : PM_AXIS_CLOCK,
                          a->t_start,
                          t0,
                          t1,
                          t->rows,
                          nrows,
                          t->kinds,
                          nkinds,
                          t->bars,
                          nph,
                          t->marks,
                          nmarks};
    return 0;
}
