/* The failure of a stated invariant (invariant.h). */
#include <stdio.h>
#include <stdlib.h>

#include "perfmon/invariant.h"

void pm_assert_fail(const char *file, int line, const char *func, const char *expr)
{
    fprintf(stderr, "perfmon: %s:%d: %s: invariant failed: %s\n", file, line, func, expr);
    fflush(stderr);
    abort();
}
