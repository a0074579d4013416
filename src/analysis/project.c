/* The column projection: which raw columns a read decodes and which it
 * places apart to release them alone (pm_read_hint), from the catalog, the
 * node figures and the job's end.  The pipeline sets the hints up once
 * (pm_project_init); reading (read.c) takes them from the analysis, so it
 * calls nothing above it. */
#include <stddef.h>

#include "project.h"
#include "summary.h"
#include "perfmon/job_end.h"

/* A column that not exactly one catalog metric derives from is released
 * by itself (at once, or after several metrics): such columns are placed
 * together (pm_read_hint), where giving them back frees whole huge pages.
 * A column exactly one metric reads becomes that metric's series. */
static int released_alone(const char *column, void *ctx)
{
    const pm_catalog *cat = ctx;
    size_t n = 0;
    for (size_t d = 0; d < cat->n && n < 2; d++)
        n += (size_t)pm_metric_matches(&cat->m[d], column);
    return n != 1;
}

/* Column projection: only the columns a catalog metric derives from or
 * the node summary reads are decoded.  The outputs (--csv, --data, --hdf5,
 * plots, the report) are all made of the metrics' series and the node
 * figures, so they need no other column. */
static int wanted(const char *column, void *ctx)
{
    const pm_catalog *cat = ctx;
    if (pm_summary_reads(column) || pm_job_end_reads(column))
        return 1;
    for (size_t d = 0; d < cat->n; d++)
        if (pm_metric_matches(&cat->m[d], column))
            return 1;
    return 0;
}

/* The stream mode's survey (docs/analysis.md, "Analysis in bounded
 * memory"): times, columns and metadata, no values. */
static int wanted_none(const char *column, void *ctx)
{
    (void)column;
    (void)ctx;
    return 0;
}

/* A host read again for its times alone: not wanted_none, whose read
 * shrinks the profile (read.c, survey_shrink). */
static int times_only(const char *column, void *ctx)
{
    (void)column;
    (void)ctx;
    return 0;
}

void pm_project_init(pm_analysis *a)
{
    a->in.read_first = (pm_read_hint){
        .late = released_alone, .want = a->opts.stream ? wanted_none : wanted, .ctx = a->catalog};
    a->in.read_values = (pm_read_hint){.late = released_alone, .want = wanted, .ctx = a->catalog};
    a->in.read_times =
        (pm_read_hint){.late = released_alone, .want = times_only, .ctx = a->catalog};
}
