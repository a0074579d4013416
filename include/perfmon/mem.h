/* mem.h - checked size arithmetic for allocations sized from input. */
#ifndef PERFMON_MEM_H
#define PERFMON_MEM_H

#include <stddef.h>
#include <stdint.h>

/* a * b into *out; returns 0, or -1 on overflow. */
static inline int pm_mul_size(size_t a, size_t b, size_t *out)
{
    return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

/* malloc(n * size) with overflow check; NULL on overflow or failure. */
void *pm_alloc_array(size_t n, size_t size);
/* realloc(p, n * size) with overflow check; on failure p is untouched. */
void *pm_realloc_array(void *p, size_t n, size_t size);
/* strdup that returns NULL for NULL. */
char *pm_strdup(const char *s);

#endif
