/* fmt_bench: pm_fmt_double (the formatter of --data and --csv) against
 * snprintf("%.*g"): how many values of each shape differ, and the time per
 * value of each.  Not part of make check (test_fmt compares them there).
 *
 *   fmt_bench [VALUES_PER_SHAPE]   (default 1000000) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfmon/export.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Values shaped like a series of --data: rates and gauges from 1e-3 to
 * 1e10 with a few significant digits of noise, and sample times. */
static double data_like(void)
{
    uint64_t r = next();
    switch (r % 4) {
    case 0: return 1.7e9 + (double)(r >> 20) * 1e-6;        /* times */
    case 1: return (double)((r >> 8) % 100000000) / 1000.0; /* 0 .. 1e5 */
    case 2: return ldexp((double)(r >> 11), -53) * 1e10;    /* 0 .. 1e10 */
    default: return ldexp((double)(r >> 11), -53) * 100.0;  /* percent */
    }
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return 1;
    for (size_t i = 0; i < n; i++)
        v[i] = data_like();
    static const int digits[] = {6, 10, 13};
    printf("%-8s %12s %12s %12s %14s\n", "digits", "values", "mismatches", "fmt ns", "snprintf ns");
    for (size_t d = 0; d < sizeof digits / sizeof digits[0]; d++) {
        char a[64], b[64];
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            size_t len = pm_fmt_double(a, v[i], digits[d]);
            snprintf(b, sizeof b, "%.*g", digits[d], v[i]);
            if (len != strlen(b) || memcmp(a, b, len) != 0)
                bad++;
        }
        volatile size_t sink = 0;
        double t0 = now();
        for (size_t i = 0; i < n; i++)
            sink += pm_fmt_double(a, v[i], digits[d]);
        double tf = now() - t0;
        t0 = now();
        for (size_t i = 0; i < n; i++)
            sink += (size_t)snprintf(b, sizeof b, "%.*g", digits[d], v[i]);
        double ts = now() - t0;
        (void)sink;
        printf("%-8d %12zu %12zu %12.1f %14.1f\n", digits[d], n, bad, tf / (double)n * 1e9,
               ts / (double)n * 1e9);
    }
    free(v);
    return 0;
}
