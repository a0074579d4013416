#include "perfmon/threads.h"

#include <stdlib.h>
#include <unistd.h>

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
