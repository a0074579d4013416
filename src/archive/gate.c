/* The gate across the entries of one test, with confirmation (see
 * archive_gate.h). */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/archive_gate.h"
#include "perfmon/mem.h"

void pm_gate_opts_init(pm_gate_opts *g)
{
    g->pair = 1.0;
    g->test_pair = 0.4;
    g->three = 0.27;
    g->look = 0.27;
    g->test_tail_min = 20;
    g->test_margin = 1;
    g->noise_window = 30;
    g->tail_min = 40;
    g->lookback = 100;
    g->look_change = 0.6;
    g->pair_rate = 0.03;
}

const char *pm_gate_verdict_name(int verdict)
{
    switch (verdict) {
    case PM_GATE_OK: return "ok";
    case PM_GATE_REGRESSION: return "regression";
    case PM_GATE_SUSPECT: return "suspect";
    default: return "no verdict";
    }
}

const char *pm_gate_why_text(int why)
{
    switch (why) {
    case PM_GATE_WHY_TEST: return "the whole test changed beyond its noise";
    case PM_GATE_WHY_TAIL: return "beyond anything in the test's history";
    case PM_GATE_WHY_CONFIRMED: return "the previous run was beyond too";
    case PM_GATE_WHY_WITHIN: return "within the tail of the test's history";
    case PM_GATE_WHY_UNMEASURED: return "too few runs to know the test's tail";
    case PM_GATE_WHY_LOOK: return "above its usual level: one more run decides";
    default: return "";
    }
}

/* +1 when up is worse, -1 when down is, 0 for an informational figure. */
static double worse_sign(const pm_check_opts *o)
{
    return o->better == PM_CHECK_LOWER ? 1 : o->better == PM_CHECK_HIGHER ? -1 : 0;
}

/* Judge v[k] against the window before v[k - skip] (skip = 1 leaves out
 * the suspect value just before it) with threshold thr; tmp holds
 * window + 1 values. */
static void judge_at(const double *v, size_t k, size_t skip, const pm_check_opts *o, double thr,
                     double *tmp, pm_check_result *r)
{
    size_t end = k >= skip ? k - skip : 0; /* values [0, end) come before */
    size_t w = end < o->window ? end : o->window;
    memcpy(tmp, v + end - w, w * sizeof *tmp);
    tmp[w] = v[k];
    pm_check_opts oc = *o;
    oc.threshold = thr;
    pm_check_series(tmp, w + 1, &oc, r);
}

/* The robust noise of a judged value relative to its median: s / |m|. */
static double rel_sd(const pm_check_result *r)
{
    return r->median != 0 ? PM_MAD_TO_SD * r->mad / fabs(r->median) : INFINITY;
}

/* The median of x[0..n), n <= 3 (reordered). */
static double median3(double *x, size_t n)
{
    gsl_sort(x, 1, n);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* Whether the last m values of a series, with worse z-scores z[0..m) and
 * worse relative changes c[0..m), confirm a change: every z beyond bar,
 * and the median of the changes (not each of them: a 10 % step with 3 %
 * noise puts one value in six under 5 %) at least the minimum change and
 * its size in the entry's unit above min_abs; of three values, the mean
 * of the last two's changes at least the minimum change too. */
static int confirms(const double *z, const double *c, size_t m, double bar, const pm_check_opts *o,
                    double median)
{
    double cc[3];
    for (size_t q = 0; q < m; q++) {
        if (!(z[q] > bar) || isnan(c[q]))
            return 0;
        cc[q] = c[q];
    }
    /* three values: the last two (a pipeline's reruns after the value
     * that made it suspect) show the change on their own too */
    if (m == 3 && !((c[1] + c[2]) / 2 >= o->min_change))
        return 0;
    double mc = median3(cc, m);
    return mc >= o->min_change && mc * fabs(median) > o->min_abs;
}

/* Work space of the robust scale: window values and Qn's work. */
typedef struct gate_work {
    double *tmp; /* window + 1 values */
    double *qw;  /* 3 x window */
    int *qi;     /* 5 x window */
} gate_work;

/* The median and robust sd of the values before v[k - skip]: at least
 * noise_window of them where the series has them (the window if larger).
 * The sd is Rousseeuw and Croux's Qn (GSL), whose efficiency on normal
 * data is 82 % against the MAD's 37 %: over 25 values its own error is
 * about 16 % of the sd against 23 %, and that error scales every z-score
 * judged with it.  Returns 0 when fewer than min_history values come
 * before. */
static int window_noise(const double *v, size_t k, size_t skip, const pm_check_opts *o,
                        size_t noise_window, gate_work *w, double *median, double *sd)
{
    size_t end = k >= skip ? k - skip : 0,
           win = o->window > noise_window ? o->window : noise_window;
    size_t n = end < win ? end : win;
    if (n < 2 || n < o->min_history)
        return 0;
    memcpy(w->tmp, v + end - n, n * sizeof *w->tmp);
    gsl_sort(w->tmp, 1, n);
    *median = gsl_stats_median_from_sorted_data(w->tmp, 1, n);
    *sd = gsl_stats_Qn_from_sorted_data(w->tmp, 1, n, w->qw, w->qi);
    return 1;
}

/* The worse z-score and relative change of v[k] judged against the
 * values before v[k - skip] (window_noise()), less off, a change common
 * to the whole test in that run (0 when it did not move); NAN when too
 * few values come before.  *median: the median judged against. */
static void excess_at(const double *v, size_t k, size_t skip, const pm_check_opts *o,
                      size_t noise_window, double off, gate_work *w, double *z, double *c,
                      double *median)
{
    double m, sd;
    *z = *c = *median = NAN;
    if (!window_noise(v, k, skip, o, noise_window, w, &m, &sd) || m == 0)
        return;
    double sign = worse_sign(o), d = sign * (v[k] - m);
    *median = m;
    *c = d / fabs(m) - off;
    double s = sd / fabs(m);
    *z = s > 0 ? *c / s : (*c > 0 ? INFINITY : *c < 0 ? -INFINITY : 0);
}

/* The evidence of the last values of a series v[0..n): off[q] is taken
 * off the change of value n - 3 + q (NULL: nothing).  Returns 1 when the
 * last two values are beyond pair x threshold, both changed by more than
 * pair_min, or the last three beyond three x threshold (see confirms()),
 * each judged against the values before the first of them (so that the
 * suspect values do not widen the noise they are judged with); *zl is the
 * latest value's worse z against the values before it (-INFINITY under
 * look_change x the minimum change) and *pending says that the last two
 * are beyond three x threshold, so that one more run can confirm them. */
static int evidence(const double *v, size_t n, const pm_check_opts *o, const pm_gate_opts *g,
                    double pair, double pair_min, const double *off, gate_work *w, double *zl,
                    int *pending)
{
    double z[3], c[3], med;
    *zl = NAN;
    *pending = 0;
    if (n == 0)
        return 0;
    excess_at(v, n - 1, 0, o, g->noise_window, off ? off[2] : 0, w, zl, &c[0], &med);
    if (!(c[0] >= g->look_change * o->min_change))
        *zl = -INFINITY; /* under the change that matters: nothing to look at */
    int confirmed = 0;
    for (size_t m = 2; m <= 3 && m <= n && !confirmed; m++) {
        double m0 = NAN;
        for (size_t q = 0; q < m; q++) {
            excess_at(v, n - m + q, q, o, g->noise_window, off ? off[3 - m + q] : 0, w, &z[q],
                      &c[q], q == 0 ? &m0 : &med);
        }
        if (m == 2)
            *pending = z[0] > g->three * o->threshold && z[1] > g->three * o->threshold &&
                       (c[0] + c[1]) / 2 >= g->look_change * o->min_change;
        if (m == 2 && !(c[0] > pair_min && c[1] > pair_min))
            continue; /* two values within the tail: the third decides */
        confirmed = confirms(z, c, m, (m == 2 ? pair : g->three) * o->threshold, o, m0);
    }
    return confirmed;
}

/* The lower median of the finite values of x[0..n) (reordered): the
 * ((k - 1) / 2)-th smallest of k, so that for 4 entries two of them hit at
 * once do not move it; NAN when fewer than two. */
static double lower_median(double *x, size_t n, size_t *count)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            x[k++] = x[i];
    *count = k;
    if (k < 2)
        return NAN;
    gsl_sort(x, 1, k);
    return x[(k - 1) / 2];
}

/* What pm_gate_judge works on: the runs judged (the lookback, the
 * previous and the latest run) and what its steps hand each other. */
typedef struct gate_ctx {
    const pm_gate_opts *g;
    size_t ne, first, latest, span;
    double *W; /* [span * ne]: entry i's worse change in run first + j (NAN: none) */
    double *tmp, *col;
    double *R;            /* [nr]: the whole test's ratio 1 + change, in the runs that have one */
    size_t *Rrun, nr;     /* R[q]'s run, less first */
    unsigned char *moved; /* [span]: runs where the whole test was beyond its noise */
    double *tch;          /* [span]: the whole test's change in each run */
    gate_work gw;
    const pm_check_opts *to; /* the test's window, history and threshold */
    double minch;            /* the least minimum change of the entries in the latest run */
    double pair_min;         /* two values confirm each other beyond it */
} gate_ctx;

/* Each gated entry's series judged, and its worse change in each run
 * judged against the median of the noise window before it (10 runs with
 * two slowed runs and a step in them would move the median the change is
 * taken from). */
static void entry_changes(gate_ctx *c, pm_gate_entry *e)
{
    for (size_t i = 0; i < c->ne; i++) {
        pm_gate_entry *x = &e[i];
        x->verdict = PM_GATE_SHORT;
        x->why = PM_GATE_WHY_NONE;
        x->beyond = x->prev_beyond = 0;
        pm_check_series(x->v, x->n, &x->o, &x->r);
        double sign = worse_sign(&x->o);
        if (!x->gated || sign == 0 || x->n == 0)
            continue;
        if (!c->to)
            c->to = &x->o;
        if (x->run[x->n - 1] == c->latest && x->o.min_change < c->minch)
            c->minch = x->o.min_change;
        pm_check_opts wo = x->o;
        if (wo.window < c->g->noise_window)
            wo.window = c->g->noise_window;
        for (size_t k = x->n; k-- > 0 && x->run[k] >= c->first;) {
            pm_check_result r;
            pm_check_series(x->v, k + 1, &wo, &r);
            if (r.verdict != PM_CHECK_SHORT && isfinite(r.change))
                c->W[(x->run[k] - c->first) * c->ne + i] = sign * r.change;
        }
    }
}

/* The whole test's change in each run (the lower median of its entries'),
 * the single-entry tail, and the bar two values of an entry confirm each
 * other beyond. */
static void test_changes(gate_ctx *c, pm_gate_test *t)
{
    const pm_gate_opts *g = c->g;
    size_t ne = c->ne, big = 0, pn = 0;
    double ptail = NAN; /* the largest entry change before the last two runs */
    for (size_t j = 0; j < c->span; j++) {
        if (c->first + j < c->latest)
            for (size_t i = 0; i < ne; i++) {
                double w = c->W[j * ne + i];
                if (!isnan(w) && (t->entry_tail_n++ == 0 || w > t->entry_tail))
                    t->entry_tail = w;
                if (!isnan(w) && c->first + j + 1 < c->latest) { /* before the pair judged */
                    pn++;
                    big += w >= c->minch;
                    if (isnan(ptail) || w > ptail)
                        ptail = w;
                }
            }
        memcpy(c->col, c->W + j * ne, ne * sizeof *c->col);
        size_t cnt;
        double m = lower_median(c->col, ne, &cnt);
        if (c->first + j == c->latest)
            t->entries = cnt;
        /* as ratios 1 + change, so that check's relative change is the
         * difference of the changes */
        if (!isnan(m) || c->first + j == c->latest) {
            c->Rrun[c->nr] = j;
            c->R[c->nr++] = isnan(m) ? NAN : 1 + m;
        }
    }
    if (t->entry_tail_n < g->tail_min)
        t->entry_tail = NAN;
    else
        t->entry_tail_rate = (double)big / (double)pn;
    /* Two values of an entry confirm each other when two hits in a row
     * are unlikely (the entry values before them reach the minimum change
     * at most pair_rate of the time, whose square is then under 1 in
     * 1,000; none seen counts as rare) or both are beyond the largest of
     * them, measured over tail_min values; otherwise the third decides. */
    double prate = pn ? (double)big / (double)pn : 0;
    c->pair_min = prate <= g->pair_rate ? -INFINITY : pn < g->tail_min ? INFINITY : ptail;
}

/* The whole test's verdict, from its series of ratios R. */
static void judge_test(gate_ctx *c, pm_gate_test *t)
{
    const pm_gate_opts *g = c->g;
    double *R = c->R;
    size_t nr = c->nr;
    if (!(c->to && t->entries >= 2 && nr >= 1 && isfinite(R[nr - 1])))
        return;
    pm_check_opts o = *c->to;
    o.better = PM_CHECK_LOWER;
    o.min_abs = 0;
    o.min_change = c->minch;
    pm_check_result r;
    for (size_t q = 1; q < nr; q++) {
        pm_check_series(R, q + 1, &o, &r);
        c->moved[c->Rrun[q]] = r.verdict == PM_CHECK_REGRESSION;
        c->tch[c->Rrun[q]] = c->moved[c->Rrun[q]] ? R[q] - 1 : 0;
    }
    pm_check_series(R, nr, &o, &r);
    t->change = R[nr - 1] - 1;
    t->n = r.n;
    t->median = r.median;
    t->mad = r.mad;
    t->z = r.z;
    if (r.verdict == PM_CHECK_SHORT)
        return;
    t->beyond = r.verdict == PM_CHECK_REGRESSION;
    if (nr >= 2) {
        pm_check_result p;
        pm_check_series(R, nr - 1, &o, &p);
        t->prev_beyond = p.verdict == PM_CHECK_REGRESSION;
    }
    for (size_t j = 0; j + 1 < nr; j++)
        if (isnan(t->tail) || R[j] - 1 > t->tail)
            t->tail = R[j] - 1;
    double zl;
    int pending;
    int confirmed = evidence(R, nr, &o, g, g->test_pair, -INFINITY, NULL, &c->gw, &zl, &pending);
    t->verdict = PM_GATE_OK;
    /* beyond its tail by test_margin robust sd, once the tail is measured
     * over enough runs: a new record by a hair, or of a short history, is
     * no evidence (in a stationary series the latest of k runs is the
     * largest once in k) */
    if (t->beyond && nr > g->test_tail_min &&
        t->change > t->tail + g->test_margin * PM_MAD_TO_SD * r.mad) {
        t->verdict = PM_GATE_REGRESSION;
        t->why = PM_GATE_WHY_TEST;
    } else if (confirmed) {
        t->verdict = PM_GATE_REGRESSION;
        t->why = PM_GATE_WHY_CONFIRMED;
    } else if (t->beyond) {
        t->verdict = PM_GATE_SUSPECT;
        t->why = nr > g->test_tail_min ? PM_GATE_WHY_WITHIN : PM_GATE_WHY_UNMEASURED;
    } else if (pending) {
        t->verdict = PM_GATE_SUSPECT;
        t->why = PM_GATE_WHY_LOOK;
    }
}

/* Entry i's verdict, beside the whole test's. */
static void judge_entry(gate_ctx *c, pm_gate_entry *x, size_t i, const pm_gate_test *t)
{
    const pm_gate_opts *g = c->g;
    double sign = worse_sign(&x->o);
    if (!x->gated || sign == 0 || x->r.verdict == PM_CHECK_SHORT)
        return;
    x->verdict = PM_GATE_OK;
    x->beyond = x->r.verdict == PM_CHECK_REGRESSION;
    size_t k = x->n - 1;
    if (x->n >= 2) {
        pm_check_result pr;
        judge_at(x->v, x->n - 2, 0, &x->o, g->pair * x->o.threshold, c->tmp, &pr);
        x->prev_beyond = pr.verdict == PM_CHECK_REGRESSION;
    }
    /* In a run where the whole test moved, the entry's own part of the
     * change is what is beyond the test's change. */
    double off[3] = {0, 0, 0};
    for (size_t q = 0; q < 3; q++) {
        if (x->n + q < 3)
            continue;
        size_t rn = x->run[x->n + q - 3];
        if (rn >= c->first)
            off[q] = c->tch[rn - c->first];
    }
    double zl;
    int pending;
    if (evidence(x->v, x->n, &x->o, g, g->pair, c->pair_min, off, &c->gw, &zl, &pending)) {
        x->verdict = PM_GATE_REGRESSION;
        x->why = PM_GATE_WHY_CONFIRMED;
        return;
    }
    /* the latest change as the tail was measured: against the noise
     * window's median */
    double w = x->run[k] >= c->first ? c->W[(x->run[k] - c->first) * c->ne + i] : NAN;
    if (isnan(w))
        w = sign * x->r.change;
    if (!x->beyond) {
        if (zl > g->look * x->o.threshold || pending) {
            x->verdict = PM_GATE_SUSPECT;
            x->why = PM_GATE_WHY_LOOK;
        }
    } else if (t->verdict == PM_GATE_REGRESSION && x->run[k] == c->latest) {
        x->verdict = PM_GATE_REGRESSION;
        x->why = PM_GATE_WHY_TEST;
    } else if (t->beyond && x->run[k] == c->latest) {
        x->verdict = PM_GATE_SUSPECT; /* with the whole test, within its tail */
        x->why = PM_GATE_WHY_WITHIN;
    } else if (!isnan(t->entry_tail) &&
               w > t->entry_tail + g->pair * x->o.threshold * rel_sd(&x->r)) {
        x->verdict = PM_GATE_REGRESSION;
        x->why = PM_GATE_WHY_TAIL;
    } else {
        x->verdict = PM_GATE_SUSPECT;
        x->why = isnan(t->entry_tail) ? PM_GATE_WHY_UNMEASURED : PM_GATE_WHY_WITHIN;
    }
}

int pm_gate_judge(pm_gate_entry *e, size_t ne, size_t nruns, const pm_gate_opts *g, pm_gate_test *t,
                  pm_error *err)
{
    memset(t, 0, sizeof *t);
    t->change = t->median = t->mad = t->z = t->tail = t->entry_tail = t->entry_tail_rate = NAN;
    t->verdict = PM_GATE_SHORT;
    if (nruns == 0)
        return 0;
    gate_ctx c = {.g = g, .ne = ne, .latest = nruns - 1, .minch = INFINITY};
    c.first = c.latest > g->lookback + 1 ? c.latest - g->lookback - 1 : 0;
    c.span = c.latest - c.first + 1;
    size_t maxw = g->noise_window + 1;
    for (size_t i = 0; i < ne; i++)
        if (e[i].o.window + 1 > maxw)
            maxw = e[i].o.window + 1;
    c.W = pm_alloc_array(c.span, ne * sizeof *c.W);
    c.tmp = pm_alloc_array(maxw, sizeof *c.tmp);
    c.col = pm_alloc_array(ne ? ne : 1, sizeof *c.col);
    c.R = pm_alloc_array(c.span, sizeof *c.R);
    c.Rrun = pm_alloc_array(c.span, sizeof *c.Rrun);
    c.moved = calloc(c.span, 1);
    c.tch = calloc(c.span, sizeof *c.tch);
    c.gw = (gate_work){c.tmp, pm_alloc_array(maxw, 3 * sizeof *c.gw.qw),
                       pm_alloc_array(maxw, 5 * sizeof *c.gw.qi)};
    int rc = 0;
    if (!c.W || !c.tmp || !c.col || !c.R || !c.Rrun || !c.moved || !c.tch || !c.gw.qw || !c.gw.qi) {
        rc = pm_error_set(err, PM_ENOMEM, "the gate: out of memory");
        goto out;
    }
    for (size_t j = 0; j < c.span * ne; j++)
        c.W[j] = NAN;
    entry_changes(&c, e);
    test_changes(&c, t);
    judge_test(&c, t);
    for (size_t i = 0; i < ne; i++)
        judge_entry(&c, &e[i], i, t);
out:
    free(c.gw.qw);
    free(c.gw.qi);
    free(c.W);
    free(c.tmp);
    free(c.col);
    free(c.R);
    free(c.Rrun);
    free(c.moved);
    free(c.tch);
    return rc;
}
