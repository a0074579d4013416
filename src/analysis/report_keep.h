/* report_keep.h - what the report reads of the series, kept by the
 * stream mode's fold (report_keep.c).
 * Private to src/analysis. */
#ifndef PM_ANALYSIS_REPORT_KEEP_H
#define PM_ANALYSIS_REPORT_KEEP_H

#include <stddef.h>

#include "perfmon/analysis.h"

/* The stream mode's report digest (report_keep.c): the rows of each
 * (catalog metric, host) on each report grid in the unlinked file fd, host
 * by host within a metric, and each metric's repair times in host order. */
typedef struct pm_report_keep {
    int fd;
    size_t nhosts, nm;
    size_t ngrids, cols[3], ng[3], maxng;
    size_t per_metric; /* doubles per catalog metric */
    double **rep;      /* [nm] (start, end) pairs */
    size_t *nrep, *caprep;
    /* With PM_REPORT_HTML in a job of PM_LEGEND_MAX_HOSTS < hosts <=
     * PM_REPORT_SERIES_HOSTS: each (metric, host)'s own series in the same
     * file after the rows, its float32 times then values (pm_report_f32). */
    int series;
    size_t tail;            /* the file's bytes in use (atomic: any thread) */
    size_t *ser_at, *ser_n; /* [nm * nhosts]: byte offset, points */
} pm_report_keep;
/* With opts.stream and opts.report: sets a->keep up (before the fold). */
int pm_report_keep_open(pm_analysis *a, pm_error *err) PM_WUR;
void pm_report_keep_free(pm_report_keep *k);
/* Host h's series s of catalog metric d: its rows written (buf holds the
 * largest grid) and, with k->series, the series itself; its range and
 * first gap kept in s; any thread. */
int pm_report_keep_host(const pm_analysis *a, size_t d, size_t h, pm_series *s, double *buf,
                        pm_error *err) PM_WUR;
/* s's repair times appended to metric d's, in host order (the fold). */
int pm_report_keep_repairs(pm_analysis *a, size_t d, const pm_series *s) PM_WUR;

#endif
