/* vec.c - PM_VEC_RESERVE's doubling (see vec.h). */
#include "perfmon/vec.h"

#include "perfmon/error.h"
#include "perfmon/mem.h"

#include <stdint.h>
#include <stdlib.h>

int pm_vec_grow(void **p, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t max = elem ? SIZE_MAX / elem : SIZE_MAX;
    if (need > max)
        return PM_ENOMEM;
    size_t nc = *cap ? *cap : (first ? first : 1);
    while (nc < need)
        nc = nc > max / 2 ? max : nc * 2;
    if (nc > max)
        nc = max;
    void *np = pm_realloc_array(*p, nc, elem);
    if (!np)
        return PM_ENOMEM;
    *p = np;
    *cap = nc;
    return 0;
}
