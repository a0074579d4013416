/* project.h - the column projection (project.c): the read hints of the
 * first read and of a host read again, set up once in the analysis.
 * Private to src/analysis. */
#ifndef PM_ANALYSIS_PROJECT_H
#define PM_ANALYSIS_PROJECT_H

#include "perfmon/analysis.h"

/* Fill a->in.read_first (the first read: the projection, or under --stream
 * no value column), a->in.read_values and a->in.read_times (a host read again
 * with the projection, or for its times alone) from a->catalog and
 * a->opts. */
void pm_project_init(pm_analysis *a);

#endif
