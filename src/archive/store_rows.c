/* The backends' result rows (store_rows.h): the arrays that a query's
 * rows are appended to, and the time a run is added.  Below store.c and
 * both backends (store_sqlite.c, store_pg.c), which call nothing above. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfmon/mem.h"
#include "perfmon/vec.h"
#include "store_rows.h"

int pm_store_push_point(pm_store_point **p, size_t *n, size_t *cap, int64_t start_us, double timing,
                        const char *entry)
{
    if (PM_VEC_RESERVE(*p, *cap, *n + 1, 16) != 0)
        return PM_ENOMEM;
    char *e = pm_strdup(entry ? entry : "");
    if (!e)
        return PM_ENOMEM;
    (*p)[(*n)++] = (pm_store_point){.start_us = start_us, .timing = timing, .entry = e};
    return 0;
}

int pm_store_push_test(pm_store_test **t, size_t *n, size_t *cap, const char *test,
                       const pm_store_test *row)
{
    if (PM_VEC_RESERVE(*t, *cap, *n + 1, 16) != 0)
        return PM_ENOMEM;
    char *name = pm_strdup(test ? test : "");
    if (!name)
        return PM_ENOMEM;
    (*t)[*n] = *row;
    (*t)[(*n)++].test = name;
    return 0;
}

int pm_store_push_name(char ***names, size_t *n, size_t *cap, const char *name)
{
    if (PM_VEC_RESERVE(*names, *cap, *n + 1, 16) != 0)
        return PM_ENOMEM;
    char *s = pm_strdup(name ? name : "");
    if (!s)
        return PM_ENOMEM;
    (*names)[(*n)++] = s;
    return 0;
}

int64_t pm_store_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
