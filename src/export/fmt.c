/* Fast formatting of doubles for the data exports: printf's %g costs a few
 * hundred nanoseconds, which dominates writing millions of points. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "perfmon/export.h"

static const double POW10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
                               1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17};

size_t pm_fmt_double(char *buf, double v, int digits)
{
    if (isnan(v)) {
        memcpy(buf, "NaN", 4);
        return 3;
    }
    if (digits < 1)
        digits = 1;
    if (digits > 15)
        digits = 15;
    double av = fabs(v);
    if (av == 0) {
        memcpy(buf, "0", 2);
        return 1;
    }
    if (!isfinite(v) || av >= 1e15 || av < 1e-4)
        return (size_t)snprintf(buf, 32, "%.*g", digits, v);
    /* e with av in [10^e, 10^(e+1)), by table instead of log10: a binary
     * search over [0, 14] (av < 1e15 here), a short scan below 1. */
    int e;
    if (av >= 1) {
        int lo = 0, hi = 14; /* POW10[lo] <= av < POW10[hi + 1] */
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (av >= POW10[mid])
                lo = mid;
            else
                hi = mid - 1;
        }
        e = lo;
    } else {
        static const double NEG[] = {1, 1e-1, 1e-2, 1e-3, 1e-4};
        e = -1;
        while (e > -4 && av < NEG[-e])
            e--;
    }
    int dec = digits - 1 - e;            /* decimals to keep */
    if (dec < 0)
        dec = 0;
    if (dec > 17)
        dec = 17;
    double scaled = av * POW10[dec];
    if (scaled >= 9e18)
        return (size_t)snprintf(buf, 32, "%.*g", digits, v);
    uint64_t m = (uint64_t)(scaled + 0.5);
    /* Digits from the right, two per division: the fraction, the point,
     * then the integer part (at least "0"; a rounding carry simply adds a
     * digit).  Trailing zeros of the fraction are cut off afterwards. */
    static const char D2[] = "00010203040506070809101112131415161718192021222324"
                             "25262728293031323334353637383940414243444546474849"
                             "50515253545556575859606162636465666768697071727374"
                             "75767778798081828384858687888990919293949596979899";
    char tmp[48];
    char *end = tmp + sizeof tmp, *p = end;
    int fd = dec;
    for (; fd >= 2; fd -= 2) {
        unsigned r = (unsigned)(m % 100);
        m /= 100;
        p -= 2;
        memcpy(p, D2 + 2 * r, 2);
    }
    if (fd) {
        *--p = (char)('0' + m % 10);
        m /= 10;
    }
    if (dec > 0) {
        while (end > p && end[-1] == '0')
            end--;
        *--p = '.';
        if (end == p + 1)
            end = p; /* no fraction left: no point either */
    }
    while (m >= 100) {
        unsigned r = (unsigned)(m % 100);
        m /= 100;
        p -= 2;
        memcpy(p, D2 + 2 * r, 2);
    }
    if (m >= 10) {
        p -= 2;
        memcpy(p, D2 + 2 * m, 2);
    } else {
        *--p = (char)('0' + m);
    }
    if (v < 0)
        *--p = '-';
    size_t o = (size_t)(end - p);
    memcpy(buf, p, o);
    buf[o] = 0;
    return o;
}
