/* archive_gate.h - the gate of `perfmon-archive check` across the entries
 * of one test, with confirmation (docs/archive.md, "check").
 *
 * Each value of each entry is judged alone by archive_check.h against the
 * values before it: "beyond its noise" is that check's regression, and its
 * relative change in the worse direction is the entry's change.  Then:
 *
 *   - the whole test: in every run, the lower median of the gated entries'
 *     changes (the ((k - 1) / 2)-th smallest of k: for 4 entries, the 2nd,
 *     which two entries hit at once do not move).  That series has its own
 *     noise and is judged as an entry is.  Beyond its noise and beyond
 *     every earlier whole-test change (its tail, measured over the earlier
 *     runs of the lookback, at least test_tail_min of them) by test_margin
 *     robust sd, the run fails at once; beyond its noise only, it is
 *     suspect.  Needs two gated entries or more.
 *   - one entry beyond its noise while the test as a whole is not: it
 *     fails at once only when its change exceeds the largest change any
 *     gated entry of the test showed in the earlier runs (the test's
 *     single-entry tail, measured over at least tail_min judged entry
 *     values) by pair x threshold robust sd of its own noise; otherwise it
 *     is suspect.  An entry that moved in a run where the whole test moved
 *     follows the test's verdict.
 *   - confirmation, for the whole test and for an entry: the last three
 *     values beyond three x threshold with the median of their changes at
 *     least the minimum change, and the mean of the last two's too (a
 *     pipeline's reruns must show the change on their own, not only the
 *     value that made it suspect), fail; so do the last two beyond
 *     test_pair x threshold for the whole test, and beyond pair x
 *     threshold for an entry where two hits in a row are unlikely (the
 *     share of the test's earlier entry values at least the minimum change
 *     is at most pair_rate) or both are beyond the test's single-entry
 *     tail; with that tail unmeasured, the third value decides.  Each is
 *     judged against the noise_window values before the first of them (so
 *     that the suspect values do not widen the noise they are judged
 *     with), their median and Qn (a robust sd, 82 % efficient where the
 *     MAD is 37 %: a bar below the threshold needs a good estimate of the
 *     noise).  In a run where the whole test moved, an entry's change
 *     counts by what is beyond the test's.  The next run and a rerun in
 *     the same pipeline both count.  Every change the gate weighs (the
 *     whole test's, the tail's) is taken against the median of the
 *     noise_window values before it, which two slowed runs and a step do
 *     not move.
 *   - an entry whose latest value is beyond look x threshold of that
 *     noise with at least look_change x the minimum change, or whose last
 *     two are beyond three x threshold, is suspect: one more run decides
 *     (what lets a rerun catch a slowdown).
 *
 * Ownership: the functions only read their inputs and fill the outputs
 * inside the structures given; nothing is kept.
 */
#ifndef PERFMON_ARCHIVE_GATE_H
#define PERFMON_ARCHIVE_GATE_H

#include <stddef.h>

#include "perfmon/archive_check.h"
#include "perfmon/error.h"

enum pm_gate_verdict {
    PM_GATE_OK = 0,
    PM_GATE_REGRESSION = 1,
    PM_GATE_SHORT = 2, /* too few earlier values: no verdict */
    PM_GATE_SUSPECT = 3
};

/* Why a verdict is what it is (PM_GATE_WHY_NONE for ok and short). */
enum pm_gate_why {
    PM_GATE_WHY_NONE = 0,
    PM_GATE_WHY_TEST,       /* regression: the whole test changed beyond its noise and tail */
    PM_GATE_WHY_TAIL,       /* regression: beyond anything in the test's history */
    PM_GATE_WHY_CONFIRMED,  /* regression: the previous run was beyond too */
    PM_GATE_WHY_WITHIN,     /* suspect: beyond the noise, within the history's tail */
    PM_GATE_WHY_UNMEASURED, /* suspect: beyond the noise, too few runs to know the tail */
    PM_GATE_WHY_LOOK        /* suspect: within the noise, but one more run could confirm it */
};

/* The bars are fractions of the check's threshold, so that a larger
 * --threshold raises them too. */
typedef struct pm_gate_opts {
    double pair;          /* an entry's last two values (default 1: 3 sd at threshold 3) */
    double test_pair;     /* the whole test's last two (default 0.4: 1.2 sd at threshold 3) */
    double three;         /* the last three values, entry or test (default 0.27) */
    double look;          /* an entry's latest value beyond look x threshold robust sd of the
                          * noise window is suspect: one more run decides (default 0.27) */
    double look_change;   /* ... and its change at least look_change x the minimum change
                           * (default 0.6) */
    double pair_rate;     /* an entry's last two values confirm each other only where the
                           * test's earlier entry values reach the minimum change at most this
                           * often (default 0.03), or both are beyond its tail */
    size_t noise_window;  /* confirmation: values before the suspect ones the noise is
                          * measured over, at least (default 30, the window if larger) */
    size_t tail_min;      /* judged earlier entry values before a tail counts as measured
                      * (default 40: 10 runs of a 4-entry test) */
    size_t lookback;      /* earlier runs searched for the tail (default 100) */
    size_t test_tail_min; /* earlier whole-test changes before its tail counts (default 20) */
    double test_margin;   /* the whole test fails at once beyond its tail by this many robust
                           * sd of its noise (default 1) */
} pm_gate_opts;

typedef struct pm_gate_entry {
    /* in */
    const double *v;   /* the entry's values, oldest first */
    const size_t *run; /* the run of each value (strictly increasing, < nruns) */
    size_t n;
    pm_check_opts o; /* its direction and minimum effect */
    int gated;
    /* out */
    pm_check_result r; /* the latest value judged alone */
    int verdict;       /* enum pm_gate_verdict (gated entries only) */
    int why;           /* enum pm_gate_why */
    int beyond;        /* the latest value is beyond its noise */
    int prev_beyond;   /* the value before it was beyond pair x threshold */
} pm_gate_entry;

typedef struct pm_gate_test {
    size_t entries;      /* gated entries weighed in the latest run (< 2: no test-wide verdict) */
    size_t n;            /* earlier runs with a whole-test change in the window */
    double change;       /* the latest run's whole-test change (lower median of the changes) */
    double median;       /* of the earlier whole-test changes in the window */
    double mad;          /* their median absolute deviation */
    double z;            /* robust z of the latest one */
    double tail;         /* the largest earlier whole-test change (NAN: none) */
    double entry_tail;   /* the largest earlier single-entry worse change (NAN: unmeasured) */
    size_t entry_tail_n; /* judged earlier entry values it was measured over */
    double entry_tail_rate; /* the share of them at least the minimum change (NAN: unmeasured) */
    int beyond;             /* the latest whole-test change is beyond its noise */
    int prev_beyond;        /* so was the previous run's */
    int verdict;            /* enum pm_gate_verdict: ok, regression, suspect or short */
    int why;                /* enum pm_gate_why */
} pm_gate_test;

void pm_gate_opts_init(pm_gate_opts *g);

/* Judge the latest run (nruns - 1) of a test: every gated entry e[i]
 * whose last value is in some run (an entry's verdict is about its own
 * last value; the whole test weighs the entries with a value in the
 * latest run).  Fills e[i]'s outputs and *t.  Returns 0, or PM_ENOMEM
 * with err set. */
int pm_gate_judge(pm_gate_entry *e, size_t ne, size_t nruns, const pm_gate_opts *g, pm_gate_test *t,
                  pm_error *err) PM_WUR;

/* "ok", "regression", "no verdict", "suspect". */
const char *pm_gate_verdict_name(int verdict);
/* A short phrase for why (e.g. "the previous run was beyond too"); "" for none. */
const char *pm_gate_why_text(int why);

#endif
