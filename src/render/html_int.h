/* The HTML report's writer, shared by its files (html.c, html_compare.c):
 * the state of one report being written and the helpers that add a chart's
 * data.  Private to src/render/html*.c. */
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

/* ,"k": (or "k": when first) into b. */
void html_json_key(pm_buf *b, const char *k, int first);
/* ,"k":INDEX of v[0..n) - off as float32 among the blobs; sets c->oom
 * when out of memory. */
void html_json_blob(html_ctx *c, const char *k, const double *v, size_t n, double off);
/* The figure of chart number c->ncharts (its title; the script draws into
 * it) into the body. */
void html_figure(html_ctx *c, const char *title);

/* --compare: the comparison section of job B's report (html_compare.c):
 * its HTML into c->body, its overlay charts into c->data's charts (each
 * counted in c->ncharts).  0, or PM_ENOMEM. */
int html_compare(html_ctx *c, pm_error *err) PM_WUR;

#endif
