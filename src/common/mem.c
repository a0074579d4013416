/* Checked allocation (mem.h): arrays whose count x size is checked for
 * overflow before allocating, and large blocks mapped whole so that their
 * pages can be given back early. */
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

/* A mapping aligned to huge pages can be backed by them from its first
 * byte. */
#define HUGE_PAGE PM_BLOCK_HUGE

void *pm_block_alloc(size_t bytes)
{
    if (bytes < PM_BLOCK_MIN_BYTES)
        return NULL;
    size_t len = pm_block_round(bytes);
    if (!len || len > SIZE_MAX - HUGE_PAGE)
        return NULL;
    char *m =
        mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    /* Keep the aligned part; give the rest back. */
    uintptr_t a = ((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    size_t head = a - (uintptr_t)m;
    if (head)
        munmap(m, head);
    if (HUGE_PAGE - head)
        munmap((char *)a + len, HUGE_PAGE - head);
    (void)madvise((void *)a, len, MADV_HUGEPAGE); /* a hint: fine where THP is off */
    return (void *)a;
}

void pm_block_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, pm_block_round(bytes));
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
