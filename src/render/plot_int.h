/* plot_int.h - what the drawings of plot.c, heatmap.c and timeline.c
 * share (private to src/render/; see plot_axes.c): the font, text placed
 * and shortened, tick steps and tick labels for values and times.
 *
 * Each drawing selects FONT and a size, then measures and places text
 * with these; none of them changes the Cairo state beyond the current
 * point and path, so they may be called in any order.
 */
#ifndef PERFMON_RENDER_PLOT_INT_H
#define PERFMON_RENDER_PLOT_INT_H

#include <cairo.h>
#include <stddef.h>

#include "perfmon/plot.h"

#define FONT "DejaVu Sans"

/* Width of s in the current font. */
double plot_text_width(cairo_t *cr, const char *s);
/* Draw s with its anchor at (x, y): ax 0 left, 0.5 centre, 1 right; ay 0
 * top, 0.5 middle, 1 bottom. */
void plot_text_at(cairo_t *cr, double x, double y, double ax, double ay, const char *s);
/* s shortened with an ellipsis until it fits max_w. */
void plot_fit_text(cairo_t *cr, const char *s, double max_w, char *out, size_t cap);

/* A "nice" step (1, 2, 2.5, 5 x 10^k) giving about target intervals, and
 * a value tick's label at that step (2.5e+06 -> 2.5M). */
double plot_nice_step(double range, int target);
void plot_fmt_num(double v, double step, char *out, size_t cap);
/* A time step a reader can count in, and a time tick's label (clock or
 * elapsed since origin, as axis says). */
double plot_time_step(double span, int target);
void plot_fmt_time(double t, double step, double span, int axis, double origin, char *out,
                   size_t cap);

/* Widen [*lo, *hi] to the finite values of v (on a log axis the
 * positive ones). */
void plot_range_of(const double *v, size_t n, int logy, double *lo, double *hi);

#endif
