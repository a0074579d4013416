/* arena.h - storage for the big arrays of one analysis, freed together.
 *
 * An analysis of 64 nodes x one day fills gigabytes with arrays that all
 * live exactly as long as the analysis (time axes, derived series, their
 * quality flags, the all-node aggregates).  Taken one by one from malloc,
 * each is a fresh mapping of 4 KiB pages, and each page costs a fault:
 * on a virtual machine some 15 us, seconds in all.  An arena carves them
 * from a few large blocks backed by transparent huge pages instead
 * (pm_block_alloc), and gives everything back at once.
 *
 * Small requests (and every request in sanitizer builds) still come from
 * calloc, one by one, so that AddressSanitizer and valgrind keep checking
 * their bounds; the arena only remembers them to free them.  So do the
 * first PM_ARENA_HEAP_FIRST bytes of big requests: a block's first touch
 * costs a whole 2 MiB huge page, which a small analysis (16 hosts x 3,600
 * samples: a few scratch arrays of 0.5 MiB) would mostly leave unused.
 *
 * Memory is zeroed.  Allocation is thread-safe; pm_arena_free is not.
 */
#ifndef PERFMON_ARENA_H
#define PERFMON_ARENA_H

#include <pthread.h>
#include <stddef.h>

/* Requests from this size up are carved from blocks. */
#define PM_ARENA_BIG ((size_t)64 << 10)
/* Blocks are at least this big (the last one's untouched tail costs
 * address space, not memory). */
#define PM_ARENA_BLOCK ((size_t)64 << 20)
/* Big requests come from calloc until they add up to this much. */
#define PM_ARENA_HEAP_FIRST ((size_t)8 << 20)

typedef struct pm_arena_piece {
    void *p;
    size_t bytes; /* 0: from calloc */
} pm_arena_piece;

typedef struct pm_arena {
    pthread_mutex_t lock;
    char *cur; /* free space in the newest block */
    size_t left;
    pm_arena_piece *pieces; /* blocks and calloc'd requests, to free */
    size_t npieces, cap;
    size_t heap_big; /* bytes of big requests served by calloc */
} pm_arena;

void pm_arena_init(pm_arena *a);
/* n * size zeroed bytes, aligned to 64; NULL on overflow or failure. */
void *pm_arena_alloc(pm_arena *a, size_t n, size_t size);
/* Frees everything allocated from a; a can be used again. */
void pm_arena_free(pm_arena *a);

#endif
