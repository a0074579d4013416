/* The verdict on page 1 of the report: the analysis turned into a few
 * sentences (see report.h).  The sentences are a table of templates with
 * {name} placeholders, filled from the node and job figures that
 * --stats --json prints, so a reader can check every number. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/units.h"
#include "perfmon/buf.h"
#include "perfmon/phase_stats.h"
#include "perfmon/report.h"
#include "perfmon/order.h"

#define MiB 1048576.0

/* ---- efficiency notes as lines ------------------------------------------- */

size_t pm_note_lines(const pm_analysis *a, pm_note_line **out)
{
    *out = NULL;
    pm_note_line *l = calloc(a->nnotes ? a->nnotes : 1, sizeof *l);
    unsigned char *done = calloc(a->nnotes ? a->nnotes : 1, 1);
    if (!l || !done) {
        free(l);
        free(done);
        return 0;
    }
    size_t n = 0;
    for (int sv = PM_SEV_CRITICAL; sv >= PM_SEV_INFO; sv--) {
        for (int job = 1; job >= 0; job--) {
            for (size_t i = 0; i < a->nnotes; i++) {
                const pm_note *nt = &a->notes[i];
                int s = nt->severity < 0 || nt->severity > 2 ? 0 : nt->severity;
                if (done[i] || s != sv || (nt->host < 0) != job)
                    continue;
                pm_note_line *x = &l[n++];
                x->note = i;
                x->severity = s;
                if (job) {
                    done[i] = 1;
                    x->count = 1;
                    continue;
                }
                /* Every node this rule fired on, named up to four. */
                size_t hl = 0;
                for (size_t k = i; k < a->nnotes; k++) {
                    const pm_note *m = &a->notes[k];
                    if (done[k] || m->host < 0 || strcmp(m->rule, nt->rule) != 0)
                        continue;
                    done[k] = 1;
                    x->count++;
                    if (x->shown < 4 && hl < sizeof x->hosts - 80) {
                        int w = snprintf(x->hosts + hl, sizeof x->hosts - hl, "%s%s",
                                         x->shown ? ", " : "", a->in.hosts[m->host].name);
                        if (w > 0)
                            hl += (size_t)w < sizeof x->hosts - hl ? (size_t)w
                                                                   : sizeof x->hosts - hl - 1;
                        x->shown++;
                    }
                }
            }
        }
    }
    free(done);
    *out = l;
    return n;
}

/* Whether a memory rule's note (docs/analysis.md, "Efficiency rules")
 * already says that host h came close to its memory, and when: the
 * verdict then gives the peak alone, not a second sentence about it. */
static int memory_noted(const pm_analysis *a, long h)
{
    for (size_t i = 0; i < a->nnotes; i++)
        if (a->notes[i].host == h && strcmp(a->notes[i].type, "memory") == 0)
            return 1;
    return 0;
}

/* ---- sentence templates ---------------------------------------------------- */

enum {
    V_CPU,      /* share of the allocated CPU used */
    V_ACCT,     /* the job's cgroup beside its process tree */
    V_IDLE,     /* a node far below the others */
    V_BUSY,     /* a node far above the others */
    V_SLOW,     /* a node that ran longer than the median */
    V_MEM_NEAR, /* a node came close to running out of memory */
    V_MEM_PEAK, /* otherwise: where memory peaked */
    V_NET,      /* bytes over the network */
    V_NET_NONE,
    V_DISK,  /* bytes read from and written to disk */
    V_NOTES, /* efficiency notes below */
    V_PHASE, /* the phase that moved most of those bytes */
    V_COUNT
};

static const char *const TEMPLATES[V_COUNT] = {
    [V_CPU] = "{pct} % of the allocated CPU was used ({used} of {alloc} CPU time).",
    [V_ACCT] = "The job's cgroup accounted {cgcpu} of CPU time and a memory peak of {cgmem} "
               "(page cache included); "
               "its process tree, {trcpu} and {trmem} of RSS at the samples (the cgroup counts "
               "every process that ran, short ones too; the tree gives the per-process detail).",
    [V_IDLE] =
        "{host} was nearly idle: its CPU averaged {value} % against {mean} % on the other nodes.",
    [V_BUSY] =
        "{host} was the busiest node: its CPU averaged {value} % against {mean} % on the other nodes.",
    [V_SLOW] =
        "{host} ran {ratio} times as long as the median node ({value} against {mean}); the others may have waited for it.",
    [V_MEM_NEAR] =
        "{host} came within {value} % of running out of memory (peak {pct} % of the node).",
    [V_MEM_PEAK] = "Memory peaked at {pct} % of a node ({host}).",
    [V_NET] = "{sent} were sent and {recv} received over the network.",
    [V_NET_NONE] = "Nothing was sent over the network outside the node{s}.",
    [V_DISK] = "{read} were read from disk and {written} written.",
    [V_NOTES] = "{count} efficiency note{s} below ({critical} critical).",
    [V_PHASE] = "{pct} % of the {what} fell in phase `{phase}`.",
};

/* Thresholds of the verdict (docs/report.md, "The report", item 1). */
#define IDLE_RATIO 0.5    /* a node's CPU below this share of the others' mean */
#define BUSY_RATIO 1.5    /* above this multiple of the others' mean */
#define SLOW_RATIO 1.2    /* wall time above this multiple of the median node's */
#define MEM_NEAR_PCT 80.0 /* peak memory at or above this: "came within" */

typedef struct kv {
    const char *k, *v;
} kv;

static void say(pm_buf *b, int which, const kv *vals, size_t nvals)
{
    if (b->len)
        pm_buf_puts(b, " ");
    for (const char *p = TEMPLATES[which]; *p; p++) {
        if (*p == '{') {
            const char *e = strchr(p, '}');
            size_t i = 0;
            for (; e && i < nvals; i++)
                if (strlen(vals[i].k) == (size_t)(e - p - 1) &&
                    strncmp(vals[i].k, p + 1, (size_t)(e - p - 1)) == 0)
                    break;
            if (e && i < nvals) {
                pm_buf_puts(b, vals[i].v);
                p = e;
                continue;
            }
        }
        pm_buf_add(b, p, 1);
    }
}

static void pct(double v, char *out, size_t cap)
{
    if (!isfinite(v))
        snprintf(out, cap, "-");
    else if ((fabs(v) < 9.95 && v != floor(v)) || (v > 99.5 && v < 100))
        snprintf(out, cap, "%.1f", v); /* 99.7 % is not 100 % */
    else
        snprintf(out, cap, "%.0f", v);
}

/* The CPU node (not GPU) furthest below (dir < 0) or above (dir > 0) the
 * mean of the other nodes, as value / that mean; -1 when none. */
static long cpu_outlier(const pm_analysis *a, int dir, double *value, double *others)
{
    double sum = 0;
    size_t n = 0;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        double v = a->nodes[h].cpu_avg_utilization_pct;
        if (!a->in.hosts[h].gpu && isfinite(v)) {
            sum += v;
            n++;
        }
    }
    if (n < 2)
        return -1;
    long best = -1;
    double best_ratio = dir < 0 ? IDLE_RATIO : BUSY_RATIO;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        double v = a->nodes[h].cpu_avg_utilization_pct;
        if (a->in.hosts[h].gpu || !isfinite(v))
            continue;
        double m = (sum - v) / (double)(n - 1);
        if (dir < 0 ? !(m > 0) : !(m > 0 && v > 0))
            continue;
        double r = v / m;
        if (dir < 0 ? r < best_ratio : r > best_ratio) {
            best_ratio = r;
            best = (long)h;
            *value = v;
            *others = m;
        }
    }
    return best;
}

/* The phase kind that moved the most bytes of metric id ("net_out": sent,
 * "disk_write": written), by the bytes of the "Resource use per phase"
 * table (phase_use.c), as a share of total_mib; -1 when no phase or no
 * such metric. */
static long phase_share(const pm_analysis *a, const char *id, double total_mib, double *share)
{
    const pm_phase_stats *ps = a->phase_stats;
    int sent = strcmp(id, "net_out") == 0;
    if (!ps || (!sent && strcmp(id, "disk_write") != 0) || !(total_mib > 0))
        return -1;
    long best = -1;
    double most = 0;
    for (size_t k = 0; k < ps->nkinds; k++) {
        /* The bytes of the page's "Resource use per phase" table. */
        const pm_phase_kind_stats *ks = &ps->kinds[k];
        double mib = (sent ? ks->net_sent_bytes : ks->disk_write_bytes) / 1048576.0;
        if (isfinite(mib) && mib > most) {
            most = mib;
            best = (long)k;
        }
    }
    *share = most / total_mib * 100.0;
    if (*share > 100)
        *share = 100; /* grid and phase edges: never more than the whole */
    return best;
}

/* "90 % of the <what> fell in phase <name>", when a phase moved most of
 * total_mib of metric id. */
static void say_phase(pm_buf *b, const pm_analysis *a, const char *id, double total_mib,
                      const char *what)
{
    double share;
    long k = phase_share(a, id, total_mib, &share);
    if (k < 0)
        return;
    char p[48];
    pct(share, p, sizeof p);
    kv pv[] = {{"pct", p}, {"what", what}, {"phase", a->phase_stats->kinds[k].name}};
    say(b, V_PHASE, pv, 3);
}

/* How the job ended, first (docs/analysis.md, "How the job ended").
 * Returns the sentences said (0 or more). */
static size_t say_end(pm_buf *b, const pm_analysis *a)
{
    size_t n = 0;
    /* How the job ended, first (docs/analysis.md, "How the job ended"). */
    if (a->ends) {
        char end[768];
        pm_end_sentence(a, end, sizeof end);
        pm_buf_puts(b, end);
        n++;
    }
    return n;
}

/* The CPU share of the time allocated. Returns the sentences said (0 or more). */
static size_t say_cpu(pm_buf *b, const pm_analysis *a)
{
    size_t n = 0;
    char s1[48], s2[48], s3[48];
    const pm_node_summary *j = &a->job;
    /* CPU share: CPU time used over CPU time allocated (job sums). */
    if (j->node_cpu_hours > 0 && isfinite(j->node_unused_cpu_hours)) {
        double used = j->node_cpu_hours - j->node_unused_cpu_hours;
        pct(used / j->node_cpu_hours * 100.0, s1, sizeof s1);
        pm_fmt_duration(used * 3600.0, s2, sizeof s2);
        pm_fmt_duration(j->node_cpu_hours * 3600.0, s3, sizeof s3);
        kv v[] = {{"pct", s1}, {"used", s2}, {"alloc", s3}};
        say(b, V_CPU, v, 3);
        n++;
    }
    return n;
}

/* The cgroup's accounting beside the tree's. Returns the sentences said (0 or more). */
static size_t say_accounting(pm_buf *b, const pm_analysis *a)
{
    size_t n = 0;
    char s3[48], s4[48];
    const pm_node_summary *j = &a->job;
    /* Where the job had a cgroup, its own accounting beside the tree's
     * (docs/report.md, "The report"). */
    if (isfinite(j->cg_cpu_hours) && isfinite(j->cg_peak_mem_bytes)) {
        char c1[48], c2[48];
        pm_fmt_duration(j->cg_cpu_hours * 3600.0, c1, sizeof c1);
        pm_fmt_bytes(j->cg_peak_mem_bytes, c2, sizeof c2);
        pm_fmt_duration(j->proc_cpu_hours * 3600.0, s3, sizeof s3);
        pm_fmt_bytes(j->proc_peak_rss_bytes, s4, sizeof s4);
        kv v[] = {{"cgcpu", c1}, {"cgmem", c2}, {"trcpu", s3}, {"trmem", s4}};
        say(b, V_ACCT, v, 4);
        n++;
    }
    return n;
}

/* A node idle or busy beside the others. Returns the sentences said (0 or more). */
static size_t say_outliers(pm_buf *b, const pm_analysis *a)
{
    size_t n = 0;
    char s1[48], s2[48];
    /* Nodes that stand out, in both directions. */
    double val = NAN, others = NAN;
    long h = cpu_outlier(a, -1, &val, &others);
    if (h >= 0) {
        pct(val, s1, sizeof s1);
        pct(others, s2, sizeof s2);
        kv v[] = {{"host", a->in.hosts[h].name}, {"value", s1}, {"mean", s2}};
        say(b, V_IDLE, v, 3);
        n++;
    }
    /* A node above the others, unless an idle node already explains the
     * gap (with 2 nodes, or an idle one pulling the mean down). */
    h = h >= 0 ? -1 : cpu_outlier(a, +1, &val, &others);
    if (h >= 0) {
        pct(val, s1, sizeof s1);
        pct(others, s2, sizeof s2);
        kv v[] = {{"host", a->in.hosts[h].name}, {"value", s1}, {"mean", s2}};
        say(b, V_BUSY, v, 3);
        n++;
    }
    return n;
}

/* A node whose run took longer than the others' (nnodes: the job's nodes,
 * not GPUs). Returns the sentences said (0 or more). */
static size_t say_slow(pm_buf *b, const pm_analysis *a, size_t nnodes)
{
    size_t said = 0;
    char s1[48], s2[48], s3[48];
    if (nnodes >= 2) {
        double *w = calloc(a->in.nhosts, sizeof *w);
        size_t n = 0;
        for (size_t k = 0; w && k < a->in.nhosts; k++)
            if (!a->in.hosts[k].gpu && isfinite(a->nodes[k].wall_time_s))
                w[n++] = a->nodes[k].wall_time_s;
        if (n >= 2) {
            qsort(w, n, sizeof *w, pm_cmp_double);
            double med = pm_median_sorted(w, n);
            long slow = -1;
            double worst = SLOW_RATIO;
            for (size_t k = 0; med > 0 && k < a->in.nhosts; k++) {
                double r = a->nodes[k].wall_time_s / med;
                if (!a->in.hosts[k].gpu && r > worst) {
                    worst = r;
                    slow = (long)k;
                }
            }
            if (slow >= 0) {
                snprintf(s1, sizeof s1, "%.2g", worst);
                pm_fmt_duration(a->nodes[slow].wall_time_s, s2, sizeof s2);
                pm_fmt_duration(med, s3, sizeof s3);
                kv v[] = {
                    {"host", a->in.hosts[slow].name}, {"ratio", s1}, {"value", s2}, {"mean", s3}};
                say(b, V_SLOW, v, 4);
                said++;
            }
        }
        free(w);
    }
    return said;
}

/* The node closest to running out of memory. Returns the sentences said (0 or more). */
static size_t say_memory(pm_buf *b, const pm_analysis *a)
{
    size_t n = 0;
    char s1[48], s2[48];
    /* Memory: the node closest to running out. */
    long mh = -1;
    double mpeak = -INFINITY;
    for (size_t k = 0; k < a->in.nhosts; k++) {
        double v = a->nodes[k].max_t_mem_percent;
        if (!a->in.hosts[k].gpu && isfinite(v) && v > mpeak) {
            mpeak = v;
            mh = (long)k;
        }
    }
    if (mh >= 0) {
        pct(mpeak, s1, sizeof s1);
        pct(100.0 - mpeak, s2, sizeof s2);
        kv v[] = {{"host", a->in.hosts[mh].name}, {"pct", s1}, {"value", s2}};
        say(b, mpeak >= MEM_NEAR_PCT && !memory_noted(a, mh) ? V_MEM_NEAR : V_MEM_PEAK, v, 3);
        n++;
    }
    return n;
}

/* Bytes over the network and the disks (nnodes for the plural). Returns
 * the sentences said (0 or more). */
static size_t say_io(pm_buf *b, const pm_analysis *a, size_t nnodes)
{
    size_t n = 0;
    char s1[48], s2[48];
    const pm_node_summary *j = &a->job;
    /* Bytes over the network and the disks (job sums, MiB). */
    double sent = j->total_net_io_ext_sent_mb, recv = j->total_net_io_ext_recv_mb;
    if (isfinite(sent) || isfinite(recv)) {
        if ((isfinite(sent) && sent > 0) || (isfinite(recv) && recv > 0)) {
            pm_fmt_bytes(isfinite(sent) ? sent * MiB : 0, s1, sizeof s1);
            pm_fmt_bytes(isfinite(recv) ? recv * MiB : 0, s2, sizeof s2);
            kv v[] = {{"sent", s1}, {"recv", s2}};
            say(b, V_NET, v, 2);
            say_phase(b, a, "net_out", sent, "bytes sent");
        } else {
            kv v[] = {{"s", nnodes == 1 ? "" : "s"}};
            say(b, V_NET_NONE, v, 1);
        }
        n++;
    }
    double rd = j->total_disk_io_read_mb, wr = j->total_disk_io_write_mb;
    if (isfinite(rd) || isfinite(wr)) {
        pm_fmt_bytes(isfinite(rd) ? rd * MiB : 0, s1, sizeof s1);
        pm_fmt_bytes(isfinite(wr) ? wr * MiB : 0, s2, sizeof s2);
        kv v[] = {{"read", s1}, {"written", s2}};
        say(b, V_DISK, v, 2);
        say_phase(b, a, "disk_write", wr, "bytes written");
        n++;
    }
    return n;
}

/* The rules' notes, counted as the page shows them. Returns the sentences said (0 or more). */
static size_t say_notes(pm_buf *b, const pm_analysis *a)
{
    size_t n = 0;
    char s3[48], s4[48];
    if (a->nnotes) {
        /* Count the notes as the page shows them: a rule that fired on
         * many nodes is one line, so it is one note here too. */
        pm_note_line *l = NULL;
        size_t nl = pm_note_lines(a, &l), crit = 0;
        if (!l)
            nl = a->nnotes;
        for (size_t k = 0; l && k < nl; k++)
            crit += l[k].severity == PM_SEV_CRITICAL;
        for (size_t k = 0; !l && k < a->nnotes; k++)
            crit += a->notes[k].severity == PM_SEV_CRITICAL;
        free(l);
        snprintf(s3, sizeof s3, "%zu", nl);
        snprintf(s4, sizeof s4, "%zu", crit);
        kv v[] = {{"count", s3}, {"s", nl == 1 ? "" : "s"}, {"critical", s4}};
        say(b, V_NOTES, v, 3);
        n++;
    }
    return n;
}

size_t pm_verdict_text(const pm_analysis *a, char *out, size_t cap)
{
    pm_buf b;
    pm_buf_init(&b);
    size_t nnodes = 0;
    for (size_t h = 0; h < a->in.nhosts; h++)
        nnodes += !a->in.hosts[h].gpu;
    size_t nsent = say_end(&b, a);
    nsent += say_cpu(&b, a);
    nsent += say_accounting(&b, a);
    nsent += say_outliers(&b, a);
    nsent += say_slow(&b, a, nnodes);
    nsent += say_memory(&b, a);
    nsent += say_io(&b, a, nnodes);
    nsent += say_notes(&b, a);
    if (cap) {
        size_t n = b.oom ? 0 : b.len < cap ? b.len : cap - 1;
        if (n)
            memcpy(out, b.data, n);
        out[n] = 0;
    }
    pm_buf_free(&b);
    return nsent;
}

/* ---- what the profile cannot say ------------------------------------------- */

static int all_nan(const pm_analysis *a, size_t off)
{
    for (size_t h = 0; h < a->in.nhosts; h++) {
        double v;
        memcpy(&v, (const char *)&a->nodes[h] + off, sizeof v);
        if (!a->in.hosts[h].gpu && isfinite(v))
            return 0;
    }
    return 1;
}

size_t pm_verdict_limits(const pm_analysis *a, char lines[][160], size_t max)
{
    size_t n = 0;
    char inc[160];
    if (!a->in.nhosts)
        return 0;
    if (n < max && pm_analysis_incomplete(a, inc, sizeof inc))
        snprintf(lines[n++], 160, "Incomplete profile: %s.", inc + strlen("incomplete: "));
    if (n < max && all_nan(a, offsetof(pm_node_summary, perf_instructions)) &&
        all_nan(a, offsetof(pm_node_summary, perf_flop)))
        snprintf(lines[n++], 160, "No PMU counters on these nodes: IPC and FLOP/s not measured.");
    if (n < max && all_nan(a, offsetof(pm_node_summary, energy_j)))
        snprintf(lines[n++], 160,
                 "No energy counters (RAPL) on these nodes: energy and power not measured.");
    if (n < max && all_nan(a, offsetof(pm_node_summary, total_net_io_ext_sent_mb)))
        snprintf(lines[n++], 160, "No network counters: network traffic not measured.");
    if (n < max && all_nan(a, offsetof(pm_node_summary, proc_peak_rss_bytes)))
        snprintf(lines[n++], 160,
                 "No process tree: the job's own CPU and memory not separated from the node's.");
    return n;
}
