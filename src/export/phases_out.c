/* Outputs of job phases: the --stats text and JSON sections, the timings
 * data file and gnuplot script (Batch Shipyard's stacked per-node boxes),
 * and the Chrome trace (docs/analysis.md, "Phases"). */
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "perfmon/units.h"
#include "perfmon/buf.h"
#include "perfmon/export.h"
#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/phase_stats.h"
#include "perfmon/json.h"

/* Numbers as --stats and the PDF show them (pm_fmt_num). */
static void fmt3(char *b, size_t cap, double v)
{
    pm_fmt_num(v, b, cap);
}

static void put_safe(FILE *f, const char *s, int width)
{
    int n = 0;
    for (; *s && (width <= 0 || n < width); s++, n++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
    for (; n < width; n++)
        fputc(' ', f);
}

void pm_phases_text(const pm_analysis *a, FILE *f)
{
    const pm_phase_stats *st = a->phase_stats;
    if (!st && !a->in.phases.scanner_files)
        return;
    char b[8][48];
    if (st) {
        fprintf(f, "\nPhases (durations in s; start spread = latest minus earliest first start "
                   "over nodes)\n");
        fprintf(f, "  %-24s %5s %6s %12s %12s %12s %12s %12s %12s\n", "phase", "nodes", "count",
                "total", "avg/node", "min/node", "max/node", "start spread", "start sd");
        for (size_t k = 0; k < st->nkinds; k++) {
            const pm_phase_kind_stats *ks = &st->kinds[k];
            fmt3(b[0], 48, ks->total_s);
            fmt3(b[1], 48, ks->avg_host_s);
            fmt3(b[2], 48, ks->min_host_s);
            fmt3(b[3], 48, ks->max_host_s);
            fmt3(b[4], 48, ks->start_spread_s);
            fmt3(b[5], 48, ks->start_sd_s);
            fprintf(f, "  ");
            put_safe(f, ks->name, 24);
            fprintf(f, " %5zu %6zu %12s %12s %12s %12s %12s %12s\n", ks->hosts, ks->count, b[0],
                    b[1], b[2], b[3], b[4], b[5]);
        }
        fprintf(f, "\nResource use per phase (whole job: time = longest node, CPU time in "
                   "core-seconds and its share of the allocated CPUs, the highest node's peak of "
                   "the job's RSS (of its memory used without a process tree), bytes summed "
                   "over nodes)\n ");
        static const int wcol[PM_PHASE_USE_COLS] = {-24, 9, 9, 9, 11, 11, 12, 11, 12};
        for (int c = 0; c < PM_PHASE_USE_COLS; c++)
            fprintf(f, " %*s", wcol[c], PM_PHASE_USE_HEAD[c]);
        fputc('\n', f);
        for (size_t k = 0; k < st->nkinds; k++) {
            char cells[PM_PHASE_USE_COLS][48];
            pm_phase_use_cells(&st->kinds[k], cells);
            fprintf(f, "  ");
            put_safe(f, cells[0], 24);
            for (int c = 1; c < PM_PHASE_USE_COLS; c++)
                fprintf(f, " %*s", wcol[c], cells[c]);
            fputc('\n', f);
        }
        if (pm_phase_energy_any(st)) {
            fprintf(f, "\nEnergy per phase (whole job, summed over the kind's phases and "
                       "nodes: the CPUs' from RAPL's package and DRAM counters, the GPUs' from "
                       "NVML's energy counter, or their power integrated where they have none)\n ");
            static const int ecol[PM_PHASE_ENERGY_COLS] = {-24, 18, 11, -1};
            for (int c = 0; c < PM_PHASE_ENERGY_COLS; c++)
                fprintf(f, " %*s", ecol[c], PM_PHASE_ENERGY_HEAD[c]);
            fputc('\n', f);
            for (size_t k = 0; k < st->nkinds; k++) {
                char cells[PM_PHASE_ENERGY_COLS][48];
                pm_phase_energy_cells(&st->kinds[k], cells);
                fprintf(f, "  ");
                put_safe(f, cells[0], 24);
                for (int c = 1; c < PM_PHASE_ENERGY_COLS; c++)
                    fprintf(f, " %*s", ecol[c], cells[c]);
                fputc('\n', f);
            }
        }
        fprintf(f, "\nPhases per node\n  %-24s %-24s %6s %12s %12s\n", "host", "phase", "count",
                "total s", "first start");
        for (size_t i = 0; i < st->nrows; i++) {
            const pm_phase_host_stats *r = &st->rows[i];
            fmt3(b[0], 48, r->total_s);
            fmt3(b[1], 48, r->first_start - a->t_start);
            fprintf(f, "  ");
            put_safe(f, r->host, 24);
            fprintf(f, " ");
            put_safe(f, r->name, 24);
            fprintf(f, " %6zu %12s %12s\n", r->count, b[0], b[1]);
        }
        if (a->opts.by_phase) {
            fprintf(f, "\nResource use by phase (duration-weighted mean over the phase's nodes; "
                       "energy summed)\n");
            for (size_t k = 0; k < st->nkinds; k++) {
                const pm_phase_kind_stats *ks = &st->kinds[k];
                fprintf(f, "  ");
                put_safe(f, ks->name, 0);
                fprintf(f, "\n    %-24s %-10s %14s %14s\n", "metric", "unit", "mean", "energy J");
                for (size_t m = 0; m < st->nmetrics && m < a->nmetrics; m++) {
                    if (!isfinite(ks->mean[m]))
                        continue;
                    fmt3(b[0], 48, ks->mean[m]);
                    fmt3(b[1], 48, ks->energy_j[m]);
                    fprintf(f, "    %-24.24s %-10.10s %14s %14s\n", a->metrics[m].def->id,
                            a->metrics[m].def->unit, b[0], b[1]);
                }
            }
        }
    }
    if (a->in.phases.scanner_files) {
        fmt3(b[0], 48, a->in.phases.scanner_total_s);
        fprintf(f,
                "\nScanner totals per worker kind (%zu profile%s, total time %s s; interval "
                "keys: summed time in s, counters: summed values)\n  %-16s %-32s %-8s %20s\n",
                a->in.phases.scanner_files, a->in.phases.scanner_files == 1 ? "" : "s", b[0],
                "kind", "key", "type", "total");
        for (size_t i = 0; i < a->in.phases.ncounters; i++) {
            const pm_phase_counter *c = &a->in.phases.counters[i];
            fprintf(f, "  ");
            put_safe(f, c->kind, 16);
            fprintf(f, " ");
            put_safe(f, c->name, 32);
            if (c->is_time) {
                fmt3(b[0], 48, (double)c->value / 1e9);
                fprintf(f, " %-8s %20s\n", "time", b[0]);
            } else {
                fprintf(f, " %-8s %20lld\n", "counter", (long long)c->value);
            }
        }
    }
}

void pm_phases_json(const pm_analysis *a, cJSON *root)
{
    const pm_phase_stats *st = a->phase_stats;
    if (!st && !a->in.phases.scanner_files && a->in.phases.nproblems == 0)
        return;
    cJSON *ph = cJSON_AddObjectToObject(root, "phases");
    if (!ph)
        return;
    cJSON *kinds = cJSON_AddArrayToObject(ph, "kinds");
    for (size_t k = 0; st && k < st->nkinds; k++) {
        const pm_phase_kind_stats *ks = &st->kinds[k];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return;
        cJSON_AddItemToArray(kinds, o);
        cJSON_AddStringToObject(o, "name", ks->name);
        cJSON_AddNumberToObject(o, "nodes", (double)ks->hosts);
        cJSON_AddNumberToObject(o, "count", (double)ks->count);
        pm_json_num(o, "total_s", ks->total_s);
        pm_json_num(o, "avg_per_node_s", ks->avg_host_s);
        pm_json_num(o, "min_per_node_s", ks->min_host_s);
        pm_json_num(o, "max_per_node_s", ks->max_host_s);
        pm_json_num(o, "first_start", ks->start_min);
        pm_json_num(o, "last_first_start", ks->start_max);
        pm_json_num(o, "start_spread_s", ks->start_spread_s);
        pm_json_num(o, "start_sd_s", ks->start_sd_s);
        cJSON *use = cJSON_AddObjectToObject(o, "use");
        if (use) { /* resource use of the whole job (the report's table) */
            pm_json_num(use, "time_s", ks->max_host_s);
            pm_json_num(use, "cpu_core_s", ks->cpu_core_s);
            pm_json_num(use, "cpu_alloc_core_s", ks->cpu_alloc_core_s);
            pm_json_num(use, "cpu_share_pct", ks->cpu_share_pct);
            pm_json_num(use, "mem_peak_bytes", ks->mem_peak_bytes);
            pm_json_num(use, "disk_read_bytes", ks->disk_read_bytes);
            pm_json_num(use, "disk_write_bytes", ks->disk_write_bytes);
            pm_json_num(use, "net_sent_bytes", ks->net_sent_bytes);
            pm_json_num(use, "net_recv_bytes", ks->net_recv_bytes);
            pm_json_num(use, "cpu_energy_j", ks->cpu_energy_j);
            pm_json_num(use, "gpu_energy_j", ks->gpu_energy_j);
            const char *from =
                isfinite(ks->gpu_energy_j) ? pm_phase_energy_from(ks->gpu_energy_from) : NULL;
            if (from)
                cJSON_AddStringToObject(use, "gpu_energy_from", from);
            else
                cJSON_AddNullToObject(use, "gpu_energy_from");
        }
        cJSON *by = cJSON_AddObjectToObject(o, "by_metric");
        for (size_t m = 0; by && m < st->nmetrics && m < a->nmetrics; m++) {
            if (!isfinite(ks->mean[m]))
                continue;
            cJSON *mo = cJSON_AddObjectToObject(by, a->metrics[m].def->id);
            if (!mo)
                continue;
            pm_json_num(mo, "mean", ks->mean[m]);
            if (isfinite(ks->energy_j[m]))
                pm_json_num(mo, "energy_j", ks->energy_j[m]);
        }
    }
    cJSON *rows = cJSON_AddArrayToObject(ph, "nodes");
    for (size_t i = 0; st && i < st->nrows; i++) {
        const pm_phase_host_stats *r = &st->rows[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return;
        cJSON_AddItemToArray(rows, o);
        cJSON_AddStringToObject(o, "host", r->host);
        cJSON_AddStringToObject(o, "phase", r->name);
        cJSON_AddNumberToObject(o, "count", (double)r->count);
        pm_json_num(o, "total_s", r->total_s);
        pm_json_num(o, "first_start", r->first_start);
    }
    if (a->in.phases.scanner_files) {
        /* Scanner's statistics() per kind and key, its interval times (in
         * s) and counters kept apart so that a key and a counter of one
         * name cannot collide. */
        cJSON *sc = cJSON_AddObjectToObject(ph, "scanner");
        cJSON *ivs = sc ? cJSON_AddObjectToObject(sc, "intervals_s") : NULL;
        cJSON *cts = sc ? cJSON_AddObjectToObject(sc, "counters") : NULL;
        if (!ivs || !cts)
            return;
        cJSON_AddNumberToObject(sc, "files", (double)a->in.phases.scanner_files);
        pm_json_num(sc, "total_time_s", a->in.phases.scanner_total_s);
        for (size_t i = 0; i < a->in.phases.ncounters; i++) {
            const pm_phase_counter *c = &a->in.phases.counters[i];
            cJSON *top = c->is_time ? ivs : cts;
            cJSON *k = cJSON_GetObjectItemCaseSensitive(top, c->kind);
            if (!k && !(k = cJSON_AddObjectToObject(top, c->kind)))
                return;
            cJSON_AddNumberToObject(k, c->name,
                                    c->is_time ? (double)c->value / 1e9 : (double)c->value);
        }
    }
    cJSON *pr = cJSON_AddArrayToObject(ph, "unmatched");
    for (size_t i = 0; i < a->in.phases.nproblems; i++)
        cJSON_AddItemToArray(pr, cJSON_CreateString(a->in.phases.problems[i]));
}

/* ---- timings.dat and timings.gp ------------------------------------------ */

int pm_export_timings(const pm_analysis *a, const char *dir, pm_error *err)
{
    const pm_phase_stats *st = a->phase_stats;
    if (!st)
        return 0;
    /* Hosts with phases, sorted by their earliest phase start. */
    size_t nh = 0;
    const char **hosts = pm_alloc_array(st->nrows ? st->nrows : 1, sizeof *hosts);
    double *first = pm_alloc_array(st->nrows ? st->nrows : 1, sizeof *first);
    if (!hosts || !first) {
        free(hosts);
        free(first);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < st->nrows; i++) {
        if (nh && strcmp(hosts[nh - 1], st->rows[i].host) == 0) {
            first[nh - 1] = fmin(first[nh - 1], st->rows[i].first_start);
            continue;
        }
        hosts[nh] = st->rows[i].host;
        first[nh++] = st->rows[i].first_start;
    }
    for (size_t i = 1; i < nh; i++) /* insertion sort by first start, stable */
        for (size_t j = i; j > 0 && first[j - 1] > first[j]; j--) {
            double t = first[j];
            first[j] = first[j - 1];
            first[j - 1] = t;
            const char *h = hosts[j];
            hosts[j] = hosts[j - 1];
            hosts[j - 1] = h;
        }
    char path[4200];
    int rc = 0;
    if (pm_path_join(path, sizeof path, dir, "timings.dat") != 0)
        rc = pm_error_set(err, PM_EUSAGE, "%s: path too long", dir);
    FILE *f = rc ? NULL : fopen(path, "w");
    if (!rc && !f)
        rc = pm_error_sys(err, PM_EIO, errno, "%s: cannot create", path);
    if (f) {
        fprintf(f, "# perfmon phase timings: one row per node (earliest start first), the\n"
                   "# summed duration in s of each phase kind; start = s after the job start\n");
        fprintf(f, "\"host\" \"start\"");
        for (size_t k = 0; k < st->nkinds; k++) {
            fputc(' ', f);
            pm_gp_quote(f, st->kinds[k].name, 0);
        }
        fputc('\n', f);
        for (size_t h = 0; h < nh; h++) {
            pm_gp_quote(f, hosts[h], 0);
            fprintf(f, " %.6f", first[h] - a->t_start);
            for (size_t k = 0; k < st->nkinds; k++) {
                double v = 0;
                for (size_t i = 0; i < st->nrows; i++)
                    if (strcmp(st->rows[i].host, hosts[h]) == 0 &&
                        strcmp(st->rows[i].name, st->kinds[k].name) == 0)
                        v = st->rows[i].total_s;
                fprintf(f, " %.6f", v);
            }
            fputc('\n', f);
        }
        rc = pm_close_checked(f, path, err);
    }
    if (!rc && pm_path_join(path, sizeof path, dir, "timings.gp") != 0)
        rc = pm_error_set(err, PM_EUSAGE, "%s: path too long", dir);
    f = rc ? NULL : fopen(path, "w");
    if (!rc && !f)
        rc = pm_error_sys(err, PM_EIO, errno, "%s: cannot create", path);
    if (f) {
        fprintf(f,
                "# Stacked per-node phase durations (run: gnuplot timings.gp)\n"
                "set terminal pngcairo size 1400,%d font \"DejaVu Sans,10\"\n"
                "set output \"timings.png\"\n"
                "set title \"Phase durations per node\"\n"
                "set style data histograms\nset style histogram rowstacked\n"
                "set style fill solid 0.8 border -1\nset boxwidth 0.8\n"
                "set ylabel \"seconds\"\nset xtics rotate by -60 scale 0 font \",8\"\n"
                "set key outside right\nset grid ytics\n",
                (int)(500 + (nh > 40 ? 4 * (nh - 40) : 0)));
        fprintf(f, "plot ");
        for (size_t k = 0; k < st->nkinds; k++)
            fprintf(f, "%s\"timings.dat\" using %zu%s title columnhead(%zu)",
                    k ? ", \\\n     " : "", k + 3, k ? "" : ":xtic(1)", k + 3);
        fprintf(f, "\n");
        rc = pm_close_checked(f, path, err);
    }
    free(hosts);
    free(first);
    return rc;
}

/* ---- Chrome trace ----------------------------------------------------------- */

typedef struct sink {
    FILE *f;
    gzFile gz;
    int bad;
} sink;

static void out(sink *s, const char *data, size_t len)
{
    if (s->bad || len == 0)
        return;
    if (s->gz)
        s->bad = gzwrite(s->gz, data, (unsigned)len) != (int)len;
    else
        s->bad = fwrite(data, 1, len, s->f) != len;
}

static void flush_buf(sink *s, pm_buf *b)
{
    out(s, b->data, b->len);
    pm_buf_reset(b);
}

/* Host id for the trace: its index among the analysis hosts, else after them. */
static int trace_pid(const pm_analysis *a, const char *host, const char ***extra, size_t *nextra)
{
    for (size_t h = 0; h < a->in.nhosts; h++)
        if (strcmp(a->in.hosts[h].name, host) == 0)
            return (int)h + 1;
    for (size_t i = 0; i < *nextra; i++)
        if (strcmp((*extra)[i], host) == 0)
            return (int)(a->in.nhosts + i) + 1;
    const char **ne = pm_realloc_array(*extra, *nextra + 1, sizeof *ne);
    if (!ne)
        return -1;
    *extra = ne;
    ne[(*nextra)++] = host;
    return (int)(a->in.nhosts + *nextra);
}

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

/* The counter tracks: these metrics when present, at most this many points
 * per host (the maximum of each bucket, so peaks survive). */
static const char *const TRACE_COUNTERS[] = {"cpu_usage",    "mem_usage", "disk_read", "disk_write",
                                             "net_out",      "net_in",    "ib_out",    "ib_in",
                                             "rapl_package", "gpu_util"};
#define TRACE_POINTS 4000

/* Time zero: the job start, or an earlier phase (a mark before the first
 * sample), so no timestamp is negative. */
static double trace_t0(const pm_analysis *a)
{
    double t0 = a->t_start;
    for (size_t i = 0; i < a->in.phases.n; i++)
        if (a->in.phases.v[i].t0 < t0)
            t0 = a->in.phases.v[i].t0;
    return t0;
}

#define SEP() (*first ? (*first = 0, "") : ",\n")

/* One host's events of one counter track (pid h + 1): at most TRACE_POINTS,
 * each the maximum of its bucket.  Both the in-memory writer and --stream's
 * (pm_trace_host) call it, so both write the same bytes. */
static void trace_counter_host(pm_buf *b, int *first, const pm_metric_def *def, size_t h,
                               const pm_series *se, double t0)
{
    if (!se || se->n == 0)
        return;
    char label[200];
    snprintf(label, sizeof label, "%s (%s)", def->name, def->unit);
    size_t per = (se->n + TRACE_POINTS - 1) / TRACE_POINTS;
    for (size_t i = 0; i < se->n; i += per) {
        double mx = NAN;
        for (size_t j = i; j < i + per && j < se->n; j++)
            if (isfinite(se->v[j]) && !(se->v[j] <= mx))
                mx = se->v[j];
        if (!isfinite(mx))
            continue;
        pm_buf_printf(b, "%s{\"ph\":\"C\",\"name\":", SEP());
        pm_buf_json_str(b, label);
        pm_buf_printf(b, ",\"pid\":%zu,\"ts\":%.3f,\"args\":{\"value\":%.9g}}", h + 1,
                      (se->t[i] - t0) * 1e6, mx);
    }
}

/* The head of the trace and everything before the counter tracks: the
 * hosts, the phases and the names of their tracks (none of it reads a
 * series).  Flushes b to s as it grows. */
static void trace_head(const pm_analysis *a, pm_buf *b, sink *s, int *first, double t0)
{
    const char **extra = NULL;
    size_t nextra = 0;
    pm_buf_puts(b, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"perfmon-analyze\"},"
                   "\"traceEvents\":[\n");
    /* Processes: one per host, named and ordered. */
    for (size_t h = 0; h < a->in.nhosts; h++) {
        pm_buf_printf(
            b, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%zu,\"args\":{\"name\":", SEP(),
            h + 1);
        pm_buf_json_str(b, a->in.hosts[h].name);
        pm_buf_printf(b,
                      "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%zu,"
                      "\"args\":{\"sort_index\":%zu}}",
                      h + 1, h + 1);
    }
    /* Phases: one thread per phase kind (or Scanner worker). */
    const pm_phase_set *ps = &a->in.phases;
    const char **tracks = NULL;
    size_t ntracks = 0;
    for (size_t i = 0; i < ps->n && !b->oom; i++) {
        const pm_phase *p = &ps->v[i];
        int pid = trace_pid(a, p->host, &extra, &nextra);
        if (pid < 0) {
            b->oom = 1;
            break;
        }
        const char *track = *p->track ? p->track : p->name;
        size_t tid;
        for (tid = 0; tid < ntracks; tid++)
            if (strcmp(tracks[tid], track) == 0)
                break;
        if (tid == ntracks) {
            const char **nt = pm_realloc_array(tracks, ntracks + 1, sizeof *nt);
            if (!nt) {
                b->oom = 1;
                break;
            }
            tracks = nt;
            tracks[ntracks++] = track;
        }
        pm_buf_printf(b, "%s{\"ph\":\"X\",\"cat\":\"phase\",\"name\":", SEP());
        pm_buf_json_str(b, p->name);
        pm_buf_printf(b, ",\"pid\":%d,\"tid\":%zu,\"ts\":%.3f,\"dur\":%.3f,\"args\":%s}", pid,
                      tid + 1, (p->t0 - t0) * 1e6, (p->t1 - p->t0) * 1e6, p->attrs);
        if (b->len > 1 << 20)
            flush_buf(s, b);
    }
    /* Names of the hosts only phases know, and of every (host, track). */
    for (size_t i = 0; i < nextra; i++) {
        pm_buf_printf(
            b, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%zu,\"args\":{\"name\":", SEP(),
            a->in.nhosts + i + 1);
        pm_buf_json_str(b, extra[i]);
        pm_buf_puts(b, "}}");
    }
    for (size_t p = 1; p <= a->in.nhosts + nextra; p++)
        for (size_t t = 0; t < ntracks; t++) {
            pm_buf_printf(b,
                          "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%zu,\"tid\":%zu,"
                          "\"args\":{\"name\":",
                          SEP(), p, t + 1);
            pm_buf_json_str(b, tracks[t]);
            pm_buf_puts(b, "}}");
            if (b->len > 1 << 20)
                flush_buf(s, b);
        }
    free(extra);
    free(tracks);
    /* The events and the job's end: instant events on the host's track
     * (docs/analysis.md, "How the job ended"). */
    for (size_t i = 0; i < a->nevents; i++) {
        const pm_job_event *e = &a->events[i];
        pm_buf_printf(b, "%s{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"event\",\"name\":", SEP());
        pm_buf_json_str(b, pm_event_kind_name(e->kind));
        pm_buf_printf(b, ",\"pid\":%zu,\"ts\":%.3f,\"args\":{\"detail\":", e->host + 1,
                      (e->t - t0) * 1e6);
        pm_buf_json_str(b, e->detail);
        pm_buf_printf(b, ",\"value\":%.9g}}", e->value);
        if (b->len > 1 << 20)
            flush_buf(s, b);
    }
    if (a->ends && a->end.host != SIZE_MAX) {
        const pm_end *e = &a->ends[a->end.host];
        double t = !isnan(e->t) ? e->t : !isnan(e->t_last) ? e->t_last : a->t_end;
        char text[512];
        pm_end_text(a, SIZE_MAX, text, sizeof text);
        pm_buf_printf(b, "%s{\"ph\":\"i\",\"s\":\"g\",\"cat\":\"end\",\"name\":", SEP());
        pm_buf_json_str(b, pm_end_state_name(a->end.state));
        pm_buf_printf(b, ",\"pid\":%zu,\"ts\":%.3f,\"args\":{\"job\":", a->end.host + 1,
                      (t - t0) * 1e6);
        pm_buf_json_str(b, text);
        pm_buf_puts(b, "}}");
    }
}
#undef SEP

/* Create path's temporary file (tmp) as the sink: gzip for a .gz name. */
static int sink_open(sink *s, const char *path, char *tmp, size_t cap, pm_error *err)
{
    if (snprintf(tmp, cap, "%s.tmp", path) >= (int)cap)
        return pm_error_set(err, PM_EUSAGE, "%s: path too long", path);
    if (ends_with(path, ".gz")) {
        s->gz = gzopen(tmp, "wb6");
        if (!s->gz)
            return pm_error_sys(err, PM_EIO, errno, "%s: cannot create", path);
    } else {
        s->f = fopen(tmp, "w");
        if (!s->f)
            return pm_error_sys(err, PM_EIO, errno, "%s: cannot create", path);
    }
    return 0;
}

/* Write the tail, close the sink and rename tmp to path (or remove tmp). */
static int sink_close(sink *s, pm_buf *b, const char *path, const char *tmp, int bad, pm_error *err)
{
    pm_buf_puts(b, "\n]}\n");
    int oom = b->oom;
    flush_buf(s, b);
    int rc = 0;
    if (oom)
        rc = pm_error_set(err, PM_ENOMEM, "out of memory writing %s", path);
    else if (s->bad || bad)
        rc = pm_error_sys(err, PM_EIO, errno, "%s: write failed", path);
    if (s->gz) {
        if (gzclose(s->gz) != Z_OK && !rc)
            rc = pm_error_set(err, PM_EIO, "%s: write failed", path);
    } else if (s->f) {
        pm_error e2;
        int r2 = pm_close_checked(s->f, path, &e2);
        if (!rc && r2) {
            rc = r2;
            *err = e2;
        }
    }
    if (!rc && rename(tmp, path) != 0)
        rc = pm_error_sys(err, PM_EIO, errno, "%s: cannot rename into place", path);
    if (rc)
        unlink(tmp);
    return rc;
}

#define NTRACE (sizeof TRACE_COUNTERS / sizeof *TRACE_COUNTERS)

int pm_export_trace(const pm_analysis *a, const char *path, pm_error *err)
{
    sink s = {NULL, NULL, 0};
    char tmp[4200];
    int rc = sink_open(&s, path, tmp, sizeof tmp, err);
    if (rc)
        return rc;
    pm_buf b;
    pm_buf_init(&b);
    int first = 1;
    double t0 = trace_t0(a);
    trace_head(a, &b, &s, &first, t0);
    /* Counter tracks for the main resource series. */
    for (size_t c = 0; c < NTRACE && !b.oom; c++) {
        int m = pm_analysis_metric(a, TRACE_COUNTERS[c]);
        if (m < 0)
            continue;
        const pm_metric_result *r = &a->metrics[m];
        for (size_t h = 0; h < a->in.nhosts; h++) {
            trace_counter_host(&b, &first, r->def, h, r->host[h], t0);
            if (b.len > 1 << 20)
                flush_buf(&s, &b);
        }
    }
    rc = sink_close(&s, &b, path, tmp, 0, err);
    pm_buf_free(&b);
    return rc;
}

/* ---- the trace under --stream ---------------------------------------------------- */

/* Each counter track's events, host after host, go to a spill file of its
 * own (created next to the trace and unlinked at once), and are copied
 * after the head in the counters' order when the analysis is done. */
struct pm_trace_out {
    char *path;
    FILE *spill[NTRACE];
    int bad;
};

pm_trace_out *pm_trace_open(const char *path, pm_error *err)
{
    pm_trace_out *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        pm_error_set(err, PM_ENOMEM, "out of memory");
        return NULL;
    }
    for (size_t c = 0; c < NTRACE; c++) {
        char tmp[4200];
        if (snprintf(tmp, sizeof tmp, "%s.spill-XXXXXX", path) >= (int)sizeof tmp) {
            pm_error_set(err, PM_EUSAGE, "%s: path too long", path);
            pm_trace_discard(w);
            return NULL;
        }
        int fd = mkstemp(tmp);
        if (fd < 0 || !(w->spill[c] = fdopen(fd, "w+"))) {
            /* (named as the in-memory writer names its failure) */
            pm_error_sys(err, PM_EIO, errno, "%s: cannot create", path);
            if (fd >= 0)
                close(fd);
            unlink(tmp);
            pm_trace_discard(w);
            return NULL;
        }
        unlink(tmp);
    }
    return w;
}

void pm_trace_host(pm_trace_out *w, const pm_analysis *a, size_t h,
                   const pm_metric_def *const *defs, const pm_series *const *ser, size_t nm)
{
    if (w->bad)
        return;
    double t0 = trace_t0(a);
    pm_buf b;
    pm_buf_init(&b);
    for (size_t c = 0; c < NTRACE && !w->bad; c++) {
        size_t k = 0;
        while (k < nm && strcmp(defs[k]->id, TRACE_COUNTERS[c]) != 0)
            k++;
        if (k == nm)
            continue;
        /* (not the file's first event: the head names every host) */
        int first = 0;
        trace_counter_host(&b, &first, defs[k], h, ser[k], t0);
        if (b.oom)
            w->bad = PM_ENOMEM;
        else if (b.len && fwrite(b.data, 1, b.len, w->spill[c]) != b.len)
            w->bad = PM_EIO;
        pm_buf_reset(&b);
    }
    pm_buf_free(&b);
}

int pm_trace_close(pm_trace_out *w, const pm_analysis *a, pm_error *err)
{
    int rc = 0;
    if (w->bad == PM_ENOMEM)
        rc = pm_error_set(err, PM_ENOMEM, "out of memory writing %s", w->path);
    else if (w->bad)
        rc = pm_error_set(err, PM_EIO, "%s: writing the spill file failed", w->path);
    sink s = {NULL, NULL, 0};
    char tmp[4200];
    if (!rc)
        rc = sink_open(&s, w->path, tmp, sizeof tmp, err);
    if (rc) {
        pm_trace_discard(w);
        return rc;
    }
    pm_buf b;
    pm_buf_init(&b);
    int first = 1;
    trace_head(a, &b, &s, &first, trace_t0(a));
    flush_buf(&s, &b);
    int bad = 0;
    char chunk[1 << 16];
    for (size_t c = 0; c < NTRACE && !bad && !s.bad; c++) {
        if (fflush(w->spill[c]) != 0 || fseek(w->spill[c], 0, SEEK_SET) != 0) {
            bad = 1;
            break;
        }
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk, w->spill[c])) > 0)
            out(&s, chunk, n);
        bad = ferror(w->spill[c]) != 0;
    }
    rc = sink_close(&s, &b, w->path, tmp, bad, err);
    pm_buf_free(&b);
    pm_trace_discard(w);
    return rc;
}

void pm_trace_discard(pm_trace_out *w)
{
    if (!w)
        return;
    for (size_t c = 0; c < NTRACE; c++)
        if (w->spill[c])
            fclose(w->spill[c]);
    free(w->path);
    free(w);
}
