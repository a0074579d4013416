/* clock.h - the two clocks every sample carries. */
#ifndef PERFMON_CLOCK_H
#define PERFMON_CLOCK_H

#include <stdint.h>

#define PM_NS_PER_S 1000000000LL

/* CLOCK_MONOTONIC in nanoseconds: for intervals and deadlines. */
int64_t pm_mono_ns(void);
/* CLOCK_REALTIME in nanoseconds since the epoch: for wall-clock time. */
int64_t pm_wall_ns(void);
/* Process CPU time (user + system) of the calling process, nanoseconds. */
int64_t pm_self_cpu_ns(void);

/* Format a wall time (ns since epoch) as ISO 8601 UTC with microseconds
 * into out (at least 32 bytes). */
void pm_format_iso8601(int64_t wall_ns, char *out, unsigned long cap);

#endif
