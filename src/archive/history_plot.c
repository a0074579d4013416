/* The history plot of one entry (see archive_plot.h). */
#include <cairo-pdf.h>
#include <cairo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "perfmon/archive_plot.h"
#include "perfmon/mem.h"
#include "perfmon/plot.h"

#define WIDTH_CM 18.0
#define ASPECT 0.5
#define DPI 150

static int write_pdf(const char *path, const pm_plot *p, pm_error *err)
{
    double w = WIDTH_CM / 2.54 * 72, h = w * ASPECT;
    cairo_surface_t *s = cairo_pdf_surface_create(path, w, h);
    cairo_t *cr = cairo_create(s);
    pm_plot_draw(cr, 0, 0, w, h, 9.0, p);
    cairo_destroy(cr);
    cairo_surface_finish(s);
    cairo_status_t st = cairo_surface_status(s);
    cairo_surface_destroy(s);
    if (st != CAIRO_STATUS_SUCCESS)
        return pm_error_set(err, PM_EIO, "%s: cannot write PDF: %s", path,
                            cairo_status_to_string(st));
    return 0;
}

int pm_arch_plot(const char *path, const char *test, const char *entry,
                 const pm_store_point *pts, size_t n, const pm_check_opts *o,
                 size_t *nregressions, pm_error *err)
{
    double *t = pm_alloc_array(n ? n : 1, sizeof *t), *v = pm_alloc_array(n ? n : 1, sizeof *v);
    double *mt = pm_alloc_array(n ? n : 1, sizeof *mt), *mv = pm_alloc_array(n ? n : 1, sizeof *mv);
    if (!t || !v || !mt || !mv) {
        free(t);
        free(v);
        free(mt);
        free(mv);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    }
    size_t nm = 0;
    for (size_t i = 0; i < n; i++) {
        t[i] = (double)pts[i].start_us * 1e-6;
        v[i] = pts[i].timing;
        pm_check_result r;
        pm_check_series(v, i + 1, o, &r);
        if (r.verdict == PM_CHECK_REGRESSION) {
            mt[nm] = t[i];
            mv[nm++] = v[i];
        }
    }
    char title[600], label[300];
    snprintf(title, sizeof title, "%.280s: %.280s", test, entry);
    snprintf(label, sizeof label, "timing (%zu runs, %zu marked as regressions)", n, nm);
    pm_plot_series ser = {.label = label, .t = t, .v = v, .n = n};
    pm_plot p;
    memset(&p, 0, sizeof p);
    p.title = title;
    p.ylabel = "timing";
    p.time_axis = PM_AXIS_CLOCK;
    p.series = &ser;
    p.nseries = 1;
    p.legend = 1;
    p.points = 1;
    p.mark_t = mt;
    p.mark_v = mv;
    p.nmarks = nm;
    size_t len = strlen(path);
    int rc = len > 4 && strcasecmp(path + len - 4, ".pdf") == 0
                 ? write_pdf(path, &p, err)
                 : pm_plot_png(path, &p, WIDTH_CM, ASPECT, DPI, err);
    free(t);
    free(v);
    free(mt);
    free(mv);
    if (rc == 0 && nregressions)
        *nregressions = nm;
    return rc;
}
