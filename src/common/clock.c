/* The clocks (clock.h): monotonic, wall and process CPU time in
 * nanoseconds, and UTC as ISO 8601, the one rule for every time perfmon
 * prints. */
#include "perfmon/clock.h"

#include <stdio.h>
#include <time.h>

static int64_t read_clock(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * PM_NS_PER_S + ts.tv_nsec;
}

int64_t pm_mono_ns(void)
{
    return read_clock(CLOCK_MONOTONIC);
}

double pm_mono_s(void)
{
    return (double)pm_mono_ns() * 1e-9;
}
int64_t pm_wall_ns(void)
{
    return read_clock(CLOCK_REALTIME);
}
int64_t pm_self_cpu_ns(void)
{
    return read_clock(CLOCK_PROCESS_CPUTIME_ID);
}

int pm_utc_iso_frac(int64_t s, long frac, int digits, char *out, size_t cap)
{
    struct tm tm;
    char b[64];
    int n = -1;
    time_t ts = (time_t)s;
    if (digits < 0)
        digits = 0;
    if (digits > 9)
        digits = 9;
    if (frac >= 0 && frac < 1000000000L && gmtime_r(&ts, &tm) &&
        strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm))
        n = digits > 0 ? snprintf(out, cap, "%s.%0*ldZ", b, digits, frac)
                       : snprintf(out, cap, "%sZ", b);
    if (n < 0 || (size_t)n >= cap) {
        if (cap)
            out[0] = '\0';
        return -1;
    }
    return n;
}

int pm_utc_iso_ns(int64_t ns, int digits, char *out, size_t cap)
{
    int64_t s = ns / PM_NS_PER_S, sub = ns % PM_NS_PER_S;
    if (sub < 0) {
        sub += PM_NS_PER_S;
        s--;
    }
    for (int d = digits < 0 ? 0 : digits; d < 9; d++)
        sub /= 10;
    return pm_utc_iso_frac(s, (long)sub, digits, out, cap);
}

int pm_utc_iso(double t, char *out, size_t cap)
{
    if (!(t > -1e15 && t < 1e15)) { /* NaN, inf: no cast */
        if (cap)
            out[0] = '\0';
        return -1;
    }
    int64_t s = (int64_t)t; /* floor without libm, which the sampler does not link */
    if ((double)s > t)
        s--;
    return pm_utc_iso_frac(s, 0, 0, out, cap);
}
