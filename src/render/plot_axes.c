/* Axes and labels for the drawings (interface in plot_int.h): the series
 * palette (pm_plot_style, plot.h), text measured, placed and shortened,
 * tick steps and tick labels for values and for clock or elapsed time.
 * Used by the time-series chart (plot.c), the colour map (heatmap.c) and
 * the phase timeline (timeline.c).
 */
#include "perfmon/plot.h"

#include <time.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/canvas.h"
#include "plot_int.h"

/* Eight hues of clearly different lightness, combined with three dash
 * patterns: 24 series stay apart even printed in grey. */
static const double palette[8][3] = {
    {0.000, 0.447, 0.698}, /* blue */
    {0.835, 0.369, 0.000}, /* vermillion */
    {0.000, 0.620, 0.451}, /* bluish green */
    {0.800, 0.475, 0.655}, /* reddish purple */
    {0.337, 0.706, 0.914}, /* sky blue */
    {0.902, 0.624, 0.000}, /* orange */
    {0.200, 0.200, 0.200}, /* near black */
    {0.600, 0.600, 0.150}, /* olive */
};

void pm_plot_style(size_t i, double rgb[3], int *dash)
{
    memcpy(rgb, palette[i % 8], sizeof palette[0]);
    *dash = (int)((i + i / 8) % 3); /* solid, dashed, dotted: apart in greyscale too */
}

double plot_text_width(cairo_t *cr, const char *s)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    return e.x_advance;
}

/* Draw s with its anchor at (x, y): ax 0 left, 0.5 centre, 1 right;
 * ay 0 top, 0.5 middle, 1 baseline-ish bottom. */
void plot_text_at(cairo_t *cr, double x, double y, double ax, double ay, const char *s)
{
    cairo_font_extents_t fe;
    cairo_font_extents(cr, &fe);
    double w = plot_text_width(cr, s);
    double h = fe.ascent;
    cairo_move_to(cr, x - ax * w, y - ay * h + h);
    pm_cv_show_text(cr, s);
}

/* Shorten s with an ellipsis until it fits max_w. */
void plot_fit_text(cairo_t *cr, const char *s, double max_w, char *out, size_t cap)
{
    snprintf(out, cap, "%s", s);
    if (plot_text_width(cr, out) <= max_w + 0.5)
        return;
    size_t n = strlen(out);
    while (n > 1) {
        n--;
        while (n > 0 && ((unsigned char)out[n] & 0xC0) == 0x80)
            n--; /* do not cut a UTF-8 sequence */
        if (n + 4 > cap)
            continue;
        memcpy(out + n, "\xe2\x80\xa6", 4);
        if (plot_text_width(cr, out) <= max_w)
            return;
    }
}

/* A "nice" step (1, 2, 2.5, 5 x 10^k) giving about target intervals. */
double plot_nice_step(double range, int target)
{
    if (!(range > 0))
        return 1;
    double raw = range / target;
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    double nice = f < 1.5 ? 1 : f < 2.25 ? 2 : f < 3.5 ? 2.5 : f < 7.5 ? 5 : 10;
    return nice * mag;
}

/* Compact number for tick labels: 0, 0.25, 12.5, 1500, 2.5e+06 -> 2.5M. */
void plot_fmt_num(double v, double step, char *out, size_t cap)
{
    double a = fabs(v);
    if (a < 1e-12 * (step > 0 ? step : 1)) {
        snprintf(out, cap, "0");
        return;
    }
    static const struct {
        double f;
        const char *s;
    } si[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e4, "k"}};
    for (size_t i = 0; i < sizeof si / sizeof si[0]; i++)
        if (a >= si[i].f) {
            double d = si[i].f == 1e4 ? 1e3 : si[i].f;
            const char *sfx = si[i].f == 1e4 ? "k" : si[i].s;
            snprintf(out, cap, "%.4g%s", v / d, sfx);
            return;
        }
    if (a < 1e-3)
        snprintf(out, cap, "%.2g", v);
    else
        snprintf(out, cap, "%.4g", v);
}

/* Time ticks: steps a reader can count in. */
double plot_time_step(double span, int target)
{
    static const double steps[] = {0.1,  0.2,   0.5,   1,     2,     5,      10,     15,
                                   30,   60,    120,   300,   600,   900,    1800,   3600,
                                   7200, 10800, 21600, 43200, 86400, 172800, 604800, 1209600};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (span / steps[i] <= target)
            return steps[i];
    return 2592000;
}

void plot_fmt_time(double t, double step, double span, int axis, double origin, char *out,
                   size_t cap)
{
    if (axis == PM_AXIS_ELAPSED) {
        double e = t - origin;
        long s = lround(e);
        if (step < 1)
            snprintf(out, cap, "%.1fs", e);
        else if (span < 120)
            snprintf(out, cap, "%lds", s);
        else if (s < 3600 * 100)
            snprintf(out, cap, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
        else
            snprintf(out, cap, "%ldh", s / 3600);
        return;
    }
    if (step < 1) {
        /* Sub-second ticks (a job of a few seconds): tenths after the
         * seconds, or every label of a second would read the same. */
        double r = round(t * 10) / 10;
        time_t ts = (time_t)floor(r);
        struct tm tm;
        gmtime_r(&ts, &tm);
        char hms[32];
        strftime(hms, sizeof hms, "%H:%M:%S", &tm);
        snprintf(out, cap, "%s.%d", hms, (int)lround((r - floor(r)) * 10) % 10);
        return;
    }
    time_t tt = (time_t)floor(t);
    struct tm tm;
    gmtime_r(&tt, &tm);
    if (step >= 86400)
        strftime(out, cap, "%m-%d", &tm);
    else if (span > 86400)
        strftime(out, cap, "%m-%d %H:%M", &tm);
    else if (step < 60)
        strftime(out, cap, "%H:%M:%S", &tm);
    else
        strftime(out, cap, "%H:%M", &tm);
}

void plot_range_of(const double *v, size_t n, int logy, double *lo, double *hi)
{
    for (size_t i = 0; i < n; i++) {
        double x = v[i];
        if (!isfinite(x) || (logy && !(x > 0)))
            continue;
        if (x < *lo)
            *lo = x;
        if (x > *hi)
            *hi = x;
    }
}
