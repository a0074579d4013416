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
    const pm_phase_set *ps = &a->in.phases;
    if (!st || ps->n == 0 || !o->plots_dir)
        return 0;
    pm_timeline_data td;
    int rc = pm_timeline_build(a, o->elapsed, &td, err);
    if (rc)
        return rc;
    const pm_timeline *tl = &td.tl;
    /* 18 cm wide like the other plots, 200 dpi unless --dpi; the height
     * grows with the rows as on the report's page. */
    int dpi = o->dpi > 0 ? o->dpi : 200;
    double w_pt = 18.0 / 2.54 * 72.0, h_pt = fmin(700.0, 140.0 + 9.0 * (double)tl->nrows);
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
    pm_timeline_draw(cr, 0, 0, w_pt, h_pt, 9.0, tl);
    cairo_destroy(cr);
    cairo_status_t cs = cairo_surface_write_to_png(s, path);
    cairo_surface_destroy(s);
    if (cs != CAIRO_STATUS_SUCCESS)
        rc =
            pm_error_set(err, PM_EIO, "%s: cannot write PNG: %s", path, cairo_status_to_string(cs));
done:
    pm_timeline_data_free(&td);
    return rc;
}
