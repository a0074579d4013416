/* summary.h - the node figures of one host (summary.c).
 * Private to src/analysis. */
#ifndef PM_ANALYSIS_SUMMARY_H
#define PM_ANALYSIS_SUMMARY_H

#include "perfmon/analysis.h"

/* The node figures of one host (summary.c): sets ho->ncpus and
 * ho->mem_total, fills *s; and the job's figures from a->nodes. */
void pm_summary_host(const pm_analysis *a, pm_host *ho, pm_node_summary *s);
void pm_summary_job(pm_analysis *a);
/* Fill s->sign[] for host h (summary.c, from pm_summary_host). */
void pm_summary_signs(const pm_analysis *a, const pm_host *h, pm_node_summary *s);

/* Does the node summary (summary.c) read raw column `column`? */
int pm_summary_reads(const char *column);

#endif
