/* canvas.h - plots drawn once, written as PDF vectors or as Cairo pixels.
 *
 * plot.c draws through a cairo_t.  Cairo does the geometry (transforms,
 * arcs, clips, font metrics); the calls that put ink down (stroke, fill,
 * clip, save, restore, show_text, paint) go through pm_cv_* below.  On an
 * ordinary cairo_t they are the Cairo calls themselves (PNG files, the
 * archive's history plot).  On the cairo_t of a pm_canvas they record the
 * path in device space, with its colour, line width, dash and caps, the
 * text with its matrix, and images; pm_canvas_pdf then replays the record
 * as libharu page operators: lines stay lines at any zoom and text is
 * text (pdftotext reads plot titles and axis labels).
 *
 * Recording and replaying are apart so that worker threads can draw
 * while the main thread writes the PDF (libharu is not thread-safe).
 *
 * Ownership: a pm_canvas owns its record; pm_canvas_free(NULL) is a no-op.
 */
#ifndef PERFMON_CANVAS_H
#define PERFMON_CANVAS_H

#include <cairo.h>
#include <hpdf.h>
#include <stddef.h>

typedef struct pm_canvas pm_canvas;

/* A canvas of w x h points.  Its cairo_t draws in points and reports
 * dpi/72 device pixels per point (plot.c decimates to those columns).
 * NULL when out of memory. */
pm_canvas *pm_canvas_new(double w, double h, double dpi);
void pm_canvas_free(pm_canvas *cv);

/* The canvas's cairo_t (owned by the canvas). */
cairo_t *pm_canvas_cairo(pm_canvas *cv);

/* 0, or PM_ENOMEM when a record could not grow (the drawing is partial). */
int pm_canvas_status(const pm_canvas *cv);

/* What the PDF of a report shares between canvases: the document, its
 * two fonts (the report's embedded TTF, UTF-8), and the transparency
 * states made so far (one per alpha, not one per fill). */
typedef struct pm_canvas_pdf {
    HPDF_Doc doc;
    HPDF_Font font, bold;
    double alpha[16];
    HPDF_ExtGState gs[16];
    size_t ngs;
} pm_canvas_pdf;

/* Write the record on page with the canvas's top-left corner at (x, top)
 * (points, top measured down from the top of a page page_h high). */
void pm_canvas_pdf_write(const pm_canvas *cv, pm_canvas_pdf *ctx, HPDF_Page page, double x,
                         double top, double page_h);

/* The record, for tests: op i of pm_canvas_count.  Coordinates are points
 * from the canvas's top-left corner, y down. */
enum pm_canvas_kind {
    PM_CV_STROKE,
    PM_CV_FILL,
    PM_CV_CLIP,
    PM_CV_SAVE,
    PM_CV_RESTORE,
    PM_CV_TEXT,
    PM_CV_IMAGE
};
typedef struct pm_canvas_op {
    int kind; /* enum pm_canvas_kind */
    double rgba[4];
    double line_width;    /* points */
    size_t npoints;       /* path: end points of its segments */
    double ymin, ymax;    /* path: extent of those points (y down) */
    const char *text;     /* text: the string; */
    double tx, ty, size;  /* its origin and size */
    int image_w, image_h; /* image: pixels */
} pm_canvas_op;

size_t pm_canvas_count(const pm_canvas *cv);
void pm_canvas_get(const pm_canvas *cv, size_t i, pm_canvas_op *op);
/* Path op i's points: x[k], y[k] for k < npoints (caller's arrays). */
void pm_canvas_points(const pm_canvas *cv, size_t i, double *x, double *y, size_t cap);

/* Drawing: record on a canvas's cairo_t, draw on any other. */
void pm_cv_stroke(cairo_t *cr);
void pm_cv_fill(cairo_t *cr);
void pm_cv_clip(cairo_t *cr);
void pm_cv_save(cairo_t *cr);
void pm_cv_restore(cairo_t *cr);
void pm_cv_show_text(cairo_t *cr, const char *s);
/* The width of a hairline (grid, frame) for a device pixel of px user
 * units: px on pixels; on a canvas at most 0.48 pt (a 150-dpi pixel, as
 * the report's plots had as images), however coarse its columns. */
double pm_cv_hairline(cairo_t *cr, double px);
/* Paint the current source, an RGB24 image surface, scaled by the CTM
 * to its rectangle; drawn without smoothing (one cell, one colour). */
void pm_cv_paint_image(cairo_t *cr);

#endif
