/* report_int.h - what the report's files share (private to src/render/).
 *
 * The report is written by pm_report_write (report.c), which opens a
 * pdf_doc (pdf_doc.h) and calls the pages in this order:
 *
 *     report_summary_page      report_summary.c   page 1: job, figures, notes
 *     report_compare_pages     report_compare.c   with --compare
 *     report_quality_page      report_nodes.c     data quality per node
 *     report_hardware_page     report_nodes.c     hardware per node
 *     report_phases_page       report_phases.c    when the job has phases
 *     report_plot_pages        report_plots.c     plots and colour maps
 *     report_statistics_pages  report_stats.c     per-node statistics
 *
 * then the contents, the footers and the attached statistics.  Each page
 * function lays out at the cursor and starts its own pages.
 */
#ifndef PERFMON_RENDER_REPORT_INT_H
#define PERFMON_RENDER_REPORT_INT_H

#include <cairo.h>

#include "pdf_doc.h"
#include "perfmon/spread.h"

/* The pages (see above); those with an error return 0 or a pm_error code. */
void report_summary_page(pdf_doc *d);
int report_compare_pages(pdf_doc *d, pm_error *err) PM_WUR;
void report_quality_page(pdf_doc *d);
void report_hardware_page(pdf_doc *d);
int report_phases_page(pdf_doc *d, pm_error *err) PM_WUR;
/* The events table (report_phases.c), on the phases and events page. */
void report_events_table(pdf_doc *d);
int report_plot_pages(pdf_doc *d, pm_error *err) PM_WUR;
void report_statistics_pages(pdf_doc *d);

/* Plots as vectors (report_plots.c): fn draws obj into a w x h canvas. */
typedef void (*report_draw_cb)(cairo_t *cr, double w, double h, const void *obj);
void report_draw_chart(cairo_t *cr, double w, double h, const void *obj);
void report_draw_timeline(cairo_t *cr, double w, double h, const void *obj);
pm_canvas *report_render_canvas(report_draw_cb fn, const void *obj, double w, double h);

/* Whether every node's series of r is flat (within 0.1 % of its largest
 * magnitude); lo..hi: the range of the nodes' levels (report_plots.c; the
 * HTML report's constant table too, html.c). */
int report_metric_constant(const pm_metric_result *r, size_t nhosts, double *lo, double *hi);
/* A constant metric's value cell ("v unit", or "lo to hi unit") and its
 * nodes cell ("k of n"), as both reports' constant tables show them. */
void report_constant_cells(const pm_analysis *a, const pm_metric_result *r, double lo, double hi,
                           char *val, size_t vcap, char *nodes, size_t ncap);

/* A key figure over the nodes (report_summary.c): the least, mean and
 * largest finite node value; returns how many nodes have one. */
size_t report_figure_span(const pm_analysis *a, const pm_figure *f, double *mn, double *mean,
                          double *mx);
/* One key-figure cell, as the PDF and the HTML report show it: byte
 * counts, energies and times scaled to their size (returns 1: the cell
 * carries its unit), other figures times the layout's scale (returns 0). */
int report_figure_cell(const pm_layout_figure *lf, const pm_figure *f, double v, char *out,
                       size_t cap);
/* The row's label: with its unit where the cells do not carry one. */
void report_figure_label(const pm_layout_figure *lf, const pm_figure *f, int scaled, char *out,
                         size_t cap);
/* One key-figure row of the layout as both reports show it: cells[0] the
 * label, then the least node, the average, the largest node and the job.
 * 0: no row (a figure the catalog lacks, or no node has a value). */
typedef struct report_figure_row {
    char cell[5][160];
} report_figure_row;
int report_figure_row_make(const pm_analysis *a, const pm_layout_figure *lf,
                           report_figure_row *row);

/* Shared by the pages (report_summary.c, report_nodes.c). */
const char *report_or_dash(const char *s);
void report_nodes_text(const pm_analysis *a, char *buf, size_t cap);
void report_outlier_table(pdf_doc *d, const char *title, const pm_node_rank *r, size_t n);

#endif
