/* archive_check.h - the regression gate of `perfmon-archive check`.
 *
 * Robust statistics (docs/archive.md, "check"): an entry's latest timing
 * x is compared with the median m of its previous N timings and their
 * median absolute deviation MAD, scaled to a standard deviation of normal
 * data (s = 1.4826 MAD).  x is a regression when all of
 *
 *   x > m,   (x - m) / s > threshold,   (x - m) / |m| >= min_change
 *
 * hold (s = 0, a perfectly steady history, makes the second test pass for
 * any x > m, so min_change alone decides), and |x - m| > min_abs.  That is
 * for a lower-is-better figure (timings); for a higher-is-better one
 * (throughputs) the signs turn: x < m, z < -threshold, change <=
 * -min_change.  An informational figure (better "none") is never a
 * regression.  Fewer than min_history previous timings: no verdict.
 * Whether such a value fails the run is the gate's to say (archive_gate.h:
 * the entries of a test together, confirmation by the next run).
 *
 * Ownership: the functions only read what they are given.
 */
#ifndef PERFMON_ARCHIVE_CHECK_H
#define PERFMON_ARCHIVE_CHECK_H

#include <stddef.h>

#define PM_MAD_TO_SD 1.4826

typedef struct pm_check_opts {
    size_t window;      /* previous timings compared with (default 10) */
    size_t min_history; /* fewer previous timings: no verdict (default 4: the 5th run is judged) */
    double threshold;   /* robust z-score above which it is slower (default 3) */
    double min_change;  /* relative change that matters (default 0.05 = 5 %) */
    double min_abs;     /* absolute change that matters, in the entry's unit (default 0) */
    int better;         /* enum pm_check_better (default lower) */
} pm_check_opts;

/* The same values as enum pm_better of compare.h (templates/compare.json). */
enum pm_check_better { PM_CHECK_NONE = 0, PM_CHECK_LOWER = 1, PM_CHECK_HIGHER = 2 };

enum pm_check_verdict { PM_CHECK_OK = 0, PM_CHECK_REGRESSION = 1, PM_CHECK_SHORT = 2 };

typedef struct pm_check_result {
    int verdict; /* enum pm_check_verdict */
    size_t n;    /* previous timings used */
    double latest;
    double median; /* of the previous timings */
    double mad;    /* median absolute deviation (unscaled) */
    double z;      /* (latest - median) / (1.4826 MAD); +inf when MAD is 0 and latest > median */
    double change; /* (latest - median) / |median| */
} pm_check_result;

void pm_check_opts_init(pm_check_opts *o);

/* Judge v[n-1] against up to o->window values before it (v in time
 * order).  n may be 0 (verdict PM_CHECK_SHORT). */
void pm_check_series(const double *v, size_t n, const pm_check_opts *o, pm_check_result *r);

#endif
