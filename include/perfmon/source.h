/* source.h - the sampler's metric-source contract.
 *
 * Each source (cpu, memory, disk, net, infiniband, rapl, process tree,
 * cgroup) is one file under src/sampler/ exporting one const pm_source
 * table.  At
 * start the sampler calls open() on every source: the source discovers its
 * hardware, adds its columns to the schema and keeps their indices in its
 * private state.  Then, every sample, read() fills those columns.
 *
 * Paths under /proc and /sys are opened relative to the directory fds in
 * pm_sctx, so tests run the real readers on captured trees in fixtures/.
 *
 * Ownership: open() allocates *state, close() frees it (close(NULL) is a
 * no-op).  The context and schema are borrowed.
 */
#ifndef PERFMON_SOURCE_H
#define PERFMON_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perfmon/buf.h"
#include "perfmon/error.h"
#include "perfmon/profile.h"

/* Growing list of columns, built once at start. */
typedef struct pm_schema {
    pm_column *cols;
    size_t n, cap;
} pm_schema;

void pm_schema_init(pm_schema *s);
void pm_schema_free(pm_schema *s);
/* Add a column; returns its index (>= 0) or a negative PM_E* code
 * (duplicate name, too many columns, out of memory). */
int pm_schema_add(pm_schema *s, const char *name, const char *unit, int kind, int type,
                  const char *group, uint64_t wrap) PM_WUR;

/* One sample under construction: values and a presence bitmap.  A column
 * that a source does not set stays "not recorded". */
typedef struct pm_sample {
    int64_t mono_ns;
    int64_t wall_ns;
    size_t ncols;
    pm_value *v;
    uint8_t *present;
} pm_sample;

int pm_sample_init(pm_sample *s, size_t ncols) PM_WUR;
void pm_sample_free(pm_sample *s);
void pm_sample_clear(pm_sample *s);

static inline void pm_sample_u64(pm_sample *s, int col, uint64_t v)
{
    if (col < 0 || (size_t)col >= s->ncols)
        return;
    s->v[col].u = v;
    s->present[col / 8] |= (uint8_t)(1u << (col % 8));
}

static inline void pm_sample_f64(pm_sample *s, int col, double v)
{
    if (col < 0 || (size_t)col >= s->ncols || v != v)
        return; /* NaN means "not recorded": leave the bit clear */
    s->v[col].f = v;
    s->present[col / 8] |= (uint8_t)(1u << (col % 8));
}

/* What every source may look at. */
typedef struct pm_sctx {
    int proc_fd;           /* directory fd of the /proc root */
    int sys_fd;            /* directory fd of the /sys root */
    const char *proc_root; /* for messages */
    const char *sys_root;
    const char *out_dir; /* profile directory (disk usage of its filesystem) */
    const pid_t *roots;  /* process trees to follow (may be empty) */
    size_t nroots;
    uid_t uid;              /* only descendants of this user are followed... */
    int any_uid;            /* ...unless set: the whole tree, whoever owns it */
    int subreaper;          /* the sampler is a subreaper above the roots: every
                               child of the sampler belongs to the tree (orphans) */
    const char *slurm_job;  /* not NULL: follow this SLURM job's steps on the node */
    const char *slurm_step; /* the sampler's own step, left out (may be NULL) */
    long clk_tck;           /* USER_HZ of /proc/[pid]/stat and /proc/stat */
    long page_size;
    int64_t now_mono_ns;     /* time of the sample being taken */
    int64_t pss_interval_ns; /* refresh PSS/USS (smaps_rollup) at most this often */
    int system_counters;     /* per-CPU hardware counters without a tree (opt-in) */
    int last_sample;         /* the sample being taken is the run's last */
    /* Record a note in the profile: plain text, or an event's JSON object
     * (docs/format.md, "Event notes").  Set by the sampling loop; NULL in
     * tests that read a captured tree (pm_sctx_note then does nothing). */
    void (*note)(void *arg, const char *text);
    void *note_arg;
    /* Is pid one of the processes the process-tree source follows (as of
     * its last sample)?  Set by the sampling loop; NULL in tests. */
    int (*followed)(void *arg, int pid);
    void *followed_arg;
    /* <proc>/loadavg as read at the start of the sample being taken, for
     * the sources that need it (load averages, the newest pid): read once,
     * not once per source.  NULL when unread (tests): they read it. */
    const char *loadavg;
} pm_sctx;

/* Columns that need no finer time than a second, read at most every
 * PM_RARE_NS and always at the first and the last sample, so that a short
 * interval (-i 0.05) does not multiply their cost: error and event counters
 * (OOM kills, throttling and error counts, memory limit events: only their
 * rises count, docs/analysis.md "How the job ended"), pressure stall
 * totals, the cgroup's CPU split and I/O, file system usage.  In between
 * they record nothing; the analysis spreads a sparse counter's rate over
 * the span between its readings and holds a sparse gauge
 * (docs/analysis.md, "Rates, unwrapping and repairs"). */
#define PM_RARE_NS 1000000000LL

/* Whether the rare counters are due at this sample; *due is the source's
 * own next time (0 before the first). */
static inline int pm_sctx_rare_due(const pm_sctx *ctx, int64_t *due)
{
    if (*due && ctx->now_mono_ns < *due && !ctx->last_sample)
        return 0;
    *due = (ctx->now_mono_ns ? ctx->now_mono_ns : 1) + PM_RARE_NS;
    return 1;
}

/* Hand text to ctx->note when one is set. */
static inline void pm_sctx_note(const pm_sctx *ctx, const char *text)
{
    if (ctx->note)
        ctx->note(ctx->note_arg, text);
}

typedef struct pm_source {
    const char *name;
    /* 0: ready; PM_ENOENT: not on this machine (err says why, not fatal);
     * other negative: failure (fatal only for essential sources). */
    int (*open)(const pm_sctx *ctx, pm_schema *schema, void **state, pm_error *err);
    /* 0, or negative when nothing could be read this time (the source's
     * columns are then left unrecorded for this sample). */
    int (*read)(void *state, const pm_sctx *ctx, pm_sample *s);
    /* Optional: append `"key":value` members describing what was found
     * (e.g. the Infiniband ports) to the hardware metadata object. */
    void (*describe)(void *state, pm_buf *json);
    /* Optional: pid, a child of the sampler, has exited and is about to
     * be reaped (wait()ed for): the last moment its /proc files can be
     * read.  Called between samples. */
    void (*reaping)(void *state, const pm_sctx *ctx, pid_t pid);
    /* Optional: `-- CMD` has been forked as pid and waits at its start
     * gate (it has not run the command yet, and the first sample has not
     * been taken): the source may place it (the cgroup source moves it
     * into the cgroup made for it).  Called once, after open(). */
    void (*adopt)(void *state, const pm_sctx *ctx, pid_t pid);
    void (*close)(void *state);
    int essential; /* open() failure is fatal */
} pm_source;

extern const pm_source pm_source_cpu;
extern const pm_source pm_source_memory;
extern const pm_source pm_source_disk;
extern const pm_source pm_source_net;
extern const pm_source pm_source_infiniband;
extern const pm_source pm_source_rapl;
extern const pm_source pm_source_proctree;
extern const pm_source pm_source_nvml;
extern const pm_source pm_source_perf;
extern const pm_source pm_source_events;
extern const pm_source pm_source_cgroup;

/* NULL-terminated list of all sources, in column order. */
extern const pm_source *const pm_sources[];

/* Build a context for proc_root/sys_root ("/proc", "/sys" normally). */
int pm_sctx_open(pm_sctx *ctx, const char *proc_root, const char *sys_root, pm_error *err) PM_WUR;
void pm_sctx_close(pm_sctx *ctx);

/* Hardware metadata as a JSON object (caller frees).  Reads cpuinfo,
 * meminfo and sysfs under ctx's roots. */
char *pm_hwinfo_json(const pm_sctx *ctx, const char *hostname);

#endif
