#include "perfmon/mem.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

void *pm_block_alloc(size_t bytes)
{
    if (bytes < PM_BLOCK_MIN_BYTES)
        return NULL;
    void *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED)
        return NULL;
    (void)madvise(b, bytes, MADV_HUGEPAGE); /* a hint: fine where THP is off */
    return b;
}

void pm_block_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes);
}

void pm_block_release(void *p, size_t bytes)
{
    if (p && bytes)
        (void)madvise(p, bytes, MADV_DONTNEED);
}

size_t pm_block_round(size_t n)
{
    if (n > SIZE_MAX - (PM_BLOCK_ALIGN - 1))
        return 0;
    return (n + PM_BLOCK_ALIGN - 1) / PM_BLOCK_ALIGN * PM_BLOCK_ALIGN;
}
