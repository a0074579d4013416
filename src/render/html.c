/* The job report as one HTML file (see html.h).
 *
 * pm_html_write builds three parts in memory, then writes them in order:
 *
 *     body   the report as plain HTML: verdict, job, key figures, notes,
 *            a figure per chart (its title; the script draws into it),
 *            the constant metrics and the statistics per node;
 *     data   one JSON object in a <script type="application/json">: the
 *            job's start, nodes, phases, and per chart its series as
 *            indices into "blobs", the distinct float32 (and colour-map
 *            byte) arrays;
 *     bin    the blobs one after the other, each byte-shuffled, as one
 *            zlib stream in base64, in a <script type="application/
 *            octet-stream"> (data, never run) that the script inflates
 *            with the browser's DecompressionStream;
 *     code   uPlot and TEMPLATES/html/report.js, inline.
 *
 * The head's Content-Security-Policy names the SHA-256 of each inline
 * script and of the style element, computed here from the bytes written,
 * so the browser runs nothing else (docs/report.md, "The HTML report").
 * The charts are the PDF's (pm_chart_build, in the PDF's order; a flat
 * metric is a row of the constant table instead), so --stream gives the
 * same bytes: the report keeps for them what it keeps for the PDF.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfmon/compare.h"
#include "perfmon/export.h"
#include "perfmon/fileio.h"
#include "perfmon/html.h"
#include "perfmon/mem.h"
#include "perfmon/phase_stats.h"
#include "perfmon/report.h"
#include "perfmon/request_use.h"
#include "perfmon/spread.h"
#include "perfmon/units.h"
#include "html_int.h"
#include "report_int.h"

#ifndef PM_VERSION
#define PM_VERSION "0"
#endif

/* The vendored chart library (docs/report.md says why this one). */
#define UPLOT_DIR "html/vendor/uplot-1.6.32"
#define TEMPLATE_MAX ((size_t)4 << 20)
/* A band chart of a job of up to this many nodes has a line per node
 * (from the band's grid); above, a per-node min/max pyramid level. */
#define PM_HTML_LINE_NODES 16
/* The float32 bytes of all nodes' min/max in all band charts, at most
 * (before deflate), and the coarsest level that is still worth it. */
#define PM_HTML_PYR_BUDGET ((size_t)24 << 20)
#define PM_HTML_PYR_MIN_COLS 500
/* Phases sent to the script for shading (the rest merged by kind there). */
#define MAX_PHASES 4096

void pm_html_opts_init(pm_html_opts *o)
{
    memset(o, 0, sizeof *o);
    o->creation_time = -1;
}

/* ---- templates ------------------------------------------------------------ */

typedef struct tfile {
    const char *name; /* relative to the templates directory */
    char *data;
    size_t len;
} tfile;

enum { T_CSS, T_JS, T_UCSS, T_UJS, T_SUMS, T_N };

static int read_template(const char *dir, tfile *f, pm_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, f->name);
    if (pm_read_whole(path, TEMPLATE_MAX, &f->data, &f->len, err) != 0) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        return pm_error_set(err, PM_EIO,
                            "%s (a template of the HTML report); give --templates DIR or set "
                            "PERFMON_TEMPLATES",
                            why);
    }
    return 0;
}

static void hex32(const uint8_t h[32], char out[65])
{
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", h[i]);
}

/* The vendored files against their SHA256SUMS ("HEX  NAME" lines, as
 * sha256sum writes them): a damaged or replaced library is refused. */
static int check_sums(const tfile *t, pm_error *err)
{
    for (int i = T_UCSS; i <= T_UJS; i++) {
        const char *base = strrchr(t[i].name, '/') + 1;
        uint8_t h[32];
        char hex[65], line[400];
        pm_sha256(t[i].data, t[i].len, h);
        hex32(h, hex);
        snprintf(line, sizeof line, "%s  %s\n", hex, base);
        if (!strstr(t[T_SUMS].data, line))
            return pm_error_set(err, PM_EIO, "%s: does not match its SHA-256 in %s", t[i].name,
                                t[T_SUMS].name);
    }
    return 0;
}

/* An inline script must not end its element early or open a comment. */
static int script_safe(const tfile *f, pm_error *err)
{
    for (size_t i = 0; i + 8 <= f->len; i++)
        if ((f->data[i] == '<' && strncasecmp(f->data + i, "</script", 8) == 0) ||
            (f->data[i] == '<' && strncmp(f->data + i, "<!--", 4) == 0))
            return pm_error_set(err, PM_EIO, "%s: holds \"</script\" or \"<!--\"", f->name);
    return 0;
}

static const char *const TNAMES[T_N] = {"html/report.css", "html/report.js",
                                        UPLOT_DIR "/uPlot.min.css", UPLOT_DIR "/uPlot.iife.min.js",
                                        UPLOT_DIR "/SHA256SUMS"};

/* Read the templates and check them: the library against its sums, no
 * script that would end its element early. */
static int load_templates(const char *dir, tfile *t, pm_error *err)
{
    int rc = 0;
    memset(t, 0, T_N * sizeof *t);
    for (int i = 0; i < T_N; i++)
        t[i].name = TNAMES[i];
    for (int i = 0; i < T_N && !rc; i++)
        rc = read_template(dir, &t[i], err);
    if (!rc)
        rc = check_sums(t, err);
    if (!rc)
        rc = script_safe(&t[T_UJS], err);
    if (!rc)
        rc = script_safe(&t[T_JS], err);
    return rc;
}

static void free_templates(tfile *t)
{
    for (int i = 0; i < T_N; i++) {
        free(t[i].data);
        t[i].data = NULL;
    }
}

int pm_html_check_templates(const char *dir, pm_error *err)
{
    tfile t[T_N];
    int rc = load_templates(dir, t, err);
    free_templates(t);
    return rc;
}

/* ---- the data: distinct float32 arrays ------------------------------------ */

static void put_f32(unsigned char *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    p[0] = (unsigned char)u;
    p[1] = (unsigned char)(u >> 8);
    p[2] = (unsigned char)(u >> 16);
    p[3] = (unsigned char)(u >> 24);
}

/* The index of p[0..len) (malloc'd; taken) among the blobs, added when
 * new; SIZE_MAX when out of memory (p freed). */
static size_t take_blob(html_ctx *c, unsigned char *p, size_t len, size_t elem)
{
    uint8_t h[32];
    pm_sha256(p, len, h);
    for (size_t i = 0; i < c->nblobs; i++)
        if (c->blobs[i].len == len && c->blobs[i].elem == elem &&
            memcmp(c->blobs[i].sha, h, 32) == 0 && memcmp(c->blobs[i].bytes, p, len) == 0) {
            free(p);
            return i;
        }
    if (c->nblobs == c->capblobs) {
        size_t cap = c->capblobs ? 2 * c->capblobs : 64;
        blob *nb = pm_realloc_array(c->blobs, cap, sizeof *nb);
        if (!nb) {
            free(p);
            return SIZE_MAX;
        }
        c->blobs = nb;
        c->capblobs = cap;
    }
    blob *b = &c->blobs[c->nblobs];
    memcpy(b->sha, h, 32);
    b->bytes = p;
    b->len = len;
    b->elem = elem;
    return c->nblobs++;
}

/* The index of v[0..n) - off as float32 among the blobs (added when new);
 * SIZE_MAX when out of memory. */
static size_t add_blob(html_ctx *c, const double *v, size_t n, double off)
{
    if (n > SIZE_MAX / 4)
        return SIZE_MAX;
    unsigned char *p = malloc(n ? 4 * n : 1);
    if (!p)
        return SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        put_f32(p + 4 * i, isfinite(v[i]) ? (float)(v[i] - off) : NAN);
    return take_blob(c, p, 4 * n, 4);
}

void html_json_key(pm_buf *b, const char *k, int first)
{
    pm_buf_printf(b, "%s\"%s\":", first ? "" : ",", k);
}

/* "key":index of the array, or sets c->oom. */
void html_json_blob(html_ctx *c, const char *k, const double *v, size_t n, double off)
{
    size_t i = add_blob(c, v, n, off);
    if (i == SIZE_MAX) {
        c->oom = 1;
        return;
    }
    html_json_key(&c->data, k, 0);
    pm_buf_printf(&c->data, "%zu", i);
}

/* ---- charts --------------------------------------------------------------- */

/* The host a chart's line is of (its values are the host's series), or -1. */
static long line_host(const pm_analysis *a, const pm_metric_result *r, const pm_plot_series *s)
{
    for (size_t h = 0; h < a->nhosts; h++)
        if (r->host[h] && r->host[h]->v == s->v && r->host[h]->n == s->n)
            return (long)h;
    return -1;
}

/* A band chart's nodes (docs/report.md, "What is exact at which zoom"):
 * in a job of at most PM_HTML_LINE_NODES nodes a line per node that is
 * not a line already, its row on the band's grid; above, each node's
 * minimum and maximum over blocks of c->pyr_block grid points, the nodes'
 * rows one after the other (NaN where a node has no data). */
static int band_nodes(html_ctx *c, const pm_metric_result *r, const pm_chart *ch, pm_error *err)
{
    const pm_analysis *a = c->a;
    const pm_plot_band *b = ch->plot.band;
    pm_buf *d = &c->data;
    size_t ng = b->n, nh = a->nhosts;
    if (ng == 0 || (nh > PM_HTML_LINE_NODES && !c->pyr_block))
        return 0;
    double *row = pm_alloc_array(ng, sizeof *row);
    if (!row)
        return pm_error_set(err, PM_ENOMEM, "out of memory for the HTML report's series");
    int rc = 0;
    if (nh <= PM_HTML_LINE_NODES) {
        pm_buf_puts(d, ",\"rows\":[");
        int first = 1;
        for (size_t h = 0; h < nh && !rc; h++) {
            int drawn = 0;
            for (size_t i = 0; i < ch->plot.nseries; i++)
                drawn |= line_host(a, r, &ch->plot.series[i]) == (long)h;
            if (!r->host[h] || drawn)
                continue;
            if ((rc = pm_report_row(a, r, h, PM_REPORT_BAND_COLS, 0, ng, row, err)) != 0)
                break;
            pm_buf_printf(d, "%s{", first ? "" : ",");
            html_json_key(d, "label", 1);
            pm_html_json_str(d, a->hosts[h].name);
            pm_buf_printf(d, ",\"node\":%zu", h);
            html_json_blob(c, "v", row, ng, 0);
            pm_buf_puts(d, "}");
            first = 0;
        }
        pm_buf_puts(d, "]");
        free(row);
        return rc;
    }
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
    if (a->nhosts <= PM_HTML_LINE_NODES)
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
        double bytes = (double)nband * (double)a->nhosts * (double)cols * 8.0;
        if (bytes <= (double)PM_HTML_PYR_BUDGET) {
            c->pyr_block = bk;
            return;
        }
    }
}

typedef struct flat_row {
    size_t metric, group;
    double lo, hi;
} flat_row;

/* The charts in the PDF's order (report_plots.c): per layout group the
 * all-node charts, then the per-node ones; a metric of one node only its
 * per-node chart, a flat metric a row of the constant table. */
static int charts(html_ctx *c, flat_row *fl, size_t *nfl, char *missing, size_t mcap, pm_error *err)
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
            if (report_metric_constant(r, a->nhosts, &lo, &hi)) {
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
            int heading = 0;
            for (size_t m = 0; m < a->nmetrics && !rc; m++) {
                const pm_metric_result *r = &a->metrics[m];
                if (strcmp(r->def->page, l->groups[g].page) != 0 || flat[m] ||
                    (all && r->nhosts_with_data <= 1))
                    continue;
                pm_chart ch;
                rc = pm_chart_build(a, m, all, c->o->elapsed, &ch, err);
                if (rc == PM_ENOENT) {
                    rc = 0;
                    continue;
                }
                if (rc)
                    break;
                if (!heading) {
                    pm_buf_printf(&c->body, "<h3 id=\"g%zu-%s\">", g, all ? "all" : "node");
                    pm_html_text(&c->body, l->groups[g].title);
                    pm_buf_printf(&c->body, ": %s</h3>\n", all ? "all nodes" : "per node");
                    heading = 1;
                }
                html_figure(c, ch.title);
                rc = chart_json(c, &ch, m, all, l->groups[g].title, err);
                c->ncharts++;
                pm_chart_free(&ch);
            }
        }
    if (!rc && c->oom)
        rc = pm_error_set(err, PM_ENOMEM, "out of memory for the HTML report's series");
    return rc;
}

/* ---- the phase timeline --------------------------------------------------- */

/* The PDF's "Phases per node" (pm_timeline_build): a row per node (more
 * where its phases overlap), a bar per phase, at most MAX_PHASES bars. */
static int timeline(html_ctx *c, pm_error *err)
{
    const pm_analysis *a = c->a;
    pm_timeline_data td;
    int rc = pm_timeline_build(a, c->o->elapsed, &td, err);
    pm_buf *d = &c->data;
    if (rc == PM_ENOENT) {
        pm_buf_puts(d, ",\"timeline\":null");
        return 0;
    }
    if (rc)
        return rc;
    const pm_timeline *tl = &td.tl;
    pm_buf_puts(d, ",\"timeline\":{\"rows\":[");
    for (size_t r = 0; r < tl->nrows; r++) {
        if (r)
            pm_buf_puts(d, ",");
        pm_html_json_str(d, tl->rows[r]);
    }
    pm_buf_puts(d, "],\"bars\":[");
    size_t n = tl->nbars < MAX_PHASES ? tl->nbars : MAX_PHASES;
    for (size_t i = 0; i < n; i++) {
        const pm_timeline_bar *b = &tl->bars[i];
        pm_buf_printf(d, "%s[%zu,%zu,", i ? "," : "", b->row, b->kind);
        pm_buf_json_num(d, b->t0 - a->t_start);
        pm_buf_puts(d, ",");
        pm_buf_json_num(d, b->t1 - a->t_start);
        pm_buf_puts(d, "]");
    }
    pm_buf_printf(d, "],\"more\":%zu}", tl->nbars - n);
    pm_buf_puts(&c->body, "<figure class=\"timeline\" id=\"timeline\"><figcaption>Phases per "
                          "node</figcaption><div class=\"plot\"></div><div class=\"heat-info\">"
                          "</div></figure>\n");
    pm_timeline_data_free(&td);
    return 0;
}

/* ---- colour maps ----------------------------------------------------------- */

/* A colour map's cells, at most this many: above, consecutive rows are
 * merged (their mean), as the PDF merges rows beyond its pixels. */
#define HEAT_MAX_CELLS ((size_t)2000000)
#define HEAT_NONE 255 /* a cell without data; values are 0..254 */

typedef struct name_idx {
    const char *name; /* a host's name pointer */
    size_t host;
} name_idx;

static int cmp_name_ptr(const void *x, const void *y)
{
    uintptr_t a = (uintptr_t)((const name_idx *)x)->name,
              b = (uintptr_t)((const name_idx *)y)->name;
    return (a > b) - (a < b);
}

/* The hosts by their name pointers (a colour map's rows point at the
 * hosts' names), for a row's host in log time; NULL when out of memory. */
static name_idx *host_index(const pm_analysis *a)
{
    name_idx *ix = pm_alloc_array(a->nhosts ? a->nhosts : 1, sizeof *ix);
    if (!ix)
        return NULL;
    for (size_t h = 0; h < a->nhosts; h++)
        ix[h] = (name_idx){a->hosts[h].name, h};
    qsort(ix, a->nhosts, sizeof *ix, cmp_name_ptr);
    return ix;
}

static void heat_json(html_ctx *c, const pm_heatmap_data *hd, size_t m, const name_idx *ix)
{
    const pm_analysis *a = c->a;
    const pm_heatmap *hm = &hd->hm;
    size_t nr = hm->nrows, nc = hm->ncols;
    size_t per = nr * nc > HEAT_MAX_CELLS ? (nr * nc + HEAT_MAX_CELLS - 1) / HEAT_MAX_CELLS : 1;
    size_t mr = (nr + per - 1) / per;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < nr * nc; i++)
        if (isfinite(hm->values[i])) {
            lo = fmin(lo, hm->values[i]);
            hi = fmax(hi, hm->values[i]);
        }
    unsigned char *q = malloc(mr * nc > 0 ? mr * nc : 1);
    if (!q) {
        c->oom = 1;
        return;
    }
    for (size_t r = 0; r < mr; r++)
        for (size_t k = 0; k < nc; k++) {
            double sum = 0;
            size_t n = 0;
            for (size_t j = r * per; j < (r + 1) * per && j < nr; j++) {
                double v = hm->values[j * nc + k];
                if (isfinite(v)) {
                    sum += v;
                    n++;
                }
            }
            double v = n ? sum / (double)n : NAN;
            q[r * nc + k] = !n           ? HEAT_NONE
                            : !(hi > lo) ? 0
                                         : (unsigned char)lrint((v - lo) / (hi - lo) * 254.0);
        }
    pm_buf *d = &c->data;
    pm_buf_printf(d, "%s{\"id\":\"h%zu\"", c->nheat ? "," : "", c->nheat);
    html_json_key(d, "metric", 0);
    pm_html_json_str(d, a->metrics[m].def->id);
    html_json_key(d, "title", 0);
    pm_html_json_str(d, hd->title);
    html_json_key(d, "unit", 0);
    pm_html_json_str(d, pm_unit_shown(hm->unit));
    html_json_key(d, "lo", 0);
    pm_buf_json_num(d, lo);
    html_json_key(d, "hi", 0);
    pm_buf_json_num(d, hi);
    pm_buf_printf(d, ",\"ncols\":%zu,\"per\":%zu", nc, per);
    html_json_blob(c, "t", hm->t, nc, a->t_start);
    pm_buf_puts(d, ",\"rows\":[");
    for (size_t r = 0; r < nr; r++) {
        name_idx key = {hm->rows[r], 0};
        const name_idx *f = bsearch(&key, ix, a->nhosts, sizeof *ix, cmp_name_ptr);
        pm_buf_printf(d, "%s%ld", r ? "," : "", f ? (long)f->host : -1L);
    }
    pm_buf_puts(d, "]");
    size_t qi = take_blob(c, q, mr * nc, 1);
    if (qi == SIZE_MAX)
        c->oom = 1;
    pm_buf_printf(d, ",\"cells\":%zu}", qi);
}

/* The PDF's colour maps (templates/report.json "heatmaps"), for jobs of
 * more than PM_HEATMAP_MIN_HOSTS nodes; a flat metric has none. */
static int heatmaps(html_ctx *c, pm_error *err)
{
    const pm_analysis *a = c->a;
    if (a->nhosts <= PM_HEATMAP_MIN_HOSTS)
        return 0;
    int rc = 0, heading = 0;
    name_idx *ix = host_index(a);
    if (!ix)
        return pm_error_set(err, PM_ENOMEM, "out of memory for the HTML report's colour maps");
    for (size_t i = 0; i < c->l->nheatmaps && !rc && !c->oom; i++) {
        int m = pm_analysis_metric(a, c->l->heatmaps[i]);
        if (m < 0 || c->flat[m])
            continue;
        pm_heatmap_data hd;
        rc = pm_heatmap_build(a, (size_t)m, c->o->elapsed, PM_REPORT_HEAT_PDF, &hd, err);
        if (rc == PM_ENOENT) {
            rc = 0;
            continue;
        }
        if (rc)
            break;
        if (!heading) {
            pm_buf_puts(&c->body, "<h3 id=\"heatmaps\">Imbalance: time x node</h3>\n");
            heading = 1;
        }
        pm_buf_printf(&c->body, "<figure class=\"heat\" id=\"h%zu\"><figcaption>", c->nheat);
        pm_html_text(&c->body, hd.title);
        pm_buf_puts(&c->body, "</figcaption><div class=\"plot\"></div>"
                              "<div class=\"heat-info\"></div></figure>\n");
        heat_json(c, &hd, (size_t)m, ix);
        c->nheat++;
        pm_heatmap_data_free(&hd);
    }
    free(ix);
    if (!rc && c->oom)
        rc = pm_error_set(err, PM_ENOMEM, "out of memory for the HTML report's colour maps");
    return rc;
}

/* ---- the plain-HTML parts ------------------------------------------------- */

static void kv(pm_buf *b, const char *k, const char *v)
{
    pm_buf_puts(b, "<tr><th scope=\"row\">");
    pm_html_text(b, k);
    pm_buf_puts(b, "</th><td>");
    pm_html_text(b, v);
    pm_buf_puts(b, "</td></tr>\n");
}

static void job_table(html_ctx *c)
{
    const pm_analysis *a = c->a;
    pm_buf *b = &c->body;
    char buf[512], b2[128];
    pm_buf_puts(b, "<table class=\"kv\" id=\"job\">\n");
    kv(b, "Job ID", report_or_dash(pm_analysis_info(a, offsetof(pm_profile_info, job_id))));
    kv(b, "User", report_or_dash(pm_analysis_info(a, offsetof(pm_profile_info, user))));
    kv(b, "Scheduler", report_or_dash(pm_analysis_info(a, offsetof(pm_profile_info, scheduler))));
    report_nodes_text(a, buf, sizeof buf);
    kv(b, "Nodes", buf);
    pdf_utc(a->t_start, buf, sizeof buf);
    kv(b, "Start", buf);
    pdf_utc(a->t_end, buf, sizeof buf);
    kv(b, "End", buf);
    pdf_duration(a->t_end - a->t_start, buf, sizeof buf);
    kv(b, "Duration", buf);
    pdf_num(a->nhosts ? a->hosts[0].interval : NAN, b2, sizeof b2);
    snprintf(buf, sizeof buf, "%s s (analysis grid %.3g s)", b2, a->grid_step);
    kv(b, "Sampling interval", buf);
    const char *cmd = pm_analysis_info(a, offsetof(pm_profile_info, command));
    if (*cmd)
        kv(b, "Command", cmd);
    if (pm_analysis_incomplete(a, buf, sizeof buf))
        kv(b, "Status", buf);
    char lines[3][160];
    size_t n;
    pm_request_use_lines(a, lines, &n);
    for (size_t i = 0; i < n; i++) {
        const char *colon = strchr(lines[i], ':');
        char k[16];
        snprintf(k, sizeof k, "%.*s", colon ? (int)(colon - lines[i]) : 0, lines[i]);
        kv(b, colon ? k : "Requested", colon ? colon + 2 : lines[i]);
    }
    pm_buf_puts(b, "</table>\n");
    pm_request_use u;
    pm_request_use_compute(a, &u);
    char note[512];
    if (pm_request_note(&u, note, sizeof note)) {
        pm_buf_puts(b, "<p class=\"warning\">");
        pm_html_text(b, note);
        pm_buf_puts(b, "</p>\n");
    }
}

/* A key figure's cell as the PDF's key figures table writes it
 * (report_summary.c): bytes, energies and times scaled each on its own,
 * other figures as numbers with the unit in the label. */
static void td(pm_buf *b, const char *s, int num)
{
    pm_buf_puts(b, num ? "<td class=\"num\">" : "<td>");
    pm_html_text(b, s);
    pm_buf_puts(b, "</td>");
}

/* A number's cell with its value for sorting (data-v; none when not finite). */
static void td_num(pm_buf *b, const char *s, double v)
{
    if (isfinite(v))
        pm_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">", v);
    else
        pm_buf_puts(b, "<td class=\"num\">");
    pm_html_text(b, s);
    pm_buf_puts(b, "</td>");
}

static void key_figures(html_ctx *c)
{
    const pm_analysis *a = c->a;
    pm_buf *b = &c->body;
    pm_buf_puts(b, "<table id=\"figures\"><thead><tr><th>Figure</th><th>Min node</th>"
                   "<th>Average</th><th>Max node</th><th>Job</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < c->l->nfigures; i++) {
        const pm_layout_figure *lf = &c->l->figures[i];
        const pm_figure *f = pm_figure_find(lf->key);
        if (!f)
            continue;
        double mn, mean, mx;
        if (!report_figure_span(a, f, &mn, &mean, &mx))
            continue;
        char c1[48], c2[48], c3[48], c4[48], lab[160];
        int scaled = report_figure_cell(lf, f, mn, c1, sizeof c1);
        report_figure_cell(lf, f, mean, c2, sizeof c2);
        report_figure_cell(lf, f, mx, c3, sizeof c3);
        report_figure_cell(lf, f, pm_figure_value(&a->job, f), c4, sizeof c4);
        report_figure_label(lf, f, scaled, lab, sizeof lab);
        pm_buf_puts(b, "<tr>");
        td(b, lab, 0);
        td(b, c1, 1);
        td(b, c2, 1);
        td(b, c3, 1);
        td(b, c4, 1);
        pm_buf_puts(b, "</tr>\n");
    }
    pm_buf_puts(b, "</tbody></table>\n");
}

/* Above this many nodes the statistics per node are data for the script,
 * which shows the rows a search or a sort asks for: 10,000 rows of HTML
 * would be most of the file and seconds of the browser's parsing.  The
 * plain HTML then has each figure's spread across the nodes. */
#define PM_HTML_TABLE_NODES 1000

/* PM_HTML_TABLE_NODES, or the environment's PM_HTML_TABLE_NODES (so that
 * the tests see the script's table on a small job). */
static size_t table_nodes(void)
{
    const char *e = getenv("PM_HTML_TABLE_NODES");
    char *end;
    unsigned long long v = e && *e ? strtoull(e, &end, 10) : 0;
    return e && *e && !*end && v ? (size_t)v : PM_HTML_TABLE_NODES;
}

/* The spread of each figure across the nodes (the PDF's above 16 nodes). */
static void spread_table(html_ctx *c, const pm_figure *const *fs,
                         const pm_layout_figure *const *lfs, size_t nf)
{
    const pm_analysis *a = c->a;
    pm_buf *b = &c->body;
    double *v = pm_alloc_array(a->nhosts ? a->nhosts : 1, sizeof *v);
    if (!v) {
        c->oom = 1;
        return;
    }
    pm_buf_printf(b,
                  "<p>%zu nodes: each figure's spread across them (5th and 95th percentiles "
                  "interpolated); every node's row is below, found by its name or a sort "
                  "(with the script).</p>\n<table id=\"spread\"><thead><tr><th>Figure</th>"
                  "<th>Min</th><th>5th pct</th><th>Median</th><th>95th pct</th><th>Max</th>"
                  "<th>Job</th></tr></thead><tbody>\n",
                  a->nhosts);
    for (size_t i = 0; i < nf; i++) {
        for (size_t h = 0; h < a->nhosts; h++)
            v[h] = pm_figure_value(&a->nodes[h], fs[i]);
        pm_spread sp;
        if (pm_spread_of(v, a->nhosts, &sp) != 0) {
            c->oom = 1;
            break;
        }
        double q[6] = {sp.min, sp.p5, sp.median, sp.p95, sp.max, pm_figure_value(&a->job, fs[i])};
        char cell[48], lab[160];
        int scaled = report_figure_cell(lfs[i], fs[i], 0, cell, sizeof cell);
        report_figure_label(lfs[i], fs[i], scaled, lab, sizeof lab);
        pm_buf_puts(b, "<tr>");
        td(b, lab, 0);
        for (int k = 0; k < 6; k++) {
            if (isfinite(q[k]))
                report_figure_cell(lfs[i], fs[i], q[k], cell, sizeof cell);
            else
                snprintf(cell, sizeof cell, "-");
            td(b, cell, 1);
        }
        pm_buf_puts(b, "</tr>\n");
    }
    pm_buf_puts(b, "</tbody></table>\n");
    free(v);
}

/* The statistics per node: the key figures of each node, a row each; a
 * click on a row highlights the node in every chart.  Above
 * PM_HTML_TABLE_NODES nodes the rows go to the data ("table": per node its
 * index, then per figure its cell's text and its value for sorting). */
static void node_table(html_ctx *c)
{
    const pm_analysis *a = c->a;
    pm_buf *b = &c->body, *d = &c->data;
    const pm_figure *fs[64];
    const pm_layout_figure *lfs[64];
    size_t nf = 0;
    int as_data = a->nhosts > table_nodes();
    for (size_t i = 0; i < c->l->nfigures && nf < 64; i++) {
        const pm_figure *f = pm_figure_find(c->l->figures[i].key);
        if (!f)
            continue;
        lfs[nf] = &c->l->figures[i];
        fs[nf++] = f;
    }
    if (as_data)
        spread_table(c, fs, lfs, nf);
    pm_buf_puts(b, "<table id=\"nodes\"><thead><tr><th>Node</th>");
    for (size_t i = 0; i < nf; i++) {
        char tmp[48], lab[160];
        int scaled = report_figure_cell(lfs[i], fs[i], 0, tmp, sizeof tmp);
        report_figure_label(lfs[i], fs[i], scaled, lab, sizeof lab);
        pm_buf_puts(b, "<th>");
        pm_html_text(b, lab);
        pm_buf_puts(b, "</th>");
    }
    pm_buf_puts(b, "</tr></thead><tbody>\n");
    pm_buf_puts(d, as_data ? ",\"table\":[" : ",\"table\":null");
    for (size_t h = 0; h < a->nhosts; h++) {
        if (as_data)
            pm_buf_printf(d, "%s[%zu", h ? "," : "", h);
        else {
            pm_buf_printf(b, "<tr data-node=\"%zu\">", h);
            td(b, a->hosts[h].name, 0);
        }
        for (size_t i = 0; i < nf; i++) {
            char cell[48];
            double v = pm_figure_value(&a->nodes[h], fs[i]);
            if (isfinite(v))
                report_figure_cell(lfs[i], fs[i], v, cell, sizeof cell);
            else
                snprintf(cell, sizeof cell, "-");
            if (!as_data) {
                td_num(b, cell, v);
                continue;
            }
            pm_buf_puts(d, ",");
            pm_html_json_str(d, cell);
            if (isfinite(v))
                pm_buf_printf(d, ",%.7g", v);
            else
                pm_buf_puts(d, ",null");
        }
        pm_buf_puts(as_data ? d : b, as_data ? "]" : "</tr>\n");
    }
    if (as_data)
        pm_buf_puts(d, "]");
    pm_buf_puts(b, "</tbody></table>\n");
}

static void notes_list(html_ctx *c)
{
    const pm_analysis *a = c->a;
    pm_buf *b = &c->body;
    static const char *const sev[] = {"info", "warning", "critical"};
    if (a->nnotes == 0) {
        pm_buf_puts(b, "<p>No rule fired.</p>\n");
        return;
    }
    pm_note_line *l = NULL;
    size_t n = pm_note_lines(a, &l);
    if (!l) {
        c->oom = 1;
        return;
    }
    pm_buf_puts(b, "<ul id=\"notes\">\n");
    char buf[1024];
    for (size_t i = 0; i < n; i++) {
        const pm_note *nt = &a->notes[l[i].note];
        const char *msg = nt->message ? nt->message : nt->rule;
        int s = l[i].severity >= 0 && l[i].severity <= 2 ? l[i].severity : 0;
        if (l[i].count == 1)
            snprintf(buf, sizeof buf, "%s", msg);
        else if (l[i].count > l[i].shown)
            snprintf(buf, sizeof buf, "%zu nodes (%s and %zu more), e.g. %s", l[i].count,
                     l[i].hosts, l[i].count - l[i].shown, msg);
        else
            snprintf(buf, sizeof buf, "%zu nodes (%s), e.g. %s", l[i].count, l[i].hosts, msg);
        pm_buf_printf(b, "<li class=\"%s\"><b>[%s]</b> ", sev[s], sev[s]);
        pm_html_text(b, buf);
        pm_buf_puts(b, "</li>\n");
    }
    pm_buf_puts(b, "</ul>\n");
    free(l);
}

static void constant_table(html_ctx *c, const flat_row *fl, size_t nfl, const char *missing)
{
    const pm_analysis *a = c->a;
    pm_buf *b = &c->body;
    if (nfl) {
        pm_buf_puts(b, "<h2 id=\"constant\">Constant over the job</h2>\n<p>Each of these metrics "
                       "stayed flat (within 0.1 % on every node) for the whole job, so it is "
                       "given as a number instead of a plot.</p>\n<table><thead><tr><th>Section"
                       "</th><th>Metric</th><th>Value</th><th>Nodes</th></tr></thead><tbody>\n");
        for (size_t i = 0; i < nfl; i++) {
            const pm_metric_result *r = &a->metrics[fl[i].metric];
            const char *u = pm_unit_shown(r->def->unit);
            char v1[32], v2[32], val[96], nodes[48];
            pm_fmt_title_num(fl[i].lo, v1, sizeof v1);
            pm_fmt_title_num(fl[i].hi, v2, sizeof v2);
            if (strcmp(v1, v2) == 0)
                snprintf(val, sizeof val, "%s%s%s", v1, *u ? " " : "", u);
            else
                snprintf(val, sizeof val, "%s to %s%s%s", v1, v2, *u ? " " : "", u);
            snprintf(nodes, sizeof nodes, "%zu of %zu", r->nhosts_with_data, a->nhosts);
            pm_buf_puts(b, "<tr>");
            td(b, c->l->groups[fl[i].group].title, 0);
            td(b, r->def->name, 0);
            td(b, val, 1);
            td(b, nodes, 1);
            pm_buf_puts(b, "</tr>\n");
        }
        pm_buf_puts(b, "</tbody></table>\n");
    }
    if (*missing) {
        pm_buf_puts(b, "<p>No data on this job for: ");
        pm_html_text(b, missing);
        pm_buf_puts(b, ".</p>\n");
    }
}

/* ,"KEY":[[kind, from, to] ...]: at most MAX_PHASES of a's phases (seconds
 * since a's start), kind the index of the phase's name in names[0..n). */
static void phases_json(pm_buf *d, const char *key, const pm_analysis *a, const char *const *names,
                        size_t n)
{
    html_json_key(d, key, 0);
    pm_buf_puts(d, "[");
    size_t shown = 0;
    for (size_t i = 0; a->phase_stats && i < a->phases.n && shown < MAX_PHASES; i++) {
        const pm_phase *p = &a->phases.v[i];
        size_t k;
        for (k = 0; k < n; k++)
            if (strcmp(names[k], p->name) == 0)
                break;
        if (k == n || !(p->t1 >= p->t0))
            continue;
        pm_buf_printf(d, "%s[%zu,", shown ? "," : "", k);
        pm_buf_json_num(d, p->t0 - a->t_start);
        pm_buf_puts(d, ",");
        pm_buf_json_num(d, p->t1 - a->t_start);
        pm_buf_puts(d, "]");
        shown++;
    }
    pm_buf_puts(d, "]");
}

/* The data's head: the job's start and end, the nodes and the phases;
 * with --compare also job A's phases ("aphases", on A's elapsed time),
 * the kinds then B's followed by those only A has, so that a kind has one
 * colour in both jobs. */
static void data_head(html_ctx *c)
{
    const pm_analysis *a = c->a, *ra = c->o->compare ? c->o->compare->a : NULL;
    pm_buf *d = &c->data;
    pm_buf_puts(d, "{\"t0\":");
    pm_buf_json_num(d, a->t_start);
    pm_buf_puts(d, ",\"t1\":");
    double span = a->t_end - a->t_start;
    if (ra) /* both jobs whole on the one axis */
        span = fmax(span, ra->t_end - ra->t_start);
    pm_buf_json_num(d, span);
    pm_buf_printf(d, ",\"elapsed\":%d,\"nodes\":[", c->o->elapsed ? 1 : 0);
    for (size_t h = 0; h < a->nhosts; h++) {
        if (h)
            pm_buf_puts(d, ",");
        pm_html_json_str(d, a->hosts[h].name);
    }
    const pm_phase_stats *st = a->phase_stats, *sa = ra ? ra->phase_stats : NULL;
    size_t nb = st ? st->nkinds : 0, na = sa ? sa->nkinds : 0, nk = 0;
    const char **names = pm_alloc_array(nb + na + 1, sizeof *names);
    if (!names) {
        c->oom = 1;
        return;
    }
    for (size_t k = 0; k < nb; k++)
        names[nk++] = st->kinds[k].name;
    for (size_t k = 0; k < na; k++) {
        size_t j;
        for (j = 0; j < nb; j++)
            if (strcmp(names[j], sa->kinds[k].name) == 0)
                break;
        if (j == nb)
            names[nk++] = sa->kinds[k].name;
    }
    pm_buf_puts(d, "],\"kinds\":[");
    for (size_t k = 0; k < nk; k++) {
        if (k)
            pm_buf_puts(d, ",");
        pm_html_json_str(d, names[k]);
    }
    pm_buf_puts(d, "]");
    phases_json(d, "phases", a, names, nb);
    if (ra)
        phases_json(d, "aphases", ra, names, nk);
    free(names);
    pm_buf_puts(d, ",\"charts\":[");
}

/* The blobs' list ([count, bytes an element] each) and, in c->bin, the
 * blobs one after the other, each byte-shuffled (pm_html_shuffle), as one
 * zlib stream in base64 (as they are where deflate does not pay). */
static int data_tail(html_ctx *c, pm_buf *bin, pm_error *err)
{
    pm_buf *d = &c->data;
    size_t raw = 0;
    for (size_t i = 0; i < c->nblobs; i++)
        raw += c->blobs[i].len;
    unsigned char *all = malloc(raw ? raw : 1), *z = NULL;
    if (!all)
        return pm_error_set(err, PM_ENOMEM, "out of memory for the HTML report's series");
    size_t at = 0, zl = 0;
    pm_buf_puts(d, ",\"blobs\":[");
    for (size_t i = 0; i < c->nblobs; i++) {
        const blob *b = &c->blobs[i];
        pm_html_shuffle(b->bytes, b->len, b->elem, all + at);
        at += b->len;
        pm_buf_printf(d, "%s[%zu,%zu]", i ? "," : "", b->len / b->elem, b->elem);
    }
    int rc = pm_html_deflate(all, raw, &z, &zl);
    if (rc) {
        free(all);
        return pm_error_set(err, rc, "cannot deflate the HTML report's series (%zu bytes)", raw);
    }
    int packed = zl < raw;
    pm_buf_printf(d, "],\"packed\":%d,\"raw\":%zu}", packed, raw);
    if (packed)
        pm_base64(bin, z, zl);
    else
        pm_base64(bin, all, raw);
    free(all);
    free(z);
    return 0;
}

/* ---- the file ------------------------------------------------------------- */

static long long creation_time(const pm_html_opts *o)
{
    long long t = o->creation_time;
    if (t >= 0)
        return t;
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    if (sde && *sde) {
        char *end;
        errno = 0;
        t = strtoll(sde, &end, 10);
        return *end || errno || t < 0 ? 0 : t;
    }
    return (long long)time(NULL);
}

static void csp_hash(pm_buf *b, const char *data, size_t len)
{
    uint8_t h[32];
    pm_sha256(data, len, h);
    pm_buf_puts(b, " 'sha256-");
    pm_base64(b, h, 32);
    pm_buf_puts(b, "'");
}

static void body_top(html_ctx *c, const char *verdict, char limits[][160], size_t nlim)
{
    pm_buf *b = &c->body;
    pm_buf_puts(b, "<header><h1>Job performance report</h1>\n<p id=\"verdict\">");
    pm_html_text(b, verdict);
    pm_buf_puts(b, "</p>\n");
    for (size_t i = 0; i < nlim; i++) {
        pm_buf_puts(b, "<p class=\"limit\">");
        pm_html_text(b, limits[i]);
        pm_buf_puts(b, "</p>\n");
    }
    pm_buf_puts(b, "</header>\n<nav id=\"contents\"><h2>Contents</h2><ol>"
                   "<li><a href=\"#job\">The job</a></li>"
                   "<li><a href=\"#key-figures\">Key figures</a></li>"
                   "<li><a href=\"#efficiency\">Efficiency notes</a></li>");
    if (c->o->compare)
        pm_buf_puts(b, "<li><a href=\"#comparison\">Comparison with another job</a></li>");
    pm_buf_puts(b, "<li><a href=\"#plots\">Plots</a></li>"
                   "<li><a href=\"#statistics\">Statistics per node</a></li></ol></nav>\n<main>\n");
    pm_buf_puts(b, "<h2>The job</h2>\n");
    job_table(c);
    pm_buf_puts(b, "<h2 id=\"key-figures\">Key figures (per node, and for the whole job)</h2>\n");
    key_figures(c);
    pm_buf_puts(b, "<h2 id=\"efficiency\">Efficiency notes</h2>\n");
    notes_list(c);
}

static void plots_head(html_ctx *c)
{
    pm_buf *b = &c->body;
    pm_buf_puts(b, "<h2 id=\"plots\">Plots</h2>\n<p class=\"help\">Drag across a plot to zoom "
                   "every plot to that time; double-click to see the whole job again. Click a "
                   "node in a legend or in the statistics table to highlight it in every "
                   "plot.</p>\n<div id=\"phases\"></div>\n");
}

int pm_html_write(const pm_analysis *a, const pm_html_opts *o_in, pm_error *err)
{
    /* A comparison is on elapsed time: the jobs ran at different times. */
    pm_html_opts oc = *o_in;
    if (oc.compare)
        oc.elapsed = 1;
    const pm_html_opts *o = &oc;
    tfile t[T_N];
    memset(t, 0, sizeof t);
    html_ctx c;
    memset(&c, 0, sizeof c);
    c.a = a;
    c.o = o;
    pm_buf_init(&c.body);
    pm_buf_init(&c.data);
    pm_buf head, style, bin;
    pm_buf_init(&head);
    pm_buf_init(&style);
    pm_buf_init(&bin);
    pm_layout *layout = NULL;
    flat_row *fl = NULL;
    int rc = pm_layout_load(o->layout_path, &layout, err);
    if (!rc)
        rc = load_templates(o->template_dir, t, err);
    if (rc)
        goto out;
    c.l = layout;
    fl = calloc(a->nmetrics ? a->nmetrics : 1, sizeof *fl);
    if (!fl) {
        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        goto out;
    }
    char verdict[2048] = "";
    (void)pm_verdict_text(a, verdict, sizeof verdict);
    char limits[8][160];
    size_t nlim = pm_verdict_limits(a, limits, 8);
    data_head(&c);
    body_top(&c, verdict, limits, nlim);
    if (o->compare && (rc = html_compare(&c, err)) != 0)
        goto out;
    plots_head(&c);
    size_t nfl = 0;
    char missing[512];
    c.flat = calloc(a->nmetrics ? a->nmetrics : 1, 1);
    if (!c.flat) {
        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = charts(&c, fl, &nfl, missing, sizeof missing, err)) != 0)
        goto out;
    pm_buf_puts(&c.data, "],\"heat\":[");
    if ((rc = heatmaps(&c, err)) != 0)
        goto out;
    pm_buf_puts(&c.data, "]");
    if ((rc = timeline(&c, err)) != 0)
        goto out;
    constant_table(&c, fl, nfl, missing);
    pm_buf_puts(&c.body, "<h2 id=\"statistics\">Statistics per node</h2>\n<p class=\"help\">"
                         "Click a column's heading to sort by it; type in the box to show the "
                         "nodes whose name holds the text (Enter highlights the first).</p>\n"
                         "<input type=\"search\" id=\"node-filter\" placeholder=\"Find a "
                         "node\" aria-label=\"Find a node\">\n");
    node_table(&c);
    if ((rc = data_tail(&c, &bin, err)) != 0)
        goto out;
    long long when = creation_time(o);
    time_t tt = (time_t)when;
    struct tm tm;
    char date[32] = "";
    if (gmtime_r(&tt, &tm))
        strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", &tm);
    pm_buf_printf(&c.body, "</main>\n<footer>perfmon-analyze %s, %s</footer>\n", PM_VERSION, date);

    /* The style element's text, hashed for the policy as written. */
    pm_buf_add(&style, t[T_UCSS].data, t[T_UCSS].len);
    pm_buf_puts(&style, "\n");
    pm_buf_add(&style, t[T_CSS].data, t[T_CSS].len);
    pm_buf_puts(&head, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                       "'none'; script-src");
    csp_hash(&head, t[T_UJS].data, t[T_UJS].len);
    csp_hash(&head, t[T_JS].data, t[T_JS].len);
    pm_buf_puts(&head, "; style-src");
    csp_hash(&head, style.data ? style.data : "", style.len);
    pm_buf_puts(&head,
                "\">\n<meta name=\"viewport\" content=\"width=device-width, "
                "initial-scale=1\">\n<meta name=\"generator\" content=\"perfmon-analyze " PM_VERSION
                "\">\n<title>perfmon job report ");
    pm_html_text(&head, pm_analysis_info(a, offsetof(pm_profile_info, job_id)));
    pm_buf_puts(&head, "</title>\n<style>");
    if (head.oom || style.oom || bin.oom || c.body.oom || c.data.oom || c.oom) {
        rc = pm_error_set(err, PM_ENOMEM, "out of memory for the HTML report");
        goto out;
    }

    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", o->path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        rc = pm_error_sys(err, PM_EIO, errno, "%s: cannot create", tmp);
        goto out;
    }
    int bad = fwrite(head.data, 1, head.len, f) != head.len;
    bad |= fwrite(style.data, 1, style.len, f) != style.len;
    bad |= fputs("</style>\n</head>\n<body>\n", f) < 0;
    bad |= fwrite(c.body.data, 1, c.body.len, f) != c.body.len;
    bad |= fputs("<script type=\"application/json\" id=\"pm-data\">", f) < 0;
    bad |= fwrite(c.data.data, 1, c.data.len, f) != c.data.len;
    bad |= fputs("</script>\n<script type=\"application/octet-stream\" id=\"pm-bin\">", f) < 0;
    bad |= fwrite(bin.data ? bin.data : "", 1, bin.len, f) != bin.len;
    bad |= fputs("</script>\n<script>", f) < 0;
    bad |= fwrite(t[T_UJS].data, 1, t[T_UJS].len, f) != t[T_UJS].len;
    bad |= fputs("</script>\n<script>", f) < 0;
    bad |= fwrite(t[T_JS].data, 1, t[T_JS].len, f) != t[T_JS].len;
    bad |= fputs("</script>\n</body>\n</html>\n", f) < 0;
    int e = errno;
    bad |= fflush(f) != 0 || ferror(f);
    if (!bad)
        e = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        rc = pm_error_sys(err, PM_EIO, e, "%s: write failed", tmp);
        unlink(tmp);
        goto out;
    }
    if (rename(tmp, o->path) != 0) {
        rc = pm_error_sys(err, PM_EIO, errno, "%s: cannot rename into place", o->path);
        unlink(tmp);
    }
out:
    free_templates(t);
    for (size_t i = 0; i < c.nblobs; i++)
        free(c.blobs[i].bytes);
    free(c.blobs);
    free(c.flat);
    free(fl);
    pm_layout_free(layout);
    pm_buf_free(&c.body);
    pm_buf_free(&c.data);
    pm_buf_free(&head);
    pm_buf_free(&style);
    pm_buf_free(&bin);
    return rc;
}
