/* A per-node column across nodes, and the nodes that stand out (see
 * spread.h). */
#include "perfmon/spread.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/mem.h"
#include "perfmon/order.h"

int pm_spread_of(const double *v, size_t n, pm_spread *out)
{
    out->n = 0;
    out->min = out->p5 = out->median = out->p95 = out->max = NAN;
    double *x = pm_alloc_array(n ? n : 1, sizeof *x);
    if (!x)
        return PM_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            x[k++] = v[i];
    if (k) {
        qsort(x, k, sizeof *x, pm_cmp_double);
        out->n = k;
        out->min = x[0];
        out->max = x[k - 1];
        out->p5 = gsl_stats_quantile_from_sorted_data(x, 1, k, 0.05);
        out->median = gsl_stats_quantile_from_sorted_data(x, 1, k, 0.5);
        out->p95 = gsl_stats_quantile_from_sorted_data(x, 1, k, 0.95);
    }
    free(x);
    return 0;
}

double pm_quality_span(const pm_analysis *a)
{
    double *first = pm_alloc_array(a->in.nhosts ? a->in.nhosts : 1, sizeof *first);
    double *last = pm_alloc_array(a->in.nhosts ? a->in.nhosts : 1, sizeof *last);
    size_t n = 0;
    for (size_t h = 0; h < a->in.nhosts && first && last; h++)
        if (a->in.hosts[h].n) {
            /* (the stream mode keeps the first and last alone) */
            const pm_host *ho = &a->in.hosts[h];
            first[n] = ho->t ? ho->t[0] : ho->t_first;
            last[n++] = ho->t ? ho->t[ho->n - 1] : ho->t_last;
        }
    double span = NAN;
    if (n && first && last) {
        qsort(first, n, sizeof *first, pm_cmp_double);
        qsort(last, n, sizeof *last, pm_cmp_double);
        span = gsl_stats_median_from_sorted_data(last, 1, n) -
               gsl_stats_median_from_sorted_data(first, 1, n);
    } else if (!first || !last) {
        span = a->t_end - a->t_start; /* out of memory: the job's span */
    }
    free(first);
    free(last);
    return span;
}

void pm_quality_row_of(const pm_analysis *a, size_t h, double span, pm_quality_row *q)
{
    const pm_host *ho = &a->in.hosts[h];
    const pm_node_summary *s = &a->nodes[h];
    double gaps = 0;
    int closing = s->closing_interval_s < 0.5 * ho->interval;
    for (size_t m = 0; m < a->nmetrics; m++) {
        const pm_series *sr = a->metrics[m].host[h];
        if (!sr)
            continue;
        double g = (double)sr->qc.n[PM_Q_GAP];
        /* Not gaps, but empty by construction (docs/report.md, "Data
         * quality"): the first sample of a rate, and of a gauge that the
         * sampler computes over the interval before it (cpu.percent, the
         * cores' extremes, the tree's CPU); and the closing sample taken
         * right after the command ended, whose interval (shorter than half
         * the node's) may hold no clock tick for such a gauge. */
        if (g > 0 && pm_series_first_gap(sr))
            g--;
        if (g > 0 && sr->n > 1 && closing && pm_series_last_gap(sr))
            g--;
        gaps += g;
    }
    q->samples = (double)ho->n;
    q->interval_s = ho->interval;
    q->dropped = (double)ho->dropped_time;
    q->repaired = (double)s->repaired;
    q->gaps = gaps;
    q->clock_offset_s = ho->clock.offset_s;
    q->sampler_cpu_pct = s->sampler_cpu_pct;
    q->sampler_mib = s->sampler_peak_rss_bytes / 1048576.0;
    q->missed = s->sampler_missed;
    /* The span most nodes cover at the node's own interval: a node that
     * started late, stopped early or skipped samples holds fewer. */
    q->lost = 0;
    if (ho->interval > 0 && span > 0) {
        double expect = floor(span / ho->interval + 0.5) + 1;
        if (expect > q->samples)
            q->lost = expect - q->samples;
    }
}

/* Append "what" to a reason, comma separated. */
static void add_reason(char *r, size_t cap, const char *what)
{
    size_t l = strlen(r);
    if (l + 3 < cap)
        snprintf(r + l, cap - l, "%s%s", l ? ", " : "", what);
}

static void count_reason(char *r, size_t cap, double n, const char *one, const char *many)
{
    if (!(n > 0))
        return;
    char b[96];
    snprintf(b, sizeof b, "%.0f %s", n, n == 1 ? one : many);
    add_reason(r, cap, b);
}

static void insert_rank(pm_node_rank *out, size_t *n, size_t max, const pm_node_rank *x)
{
    size_t i = *n < max ? (*n)++ : max;
    if (i == max && !(x->score > out[max - 1].score))
        return;
    if (i == max)
        i = max - 1;
    while (i > 0 && out[i - 1].score < x->score) {
        out[i] = out[i - 1];
        i--;
    }
    out[i] = *x;
}

size_t pm_quality_worst(const pm_analysis *a, pm_node_rank *out, size_t max, size_t *total)
{
    size_t n = 0;
    *total = 0;
    double span = pm_quality_span(a);
    for (size_t h = 0; h < a->in.nhosts; h++) {
        pm_quality_row q;
        pm_quality_row_of(a, h, span, &q);
        pm_node_rank x;
        memset(&x, 0, sizeof x);
        x.host = h;
        char *r = x.reason;
        size_t cap = sizeof x.reason;
        /* Score in samples: what the node's profile lacks or had mended. */
        double off = fabs(q.clock_offset_s);
        double missed = isfinite(q.missed) ? q.missed : 0;
        x.score = q.lost + missed + q.dropped + q.repaired +
                  q.gaps / (double)(a->nmetrics ? a->nmetrics : 1);
        count_reason(r, cap, q.lost, "sample lost", "samples lost");
        count_reason(r, cap, missed, "sample missed by the sampler",
                     "samples missed by the sampler");
        count_reason(r, cap, q.dropped, "sample dropped (time not increasing)",
                     "samples dropped (time not increasing)");
        count_reason(r, cap, q.repaired, "value repaired", "values repaired");
        count_reason(r, cap, q.gaps, "missing value", "missing values");
        if (isfinite(off) && off >= 1) {
            char b[64];
            snprintf(b, sizeof b, "clock offset %.3g s", q.clock_offset_s);
            add_reason(r, cap, b);
            if (q.interval_s > 0)
                x.score += off / q.interval_s;
        }
        if (isfinite(q.sampler_cpu_pct) && q.sampler_cpu_pct > 1) {
            char b[64];
            snprintf(b, sizeof b, "sampler used %.2g %% CPU", q.sampler_cpu_pct);
            add_reason(r, cap, b);
            x.score += q.sampler_cpu_pct;
        }
        if (x.score > 0 && r[0]) {
            (*total)++;
            if (max)
                insert_rank(out, &n, max, &x);
        }
    }
    return n;
}

double pm_idle_share(const pm_node_summary *s)
{
    double over = s->cpu_avg_utilization_over20_pct;
    return isfinite(over) ? 100.0 - over : NAN;
}

/* Why a node is at an end of the resource-use ranking, in words. */
static void usage_reason(const pm_node_summary *s, double cpu_median, char *r, size_t cap)
{
    char b[128];
    r[0] = 0;
    double idle = pm_idle_share(s);
    if (idle >= 0.5) {
        snprintf(b, sizeof b, "idle %.0f %% of the job", idle);
        add_reason(r, cap, b);
    }
    snprintf(b, sizeof b, "CPU %.3g %% (median node %.3g %%)", s->cpu_avg_utilization_pct,
             cpu_median);
    add_reason(r, cap, b);
    if (isfinite(s->cpu_avg_utilization_over80_pct) && s->cpu_avg_utilization_over80_pct >= 0.5) {
        snprintf(b, sizeof b, "above 80 %% for %.0f %% of the job",
                 s->cpu_avg_utilization_over80_pct);
        add_reason(r, cap, b);
    }
    if (isfinite(s->max_t_mem_percent) && s->max_t_mem_percent >= 90) {
        snprintf(b, sizeof b, "memory peak %.3g %%", s->max_t_mem_percent);
        add_reason(r, cap, b);
    }
}

int pm_usage_outliers(const pm_analysis *a, pm_node_rank *worst, size_t *nw, pm_node_rank *best,
                      size_t *nb, size_t max)
{
    *nw = *nb = 0;
    double *cpu = pm_alloc_array(a->in.nhosts ? a->in.nhosts : 1, sizeof *cpu);
    if (!cpu)
        return PM_ENOMEM;
    size_t k = 0;
    for (size_t h = 0; h < a->in.nhosts; h++)
        cpu[h] = a->in.hosts[h].gpu ? NAN : a->nodes[h].cpu_avg_utilization_pct;
    for (size_t h = 0; h < a->in.nhosts; h++)
        k += isfinite(cpu[h]) != 0;
    pm_spread sp;
    int rc = pm_spread_of(cpu, a->in.nhosts, &sp);
    free(cpu);
    if (rc)
        return rc;
    /* Each end gets at most half the nodes, so none is in both. */
    size_t m = k / 2 < max ? k / 2 : max;
    if (!m)
        return 0;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        const pm_node_summary *s = &a->nodes[h];
        if (a->in.hosts[h].gpu || !isfinite(s->cpu_avg_utilization_pct))
            continue;
        double idle = pm_idle_share(s);
        /* Worst: most idle time, then least CPU; best: the reverse. */
        double key = (isfinite(idle) ? idle : 0) * 1000 + (100 - s->cpu_avg_utilization_pct);
        pm_node_rank x;
        memset(&x, 0, sizeof x);
        x.host = h;
        usage_reason(s, sp.median, x.reason, sizeof x.reason);
        x.score = key;
        insert_rank(worst, nw, m, &x);
        x.score = -key;
        insert_rank(best, nb, m, &x);
    }
    for (size_t i = 0; i < *nb; i++)
        best[i].score = -best[i].score;
    return 0;
}
