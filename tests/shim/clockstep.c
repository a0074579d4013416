/* clockstep.so: steps the wall clock (CLOCK_REALTIME) of one process, for
 * the sampler's clock-step test without touching the machine's clock.
 *
 *   PM_CLOCKSTEP="AFTER:OFFSET" LD_PRELOAD=.../clockstep.so perfmon-sample ...
 *
 * AFTER seconds (monotonic) after the first clock read, CLOCK_REALTIME
 * jumps by OFFSET seconds (negative: backwards) and stays there, as after
 * an NTP step or `date -s`.  Other clocks pass through.  A time namespace
 * (unshare --time) cannot do this: it offsets only CLOCK_MONOTONIC and
 * CLOCK_BOOTTIME. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

typedef int (*clock_fn)(clockid_t, struct timespec *);

int clock_gettime(clockid_t id, struct timespec *ts);
int clock_gettime(clockid_t id, struct timespec *ts)
{
    static clock_fn real;
    static int64_t first_ns = -1, after_ns, offset_ns;
    if (!real) {
        real = (clock_fn)(uintptr_t)dlsym(RTLD_NEXT, "clock_gettime");
        const char *spec = getenv("PM_CLOCKSTEP");
        char *end = NULL;
        double after = spec ? strtod(spec, &end) : 0;
        double offset = end && *end == ':' ? strtod(end + 1, NULL) : 0;
        after_ns = (int64_t)(after * 1e9);
        offset_ns = (int64_t)(offset * 1e9);
    }
    int rc = real(id, ts);
    if (rc != 0 || id != CLOCK_REALTIME || offset_ns == 0)
        return rc;
    struct timespec m;
    real(CLOCK_MONOTONIC, &m);
    int64_t now = (int64_t)m.tv_sec * 1000000000 + m.tv_nsec;
    if (first_ns < 0)
        first_ns = now;
    if (now - first_ns < after_ns)
        return rc;
    int64_t t = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + offset_ns;
    ts->tv_sec = (time_t)(t / 1000000000);
    ts->tv_nsec = (long)(t % 1000000000);
    return rc;
}
