/* vec.c - PM_VEC_RESERVE's doubling and PM_VEC_APPEND (see vec.h). */
#include "perfmon/vec.h"

#include "perfmon/error.h"
#include "perfmon/mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

int pm_vec_append(void **p, size_t *n, size_t *cap, const void *src, size_t nsrc, size_t elem)
{
    if (nsrc == 0)
        return 0;
    if (*n > SIZE_MAX - nsrc)
        return PM_ENOMEM;
    int rc = pm_vec_grow(p, cap, *n + nsrc, elem, *n + nsrc);
    if (rc)
        return rc;
    memcpy((char *)*p + *n * elem, src, nsrc * elem);
    *n += nsrc;
    return 0;
}
