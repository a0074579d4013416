/* The time-series chart with Cairo (pm_plot_draw, see plot.h).
 *
 * A chart is drawn in steps, in this order: chart_frame (background,
 * legend rows, the frame left for data), chart_ranges (time and value
 * ranges, the y axis), chart_title, chart_axes (grid, ticks, axis
 * labels), chart_data (spans, band, series and marks, clipped to the
 * frame), chart_nodes (the nodes-reporting line, when some are missing),
 * chart_border and chart_legend.  Each series is decimated to
 * first/min/max/last per pixel column (draw_decimated), so the cost
 * follows the pixels and every extreme stays visible.
 */
#include "perfmon/plot.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/canvas.h"
#include "plot_int.h"

typedef struct frame {
    double x, y, w, h;     /* plot area */
    double t0, t1, y0, y1; /* data ranges */
    int logy;
    double floor_h; /* log axis: the strip for zeros */
} frame;

static double fx(const frame *f, double t)
{
    return f->x + (t - f->t0) / (f->t1 - f->t0) * f->w;
}

/* On a log axis the decades fill the frame above a strip of floor_h
 * points at its bottom, where zeros (and negatives) are drawn, labelled
 * "0": an idle level stays visible, and a burst out of it is a line, not
 * an isolated point. */
static double fy(const frame *f, double v)
{
    if (f->logy) {
        if (isnan(v))
            return NAN;
        double h = f->h - f->floor_h;
        if (!(v > 0))
            return f->y + f->h - 0.2 * f->floor_h;
        return f->y + h - (log10(v) - f->y0) / (f->y1 - f->y0) * h;
    }
    return f->y + f->h - (v - f->y0) / (f->y1 - f->y0) * f->h;
}

static void time_range(const double *t, size_t n, double *lo, double *hi)
{
    if (n == 0)
        return;
    if (t[0] < *lo)
        *lo = t[0];
    if (t[n - 1] > *hi)
        *hi = t[n - 1];
}

static void set_dash(cairo_t *cr, int dash, double lw)
{
    static const double dashed[] = {6, 3}, dotted[] = {1.5, 2.5};
    if (dash == 1) {
        double d[2] = {dashed[0] * lw, dashed[1] * lw};
        cairo_set_dash(cr, d, 2, 0);
    } else if (dash == 2) {
        double d[2] = {dotted[0] * lw, dotted[1] * lw};
        cairo_set_dash(cr, d, 2, 0);
    } else {
        cairo_set_dash(cr, NULL, 0, 0);
    }
}

/* Draw one series reduced to first/min/max/last per pixel column (so
 * every extreme is drawn, a one-sample burst included), with gaps at NaN
 * and at holes longer than ten average intervals.  step: PM_STEP_BEFORE
 * draws each value over the interval before its sample (a rate measured
 * from the previous sample to this one), PM_STEP_AFTER until the next
 * sample (a held gauge); each becomes two points, the corner first. */
static void draw_decimated(cairo_t *cr, const frame *f, const double *t, const double *v, size_t n,
                           double px, int step)
{
    if (n == 0)
        return;
    double avg_dt = n > 1 ? (t[n - 1] - t[0]) / (double)(n - 1) : 0;
    double gap = avg_dt > 0 ? 10 * avg_dt : INFINITY;
    long cur = LONG_MIN;
    double first = 0, last = 0, mn = 0, mx = 0;
    size_t imn = 0, imx = 0;
    int have = 0, pen_down = 0;
    double prev_t = NAN;
    for (size_t j = 0; j <= 2 * n; j++) {
        size_t i = j / 2;
        double ti = 0, vi = NAN;
        if (j < 2 * n && j % 2 == 0) {
            /* the corner of a step, where there is a previous sample */
            if (step == PM_STEP_NONE || i == 0 || isnan(v[i]) || isnan(v[i - 1]) ||
                t[i] - t[i - 1] > gap)
                continue;
            ti = step == PM_STEP_BEFORE ? t[i - 1] : t[i];
            vi = step == PM_STEP_BEFORE ? v[i] : v[i - 1];
        } else if (j < 2 * n) {
            ti = t[i];
            vi = v[i];
        }
        int brk = 0;
        long col = 0;
        double y = NAN;
        if (j < 2 * n) {
            y = fy(f, vi);
            brk = !isfinite(y) || (isfinite(prev_t) && ti - prev_t > gap);
            col = (long)floor((fx(f, ti) - f->x) / px);
        }
        if (have && (j == 2 * n || brk || col != cur)) {
            double x = f->x + ((double)cur + 0.5) * px;
            double a = imn < imx ? mn : mx, b = imn < imx ? mx : mn;
            /* Each point once: a column of one sample is one point (two
             * where the line starts, a dot under round caps), so the path
             * is at most 4 points a column and often 1. */
            double pts[4] = {first, a, b, last}, prev = NAN;
            int fresh = !pen_down, drawn = 0;
            for (int k = 0; k < 4; k++) {
                if (pts[k] == prev && !(k == 3 && fresh && drawn == 1))
                    continue;
                drawn++;
                if (pen_down)
                    cairo_line_to(cr, x, pts[k]);
                else
                    cairo_move_to(cr, x, pts[k]);
                pen_down = 1;
                prev = pts[k];
            }
            have = 0;
        }
        if (j == 2 * n)
            break;
        if (brk)
            pen_down = 0;
        if (!isfinite(y)) {
            prev_t = NAN;
            continue;
        }
        prev_t = ti;
        if (!have) {
            cur = col;
            first = last = mn = mx = y;
            imn = imx = j;
            have = 1;
        } else {
            last = y;
            /* device y grows downwards: "min" is the smallest pixel y */
            if (y < mn) {
                mn = y;
                imn = j;
            }
            if (y > mx) {
                mx = y;
                imx = j;
            }
        }
    }
}

/* Band: fill between lo and hi (decimated to pixel columns by taking the
 * extreme of each column). */
static void draw_band(cairo_t *cr, const frame *f, const pm_plot_band *b, double px,
                      const double rgb[3])
{
    size_t ncol = (size_t)(f->w / px) + 2;
    if (b->n <= ncol) {
        /* Fewer points than pixel columns: the band's outline through the
         * points themselves, one polygon per run without a gap. */
        size_t i = 0;
        while (i < b->n) {
            while (i < b->n && !(isfinite(fy(f, b->lo[i])) && isfinite(fy(f, b->hi[i]))))
                i++;
            size_t s = i;
            while (i < b->n && isfinite(fy(f, b->lo[i])) && isfinite(fy(f, b->hi[i])))
                i++;
            if (i == s)
                continue;
            double half = i - s == 1 ? px : 0; /* a lone point: one pixel wide */
            cairo_move_to(cr, fx(f, b->t[s]) - half, fy(f, b->hi[s]));
            for (size_t k = s; k < i; k++)
                cairo_line_to(cr, fx(f, b->t[k]) + (k == i - 1 ? half : 0), fy(f, b->hi[k]));
            for (size_t k = i; k-- > s;)
                cairo_line_to(cr, fx(f, b->t[k]) + (k == i - 1 ? half : 0), fy(f, b->lo[k]));
            cairo_line_to(cr, fx(f, b->t[s]) - half, fy(f, b->lo[s]));
            cairo_close_path(cr);
        }
        cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], 0.22);
        pm_cv_fill(cr);
        return;
    }
    double *top = malloc(ncol * sizeof *top), *bot = malloc(ncol * sizeof *bot);
    if (!top || !bot) {
        free(top);
        free(bot);
        return;
    }
    for (size_t c = 0; c < ncol; c++) {
        top[c] = INFINITY;
        bot[c] = -INFINITY;
    }
    for (size_t i = 0; i < b->n; i++) {
        double yl = fy(f, b->lo[i]), yh = fy(f, b->hi[i]);
        if (!isfinite(yl) || !isfinite(yh))
            continue;
        long c = (long)floor((fx(f, b->t[i]) - f->x) / px);
        if (c < 0 || (size_t)c >= ncol)
            continue;
        if (yh < top[c])
            top[c] = yh;
        if (yl > bot[c])
            bot[c] = yl;
    }
    /* Fill contiguous runs of columns. */
    size_t c = 0;
    while (c < ncol) {
        while (c < ncol && !isfinite(top[c]))
            c++;
        size_t s = c;
        while (c < ncol && isfinite(top[c]))
            c++;
        if (c == s)
            continue;
        cairo_move_to(cr, f->x + ((double)s + 0.5) * px, top[s]);
        for (size_t k = s + 1; k < c; k++)
            cairo_line_to(cr, f->x + ((double)k + 0.5) * px, top[k]);
        for (size_t k = c; k-- > s;)
            cairo_line_to(cr, f->x + ((double)k + 0.5) * px, bot[k]);
        cairo_close_path(cr);
    }
    cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], 0.22);
    pm_cv_fill(cr);
    free(top);
    free(bot);
}

static void legend_layout(cairo_t *cr, const pm_plot *p, double w, double fs, int *cols, int *rows,
                          double *colw)
{
    double maxw = 0;
    size_t n = p->nseries + (p->band ? 1 : 0);
    for (size_t i = 0; i < p->nseries; i++) {
        double tw = plot_text_width(cr, p->series[i].label ? p->series[i].label : "");
        if (tw > maxw)
            maxw = tw;
    }
    if (p->band && p->band->label) {
        double tw = plot_text_width(cr, p->band->label);
        if (tw > maxw)
            maxw = tw;
    }
    double cw = maxw + fs * 3.2;
    if (cw > w)
        cw = w;
    int c = (int)(w / cw);
    if (c < 1)
        c = 1;
    if ((size_t)c > n)
        c = (int)n;
    *cols = c;
    *rows = n ? (int)((n + (size_t)c - 1) / (size_t)c) : 0;
    *colw = c ? w / c : w;
}

/* What the steps of pm_plot_draw share: the frame, the scale and what
 * was decided about the legend, the node count and the ranges. */
typedef struct chart_geom {
    frame f;
    double px;          /* user units per device pixel, for decimation */
    double ystep;       /* linear y axis: the tick step */
    int empty, no_time; /* no value / no time to draw */
    int show_nodes;     /* the nodes-reporting line and scale */
    size_t nleg;        /* legend entries (0: none) */
    int lcols, lrows;
    double lcolw;
} chart_geom;

/* Step 1: the white background, the pixel size, the legend's rows and the
 * frame left for the data.  0 when the frame is too small to draw in. */
static int chart_frame(cairo_t *cr, double X, double Y, double W, double H, double fs,
                       const pm_plot *p, chart_geom *g)
{
    cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, fs);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_rectangle(cr, X, Y, W, H);
    pm_cv_fill(cr);

    /* Device pixels per user unit, for decimation. */
    double ux = 1, uy = 0;
    cairo_user_to_device_distance(cr, &ux, &uy);
    g->px = ux > 0 ? 1.0 / ux : 1.0;

    g->lcols = 0;
    g->lrows = 0;
    g->lcolw = 0;
    g->nleg = p->legend ? p->nseries + (p->band ? 1 : 0) : 0;
    if (g->nleg)
        legend_layout(cr, p, W - fs * 6, fs * 0.9, &g->lcols, &g->lrows, &g->lcolw);
    g->show_nodes = 0;
    if (p->nodes_len && p->nodes_total > 0)
        for (size_t i = 0; i < p->nodes_len; i++)
            if (p->nodes_n[i] < p->nodes_total)
                g->show_nodes = 1;

    frame *f = &g->f;
    f->x = X + fs * 5.6;
    f->y = Y + fs * 2.6;
    f->w = W - (f->x - X) - fs * (g->show_nodes ? 3.2 : 1.2);
    f->h = H - (f->y - Y) - fs * 3.4 - (g->lrows ? g->lrows * fs * 1.35 + fs * 0.4 : 0);
    f->logy = p->logy;
    f->floor_h = fmax(0.06 * f->h, fs * 1.1);
    return !(f->w < 10 || f->h < 10);
}

/* Step 2: the time and value ranges, and the y axis (decades, or a nice
 * step from zero with a margin where data touches an end). */
static void chart_ranges(const pm_plot *p, chart_geom *g)
{
    frame *f = &g->f;
    /* Data ranges.  A log axis with no positive value (idle traffic: all
     * zeros) falls back to a linear one, so the zeros are seen as data. */
    double t0 = INFINITY, t1 = -INFINITY, lo = INFINITY, hi = -INFINITY;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < p->nseries; i++) {
            time_range(p->series[i].t, p->series[i].n, &t0, &t1);
            plot_range_of(p->series[i].v, p->series[i].n, f->logy, &lo, &hi);
        }
        if (p->band) {
            time_range(p->band->t, p->band->n, &t0, &t1);
            plot_range_of(p->band->lo, p->band->n, f->logy, &lo, &hi);
            plot_range_of(p->band->hi, p->band->n, f->logy, &lo, &hi);
        }
        /* A log axis where the values above zero span two decades; else
         * (all zeros, or a narrow range) the linear axis reads better. */
        if (!f->logy || (hi >= lo && hi >= PM_LOG_MIN_SPAN * lo))
            break;
        f->logy = 0;
        lo = INFINITY;
        hi = -INFINITY;
    }
    int empty = !(hi >= lo), no_time = !(t1 >= t0);
    if (no_time) {
        empty = 1;
        t0 = 0;
        t1 = 1;
    }
    if (empty) {
        lo = f->logy ? 1 : 0;
        hi = f->logy ? 10 : 1;
    }
    if (t1 <= t0)
        t1 = t0 + 1;
    f->t0 = t0;
    f->t1 = t1;
    if (f->logy) {
        f->y0 = floor(log10(lo));
        f->y1 = ceil(log10(hi));
        if (f->y1 <= f->y0)
            f->y1 = f->y0 + 1;
        if (f->y1 - f->y0 > 40) /* at most 40 decades: the rest is noise */
            f->y0 = f->y1 - 40;
        g->ystep = 1;
    } else {
        double data_lo = lo;
        if (lo >= 0 && !empty)
            lo = 0; /* rates and levels read against zero */
        if (hi <= lo)
            hi = lo + (lo == 0 ? 1 : fabs(lo) * 0.1);
        g->ystep = plot_nice_step(hi - lo, 5);
        f->y0 = floor(lo / g->ystep) * g->ystep;
        f->y1 = ceil(hi / g->ystep) * g->ystep;
        /* A line on the frame would be hidden by it (CPU at exactly 100 %,
         * idle traffic at 0): data that touches an end gets a margin of 3 %
         * of the range there; ticks stay on the nice values. */
        double r = f->y1 - f->y0;
        if (!empty && hi >= f->y1 - 0.005 * r)
            f->y1 += 0.03 * r;
        if (!empty && data_lo <= f->y0 + 0.005 * r)
            f->y0 -= 0.03 * r;
    }
    g->empty = empty;
    g->no_time = no_time;
}

/* Step 3: the title, bold, shrunk to fit the width; the font is left at
 * the tick labels' size. */
static void chart_title(cairo_t *cr, double X, double Y, double W, double fs, const pm_plot *p)
{
    /* Title. */
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    double tfs = fs * 1.05;
    cairo_set_font_size(cr, tfs);
    if (p->title) {
        while (plot_text_width(cr, p->title) > W - fs && tfs > fs * 0.7) {
            tfs *= 0.95;
            cairo_set_font_size(cr, tfs);
        }
        char t[512];
        plot_fit_text(cr, p->title, W - fs, t, sizeof t);
        plot_text_at(cr, X + W / 2, Y + fs * 0.5, 0.5, 0, t);
    }
    cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, fs * 0.85);
}

/* Step 4: grid lines with the y tick labels, the time ticks, and the
 * axis labels. */
static void chart_axes(cairo_t *cr, double X, double fs, const pm_plot *p, const chart_geom *g)
{
    const frame *f = &g->f;
    /* Grid and y ticks. */
    cairo_set_line_width(cr, pm_cv_hairline(cr, g->px));
    char lab[64];
    if (f->logy) {
        int ndec = (int)(f->y1 - f->y0);
        /* Decades; with few of them also 2x and 5x, so the axis reads. */
        static const double mult[3] = {1, 2, 5};
        int nm = ndec <= 2 ? 3 : 1;
        for (int k = 0; k <= ndec; k++) {
            for (int j = 0; j < nm; j++) {
                double e = f->y0 + k, v = mult[j] * pow(10, e);
                if (log10(v) > f->y1 + 1e-9)
                    break;
                double yy = fy(f, v);
                cairo_set_source_rgb(cr, j ? 0.92 : 0.85, j ? 0.92 : 0.85, j ? 0.92 : 0.85);
                cairo_move_to(cr, f->x, yy);
                cairo_line_to(cr, f->x + f->w, yy);
                pm_cv_stroke(cr);
                plot_fmt_num(v, v, lab, sizeof lab);
                cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
                plot_text_at(cr, f->x - fs * 0.4, yy, 1, 0.5, lab);
            }
        }
        /* the floor strip, where zeros are drawn */
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        plot_text_at(cr, f->x - fs * 0.4, fy(f, 0), 1, 0.5, "0");
    } else {
        double first = ceil(f->y0 / g->ystep - 1e-9) * g->ystep;
        for (int k = 0; k < 50; k++) {
            double v = first + k * g->ystep;
            if (v > f->y1 + 1e-9 * g->ystep)
                break;
            if (fabs(v) < 1e-9 * g->ystep)
                v = 0; /* no "-0" label */
            double yy = fy(f, v);
            cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
            cairo_move_to(cr, f->x, yy);
            cairo_line_to(cr, f->x + f->w, yy);
            pm_cv_stroke(cr);
            plot_fmt_num(v, g->ystep, lab, sizeof lab);
            cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
            plot_text_at(cr, f->x - fs * 0.4, yy, 1, 0.5, lab);
        }
    }
    /* Time ticks. */
    double span = f->t1 - f->t0;
    int target = (int)(f->w / (fs * 7));
    if (target < 2)
        target = 2;
    double tstep = plot_time_step(span, target);
    double origin = p->time_axis == PM_AXIS_ELAPSED ? p->t_origin : 0;
    double first = origin + ceil((f->t0 - origin) / tstep - 1e-9) * tstep;
    for (int k = 0; k < 60 && !g->no_time; k++) {
        double tt = first + k * tstep;
        if (!(tt <= f->t1 + 1e-9))
            break;
        double xx = fx(f, tt);
        cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
        cairo_move_to(cr, xx, f->y);
        cairo_line_to(cr, xx, f->y + f->h);
        pm_cv_stroke(cr);
        plot_fmt_time(tt, tstep, span, p->time_axis, p->t_origin, lab, sizeof lab);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        plot_text_at(cr, xx, f->y + f->h + fs * 0.35, 0.5, 0, lab);
    }
    /* Axis labels. */
    cairo_set_font_size(cr, fs * 0.9);
    plot_text_at(cr, f->x + f->w / 2, f->y + f->h + fs * 1.65, 0.5, 0,
                 p->time_axis == PM_AXIS_ELAPSED ? "Elapsed time (h:mm:ss)" : "Time (UTC)");
    if (p->ylabel) {
        pm_cv_save(cr);
        cairo_translate(cr, X + fs * 0.35, f->y + f->h / 2);
        cairo_rotate(cr, -M_PI / 2);
        char yl[256];
        plot_fit_text(cr, p->ylabel, f->h, yl, sizeof yl);
        plot_text_at(cr, 0, 0, 0.5, 0, yl);
        pm_cv_restore(cr);
    }
}

/* Step 5: inside the frame (clipped): phase and repair spans, phase
 * names, the band with its median, the series (and their points), the
 * marked extremes. */
static void chart_data(cairo_t *cr, double fs, const pm_plot *p, const chart_geom *g)
{
    const frame *f = &g->f;
    pm_cv_save(cr);
    cairo_rectangle(cr, f->x, f->y, f->w, f->h);
    pm_cv_clip(cr);
    /* Spans: phases tinted, repaired data hatched. */
    for (size_t i = 0; i < p->nspans; i++) {
        const pm_plot_span *s = &p->spans[i];
        double a = fx(f, s->t0), b = fx(f, s->t1);
        if (b - a < g->px)
            b = a + g->px;
        if (s->kind == 1) {
            /* A phase: a lane of its own at the top of the frame (one per
             * kind, so overlapping phases stay apart) and a faint tint. */
            double rgb[3];
            int d;
            pm_plot_style((size_t)s->color, rgb, &d);
            double lh = fs * 0.55, ly = f->y + (double)((s->color > 0 ? s->color - 1 : 0) % 8) * lh;
            cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], 0.05);
            cairo_rectangle(cr, a, f->y, b - a, f->h);
            pm_cv_fill(cr);
            cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], 0.75);
            cairo_rectangle(cr, a, ly, b - a, lh * 0.85);
            pm_cv_fill(cr);
        } else {
            cairo_set_source_rgba(cr, 0.55, 0.55, 0.55, 0.25);
            cairo_rectangle(cr, a, f->y, b - a, f->h);
            pm_cv_fill(cr);
        }
    }
    /* Phase names, right of their lane's first band, over the bands. */
    for (size_t i = 0; i < p->nspans; i++) {
        const pm_plot_span *s = &p->spans[i];
        if (s->kind != 1 || !s->label)
            continue;
        double lh = fs * 0.55, ly = f->y + (double)((s->color > 0 ? s->color - 1 : 0) % 8) * lh;
        cairo_set_font_size(cr, fs * 0.6);
        double x = fmax(fx(f, s->t0), f->x) + fs * 0.2, tw = plot_text_width(cr, s->label);
        cairo_set_source_rgba(cr, 1, 1, 1, 0.8);
        cairo_rectangle(cr, x - fs * 0.1, ly, tw + fs * 0.2, lh * 0.85);
        pm_cv_fill(cr);
        cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
        plot_text_at(cr, x, ly + lh * 0.42, 0, 0.5, s->label);
    }
    double rgb[3];
    int dash;
    double lw = fs * 0.09;
    if (p->band) {
        pm_plot_style(0, rgb, &dash);
        draw_band(cr, f, p->band, g->px, rgb);
        if (p->band->p5 && p->band->p95) {
            /* The inner 90 % of the nodes, over the min-max band: darker. */
            pm_plot_band in = *p->band;
            in.lo = p->band->p5;
            in.hi = p->band->p95;
            draw_band(cr, f, &in, g->px, rgb);
        }
        if (p->band->mid) {
            cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
            cairo_set_line_width(cr, lw * 1.2);
            set_dash(cr, 0, lw);
            draw_decimated(cr, f, p->band->t, p->band->mid, p->band->n, g->px, p->step);
            pm_cv_stroke(cr);
        }
    }
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    /* Round caps: a lone sample between gaps is a dot, not nothing. */
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    for (size_t i = 0; i < p->nseries; i++) {
        pm_plot_style(i + (p->band ? 1 : 0), rgb, &dash);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_set_line_width(cr, lw);
        set_dash(cr, dash, lw);
        draw_decimated(cr, f, p->series[i].t, p->series[i].v, p->series[i].n, g->px, p->step);
        pm_cv_stroke(cr);
        for (size_t k = 0; p->points && k < p->series[i].n; k++) {
            double xx = fx(f, p->series[i].t[k]), yy = fy(f, p->series[i].v[k]);
            if (isfinite(xx) && isfinite(yy)) {
                cairo_new_sub_path(cr);
                cairo_arc(cr, xx, yy, lw * 2.2, 0, 2 * M_PI);
            }
        }
        pm_cv_fill(cr);
    }
    set_dash(cr, 0, lw);
    cairo_set_source_rgb(cr, 0.85, 0.1, 0.1);
    cairo_set_line_width(cr, lw * 1.5);
    for (size_t k = 0; k < p->nmarks; k++) {
        double xx = fx(f, p->mark_t[k]), yy = fy(f, p->mark_v[k]);
        if (isfinite(xx) && isfinite(yy)) {
            cairo_new_sub_path(cr);
            cairo_arc(cr, xx, yy, fs * 0.5, 0, 2 * M_PI);
        }
    }
    pm_cv_stroke(cr);
    pm_cv_restore(cr);
}

/* Step 6: how many nodes contributed, as a step line on a right-hand
 * scale (only where some point has fewer than all). */
static void chart_nodes(cairo_t *cr, double fs, const pm_plot *p, const chart_geom *g)
{
    const frame *f = &g->f;
    double lw = fs * 0.09;
    char lab[64];
    /* Contributing nodes on a right-hand scale, where below the total. */
    {
        pm_cv_save(cr);
        cairo_rectangle(cr, f->x, f->y, f->w, f->h);
        pm_cv_clip(cr);
        cairo_set_source_rgba(cr, 0.75, 0.1, 0.1, 0.8);
        cairo_set_line_width(cr, lw * 0.8);
        double d[2] = {lw * 2, lw * 2};
        cairo_set_dash(cr, d, 2, 0);
        /* A step line: the count holds until the next point. */
        for (size_t i = 0; i < p->nodes_len; i++) {
            double xx = fx(f, p->nodes_t[i]);
            double yy = f->y + f->h - p->nodes_n[i] / p->nodes_total * f->h * 0.95;
            if (i == 0) {
                cairo_move_to(cr, xx, yy);
            } else {
                double dx, dy;
                cairo_get_current_point(cr, &dx, &dy);
                cairo_line_to(cr, xx, dy);
                cairo_line_to(cr, xx, yy);
            }
        }
        pm_cv_stroke(cr);
        pm_cv_restore(cr);
        cairo_set_source_rgb(cr, 0.75, 0.1, 0.1);
        cairo_set_font_size(cr, fs * 0.75);
        snprintf(lab, sizeof lab, "%d", p->nodes_total);
        plot_text_at(cr, f->x + f->w + fs * 0.3, f->y + f->h - f->h * 0.95, 0, 0.5, lab);
        plot_text_at(cr, f->x + f->w + fs * 0.3, f->y + f->h, 0, 0.5, "0");
        pm_cv_save(cr);
        cairo_translate(cr, f->x + f->w + fs * 1.9, f->y + f->h / 2);
        cairo_rotate(cr, M_PI / 2);
        plot_text_at(cr, 0, 0, 0.5, 0, "nodes reporting");
        pm_cv_restore(cr);
    }
}

/* Step 7: the frame over the data, and "no data" when there is none. */
static void chart_border(cairo_t *cr, double fs, const chart_geom *g)
{
    const frame *f = &g->f;
    /* Frame. */
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    cairo_set_line_width(cr, pm_cv_hairline(cr, g->px) * 1.2);
    cairo_rectangle(cr, f->x, f->y, f->w, f->h);
    pm_cv_stroke(cr);
    if (g->empty) {
        cairo_set_font_size(cr, fs);
        plot_text_at(cr, f->x + f->w / 2, f->y + f->h / 2, 0.5, 0.5, "no data");
    }
}

/* Step 8: the legend below the x axis label, the band first. */
static void chart_legend(cairo_t *cr, double fs, const pm_plot *p, const chart_geom *g)
{
    const frame *f = &g->f;
    double rgb[3];
    int dash;
    double lw = fs * 0.09;
    /* Legend below the x axis label. */
    {
        double ly = f->y + f->h + fs * 3.2;
        double lx0 = f->x;
        cairo_set_font_size(cr, fs * 0.8);
        size_t k = 0;
        if (p->band) {
            pm_plot_style(0, rgb, &dash);
            double xx = lx0, yy = ly;
            cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], 0.3);
            cairo_rectangle(cr, xx, yy + fs * 0.15, fs * 2.2, fs * 0.6);
            pm_cv_fill(cr);
            cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
            char t[256];
            plot_fit_text(cr, p->band->label ? p->band->label : "min-max", g->lcolw - fs * 3, t,
                          sizeof t);
            plot_text_at(cr, xx + fs * 2.6, yy + fs * 0.45, 0, 0.5, t);
            k++;
        }
        for (size_t i = 0; i < p->nseries; i++, k++) {
            int col = (int)(k % (size_t)g->lcols), row = (int)(k / (size_t)g->lcols);
            double xx = lx0 + col * g->lcolw, yy = ly + row * fs * 1.35;
            pm_plot_style(i + (p->band ? 1 : 0), rgb, &dash);
            cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
            cairo_set_line_width(cr, lw * 1.3);
            set_dash(cr, dash, lw);
            cairo_move_to(cr, xx, yy + fs * 0.45);
            cairo_line_to(cr, xx + fs * 2.2, yy + fs * 0.45);
            pm_cv_stroke(cr);
            set_dash(cr, 0, lw);
            cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
            char t[256];
            plot_fit_text(cr, p->series[i].label ? p->series[i].label : "", g->lcolw - fs * 3, t,
                          sizeof t);
            plot_text_at(cr, xx + fs * 2.6, yy + fs * 0.45, 0, 0.5, t);
        }
    }
}

/* The time-series chart in the rectangle (X, Y, W, H), fs the base font
 * size: the steps above, in order. */
void pm_plot_draw(cairo_t *cr, double X, double Y, double W, double H, double fs, const pm_plot *p)
{
    chart_geom g;
    pm_cv_save(cr);
    if (!chart_frame(cr, X, Y, W, H, fs, p, &g)) {
        pm_cv_restore(cr);
        return;
    }
    chart_ranges(p, &g);
    chart_title(cr, X, Y, W, fs, p);
    chart_axes(cr, X, fs, p, &g);
    chart_data(cr, fs, p, &g);
    if (g.show_nodes)
        chart_nodes(cr, fs, p, &g);
    chart_border(cr, fs, &g);
    if (g.nleg)
        chart_legend(cr, fs, p, &g);
    pm_cv_restore(cr);
}
