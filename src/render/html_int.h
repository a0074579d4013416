/* The HTML report's writer, shared by its files: html.c (the file, its
 * templates and the data's head and tail), html_data.c (the distinct
 * arrays), html_charts.c (the job's charts), html_heat.c (the phase
 * timeline and the colour maps), html_tables.c (the plain-HTML tables) and
 * html_compare.c (--compare): the state of one report being written and
 * what each file adds to it.  Private to src/render/html*.c. */
#ifndef PM_RENDER_HTML_INT_H
#define PM_RENDER_HTML_INT_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/analysis.h"
#include "perfmon/buf.h"
#include "perfmon/error.h"
#include "perfmon/html.h"
#include "perfmon/report.h"

typedef struct blob {
    uint8_t sha[32];
    unsigned char *bytes;
    size_t len;
    size_t elem; /* 4: float32, 1: bytes (a colour map's cells) */
} blob;

typedef struct html_ctx {
    const pm_analysis *a;
    const pm_html_opts *o;
    const pm_layout *l;
    pm_buf body, data;
    blob *blobs;
    size_t nblobs, capblobs;
    int oom;
    size_t ncharts, nheat;
    char *flat;       /* [nmetrics] a row of the constant table, not a chart */
    size_t pyr_block; /* grid points per column of a band chart's per-node min/max; 0: none */
} html_ctx;

/* Phases sent to the script for shading (the rest merged by kind there). */
#define MAX_PHASES 4096

/* A metric that is one value (a row of the constant table, not a chart). */
typedef struct flat_row {
    size_t metric, group;
    double lo, hi;
} flat_row;

/* The index of p[0..len) (malloc'd; taken) among the blobs, added when
 * new; SIZE_MAX when out of memory (p freed). */
size_t html_take_blob(html_ctx *c, unsigned char *p, size_t len, size_t elem);
/* ,"k": (or "k": when first) into b. */
void html_json_key(pm_buf *b, const char *k, int first);
/* ,"k":INDEX of v[0..n) - off as float32 among the blobs; sets c->oom
 * when out of memory. */
void html_json_blob(html_ctx *c, const char *k, const double *v, size_t n, double off);
/* ,"k":INDEX of the float32 v[0..n) (pm_report_f32's) among the blobs;
 * sets c->oom when out of memory. */
void html_json_f32(html_ctx *c, const char *k, const float *v, size_t n);
/* The figure of chart number c->ncharts (its title; the script draws into
 * it) into the body. */
void html_figure(html_ctx *c, const char *title);

/* A list of charts that the report adds in order (a layout group's
 * all-node or per-node charts, the comparison's overlays).  For each k in
 * [0, n) build puts chart k into ch (PM_ENOENT: there is none, skipped;
 * another error stops the list); each chart built gets the list's heading
 * before the first (heading), its figure with its title (title), its data
 * (data), is counted in c->ncharts and freed (done).  arg is the list's,
 * given to each. */
typedef struct html_chart_list {
    const void *arg;
    size_t n;
    void *ch;
    int (*build)(html_ctx *c, const void *arg, size_t k, void *ch, pm_error *err);
    const char *(*title)(const void *ch);
    int (*data)(html_ctx *c, const void *arg, size_t k, const void *ch, pm_error *err);
    void (*done)(void *ch);
    void (*heading)(html_ctx *c, const void *arg);
} html_chart_list;
/* 0, or the first error of a build or a data. */
int html_chart_list_add(html_ctx *c, const html_chart_list *l, pm_error *err) PM_WUR;

/* The charts in the PDF's order: their figures into the body, their data
 * into c->data's charts; the flat metrics into fl[0..*nfl) (fl has room for
 * every metric) and c->flat, the layout groups without data named in
 * missing.  0, or an error. */
int html_charts(html_ctx *c, flat_row *fl, size_t *nfl, char *missing, size_t mcap,
                pm_error *err) PM_WUR;
/* The phase timeline's data (,"timeline":...) and figure; 0, or an error. */
int html_timeline(html_ctx *c, pm_error *err) PM_WUR;
/* The colour maps' data and figures (jobs of more than
 * PM_HEATMAP_MIN_HOSTS nodes); 0, or an error. */
int html_heatmaps(html_ctx *c, pm_error *err) PM_WUR;

/* The plain-HTML parts, into the body. */
void html_job_table(html_ctx *c);
void html_key_figures(html_ctx *c);
void html_notes_list(html_ctx *c);
/* Resource use and energy per phase kind (nothing without phases). */
void html_phase_use(html_ctx *c);
void html_constant_table(html_ctx *c, const flat_row *fl, size_t nfl, const char *missing);
void html_node_table(html_ctx *c);

/* --compare: the comparison section of job B's report (html_compare.c):
 * its HTML into c->body, its overlay charts into c->data's charts (each
 * counted in c->ncharts).  0, or PM_ENOMEM. */
int html_compare(html_ctx *c, pm_error *err) PM_WUR;

#endif
