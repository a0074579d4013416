/* order.h: the comparator every sort of doubles uses and the one median,
 * on the awkward rows (empty, one value, even and odd counts, duplicates,
 * negatives, infinities, values unsorted), against medians worked out by
 * hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/order.h"

static void test_cmp(void **state)
{
    (void)state;
    static const struct {
        double a, b;
        int want;
    } rows
        [] =
            {
                {1, 2, -1},
                {2, 1, 1},
                {3, 3, 0},
                {-0.0, 0.0, 0},
                {-INFINITY, -1e308, -1},
                {INFINITY, 1e308, 1},
                {-5, 5, -1},
                {NAN, 1, 0}, /* a NaN compares equal: callers sort finite values */
            };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(pm_cmp_double(&rows[i].a, &rows[i].b), rows[i].want);
}

static void test_median(void **state)
{
    (void)state;
    static const struct {
        size_t n;
        double x[6];
        double want;
    } rows[] = {
        {1, {7}, 7},
        {2, {4, 2}, 3},
        {3, {9, -1, 4}, 4},
        {4, {1, 1, 1, 5}, 1},
        {5, {5, 4, 3, 2, 1}, 3},
        {6, {-3, 10, 2, 2, 8, -7}, 2},
        {3, {-INFINITY, 0, INFINITY}, 0},
        {2, {1e308, 1e308}, INFINITY}, /* the mean of the two middle ones, as computed */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        double x[6];
        memcpy(x, rows[i].x, sizeof x);
        double m = pm_median(x, rows[i].n);
        assert_true(m == rows[i].want);
        for (size_t k = 1; k < rows[i].n; k++) /* sorted in place */
            assert_true(x[k - 1] <= x[k]);
        assert_true(pm_median_sorted(x, rows[i].n) == m);
    }
    assert_true(isnan(pm_median(NULL, 0)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cmp),
        cmocka_unit_test(test_median),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
