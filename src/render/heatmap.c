/* The time x node colour map with Cairo (pm_heatmap_draw, see plot.h):
 * one row per node, a cell per grid column, the node average along the
 * right edge and the time average along the bottom, with a colour scale.
 * The colour map (cmap) is perceptually ordered and its lightness rises
 * monotonically, so it also reads in grey.
 */
#include "perfmon/plot.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/canvas.h"
#include "plot_int.h"

/* Perceptually ordered colour map (dark blue -> green -> yellow), whose
 * lightness rises monotonically, so it also reads in grey. */
static void cmap(double x, double rgb[3])
{
    static const double stops[9][3] = {
        {0.267, 0.005, 0.329}, {0.283, 0.141, 0.458}, {0.254, 0.265, 0.530},
        {0.207, 0.372, 0.553}, {0.164, 0.471, 0.558}, {0.128, 0.567, 0.551},
        {0.135, 0.659, 0.518}, {0.478, 0.821, 0.318}, {0.993, 0.906, 0.144},
    };
    if (!(x >= 0))
        x = 0;
    if (x > 1)
        x = 1;
    double s = x * 8;
    int i = (int)floor(s);
    if (i >= 8)
        i = 7;
    double u = s - i;
    for (int k = 0; k < 3; k++)
        rgb[k] = stops[i][k] * (1 - u) + stops[i + 1][k] * u;
}

/* Where the colour map's parts go, and what its cells gave. */
typedef struct hm_geo {
    double X, Y, W, H, fs;
    double px;                 /* a device pixel, in user units */
    double lw;                 /* the row labels' width */
    double mx, my, mw, mh;     /* the cells' frame */
    double side, bottom, cbar; /* the node averages', time average's, colour bar's room */
    double lo, hi;             /* the colour scale's range */
    int iw, ih;                /* the cells' image, in pixels */
    double *rowavg, *colavg;   /* [ih] each image row's mean, [iw] each column's sum */
    size_t *colcnt;            /* [iw] the rows in each column's sum */
} hm_geo;

/* The background, the frame and the colour scale's range (*g); 0 when
 * the frame is too small or the map empty. */
static int hm_layout(cairo_t *cr, double X, double Y, double W, double H, double fs,
                     const pm_heatmap *hm, hm_geo *g)
{
    cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_rectangle(cr, X, Y, W, H);
    pm_cv_fill(cr);
    double ux = 1, uy = 0;
    cairo_user_to_device_distance(cr, &ux, &uy);
    double px = ux > 0 ? 1.0 / ux : 1.0;

    /* Row label width: the longest host name, capped. */
    cairo_set_font_size(cr, fs * 0.7);
    double lw = 0;
    for (size_t r = 0; r < hm->nrows; r++) {
        double w = plot_text_width(cr, hm->rows[r]);
        if (w > lw)
            lw = w;
    }
    double my = Y + fs * 2.4;
    double side = fs * 4.5, bottom = fs * 4.2, cbar = fs * 3.6;
    double mh = H - (my - Y) - bottom - fs * 2.6;
    /* Merged rows are labelled by group size ("1606 nodes"), not host. */
    if (hm->group && mh > 0 && (double)hm->nrows > floor(mh / px)) {
        char t[64];
        snprintf(t, sizeof t, "%zu nodes", hm->nrows);
        lw = plot_text_width(cr, t);
    }
    if (lw > W * 0.2)
        lw = W * 0.2;
    double mx = X + lw + fs * 0.8;
    double mw = W - (mx - X) - side - cbar;
    if (mw < 20 || mh < 20 || hm->nrows == 0 || hm->ncols == 0)
        return 0;
    double lo = INFINITY, hi = -INFINITY;
    size_t total = hm->nrows * hm->ncols;
    plot_range_of(hm->values, total, 0, &lo, &hi);
    if (!(hi >= lo)) {
        lo = 0;
        hi = 1;
    }
    if (hi == lo)
        hi = lo + 1;
    *g = (hm_geo){.X = X,
                  .Y = Y,
                  .W = W,
                  .H = H,
                  .fs = fs,
                  .px = px,
                  .lw = lw,
                  .mx = mx,
                  .my = my,
                  .mw = mw,
                  .mh = mh,
                  .side = side,
                  .bottom = bottom,
                  .cbar = cbar,
                  .lo = lo,
                  .hi = hi};
    return 1;
}

/* The cells: an image of ncols_px x rows, scaled without smoothing.
 * More nodes than pixel rows: consecutive rows (similar nodes, see
 * pm_heatmap_build) are merged into one image row, their mean, so a
 * node gets at most one pixel row.  Fills g's averages and image size;
 * 0 when out of memory. */
static int hm_cells(cairo_t *cr, const pm_heatmap *hm, hm_geo *g)
{
    double px = g->px, mx = g->mx, my = g->my, mw = g->mw, mh = g->mh, lo = g->lo, hi = g->hi;
    int iw = (int)ceil(mw / px);
    if (iw < 1)
        iw = 1;
    if ((size_t)iw > hm->ncols)
        iw = (int)hm->ncols;
    size_t maxrows = (size_t)floor(mh / px);
    if (maxrows < 1)
        maxrows = 1;
    int ih = (int)(hm->nrows < maxrows ? hm->nrows : maxrows);
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, iw, ih);
    unsigned char *data = cairo_image_surface_get_data(img);
    int stride = cairo_image_surface_get_stride(img);
    double *rowavg = calloc((size_t)ih, sizeof *rowavg);
    double *colavg = calloc((size_t)iw, sizeof *colavg);
    size_t *colcnt = calloc((size_t)iw, sizeof *colcnt);
    g->rowavg = rowavg;
    g->colavg = colavg;
    g->colcnt = colcnt;
    g->iw = iw;
    g->ih = ih;
    if (!data || !rowavg || !colavg || !colcnt) {
        cairo_surface_destroy(img);
        return 0;
    }
    cairo_surface_flush(img);
    for (int r = 0; r < ih; r++) {
        size_t r0 = (size_t)r * hm->nrows / (size_t)ih,
               r1 = (size_t)(r + 1) * hm->nrows / (size_t)ih;
        if (r1 <= r0)
            r1 = r0 + 1;
        double rs = 0;
        size_t rn = 0;
        for (int c = 0; c < iw; c++) {
            size_t a = (size_t)c * hm->ncols / (size_t)iw,
                   b = (size_t)(c + 1) * hm->ncols / (size_t)iw;
            if (b <= a)
                b = a + 1;
            double s = 0;
            size_t k = 0;
            for (size_t rr = r0; rr < r1 && rr < hm->nrows; rr++) {
                const double *row = hm->values + rr * hm->ncols;
                for (size_t j = a; j < b && j < hm->ncols; j++)
                    if (isfinite(row[j])) {
                        s += row[j];
                        k++;
                    }
            }
            uint32_t pix;
            if (k) {
                double v = s / (double)k, rgb[3];
                cmap((v - lo) / (hi - lo), rgb);
                pix = (uint32_t)lround(rgb[0] * 255) << 16 | (uint32_t)lround(rgb[1] * 255) << 8 |
                      (uint32_t)lround(rgb[2] * 255);
                colavg[c] += v;
                colcnt[c]++;
                rs += s;
                rn += k;
            } else {
                pix = 0xF0F0F0; /* no data: light grey */
            }
            memcpy(data + (size_t)r * (size_t)stride + (size_t)c * 4, &pix, 4);
        }
        rowavg[r] = rn ? rs / (double)rn : NAN;
    }
    cairo_surface_mark_dirty(img);
    pm_cv_save(cr);
    cairo_translate(cr, mx, my);
    cairo_scale(cr, mw / iw, mh / ih);
    cairo_set_source_surface(cr, img, 0, 0);
    pm_cv_paint_image(cr); /* one cell, one colour: no smoothing */
    pm_cv_restore(cr);
    cairo_surface_destroy(img);
    return 1;
}

/* The title, with the nodes a row when rows are merged. */
static void hm_title(cairo_t *cr, const pm_heatmap *hm, const hm_geo *g)
{
    double X = g->X, Y = g->Y, W = g->W, fs = g->fs;
    int ih = g->ih;
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, fs * 1.05);
    if (hm->title) {
        char full[400], t[512];
        if ((size_t)ih < hm->nrows)
            snprintf(full, sizeof full, "%s, %.3g nodes a row", hm->title, (double)hm->nrows / ih);
        else
            snprintf(full, sizeof full, "%s", hm->title);
        plot_fit_text(cr, full, W - fs, t, sizeof t);
        plot_text_at(cr, X + W / 2, Y + fs * 0.5, 0.5, 0, t);
    }
    cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
}

/* Row labels: as many as fit without overlapping; with merged rows,
 * each group of similar nodes (its size) where it fits, and a white
 * line between groups. */
static void hm_row_labels(cairo_t *cr, const pm_heatmap *hm, const hm_geo *g)
{
    double fs = g->fs, px = g->px, lw = g->lw, mx = g->mx, my = g->my, mw = g->mw, mh = g->mh;
    int ih = g->ih;
    cairo_set_font_size(cr, fs * 0.7);
    double rowh = mh / (double)hm->nrows;
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    if ((size_t)ih < hm->nrows && hm->group) {
        double last_y = -INFINITY;
        for (size_t r0 = 0, r1; r0 < hm->nrows; r0 = r1) {
            for (r1 = r0 + 1; r1 < hm->nrows && hm->group[r1] == hm->group[r0]; r1++)
                ;
            double yc = my + (double)(r0 + r1) / 2 * rowh;
            if (yc - last_y >= fs * 0.85) {
                char t[64];
                snprintf(t, sizeof t, "%zu node%s", r1 - r0, r1 - r0 == 1 ? "" : "s");
                plot_text_at(cr, mx - fs * 0.3, yc, 1, 0.5, t);
                last_y = yc;
            }
            if (r0 > 0) {
                cairo_set_source_rgb(cr, 1, 1, 1);
                cairo_set_line_width(cr, pm_cv_hairline(cr, px));
                cairo_move_to(cr, mx, my + (double)r0 * rowh);
                cairo_line_to(cr, mx + mw, my + (double)r0 * rowh);
                pm_cv_stroke(cr);
                cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
            }
        }
    } else {
        size_t every = (size_t)ceil(fs * 0.85 / rowh);
        if (every < 1)
            every = 1;
        for (size_t r = 0; r < hm->nrows; r += every) {
            char t[256];
            plot_fit_text(cr, hm->rows[r], lw, t, sizeof t);
            plot_text_at(cr, mx - fs * 0.3, my + (r + 0.5) * rowh, 1, 0.5, t);
        }
    }
}

/* Node averages along the right edge, one bar per image row. */
static void hm_node_avgs(cairo_t *cr, const hm_geo *g)
{
    double fs = g->fs, px = g->px, mx = g->mx, my = g->my, mw = g->mw, mh = g->mh, side = g->side,
           lo = g->lo, hi = g->hi;
    int ih = g->ih;
    const double *rowavg = g->rowavg;
    double sx = mx + mw + fs * 0.4, sw = side - fs * 1.0;
    double ibh = mh / ih;
    for (int r = 0; r < ih; r++) {
        if (!isfinite(rowavg[r]))
            continue;
        double frac = (rowavg[r] - (lo < 0 ? lo : 0)) / (hi - (lo < 0 ? lo : 0));
        cairo_set_source_rgb(cr, 0.35, 0.35, 0.55);
        cairo_rectangle(cr, sx, my + r * ibh + ibh * 0.1, sw * (frac > 0 ? frac : 0),
                        ibh * 0.8 > px ? ibh * 0.8 : px);
        pm_cv_fill(cr);
    }
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_set_font_size(cr, fs * 0.7);
    plot_text_at(cr, sx + sw / 2, my - fs * 0.9, 0.5, 0, "node avg");
}

/* The time average along the bottom, its frame and its time ticks. */
static void hm_time_avg(cairo_t *cr, const pm_heatmap *hm, const hm_geo *g)
{
    double fs = g->fs, px = g->px, mx = g->mx, my = g->my, mw = g->mw, mh = g->mh, lo = g->lo,
           hi = g->hi;
    int iw = g->iw;
    const double *colavg = g->colavg;
    const size_t *colcnt = g->colcnt;
    double by = my + mh + fs * 0.4, bh = fs * 1.6;
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.55);
    cairo_set_line_width(cr, pm_cv_hairline(cr, px) * 1.5);
    int pen = 0;
    for (int c = 0; c < iw; c++) {
        if (!colcnt[c]) {
            pen = 0;
            continue;
        }
        double v = colavg[c] / (double)colcnt[c];
        double frac = (v - lo) / (hi - lo);
        double xx = mx + (c + 0.5) * mw / iw, yy = by + bh - frac * bh;
        if (pen)
            cairo_line_to(cr, xx, yy);
        else
            cairo_move_to(cr, xx, yy);
        pen = 1;
    }
    pm_cv_stroke(cr);
    cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
    cairo_set_line_width(cr, pm_cv_hairline(cr, px));
    cairo_rectangle(cr, mx, by, mw, bh);
    pm_cv_stroke(cr);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    plot_text_at(cr, mx - fs * 0.3, by + bh / 2, 1, 0.5, "time avg");
    /* Time ticks under the average strip. */
    double t0 = hm->t[0], t1 = hm->t[hm->ncols - 1];
    if (t1 <= t0)
        t1 = t0 + 1;
    double tstep = plot_time_step(t1 - t0, (int)(mw / (fs * 7)) > 2 ? (int)(mw / (fs * 7)) : 2);
    double origin = hm->time_axis == PM_AXIS_ELAPSED ? hm->t_origin : 0;
    double first = origin + ceil((t0 - origin) / tstep - 1e-9) * tstep;
    char lab[64];
    cairo_set_font_size(cr, fs * 0.8);
    for (int k = 0; k < 60; k++) {
        double tt = first + k * tstep;
        if (!(tt <= t1 + 1e-9))
            break;
        double xx = mx + (tt - t0) / (t1 - t0) * mw;
        plot_fmt_time(tt, tstep, t1 - t0, hm->time_axis, hm->t_origin, lab, sizeof lab);
        plot_text_at(cr, xx, by + bh + fs * 0.3, 0.5, 0, lab);
    }
    plot_text_at(cr, mx + mw / 2, by + bh + fs * 1.5, 0.5, 0,
                 hm->time_axis == PM_AXIS_ELAPSED ? "Elapsed time" : "Time (UTC)");
}

/* The colour bar with its range and unit. */
static void hm_colour_bar(cairo_t *cr, const pm_heatmap *hm, const hm_geo *g)
{
    char lab[64];
    double X = g->X, W = g->W, fs = g->fs, px = g->px, my = g->my, mh = g->mh, cbar = g->cbar,
           lo = g->lo, hi = g->hi;
    double cx = X + W - cbar + fs * 0.6, cw = fs * 0.9;
    for (int k = 0; k < 64; k++) {
        double rgb[3];
        cmap(k / 63.0, rgb);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_rectangle(cr, cx, my + mh - (k + 1) * mh / 64, cw, mh / 64 + px);
        pm_cv_fill(cr);
    }
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_set_font_size(cr, fs * 0.7);
    plot_fmt_num(hi, hi - lo, lab, sizeof lab);
    plot_text_at(cr, cx + cw / 2, my - fs * 0.9, 0.5, 0, lab);
    plot_fmt_num(lo, hi - lo, lab, sizeof lab);
    plot_text_at(cr, cx + cw / 2, my + mh + fs * 0.2, 0.5, 0, lab);
    if (hm->unit)
        plot_text_at(cr, cx + cw / 2, my + mh + fs * 1.1, 0.5, 0, hm->unit);
}

void pm_heatmap_draw(cairo_t *cr, double X, double Y, double W, double H, double fs,
                     const pm_heatmap *hm)
{
    pm_cv_save(cr);
    hm_geo g = {0};
    if (hm_layout(cr, X, Y, W, H, fs, hm, &g) && hm_cells(cr, hm, &g)) {
        hm_title(cr, hm, &g);
        hm_row_labels(cr, hm, &g);
        hm_node_avgs(cr, &g);
        hm_time_avg(cr, hm, &g);
        hm_colour_bar(cr, hm, &g);
    }
    free(g.rowavg);
    free(g.colavg);
    free(g.colcnt);
    pm_cv_restore(cr);
}
