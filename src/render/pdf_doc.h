/* pdf_doc.h - the PDF layout toolkit under the job report (private to
 * src/render/; see pdf_doc.c).
 *
 * A pdf_doc is an A4 document in libharu with a cursor: d->page is the
 * page being filled and d->y how far down it the next thing goes (points
 * from the top).  Everything that writes moves the cursor down and starts
 * a new page when the next line or row would not fit above the bottom
 * margin.
 *
 * Order of calls (as pm_report_write makes them, report.c):
 *
 *     pdf_open(d, font, bold, err)   libharu, the fonts, the outline's root
 *     pdf_new_page(d)                a page with the running header
 *     pdf_heading / pdf_subheading / pdf_paragraph / pdf_text ...
 *     pdf_table_head(d, &t), pdf_table_row(d, &t, cells, shade) ...
 *     pdf_place_canvas(d, cv, h)     a plot drawn by report_plots.c
 *     pdf_contents(d, y)             the contents lines on the summary page
 *     pdf_footers(d)                 "Page N of M" on every page
 *     pdf_save(d, tmp, path, err)    the bytes, through checked writes
 *
 * Errors: libharu reports into d->hpdf_error (the first one is kept) and an allocation failure sets d->oom; the drawing
 * calls return nothing, pm_report_write checks both before saving.
 */
#ifndef PERFMON_RENDER_PDF_DOC_H
#define PERFMON_RENDER_PDF_DOC_H

#include <hpdf.h>
#include <stddef.h>

#include "perfmon/canvas.h"
#include "perfmon/error.h"
#include "perfmon/report.h"

#define PAGE_W 595.276
#define PAGE_H 841.89
#define MARGIN_X 42.0
#define TOP 58.0    /* content starts this far from the top */
#define BOTTOM 48.0 /* and ends this far from the bottom */
#define CONTENT_W (PAGE_W - 2 * MARGIN_X)
#define MAX_TOC 64

typedef struct pdf_toc_entry {
    char title[96];
    size_t page; /* index into pages */
    double y;    /* where the line is on the summary page */
} pdf_toc_entry;

/* The document being laid out: libharu's handles, the cursor (page and y),
 * the pages so far (their footers are written at the end), the outline
 * and contents, and what the pages are about (analysis, options, layout),
 * read by the report's pages. */
typedef struct pdf_doc {
    HPDF_Doc pdf;
    HPDF_Font font, bold;
    const pm_analysis *a;
    const pm_report_opts *o;
    const pm_layout *l;
    HPDF_Page *pages;
    size_t npages, cap;
    HPDF_Page page;
    double y; /* cursor, from the top of the page */
    char header[600];
    HPDF_STATUS hpdf_error, hpdf_detail;
    HPDF_Outline root;
    pdf_toc_entry toc[MAX_TOC];
    size_t ntoc;
    HPDF_Page toc_page;
    double ink[3]; /* colour of the text drawn next (RGB, 0 = black) */
    int oom;
    pm_canvas_pdf cv;               /* what the plots' vectors share in the PDF */
    size_t plots_done, plots_total; /* for o->progress */
} pdf_doc;

/* A table: column widths, alignment, header (NULL: none) and font size. */
typedef struct pdf_table {
    size_t ncols;
    const double *w;  /* column widths (points) */
    const int *right; /* right-aligned columns */
    const char *const *head;
    double size;
} pdf_table;

/* Start the document in d (d->pdf, freed by the caller with HPDF_Free
 * even when this fails): compression, UTF-8, the fonts (NULL: DejaVu Sans
 * and DejaVu Sans Bold) with their ToUnicode maps fixed, the outline's
 * root.  PM_ENOMEM, or PM_EIO naming the font file that cannot be read. */
int pdf_open(pdf_doc *d, const char *font, const char *bold, pm_error *err) PM_WUR;

/* Text in the current font: its width, and text at (x, top) with its
 * baseline 0.8 em below top (pdf_text_right: ending at xr). */
void pdf_set_font(pdf_doc *d, int bold, double size);
double pdf_width(pdf_doc *d, const char *s);
void pdf_text(pdf_doc *d, double x, double top, double size, int bold, const char *s);
void pdf_text_right(pdf_doc *d, double xr, double top, double size, int bold, const char *s);
/* s (UTF-8) shortened with an ellipsis to fit w at the current font. */
void pdf_fit(pdf_doc *d, const char *s, double w, char *out, size_t cap);
/* A horizontal rule across the content width. */
void pdf_rule(pdf_doc *d, double top, double gray, double lw);

/* Pages and the outline. */
void pdf_new_page(pdf_doc *d);
/* Tell o->progress (if set) the pages and plots so far. */
void pdf_progress(const pdf_doc *d);
void pdf_bookmark(pdf_doc *d, const char *title, int toc);
void pdf_heading(pdf_doc *d, const char *title, int toc);
void pdf_subheading(pdf_doc *d, const char *title);
void pdf_paragraph(pdf_doc *d, const char *s, double size);

/* Tables: the header row (repeated on each new page by pdf_table_row). */
void pdf_table_head(pdf_doc *d, const pdf_table *t);
void pdf_table_row(pdf_doc *d, const pdf_table *t, const char *const *cells, int shade);

/* Cells: a number (an integer in full, else 3 significant digits or up
 * to 3 decimals by size, "-" when not finite), a UTC time, a duration. */
void pdf_num(double v, char *out, size_t cap);
void pdf_utc(double t, char *out, size_t cap);
void pdf_duration(double s, char *out, size_t cap);

/* A canvas of h points' height at the cursor, as PDF paths and text;
 * PM_EIO when libharu failed. */
int pdf_place_canvas(pdf_doc *d, const pm_canvas *cv, double h);

/* The end of the document: the contents lines on the page the summary
 * left for them (from y0 down), the page footers, the saved bytes. */
void pdf_contents(pdf_doc *d, double y0);
void pdf_footers(pdf_doc *d);
int pdf_save(pdf_doc *d, const char *tmp, const char *path, pm_error *err) PM_WUR;

#endif
