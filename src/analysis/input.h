/* input.h - the input stage (input.c): the files -> a->hosts, and
 * a host read again (here, or from its rank under mpirun).
 * Private to src/analysis. */
#ifndef PM_ANALYSIS_INPUT_H
#define PM_ANALYSIS_INPUT_H

#include <stddef.h>

#include "perfmon/analysis.h"

/* Collect the input files of paths, read them (in parallel), and group the
 * profiles into a->hosts (sorted by name, several files per host merged).
 * Warnings and ignored files go to a. */
int pm_input_load(pm_analysis *a, const char *const *paths, size_t npaths, pm_error *err) PM_WUR;
/* Host h's merged profile read again (input.c), with the analysis's column
 * projection (values) or its times alone: the same files, clock fix, GPU
 * split and merge as pm_input_load.  *out is owned by the caller. */
int pm_input_host_load(const pm_analysis *a, size_t h, int values, pm_profile **out,
                       pm_error *err) PM_WUR;
/* Host h will not be loaded in this pass (a worker that failed before):
 * under mpirun, its profile is taken from the other ranks and dropped. */
void pm_input_host_drop(const pm_analysis *a, size_t h);

#endif
