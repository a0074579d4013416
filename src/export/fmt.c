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
    /* e with av in [10^e, 10^(e+1)), by table instead of log10 */
    int e;
    if (av >= 1) {
        e = 0;
        while (e < 15 && av >= POW10[e + 1])
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
    char tmp[40];
    size_t n = 0;
    /* digits of m, least significant first, two at a time */
    static const char D2[] = "00010203040506070809101112131415161718192021222324"
                             "25262728293031323334353637383940414243444546474849"
                             "50515253545556575859606162636465666768697071727374"
                             "75767778798081828384858687888990919293949596979899";
    while (m >= 100) {
        unsigned r = (unsigned)(m % 100);
        m /= 100;
        tmp[n++] = D2[2 * r + 1];
        tmp[n++] = D2[2 * r];
    }
    if (m >= 10) {
        tmp[n++] = D2[2 * m + 1];
        tmp[n++] = D2[2 * m];
    } else {
        tmp[n++] = (char)('0' + m);
    }
    while (n <= (size_t)dec)
        tmp[n++] = '0';
    /* trim trailing zeros of the fraction */
    size_t skip = 0;
    while (skip < (size_t)dec && tmp[skip] == '0')
        skip++;
    size_t o = 0;
    if (v < 0)
        buf[o++] = '-';
    for (size_t i = n; i-- > (size_t)dec;)
        buf[o++] = tmp[i];
    if (skip < (size_t)dec) {
        buf[o++] = '.';
        for (size_t i = (size_t)dec; i-- > skip;)
            buf[o++] = tmp[i];
    }
    buf[o] = 0;
    return o;
}
