/* Bump allocation from huge-page blocks (include/perfmon/arena.h). */
#include "perfmon/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/invariant.h"
#include "perfmon/mem.h"
#include "perfmon/vec.h"

#if defined(__SANITIZE_ADDRESS__)
#define ARENA_BLOCKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_BLOCKS 0
#endif
#endif
#ifndef ARENA_BLOCKS
#define ARENA_BLOCKS 1
#endif

#define ALIGN ((size_t)64)

void pm_arena_init(pm_arena *a)
{
    memset(a, 0, sizeof *a);
    pthread_mutex_init(&a->lock, NULL);
}

/* The arena's invariants (with the lock held): the piece list within its
 * capacity; a current block only while one is being carved, and the bytes
 * left in it a multiple of ALIGN, so every carved array stays aligned. */
static void arena_check(const pm_arena *a)
{
    PM_ASSERT(a->npieces <= a->cap);
    PM_ASSERT(a->cap == 0 || a->pieces != NULL);
    PM_ASSERT(a->cur != NULL || a->left == 0);
    PM_ASSERT(a->left % ALIGN == 0 && ((uintptr_t)a->cur & (ALIGN - 1)) == 0);
}

/* Remember a piece to free; called with the lock held. */
static int keep(pm_arena *a, void *p, size_t bytes)
{
    if (PM_VEC_RESERVE(a->pieces, a->cap, a->npieces + 1, 16) != 0)
        return -1;
    a->pieces[a->npieces].p = p;
    a->pieces[a->npieces].bytes = bytes;
    a->npieces++;
    return 0;
}

static void *small_alloc(pm_arena *a, size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p)
        return NULL;
    if (keep(a, p, 0) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

void *pm_arena_alloc(pm_arena *a, size_t n, size_t size)
{
    size_t bytes;
    if (pm_mul_size(n, size, &bytes) != 0 || bytes > SIZE_MAX - ALIGN)
        return NULL;
    void *p = NULL;
    pthread_mutex_lock(&a->lock);
    arena_check(a);
    if (!ARENA_BLOCKS || bytes < PM_ARENA_BIG) {
        p = small_alloc(a, bytes);
        goto out;
    }
    if (!a->cur && a->heap_big < PM_ARENA_HEAP_FIRST &&
        bytes <= PM_ARENA_HEAP_FIRST - a->heap_big) {
        /* Aligned like a block's pieces: calloc leaves a fresh mapping
         * untouched, where aligned_alloc + memset would fault it all in. */
        char *raw = small_alloc(a, bytes + ALIGN - 1);
        if (raw) {
            a->heap_big += bytes;
            p = (void *)(((uintptr_t)raw + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1));
        }
        goto out;
    }
    bytes = (bytes + ALIGN - 1) & ~(ALIGN - 1);
    if (bytes > a->left) {
        size_t bb = bytes > PM_ARENA_BLOCK ? bytes : PM_ARENA_BLOCK;
        char *b = pm_block_alloc(bb);
        if (!b) {
            p = small_alloc(a, bytes); /* no mapping: try the heap */
            goto out;
        }
        if (keep(a, b, bb) != 0) {
            pm_block_free(b, bb);
            goto out;
        }
        a->cur = b;
        a->left = bb;
    }
    PM_ASSERT(bytes <= a->left);
    p = a->cur;
    a->cur += bytes;
    a->left -= bytes;
out:
    arena_check(a);
    pthread_mutex_unlock(&a->lock);
    return p;
}

void pm_arena_free(pm_arena *a)
{
    for (size_t i = 0; i < a->npieces; i++) {
        if (a->pieces[i].bytes)
            pm_block_free(a->pieces[i].p, a->pieces[i].bytes);
        else
            free(a->pieces[i].p);
    }
    free(a->pieces);
    a->pieces = NULL;
    a->npieces = a->cap = 0;
    a->cur = NULL;
    a->left = 0;
    a->heap_big = 0;
}
