/* hwinfo.h - the CPU's identity, as the hardware metadata records it.
 *
 * Ownership: the caller owns the output structure.
 */
#ifndef PERFMON_HWINFO_H
#define PERFMON_HWINFO_H

#include "perfmon/source.h"

typedef struct pm_cpu_ident {
    char vendor[64];       /* CPUID vendor string, "" when unknown */
    int family, model;     /* /proc/cpuinfo "cpu family" and "model" */
    const char *microarch; /* "skylake-sp", "zen3", ... or "unknown" (static) */
} pm_cpu_ident;

/* Read ctx's cpuinfo.  Returns 0, or PM_ENOENT when it names no vendor. */
int pm_hwinfo_cpu_ident(const pm_sctx *ctx, pm_cpu_ident *id) PM_WUR;

#endif
