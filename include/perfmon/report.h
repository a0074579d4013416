/* report.h - charts from an analysis, PNG plot files, and the PDF report.
 *
 * pm_chart turns one metric of a pm_analysis into a pm_plot (per-node:
 * one line per host, or a min-median-max band with the outlying hosts
 * named when there are many; all-node: the Total or Average with the
 * nodes-reporting line and shaded repairs).  pm_plots_write() renders every
 * chart to PNG; pm_report_write() lays the job report out with libharu.
 * Layout (page groups, plots per page, key figures, colour-map metrics)
 * comes from templates/report.json.
 *
 * Ownership: a pm_chart owns the arrays its plot points to and is released
 * with pm_chart_free(); the analysis it was built from must outlive it.
 */
#ifndef PERFMON_REPORT_H
#define PERFMON_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/analysis.h"
#include "perfmon/error.h"
#include "perfmon/plot.h"

/* PM_LEGEND_MAX_HOSTS and PM_HEATMAP_MIN_HOSTS, the host counts at which
 * the plots change, are analysis.h's: the stream mode keeps rows by them. */

typedef struct pm_chart {
    pm_plot plot;
    char title[256];
    char ylabel[160];
    char file[160];         /* PNG file name (no directory) */
    pm_plot_series *series; /* owned */
    char **labels;          /* owned */
    pm_plot_band band;
    double *band_t, *band_lo, *band_mid, *band_hi; /* owned */
    double *band_p5, *band_p95;                    /* owned */
    pm_plot_span *spans;                           /* owned */
    double *nodes_n;                               /* owned */
    char band_label[96];
} pm_chart;

/* Build the per-node (all_nodes = 0) or all-node (1) chart of metric m.
 * Returns 0, or PM_ENOENT when the metric has nothing to draw. */
int pm_chart_build(const pm_analysis *a, size_t m, int all_nodes, int elapsed, pm_chart *c,
                   pm_error *err) PM_WUR;
void pm_chart_free(pm_chart *c);

/* A colour map of metric m over hosts x time; values are owned by the
 * caller's pm_heatmap_data and freed with pm_heatmap_data_free().  Rows:
 * similar nodes together (nodes grouped by the shape of their series over
 * a few stretches of time, groups and the nodes in each by mean, highest
 * first; docs/report.md "Colour maps"). */
typedef struct pm_heatmap_data {
    pm_heatmap hm;
    char title[256];
    double *t, *values;
    const char **rows;
    uint32_t *group; /* [nrows] each row's group of similar nodes, 0.. in row order */
    size_t ngroups;  /* groups (nodes without data: one more, last) */
} pm_heatmap_data;

int pm_heatmap_build(const pm_analysis *a, size_t m, int elapsed, size_t max_cols,
                     pm_heatmap_data *h, pm_error *err) PM_WUR;
void pm_heatmap_data_free(pm_heatmap_data *h);

/* The phase timeline ("Phases per node") of the job's phases, for the
 * report's phases page and --plots (chart.c): rows from pm_phase_rows, a
 * legend entry per phase kind.  Returns 0, PM_ENOENT when the job has no
 * phases, or PM_ENOMEM; free with pm_timeline_data_free(). */
typedef struct pm_timeline_data {
    pm_timeline tl;
    const char **rows, **kinds;
    pm_timeline_bar *bars;
    size_t *row;
    pm_timeline_mark *marks; /* the events' (job_end.h), cgroup notes left out */
} pm_timeline_data;

int pm_timeline_build(const pm_analysis *a, int elapsed, pm_timeline_data *t, pm_error *err) PM_WUR;
void pm_timeline_data_free(pm_timeline_data *t);

/* Report layout (templates/report.json). */
typedef struct pm_layout_group {
    char page[32];  /* catalog "page" value */
    char title[96]; /* section title */
} pm_layout_group;

typedef struct pm_layout_figure {
    char key[64]; /* pm_figure key */
    char label[64];
    double scale; /* displayed = value * scale */
    char unit[16];
} pm_layout_figure;

typedef struct pm_layout {
    int plots_per_page;
    pm_layout_group *groups;
    size_t ngroups;
    pm_layout_figure *figures;
    size_t nfigures;
    char **heatmaps; /* metric ids */
    size_t nheatmaps;
} pm_layout;

int pm_layout_load(const char *path, pm_layout **out, pm_error *err) PM_WUR;
void pm_layout_free(pm_layout *l);

typedef struct pm_report_opts {
    const char *pdf_path;    /* NULL: no PDF */
    const char *plots_dir;   /* NULL: no PNG files */
    const char *layout_path; /* templates/report.json */
    const char *font_path;   /* TrueType font; NULL = DejaVu Sans */
    const char *font_bold_path;
    int elapsed;             /* time axis as elapsed time */
    int dpi;                 /* PNG resolution (default 200) */
    long long creation_time; /* seconds since the epoch; < 0 = now or SOURCE_DATE_EPOCH */
    const char *stats_json;  /* attached to the PDF when not NULL */
    const struct pm_comparison *compare; /* not NULL: a section comparing the reported
                                          * job (its B) with its A (compare.h) */
    /* Called as the PDF's pages are started and its plots placed (stage
     * PM_STAGE_REPORT, analysis.h), from the calling thread; may be NULL. */
    void (*progress)(const pm_progress *p, void *user);
    void *progress_user;
} pm_report_opts;

void pm_report_opts_init(pm_report_opts *o);

/* Write every chart as PNG into o->plots_dir (created if missing). */
int pm_plots_write(const pm_analysis *a, const pm_report_opts *o, pm_error *err) PM_WUR;
/* --plots: the phase timeline as phases_timeline.png in o->plots_dir
 * (timeline_png.c); nothing when the job has no phases. */
int pm_timeline_png(const pm_analysis *a, const pm_report_opts *o, pm_error *err) PM_WUR;

/* Write the PDF report to o->pdf_path. */
int pm_report_write(const pm_analysis *a, const pm_report_opts *o, pm_error *err) PM_WUR;

/* Both jobs' all-node series of a comparison's metric row (compare.h)
 * overlaid on elapsed time since each job's start: A solid, B dashed,
 * the legend naming the jobs.  The comparison must outlive it. */
struct pm_comparison;
typedef struct pm_overlay {
    pm_plot plot;
    pm_plot_series series[2];
    char title[256];
    char ylabel[160];
    char label[2][200];
    double *t[2]; /* owned: the series' times, shifted */
} pm_overlay;

/* Returns 0, PM_ENOENT when the row is not a metric present in both jobs,
 * or PM_ENOMEM. */
int pm_overlay_build(const struct pm_comparison *c, size_t row, pm_overlay *o,
                     pm_error *err) PM_WUR;
void pm_overlay_free(pm_overlay *o);

/* File-name-safe form of a display name ("Input Traffic" -> "Input_Traffic"). */
void pm_chart_name(const char *name, char *out, size_t cap);

/* A unit as shown to readers: "" for the dimensionless "1". */
const char *pm_unit_shown(const char *unit);

/* The efficiency notes as the report lists them (verdict.c): most severe
 * first, the job's own notes before the nodes', and a rule that fired on
 * several nodes as one line that counts them and names up to four.
 * pm_note_lines returns the number of lines and sets *out to an array the
 * caller frees (NULL when out of memory). */
typedef struct pm_note_line {
    size_t note;     /* index in a->notes of the line's first note */
    int severity;    /* PM_SEV_* */
    size_t count;    /* notes on this line: 1, or the nodes the rule fired on */
    size_t shown;    /* nodes named in hosts */
    char hosts[400]; /* "n1, n2, n3, n4" */
} pm_note_line;
size_t pm_note_lines(const pm_analysis *a, pm_note_line **out);

/* The verdict at the top of the report (verdict.c): sentences built from
 * the job and node figures of --stats --json (share of the allocated CPU
 * used, idle, busy and slow nodes, the node closest to running out of
 * memory, network and disk bytes, the notes), into out (cap bytes, always
 * NUL-terminated).  Returns the number of sentences. */
size_t pm_verdict_text(const pm_analysis *a, char *out, size_t cap);
/* What the profile cannot say, one line each (at most max lines of 160
 * bytes): an incomplete profile, no PMU counters, no RAPL, no network
 * counters, no process tree.  Returns the number of lines. */
size_t pm_verdict_limits(const pm_analysis *a, char lines[][160], size_t max);

#endif
