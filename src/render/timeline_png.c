/* --plots: the phase timeline as phases_timeline.png, the report's
 * "Phases per node" drawn by the same function (pm_timeline_draw). */
#include <cairo.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/phase_stats.h"
#include "perfmon/plot.h"
#include "perfmon/report.h"

int pm_timeline_png(const pm_analysis *a, const pm_report_opts *o, pm_error *err)
{
    const pm_phase_stats *st = a->phase_stats;
    const pm_phase_set *ps = &a->phases;
    if (!st || ps->n == 0 || !o->plots_dir)
        return 0;
    const char **rows = pm_alloc_array(ps->n + a->nhosts, sizeof *rows);
    const char **kinds = pm_alloc_array(st->nkinds ? st->nkinds : 1, sizeof *kinds);
    pm_timeline_bar *bars = pm_alloc_array(ps->n, sizeof *bars);
    int rc = 0;
    if (!rows || !kinds || !bars) {
        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        goto done;
    }
    /* Rows as the report's: nodes with phases in host order, then the
     * hosts only phases name (Scanner nodes). */
    size_t nrows = 0;
    for (size_t h = 0; h < a->nhosts; h++)
        for (size_t i = 0; i < ps->n; i++)
            if (strcmp(ps->v[i].host, a->hosts[h].name) == 0) {
                rows[nrows++] = a->hosts[h].name;
                break;
            }
    double t0 = a->t_start, t1 = a->t_end;
    for (size_t i = 0; i < ps->n; i++) {
        const pm_phase *p = &ps->v[i];
        size_t r, k;
        for (r = 0; r < nrows; r++)
            if (strcmp(rows[r], p->host) == 0)
                break;
        if (r == nrows)
            rows[nrows++] = p->host;
        for (k = 0; k < st->nkinds; k++)
            if (strcmp(st->kinds[k].name, p->name) == 0)
                break;
        bars[i] = (pm_timeline_bar){r, k, p->t0, p->t1};
        t0 = fmin(t0, p->t0);
        t1 = fmax(t1, p->t1);
    }
    for (size_t k = 0; k < st->nkinds; k++)
        kinds[k] = st->kinds[k].name;
    pm_timeline tl = {"Phases per node",
                      o->elapsed ? PM_AXIS_ELAPSED : PM_AXIS_CLOCK,
                      a->t_start,
                      t0,
                      t1,
                      rows,
                      nrows,
                      kinds,
                      st->nkinds,
                      bars,
                      ps->n};
    /* 18 cm wide like the other plots, 200 dpi unless --dpi; the height
     * grows with the rows as on the report's page. */
    int dpi = o->dpi > 0 ? o->dpi : 200;
    double w_pt = 18.0 / 2.54 * 72.0, h_pt = fmin(700.0, 140.0 + 9.0 * (double)nrows);
    int pw = (int)lround(w_pt / 72.0 * dpi), ph = (int)lround(h_pt / 72.0 * dpi);
    char path[4096];
    if (pm_path_join(path, sizeof path, o->plots_dir, "phases_timeline.png") != 0) {
        rc = pm_error_set(err, PM_EUSAGE, "%s: path too long", o->plots_dir);
        goto done;
    }
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, pw, ph);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(s);
        rc = pm_error_set(err, PM_ENOMEM, "%s: cannot create a %dx%d image", path, pw, ph);
        goto done;
    }
    cairo_t *cr = cairo_create(s);
    cairo_scale(cr, dpi / 72.0, dpi / 72.0); /* points, as in the report */
    pm_timeline_draw(cr, 0, 0, w_pt, h_pt, 9.0, &tl);
    cairo_destroy(cr);
    cairo_status_t cs = cairo_surface_write_to_png(s, path);
    cairo_surface_destroy(s);
    if (cs != CAIRO_STATUS_SUCCESS)
        rc =
            pm_error_set(err, PM_EIO, "%s: cannot write PNG: %s", path, cairo_status_to_string(cs));
done:
    free(rows);
    free(kinds);
    free(bars);
    return rc;
}
