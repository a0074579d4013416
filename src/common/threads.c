/* The worker pool (threads.h): how many threads the work deserves, and
 * pm_pool_run, whose workers take the next item under the pool's lock. */
#include "perfmon/threads.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "perfmon/invariant.h"

size_t pm_thread_count(size_t work)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("PM_THREADS");
    if (env && *env)
        n = strtol(env, NULL, 10);
    if (n < 1)
        n = 1;
    if (n > 8)
        n = 8;
    if ((size_t)n > work)
        n = (long)(work ? work : 1);
    return (size_t)n;
}

size_t pm_pool_next(pm_pool *p)
{
    pthread_mutex_lock(&p->lock);
    PM_ASSERT(p->next <= p->n); /* each item claimed once, none past the end */
    size_t i = p->next < p->n ? p->next++ : p->n;
    pthread_mutex_unlock(&p->lock);
    PM_ASSERT(i <= p->n);
    return i;
}

void pm_pool_run(pm_pool *p, void *(*fn)(void *), size_t work)
{
    size_t nt = pm_thread_count(work);
    pthread_t th[8];
    PM_ASSERT(nt >= 1 && nt <= sizeof th / sizeof *th);
    size_t started = 0;
    for (size_t i = 1; i < nt; i++)
        if (pthread_create(&th[started], NULL, fn, p) == 0)
            started++;
    fn(p);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}
