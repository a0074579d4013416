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
/* Large arrays that live as long as their owner: an anonymous mapping
 * advised for transparent huge pages, so that filling a gigabyte costs a
 * few hundred page faults, not a quarter of a million (each fault is a trap
 * into the kernel; in a VM, a costly one).  Pages are zero until written.
 * Returns NULL for requests below PM_BLOCK_MIN_BYTES (callers then use
 * malloc, which keeps sanitizers' bounds checks on small inputs) or on
 * failure.  Free with pm_block_free(p, the same bytes). */
#define PM_BLOCK_MIN_BYTES ((size_t)8 << 20)
#define PM_BLOCK_ALIGN ((size_t)4096)
/* Blocks start on a huge page (2 MiB, x86-64 and arm64 with 4 KiB pages). */
#define PM_BLOCK_HUGE ((size_t)2 << 20)
void *pm_block_alloc(size_t bytes);
void pm_block_free(void *p, size_t bytes);
/* Give back the pages of [p, p + bytes) inside a block (p and bytes
 * multiples of PM_BLOCK_ALIGN); they read as zero afterwards. */
void pm_block_release(void *p, size_t bytes);
/* n rounded up to a multiple of PM_BLOCK_ALIGN; 0 on overflow. */
size_t pm_block_round(size_t n);
/* strdup that returns NULL for NULL. */
char *pm_strdup(const char *s);

#endif
