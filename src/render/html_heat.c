/* The HTML report's phase timeline and colour maps (see html_int.h): the
 * PDF's (pm_timeline_build, pm_heatmap_build), drawn by report.js. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_int.h"
#include "perfmon/mem.h"
#include "perfmon/units.h"
#include "report_int.h"

/* ---- the phase timeline --------------------------------------------------- */

/* The PDF's "Phases per node" (pm_timeline_build): a row per node (more
 * where its phases overlap), a bar per phase, at most MAX_PHASES bars. */
int html_timeline(html_ctx *c, pm_error *err)
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
    name_idx *ix = pm_alloc_array(a->in.nhosts ? a->in.nhosts : 1, sizeof *ix);
    if (!ix)
        return NULL;
    for (size_t h = 0; h < a->in.nhosts; h++)
        ix[h] = (name_idx){a->in.hosts[h].name, h};
    qsort(ix, a->in.nhosts, sizeof *ix, cmp_name_ptr);
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
        const name_idx *f = bsearch(&key, ix, a->in.nhosts, sizeof *ix, cmp_name_ptr);
        pm_buf_printf(d, "%s%ld", r ? "," : "", f ? (long)f->host : -1L);
    }
    pm_buf_puts(d, "]");
    size_t qi = html_take_blob(c, q, mr * nc, 1);
    if (qi == SIZE_MAX)
        c->oom = 1;
    pm_buf_printf(d, ",\"cells\":%zu}", qi);
}

/* The PDF's colour maps (templates/report.json "heatmaps"), for jobs of
 * more than PM_HEATMAP_MIN_HOSTS nodes; a flat metric has none. */
int html_heatmaps(html_ctx *c, pm_error *err)
{
    const pm_analysis *a = c->a;
    if (a->in.nhosts <= PM_HEATMAP_MIN_HOSTS)
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
