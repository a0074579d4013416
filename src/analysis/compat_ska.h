/* compat_ska.h - --compat=ska's columns (compat_ska.c).
 * Private to src/analysis. */
#ifndef PM_ANALYSIS_COMPAT_SKA_H
#define PM_ANALYSIS_COMPAT_SKA_H

#include "perfmon/analysis.h"

/* --compat=ska: make the SKA hosts' columns what SKA's DataFrame holds
 * (compat_ska.c): a column of any SKA host is given to all, zero where
 * missing or never valid; RAPL columns after a host's first missing key
 * are zeroed (SKA's KeyError).  Before the time axes are set up. */
int pm_compat_ska_prepare(pm_analysis *a, pm_error *err) PM_WUR;

#endif
