/* Resource use per phase kind for the whole job: CPU core-seconds used
 * and allocated, the memory peak, disk and network bytes, from the
 * metric series during each phase (docs/analysis.md, "Resource use per
 * phase").
 *
 * A rate's sample i holds the rate over (t[i-1], t[i]] (pm_rate), and so
 * does cpu_usage (the sampler's share of /proc/stat's jiffies since the
 * previous sample): a phase [t0, t1] gets each sample's value times the
 * part of its interval inside the phase, which is the counter's increase
 * between t0 and t1 with the counter taken as linear between samples.  A
 * gauge (memory used) is a reading at its sample's time: a phase's peak is
 * the largest reading taken inside [t0, t1], or, for a phase between two
 * samples, the last reading before it (what the phase began with; the
 * reading that closes the interval may already be the next phase's); the
 * memory is the job's (the process tree's RSS) where the sampler followed
 * one, else the node's memory used.
 *
 * Energy: RAPL's package and DRAM counters (rapl_package, rapl_dram, their
 * rates in W) and a GPU's energy counter (gpu_energy_power) taken the same
 * way, so a phase gets each counter's increase over it; a GPU without the
 * counter (NVML_ERROR_NOT_SUPPORTED), or whose counter has no value over
 * the phase, gets its power readings (gpu_power) integrated as steps
 * instead, and the phase says so. */
#include <math.h>
#include <string.h>

#include "phase_contrib.h"
#include "perfmon/phase_stats.h"

/* Index of the node (not a GPU) named name, or -1. */
static long node_index(const pm_analysis *a, const char *name)
{
    for (size_t h = 0; h < a->in.nhosts; h++)
        if (!a->in.hosts[h].gpu && strcmp(a->in.hosts[h].name, name) == 0)
            return (long)h;
    return -1;
}

/* First sample i with t[i] > t0 (binary search). */
static size_t first_after(const pm_series *s, double t0)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->t[mid] <= t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Integral over [t0, t1] of s taken as a step: sample i's value over
 * (t[i-1], t[i]].  *covered gets the seconds of the phase with a value.
 * NaN when no interval with a value overlaps the phase. */
static double step_integral(const pm_series *s, double t0, double t1, double *covered)
{
    double sum = 0, cov = 0;
    int any = 0;
    for (size_t i = first_after(s, t0); i < s->n; i++) {
        if (i == 0)
            continue;
        double a = fmax(s->t[i - 1], t0), b = fmin(s->t[i], t1);
        if (s->t[i - 1] >= t1)
            break;
        if (!(b > a) || !isfinite(s->v[i]))
            continue;
        sum += s->v[i] * (b - a);
        cov += b - a;
        any = 1;
    }
    if (covered)
        *covered = cov;
    return any ? sum : NAN;
}

/* Largest reading of the gauge s taken inside [t0, t1]; with none there,
 * the last valid reading before t0 (NaN when there is none either). */
static double gauge_max(const pm_series *s, double t0, double t1)
{
    double m = NAN;
    size_t i = first_after(s, t0);
    /* first_after is the first t > t0: a reading at t0 itself is inside. */
    if (i > 0 && s->t[i - 1] == t0)
        i--;
    for (; i < s->n && s->t[i] <= t1; i++)
        if (isfinite(s->v[i]) && (isnan(m) || s->v[i] > m))
            m = s->v[i];
    if (!isnan(m))
        return m;
    for (size_t k = first_after(s, t0); k-- > 0;)
        if (isfinite(s->v[k]))
            return s->v[k];
    return NAN;
}

static void add(double *acc, double v)
{
    if (isfinite(v))
        *acc = isnan(*acc) ? v : *acc + v;
}

/* Host h's series of metric id (ser by catalog index), or NULL; *conv
 * its conversion. */
static const pm_series *series_of(const pm_analysis *a, pm_series *const *ser, const char *id,
                                  double *conv)
{
    const pm_catalog *cat = a->catalog;
    for (size_t d = 0; d < cat->n; d++)
        if (strcmp(cat->m[d].id, id) == 0) {
            *conv = cat->m[d].conversion;
            return ser[d];
        }
    return NULL;
}

void pm_phase_use_host(const pm_analysis *a, const pm_phase *p, pm_series *const *ser, double *use)
{
    static const char *const bytes_ids[4] = {"disk_read", "disk_write", "net_out", "net_in"};
    double conv = 1, cov = 0;
    for (int k = 0; k < PM_PU_N; k++)
        use[k] = NAN;
    const pm_series *se = series_of(a, ser, "cpu_usage", &conv);
    if (se) {
        use[PM_PU_CPU_PCT_S] = step_integral(se, p->t0, p->t1, &cov);
        use[PM_PU_CPU_COV] = cov;
    }
    /* The job's memory (the process tree's RSS, as page 1's "Peak job
     * RSS"), else the node's memory used when no tree was followed. */
    se = series_of(a, ser, "proc_rss", &conv);
    if (!se)
        se = series_of(a, ser, "mem_used", &conv);
    if (se)
        use[PM_PU_MEM] = gauge_max(se, p->t0, p->t1) * conv;
    for (int b = 0; b < 4; b++) {
        se = series_of(a, ser, bytes_ids[b], &conv);
        if (se)
            use[PM_PU_BYTES + b] = step_integral(se, p->t0, p->t1, NULL) * conv;
    }
    /* packages plus DRAM (core and uncore are inside the package), as the
     * node figure energy_j */
    static const char *const rapl_ids[2] = {"rapl_package", "rapl_dram"};
    for (int r = 0; r < 2; r++) {
        se = series_of(a, ser, rapl_ids[r], &conv);
        if (se)
            add(&use[PM_PU_CPU_J], step_integral(se, p->t0, p->t1, NULL));
    }
}

double pm_phase_gpu_energy(const pm_analysis *a, const pm_phase *p, pm_series *const *ser,
                           unsigned char *src)
{
    double conv = 1;
    const pm_series *se = series_of(a, ser, "gpu_energy_power", &conv);
    double j = se ? step_integral(se, p->t0, p->t1, NULL) : NAN;
    *src = isfinite(j) ? PM_GPU_J_COUNTER : 0;
    if (isfinite(j))
        return j;
    se = series_of(a, ser, "gpu_power", &conv);
    j = se ? step_integral(se, p->t0, p->t1, NULL) : NAN;
    *src = isfinite(j) ? PM_GPU_J_POWER : 0;
    return j;
}

void pm_phase_use_compute(const pm_analysis *a, const pm_phase_contrib *pc, pm_phase_stats *st)
{
    for (size_t k = 0; k < st->nkinds; k++) {
        pm_phase_kind_stats *ks = &st->kinds[k];
        double *bytes[4] = {&ks->disk_read_bytes, &ks->disk_write_bytes, &ks->net_sent_bytes,
                            &ks->net_recv_bytes};
        ks->cpu_core_s = ks->cpu_alloc_core_s = ks->cpu_share_pct = NAN;
        ks->cpu_energy_j = ks->gpu_energy_j = NAN;
        ks->gpu_energy_from = 0;
        ks->mem_peak_bytes = NAN;
        for (int b = 0; b < 4; b++)
            *bytes[b] = NAN;
        for (size_t i = 0; i < a->in.phases.n; i++) {
            const pm_phase *p = &a->in.phases.v[i];
            if (strcmp(p->name, ks->name) != 0 || !(p->t1 >= p->t0))
                continue;
            long h = node_index(a, p->host);
            if (h < 0)
                continue;
            const double *use = pc->use + i * PM_PU_N;
            double ncpus = a->in.hosts[h].ncpus;
            if (isfinite(ncpus) && ncpus > 0) {
                double pct_s = use[PM_PU_CPU_PCT_S];
                /* Used: over the seconds that have a value; allocated: the
                 * same seconds, so a gap does not count as idle. */
                add(&ks->cpu_core_s, pct_s / 100.0 * ncpus);
                if (isfinite(pct_s))
                    add(&ks->cpu_alloc_core_s, use[PM_PU_CPU_COV] * ncpus);
            }
            double m = use[PM_PU_MEM];
            if (isfinite(m) && (isnan(ks->mem_peak_bytes) || m > ks->mem_peak_bytes))
                ks->mem_peak_bytes = m;
            for (int b = 0; b < 4; b++)
                add(bytes[b], use[PM_PU_BYTES + b]);
            add(&ks->cpu_energy_j, use[PM_PU_CPU_J]);
            /* the node's GPUs, in member order */
            size_t g0 = pc->ncat ? pc->first[i] / pc->ncat : 0;
            size_t g1 = pc->ncat ? pc->first[i + 1] / pc->ncat : 0;
            for (size_t g = g0; g < g1; g++) {
                add(&ks->gpu_energy_j, pc->gpu_j[g]);
                if (pc->gpu_src[g] == PM_GPU_J_COUNTER)
                    ks->gpu_energy_from |= PM_ENERGY_FROM_COUNTER;
                else if (pc->gpu_src[g] == PM_GPU_J_POWER)
                    ks->gpu_energy_from |= PM_ENERGY_FROM_POWER;
            }
        }
        if (ks->cpu_alloc_core_s > 0)
            ks->cpu_share_pct = ks->cpu_core_s / ks->cpu_alloc_core_s * 100.0;
    }
}
