/* PM_VEC_RESERVE: the capacities it picks by hand (first, then doubling),
 * values kept across reallocations, and the overflow path leaving the
 * array and its capacity as they were. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/error.h"
#include "perfmon/vec.h"

static void test_doubling(void **state)
{
    (void)state;
    int *v = NULL;
    size_t n = 0, cap = 0;
    /* capacities seen while appending 1..100 from a first of 16: 16, 32, 64, 128 */
    size_t seen[8], nseen = 0;
    for (int i = 1; i <= 100; i++) {
        assert_int_equal(PM_VEC_RESERVE(v, cap, n + 1, 16), 0);
        if (!nseen || seen[nseen - 1] != cap)
            seen[nseen++] = cap;
        v[n++] = i;
    }
    assert_int_equal(nseen, 4);
    assert_int_equal(seen[0], 16);
    assert_int_equal(seen[1], 32);
    assert_int_equal(seen[2], 64);
    assert_int_equal(seen[3], 128);
    long sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    assert_int_equal(sum, 5050); /* 100 * 101 / 2 */
    /* room already there: nothing moves */
    int *before = v;
    assert_int_equal(PM_VEC_RESERVE(v, cap, 128, 16), 0);
    assert_ptr_equal(v, before);
    assert_int_equal(cap, 128);
    /* a jump past twice the capacity doubles until it fits: 128 -> 1024 */
    assert_int_equal(PM_VEC_RESERVE(v, cap, 1000, 16), 0);
    assert_int_equal(cap, 1024);
    assert_int_equal(v[99], 100);
    free(v);
}

static void test_first(void **state)
{
    (void)state;
    double *v = NULL;
    size_t cap = 0;
    /* an empty array asked for more than first: first doubled, 4 -> 8 -> 16 */
    assert_int_equal(PM_VEC_RESERVE(v, cap, 9, 4), 0);
    assert_int_equal(cap, 16);
    free(v);
    v = NULL;
    cap = 0;
    /* first 0 means 1 */
    assert_int_equal(PM_VEC_RESERVE(v, cap, 1, 0), 0);
    assert_int_equal(cap, 1);
    free(v);
}

static void test_overflow(void **state)
{
    (void)state;
    struct big {
        char b[64];
    } *v = NULL;
    size_t cap = 0;
    assert_int_equal(PM_VEC_RESERVE(v, cap, 2, 16), 0);
    struct big *kept = v;
    size_t kept_cap = cap;
    /* need * 64 bytes does not fit size_t: refused before any realloc */
    assert_int_equal(PM_VEC_RESERVE(v, cap, SIZE_MAX / 64 + 1, 16), PM_ENOMEM);
    assert_ptr_equal(v, kept);
    assert_int_equal(cap, kept_cap);
    assert_int_equal(PM_VEC_RESERVE(v, cap, SIZE_MAX, 16), PM_ENOMEM);
    assert_ptr_equal(v, kept);
    assert_int_equal(cap, kept_cap);
    /* the function itself, with an element that alone overflows twice */
    void *p = v;
    size_t c = cap;
    assert_int_equal(pm_vec_grow(&p, &c, c + 1, SIZE_MAX / 2 + 1, 1), PM_ENOMEM);
    assert_ptr_equal(p, kept);
    assert_int_equal(c, kept_cap);
    free(v);
}

/* PM_VEC_APPEND: an empty source is nothing, the first append takes
 * exactly what it needs, a second keeps the first's values and the source's
 * order, and a count that would overflow fails with everything untouched. */
static void test_append(void **state)
{
    (void)state;
    int *a = NULL;
    size_t n = 0, cap = 0;
    const int one[3] = {1, 2, 3}, two[2] = {4, 5};
    assert_int_equal(PM_VEC_APPEND(a, n, cap, one, 0), 0);
    assert_null(a);
    assert_int_equal(n, 0);
    assert_int_equal(PM_VEC_APPEND(a, n, cap, one, 3), 0);
    assert_int_equal(n, 3);
    assert_int_equal(cap, 3);
    assert_int_equal(PM_VEC_APPEND(a, n, cap, two, 2), 0);
    assert_int_equal(n, 5);
    assert_true(cap >= 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(a[i], i + 1);
    int *keep = a;
    size_t kcap = cap, big = SIZE_MAX - 1;
    assert_int_equal(pm_vec_append((void **)&a, &big, &cap, two, 2, sizeof *a), PM_ENOMEM);
    assert_ptr_equal(a, keep);
    assert_int_equal(big, SIZE_MAX - 1);
    assert_int_equal(cap, kcap);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doubling),
        cmocka_unit_test(test_first),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_append),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
