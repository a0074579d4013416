/* CPU source: /proc/stat and /proc/loadavg (proc(5)).
 *
 * Records the node's CPU time counters (seconds, from USER_HZ ticks), the
 * whole-node busy percentage over the last interval, and min/avg/max of
 * the per-core busy percentages (as AzureML's perf.py summarises them).
 * Percentages need two readings, so the first sample has none.
 *
 * Values that cannot be real are not recorded (and noted once): a CPU
 * line's tick count above TICKS_MAX per CPU (2^40 ticks: 348 years at
 * USER_HZ 100, 34 at 1000), the node line's above TICKS_MAX x MAX_CPUS,
 * ctxt or processes above 2^60, procs_running or procs_blocked above the
 * kernel's limit on tasks (PID_MAX_LIMIT, 4194304), a load average above it.
 * A bound on uptime x USER_HZ would be tighter, but lxcfs and other
 * container views give /proc/uptime and /proc/stat different origins.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/fileio.h"
#include "perfmon/log.h"
#include "perfmon/mem.h"
#include "perfmon/parse.h"
#include "perfmon/source.h"

#include "sread.h"

/* /proc/stat "cpu" line fields after the label (proc(5)):
 * user nice system idle iowait irq softirq steal guest guest_nice.
 * guest and guest_nice are already included in user and nice. */
enum { F_USER, F_NICE, F_SYSTEM, F_IDLE, F_IOWAIT, F_IRQ, F_SOFTIRQ, F_STEAL, NF = 8 };
static const char *const field_names[NF] = {"user",   "nice", "system",  "idle",
                                            "iowait", "irq",  "softirq", "steal"};

#define MAX_CPUS 8192
#define TICKS_MAX (1ull << 40)
#define COUNT_MAX (1ull << 60)
#define TASKS_MAX 4194304ull
#define STAT_CAP (4u << 20)

typedef struct core {
    uint64_t busy, total;
    int seen;
} core;

typedef struct cpu_state {
    int col_time[NF];
    int col_pct, col_min, col_avg, col_max, col_ncpus;
    int col_load[3], col_ctxt, col_forks, col_running, col_blocked;
    uint64_t prev_busy, prev_total;
    int have_prev;
    core cores[MAX_CPUS];
    char *buf;
    size_t cap;
    long hz;
    int fd_stat, fd_load;
    unsigned warned; /* bit per kind of impossible value, noted once */
} cpu_state;

enum { W_NODE = 1, W_CORE = 2, W_COUNT = 4, W_LOAD = 8 };

static void impossible(cpu_state *st, const pm_sctx *ctx, unsigned kind, const char *file,
                       const char *what, uint64_t v)
{
    if (st->warned & kind)
        return;
    st->warned |= kind;
    pm_log(PM_LOG_WARN, "cpu: %s/%s: %s %llu cannot be real; not recorded (noted once)",
           ctx->proc_root, file, what, (unsigned long long)v);
}

/* The index of the first of n ticks above max, or -1. */
static int first_above(const uint64_t *t, int n, uint64_t max)
{
    for (int i = 0; i < n; i++)
        if (t[i] > max)
            return i;
    return -1;
}

/* Parse up to NF tick counts; returns how many were read.  Old kernels
 * have fewer than 8: iowait came in 2.5.41, irq and softirq in 2.6.0,
 * steal in 2.6.11.  The fields not read are 0 in t (for the sums). */
static int parse_ticks(const char *p, uint64_t *t)
{
    int n = 0;
    memset(t, 0, NF * sizeof *t);
    while (n < NF && pm_scan_u64(&p, &t[n]) == 0)
        n++;
    return n;
}

static void busy_total(const uint64_t *t, uint64_t *busy, uint64_t *total)
{
    uint64_t all = 0;
    for (int i = 0; i < NF; i++)
        all += t[i];
    uint64_t idle = t[F_IDLE] + t[F_IOWAIT];
    *total = all;
    *busy = all > idle ? all - idle : 0;
}

/* Busy share of the interval in percent, NAN when the interval is empty
 * or the counters went backwards (CPU hot-unplug resets them). */
static double busy_pct(uint64_t busy, uint64_t pbusy, uint64_t total, uint64_t ptotal)
{
    if (total <= ptotal || busy < pbusy)
        return NAN;
    double v = 100.0 * (double)(busy - pbusy) / (double)(total - ptotal);
    return v > 100.0 ? 100.0 : v;
}

/* Read /proc/stat into the state's buffer, growing it up to STAT_CAP (a
 * node with thousands of CPUs has a long file). */
static int read_stat(cpu_state *st, const pm_sctx *ctx)
{
    ssize_t n = pm_sread_whole(&st->fd_stat, ctx->proc_fd, "stat", &st->buf, &st->cap, STAT_CAP);
    return n < 0 ? (int)n : 0;
}

static int add(pm_schema *s, const char *name, const char *unit, int kind, int type)
{
    return pm_schema_add(s, name, unit, kind, type, "cpu", 0);
}

static int cpu_open(const pm_sctx *ctx, pm_schema *schema, void **state, pm_error *err)
{
    cpu_state *st = calloc(1, sizeof *st);
    if (!st)
        return pm_error_set(err, PM_ENOMEM, "cpu: out of memory");
    st->hz = ctx->clk_tck > 0 ? ctx->clk_tck : 100;
    st->fd_stat = st->fd_load = -1;
    int rc = read_stat(st, ctx);
    if (rc < 0 || strncmp(st->buf, "cpu ", 4) != 0) {
        pm_close_kept(&st->fd_stat);
        free(st->buf);
        free(st);
        return pm_error_sys(err, PM_EIO, rc < 0 ? -rc : EINVAL,
                            "%s/stat: cannot read a 'cpu' "
                            "line",
                            ctx->proc_root);
    }
    char name[64];
    for (int i = 0; i < NF; i++) {
        snprintf(name, sizeof name, "cpu.%s", field_names[i]);
        st->col_time[i] = add(schema, name, "s", PM_COUNTER, PM_F64);
    }
    st->col_pct = add(schema, "cpu.percent", "%", PM_GAUGE, PM_F64);
    st->col_min = add(schema, "cpu.core_min_pct", "%", PM_GAUGE, PM_F64);
    st->col_avg = add(schema, "cpu.core_avg_pct", "%", PM_GAUGE, PM_F64);
    st->col_max = add(schema, "cpu.core_max_pct", "%", PM_GAUGE, PM_F64);
    st->col_ncpus = add(schema, "cpu.ncpus", "1", PM_GAUGE, PM_U64);
    st->col_ctxt = add(schema, "cpu.ctxt", "1", PM_COUNTER, PM_U64);
    st->col_forks = add(schema, "cpu.forks", "1", PM_COUNTER, PM_U64);
    st->col_running = add(schema, "procs.running", "1", PM_GAUGE, PM_U64);
    st->col_blocked = add(schema, "procs.blocked", "1", PM_GAUGE, PM_U64);
    st->col_load[0] = pm_schema_add(schema, "load.1", "1", PM_GAUGE, PM_F64, "cpu", 0);
    st->col_load[1] = pm_schema_add(schema, "load.5", "1", PM_GAUGE, PM_F64, "cpu", 0);
    st->col_load[2] = pm_schema_add(schema, "load.15", "1", PM_GAUGE, PM_F64, "cpu", 0);
    if (st->col_load[2] < 0) {
        pm_close_kept(&st->fd_stat);
        free(st->buf);
        free(st);
        return pm_error_set(err, PM_ENOMEM, "cpu: cannot add columns");
    }
    *state = st;
    return 0;
}

static void read_loadavg(cpu_state *st, const pm_sctx *ctx, pm_sample *s)
{
    char buf[256];
    if (ctx->loadavg)
        snprintf(buf, sizeof buf, "%s", ctx->loadavg); /* split below writes into it */
    else if (pm_pread_kept(&st->fd_load, ctx->proc_fd, "loadavg", buf, sizeof buf, NULL) <= 0)
        return;
    char *f[3];
    if (pm_split_fields(buf, f, 3) != 3)
        return;
    for (int i = 0; i < 3; i++) {
        double v;
        if (pm_parse_double(f[i], &v) != 0 || v < 0)
            continue;
        if (v > (double)TASKS_MAX)
            impossible(st, ctx, W_LOAD, "loadavg", "a load average of",
                       v < 1e19 ? (uint64_t)v : UINT64_MAX);
        else
            pm_sample_f64(s, st->col_load[i], v);
    }
}

static int cpu_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    cpu_state *st = state;
    int rc = read_stat(st, ctx);
    if (rc < 0)
        return rc;
    double cmin = INFINITY, cmax = -INFINITY, csum = 0;
    unsigned ncore_pct = 0;
    uint64_t ncpus = 0;
    char *cur = st->buf, *line;
    while ((line = pm_next_line(&cur)) != NULL) {
        uint64_t t[NF], v;
        if (strncmp(line, "cpu ", 4) == 0) {
            int nt = parse_ticks(line + 4, t);
            if (nt < 4)
                continue;
            int bad = first_above(t, nt, TICKS_MAX * MAX_CPUS);
            if (bad >= 0) {
                /* That field is left out, and the percentage, which needs
                 * them all; the next one is taken over a sound interval. */
                impossible(st, ctx, W_NODE, "stat", field_names[bad], t[bad]);
                for (int i = 0; i < nt; i++)
                    if (t[i] <= TICKS_MAX * MAX_CPUS)
                        pm_sample_f64(s, st->col_time[i], (double)t[i] / (double)st->hz);
                st->have_prev = 0;
                continue;
            }
            /* Only the fields this kernel has: the others stay unrecorded. */
            for (int i = 0; i < nt; i++)
                pm_sample_f64(s, st->col_time[i], (double)t[i] / (double)st->hz);
            uint64_t busy, total;
            busy_total(t, &busy, &total);
            if (st->have_prev)
                pm_sample_f64(s, st->col_pct, busy_pct(busy, st->prev_busy, total, st->prev_total));
            st->prev_busy = busy;
            st->prev_total = total;
            st->have_prev = 1;
        } else if (strncmp(line, "cpu", 3) == 0) {
            const char *p = line + 3;
            uint64_t id;
            int nt;
            if (pm_scan_u64(&p, &id) != 0 || id >= MAX_CPUS || (nt = parse_ticks(p, t)) < 4)
                continue;
            ncpus++;
            int bad = first_above(t, nt, TICKS_MAX);
            if (bad >= 0) {
                char what[64];
                snprintf(what, sizeof what, "cpu%u %s", (unsigned)id, field_names[bad]);
                impossible(st, ctx, W_CORE, "stat", what, t[bad]);
                st->cores[id].seen = 0; /* out of min/avg/max until sound again */
                continue;
            }
            uint64_t busy, total;
            busy_total(t, &busy, &total);
            core *c = &st->cores[id];
            if (c->seen) {
                double v2 = busy_pct(busy, c->busy, total, c->total);
                if (!isnan(v2)) {
                    cmin = v2 < cmin ? v2 : cmin;
                    cmax = v2 > cmax ? v2 : cmax;
                    csum += v2;
                    ncore_pct++;
                }
            }
            c->busy = busy;
            c->total = total;
            c->seen = 1;
        } else {
            static const struct {
                const char *name;
                size_t len;
                uint64_t max;
            } counts[] = {
                {"ctxt", 4, COUNT_MAX},
                {"processes", 9, COUNT_MAX},
                {"procs_running", 13, TASKS_MAX},
                {"procs_blocked", 13, TASKS_MAX},
            };
            const int cols[] = {st->col_ctxt, st->col_forks, st->col_running, st->col_blocked};
            for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
                if (strncmp(line, counts[k].name, counts[k].len) != 0 || line[counts[k].len] != ' ')
                    continue;
                const char *p = line + counts[k].len;
                if (pm_scan_u64(&p, &v) != 0)
                    break;
                if (v > counts[k].max)
                    impossible(st, ctx, W_COUNT, "stat", counts[k].name, v);
                else
                    pm_sample_u64(s, cols[k], v);
                break;
            }
        }
    }
    if (ncpus)
        pm_sample_u64(s, st->col_ncpus, ncpus);
    if (ncore_pct) {
        pm_sample_f64(s, st->col_min, cmin);
        pm_sample_f64(s, st->col_max, cmax);
        pm_sample_f64(s, st->col_avg, csum / ncore_pct);
    }
    read_loadavg(st, ctx, s);
    return 0;
}

static void cpu_close(void *state)
{
    cpu_state *st = state;
    if (!st)
        return;
    pm_close_kept(&st->fd_stat);
    pm_close_kept(&st->fd_load);
    free(st->buf);
    free(st);
}

const pm_source pm_source_cpu = {
    .name = "cpu",
    .open = cpu_open,
    .read = cpu_read,
    .close = cpu_close,
    .essential = 1,
};
