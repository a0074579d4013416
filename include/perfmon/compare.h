/* compare.h - two jobs side by side: per metric, job figure and phase kind
 * the difference of the key statistics between job A (the reference) and
 * job B, with a noise-aware verdict (docs/analysis.md, "Comparing two
 * jobs").
 *
 * What counts as worse is data: templates/compare.json names, per catalog
 * metric and per job figure, which direction is better (lower, higher or
 * none), the threshold in percent and an optional absolute floor.
 *
 * Ownership: pm_compare_cfg_load() returns a configuration the caller
 * frees with pm_compare_cfg_free().  pm_compare_run() returns a
 * pm_comparison owned by the caller (pm_comparison_free()); its rows
 * borrow names and units from the two analyses, which must outlive it.
 */
#ifndef PERFMON_COMPARE_H
#define PERFMON_COMPARE_H

#include <stddef.h>

#include "perfmon/analysis.h"
#include "perfmon/error.h"

/* Which way a change is an improvement. */
enum pm_better { PM_BETTER_NONE = 0, PM_BETTER_LOWER = 1, PM_BETTER_HIGHER = 2 };

/* The verdict of one row, in increasing order of concern. */
enum pm_verdict {
    PM_VERDICT_SAME = 0,    /* difference within the threshold (or the absolute floor) */
    PM_VERDICT_NOISE = 1,   /* beyond the threshold, but within the noise */
    PM_VERDICT_CHANGED = 2, /* significant, but the metric has no better direction */
    PM_VERDICT_BETTER = 3,
    PM_VERDICT_WORSE = 4,
    PM_VERDICT_MISSING = 5 /* present in one job only: not judged */
};

/* The verdict on the pair, from the gated rows only: B is worse when a
 * gated row is worse and none is better, better the other way round,
 * mixed when both.  Each row's verdict mirrors when A and B swap (worse
 * becomes better), so "worse" both ways is impossible. */
enum pm_overall {
    PM_OVERALL_SAME = 0,
    PM_OVERALL_WORSE = 1,
    PM_OVERALL_BETTER = 2,
    PM_OVERALL_MIXED = 3
};

/* The kinds of row. */
enum pm_cmp_kind {
    PM_CMP_FIGURE = 0,         /* a job figure (wall time, energy, ...) */
    PM_CMP_METRIC = 1,         /* a catalog metric's all-node series */
    PM_CMP_PHASE_DURATION = 2, /* the per-node duration of a phase kind */
    PM_CMP_PHASE_METRIC = 3,   /* a metric's all-node series during a phase kind */
    PM_CMP_END = 4             /* how the jobs ended: means are enum pm_end_state (job_end.h) */
};

#define PM_COMPARE_DEFAULT_THRESHOLD 10.0 /* percent */
#define PM_COMPARE_DEFAULT_Z 3.0

/* One entry of templates/compare.json. */
typedef struct pm_compare_rule {
    char key[64];         /* catalog metric id, job figure key or TensorFlow entry field */
    int better;           /* enum pm_better */
    double threshold_pct; /* the relative minimum effect; NaN: the file's default */
    double min_abs;       /* differences at most this large (in the unit) are the same */
    int gate;             /* a worse verdict fails the gate (never for better "none" or the
                            * sampler's own figures and metrics) */
    char series[64];      /* figures: the catalog metric whose noise the figure inherits, "" none */
} pm_compare_rule;

typedef struct pm_compare_cfg {
    double threshold_pct; /* default threshold, percent of A's value */
    double z;             /* significance: |B - A| > z * standard error */
    int default_better;   /* for metrics not listed */
    int phase_better;     /* for phase durations */
    pm_compare_rule *metrics;
    size_t nmetrics;
    int phase_gate;           /* phase durations gated */
    pm_compare_rule *figures; /* in output order: only these figures are compared */
    size_t nfigures;
    pm_compare_rule *tf; /* TensorFlow benchmark entry fields (wallTime, ...) */
    size_t ntf;
} pm_compare_cfg;

/* Whether a figure key or metric id is the sampler's own (never gated). */
int pm_compare_is_sampler(const char *name);

/* The semantics of an archived entry (perfmon-archive check): a job
 * figure key takes its figure rule (or, unlisted, an informational one),
 * the statistics' data-repair counts ("repaired", "dropped_timestamps")
 * are informational, "phase:NAME" takes the phase rule, any other name is
 * a TensorFlow benchmark whose timing is its wallTime.  Fills *out; never
 * fails. */
void pm_compare_cfg_entry(const pm_compare_cfg *c, const char *entry, pm_compare_rule *out);

/* --gate / --no-gate: names (a figure key, metric id, "phase:NAME" or an
 * archived entry) whose gating is forced on (gate) or off. */
typedef struct pm_gate_names {
    const char *const *on;
    size_t non;
    const char *const *off;
    size_t noff;
} pm_gate_names;

/* The gating of name after the user's choice: off wins, then on, then
 * the table's rule_gate; a direction of "none" or a sampler name is never
 * gated. */
int pm_gate_decide(const pm_gate_names *g, const char *name, int better, int rule_gate);

/* Parse a comma-separated --gate / --no-gate value into list (cap
 * entries, pointers into a copy the caller owns in buf of bufcap bytes);
 * returns the new count, or -1 when a name is empty, a sampler figure
 * (gate only) or the list is too long. */
int pm_gate_parse_list(const char *arg, int gate, char *buf, size_t bufcap, const char **list,
                       size_t n, size_t cap);
/* Why pm_gate_parse_list refused arg (have names already, cap at most):
 * one sentence for the user, in out. */
void pm_gate_list_why(const char *arg, int gate, size_t have, size_t cap, char *out, size_t outcap);

/* Parse compare.json text (path is used in messages: file:line:col on a
 * syntax error, file: metrics.ID.better on a bad entry). */
int pm_compare_cfg_parse(const char *path, const char *text, pm_compare_cfg **out,
                         pm_error *err) PM_WUR;
int pm_compare_cfg_load(const char *path, pm_compare_cfg **out, pm_error *err) PM_WUR;
void pm_compare_cfg_free(pm_compare_cfg *c);
/* The rule for a metric id, or NULL. */
const pm_compare_rule *pm_compare_cfg_metric(const pm_compare_cfg *c, const char *id);

/* "lower", "higher", "none" and back; -1 for an unknown word. */
int pm_better_parse(const char *s);
const char *pm_better_name(int better);
/* "same", "noise", "changed", "better", "worse", "missing". */
const char *pm_verdict_name(int verdict);

/* One job's side of a row. */
typedef struct pm_compare_side {
    size_t n;        /* values used (points, or nodes for phase durations) */
    double mean;     /* time-weighted mean (series), mean over nodes, or the figure */
    double p95, max; /* NaN for a job figure */
    double se;       /* standard error of mean; NaN when it cannot be estimated */
} pm_compare_side;

/* Fill s from the series t[n], v[n] (NaN = no value): the statistics of
 * pm_stats_compute() with the given weighting (enum pm_weighting) and the
 * noise-aware standard error of pm_compare_se().  scratch holds n doubles. */
void pm_compare_side_series(const double *t, const double *v, size_t n, int weighting,
                            double *scratch, pm_compare_side *s);

/* Standard error of the mean of v[n] from its sample-to-sample changes
 * (docs/analysis.md, "Comparing two jobs"): with d the differences of
 * consecutive valid points, r1 the lag-1 autocorrelation of d (GSL), rho =
 * 1 + 2 r1 clamped to [0, 0.9], sigma^2 = mean(d^2) / (2 (1 - rho)), and
 * se = sqrt(sigma^2 (1 + rho) / (1 - rho) / n).  Slow changes (phases, a
 * trend) hardly move d, so they are not taken for noise.  NaN with fewer
 * than 3 valid points or 2 differences.  scratch holds n doubles. */
double pm_compare_se(const double *v, size_t n, double *scratch);

/* The sample-to-sample noise sigma of v[n] (step 3 above, before the
 * division by n): what a single point, such as a peak, varies by.  NaN as
 * pm_compare_se. */
double pm_compare_sigma(const double *v, size_t n, double *scratch);

typedef struct pm_compare_row {
    int kind;         /* enum pm_cmp_kind */
    char key[64];     /* metric id or figure key */
    char phase[72];   /* phase kind, "" for whole-job rows */
    const char *name; /* display name (borrowed) */
    const char *unit; /* display unit (borrowed) */
    pm_compare_side a, b;
    double diff;     /* b.mean - a.mean */
    double pct;      /* 100 * diff / |a.mean|; 0 when both are 0, +-inf when only A is */
    double se;       /* sqrt(a.se^2 + b.se^2); NaN when either is unknown */
    double zscore;   /* diff / se (NaN when se is unknown, +-inf when 0) */
    int significant; /* |diff| > z * se; se unknown: 1 for figures and phase
                            * durations (the threshold decides), 0 for series */
    int better;      /* enum pm_better */
    double threshold_pct;
    double min_abs;
    int gated;   /* a worse verdict makes B worse (the exit status) */
    int verdict; /* enum pm_verdict */
    /* Job figures of several runs of each side (pm_compare_runs()): the
     * runs read and how many of B's were beyond A's noise and the
     * threshold in the worse direction; suspect: worse in some run of B
     * but not confirmed by all of them, or worse with one run of each. */
    size_t runs_a, runs_b, runs_beyond;
    int suspect;
} pm_compare_row;

/* Decide r->verdict from r->a, r->b, r->better, r->threshold_pct, r->min_abs
 * and the significance multiplier z; fills diff, pct, se, zscore and
 * significant.  Rules in docs/analysis.md. */
void pm_compare_judge(pm_compare_row *r, double z);

typedef struct pm_compare_opts {
    double threshold_pct; /* >= 0 overrides every threshold of the configuration; NaN: keep */
    const char *label_a, *label_b; /* how outputs name the jobs (their directories); borrowed */
    pm_gate_names gate;            /* --gate / --no-gate; borrowed */
} pm_compare_opts;

void pm_compare_opts_init(pm_compare_opts *o);

typedef struct pm_comparison {
    const pm_analysis *a, *b;      /* borrowed */
    const char *label_a, *label_b; /* borrowed from the options; never NULL */
    pm_compare_row *rows;          /* how the jobs ended, figures, then metrics (catalog order),
                                    * then per phase kind */
    size_t nrows;
    double z;
    double threshold_pct;             /* the default in force */
    size_t count[6];                  /* rows per verdict */
    size_t gated_worse, gated_better; /* gated rows worse, better */
    size_t gated_suspect;             /* gated rows suspect and not worse (exit 6) */
    size_t runs_a, runs_b;            /* runs of each side (pm_compare_runs(); else 1) */
    int overall;                      /* enum pm_overall */
    size_t nphase_kinds;              /* phase kinds present in both jobs */
} pm_comparison;

/* Compare job B against job A.  Returns 0, or PM_ENOMEM. */
int pm_compare_run(const pm_analysis *a, const pm_analysis *b, const pm_compare_cfg *cfg,
                   const pm_compare_opts *o, pm_comparison **out, pm_error *err) PM_WUR;
void pm_comparison_free(pm_comparison *c);

/* The job figures by the rules of perfmon-archive check's gate, where a
 * side holds several runs (reruns): as[0..na) and bs[0..nb) are the runs
 * of A and B, oldest first, and c was made by pm_compare_run() from the
 * last of each (its other rows are those runs').  Each figure row's A and
 * B become the medians of the runs; a run of B is beyond when its change
 * from A's median passes the row's threshold and floor and, where A's
 * runs give a noise (3 runs or more: 1.4826 x their MAD; else the row's
 * standard error), z times it.  A gated row is worse when B has two runs
 * or more and every one is beyond, suspect when some but not all are or B
 * has one run that is; with one run of each, a worse row stays worse and
 * is marked suspect.  Recounts the verdicts and the overall verdict.
 * Returns 0, or PM_ENOMEM. */
int pm_compare_runs(pm_comparison *c, const pm_analysis *const *as, size_t na,
                    const pm_analysis *const *bs, size_t nb, pm_error *err) PM_WUR;

/* The words every output of a comparison shares (text, JSON, the PDF):
 * the rule that decides a row, in one sentence; the pair's verdict as the
 * exit status decides it, from the gated rows only ("B is worse than A:
 * wall_time_s +30.3%"), with the informational worse rows counted; a
 * row's verdict as shown ("worse (info)" for a row that is not gated,
 * "same (|B-A| <= 5)" where min_abs decided).  Each writes at most cap
 * bytes, NUL-terminated; the first two return the full length. */
size_t pm_compare_rule_text(const pm_comparison *c, char *out, size_t cap);
size_t pm_compare_verdict_text(const pm_comparison *c, char *out, size_t cap);
void pm_compare_row_verdict(const pm_compare_row *r, char *out, size_t cap);

/* The job id of an analysis (first non-empty over hosts), else "". */
const char *pm_analysis_job_id(const pm_analysis *a);

/* A difference in percent as outputs print it: "+30.3%", "0.0%" (never
 * "-0.0%"), "+inf" / "-inf" when A is 0, "-" when unknown. */
void pm_compare_pct_text(double pct, char *out, size_t cap);

/* "A: <label> (job <id>)" for which = 0, "B: ..." for 1, control bytes
 * replaced by '?' so a hostile name cannot drive a terminal; into out
 * (cap bytes, always NUL-terminated). */
void pm_compare_job_label(const pm_comparison *c, int which, char *out, size_t cap);

#endif
