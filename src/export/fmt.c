/* Fast formatting of doubles for the data exports: printf's %g costs a few
 * hundred nanoseconds, which dominates writing millions of points. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "perfmon/export.h"

static const double POW10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
                               1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17};
static const uint64_t POW10I[] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
                                  10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
                                  100000000000ull, 1000000000000ull, 10000000000000ull,
                                  100000000000000ull, 1000000000000000ull,
                                  10000000000000000ull, 100000000000000000ull,
                                  1000000000000000000ull, 10000000000000000000ull};

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
    /* e with av in [10^e, 10^(e+1)): from the binary exponent (log10(2)
     * ~ 1233 / 4096), then one comparison; a short scan below 1. */
    int e;
    if (av >= 1) {
        uint64_t bits;
        memcpy(&bits, &av, sizeof bits);
        int e2 = (int)((bits >> 52) & 0x7ff) - 1023; /* 0..49 here */
        e = (e2 * 1233) >> 12;
        if (e < 14 && av >= POW10[e + 1])
            e++;
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
    /* Trailing zeros of the fraction go first, so that the length is
     * known and the digits are written in place, right to left, two per
     * division. */
    int nd = e + 1 + dec; /* digits of m, but for rounding */
    if (nd < 1)
        nd = 1;
    while (nd > 1 && m < POW10I[nd - 1])
        nd--;
    while (nd < 20 && m >= POW10I[nd])
        nd++;
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
    int intd = nd > dec ? nd - dec : 1;  /* integer digits ("0" at least) */
    size_t len = (size_t)(v < 0) + (size_t)intd + (dec ? 1 + (size_t)dec : 0);
    char *p = buf + len;
    *p = 0;
    static const char D2[] = "00010203040506070809101112131415161718192021222324"
                             "25262728293031323334353637383940414243444546474849"
                             "50515253545556575859606162636465666768697071727374"
                             "75767778798081828384858687888990919293949596979899";
    if (dec) {
        int fd = dec;
        for (; fd >= 2; fd -= 2) {
            p -= 2;
            memcpy(p, D2 + 2 * (m % 100), 2);
            m /= 100;
        }
        if (fd) {
            *--p = (char)('0' + m % 10);
            m /= 10;
        }
        *--p = '.';
    }
    int id = intd;
    for (; id >= 2; id -= 2) {
        p -= 2;
        memcpy(p, D2 + 2 * (m % 100), 2);
        m /= 100;
    }
    if (id)
        *--p = (char)('0' + m % 10);
    if (v < 0)
        *--p = '-';
    return len;
}
