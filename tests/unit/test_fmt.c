/* pm_fmt_double (the number formatter of --data and --csv) against the C
 * library's printf("%.*g"), value by value, on values of several shapes:
 * integers, exact ties at the rounding digit, tiny and huge exponents,
 * subnormals, signed zeros and infinities, values next to powers of ten
 * and to the point where rounding carries into a new digit, random bit
 * patterns and values shaped like sampled data.
 *
 * PM_FMT_VALUES sets the number of values (default 1,000,000, 20,000
 * under valgrind); `make fmt-sweep` runs 50,000,000. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/export.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void)
{
    /* xorshift64*: reproducible from run to run */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

static double from_bits(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static const int DIGITS[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
#define NDIGITS (sizeof DIGITS / sizeof DIGITS[0])

enum { S_INT, S_TIE, S_EXP, S_SUB, S_SPECIAL, S_POW10, S_CARRY, S_RANDOM, S_DATA, NSHAPES };
static const char *const SHAPE[NSHAPES] = {"integers",   "ties",        "exponents",
                                           "subnormals", "specials",    "near 10^k",
                                           "carries",    "random bits", "data-like"};

static double p10(int k)
{
    char s[16];
    snprintf(s, sizeof s, "1e%d", k);
    return strtod(s, NULL); /* correctly rounded, unlike pow() */
}

static double make(int shape, int digits)
{
    uint64_t r = next();
    switch (shape) {
    case S_INT:
        /* 1 to 18 decimal digits, and the odd power of two */
        if (r % 16 == 0)
            return ldexp(1.0, (int)(r >> 8) % 64);
        return (double)((r >> 4) % (uint64_t)p10(1 + (int)((r >> 60) % 18)));
    case S_TIE: {
        /* (2m+1) / 2^k is exact; with m of about `digits` digits the
         * rounding digit is a 5 followed by nothing: a tie for %g. */
        int k = 1 + (int)(r % 12);
        uint64_t m = (r >> 8) % (uint64_t)p10(digits < 15 ? digits : 15);
        double x = ldexp((double)(2 * m + 1), -k);
        if (r & (1ull << 63))
            x = (double)(m / 10 * 10 + 5) / p10((int)((r >> 4) % 4)); /* decimal ties */
        return r & (1ull << 62) ? -x : x;
    }
    case S_EXP: return ldexp(1.0 + (double)(r >> 12) * 0x1p-52, (int)(r % 2100) - 1070);
    case S_SUB: return from_bits((r >> 12) | ((r & 1) << 63));
    case S_SPECIAL: {
        static const double sp[] = {0.0,      -0.0,
                                    INFINITY, -INFINITY,
                                    DBL_MAX,  -DBL_MAX,
                                    DBL_MIN,  DBL_TRUE_MIN,
                                    1.0,      -1.0,
                                    0.5,      1e-4,
                                    1e-5,     9.5,
                                    0.95,     1e15,
                                    1e16,     1e17,
                                    1e21,     1e22,
                                    1e23,     123456789012345678.0};
        return sp[r % (sizeof sp / sizeof sp[0])];
    }
    case S_POW10: {
        double x = p10((int)(r % 80) - 40);
        for (int u = (int)((r >> 8) % 7) - 3; u != 0; u += u < 0 ? 1 : -1)
            x = nextafter(x, u < 0 ? 0 : INFINITY);
        return x;
    }
    case S_CARRY: {
        /* 9.99...95 at `digits`: rounding carries into a new digit (and
         * may switch %g between fixed and exponent form). */
        double x = (p10(digits) - 0.5) / p10(digits - (int)(r % 24) + 8);
        for (int u = (int)((r >> 8) % 5) - 2; u != 0; u += u < 0 ? 1 : -1)
            x = nextafter(x, u < 0 ? 0 : INFINITY);
        return x;
    }
    case S_RANDOM: {
        double x = from_bits(r);
        return isnan(x) ? 1.5 : x;
    }
    default:
        switch (r % 4) {
        case 0: return 1.7e9 + (double)(r >> 20) * 1e-6;
        case 1: return (double)((r >> 8) % 100000000) / 1000.0;
        case 2: return ldexp((double)(r >> 11), -53) * 1e10;
        default: return ldexp((double)(r >> 11), -53) * 100.0;
        }
    }
}

static size_t values_wanted(void)
{
    const char *s = getenv("PM_FMT_VALUES");
    if (s && *s)
        return strtoull(s, NULL, 10);
    const char *pre = getenv("LD_PRELOAD");
    return pre && strstr(pre, "vgpreload") ? 20000 : 1000000;
}

static void test_against_printf(void **state)
{
    (void)state;
    size_t n = values_wanted(), bad[NSHAPES] = {0}, seen[NSHAPES] = {0}, reported = 0;
    char a[64], b[64];
    for (size_t i = 0; i < n; i++) {
        int shape = (int)(i % NSHAPES);
        int digits = DIGITS[(i / NSHAPES) % NDIGITS];
        double v = make(shape, digits);
        /* the promise is 32 bytes of buf: nothing written past them */
        memset(a + 32, 0x5a, sizeof a - 32);
        size_t len = pm_fmt_double(a, v, digits);
        for (size_t k = 32; k < sizeof a; k++)
            if (a[k] != 0x5a)
                fail_msg("%%.%dg of %a: byte %zu past the 32 written", digits, v, k);
        snprintf(b, sizeof b, "%.*g", digits, v);
        seen[shape]++;
        if (len != strlen(a) || strcmp(a, b) != 0) {
            bad[shape]++;
            if (reported++ < 10)
                print_message("%s: %%.%dg of %a: printf %s, pm_fmt_double %s\n", SHAPE[shape],
                              digits, v, b, a);
        }
    }
    size_t total = 0;
    for (int s = 0; s < NSHAPES; s++) {
        print_message("%-12s %10zu values %6zu differ\n", SHAPE[s], seen[s], bad[s]);
        total += bad[s];
    }
    assert_int_equal(total, 0);
}

static void test_fixed_rows(void **state)
{
    (void)state;
    static const struct {
        double v;
        int digits;
        const char *want;
    } rows[] = {
        {0.5, 1, "0.5"},
        {2.5, 1, "2"}, /* a tie goes to even */
        {3.5, 1, "4"},
        {0.125, 2, "0.12"}, /* exact tie in binary: even */
        {0.375, 2, "0.38"},
        {1234567.0, 6, "1.23457e+06"},
        {999999.5, 6, "1e+06"}, /* tie, carry, exponent form */
        {0.0001, 6, "0.0001"},
        {0.00009999995, 6, "0.0001"},
        {1e-5, 6, "1e-05"},
        {-0.0, 6, "-0"},
        {0.0, 17, "0"},
        {-1.5, 17, "-1.5"},
        {-0.00012345678901234567, 17, "-0.00012345678901234567"},
        {-1.2345678901234567e-300, 17, "-1.2345678901234568e-300"},
        {-12345678901234567.0, 17, "-12345678901234568"},
        {1700000980.0, 13, "1700000980"},
        {70.0121, 6, "70.0121"},
        {1e100, 6, "1e+100"},
        {1700000000.123456, 13, "1700000000.123"},
        {0.1, 17, "0.10000000000000001"},
        {NAN, 6, "NaN"},
        {-INFINITY, 6, "-inf"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t len = pm_fmt_double(buf, rows[i].v, rows[i].digits);
        assert_string_equal(buf, rows[i].want);
        assert_int_equal(len, strlen(rows[i].want));
    }
    /* 17 digits read back to the same double */
    for (int i = 0; i < 100000; i++) {
        double v = from_bits(next());
        if (!isfinite(v))
            continue;
        pm_fmt_double(buf, v, 17);
        double back = strtod(buf, NULL);
        assert_memory_equal(&back, &v, sizeof v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_rows),
        cmocka_unit_test(test_against_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
