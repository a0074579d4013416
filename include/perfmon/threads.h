/* threads.h - how many worker threads a parallel step uses. */
#ifndef PERFMON_THREADS_H
#define PERFMON_THREADS_H

#include <stddef.h>

/* Worker threads for work items: one per online CPU, at most 8, never more
 * than work; the environment variable PM_THREADS overrides the CPU count. */
size_t pm_thread_count(size_t work);

#endif
