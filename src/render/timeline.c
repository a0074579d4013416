/* The phase timeline (Gantt chart) with Cairo (pm_timeline_draw, see
 * plot.h): one row per node, a bar per phase coloured by its kind
 * (pm_plot_style), phases that overlap on a node in lanes of their own
 * within its row, a time axis and a legend of kinds.  Drawn into the
 * report's phases page (report_phases.c) and --plots'
 * phases_timeline.png (timeline_png.c).
 */
#include "perfmon/plot.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/canvas.h"
#include "plot_int.h"

/* Lanes: within each row, bars that overlap in time go to lanes of their
 * own, each bar to the first lane free at its start (bars in start order),
 * as the gnuplot phases.gp does; lane[i] is bar i's lane and nlanes[r]
 * row r's count (1 for a row without bars).  0, or -1 out of memory. */
typedef struct bar_key {
    size_t row, i;
    double t0;
} bar_key;

static int by_row_start(const void *x, const void *y)
{
    const bar_key *a = x, *b = y;
    if (a->row != b->row)
        return a->row < b->row ? -1 : 1;
    if (a->t0 != b->t0)
        return a->t0 < b->t0 ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static int assign_lanes(const pm_timeline *tl, size_t *lane, size_t *nlanes)
{
    for (size_t r = 0; r < tl->nrows; r++)
        nlanes[r] = 1;
    size_t n = tl->nbars;
    bar_key *order = malloc((n ? n : 1) * sizeof *order);
    double *end = malloc((n ? n : 1) * sizeof *end); /* each lane's last end */
    if (!order || !end) {
        free(order);
        free(end);
        return -1;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        lane[i] = 0;
        const pm_timeline_bar *b = &tl->bars[i];
        if (b->row < tl->nrows && isfinite(b->t0) && isfinite(b->t1))
            order[m++] = (bar_key){b->row, i, b->t0};
    }
    qsort(order, m, sizeof *order, by_row_start);
    size_t used = 0, row = SIZE_MAX;
    for (size_t k = 0; k < m; k++) {
        const pm_timeline_bar *b = &tl->bars[order[k].i];
        if (b->row != row) {
            row = b->row;
            used = 0;
        }
        size_t l = 0;
        while (l < used && end[l] > b->t0)
            l++;
        if (l == used)
            used++;
        end[l] = fmax(b->t1, b->t0);
        lane[order[k].i] = l;
        if (used > nlanes[row])
            nlanes[row] = used;
    }
    free(order);
    free(end);
    return 0;
}

/* Where the timeline's parts go, from pm_timeline_draw's frame. */
typedef struct tl_geo {
    double X, Y, W, H, fs;
    double px;       /* a device pixel, in user units */
    double cw, lw;   /* a legend column's width, the row labels' */
    double fx0, fy0; /* the bars' frame: its corner and size */
    double fw, fh;
    double t0, t1; /* the time span drawn */
    double rowh;
    size_t cols; /* legend columns */
} tl_geo;

/* The background, the legend's columns, the row labels' width and the
 * frame (*g); 0 when the frame is too small or there is no row. */
static int tl_layout(cairo_t *cr, double X, double Y, double W, double H, double fs,
                     const pm_timeline *tl, tl_geo *g)
{
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_rectangle(cr, X, Y, W, H);
    pm_cv_fill(cr);
    double ux = 1, uy = 0;
    cairo_user_to_device_distance(cr, &ux, &uy);
    double px = ux > 0 ? 1.0 / ux : 1.0;
    cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    /* Legend layout: kinds in columns under the chart. */
    cairo_set_font_size(cr, fs * 0.85);
    double maxw = 0;
    for (size_t k = 0; k < tl->nkinds; k++)
        maxw = fmax(maxw, plot_text_width(cr, tl->kinds[k]));
    double cw = fmin(maxw + fs * 2.6, W);
    size_t cols = (size_t)(W / cw);
    if (cols < 1)
        cols = 1;
    size_t lrows = tl->nkinds ? (tl->nkinds + cols - 1) / cols : 0;
    /* Row labels. */
    cairo_set_font_size(cr, fs * 0.75);
    double lw = 0;
    for (size_t r = 0; r < tl->nrows; r++)
        lw = fmax(lw, plot_text_width(cr, tl->rows[r]));
    lw = fmin(lw + fs * 0.6, W * 0.25);
    double fx0 = X + lw, fw = W - lw - fs * 0.8;
    double fy0 = Y + fs * 2.2, fh = H - (fy0 - Y) - fs * 2.8 - (double)lrows * fs * 1.3;
    if (fw < 10 || fh < 10 || tl->nrows == 0)
        return 0;
    double t0 = tl->t0, t1 = tl->t1 > tl->t0 ? tl->t1 : tl->t0 + 1;
    *g = (tl_geo){.X = X,
                  .Y = Y,
                  .W = W,
                  .H = H,
                  .fs = fs,
                  .px = px,
                  .cw = cw,
                  .lw = lw,
                  .fx0 = fx0,
                  .fy0 = fy0,
                  .fw = fw,
                  .fh = fh,
                  .t0 = t0,
                  .t1 = t1,
                  .rowh = fh / (double)tl->nrows,
                  .cols = cols};
    return 1;
}

/* The title, then the rows' shading and labels (as many as fit). */
static void tl_rows(cairo_t *cr, const pm_timeline *tl, const tl_geo *g)
{
    double X = g->X, Y = g->Y, W = g->W, fs = g->fs, lw = g->lw, fx0 = g->fx0, fy0 = g->fy0,
           fw = g->fw, rowh = g->rowh;
    /* Title. */
    cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, fs * 1.05);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    if (tl->title)
        plot_text_at(cr, X + W / 2, Y + fs * 0.4, 0.5, 0, tl->title);
    cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    /* Alternate row shading and labels (as many as fit). */
    size_t every = (size_t)ceil(fs * 0.85 / rowh);
    if (every < 1)
        every = 1;
    cairo_set_font_size(cr, fs * 0.75);
    for (size_t r = 0; r < tl->nrows; r++) {
        if (r % 2) {
            cairo_set_source_rgb(cr, 0.965, 0.965, 0.965);
            cairo_rectangle(cr, fx0, fy0 + (double)r * rowh, fw, rowh);
            pm_cv_fill(cr);
        }
        if (r % every == 0) {
            char t[256];
            plot_fit_text(cr, tl->rows[r], lw - fs * 0.4, t, sizeof t);
            cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
            plot_text_at(cr, fx0 - fs * 0.3, fy0 + ((double)r + 0.5) * rowh, 1, 0.5, t);
        }
    }
}

/* The time grid, its ticks and the axis label. */
static void tl_time_grid(cairo_t *cr, const pm_timeline *tl, const tl_geo *g)
{
    double X = g->X, W = g->W, fs = g->fs, px = g->px, fx0 = g->fx0, fy0 = g->fy0, fw = g->fw,
           fh = g->fh, t0 = g->t0, t1 = g->t1;
    /* Time grid and ticks. */
    double span = t1 - t0;
    int target = (int)(fw / (fs * 7));
    double tstep = plot_time_step(span, target < 2 ? 2 : target);
    double origin = tl->time_axis == PM_AXIS_ELAPSED ? tl->t_origin : 0;
    double first = origin + ceil((t0 - origin) / tstep - 1e-9) * tstep;
    char lab[64];
    cairo_set_line_width(cr, pm_cv_hairline(cr, px));
    cairo_set_font_size(cr, fs * 0.8);
    for (int k = 0; k < 60; k++) {
        double tt = first + k * tstep;
        if (!(tt <= t1 + 1e-9))
            break;
        double xx = fx0 + (tt - t0) / span * fw;
        cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
        cairo_move_to(cr, xx, fy0);
        cairo_line_to(cr, xx, fy0 + fh);
        pm_cv_stroke(cr);
        plot_fmt_time(tt, tstep, span, tl->time_axis, tl->t_origin, lab, sizeof lab);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        /* A label at either end stays inside the drawing, not cut by it. */
        double half = plot_text_width(cr, lab) / 2, lx = xx;
        if (lx + half > X + W)
            lx = X + W - half;
        if (lx - half < X)
            lx = X + half;
        plot_text_at(cr, lx, fy0 + fh + fs * 0.3, 0.5, 0, lab);
    }
    plot_text_at(cr, fx0 + fw / 2, fy0 + fh + fs * 1.4, 0.5, 0,
                 tl->time_axis == PM_AXIS_ELAPSED ? "Elapsed time" : "Time (UTC)");
}

/* The bars, each at least one device pixel wide (so a short phase is
 * seen), in its row's lane. */
static void tl_bars(cairo_t *cr, const pm_timeline *tl, const tl_geo *g)
{
    double px = g->px, fx0 = g->fx0, fy0 = g->fy0, fw = g->fw, t0 = g->t0, t1 = g->t1,
           rowh = g->rowh;
    double span = t1 - t0;
    double pad = rowh > 4 * px ? rowh * 0.15 : 0;
    size_t *lane = malloc((tl->nbars ? tl->nbars : 1) * sizeof *lane);
    size_t *nlanes = malloc(tl->nrows * sizeof *nlanes);
    int lanes_ok = lane && nlanes && assign_lanes(tl, lane, nlanes) == 0;
    for (size_t i = 0; i < tl->nbars; i++) {
        const pm_timeline_bar *b = &tl->bars[i];
        if (b->row >= tl->nrows || !isfinite(b->t0) || !isfinite(b->t1))
            continue;
        double a = fx0 + (b->t0 - t0) / span * fw, e = fx0 + (b->t1 - t0) / span * fw;
        if (e - a < px)
            e = a + px;
        double rgb[3];
        int d;
        pm_plot_style(b->kind + 1, rgb, &d); /* as the phase bands */
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        /* The row's inner height split among its lanes (a thin gap between). */
        double nl = lanes_ok ? (double)nlanes[b->row] : 1, l = lanes_ok ? (double)lane[i] : 0;
        double inner = rowh - 2 * pad, lh = inner / nl;
        double gap = nl > 1 && lh > 3 * px ? px : 0;
        cairo_rectangle(cr, a, fy0 + (double)b->row * rowh + pad + l * lh, e - a, lh - gap);
        pm_cv_fill(cr);
    }
    free(lane);
    free(nlanes);
}

/* Event marks over the bars: a tick across the row and a triangle
 * above it, so that one among many phases is found. */
static void tl_marks(cairo_t *cr, const pm_timeline *tl, const tl_geo *g)
{
    double fs = g->fs, px = g->px, fx0 = g->fx0, fy0 = g->fy0, fw = g->fw, t0 = g->t0,
           rowh = g->rowh;
    double span = g->t1 - t0;
    static const double MARK_RGB[3][3] = {{0.45, 0.45, 0.45}, {0.93, 0.55, 0.0}, {0.85, 0.1, 0.1}};
    for (int sev = 0; sev < 3; sev++) /* the critical ones last, on top */
        for (size_t i = 0; i < tl->nmarks; i++) {
            const pm_timeline_mark *m = &tl->marks[i];
            if (m->severity != sev || m->row >= tl->nrows || !isfinite(m->t))
                continue;
            double xx = fx0 + (m->t - t0) / span * fw, yt = fy0 + (double)m->row * rowh;
            double tri = fmin(rowh * 0.45, fs * 0.6);
            cairo_set_source_rgb(cr, MARK_RGB[sev][0], MARK_RGB[sev][1], MARK_RGB[sev][2]);
            cairo_set_line_width(cr, fmax(px, 0.8));
            cairo_move_to(cr, xx, yt);
            cairo_line_to(cr, xx, yt + rowh);
            pm_cv_stroke(cr);
            cairo_move_to(cr, xx - tri / 2, yt);
            cairo_line_to(cr, xx + tri / 2, yt);
            cairo_line_to(cr, xx, yt + tri);
            cairo_close_path(cr);
            pm_cv_fill(cr);
        }
}

/* The legend: the kinds in columns under the chart. */
static void tl_legend(cairo_t *cr, const pm_timeline *tl, const tl_geo *g)
{
    double X = g->X, fs = g->fs, cw = g->cw, lw = g->lw, fy0 = g->fy0, fh = g->fh;
    size_t cols = g->cols;
    double ly = fy0 + fh + fs * 2.8;
    cairo_set_font_size(cr, fs * 0.85);
    for (size_t k = 0; k < tl->nkinds; k++) {
        double lx = X + lw + (double)(k % cols) * cw, yy = ly + (double)(k / cols) * fs * 1.3;
        double rgb[3];
        int d;
        pm_plot_style(k + 1, rgb, &d);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_rectangle(cr, lx, yy, fs * 1.6, fs * 0.8);
        pm_cv_fill(cr);
        char t[256];
        plot_fit_text(cr, tl->kinds[k], cw - fs * 2.4, t, sizeof t);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        plot_text_at(cr, lx + fs * 2.0, yy + fs * 0.4, 0, 0.5, t);
    }
}

void pm_timeline_draw(cairo_t *cr, double X, double Y, double W, double H, double fs,
                      const pm_timeline *tl)
{
    pm_cv_save(cr);
    tl_geo g;
    if (!tl_layout(cr, X, Y, W, H, fs, tl, &g)) {
        pm_cv_restore(cr);
        return;
    }
    tl_rows(cr, tl, &g);
    tl_time_grid(cr, tl, &g);
    pm_cv_save(cr);
    cairo_rectangle(cr, g.fx0, g.fy0, g.fw, g.fh);
    pm_cv_clip(cr);
    tl_bars(cr, tl, &g);
    tl_marks(cr, tl, &g);
    pm_cv_restore(cr);
    cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
    cairo_rectangle(cr, g.fx0, g.fy0, g.fw, g.fh);
    pm_cv_stroke(cr);
    tl_legend(cr, tl, &g);
    pm_cv_restore(cr);
}
