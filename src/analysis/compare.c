/* Two jobs compared: differences of the key statistics per job figure,
 * catalog metric and phase kind, judged against the within-job noise
 * (docs/analysis.md, "Comparing two jobs"). */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/compare.h"
#include "perfmon/buf.h"
#include "perfmon/job_end.h"
#include "perfmon/mem.h"
#include "perfmon/phase_stats.h"
#include "perfmon/vec.h"

#define MAD_TO_SD 1.4826 /* the MAD of normal data to its standard deviation */

#define RHO_MAX 0.9

void pm_compare_opts_init(pm_compare_opts *o)
{
    memset(o, 0, sizeof *o);
    o->threshold_pct = NAN;
}

const char *pm_analysis_job_id(const pm_analysis *a)
{
    for (size_t h = 0; h < a->in.nhosts; h++)
        if (a->in.hosts[h].prof && a->in.hosts[h].prof->info.job_id[0])
            return a->in.hosts[h].prof->info.job_id;
    return "";
}

void pm_compare_job_label(const pm_comparison *c, int which, char *out, size_t cap)
{
    char tmp[600];
    const pm_analysis *x = which ? c->b : c->a;
    const char *job = pm_analysis_job_id(x);
    snprintf(tmp, sizeof tmp, "%s: %s%s%s%s", which ? "B" : "A", which ? c->label_b : c->label_a,
             *job ? " (job " : "", job, *job ? ")" : "");
    size_t i = 0;
    for (; tmp[i] && i + 1 < cap; i++)
        out[i] = (unsigned char)tmp[i] < 0x20 || tmp[i] == 0x7f ? '?' : tmp[i];
    if (cap)
        out[i] = 0;
}

void pm_compare_pct_text(double pct, char *out, size_t cap)
{
    if (isnan(pct))
        snprintf(out, cap, "-");
    else if (isinf(pct))
        snprintf(out, cap, "%s", pct > 0 ? "+inf" : "-inf");
    else if (fabs(pct) < 0.05)
        snprintf(out, cap, "0.0%%");
    else
        snprintf(out, cap, "%+.1f%%", pct);
}

/* The noise model shared by pm_compare_se and pm_compare_sigma: the mean
 * square of neighbour differences (*msq) and the lag-1 correlation of the
 * AR(1) noise behind them (*rho, clamped to [0, RHO_MAX]), over the valid
 * values (*nvalid).  0 when they are known, -1 when there are too few
 * values; *msq == 0 is a constant series. */
static int ar1_noise(const double *v, size_t n, double *scratch, size_t *nvalid, double *msq,
                     double *rho)
{
    size_t nd = 0;
    *nvalid = 0;
    *msq = 0;
    *rho = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            continue;
        (*nvalid)++;
        /* Only neighbours on the grid: a gap breaks the chain. */
        if (i > 0 && isfinite(v[i - 1])) {
            double d = v[i] - v[i - 1];
            scratch[nd++] = d;
            *msq += d * d;
        }
    }
    if (*nvalid < 3 || nd < 2)
        return -1;
    *msq /= (double)nd;
    if (*msq == 0)
        return 0;
    /* For AR(1) noise with lag-1 correlation rho the differences have
     * lag-1 correlation -(1 - rho) / 2, so rho = 1 + 2 r1. */
    double r1 = gsl_stats_lag1_autocorrelation(scratch, 1, nd);
    double r = isfinite(r1) ? 1 + 2 * r1 : 0;
    *rho = r < 0 ? 0 : r > RHO_MAX ? RHO_MAX : r;
    return 0;
}

double pm_compare_se(const double *v, size_t n, double *scratch)
{
    size_t nvalid;
    double msq, rho;
    if (ar1_noise(v, n, scratch, &nvalid, &msq, &rho) != 0)
        return NAN;
    if (msq == 0)
        return 0; /* a constant series: its mean is exact */
    double var = msq / (2 * (1 - rho));
    return sqrt(var * (1 + rho) / (1 - rho) / (double)nvalid);
}

double pm_compare_sigma(const double *v, size_t n, double *scratch)
{
    size_t nvalid;
    double msq, rho;
    if (ar1_noise(v, n, scratch, &nvalid, &msq, &rho) != 0)
        return NAN;
    return msq == 0 ? 0 : sqrt(msq / (2 * (1 - rho)));
}

void pm_compare_side_series(const double *t, const double *v, size_t n, int weighting,
                            double *scratch, pm_compare_side *s)
{
    pm_stats st;
    pm_stats_compute(t, v, n, weighting, scratch, &st);
    s->n = st.nvalid;
    s->mean = st.mean;
    s->p95 = st.p95;
    s->max = st.max;
    s->se = st.nvalid ? pm_compare_se(v, n, scratch) : NAN;
}

void pm_compare_judge(pm_compare_row *r, double z)
{
    double a = r->a.mean, b = r->b.mean;
    r->diff = r->pct = r->se = r->zscore = NAN;
    r->significant = 0;
    if (!isfinite(a) || !isfinite(b)) {
        r->verdict = PM_VERDICT_MISSING;
        return;
    }
    r->diff = b - a;
    if (a != 0)
        r->pct = 100 * r->diff / fabs(a);
    else
        r->pct = r->diff == 0 ? 0 : copysign(INFINITY, r->diff);
    if (isfinite(r->a.se) && isfinite(r->b.se)) {
        r->se = hypot(r->a.se, r->b.se);
        r->zscore = r->se > 0 ? r->diff / r->se : r->diff == 0 ? 0 : copysign(INFINITY, r->diff);
        r->significant = fabs(r->diff) > z * r->se;
    } else {
        /* No noise estimate: for a job figure or a phase duration on one
         * node the threshold alone decides; a series too short to
         * estimate its noise cannot show a significant difference. */
        r->significant = r->kind == PM_CMP_FIGURE || r->kind == PM_CMP_PHASE_DURATION;
    }
    /* The threshold is taken of the smaller of |A| and |B|, so that the
     * test reads the same when A and B swap: each row's verdict mirrors
     * (worse <-> better), and a pair cannot be worse both ways. */
    double base = fmin(fabs(a), fabs(b));
    int beyond = (base > 0 ? 100 * fabs(r->diff) / base > r->threshold_pct : r->diff != 0) &&
                 fabs(r->diff) > r->min_abs;
    if (!beyond)
        r->verdict = PM_VERDICT_SAME;
    else if (!r->significant)
        r->verdict = PM_VERDICT_NOISE;
    else if (r->better == PM_BETTER_NONE)
        r->verdict = PM_VERDICT_CHANGED;
    else if ((r->better == PM_BETTER_LOWER) == (r->diff > 0))
        r->verdict = PM_VERDICT_WORSE;
    else
        r->verdict = PM_VERDICT_BETTER;
}

/* ---- the words every output shares ----------------------------------------- */

size_t pm_compare_rule_text(const pm_comparison *c, char *out, size_t cap)
{
    int n = snprintf(out, cap,
                     "a difference counts when it exceeds %.3g %% of the smaller of A and B (or "
                     "the metric's own threshold in compare.json), is larger than the metric's "
                     "absolute floor where compare.json sets one (min_abs), and exceeds %.3g "
                     "standard errors of both jobs' noise; only gated rows make B worse",
                     c->threshold_pct, c->z);
    return n < 0 ? 0 : (size_t)n;
}

/* Whether r's difference passes the relative threshold (pm_compare_judge's
 * first test, without min_abs). */
static int beyond_pct(const pm_compare_row *r)
{
    double base = fmin(fabs(r->a.mean), fabs(r->b.mean));
    return base > 0 ? 100 * fabs(r->diff) / base > r->threshold_pct : r->diff != 0;
}

void pm_compare_row_verdict(const pm_compare_row *r, char *out, size_t cap)
{
    const char *v = pm_verdict_name(r->verdict);
    if (r->suspect && r->verdict == PM_VERDICT_WORSE)
        snprintf(out, cap, "worse (suspect: one run of each)");
    else if (r->suspect)
        snprintf(out, cap, "suspect (%zu of %zu runs of B)", r->runs_beyond, r->runs_b);
    else if ((r->verdict == PM_VERDICT_WORSE || r->verdict == PM_VERDICT_BETTER) && !r->gated)
        snprintf(out, cap, "%s (info)", v);
    else if (r->verdict == PM_VERDICT_SAME && r->min_abs > 0 && isfinite(r->diff) && beyond_pct(r))
        snprintf(out, cap, "%s (|B-A| <= %.3g)", v, r->min_abs);
    else
        snprintf(out, cap, "%s", v);
}

size_t pm_compare_verdict_text(const pm_comparison *c, char *out, size_t cap)
{
    pm_buf b;
    pm_buf_init(&b);
    static const char *const head[] = {"B is not worse than A", "B is worse than A",
                                       "B is better than A", "mixed: B is worse than A"};
    int o = c->overall >= 0 && c->overall <= PM_OVERALL_MIXED ? c->overall : 0;
    pm_buf_puts(&b, head[o]);
    for (int pass = 0; pass < 2; pass++) {
        int v = pass == 0 ? (o == PM_OVERALL_BETTER ? PM_VERDICT_BETTER : PM_VERDICT_WORSE)
                          : PM_VERDICT_BETTER;
        if (pass == 0 && o == PM_OVERALL_SAME)
            break;
        if (pass == 1 && o != PM_OVERALL_MIXED)
            break;
        pm_buf_puts(&b, pass == 0 ? (o == PM_OVERALL_MIXED ? " on" : ":") : "; better on");
        size_t shown = 0;
        for (size_t i = 0; i < c->nrows; i++) {
            const pm_compare_row *r = &c->rows[i];
            if (!r->gated || r->verdict != v)
                continue;
            char p[64];
            if (r->kind == PM_CMP_END)
                snprintf(p, sizeof p, "(%s, then %s)", pm_end_state_name((int)r->a.mean),
                         pm_end_state_name((int)r->b.mean));
            else
                pm_compare_pct_text(r->pct, p, sizeof p);
            pm_buf_printf(&b, "%s %s%s%s %s", shown ? "," : "", r->key, r->phase[0] ? " in " : "",
                          r->phase, p);
            shown++;
        }
    }
    if (c->gated_suspect && o != PM_OVERALL_WORSE && o != PM_OVERALL_MIXED) {
        /* worse in some runs of B, not confirmed: one more run decides */
        pm_buf_puts(&b, "; suspect:");
        size_t shown = 0;
        for (size_t i = 0; i < c->nrows; i++) {
            const pm_compare_row *r = &c->rows[i];
            if (!r->gated || !r->suspect || r->verdict == PM_VERDICT_WORSE)
                continue;
            char p[64];
            pm_compare_pct_text(r->pct, p, sizeof p);
            pm_buf_printf(&b, "%s %s %s (%zu of %zu runs of B beyond A's noise)", shown ? "," : "",
                          r->key, p, r->runs_beyond, r->runs_b);
            shown++;
        }
        pm_buf_puts(&b, ": rerun B to confirm");
    }
    size_t info = c->count[PM_VERDICT_WORSE] - c->gated_worse;
    if (info)
        pm_buf_printf(&b, " (%zu worse row%s informational, not gated)", info,
                      info == 1 ? "" : "s");
    size_t n = b.len;
    snprintf(out, cap, "%s", b.data && !b.oom ? b.data : "");
    pm_buf_free(&b);
    return n;
}

/* ---- rows ------------------------------------------------------------------ */

typedef struct builder {
    pm_comparison *c;
    size_t cap;
    const pm_compare_cfg *cfg;
    double override_pct; /* NaN: per rule */
    const pm_gate_names *gate;
    double *scratch, *masked; /* [max grid points] */
} builder;

static pm_compare_row *add_row(builder *bd, int kind, const char *key, const char *phase,
                               const char *name, const char *unit)
{
    pm_comparison *c = bd->c;
    if (PM_VEC_RESERVE(c->rows, bd->cap, c->nrows + 1, 64) != 0)
        return NULL;
    pm_compare_row *r = &c->rows[c->nrows++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    snprintf(r->key, sizeof r->key, "%s", key);
    snprintf(r->phase, sizeof r->phase, "%s", phase ? phase : "");
    r->name = name;
    r->unit = unit;
    r->a.mean = r->b.mean = r->a.p95 = r->b.p95 = r->a.max = r->b.max = NAN;
    r->a.se = r->b.se = NAN;
    return r;
}

static void apply_rule(const builder *bd, pm_compare_row *r, const pm_compare_rule *rule,
                       int default_better)
{
    r->better = rule ? rule->better : default_better;
    if (r->kind == PM_CMP_PHASE_DURATION) {
        char name[80];
        snprintf(name, sizeof name, "phase:%s", r->phase);
        r->gated = pm_gate_decide(bd->gate, name, r->better, bd->cfg->phase_gate);
    } else {
        r->gated = pm_gate_decide(bd->gate, r->key, r->better, rule ? rule->gate : 0);
    }
    r->min_abs = rule ? rule->min_abs : 0;
    r->threshold_pct =
        rule && isfinite(rule->threshold_pct) ? rule->threshold_pct : bd->cfg->threshold_pct;
    if (isfinite(bd->override_pct))
        r->threshold_pct = bd->override_pct;
}

static const pm_metric_result *result_of(const pm_analysis *x, const char *id);

/* The noise of a job figure, borrowed from the series it is made of: the
 * relative standard error of the series' mean for a figure that is a mean
 * or a total, its relative sample-to-sample noise for a peak (a maximum
 * moves with each sample's jitter, not with the mean's), scaled to the
 * figure.  NaN when the series is absent or its noise unknown. */
static double figure_se(builder *bd, const pm_analysis *x, const char *series, const pm_figure *f,
                        double value)
{
    const pm_metric_result *m = result_of(x, series);
    if (!m || !isfinite(value) || m->agg.n < 3)
        return NAN;
    pm_compare_side s = {0, NAN, NAN, NAN, NAN};
    pm_compare_side_series(m->agg.t, m->agg.v, m->agg.n, PM_W_NONE, bd->scratch, &s);
    if (!isfinite(s.se) || !isfinite(s.mean) || s.mean == 0)
        return NAN;
    double noise = s.se;
    if (f->job == PM_JOB_MAX)
        noise = pm_compare_sigma(m->agg.v, m->agg.n, bd->scratch);
    return isfinite(noise) ? fabs(value) * noise / fabs(s.mean) : NAN;
}

/* How the jobs ended (docs/analysis.md, "Comparing two jobs"): B failing
 * (failed, signal, timeout, OOM) where A did not is worse, and gated. */
static int end_row(builder *bd)
{
    const pm_analysis *a = bd->c->a, *b = bd->c->b;
    pm_compare_row *r = add_row(bd, PM_CMP_END, "end", NULL, "how the job ended", "");
    if (!r)
        return PM_ENOMEM;
    r->a.mean = a->end.state;
    r->b.mean = b->end.state;
    r->a.n = r->b.n = 1;
    r->better = PM_BETTER_LOWER;
    r->gated = pm_gate_decide(bd->gate, "end", PM_BETTER_LOWER, 1);
    return 0;
}

/* The end row's verdict: worse or better when one job failed and the
 * other did not, changed when the states differ otherwise. */
static void judge_end(pm_compare_row *r)
{
    int fa = r->a.mean >= PM_END_FAILED, fb = r->b.mean >= PM_END_FAILED;
    r->diff = r->b.mean - r->a.mean;
    r->pct = NAN;
    r->se = r->zscore = NAN;
    r->significant = r->a.mean != r->b.mean;
    r->verdict = fb && !fa                ? PM_VERDICT_WORSE
                 : fa && !fb              ? PM_VERDICT_BETTER
                 : r->a.mean != r->b.mean ? PM_VERDICT_CHANGED
                                          : PM_VERDICT_SAME;
}

static int figure_rows(builder *bd)
{
    const pm_analysis *a = bd->c->a, *b = bd->c->b;
    for (size_t i = 0; i < bd->cfg->nfigures; i++) {
        const pm_compare_rule *rule = &bd->cfg->figures[i];
        const pm_figure *f = pm_figure_find(rule->key);
        if (!f)
            continue;
        double va = pm_figure_value(&a->job, f), vb = pm_figure_value(&b->job, f);
        if (!isfinite(va) && !isfinite(vb))
            continue;
        pm_compare_row *r = add_row(bd, PM_CMP_FIGURE, f->key, NULL, f->title, f->unit);
        if (!r)
            return PM_ENOMEM;
        r->a.mean = va;
        r->b.mean = vb;
        r->a.n = isfinite(va);
        r->b.n = isfinite(vb);
        if (rule->series[0]) {
            r->a.se = figure_se(bd, a, rule->series, f, va);
            r->b.se = figure_se(bd, b, rule->series, f, vb);
        }
        apply_rule(bd, r, rule, PM_BETTER_NONE);
    }
    return 0;
}

static int weighting_of(const pm_analysis *x, const pm_metric_def *d)
{
    return x->opts.compat_ska ? PM_W_NONE : d->rate ? PM_W_STEP : PM_W_TRAPEZOID;
}

/* The all-node series of metric id in x, or NULL. */
static const pm_metric_result *result_of(const pm_analysis *x, const char *id)
{
    int m = pm_analysis_metric(x, id);
    return m < 0 ? NULL : &x->metrics[m];
}

static int metric_rows(builder *bd)
{
    const pm_analysis *a = bd->c->a, *b = bd->c->b;
    for (size_t i = 0; i < a->catalog->n; i++) {
        const pm_metric_def *d = &a->catalog->m[i];
        const pm_metric_result *ra = result_of(a, d->id), *rb = result_of(b, d->id);
        if (!ra && !rb)
            continue;
        pm_compare_row *r = add_row(bd, PM_CMP_METRIC, d->id, NULL, d->name, d->unit);
        if (!r)
            return PM_ENOMEM;
        if (ra)
            pm_compare_side_series(ra->agg.t, ra->agg.v, ra->agg.n, weighting_of(a, d), bd->scratch,
                                   &r->a);
        if (rb)
            pm_compare_side_series(rb->agg.t, rb->agg.v, rb->agg.n, weighting_of(b, d), bd->scratch,
                                   &r->b);
        apply_rule(bd, r, pm_compare_cfg_metric(bd->cfg, d->id), bd->cfg->default_better);
    }
    return 0;
}

static const pm_phase_kind_stats *kind_of(const pm_analysis *x, const char *name)
{
    const pm_phase_stats *ps = x->phase_stats;
    for (size_t k = 0; ps && k < ps->nkinds; k++)
        if (strcmp(ps->kinds[k].name, name) == 0)
            return &ps->kinds[k];
    return NULL;
}

/* Per-node summed durations of a kind: mean over nodes, its standard
 * error from the spread between nodes, p95 and maximum. */
static void duration_side(const pm_analysis *x, const char *kind, double *scratch,
                          pm_compare_side *s)
{
    const pm_phase_stats *ps = x->phase_stats;
    size_t n = 0;
    double sum = 0;
    for (size_t i = 0; i < ps->nrows; i++)
        if (strcmp(ps->rows[i].name, kind) == 0) {
            scratch[n++] = ps->rows[i].total_s;
            sum += ps->rows[i].total_s;
        }
    s->n = n;
    if (!n)
        return;
    s->mean = sum / (double)n;
    s->se = n >= 2 ? pm_sd(scratch, n, s->mean) / sqrt((double)n) : NAN;
    s->max = gsl_stats_max(scratch, 1, n);
    s->p95 = pm_quantile_select(scratch, n, 0.95);
}

static int cmp_span(const void *pa, const void *pb)
{
    const double *x = pa, *y = pb;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* out[i] = v[i] where t[i] lies in a phase of the kind on any node, NaN
 * elsewhere.  Returns the number of points kept, or (size_t)-1 when out
 * of memory. */
static size_t mask_to_kind(const pm_analysis *x, const char *kind, const pm_aggregate *g,
                           double *out)
{
    const pm_phase_set *ps = &x->in.phases;
    double *sp = pm_alloc_array(ps->n ? ps->n : 1, 2 * sizeof *sp);
    if (!sp)
        return (size_t)-1;
    size_t ns = 0;
    for (size_t i = 0; i < ps->n; i++)
        if (strcmp(ps->v[i].name, kind) == 0 && ps->v[i].t1 >= ps->v[i].t0) {
            sp[2 * ns] = ps->v[i].t0;
            sp[2 * ns + 1] = ps->v[i].t1;
            ns++;
        }
    qsort(sp, ns, 2 * sizeof *sp, cmp_span);
    size_t kept = 0, k = 0;
    double reach = -INFINITY; /* the latest end among spans started so far */
    for (size_t i = 0; i < g->n; i++) {
        while (k < ns && sp[2 * k] <= g->t[i]) {
            reach = fmax(reach, sp[2 * k + 1]);
            k++;
        }
        int in = g->t[i] <= reach;
        out[i] = in ? g->v[i] : NAN;
        kept += in && isfinite(g->v[i]);
    }
    free(sp);
    return kept;
}

static int phase_metric_side(builder *bd, const pm_analysis *x, const char *kind,
                             const pm_metric_def *d, pm_compare_side *s)
{
    const pm_metric_result *r = result_of(x, d->id);
    if (!r)
        return 0;
    size_t kept = mask_to_kind(x, kind, &r->agg, bd->masked);
    if (kept == (size_t)-1)
        return PM_ENOMEM;
    if (kept)
        pm_compare_side_series(r->agg.t, bd->masked, r->agg.n, weighting_of(x, d), bd->scratch, s);
    return 0;
}

static int phase_rows(builder *bd)
{
    const pm_analysis *a = bd->c->a, *b = bd->c->b;
    if (!a->phase_stats || !b->phase_stats)
        return 0;
    for (size_t k = 0; k < a->phase_stats->nkinds; k++) {
        const char *kind = a->phase_stats->kinds[k].name;
        if (!kind_of(b, kind))
            continue;
        bd->c->nphase_kinds++;
        pm_compare_row *r =
            add_row(bd, PM_CMP_PHASE_DURATION, "duration", kind, "Duration per node", "s");
        if (!r)
            return PM_ENOMEM;
        duration_side(a, kind, bd->scratch, &r->a);
        duration_side(b, kind, bd->scratch, &r->b);
        apply_rule(bd, r, NULL, bd->cfg->phase_better);
        for (size_t i = 0; i < a->catalog->n; i++) {
            const pm_metric_def *d = &a->catalog->m[i];
            pm_compare_side sa = {0, NAN, NAN, NAN, NAN}, sb = sa;
            int rc;
            if ((rc = phase_metric_side(bd, a, kind, d, &sa)) ||
                (rc = phase_metric_side(bd, b, kind, d, &sb)))
                return rc;
            if (sa.n == 0 && sb.n == 0)
                continue;
            r = add_row(bd, PM_CMP_PHASE_METRIC, d->id, kind, d->name, d->unit);
            if (!r)
                return PM_ENOMEM;
            r->a = sa;
            r->b = sb;
            apply_rule(bd, r, pm_compare_cfg_metric(bd->cfg, d->id), bd->cfg->default_better);
        }
    }
    return 0;
}

static size_t max_points(const pm_analysis *x)
{
    size_t n = 16;
    for (size_t m = 0; m < x->nmetrics; m++)
        if (x->metrics[m].agg.n > n)
            n = x->metrics[m].agg.n;
    if (x->phase_stats && x->phase_stats->nrows > n) /* per-node phase durations */
        n = x->phase_stats->nrows;
    return n;
}

void pm_comparison_free(pm_comparison *c)
{
    if (!c)
        return;
    free(c->rows);
    free(c);
}

/* The counts per verdict and the overall verdict from the rows. */
static void recount(pm_comparison *c)
{
    memset(c->count, 0, sizeof c->count);
    c->gated_worse = c->gated_better = c->gated_suspect = 0;
    for (size_t i = 0; i < c->nrows; i++) {
        const pm_compare_row *r = &c->rows[i];
        c->count[r->verdict]++;
        c->gated_worse += r->gated && r->verdict == PM_VERDICT_WORSE;
        c->gated_better += r->gated && r->verdict == PM_VERDICT_BETTER;
        c->gated_suspect += r->gated && r->suspect && r->verdict != PM_VERDICT_WORSE;
    }
    c->overall = c->gated_worse && c->gated_better ? PM_OVERALL_MIXED
                 : c->gated_worse                  ? PM_OVERALL_WORSE
                 : c->gated_better                 ? PM_OVERALL_BETTER
                                                   : PM_OVERALL_SAME;
    /* A job that failed where the other did not is worse whatever its
     * figures (a crash is quick): the end row decides alone. */
    for (size_t i = 0; i < c->nrows; i++) {
        const pm_compare_row *r = &c->rows[i];
        if (r->kind == PM_CMP_END && r->gated && r->verdict == PM_VERDICT_WORSE)
            c->overall = PM_OVERALL_WORSE;
        else if (r->kind == PM_CMP_END && r->gated && r->verdict == PM_VERDICT_BETTER)
            c->overall = PM_OVERALL_BETTER;
    }
}

int pm_compare_run(const pm_analysis *a, const pm_analysis *b, const pm_compare_cfg *cfg,
                   const pm_compare_opts *o, pm_comparison **out, pm_error *err)
{
    *out = NULL;
    builder bd;
    memset(&bd, 0, sizeof bd);
    bd.cfg = cfg;
    bd.gate = o ? &o->gate : NULL;
    bd.override_pct =
        o && isfinite(o->threshold_pct) && o->threshold_pct >= 0 ? o->threshold_pct : NAN;
    bd.c = calloc(1, sizeof *bd.c);
    size_t np = max_points(a) > max_points(b) ? max_points(a) : max_points(b);
    bd.scratch = pm_alloc_array(np, sizeof *bd.scratch);
    bd.masked = pm_alloc_array(np, sizeof *bd.masked);
    int rc = PM_ENOMEM;
    if (bd.c && bd.scratch && bd.masked) {
        bd.c->a = a;
        bd.c->b = b;
        bd.c->z = cfg->z;
        bd.c->label_a = o && o->label_a ? o->label_a : "A";
        bd.c->label_b = o && o->label_b ? o->label_b : "B";
        bd.c->threshold_pct = isfinite(bd.override_pct) ? bd.override_pct : cfg->threshold_pct;
        rc = end_row(&bd);
        if (!rc)
            rc = figure_rows(&bd);
        if (!rc)
            rc = metric_rows(&bd);
        if (!rc)
            rc = phase_rows(&bd);
    }
    free(bd.scratch);
    free(bd.masked);
    if (rc) {
        pm_comparison_free(bd.c);
        return pm_error_set(err, rc, "out of memory comparing the jobs");
    }
    for (size_t i = 0; i < bd.c->nrows; i++) {
        pm_compare_row *r = &bd.c->rows[i];
        r->runs_a = r->runs_b = 1;
        if (r->kind == PM_CMP_END)
            judge_end(r);
        else
            pm_compare_judge(r, cfg->z);
    }
    bd.c->runs_a = bd.c->runs_b = 1;
    recount(bd.c);
    *out = bd.c;
    return 0;
}

/* ---- several runs of each side: the gate's rules -------------------------- */

/* The median of x[0..n) (reordered); NAN for none. */
static double median_of(double *x, size_t n)
{
    if (n == 0)
        return NAN;
    gsl_sort(x, 1, n);
    return gsl_stats_median_from_sorted_data(x, 1, n);
}

/* Re-judge one figure row from the runs' values va[0..na), vb[0..nb)
 * (finite ones only; reordered). */
static void judge_runs(pm_compare_row *r, double *va, size_t na, double *vb, size_t nb, double z,
                       double *work)
{
    r->runs_a = na;
    r->runs_b = nb;
    r->runs_beyond = 0;
    r->suspect = 0;
    if (na == 0 || nb == 0) {
        pm_compare_judge(r, z);
        return;
    }
    double noise = NAN;
    if (na >= 3) {
        noise = MAD_TO_SD * gsl_stats_mad0(va, 1, na, work);
        r->a.se = noise / sqrt((double)na);
        r->b.se = noise / sqrt((double)nb);
    } else if (isfinite(r->a.se)) {
        noise = r->a.se;
    }
    double m = median_of(va, na);
    double sign = r->better == PM_BETTER_LOWER ? 1 : r->better == PM_BETTER_HIGHER ? -1 : 0;
    for (size_t j = 0; j < nb; j++) {
        double d = vb[j] - m, base = fmin(fabs(m), fabs(vb[j]));
        int pct = base > 0 ? 100 * fabs(d) / base > r->threshold_pct : d != 0;
        int noisy = isfinite(noise) && !(fabs(d) > z * noise);
        r->runs_beyond += sign != 0 && sign * d > 0 && pct && fabs(d) > r->min_abs && !noisy;
    }
    r->a.mean = m;
    r->b.mean = median_of(vb, nb);
    r->a.n = na;
    r->b.n = nb;
    pm_compare_judge(r, z);
    if (!r->gated || sign == 0)
        return;
    if (nb >= 2 && r->runs_beyond == nb) {
        r->verdict = PM_VERDICT_WORSE; /* confirmed by every run of B */
    } else if (r->runs_beyond > 0) {
        r->suspect = 1;
        if (r->verdict == PM_VERDICT_WORSE)
            r->verdict = PM_VERDICT_NOISE; /* not every run of B shows it */
    } else if (r->verdict == PM_VERDICT_WORSE) {
        r->verdict = PM_VERDICT_NOISE; /* the medians differ, no run is beyond A's noise */
    }
}

int pm_compare_runs(pm_comparison *c, const pm_analysis *const *as, size_t na,
                    const pm_analysis *const *bs, size_t nb, pm_error *err)
{
    size_t n = na > nb ? na : nb;
    double *va = pm_alloc_array(n ? n : 1, sizeof *va), *vb = pm_alloc_array(n ? n : 1, sizeof *vb);
    double *work = pm_alloc_array(n ? n : 1, sizeof *work);
    if (!va || !vb || !work) {
        free(va);
        free(vb);
        free(work);
        return pm_error_set(err, PM_ENOMEM, "out of memory comparing the runs");
    }
    for (size_t i = 0; i < c->nrows; i++) {
        pm_compare_row *r = &c->rows[i];
        if (r->kind != PM_CMP_FIGURE)
            continue;
        const pm_figure *f = pm_figure_find(r->key);
        if (!f)
            continue;
        size_t ka = 0, kb = 0;
        for (size_t k = 0; k < na; k++) {
            double v = pm_figure_value(&as[k]->job, f);
            if (isfinite(v))
                va[ka++] = v;
        }
        for (size_t k = 0; k < nb; k++) {
            double v = pm_figure_value(&bs[k]->job, f);
            if (isfinite(v))
                vb[kb++] = v;
        }
        if (ka + kb > 2) {
            judge_runs(r, va, ka, vb, kb, c->z, work);
        } else {
            r->runs_a = ka;
            r->runs_b = kb;
            r->runs_beyond = r->verdict == PM_VERDICT_WORSE;
            /* one run of each: worse, but nothing confirms it */
            r->suspect = r->gated && r->verdict == PM_VERDICT_WORSE;
        }
    }
    free(va);
    free(vb);
    free(work);
    c->runs_a = na;
    c->runs_b = nb;
    recount(c);
    return 0;
}
