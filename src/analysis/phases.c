/* Phase statistics: durations per node and kind, totals and averages per
 * kind across nodes, the spread of first starts across nodes (Batch
 * Shipyard's "nodeready variance"), and each metric's mean and energy
 * during the phases (docs/analysis.md, "Phases"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "phase_contrib.h"
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
        int c = strcmp(a->in.hosts[mid].name, name);
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
    while (n < a->in.nhosts && !a->in.hosts[n].gpu)
        n++;
    nh->nnodes = n;
    nh->first = calloc(n + 2, sizeof *nh->first);
    nh->members = pm_alloc_array(a->in.nhosts ? a->in.nhosts : 1, sizeof *nh->members);
    int *owner = pm_alloc_array(a->in.nhosts ? a->in.nhosts : 1, sizeof *owner);
    if (!nh->first || !nh->members || !owner) {
        free(owner);
        return -1;
    }
    for (size_t h = 0; h < a->in.nhosts; h++) {
        const char *dot = strchr(a->in.hosts[h].name, '.');
        owner[h] = h < n ? (int)h : dot ? host_index(a, n, dot + 1) : -1;
        if (owner[h] >= 0)
            nh->first[owner[h] + 2]++;
    }
    for (size_t i = 2; i < n + 2; i++)
        nh->first[i] += nh->first[i - 1];
    for (size_t h = 0; h < a->in.nhosts; h++) /* counting sort, host order kept */
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

void pm_phase_contrib_free(pm_phase_contrib *pc)
{
    if (!pc)
        return;
    free(pc->first);
    free(pc->mean);
    free(pc->use);
    free(pc->hfirst);
    free(pc->hphase);
    free(pc->hmember);
    free(pc->gpu_j);
    free(pc->gpu_src);
    memset(pc, 0, sizeof *pc);
}

int pm_phase_contrib_init(const pm_analysis *a, pm_phase_contrib *pc)
{
    const pm_phase_set *ps = &a->in.phases;
    memset(pc, 0, sizeof *pc);
    pc->ncat = a->catalog->n;
    node_hosts nh = {0, NULL, NULL};
    size_t np = ps->n, nent = 0;
    pc->first = calloc(np + 1, sizeof *pc->first);
    pc->use = pm_alloc_array(np ? np * PM_PU_N : 1, sizeof *pc->use);
    pc->hfirst = calloc(a->in.nhosts + 2, sizeof *pc->hfirst);
    if (!pc->first || !pc->use || !pc->hfirst || node_hosts_build(a, &nh) != 0)
        goto oom;
    for (size_t i = 0; i < np * PM_PU_N; i++)
        pc->use[i] = NAN;
    /* Each phase: its node's members' slots, and each host's entries
     * counted (then placed, host by host). */
    for (size_t i = 0; i < np; i++) {
        int h = host_index(a, nh.nnodes, ps->v[i].host);
        size_t nm = h < 0 ? 0 : nh.first[h + 1] - nh.first[h];
        pc->first[i + 1] = pc->first[i] + nm * pc->ncat;
        if (h < 0)
            continue;
        for (size_t x = nh.first[h]; x < nh.first[h + 1]; x++)
            pc->hfirst[nh.members[x] + 2]++;
        pc->hfirst[h + 2]++; /* the use figures */
        nent += nm + 1;
    }
    pc->mean = pm_alloc_array(pc->first[np] ? pc->first[np] : 1, sizeof *pc->mean);
    pc->hphase = pm_alloc_array(nent ? nent : 1, sizeof *pc->hphase);
    pc->hmember = pm_alloc_array(nent ? nent : 1, sizeof *pc->hmember);
    size_t nmem = pc->ncat ? pc->first[np] / pc->ncat : 0;
    pc->gpu_j = pm_alloc_array(nmem ? nmem : 1, sizeof *pc->gpu_j);
    pc->gpu_src = calloc(nmem ? nmem : 1, 1);
    if (!pc->mean || !pc->hphase || !pc->hmember || !pc->gpu_j || !pc->gpu_src)
        goto oom;
    for (size_t i = 0; i < pc->first[np]; i++)
        pc->mean[i] = NAN;
    for (size_t i = 0; i < nmem; i++)
        pc->gpu_j[i] = NAN;
    for (size_t h = 2; h < a->in.nhosts + 2; h++)
        pc->hfirst[h] += pc->hfirst[h - 1];
    for (size_t i = 0; i < np; i++) {
        int h = host_index(a, nh.nnodes, ps->v[i].host);
        if (h < 0)
            continue;
        for (size_t x = nh.first[h]; x < nh.first[h + 1]; x++) {
            size_t k = pc->hfirst[nh.members[x] + 1]++;
            pc->hphase[k] = i;
            pc->hmember[k] = x - nh.first[h];
        }
        size_t k = pc->hfirst[h + 1]++;
        pc->hphase[k] = i;
        pc->hmember[k] = SIZE_MAX;
    }
    free(nh.first);
    free(nh.members);
    return 0;
oom:
    free(nh.first);
    free(nh.members);
    pm_phase_contrib_free(pc);
    return PM_ENOMEM;
}

void pm_phase_contrib_host(const pm_analysis *a, pm_phase_contrib *pc, size_t h,
                           pm_series *const *ser)
{
    for (size_t k = pc->hfirst[h]; k < pc->hfirst[h + 1]; k++) {
        const pm_phase *p = &a->in.phases.v[pc->hphase[k]];
        if (pc->hmember[k] == SIZE_MAX) {
            if (p->t1 >= p->t0)
                pm_phase_use_host(a, p, ser, pc->use + pc->hphase[k] * PM_PU_N);
            continue;
        }
        double *m = pc->mean + pc->first[pc->hphase[k]] + pc->hmember[k] * pc->ncat;
        for (size_t d = 0; d < pc->ncat; d++)
            m[d] = ser[d] ? window_mean(ser[d], p->t0, p->t1) : NAN;
        /* a GPU of the node: its energy in the phase */
        if (pc->ncat && a->in.hosts[h].gpu && p->t1 >= p->t0) {
            size_t g = pc->first[pc->hphase[k]] / pc->ncat + pc->hmember[k];
            pc->gpu_j[g] = pm_phase_gpu_energy(a, p, ser, &pc->gpu_src[g]);
        }
    }
}

/* The in-memory path's contributions: every host's, from its series. */
static int contrib_from_series(const pm_analysis *a, pm_phase_contrib *pc)
{
    if (pm_phase_contrib_init(a, pc))
        return PM_ENOMEM;
    pm_series **ser = calloc(pc->ncat ? pc->ncat : 1, sizeof *ser);
    if (!ser) {
        pm_phase_contrib_free(pc);
        return PM_ENOMEM;
    }
    for (size_t h = 0; h < a->in.nhosts; h++) {
        for (size_t mi = 0; mi < a->nmetrics; mi++) {
            const pm_metric_result *mr = &a->metrics[mi];
            ser[mr->def - a->catalog->m] = mr->host ? mr->host[h] : NULL;
        }
        pm_phase_contrib_host(a, pc, h, ser);
    }
    free(ser);
    return 0;
}

int pm_phase_stats_compute(pm_analysis *a, pm_error *err)
{
    return pm_phase_stats_from(a, NULL, err);
}

int pm_phase_stats_from(pm_analysis *a, pm_phase_contrib *given, pm_error *err)
{
    const pm_phase_set *ps = &a->in.phases;
    if (ps->n == 0)
        return 0;
    pm_phase_contrib own = {0};
    pm_phase_contrib *pc = given ? given : &own;
    if (!given && contrib_from_series(a, &own))
        return pm_error_set(err, PM_ENOMEM, "out of memory for phase statistics");
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
                const double *mv =
                    pc->mean + pc->first[p - ps->v] + (size_t)(mr->def - a->catalog->m);
                for (size_t x = nh.first[h]; x < nh.first[h + 1]; x++) {
                    double v = mv[(x - nh.first[h]) * pc->ncat];
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
    pm_phase_use_compute(a, pc, st);
    qsort(st->kinds, st->nkinds, sizeof *st->kinds, cmp_kind);
    qsort(st->rows, st->nrows, sizeof *st->rows, cmp_row);
    free(ord);
    free(nh.first);
    free(nh.members);
    a->phase_stats = st;
    pm_phase_contrib_free(&own);
    return 0;
oom:
    free(nh.first);
    free(nh.members);
    free(ord);
    pm_phase_contrib_free(&own);
    pm_phase_stats_free(st);
    return pm_error_set(err, PM_ENOMEM, "out of memory for phase statistics");
}
