/* --stats: aligned text tables. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "perfmon/clock.h"
#include "perfmon/units.h"
#include "perfmon/export.h"

/* Numbers as the PDF shows them (pm_fmt_num): "24", "34.25", "0.341". */
static void fmt_num(char *b, size_t cap, double v)
{
    pm_fmt_num(v, b, cap);
}

static void fmt_time(char *b, size_t cap, double t)
{
    if (pm_utc_iso(t, b, cap) < 0)
        snprintf(b, cap, "-");
}

#define HOST_WIDTH 40

/* A host name fit for a terminal: control bytes (a newline, an escape
 * sequence) become '?', and a name longer than a table's column is shown
 * as its start and "..." (the JSON output has it whole).  Returns a
 * static buffer per slot (0 or 1). */
static const char *safe_name(const char *name, int slot)
{
    static char buf[2][HOST_WIDTH + 1];
    size_t i = 0, len = strlen(name);
    size_t keep = len > HOST_WIDTH ? HOST_WIDTH - 3 : len;
    while (keep < len && keep > 0 && ((unsigned char)name[keep] & 0xC0) == 0x80)
        keep--; /* not inside a UTF-8 character */
    for (; i < keep; i++) {
        unsigned char c = (unsigned char)name[i];
        buf[slot][i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    if (len > HOST_WIDTH) {
        memcpy(buf[slot] + i, "...", 3);
        i += 3;
    }
    buf[slot][i] = 0;
    return buf[slot];
}

static void put_safe(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

static size_t host_width(const pm_analysis *a)
{
    size_t w = 4;
    for (size_t h = 0; h < a->in.nhosts; h++)
        if (strlen(a->in.hosts[h].name) > w)
            w = strlen(a->in.hosts[h].name);
    return w > HOST_WIDTH ? HOST_WIDTH : w;
}

/* One row per node (gpu 0) or per GPU (gpu 1) with the given figures. */
static void figure_table(const pm_analysis *a, FILE *f, const char *title, int gpu,
                         const char *const *keys, size_t nkeys)
{
    char b[64];
    int hw = (int)host_width(a);
    fprintf(f, "\n%s\n  %-*s", title, hw, "host");
    for (size_t c = 0; c < nkeys; c++)
        fprintf(f, " %11s", pm_figure_find(keys[c])->label);
    /* The units under the labels; sizes and energies carry theirs. */
    fprintf(f, "\n  %-*s", hw, "");
    for (size_t c = 0; c < nkeys; c++) {
        const char *u = pm_figure_find(keys[c])->unit;
        char ub[16];
        if (pm_fmt_value(1, u, b, sizeof b))
            snprintf(ub, sizeof ub, "(scaled)");
        else
            snprintf(ub, sizeof ub, "[%.8s]", u);
        fprintf(f, " %11s", ub);
    }
    fprintf(f, "\n");
    for (size_t h = 0; h < a->in.nhosts; h++) {
        if (a->in.hosts[h].gpu != gpu)
            continue;
        fprintf(f, "  %-*.*s", hw, hw, safe_name(a->in.hosts[h].name, 0));
        for (size_t c = 0; c < nkeys; c++) {
            const pm_figure *fg = pm_figure_find(keys[c]);
            (void)pm_fmt_value(pm_figure_value(&a->nodes[h], fg), fg->unit, b, sizeof b);
            fprintf(f, " %11s", b);
        }
        fprintf(f, "\n");
    }
}

#define EVENTS_SHOWN 50

/* Each node's end where there are several, and the events (docs/analysis.md,
 * "How the job ended"); the JSON has every event. */
static void events_text(const pm_analysis *a, FILE *f, int hw)
{
    char b[512];
    if (a->end.nnodes > 1 && a->ends) {
        fprintf(f, "\nEnd per host\n");
        for (size_t h = 0; h < a->in.nhosts; h++) {
            if (a->in.hosts[h].gpu)
                continue;
            pm_end_text(a, h, b, sizeof b);
            fprintf(f, "  %-*.*s %-10s ", hw, hw, safe_name(a->in.hosts[h].name, 0),
                    pm_end_state_name(a->ends[h].state));
            put_safe(f, b);
            fputc('\n', f);
        }
    }
    if (!a->nevents)
        return;
    fprintf(f, "\nEvents\n  %-20s %-*s %-16s %s\n", "time", hw, "host", "kind", "detail");
    for (size_t i = 0; i < a->nevents && i < EVENTS_SHOWN; i++) {
        const pm_job_event *e = &a->events[i];
        fmt_time(b, sizeof b, e->t);
        fprintf(f, "  %-20s %-*.*s %-16s ", b, hw, hw, safe_name(a->in.hosts[e->host].name, 0),
                pm_event_kind_name(e->kind));
        put_safe(f, e->detail);
        fputc('\n', f);
    }
    if (a->nevents > EVENTS_SHOWN)
        fprintf(f, "  ... and %zu more (--stats --json lists them all)\n",
                a->nevents - EVENTS_SHOWN);
    if (a->events_dropped)
        fprintf(f, "  (%zu more events beyond %d per host were not kept)\n", a->events_dropped,
                1000);
}

/* The job's end, then its hosts, span, grid and options; returns the
 * number of GPU hosts. */
static size_t header_text(const pm_analysis *a, FILE *f)
{
    char b1[64], b2[64];
    fmt_time(b1, sizeof b1, a->t_start);
    fmt_time(b2, sizeof b2, a->t_end);
    size_t ngpus = 0;
    for (size_t h = 0; h < a->in.nhosts; h++)
        ngpus += a->in.hosts[h].gpu != 0;
    char gpus[48] = "";
    if (ngpus)
        snprintf(gpus, sizeof gpus, " and %zu GPU%s", ngpus, ngpus == 1 ? "" : "s");
    char endt[512];
    pm_end_text(a, SIZE_MAX, endt, sizeof endt);
    fputs("job: ", f);
    put_safe(f, endt);
    fputc('\n', f);
    fprintf(
        f,
        "perfmon-analyze: %zu host%s%s, %s .. %s (%.1f s), grid %.3g s, repair=%s, align=%s%s\n\n",
        a->in.nhosts - ngpus, a->in.nhosts - ngpus == 1 ? "" : "s", gpus, b1, b2,
        a->t_end - a->t_start, a->grid_step, pm_repair_name(a->opts.repair),
        a->opts.compat_ska || a->opts.align == PM_ALIGN_INDEX ? "index" : "time",
        a->opts.compat_ska ? ", compat=ska" : "");
    char inc[256];
    if (pm_analysis_incomplete(a, inc, sizeof inc))
        fprintf(f, "%s: the figures cover the samples written so far\n\n", inc);
    /* (no end record: the sampler was killed, or crashed, or still runs
     * on another host) */
    return ngpus;
}

/* Each host's samples and clock. */
static void hosts_text(const pm_analysis *a, FILE *f, int hw)
{
    char b1[64], b2[64], b3[64], b4[64];
    fprintf(f, "Hosts\n  %-*s %-7s %9s %8s %8s %10s %11s %10s %9s\n", hw, "host", "format",
            "samples", "dropped", "interval", "offset s", "drift ppm", "step s", "repaired");
    for (size_t h = 0; h < a->in.nhosts; h++) {
        const pm_host *ho = &a->in.hosts[h];
        fmt_num(b1, sizeof b1, ho->clock.offset_s);
        fmt_num(b2, sizeof b2, ho->clock.method ? ho->clock.drift_ppm : NAN);
        fmt_num(b3, sizeof b3, ho->clock.method ? ho->clock.step_max_s : NAN);
        fmt_num(b4, sizeof b4, ho->interval);
        fprintf(f, "  %-*.*s %-7s %9zu %8zu %8s %10s %11s %10s %9zu\n", hw, hw,
                safe_name(ho->name, 0), ho->format, ho->n, ho->dropped_time, b4, b1, b2, b3,
                a->nodes[h].repaired);
    }
}

/* Each figure for the job and its least and largest node. */
static void job_figures_text(const pm_analysis *a, FILE *f)
{
    char b1[64], b2[64], b3[64];
    fprintf(f, "\nJob figures\n  %-32s %14s %14s %14s  %s\n", "figure", "job", "node min",
            "node max", "unit");
    for (size_t i = 0; i < PM_NFIGURES; i++) {
        const pm_figure *fg = &PM_FIGURES[i];
        double lo = NAN, hi = NAN;
        for (size_t h = 0; h < a->in.nhosts; h++) {
            double v = pm_figure_value(&a->nodes[h], fg);
            if (isnan(v))
                continue;
            if (isnan(lo) || v < lo)
                lo = v;
            if (isnan(hi) || v > hi)
                hi = v;
        }
        double jv = pm_figure_value(&a->job, fg);
        if (isnan(jv) && isnan(lo))
            continue;
        /* Sizes and energies scaled to their size, as in the PDF (the
         * JSON keeps the raw numbers in the figure's unit). */
        int scaled = pm_fmt_value(jv, fg->unit, b1, sizeof b1);
        (void)pm_fmt_value(lo, fg->unit, b2, sizeof b2);
        (void)pm_fmt_value(hi, fg->unit, b3, sizeof b3);
        fprintf(f, "  %-32s %14s %14s %14s  %s\n", fg->key, b1, b2, b3,
                scaled ? "(scaled)" : fg->unit);
    }
}

/* The per-node and per-GPU tables of a few figures. */
static void node_tables_text(const pm_analysis *a, FILE *f, size_t ngpus)
{
    static const char *const node_cols[] = {"cpu_avg_utilization_pct",
                                            "node_cpu_hours",
                                            "node_unused_cpu_hours",
                                            "max_t_mem_percent",
                                            "energy_j",
                                            "avg_power_w",
                                            "proc_cpu_hours",
                                            "proc_peak_rss_bytes",
                                            "total_net_io_ext_sent_mb"};
    static const char *const gpu_cols[] = {"gpu_avg_utilization_pct", "gpu_hours", "gpu_energy_j",
                                           "gpu_avg_power_w", "gpu_peak_mem_bytes"};
    figure_table(a, f, "Per node", 0, node_cols, sizeof node_cols / sizeof *node_cols);
    if (ngpus)
        figure_table(a, f, "Per GPU", 1, gpu_cols, sizeof gpu_cols / sizeof *gpu_cols);
}

/* Each metric's statistics over the job. */
static void metrics_text(const pm_analysis *a, FILE *f, int hw)
{
    char b1[64], b2[64], b3[64];
    fprintf(f,
            "\nMetrics (avg/node: mean of the node means, as in the job figures and the per-node "
            "plot titles; max/node: max of the node maxima;\n"
            "  pooled: mean over every node's points, each node weighted by its duration, and "
            "p50/p95/sd over those points;\n"
            "  series: time-weighted mean of the all-node Total/Average series, as in the "
            "all-node plot titles and --compare)\n");
    fprintf(f, "  %-24s %-10s %12s %12s %12s %12s %12s %12s %12s %-*s %6s %5s %8s %6s\n", "metric",
            "unit", "avg/node", "max/node", "pooled", "series", "p50", "p95", "sd", hw + 1,
            "max@host", "imbal", "nodes", "repaired", "gaps");
    for (size_t m = 0; m < a->nmetrics; m++) {
        const pm_metric_result *r = &a->metrics[m];
        char p50[32], p95[32], sd[32], im[32], ser[32];
        fmt_num(b1, sizeof b1, r->avg_per_node);
        fmt_num(b2, sizeof b2, r->max_per_node);
        fmt_num(b3, sizeof b3, r->all.mean);
        fmt_num(ser, sizeof ser, r->agg.st.mean);
        fmt_num(p50, sizeof p50, r->all.p50);
        fmt_num(p95, sizeof p95, r->all.p95);
        fmt_num(sd, sizeof sd, r->all.sd);
        snprintf(im, sizeof im, isnan(r->imbalance) ? "-" : "%.2f", r->imbalance);
        const char *mh =
            r->all.host_max >= 0 ? safe_name(a->in.hosts[r->all.host_max].name, 1) : "-";
        fprintf(
            f,
            "  %-24.24s %-10.10s %12s %12s %12s %12s %12s %12s %12s %-*.*s %6s %5zu %8zu %6llu\n",
            r->def->id, r->def->unit, b1, b2, b3, ser, p50, p95, sd, hw + 1, hw, mh, im,
            r->nhosts_with_data, r->repaired, (unsigned long long)r->qc.n[PM_Q_GAP]);
    }
}

/* The series with wraps, repairs or dropped points, by host. */
static void repairs_text(const pm_analysis *a, FILE *f, int hw)
{
    int any = 0;
    for (size_t m = 0; m < a->nmetrics; m++) {
        const pm_metric_result *r = &a->metrics[m];
        for (size_t h = 0; h < a->in.nhosts; h++) {
            const pm_series *s = r->host[h];
            if (!s || (!s->repaired && !s->wraps && !s->qc.n[PM_Q_DROPPED]))
                continue;
            if (!any++)
                fprintf(f, "\nRepairs\n  %-*s %-24s %8s %8s %8s\n", hw, "host", "metric", "wraps",
                        "repaired", "dropped");
            fprintf(f, "  %-*.*s %-24.24s %8zu %8zu %8llu\n", hw, hw,
                    safe_name(a->in.hosts[h].name, 0), r->def->id, s->wraps, s->repaired,
                    (unsigned long long)s->qc.n[PM_Q_DROPPED]);
        }
    }
}

/* The rules' notes, a rule on many nodes once with a count. */
static void notes_text(const pm_analysis *a, FILE *f)
{
    if (a->nnotes) {
        /* A rule that fires on many nodes is shown once with a count (the
         * JSON keeps every note). */
        static const char *const sev[] = {"info", "warning", "critical"};
        fprintf(f, "\nEfficiency notes\n");
        for (size_t i = 0; i < a->nnotes; i++) {
            size_t same = 0, first = i;
            for (size_t k = 0; k < a->nnotes; k++)
                if (strcmp(a->notes[k].rule, a->notes[i].rule) == 0) {
                    if (same++ == 0)
                        first = k;
                }
            if (same > 3 && first != i)
                continue;
            fprintf(f, "  [%s] ", sev[a->notes[i].severity]);
            put_safe(f, a->notes[i].message);
            if (same > 3)
                fprintf(f, " (and %zu more nodes)", same - 1);
            fputc('\n', f);
        }
    }
}

/* The inputs' warnings. */
static void warnings_text(const pm_analysis *a, FILE *f)
{
    if (a->in.nwarnings) {
        fprintf(f, "\nInput warnings\n");
        for (size_t i = 0; i < a->in.nwarnings; i++) {
            fputs("  ", f);
            put_safe(f, a->in.warnings[i]);
            fputc('\n', f);
        }
    }
}

int pm_stats_text(const pm_analysis *a, FILE *f, pm_error *err)
{
    int hw = (int)host_width(a);
    size_t ngpus = header_text(a, f);
    hosts_text(a, f, hw);
    job_figures_text(a, f);
    pm_request_use_text(a, f);
    node_tables_text(a, f, ngpus);
    metrics_text(a, f, hw);
    repairs_text(a, f, hw);
    events_text(a, f, hw);
    pm_phases_text(a, f);
    notes_text(a, f);
    warnings_text(a, f);
    if (fflush(f) != 0 || ferror(f))
        return pm_error_sys(err, PM_EIO, errno, "stats: write failed");
    return 0;
}
