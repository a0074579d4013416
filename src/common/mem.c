#include "perfmon/mem.h"

#include <stdlib.h>
#include <string.h>

void *pm_alloc_array(size_t n, size_t size)
{
    size_t total;
    if (pm_mul_size(n, size, &total) != 0)
        return NULL;
    return malloc(total ? total : 1);
}

void *pm_realloc_array(void *p, size_t n, size_t size)
{
    size_t total;
    if (pm_mul_size(n, size, &total) != 0)
        return NULL;
    return realloc(p, total ? total : 1);
}

char *pm_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}
