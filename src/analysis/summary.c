/* Per-node and job figures (seed 004's per-node list, energy, process tree,
 * sampler overhead).  Computed from the recorded data only. */
#include <pthread.h>
#include <cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_verdict.h"
#include "rule_plan.h"
#include "summary.h"
#include "perfmon/order.h"
#include "perfmon/analysis.h"
#include "perfmon/mem.h"
#include "perfmon/threads.h"

#define F(key, unit, job, label, title)                               \
    {                                                                 \
#key, offsetof(pm_node_summary, key), unit, job, label, title \
    }
const pm_figure PM_FIGURES[] = {
    F(wall_time_s, "s", PM_JOB_SPAN, "wall s", "Wall time"),
    F(samples, "1", PM_JOB_SUM, "samples", "Samples"),
    F(cpu_avg_utilization_pct, "%", PM_JOB_MEAN, "cpu%", "CPU utilisation"),
    F(cpu_avg_utilization_over20_pct, "%", PM_JOB_MEAN, ">20%", "Time with CPU above 20%"),
    F(cpu_avg_utilization_over40_pct, "%", PM_JOB_MEAN, ">40%", "Time with CPU above 40%"),
    F(cpu_avg_utilization_over80_pct, "%", PM_JOB_MEAN, ">80%", "Time with CPU above 80%"),
    F(cpu_avg_utilization_at100_pct, "%", PM_JOB_MEAN, "=100%", "Time with CPU at 100%"),
    F(max_t_cpu_pct_per_cpu_avg, "%", PM_JOB_MAX, "max avg%", "Peak CPU (average core)"),
    F(max_t_cpu_pct_per_cpu_min, "%", PM_JOB_MAX, "max min%", "Peak CPU (least busy core)"),
    F(max_t_cpu_pct_per_cpu_max, "%", PM_JOB_MAX, "max max%", "Peak CPU (busiest core)"),
    F(node_cpu_hours, "h", PM_JOB_SUM, "cpu h", "CPU hours"),
    F(node_unused_cpu_hours, "h", PM_JOB_SUM, "unused h", "Unused CPU hours"),
    F(max_t_mem_percent, "%", PM_JOB_MAX, "mem%", "Peak memory"),
    F(max_t_disk_usage_percent, "%", PM_JOB_MAX, "disk%", "Peak file-system usage"),
    F(total_disk_io_read_mb, "MiB", PM_JOB_SUM, "rd MiB", "Disk read"),
    F(total_disk_io_write_mb, "MiB", PM_JOB_SUM, "wr MiB", "Disk written"),
    F(total_net_io_lo_sent_mb, "MiB", PM_JOB_SUM, "lo tx", "Loopback sent"),
    F(total_net_io_lo_recv_mb, "MiB", PM_JOB_SUM, "lo rx", "Loopback received"),
    F(total_net_io_ext_sent_mb, "MiB", PM_JOB_SUM, "ext tx", "Network sent"),
    F(total_net_io_ext_recv_mb, "MiB", PM_JOB_SUM, "ext rx", "Network received"),
    F(energy_j, "J", PM_JOB_SUM, "energy", "Energy (RAPL)"),
    F(energy_kwh, "kWh", PM_JOB_SUM, "kWh", "Energy (RAPL)"),
    F(avg_power_w, "W", PM_JOB_SUM, "power W", "Average power (RAPL)"),
    F(gpu_count, "1", PM_JOB_SUM, "gpus", "GPUs"),
    F(gpu_hours, "h", PM_JOB_SUM, "gpu h", "GPU hours"),
    F(gpu_avg_utilization_pct, "%", PM_JOB_MEAN, "gpu%", "GPU utilisation"),
    F(gpu_energy_j, "J", PM_JOB_SUM, "gpu energy", "GPU energy"),
    F(gpu_avg_power_w, "W", PM_JOB_SUM, "gpu W", "Average GPU power"),
    F(gpu_peak_mem_bytes, "B", PM_JOB_MAX, "gpu mem", "Peak GPU memory used"),
    F(proc_cpu_hours, "h", PM_JOB_SUM, "proc cpu h", "Job CPU hours (process tree)"),
    F(proc_peak_rss_bytes, "B", PM_JOB_MAX, "proc rss", "Peak job RSS (process tree)"),
    F(cg_cpu_hours, "h", PM_JOB_SUM, "cg cpu h", "Job CPU hours (cgroup)"),
    F(cg_peak_mem_bytes, "B", PM_JOB_MAX, "cg mem", "Peak job memory (cgroup)"),
    F(sampler_cpu_pct, "%", PM_JOB_MAX, "smp cpu%", "Sampler CPU"),
    F(sampler_peak_rss_bytes, "B", PM_JOB_MAX, "smp rss", "Sampler peak RSS"),
    F(sampler_lateness_mean_s, "s", PM_JOB_MEAN, "late avg", "Sampler lateness (mean)"),
    F(sampler_lateness_max_s, "s", PM_JOB_MAX, "late max", "Sampler lateness (max)"),
    F(sampler_missed, "1", PM_JOB_SUM, "missed", "Samples missed"),
    F(sampler_late, "1", PM_JOB_SUM, "late", "Samples late"),
    F(perf_instructions, "1", PM_JOB_SUM, "instr", "Instructions (counters)"),
    F(perf_cycles, "1", PM_JOB_SUM, "cycles", "Cycles (counters)"),
    F(perf_ipc, "1", PM_JOB_MEAN, "IPC", "Instructions per cycle"),
    F(perf_flop, "FLOP", PM_JOB_SUM, "FLOP", "Floating-point operations"),
    F(perf_l2_bytes, "B", PM_JOB_SUM, "L2 B", "L2 cache traffic"),
    F(perf_l3_bytes, "B", PM_JOB_SUM, "L3 B", "L3 cache traffic"),
    F(perf_mem_bytes, "B", PM_JOB_SUM, "mem B", "Memory traffic (counters)"),
    F(perf_context_switches, "1", PM_JOB_SUM, "ctx sw", "Context switches"),
    F(perf_page_faults, "1", PM_JOB_SUM, "faults", "Page faults"),
};
#undef F
const size_t PM_NFIGURES = sizeof PM_FIGURES / sizeof PM_FIGURES[0];

double pm_figure_value(const pm_node_summary *s, const pm_figure *f)
{
    double v;
    memcpy(&v, (const char *)s + f->offset, sizeof v);
    return v;
}

static void figure_set(pm_node_summary *s, const pm_figure *f, double v)
{
    memcpy((char *)s + f->offset, &v, sizeof v);
}

const pm_figure *pm_figure_find(const char *key)
{
    for (size_t i = 0; i < PM_NFIGURES; i++)
        if (strcmp(PM_FIGURES[i].key, key) == 0)
            return &PM_FIGURES[i];
    return NULL;
}

/* --- column helpers over a host's kept samples ------------------------------ */

/* Every raw column the node figures read (col_values, col_max, col_last,
 * counter_increase below, by name); the reader decodes only these and the
 * catalog's (pm_summary_reads), so a name added below must be added here. */
static const char *const SUMMARY_COLUMNS[] = {
    "cpu.core_avg_pct",   "cpu.core_max_pct",      "cpu.core_min_pct",   "cpu.ncpus",
    "cpu.percent",        "disk.read_bytes",       "disk.write_bytes",   "fs.out.usage_pct",
    "fs.root.usage_pct",  "mem.percent",           "mem.total",          "net.all.bytes_recv",
    "net.all.bytes_sent", "net.ext.bytes_recv",    "net.ext.bytes_sent", "net.lo.bytes_recv",
    "net.lo.bytes_sent",  "perf.context_switches", "perf.cycles",        "perf.flops",
    "perf.flops_dp",      "perf.flops_sp",         "perf.instructions",  "perf.l2_bytes",
    "perf.l3_bytes",      "perf.mem_bytes",        "perf.page_faults",   "proc.cpu_time",
    "proc.rss",           "sampler.cpu_time",      "sampler.lateness",   "sampler.missed",
    "sampler.rss",
};

int pm_summary_reads(const char *column)
{
    /* rapl.*: energy_uj walks them all; gpu.*: a node's gpu.<n>.<metric>
     * columns become a GPU's gpu.<metric> (pm_gpu_split); cg.* and psi.*:
     * the per-host rules (pm_summary_signs) read the cgroup's CPU and
     * memory, and a share rule may name any of them. */
    if (strncmp(column, "rapl.", 5) == 0 || strncmp(column, "gpu.", 4) == 0 ||
        strncmp(column, "psi.", 4) == 0 ||
        (strncmp(column, "cg.", 3) == 0 && strncmp(column, "cg.io.", 6) != 0) ||
        strcmp(column, "proc.cpu_percent") == 0 || strcmp(column, "proc.mem_percent") == 0)
        return 1;
    for (size_t i = 0; i < sizeof SUMMARY_COLUMNS / sizeof *SUMMARY_COLUMNS; i++)
        if (strcmp(column, SUMMARY_COLUMNS[i]) == 0)
            return 1;
    return 0;
}

static const double *col_values(const pm_host *h, const char *name, const pm_column **col)
{
    int c = pm_profile_column(h->prof, name);
    if (c < 0)
        return NULL;
    if (col)
        *col = &h->prof->cols[c];
    return h->prof->values[c];
}

static double col_max(const pm_host *h, const char *name)
{
    const double *v = col_values(h, name, NULL);
    double m = NAN;
    if (!v)
        return NAN;
    for (size_t i = 0; i < h->n; i++) {
        double x = v[h->idx[i]];
        if (!isnan(x) && (isnan(m) || x > m))
            m = x;
    }
    return m;
}

static double col_last(const pm_host *h, const char *name)
{
    const double *v = col_values(h, name, NULL);
    if (!v)
        return NAN;
    for (size_t i = h->n; i-- > 0;)
        if (!isnan(v[h->idx[i]]))
            return v[h->idx[i]];
    return NAN;
}

/* Time-weighted mean (trapezoid) and the share of valid samples at or
 * above each threshold; *area (may be NULL) gets the integral over time
 * between consecutive valid samples. */
static double col_mean(const pm_host *h, const double *v, const double *thr, double *share,
                       size_t nthr, double *area)
{
    double wsum = 0, wtot = 0, sum = 0;
    size_t n = 0, above[8] = {0};
    for (size_t i = 0; i < h->n; i++) {
        double x = v[h->idx[i]];
        if (isnan(x))
            continue;
        n++;
        sum += x;
        for (size_t k = 0; k < nthr; k++)
            above[k] += x >= thr[k];
        if (i > 0 && !isnan(v[h->idx[i - 1]])) {
            double dt = h->t[i] - h->t[i - 1];
            wsum += (x + v[h->idx[i - 1]]) / 2 * dt;
            wtot += dt;
        }
    }
    for (size_t k = 0; k < nthr; k++)
        share[k] = n ? (double)above[k] / (double)n * 100.0 : NAN;
    if (area)
        *area = wtot > 0 ? wsum : NAN;
    if (!n)
        return NAN;
    return wtot > 0 ? wsum / wtot : sum / (double)n;
}

/* Increase of a counter over the kept samples: wraps at the column's range
 * are unwrapped, a decrease without a known range (reset) contributes
 * nothing for that step. */
static double counter_increase(const pm_host *h, const char *name)
{
    const pm_column *col = NULL;
    const double *v = col_values(h, name, &col);
    if (!v)
        return NAN;
    double total = 0, prev = NAN;
    int any = 0;
    for (size_t i = 0; i < h->n; i++) {
        double x = v[h->idx[i]];
        if (isnan(x))
            continue;
        any = 1;
        if (!isnan(prev)) {
            double d = x - prev;
            if (d < 0 && col->wrap > 0)
                d += (double)col->wrap;
            if (d > 0)
                total += d;
        }
        prev = x;
    }
    return any ? total : NAN;
}

static double first_of(double a, double b)
{
    return isnan(a) ? b : a;
}

static double meta_number(const char *meta, const char *obj, const char *key)
{
    if (!meta)
        return NAN;
    cJSON *j = cJSON_Parse(meta);
    double v = NAN;
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, obj);
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNumber(x))
        v = x->valuedouble;
    cJSON_Delete(j);
    return v;
}

/* Energy: packages plus DRAM (core and uncore are inside the package);
 * psys alone when no package domain was recorded. */
static double energy_uj(const pm_host *h)
{
    double pkg = 0, dram = 0, psys = NAN;
    int have_pkg = 0, have_dram = 0;
    for (size_t c = 0; c < h->prof->ncols; c++) {
        const char *n = h->prof->cols[c].name;
        if (strncmp(n, "rapl.", 5) != 0)
            continue;
        double inc = counter_increase(h, n);
        if (isnan(inc))
            continue;
        if (strncmp(n + 5, "package-", 8) == 0) {
            pkg += inc;
            have_pkg = 1;
        } else if (strncmp(n + 5, "dram-", 5) == 0) {
            dram += inc;
            have_dram = 1;
        } else if (strcmp(n + 5, "psys") == 0) {
            psys = inc;
        }
    }
    if (have_pkg)
        return pkg + (have_dram ? dram : 0);
    return psys;
}

/* A GPU (gpu-<n>.<node>): its hours, utilisation, energy (the counter,
 * else the integral of its power draw) and peak memory.  Its samples and
 * dropped times are its node's, so they are not counted again. */
static void gpu_summary(const pm_host *h, pm_node_summary *s)
{
    double dummy, area = NAN;
    s->samples = NAN;
    int mig = pm_gpu_host_is_mig(h->name); /* a share of a GPU counted already */
    s->gpu_count = mig ? 0 : 1;
    s->gpu_hours = mig ? 0 : s->wall_time_s / 3600.0;
    const double *util = col_values(h, "gpu.util", NULL);
    if (util)
        s->gpu_avg_utilization_pct = col_mean(h, util, NULL, &dummy, 0, NULL);
    double mj = counter_increase(h, "gpu.energy");
    const double *mw = col_values(h, "gpu.power", NULL);
    if (isnan(mj) && mw)
        (void)col_mean(h, mw, NULL, &dummy, 0, &area);
    s->gpu_energy_j = (isnan(mj) ? area : mj) / 1000.0;
    s->gpu_avg_power_w = s->wall_time_s > 0 ? s->gpu_energy_j / s->wall_time_s : NAN;
    s->gpu_peak_mem_bytes = col_max(h, "gpu.mem_used");
}

/* Repairs are counted once the metrics are built (pm_count_repairs). */
static void node_summary(const pm_host *h, pm_node_summary *s)
{
    for (size_t f = 0; f < PM_NFIGURES; f++)
        figure_set(s, &PM_FIGURES[f], NAN);
    s->samples = (double)h->n;
    s->wall_time_s = h->n ? h->t[h->n - 1] - h->t[0] : NAN;
    s->closing_interval_s = h->n >= 2 ? h->t[h->n - 1] - h->t[h->n - 2] : NAN;
    s->repaired = 0;
    if (h->gpu) {
        gpu_summary(h, s);
        return;
    }
    double hours = s->wall_time_s / 3600.0;
    static const double thr[4] = {20, 40, 80, 100};
    double share[4];
    const double *cpu = col_values(h, "cpu.percent", NULL);
    if (cpu) {
        s->cpu_avg_utilization_pct = col_mean(h, cpu, thr, share, 4, NULL);
        s->cpu_avg_utilization_over20_pct = share[0];
        s->cpu_avg_utilization_over40_pct = share[1];
        s->cpu_avg_utilization_over80_pct = share[2];
        s->cpu_avg_utilization_at100_pct = share[3];
    }
    s->max_t_cpu_pct_per_cpu_avg =
        first_of(col_max(h, "cpu.core_avg_pct"), col_max(h, "cpu.percent"));
    s->max_t_cpu_pct_per_cpu_min = col_max(h, "cpu.core_min_pct");
    s->max_t_cpu_pct_per_cpu_max = col_max(h, "cpu.core_max_pct");
    double ncpus = h->ncpus;
    s->node_cpu_hours = hours * ncpus;
    s->node_unused_cpu_hours = s->node_cpu_hours * (100.0 - s->cpu_avg_utilization_pct) / 100.0;
    s->max_t_mem_percent = col_max(h, "mem.percent");
    s->max_t_disk_usage_percent =
        first_of(col_max(h, "fs.out.usage_pct"), col_max(h, "fs.root.usage_pct"));
    const double MiB = 1048576.0;
    s->total_disk_io_read_mb = counter_increase(h, "disk.read_bytes") / MiB;
    s->total_disk_io_write_mb = counter_increase(h, "disk.write_bytes") / MiB;
    s->total_net_io_lo_sent_mb = counter_increase(h, "net.lo.bytes_sent") / MiB;
    s->total_net_io_lo_recv_mb = counter_increase(h, "net.lo.bytes_recv") / MiB;
    s->total_net_io_ext_sent_mb = first_of(counter_increase(h, "net.ext.bytes_sent"),
                                           counter_increase(h, "net.all.bytes_sent")) /
                                  MiB;
    s->total_net_io_ext_recv_mb = first_of(counter_increase(h, "net.ext.bytes_recv"),
                                           counter_increase(h, "net.all.bytes_recv")) /
                                  MiB;
    double uj = energy_uj(h);
    s->energy_j = uj * 1e-6;
    s->energy_kwh = s->energy_j / 3.6e6;
    s->avg_power_w = s->wall_time_s > 0 ? s->energy_j / s->wall_time_s : NAN;
    s->proc_cpu_hours = counter_increase(h, "proc.cpu_time") / 3600.0;
    s->proc_peak_rss_bytes = col_max(h, "proc.rss");
    s->cg_cpu_hours = counter_increase(h, "cg.cpu_usage") / 3600.0;
    double cg_peak = col_max(h, "cg.mem_peak"), cg_cur = col_max(h, "cg.mem_current");
    s->cg_peak_mem_bytes = isnan(cg_peak)  ? cg_cur
                           : isnan(cg_cur) ? cg_peak
                                           : fmax(cg_peak, cg_cur);
    double self_cpu = counter_increase(h, "sampler.cpu_time");
    if (isnan(self_cpu) && h->prof->has_end && h->prof->end.self_cpu_ns > 0)
        self_cpu = (double)h->prof->end.self_cpu_ns * 1e-9;
    s->sampler_cpu_pct = s->wall_time_s > 0 ? self_cpu / s->wall_time_s * 100.0 : NAN;
    s->sampler_peak_rss_bytes = col_max(h, "sampler.rss");
    if (isnan(s->sampler_peak_rss_bytes) && h->prof->has_end && h->prof->end.self_maxrss_kb)
        s->sampler_peak_rss_bytes = (double)h->prof->end.self_maxrss_kb * 1024.0;
    const double *late = col_values(h, "sampler.lateness", NULL);
    if (late) {
        double dummy;
        s->sampler_lateness_mean_s = col_mean(h, late, NULL, &dummy, 0, NULL);
        s->sampler_lateness_max_s = col_max(h, "sampler.lateness");
    }
    s->sampler_missed = counter_increase(h, "sampler.missed");
    if (isnan(s->sampler_missed) && h->prof->has_end)
        s->sampler_missed = (double)h->prof->end.missed;
    if (h->prof->has_end)
        s->sampler_late = (double)h->prof->end.late;
    s->perf_instructions = counter_increase(h, "perf.instructions");
    s->perf_cycles = counter_increase(h, "perf.cycles");
    s->perf_ipc = s->perf_cycles > 0 ? s->perf_instructions / s->perf_cycles : NAN;
    /* Tables without a precision split (Zen 3/4) record only perf.flops. */
    double sp = counter_increase(h, "perf.flops_sp"), dp = counter_increase(h, "perf.flops_dp");
    s->perf_flop = first_of(counter_increase(h, "perf.flops"), isnan(sp)   ? dp
                                                               : isnan(dp) ? sp
                                                                           : sp + dp);
    s->perf_l2_bytes = counter_increase(h, "perf.l2_bytes");
    s->perf_l3_bytes = counter_increase(h, "perf.l3_bytes");
    s->perf_mem_bytes = counter_increase(h, "perf.mem_bytes");
    s->perf_context_switches = counter_increase(h, "perf.context_switches");
    s->perf_page_faults = counter_increase(h, "perf.page_faults");
    s->dropped = h->dropped_time;
}

void pm_summary_host(const pm_analysis *a, pm_host *ho, pm_node_summary *s)
{
    ho->ncpus =
        first_of(col_last(ho, "cpu.ncpus"), meta_number(ho->prof->meta_json, "cpu", "threads"));
    ho->mem_total = first_of(col_last(ho, "mem.total"),
                             meta_number(ho->prof->meta_json, "memory", "total_bytes"));
    node_summary(ho, s);
    pm_summary_signs(a, ho, s);
}

/* --- the per-host rules' findings (rules.c evaluates them) ------------------ */

/* One value per interval between consecutive kept samples that both have a
 * value: a counter's increase per second times scale (a decrease, a reset,
 * gives none), or a gauge's value at the interval's end (the sampler's
 * gauges of CPU use are over the interval before the sample).  ts, te, v
 * hold h->n each; returns how many. */
static size_t host_intervals(const pm_host *h, const double *x, int counter, double scale,
                             double *ts, double *te, double *v)
{
    size_t m = 0;
    double pt = NAN, pv = NAN;
    for (size_t i = 0; i < h->n; i++) {
        double xi = x[h->idx[i]];
        if (isnan(xi))
            continue;
        if (!isnan(pt)) {
            double dt = h->t[i] - pt;
            if (dt > 0 && (!counter || xi >= pv)) {
                ts[m] = pt;
                te[m] = h->t[i];
                v[m++] = counter ? (xi - pv) / dt * scale : xi;
            }
        }
        pt = h->t[i];
        pv = xi;
    }
    return m;
}

/* A column with at least one value, or NULL. */
static const double *col_present(const pm_host *h, const char *name)
{
    const double *v = col_values(h, name, NULL);
    for (size_t i = 0; v && i < h->n; i++)
        if (!isnan(v[h->idx[i]]))
            return v;
    return NULL;
}

/* A node that stopped working: its job CPU (the cgroup's, the process
 * tree's, SKA's process CPU, else the node's) below threshold % of its
 * earlier level (the median over the first early_pct % of its span) over
 * its longest stretch; value is that stretch's share of the span (0 when
 * none), NaN when the earlier level is below min_level or unknown. */
static void sign_stopped(const pm_host *h, const pm_host_rule *r, pm_node_sign *g, double *buf)
{
    static const struct {
        const char *col;
        int counter;
        double scale;
    } SRC[] = {{"cg.cpu_usage", 1, 100},
               {"proc.cpu_time", 1, 100},
               {"proc.cpu_percent", 0, 1},
               {"cpu.percent", 0, 1}};
    size_t n = h->n;
    double *ts = buf, *te = buf + n, *v = buf + 2 * n, *tmp = buf + 3 * n;
    for (size_t k = 0; k < sizeof SRC / sizeof *SRC; k++) {
        const double *x = col_present(h, SRC[k].col);
        if (!x)
            continue;
        size_t m = host_intervals(h, x, SRC[k].counter, SRC[k].scale, ts, te, v);
        double t0 = h->t[0], span = h->t[n - 1] - t0;
        if (m < 4 || !(span > 0))
            return;
        size_t ne = 0;
        for (size_t i = 0; i < m && te[i] <= t0 + r->early_pct / 100.0 * span; i++)
            tmp[ne++] = v[i];
        double early = pm_median(tmp, ne);
        if (!(early >= r->min_level))
            return;
        double lim = r->threshold / 100.0 * early, best = 0;
        size_t bs = 0, be = 0, start = 0;
        int open = 0;
        for (size_t i = 0; i < m; i++) {
            if (!(v[i] < lim)) {
                open = 0;
                continue;
            }
            if (!open)
                start = i;
            open = 1;
            if (te[i] - ts[start] > best) {
                best = te[i] - ts[start];
                bs = start;
                be = i;
            }
        }
        g->what = (int)k;
        g->before = early;
        g->value = best / span * 100.0;
        if (best > 0) {
            size_t na = 0;
            for (size_t i = bs; i <= be; i++)
                tmp[na++] = v[i];
            g->after = pm_median(tmp, na);
            g->t = ts[bs];
            g->t_end = te[be];
            g->to_end = be == m - 1;
        }
        return;
    }
}

/* A node close to its memory: the peak of its memory use (mem.percent),
 * of the job's cgroup against its limit, or, where the input has no node
 * memory (SKA), of the job's share of the node (proc.mem_percent); the
 * highest peak wins, with the first sample at or above the threshold. */
static void sign_memory(const pm_host *h, const pm_host_rule *r, pm_node_sign *g)
{
    const double *node = col_present(h, "mem.percent");
    const double *cur = col_present(h, "cg.mem_current");
    const double *lim = col_present(h, "cg.mem_limit");
    const double *share = node ? NULL : col_present(h, "proc.mem_percent");
    const double *src[3] = {node, cur && lim ? cur : NULL, share};
    for (int k = 0; k < 3; k++) {
        if (!src[k])
            continue;
        double peak = NAN, first = NAN, limit = NAN;
        for (size_t i = 0; i < h->n; i++) {
            size_t j = h->idx[i];
            double p = src[k][j];
            if (k == 1)
                p = lim[j] > 0 ? cur[j] / lim[j] * 100.0 : NAN;
            if (isnan(p))
                continue;
            if (isnan(peak) || p > peak)
                peak = p;
            if (k == 1 && (isnan(limit) || isnan(first)))
                limit = lim[j];
            if (isnan(first) && p >= r->threshold)
                first = h->t[i];
        }
        if (!isnan(peak) && (isnan(g->value) || peak > g->value)) {
            g->value = peak;
            g->t = first;
            g->what = k;
            g->before = limit;
        }
    }
}

/* A share of the time: the first source whose column the host has, its
 * increase over the elapsed time (x scale) or over its per counter's; the
 * onset is the first interval whose own share is above the threshold. */
static void sign_share(const pm_host *h, const pm_host_rule *r, pm_node_sign *g)
{
    for (size_t k = 0; k < r->nsrc; k++) {
        const pm_rule_src *rs = &r->src[k];
        const double *x = col_present(h, rs->column);
        const double *per = rs->per ? col_present(h, rs->per) : NULL;
        if (!x || (rs->per && !per))
            continue;
        double num = 0, den = 0, pt = NAN, px = NAN, pp = NAN, onset = NAN;
        for (size_t i = 0; i < h->n; i++) {
            size_t j = h->idx[i];
            double xi = x[j], pi = per ? per[j] : h->t[i];
            if (isnan(xi) || isnan(pi))
                continue;
            if (!isnan(pt)) {
                double dx = (xi - px) * (per ? 1 : rs->scale), dd = pi - pp;
                if (dx >= 0 && dd > 0) {
                    num += dx;
                    den += dd;
                    if (isnan(onset) && dx / dd * 100.0 > r->threshold)
                        onset = pt;
                }
            }
            pt = h->t[i];
            px = xi;
            pp = pi;
        }
        if (den > 0) {
            g->value = num / den * 100.0;
            g->t = onset;
            g->what = (int)k;
        }
        return;
    }
}

void pm_summary_signs(const pm_analysis *a, const pm_host *h, pm_node_summary *s)
{
    for (size_t k = 0; k < PM_NODE_SIGNS; k++)
        s->sign[k] = (pm_node_sign){NAN, NAN, NAN, NAN, NAN, 0, 0};
    const pm_rule_plan *p = a ? a->rule_plan : NULL;
    if (!p || h->n < 2 || !h->t || !h->idx)
        return;
    double *buf = NULL;
    for (size_t k = 0; k < p->n; k++) {
        const pm_host_rule *r = &p->r[k];
        if (r->kind == PM_HR_SHARE) {
            sign_share(h, r, &s->sign[k]);
        } else if (!h->gpu && r->kind == PM_HR_MEMORY) {
            sign_memory(h, r, &s->sign[k]);
        } else if (!h->gpu && r->kind == PM_HR_STOPPED) {
            if (!buf && !(buf = pm_alloc_array(h->n, 4 * sizeof *buf)))
                return; /* out of memory: not measured */
            sign_stopped(h, r, &s->sign[k], buf);
        }
    }
    free(buf);
}

static void *node_worker(void *arg)
{
    pm_pool *pool = arg;
    pm_analysis *a = pool->ctx;
    for (size_t h; (h = pm_pool_next(pool)) < pool->n;)
        pm_summary_host(a, &a->in.hosts[h], &a->nodes[h]);
    return NULL;
}

int pm_summary_compute(pm_analysis *a, pm_error *err)
{
    a->nodes = calloc(a->in.nhosts ? a->in.nhosts : 1, sizeof *a->nodes);
    if (!a->nodes)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    /* Nodes are independent: one per worker thread at a time. */
    pm_pool pool = {.n = a->in.nhosts, .ctx = a};
    pthread_mutex_init(&pool.lock, NULL);
    pm_pool_run(&pool, node_worker, a->in.nhosts);
    pthread_mutex_destroy(&pool.lock);
    pm_summary_job(a);
    return 0;
}

void pm_summary_job(pm_analysis *a)
{
    pm_node_summary *j = &a->job;
    memset(j, 0, sizeof *j);
    for (size_t f = 0; f < PM_NFIGURES; f++) {
        const pm_figure *fg = &PM_FIGURES[f];
        double acc = NAN;
        size_t n = 0;
        for (size_t h = 0; h < a->in.nhosts; h++) {
            double v = pm_figure_value(&a->nodes[h], fg);
            if (isnan(v))
                continue;
            n++;
            if (isnan(acc))
                acc = v;
            else if (fg->job == PM_JOB_MAX)
                acc = v > acc ? v : acc;
            else
                acc += v;
        }
        if (fg->job == PM_JOB_MEAN && n)
            acc /= (double)n;
        if (fg->job == PM_JOB_SPAN)
            acc = a->in.nhosts ? a->t_end - a->t_start : NAN;
        figure_set(j, fg, acc);
    }
    /* Job power is total energy over the job's span, not a sum of node
     * averages over different spans. */
    j->avg_power_w = j->wall_time_s > 0 ? j->energy_j / j->wall_time_s : NAN;
    j->gpu_avg_power_w = j->wall_time_s > 0 ? j->gpu_energy_j / j->wall_time_s : NAN;
    /* Likewise the job's IPC is its instructions over its cycles. */
    j->perf_ipc = j->perf_cycles > 0 ? j->perf_instructions / j->perf_cycles : NAN;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        j->repaired += a->nodes[h].repaired;
        j->dropped += a->nodes[h].dropped;
    }
}
