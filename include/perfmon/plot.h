/* plot.h - time-series plots drawn with Cairo.
 *
 * A pm_plot describes one chart: series of (time, value) points, an
 * optional min-median-max band (for many hosts), shaded spans (repaired
 * data, phases), an optional "nodes contributing" step line, and axis
 * settings.  Rendering cost depends on the pixels, not the samples: each
 * series is reduced to first/min/max/last per pixel column before drawing,
 * so every peak stays visible however long the series is.
 *
 * Ownership: everything a pm_plot points to is borrowed; nothing is kept
 * after a render call returns.
 */
#ifndef PERFMON_PLOT_H
#define PERFMON_PLOT_H

#include <cairo.h>
#include <stddef.h>
#include <stdint.h>

#include "perfmon/catalog.h" /* PM_LOG_MIN_SPAN */
#include "perfmon/error.h"

enum pm_time_axis { PM_AXIS_CLOCK = 0, PM_AXIS_ELAPSED = 1 };

typedef struct pm_plot_series {
    const char *label; /* legend text, UTF-8 */
    const double *t;   /* seconds since the epoch, increasing */
    const double *v;   /* NaN = no value (a gap in the line) */
    size_t n;
} pm_plot_series;

typedef struct pm_plot_band {
    const double *t, *lo, *mid, *hi; /* min, median, max across hosts */
    size_t n;
    const char *label;      /* e.g. "median of 200 hosts" */
    const double *p5, *p95; /* optional: an inner band, 5th to 95th percentile */
} pm_plot_band;

typedef struct pm_plot_span {
    double t0, t1;
    int kind;          /* 0 = repaired data (hatched grey), 1 = phase (tinted) */
    const char *label; /* phase name, or NULL */
    int color;         /* phase: palette index (the phase kind) */
} pm_plot_span;

typedef struct pm_plot {
    const char *title;
    const char *ylabel; /* with unit, e.g. "Traffic (MB/s)" */
    int logy;
    int time_axis;   /* enum pm_time_axis */
    double t_origin; /* job start (elapsed axis) */
    const pm_plot_series *series;
    size_t nseries;
    const pm_plot_band *band; /* optional */
    const pm_plot_span *spans;
    size_t nspans;
    const double *nodes_t; /* optional: contributing-node count ... */
    const double *nodes_n;
    size_t nodes_len;
    int nodes_total;      /* ... drawn where it falls below this */
    int legend;           /* draw a legend (series labels) */
    int points;           /* also a dot at every series point */
    const double *mark_t; /* optional: points marked with a red ring ... */
    const double *mark_v;
    size_t nmarks; /* ... (e.g. regressions) */
    int step;      /* enum pm_plot_step: how a value covers time */
} pm_plot;

/* How the line joins samples: straight (a gauge), or a step over the
 * interval before each sample (a rate: measured from the previous sample
 * to this one) or after it (a held gauge: valid until the next refresh). */
enum pm_plot_step { PM_STEP_NONE = 0, PM_STEP_BEFORE = 1, PM_STEP_AFTER = 2 };

/* A time x node colour map with the node average along the right edge
 * and the time average along the bottom.  With more rows than the drawing
 * has pixels, consecutive rows are merged (their mean) so that a node gets
 * at most one pixel row; the title then says how many nodes a row holds. */
typedef struct pm_heatmap {
    const char *title;
    const char *unit;
    int time_axis;
    double t_origin;
    const char *const *rows; /* host names */
    size_t nrows;
    const double *t; /* column times (common grid) */
    size_t ncols;
    const double *values;  /* [nrows * ncols], row-major; NaN = none */
    const uint32_t *group; /* optional [nrows]: rows of one group of similar nodes are
                            * consecutive; marked when rows are merged */
    size_t ngroups;
} pm_heatmap;

/* Draw into the rectangle (x, y, w, h) of cr (units are points or pixels,
 * whatever cr uses); fonts scale with font_size. */
/* A phase timeline (Gantt chart): one row per node, a bar per phase,
 * coloured by kind, with a legend of kinds. */
typedef struct pm_timeline_bar {
    size_t row, kind;
    double t0, t1;
} pm_timeline_bar;

typedef struct pm_timeline {
    const char *title;
    int time_axis;
    double t_origin;
    double t0, t1;           /* time range shown */
    const char *const *rows; /* node names */
    size_t nrows;
    const char *const *kinds; /* phase kind names (legend) */
    size_t nkinds;
    const pm_timeline_bar *bars;
    size_t nbars;
    /* Event marks (docs/report.md, "Phases and events"): a tick across the
     * row at time t, grey, orange or red by severity 0, 1, 2. */
    const struct pm_timeline_mark *marks;
    size_t nmarks;
} pm_timeline;

typedef struct pm_timeline_mark {
    size_t row;
    double t;
    int severity;
} pm_timeline_mark;

void pm_timeline_draw(cairo_t *cr, double x, double y, double w, double h, double font_size,
                      const pm_timeline *tl);

void pm_plot_draw(cairo_t *cr, double x, double y, double w, double h, double font_size,
                  const pm_plot *p);
void pm_heatmap_draw(cairo_t *cr, double x, double y, double w, double h, double font_size,
                     const pm_heatmap *hm);

/* Render to a PNG file width_cm wide at dpi (height = width * aspect).
 * Returns 0 or PM_EIO with err naming the file. */
int pm_plot_png(const char *path, const pm_plot *p, double width_cm, double aspect, int dpi,
                pm_error *err) PM_WUR;
int pm_heatmap_png(const char *path, const pm_heatmap *hm, double width_cm, double aspect, int dpi,
                   pm_error *err) PM_WUR;

/* Colour and dash of series i (distinguishable in greyscale print). */
void pm_plot_style(size_t i, double rgb[3], int *dash);

#endif
