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
/* the same to 10^17, in 64 bits (a load of the 128-bit table is two) */
static const uint64_t P10U[] = {1ull,
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
                                100000000000000000ull};
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

/* The 8 decimal digits of x < 10^8, most significant first, as the bytes
 * 0-9 of a little-endian word (byte 0 the first digit): x split into two
 * halves of 4 digits, each into two of 2, each into two digits, every
 * lane at once by a multiplication and a shift (x / 100 is x * 10486 >>
 * 20 for x < 10^4, x / 10 is x * 103 >> 10 for x < 100; no lane carries
 * into the next). */
static inline uint64_t swar8(uint32_t x)
{
    uint64_t v = (uint64_t)(x / 10000u) | ((uint64_t)(x % 10000u) << 32);
    uint64_t q = ((v * 10486u) >> 20) & 0x0000007F0000007Full;
    v = q | ((v - q * 100u) << 16);
    q = ((v * 103u) >> 10) & 0x000F000F000F000Full;
    return q | ((v - q * 10u) << 8);
}

#define ASCII0 0x3030303030303030ull

/* The digits of m < 10^17 in ASCII, right-aligned in d[0..24) (leading
 * zeros to the left), and d[24..48) zero bytes.  Returns the index in d
 * one past m's last digit that is not 0 (m > 0). */
static inline int digits24(uint64_t m, char *d)
{
    uint64_t w0 = 0, w1 = 0, w2 = swar8((uint32_t)(m % 100000000u));
    if (m >= 100000000u) {
        uint64_t h = m / 100000000u;
        w1 = swar8((uint32_t)(h % 100000000u));
        if (h >= 100000000u)
            w0 = swar8((uint32_t)(h / 100000000u));
    }
    uint64_t s[6] = {w0 | ASCII0, w1 | ASCII0, w2 | ASCII0, 0, 0, 0};
    memcpy(d, s, sizeof s);
    /* the highest byte that is not zero is the last digit that is not 0 */
    return w2   ? 24 - __builtin_clzll(w2) / 8
           : w1 ? 16 - __builtin_clzll(w1) / 8
                : 8 - __builtin_clzll(w0) / 8;
}

/* Copy 1 <= n <= 24 bytes from s to p, 8 at a time: up to 7 bytes past
 * p + n are overwritten and read past s + n.  (Not a loop, which the
 * compiler turns into a call of memcpy.) */
static inline void copy8s(char *p, const char *s, int n)
{
    memcpy(p, s, 8);
    if (n > 8) {
        memcpy(p + 8, s + 8, 8);
        if (n > 16)
            memcpy(p + 16, s + 16, 8);
    }
}

/* The loop of pm_fmt_double: m, the `digits` significant digits of
 * av = mant * 2^e2 rounded (ties to even), and *e, the decimal exponent
 * (from its lower bound in *e).  Returns 0 where printf must decide. */
static __attribute__((noinline)) int round_digits(uint64_t mant, int e2, double av, int digits,
                                                  int *ep, uint64_t *mp)
{
    static const double P10D[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    int e = *ep;
    uint64_t m = 0;
    uint64_t lo = P10U[digits - 1], hi = P10U[digits];
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
    *ep = e;
    *mp = m;
    return ok;
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
    if (v == 0) {
        /* "0" or "-0", whatever the digits */
        size_t neg = signbit(v) != 0;
        memcpy(buf, "-0", 3);
        if (!neg)
            memcpy(buf, "0", 2);
        return 1 + neg;
    }
    if (isinf(v))
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
    int ok = 0, dx = digits - 1 - e;
    if (digits <= 15 && dx <= 22 && dx >= -22) {
        /* The common case, straight on (the loop below when this is
         * near a tie or carries). */
        double sc = dx >= 0 ? av * P10D[dx] : av / P10D[-dx];
        uint64_t il = (uint64_t)sc;
        double fr = sc - (double)il, tol = sc * 0x1p-52;
        if (fabs(fr - 0.5) > tol) {
            m = il + (fr > 0.5);
            ok = m >= P10U[digits - 1] && m < P10U[digits];
        }
    }
    if (!ok)
        ok = round_digits(mant, e2, av, digits, &e, &m);
    if (!ok)
        return (size_t)snprintf(buf, 32, "%.*g", digits, v);
    /* m's digits, the trailing zeros left out: start[0..sig) */
    char d[48];
    const char *start = d + 24 - digits;
    int sig = digits24(m, d) - (24 - digits);
    char *p = buf;
    if (neg)
        *p++ = '-';
    if (e < -4 || e >= digits) {
        /* d[.ddd]e[+-]XX */
        *p++ = start[0];
        if (sig > 1) {
            *p++ = '.';
            copy8s(p, start + 1, sig - 1);
            p += sig - 1;
        }
        int ae = e < 0 ? -e : e;
        *p++ = 'e';
        *p++ = e < 0 ? '-' : '+';
        if (ae >= 100) {
            *p++ = (char)('0' + ae / 100);
            ae %= 100;
        }
        *p++ = (char)('0' + ae / 10);
        *p++ = (char)('0' + ae % 10);
    } else if (e >= 0) {
        /* e + 1 integer digits, then the fraction's digits if any */
        copy8s(p, start, e + 1);
        p += e + 1;
        if (sig > e + 1) {
            *p++ = '.';
            copy8s(p, start + e + 1, sig - e - 1);
            p += sig - e - 1;
        }
    } else {
        /* 0.0...0ddd: -e - 1 zeros after the point (at most 3) */
        memcpy(p, "0.000000", 8);
        p += 1 - e;
        copy8s(p, start, sig);
        p += sig;
    }
    *p = 0;
    return (size_t)(p - buf);
}
