/* Phase statistics: durations per node and kind, totals and averages per
 * kind across nodes, the spread of first starts across nodes (Batch
 * Shipyard's "nodeready variance"), and each metric's mean and energy
 * during the phases (docs/analysis.md, "Phases"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "perfmon/analysis.h"
#include "perfmon/mem.h"
#include "perfmon/phase_stats.h"

void pm_phase_stats_free(pm_phase_stats *s)
{
    if (!s)
        return;
    for (size_t k = 0; k < s->nkinds; k++) {
        free(s->kinds[k].name);
        free(s->kinds[k].mean);
        free(s->kinds[k].energy_j);
    }
    free(s->kinds);
    free(s->rows);
    free(s);
}

/* Index of the node named name among the first nnodes hosts (nodes come
 * first, sorted by name; GPUs, which have no phases of their own, after). */
static int host_index(const pm_analysis *a, size_t nnodes, const char *name)
{
    size_t lo = 0, hi = nnodes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(a->hosts[mid].name, name);
        if (c == 0)
            return (int)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* The hosts a node's phase covers: the node, then its GPUs (gpu-<n>.<node>),
 * as lists first[h] .. first[h + 1] of hosts[] indices in members. */
typedef struct node_hosts {
    size_t nnodes;
    size_t *first;   /* [nnodes + 1] */
    size_t *members; /* [nhosts] */
} node_hosts;

static int node_hosts_build(const pm_analysis *a, node_hosts *nh)
{
    size_t n = 0;
    while (n < a->nhosts && !a->hosts[n].gpu)
        n++;
    nh->nnodes = n;
    nh->first = calloc(n + 2, sizeof *nh->first);
    nh->members = pm_alloc_array(a->nhosts ? a->nhosts : 1, sizeof *nh->members);
    int *owner = pm_alloc_array(a->nhosts ? a->nhosts : 1, sizeof *owner);
    if (!nh->first || !nh->members || !owner) {
        free(owner);
        return -1;
    }
    for (size_t h = 0; h < a->nhosts; h++) {
        const char *dot = strchr(a->hosts[h].name, '.');
        owner[h] = h < n ? (int)h : dot ? host_index(a, n, dot + 1) : -1;
        if (owner[h] >= 0)
            nh->first[owner[h] + 2]++;
    }
    for (size_t i = 2; i < n + 2; i++)
        nh->first[i] += nh->first[i - 1];
    for (size_t h = 0; h < a->nhosts; h++) /* counting sort, host order kept */
        if (owner[h] >= 0)
            nh->members[nh->first[owner[h] + 1]++] = h;
    free(owner);
    return 0;
}

/* Mean of s inside [t0, t1]: the samples there, or the value interpolated
 * at the middle when the phase falls between two samples.  NaN if none. */
static double window_mean(const pm_series *s, double t0, double t1)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->t[mid] < t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    double sum = 0;
    size_t n = 0;
    for (size_t i = lo; i < s->n && s->t[i] <= t1; i++)
        if (isfinite(s->v[i])) {
            sum += s->v[i];
            n++;
        }
    if (n)
        return sum / (double)n;
    double tm = (t0 + t1) / 2;
    if (lo == 0 || lo >= s->n)
        return NAN;
    double ta = s->t[lo - 1], tb = s->t[lo], va = s->v[lo - 1], vb = s->v[lo];
    if (!isfinite(va) || !isfinite(vb) || tb <= ta)
        return NAN;
    return va + (vb - va) * (tm - ta) / (tb - ta);
}

static int cmp_phase_ptr(const void *pa, const void *pb)
{
    const pm_phase *a = *(const pm_phase *const *)pa, *b = *(const pm_phase *const *)pb;
    int c = strcmp(a->host, b->host);
    if (c)
        return c;
    c = strcmp(a->name, b->name);
    if (c)
        return c;
    return a->t0 < b->t0 ? -1 : a->t0 > b->t0;
}

static int cmp_kind(const void *pa, const void *pb)
{
    const pm_phase_kind_stats *a = pa, *b = pb;
    if (a->start_min != b->start_min)
        return a->start_min < b->start_min ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int cmp_row(const void *pa, const void *pb)
{
    const pm_phase_host_stats *a = pa, *b = pb;
    int c = strcmp(a->host, b->host);
    if (c)
        return c;
    if (a->first_start != b->first_start)
        return a->first_start < b->first_start ? -1 : 1;
    return strcmp(a->name, b->name);
}

int pm_phase_stats_compute(pm_analysis *a, pm_error *err)
{
    const pm_phase_set *ps = &a->phases;
    if (ps->n == 0)
        return 0;
    node_hosts nh = {0, NULL, NULL};
    pm_phase_stats *st = calloc(1, sizeof *st);
    const pm_phase **ord = pm_alloc_array(ps->n, sizeof *ord);
    if (!st || !ord)
        goto oom;
    st->nmetrics = a->nmetrics;
    for (size_t i = 0; i < ps->n; i++)
        ord[i] = &ps->v[i];
    qsort(ord, ps->n, sizeof *ord, cmp_phase_ptr);
    if (node_hosts_build(a, &nh) != 0)
        goto oom;

    /* Rows: one per (host, kind). */
    st->rows = calloc(ps->n, sizeof *st->rows);
    st->kinds = calloc(ps->n, sizeof *st->kinds);
    if (!st->rows || !st->kinds)
        goto oom;
    for (size_t i = 0; i < ps->n;) {
        size_t j = i;
        pm_phase_host_stats *r = &st->rows[st->nrows++];
        r->host = ord[i]->host;
        r->name = ord[i]->name;
        r->first_start = ord[i]->t0;
        while (j < ps->n && strcmp(ord[j]->host, r->host) == 0 &&
               strcmp(ord[j]->name, r->name) == 0) {
            r->count++;
            r->total_s += ord[j]->t1 - ord[j]->t0;
            j++;
        }
        i = j;
    }

    /* Kinds, from the rows. */
    for (size_t i = 0; i < st->nrows; i++) {
        const pm_phase_host_stats *r = &st->rows[i];
        size_t k;
        for (k = 0; k < st->nkinds; k++)
            if (strcmp(st->kinds[k].name, r->name) == 0)
                break;
        pm_phase_kind_stats *ks = &st->kinds[k];
        if (k == st->nkinds) {
            st->nkinds++;
            ks->name = pm_strdup(r->name);
            ks->mean = pm_alloc_array(a->nmetrics ? a->nmetrics : 1, sizeof *ks->mean);
            ks->energy_j = pm_alloc_array(a->nmetrics ? a->nmetrics : 1, sizeof *ks->energy_j);
            if (!ks->name || !ks->mean || !ks->energy_j)
                goto oom;
            ks->min_host_s = INFINITY;
            ks->max_host_s = -INFINITY;
            ks->start_min = INFINITY;
            ks->start_max = -INFINITY;
        }
        ks->hosts++;
        ks->count += r->count;
        ks->total_s += r->total_s;
        ks->min_host_s = fmin(ks->min_host_s, r->total_s);
        ks->max_host_s = fmax(ks->max_host_s, r->total_s);
        ks->start_min = fmin(ks->start_min, r->first_start);
        ks->start_max = fmax(ks->start_max, r->first_start);
    }
    for (size_t k = 0; k < st->nkinds; k++) {
        pm_phase_kind_stats *ks = &st->kinds[k];
        ks->avg_host_s = ks->total_s / (double)ks->hosts;
        ks->start_spread_s = ks->start_max - ks->start_min;
        /* Standard deviation of first starts, about their mean (relative
         * to start_min, so epoch seconds lose no precision). */
        double sum = 0, sum2 = 0;
        for (size_t i = 0; i < st->nrows; i++)
            if (strcmp(st->rows[i].name, ks->name) == 0) {
                double d = st->rows[i].first_start - ks->start_min;
                sum += d;
                sum2 += d * d;
            }
        double m = sum / (double)ks->hosts;
        double var = sum2 / (double)ks->hosts - m * m;
        ks->start_sd_s = ks->hosts > 1 && var > 0 ? sqrt(var) : 0;

        /* Resource use during the phases of this kind. */
        for (size_t mi = 0; mi < a->nmetrics; mi++) {
            const pm_metric_result *mr = &a->metrics[mi];
            int power = strcmp(mr->def->unit, "W") == 0;
            double wsum = 0, wtot = 0, energy = 0;
            for (size_t i = 0; i < ps->n; i++) {
                const pm_phase *p = ord[i];
                if (strcmp(p->name, ks->name) != 0)
                    continue;
                int h = host_index(a, nh.nnodes, p->host);
                if (h < 0)
                    continue;
                for (size_t x = nh.first[h]; x < nh.first[h + 1]; x++) {
                    const pm_series *se = mr->host[nh.members[x]];
                    double v = se ? window_mean(se, p->t0, p->t1) : NAN;
                    double d = p->t1 - p->t0;
                    if (!isfinite(v))
                        continue;
                    /* Weight by duration; a zero-length phase still counts once. */
                    double w = d > 0 ? d : 1e-9;
                    wsum += v * w;
                    wtot += w;
                    if (power)
                        energy += v * d;
                }
            }
            ks->mean[mi] = wtot > 0 ? wsum / wtot : NAN;
            ks->energy_j[mi] = power && wtot > 0 ? energy : NAN;
        }
    }
    pm_phase_use_compute(a, st);
    qsort(st->kinds, st->nkinds, sizeof *st->kinds, cmp_kind);
    qsort(st->rows, st->nrows, sizeof *st->rows, cmp_row);
    free(ord);
    free(nh.first);
    free(nh.members);
    a->phase_stats = st;
    return 0;
oom:
    free(nh.first);
    free(nh.members);
    free(ord);
    pm_phase_stats_free(st);
    return pm_error_set(err, PM_ENOMEM, "out of memory for phase statistics");
}
