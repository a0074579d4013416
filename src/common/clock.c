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

int64_t pm_mono_ns(void) { return read_clock(CLOCK_MONOTONIC); }
int64_t pm_wall_ns(void) { return read_clock(CLOCK_REALTIME); }
int64_t pm_self_cpu_ns(void) { return read_clock(CLOCK_PROCESS_CPUTIME_ID); }

void pm_format_iso8601(int64_t wall_ns, char *out, unsigned long cap)
{
    time_t s = (time_t)(wall_ns / PM_NS_PER_S);
    long us = (long)((wall_ns % PM_NS_PER_S) / 1000);
    if (us < 0) {
        us += 1000000;
        s -= 1;
    }
    struct tm tm;
    if (!gmtime_r(&s, &tm)) {
        snprintf(out, cap, "?");
        return;
    }
    snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us);
}
