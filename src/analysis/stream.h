/* stream.h - the stream mode's pipeline (stream.c).
 * Private to src/analysis. */
#ifndef PM_ANALYSIS_STREAM_H
#define PM_ANALYSIS_STREAM_H

#include "perfmon/analysis.h"

/* Stream mode (stream.c, docs/analysis.md "Analysis in bounded memory"):
 * with the hosts' times set up from the survey (values not decoded),
 * reload each host, compute its node figures and series, and fold them
 * into a->nodes, a->job and a->metrics. */
int pm_stream_build(pm_analysis *a, pm_error *err) PM_WUR;

#endif
