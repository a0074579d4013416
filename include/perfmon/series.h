/* series.h - per-point operations on one host's series: dropping
 * non-increasing timestamps, unwrapping counters, rates, repair of
 * negative values, and per-point quality flags.
 *
 * All functions work on caller-owned arrays; none allocates.  Values are
 * doubles; NaN means "not recorded" and is never turned into 0 (except by
 * pm_ska_replace_neg(), which reproduces SKA perfmon on purpose).
 * Semantics: docs/analysis.md.
 */
#ifndef PERFMON_SERIES_H
#define PERFMON_SERIES_H

#include <stddef.h>
#include <stdint.h>

/* Per-point quality of a derived value. */
enum pm_quality {
    PM_Q_OK = 0,
    PM_Q_WRAP = 1,    /* counter wrapped at its known range; corrected exactly */
    PM_Q_RESET = 2,   /* negative value (counter reset) repaired */
    PM_Q_GAP = 3,     /* no value: not recorded, or first sample of a rate */
    PM_Q_INTERP = 4,  /* value interpolated onto the common grid */
    PM_Q_DROPPED = 5, /* value removed (--repair=drop) */
    PM_Q_HELD = 6,    /* sparse gauge: the last refresh, held (pm_hold_sparse) */
    PM_Q_N = 7
};

enum pm_repair { PM_REPAIR_HOLD = 0, PM_REPAIR_INTERP = 1, PM_REPAIR_ZERO = 2, PM_REPAIR_DROP = 3 };

typedef struct pm_qcounts {
    uint64_t n[PM_Q_N]; /* points per enum pm_quality */
} pm_qcounts;

const char *pm_quality_name(int q);
/* Parse "hold", "interp", "zero", "drop"; -1 when unknown. */
int pm_repair_parse(const char *s);
const char *pm_repair_name(int mode);

/* Keep only points whose time is finite and strictly greater than the last
 * kept one.  Writes the kept indices to keep[] (n entries available) and
 * returns how many were kept; *ndropped gets n minus that. */
size_t pm_time_increasing(const double *t, size_t n, size_t *keep, size_t *ndropped);

/* Unwrap a counter in place: wherever a value is below its predecessor
 * (the last finite one) and modulus > 0, add modulus (cumulatively) and
 * flag the point PM_Q_WRAP.  q may be NULL.  Returns the number of wraps. */
size_t pm_unwrap(double *v, size_t n, double modulus, uint8_t *q);

/* rate[i] = (v[i] - v[i-1]) / (t[i] - t[i-1]).  out[0] and points where
 * either value is NaN are NaN and flagged PM_Q_GAP; a point whose v[i] was
 * flagged PM_Q_WRAP in q keeps that flag.  q must hold n entries and is
 * updated in place (pass the flags pm_unwrap wrote, or zeros).  out may
 * not alias v. */
void pm_rate(const double *t, const double *v, size_t n, double *out, uint8_t *q);

/* Repair negative values in place according to mode (enum pm_repair):
 * hold = the preceding valid value (0 at the start), interp = the mean of
 * the nearest valid neighbours (one neighbour: its value; none: 0),
 * zero = 0, drop = NaN flagged PM_Q_DROPPED.  Repaired points are flagged
 * PM_Q_RESET.  NaN values are left alone.  Returns the number repaired. */
size_t pm_repair(double *v, uint8_t *q, size_t n, int mode);

/* SKA perfmon's replace_neg_values: negative values and NaN take the
 * preceding valid value, leading ones 0.  Returns the number changed. */
size_t pm_ska_replace_neg(double *v, size_t n);

/* The rate of a counter read only every few samples (the pressure and
 * I/O counters, at most once a second: PM_RARE_NS in source.h): when the
 * median time between its consecutive valid points exceeds 1.5 sample
 * intervals (interval, s), the rate between two consecutive readings at
 * most 1.5 times that median apart stands for every point of their span:
 * the later reading's point as pm_rate() would give it, the points before
 * it flagged PM_Q_HELD; the first reading, and one after a longer silence,
 * are NaN and PM_Q_GAP, as are the points before them.  Returns 1 when the
 * counter is sparse (out and q written), 0 when it is not (out was used as
 * scratch; call pm_rate()).  q as for pm_rate(). */
int pm_rate_sparse(const double *t, const double *v, size_t n, double interval, double *out,
                   uint8_t *q);

/* A gauge recorded only every few samples (PSS/USS/swap, refreshed every
 * --pss-interval) is held: when the median time between its consecutive
 * valid points exceeds 1.5 sample intervals (interval, s), each missing
 * point takes the last valid value before it if that is at most 1.5
 * times that median time older, and is flagged PM_Q_HELD.  scratch holds
 * n doubles.  Returns the number of points held (0 for a dense gauge). */
size_t pm_hold_sparse(const double *t, double *v, uint8_t *q, size_t n, double interval,
                      double *scratch);

/* Add the flags of q[n] to c. */
void pm_qcounts_add(pm_qcounts *c, const uint8_t *q, size_t n);

#endif
