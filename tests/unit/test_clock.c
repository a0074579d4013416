/* pm_utc_iso*: UTC ISO 8601 text, checked against dates worked out by hand
 * (and by `date -u -d @N`): the epoch, leap days, the last second of year
 * 9999, times before the epoch, fractions truncated, never rounded up, and
 * the refusals (NaN, infinities, a buffer too small). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/clock.h"

static void want(int rc, const char *got, const char *exp)
{
    assert_string_equal(got, exp);
    assert_int_equal(rc, (int)strlen(exp));
}

static void test_seconds(void **state)
{
    (void)state;
    char b[64];
    want(pm_utc_iso(0, b, sizeof b), b, "1970-01-01T00:00:00Z");
    /* 19782 days of 86400 s after the epoch: 2024-02-29, a leap day */
    want(pm_utc_iso(1709164800.0, b, sizeof b), b, "2024-02-29T00:00:00Z");
    /* 2000 is a leap year (divisible by 400): 11016 days */
    want(pm_utc_iso(951782400.0, b, sizeof b), b, "2000-02-29T00:00:00Z");
    /* 1709164800 - 1 s: the 28th's last second; .999 floors, never rounds up */
    want(pm_utc_iso(1709164799.999, b, sizeof b), b, "2024-02-28T23:59:59Z");
    want(pm_utc_iso(253402300799.0, b, sizeof b), b, "9999-12-31T23:59:59Z");
    /* before the epoch the second is floored: -0.5 s is 23:59:59 of 1969-12-31 */
    want(pm_utc_iso(-0.5, b, sizeof b), b, "1969-12-31T23:59:59Z");
    want(pm_utc_iso(-86400.0, b, sizeof b), b, "1969-12-31T00:00:00Z");
}

static void test_refused(void **state)
{
    (void)state;
    char b[64];
    assert_int_equal(pm_utc_iso(NAN, b, sizeof b), -1);
    assert_string_equal(b, "");
    assert_int_equal(pm_utc_iso(INFINITY, b, sizeof b), -1);
    assert_int_equal(pm_utc_iso(-INFINITY, b, sizeof b), -1);
    assert_int_equal(pm_utc_iso(1e15, b, sizeof b), -1);
    /* 20 characters need 21 bytes */
    char small[20];
    assert_int_equal(pm_utc_iso(0, small, sizeof small), -1);
    assert_string_equal(small, "");
    char fits[21];
    want(pm_utc_iso(0, fits, sizeof fits), fits, "1970-01-01T00:00:00Z");
    assert_int_equal(pm_utc_iso_ns(0, 3, fits, sizeof fits), -1);
    assert_string_equal(fits, "");
}

static void test_fractions(void **state)
{
    (void)state;
    char b[64];
    int64_t leap = 1709164800LL * 1000000000LL;
    want(pm_utc_iso_ns(leap + 250000000, 3, b, sizeof b), b, "2024-02-29T00:00:00.250Z");
    want(pm_utc_iso_ns(leap + 250000000, 0, b, sizeof b), b, "2024-02-29T00:00:00Z");
    /* truncated: 999,999,999 ns is .999 with 3 digits, not the next second */
    want(pm_utc_iso_ns(leap - 1, 3, b, sizeof b), b, "2024-02-28T23:59:59.999Z");
    want(pm_utc_iso_ns(leap - 1, 9, b, sizeof b), b, "2024-02-28T23:59:59.999999999Z");
    want(pm_utc_iso_ns(leap + 5000, 6, b, sizeof b), b, "2024-02-29T00:00:00.000005Z");
    /* 1 ns before the epoch */
    want(pm_utc_iso_ns(-1, 3, b, sizeof b), b, "1969-12-31T23:59:59.999Z");
    /* digits are clamped to 0..9 */
    want(pm_utc_iso_ns(leap + 1, 12, b, sizeof b), b, "2024-02-29T00:00:00.000000001Z");
    /* beyond int64 nanoseconds: seconds and microseconds */
    want(pm_utc_iso_frac(253402300799LL, 123456, 6, b, sizeof b), b, "9999-12-31T23:59:59.123456Z");
    assert_int_equal(pm_utc_iso_frac(0, -1, 3, b, sizeof b), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seconds),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_fractions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
