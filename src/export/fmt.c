/* Fast formatting of doubles for the data exports: printf's %g costs a few
 * hundred nanoseconds, which dominates writing millions of points.
 *
 * pm_fmt_double gives exactly what printf("%.*g") gives (glibc: the exact
 * binary value rounded to the nearest, ties to even): the significant
 * digits are found by exact integer arithmetic on the double's mantissa
 * and exponent (128 bits), not by a floating-point multiplication, so no
 * value is rounded twice.  Values whose scaling does not fit in 128 bits
 * (below about 1e-22 or above 1e38 at 17 digits) go to snprintf. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "perfmon/endian.h"
#include "perfmon/export.h"

typedef unsigned __int128 u128;

#define P19 10000000000000000000ull
static const u128 P10[] = {1ull,
                           10ull,
                           100ull,
                           1000ull,
                           10000ull,
                           100000ull,
                           1000000ull,
                           10000000ull,
                           100000000ull,
                           1000000000ull,
                           10000000000ull,
                           100000000000ull,
                           1000000000000ull,
                           10000000000000ull,
                           100000000000000ull,
                           1000000000000000ull,
                           10000000000000000ull,
                           100000000000000000ull,
                           1000000000000000000ull,
                           P19,
                           (u128)P19 * 10u,
                           (u128)P19 * 100u,
                           (u128)P19 * 1000u};
#define MAX_POW 22 /* 10^22 < 2^74: with a 53-bit mantissa, below 2^127 */

static int bits128(u128 x)
{
    uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
    return hi ? 128 - __builtin_clzll(hi) : lo ? 64 - __builtin_clzll(lo) : 0;
}

/* *q = mant * 2^e2 * 10^d rounded to the nearest integer, ties to even,
 * exactly.  Returns -1 when that does not fit the 128-bit arithmetic (or
 * the result 64 bits). */
static int scale_round_any(uint64_t mant, int e2, int d, uint64_t *q)
{
    u128 num = mant, den = 1, quo, rem;
    int shift = 0;
    if (d > MAX_POW || d < -MAX_POW)
        return -1;
    if (d >= 0)
        num *= P10[d];
    else
        den = P10[-d];
    if (e2 >= 0) {
        if (bits128(num) + e2 > 126)
            return -1;
        num <<= e2;
    } else if (d >= 0) {
        shift = -e2;
        if (shift > 126)
            return -1;
    } else {
        if (bits128(den) - e2 > 126)
            return -1;
        den <<= -e2;
    }
    int up;
    if ((uint64_t)(num >> 64) == 0 && (uint64_t)(den >> 64) == 0 && (shift == 0 || shift < 64)) {
        /* the common case, in 64-bit arithmetic (a 128-bit division is a
         * library call) */
        uint64_t n64 = (uint64_t)num, d64 = (uint64_t)den, q64, r64;
        if (shift) {
            q64 = n64 >> shift;
            r64 = n64 & ((1ull << shift) - 1);
            uint64_t half = 1ull << (shift - 1);
            up = r64 > half || (r64 == half && (q64 & 1));
        } else {
            q64 = n64 / d64;
            r64 = n64 - q64 * d64;
            /* 2 * r64 cannot overflow: r64 < d64 < 2^63 here or d64 = 1 */
            up = d64 > 1 && (r64 > d64 - r64 || (r64 == d64 - r64 && (q64 & 1)));
        }
        *q = q64 + (uint64_t)up;
        return 0;
    }
    if (shift) {
        quo = num >> shift;
        rem = num & (((u128)1 << shift) - 1);
        u128 half = (u128)1 << (shift - 1);
        up = rem > half || (rem == half && (quo & 1));
    } else if (den == 1) {
        quo = num;
        up = 0;
    } else {
        quo = num / den;
        rem = num - quo * den;
        up = 2 * rem > den || (2 * rem == den && (quo & 1));
    }
    quo += (unsigned)up;
    if (quo >> 64)
        return -1;
    *q = (uint64_t)quo;
    return 0;
}

static inline int scale_round(uint64_t mant, int e2, int d, uint64_t *q)
{
    if (d >= 0 && d <= 19 && e2 < 0 && e2 > -64) {
        /* the common case: one 64 x 64 -> 128-bit product and a shift
         * below 64 */
        u128 prod = (u128)mant * (uint64_t)P10[d];
        int sh = -e2;
        u128 quo = prod >> sh;
        uint64_t rem = (uint64_t)prod & ((1ull << sh) - 1), half = 1ull << (sh - 1);
        quo += (unsigned)(rem > half || (rem == half && (quo & 1)));
        if (quo >> 64)
            return -1;
        *q = (uint64_t)quo;
        return 0;
    }
    return scale_round_any(mant, e2, d, q);
}

static const char D2[] = "00010203040506070809101112131415161718192021222324"
                         "25262728293031323334353637383940414243444546474849"
                         "50515253545556575859606162636465666768697071727374"
                         "75767778798081828384858687888990919293949596979899";

/* Write the n lowest decimal digits of *m right to left, ending before p;
 * *m keeps the digits above them.  Returns the new start. */
static inline char *digits_back(char *p, uint64_t *m, int n)
{
    uint64_t x = *m;
    /* Eight digits at a time in 32 bits: two short dependency chains
     * instead of one long one. */
    while (n >= 8) {
        uint32_t lo = (uint32_t)(x % 100000000u);
        x /= 100000000u;
        for (int k = 0; k < 4; k++) {
            p -= 2;
            memcpy(p, D2 + 2 * (lo % 100), 2);
            lo /= 100;
        }
        n -= 8;
    }
    for (; n >= 2; n -= 2) {
        p -= 2;
        memcpy(p, D2 + 2 * (x % 100), 2);
        x /= 100;
    }
    if (n) {
        *--p = (char)('0' + x % 10);
        x /= 10;
    }
    *m = x;
    return p;
}

size_t pm_fmt_double(char *buf, double v, int digits)
{
    if (isnan(v)) {
        memcpy(buf, "NaN", 4);
        return 3;
    }
    if (digits < 1)
        digits = 1;
    if (digits > PM_FMT_MAX_DIGITS)
        digits = PM_FMT_MAX_DIGITS;
    if (v == 0 || isinf(v))
        return (size_t)snprintf(buf, 32, "%.*g", digits, v);
    uint64_t bits = pm_f64_bits(v);
    int neg = (int)(bits >> 63);
    int ef = (int)((bits >> 52) & 0x7ff);
    uint64_t mant = bits & ((1ull << 52) - 1);
    int e2;
    if (ef == 0) {
        e2 = -1074; /* subnormal */
    } else {
        mant |= 1ull << 52;
        e2 = ef - 1075;
    }
    /* e: the decimal exponent after rounding to `digits` (%g's X).  First
     * a lower bound of floor(log10|v|) from the binary exponent (78913 /
     * 2^18 is just below log10(2), 78914 / 2^18 just above: the bound
     * holds for either sign), raised by one when a comparison proves it
     * (exact for the positive powers of ten a double holds; with a margin
     * below 1).  Then the rounded digits m tell: 10^P <= m means the
     * rounding carried, or the bound was one low: one more. */
    int lg2 = ef ? ef - 1023 : -1023;
    int e = lg2 >= 0 ? (lg2 * 78913) >> 18 : (lg2 * 78914) >> 18;
    static const double P10D[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    double av = fabs(v);
    if (e >= 0 && e < 22 && av >= P10D[e + 1])
        e++;
    else if (e < 0 && e > -22 && av * P10D[-e - 1] > 1.0 + 1e-12)
        e++;
    uint64_t m = 0;
    uint64_t lo = (uint64_t)P10[digits - 1], hi = (uint64_t)P10[digits];
    int ok = 0;
    for (int tries = 0; tries < 3; tries++) {
        int d = digits - 1 - e;
        if (digits <= 15 && d <= 22 && d >= -22) {
            /* In double: one multiplication or division by an exact power
             * of ten, so s is within s * 2^-53 of the exact value; that
             * decides the rounding unless s lies that close to a tie,
             * where the exact computation below decides.  s < 2^50. */
            double sc = d >= 0 ? av * P10D[d] : av / P10D[-d];
            uint64_t il = (uint64_t)sc; /* floor: sc >= 0 (no libm call) */
            double fr = sc - (double)il, tol = sc * 0x1p-52;
            if (fabs(fr - 0.5) > tol) {
                m = il + (fr > 0.5);
                if (m >= hi) {
                    e++;
                    continue;
                }
                ok = m >= lo;
                break;
            }
        }
        if (scale_round(mant, e2, d, &m))
            break;
        if (m >= hi) {
            e++;
        } else {
            /* below 10^(P-1) cannot happen with a lower bound; printf
             * decides if it ever did */
            ok = m >= lo;
            break;
        }
    }
    if (!ok)
        return (size_t)snprintf(buf, 32, "%.*g", digits, v);
    int nd = digits; /* digits of m */
    if (e < -4 || e >= digits) {
        /* d[.ddd]e[+-]XX */
        while (nd > 1 && m % 10 == 0) {
            m /= 10;
            nd--;
        }
        int ae = e < 0 ? -e : e;
        int ed = ae >= 100 ? 3 : 2;
        size_t len = (size_t)neg + 1 + (nd > 1 ? (size_t)nd : 0) + 2 + (size_t)ed;
        char *p = buf + len;
        *p = 0;
        uint64_t x = (uint64_t)ae;
        p = digits_back(p, &x, ed);
        *--p = e < 0 ? '-' : '+';
        *--p = 'e';
        if (nd > 1) {
            p = digits_back(p, &m, nd - 1);
            *--p = '.';
        }
        *--p = (char)('0' + m);
        if (neg)
            *--p = '-';
        return len;
    }
    /* Fixed: dec decimals, the trailing zeros of the fraction removed. */
    int dec = digits - 1 - e;
    while (dec >= 2 && m % 100 == 0) {
        m /= 100;
        dec -= 2;
        nd -= 2;
    }
    if (dec >= 1 && m % 10 == 0) {
        m /= 10;
        dec--;
        nd--;
    }
    int intd = nd > dec ? nd - dec : 1; /* integer digits ("0" at least) */
    size_t len = (size_t)neg + (size_t)intd + (dec ? 1 + (size_t)dec : 0);
    char *p = buf + len;
    *p = 0;
    if (dec) {
        p = digits_back(p, &m, dec);
        *--p = '.';
    }
    p = digits_back(p, &m, intd);
    if (neg)
        *--p = '-';
    return len;
}
