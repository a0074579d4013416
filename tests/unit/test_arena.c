/* The analysis arena: zeroed, aligned, distinct, thread-safe memory, all
 * given back at once; big blocks and small requests alike. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/arena.h"

static void assert_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            fail_msg("byte %zu is %u, want 0", i, p[i]);
}

static void test_sizes(void **state)
{
    (void)state;
    pm_arena a;
    pm_arena_init(&a);
    /* small, just under and over the block threshold, and bigger than a block */
    const size_t sizes[] = {
        1, 100, PM_ARENA_BIG - 1, PM_ARENA_BIG, 3 * PM_ARENA_BIG + 5, PM_ARENA_BLOCK + 4096, 7};
    unsigned char *p[7];
    for (size_t i = 0; i < 7; i++) {
        p[i] = pm_arena_alloc(&a, sizes[i], 1);
        assert_non_null(p[i]);
        if (sizes[i] >= PM_ARENA_BIG)
            assert_int_equal((uintptr_t)p[i] % 64, 0);
        assert_zero(p[i], sizes[i]);
        memset(p[i], 0xA0 + (int)i, sizes[i]); /* all of it is writable */
    }
    /* no two overlap: each still holds its own pattern */
    for (size_t i = 0; i < 7; i++)
        for (size_t k = 0; k < sizes[i]; k += 997)
            assert_int_equal(p[i][k], 0xA0 + (int)i);
    pm_arena_free(&a);
    assert_int_equal(a.npieces, 0);
    /* usable again after a free */
    assert_non_null(pm_arena_alloc(&a, 10, 8));
    pm_arena_free(&a);
    pthread_mutex_destroy(&a.lock);
}

static void test_overflow(void **state)
{
    (void)state;
    pm_arena a;
    pm_arena_init(&a);
    assert_null(pm_arena_alloc(&a, SIZE_MAX / 2, 4));
    assert_null(pm_arena_alloc(&a, 1, SIZE_MAX));
    pm_arena_free(&a);
    pthread_mutex_destroy(&a.lock);
}

/* A small analysis's big arrays come from the heap, not from a block that
 * a first touch backs with a whole huge page; past PM_ARENA_HEAP_FIRST
 * they are carved from blocks. */
static void test_heap_first(void **state)
{
    (void)state;
    pm_arena a;
    pm_arena_init(&a);
    size_t big = 460800, got = 0; /* 57,600 doubles: a 16 x 3,600 job's scratch */
    while (got + big <= PM_ARENA_HEAP_FIRST) {
        unsigned char *p = pm_arena_alloc(&a, big, 1);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 64, 0);
        assert_zero(p, big);
        memset(p, 0x5A, big);
        got += big;
    }
    size_t nheap = a.npieces;
    for (size_t i = 0; i < nheap; i++)
        assert_int_equal(a.pieces[i].bytes, 0); /* calloc'd, no block */
    assert_null(a.cur);
    unsigned char *p = pm_arena_alloc(&a, big, 1);
    assert_non_null(p);
    assert_zero(p, big);
#if !defined(__SANITIZE_ADDRESS__)
    assert_int_equal(a.npieces, nheap + 1);
    assert_true(a.pieces[nheap].bytes >= PM_ARENA_BLOCK); /* now a block */
    assert_ptr_equal(a.pieces[nheap].p, p);
#endif
    pm_arena_free(&a);
    assert_int_equal(a.heap_big, 0);
    pthread_mutex_destroy(&a.lock);
}

typedef struct job {
    pm_arena *a;
    unsigned char *got[64];
    int id;
} job;

static void *grab(void *arg)
{
    job *j = arg;
    for (int i = 0; i < 64; i++) {
        j->got[i] = pm_arena_alloc(j->a, PM_ARENA_BIG + (size_t)i * 1000, 1);
        if (j->got[i])
            memset(j->got[i], j->id, PM_ARENA_BIG + (size_t)i * 1000);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    pm_arena a;
    pm_arena_init(&a);
    job jobs[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        jobs[t].a = &a;
        jobs[t].id = t + 1;
        assert_int_equal(pthread_create(&th[t], NULL, grab, &jobs[t]), 0);
    }
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    /* every piece kept its thread's bytes: no two threads got the same memory */
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < 64; i++) {
            assert_non_null(jobs[t].got[i]);
            size_t n = PM_ARENA_BIG + (size_t)i * 1000;
            assert_int_equal(jobs[t].got[i][0], t + 1);
            assert_int_equal(jobs[t].got[i][n - 1], t + 1);
        }
    pm_arena_free(&a);
    pthread_mutex_destroy(&a.lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_heap_first),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
