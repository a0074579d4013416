/* clock.h - the two clocks every sample carries. */
#ifndef PERFMON_CLOCK_H
#define PERFMON_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#define PM_NS_PER_S 1000000000LL

/* CLOCK_MONOTONIC in nanoseconds: for intervals and deadlines. */
int64_t pm_mono_ns(void);
/* The same in seconds: for the intervals a program reports. */
double pm_mono_s(void);
/* CLOCK_REALTIME in nanoseconds since the epoch: for wall-clock time. */
int64_t pm_wall_ns(void);
/* Process CPU time (user + system) of the calling process, nanoseconds. */
int64_t pm_self_cpu_ns(void);

/* UTC as ISO 8601, the one rule for every time perfmon prints: the time
 * ns nanoseconds after the epoch as "2024-02-29T12:00:00Z", or with
 * digits (1..9) digits of the second's fraction, "2024-02-29T12:00:00.250Z".
 * Times before the epoch count back (-1 ns is 23:59:59.999...Z of the day
 * before): the second is floored and its fraction truncated, never
 * rounded up into the next second.  Returns the length written, or -1 with
 * out empty (cap > 0) when the time has no calendar date or does not fit
 * in cap bytes (32 is always enough). */
int pm_utc_iso_ns(int64_t ns, int digits, char *out, size_t cap);
/* The same for s seconds after the epoch and frac (0 <= frac < 10^digits)
 * in units of the last of digits digits: for times beyond int64
 * nanoseconds (after 2262). */
int pm_utc_iso_frac(int64_t s, long frac, int digits, char *out, size_t cap);
/* The same for t seconds after the epoch (a double, floored to the second,
 * no fraction): -1 also for NaN, the infinities and |t| >= 1e15, which no
 * clock gives. */
int pm_utc_iso(double t, char *out, size_t cap);

#endif
