/* One chart or colour map to one PNG file (pm_plot_png, pm_heatmap_png,
 * see plot.h): an image surface width_cm wide at dpi, scaled so that the
 * drawing works in points, drawn by pm_plot_draw or pm_heatmap_draw, and
 * written with Cairo's PNG writer (its status checked, the file named in
 * the error).
 */
#include "perfmon/plot.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/canvas.h"
#include "plot_int.h"

typedef void (*draw_fn)(cairo_t *, double, double, double, double, double, const void *);

static void draw_plot_cb(cairo_t *cr, double x, double y, double w, double h, double fs,
                         const void *p)
{
    pm_plot_draw(cr, x, y, w, h, fs, p);
}

static void draw_heat_cb(cairo_t *cr, double x, double y, double w, double h, double fs,
                         const void *p)
{
    pm_heatmap_draw(cr, x, y, w, h, fs, p);
}

static int render_png(const char *path, draw_fn fn, const void *obj, double width_cm, double aspect,
                      int dpi, pm_error *err)
{
    if (width_cm <= 0 || aspect <= 0 || dpi <= 0 || dpi > 2400)
        return pm_error_set(err, PM_EUSAGE, "%s: bad image size", path);
    int w = (int)lround(width_cm / 2.54 * dpi);
    int h = (int)lround(width_cm * aspect / 2.54 * dpi);
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(s);
        return pm_error_set(err, PM_ENOMEM, "%s: cannot create a %dx%d image", path, w, h);
    }
    cairo_t *cr = cairo_create(s);
    /* Draw in points (1/72 in), so sizes match the PDF report. */
    double scale = dpi / 72.0;
    cairo_scale(cr, scale, scale);
    cairo_font_options_t *fo = cairo_font_options_create();
    cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
    cairo_set_font_options(cr, fo);
    cairo_font_options_destroy(fo);
    fn(cr, 0, 0, w / scale, h / scale, 9.0, obj);
    cairo_destroy(cr);
    cairo_status_t st = cairo_surface_write_to_png(s, path);
    cairo_surface_destroy(s);
    if (st != CAIRO_STATUS_SUCCESS)
        return pm_error_set(err, PM_EIO, "%s: cannot write PNG: %s", path,
                            cairo_status_to_string(st));
    return 0;
}

int pm_plot_png(const char *path, const pm_plot *p, double width_cm, double aspect, int dpi,
                pm_error *err)
{
    return render_png(path, draw_plot_cb, p, width_cm, aspect, dpi, err);
}

int pm_heatmap_png(const char *path, const pm_heatmap *hm, double width_cm, double aspect, int dpi,
                   pm_error *err)
{
    return render_png(path, draw_heat_cb, hm, width_cm, aspect, dpi, err);
}
