/* threads.h - how many worker threads a parallel step uses. */
#ifndef PERFMON_THREADS_H
#define PERFMON_THREADS_H

#include <pthread.h>
#include <stddef.h>

/* Worker threads for work items: one per online CPU, at most 8, never more
 * than work; the environment variable PM_THREADS overrides the CPU count. */
size_t pm_thread_count(size_t work);

/* A pool of worker threads taking items 0..n-1 in turn.  Each worker runs
 * fn(pool); items are claimed under lock with pm_pool_next(). */
typedef struct pm_pool {
    size_t n;
    size_t next;
    size_t done;
    pthread_mutex_t lock;
    void *ctx;
} pm_pool;

/* Claim the next item; returns n when none is left. */
size_t pm_pool_next(pm_pool *p);
/* Run fn with one thread per CPU (at most 8, PM_THREADS overrides, never
 * more than work); the caller's thread is one of them. */
void pm_pool_run(pm_pool *p, void *(*fn)(void *), size_t work);

#endif
