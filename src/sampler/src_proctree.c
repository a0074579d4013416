/* Process-tree source: the monitored processes and all their descendants
 * (of the same user unless ctx->any_uid), re-discovered every sample.
 * In a SLURM job (ctx->slurm_job) the roots are the children of the job's
 * step daemons on this node, each titled "slurmstepd: [JOB.STEP]" (STEP
 * a number, batch, extern or interactive), except the sampler's own step.
 *
 * Discovery reads the parent of each process once, when its pid first
 * appears in /proc, and remembers whether it belongs to the tree: a
 * process's parent only changes when it is orphaned, so the verdict holds
 * for its lifetime.  A steady-state sample therefore costs one readdir of
 * /proc plus the reads of the tree's own files, however many other
 * processes the node runs.  (/proc/<pid>/task/<tid>/children would be
 * cheaper still, but many kernels are built without it.)
 *
 * With -- CMD the sampler is a subreaper above the tree (ctx->subreaper):
 * the tree's orphans become its children, and every child of the sampler
 * is a member, whenever it is first seen.
 *
 * A multithreaded member's stat, statm, io and fd count are read every
 * sample (through kept descriptors): stat and io are the whole process's
 * figures, all threads included, and no cheaper file tells whether any
 * thread ran since the last read (schedstat is the main thread's alone: a
 * main thread waiting in pthread_join while workers spin looks idle
 * there).  A single-threaded member whose thread's schedstat (time on the
 * CPU and timeslices) has not changed since its last full read cannot have
 * changed its times, reaped a child, done I/O or opened a file: that read
 * is reused (one schedstat read instead of five), at most STAT_REFRESH
 * samples, for RSS, which reclaim lowers while a process sleeps.
 *
 * CPU time of the tree (proc.cpu_time, in microseconds internally) is
 *
 *     sum over live members of utime + stime + max(cutime + cstime, floor)
 *     + departed,
 *
 * proc(5) fields 14-17 of /proc/<pid>/stat.  A process's own times cover
 * its threads, the exited ones included.  When a member reaps a child,
 * the kernel adds the child's whole total (its own and its reaped
 * children's) to the member's cutime/cstime, so the sum stays continuous
 * while processes come and go, and a child born and reaped between two
 * samples lands in the interval it ran in.  Zombies stay members, their
 * final figures readable, until they are reaped: a zombie's time counts
 * from the first sample that sees it, not when its parent reaps it, read
 * exactly (schedstat's time on the CPU, in ns: utime and stime, each
 * truncated to ticks, read 0 for a 5 ms process).  When it is reaped, its
 * figures leave the sum as they enter the parent's cutime + cstime; what
 * reaped children are known to have brought is the parent's floor
 * (settle()), so the parent's truncated reading neither counts them twice
 * nor lags behind them.  A member that vanishes
 * without being reaped by a live member takes its time with it; the
 * departed accumulator keeps it (settle_gone()):
 *
 *   - a member whose parent (at its last read; ppid changes on
 *     re-parenting) is not a member: a root under -p, a process
 *     re-parented to init or to a subreaper outside the tree.  Its total
 *     at its last read is added: short by what it ran after that read;
 *   - a child of the sampler (the command, an adopted orphan) is a zombie
 *     when the sampler reads it last (the command at the last sample, an
 *     orphan in reaping(), called before the sampler waits for it): its
 *     CPU time is then wait()'s rusage, exact to the microsecond
 *     (zombie_rusage_us()), and an orphan's figures are added whole;
 *   - a member whose parent is a live member that did not take its time
 *     (the parent ignores SIGCHLD, so the kernel reaps the child and drops
 *     its times): seen as the parent's cutime + cstime staying below its
 *     floor by more than their truncation (2 ticks); the rest is added.  Vanished children whose parent vanished
 *     too are counted at the nearest live (or reaping()-read) ancestor.
 * Each clock-tick field is truncated by the kernel separately, so a read
 * lags the exact time by less than 2 ticks for utime + stime and 2 for
 * cutime + cstime; an interval's value is exact to that.  The counter
 * never goes down: each rule above adds at least what left.
 *
 * Process I/O (proc.read_bytes, proc.write_bytes, /proc/<pid>/io) is
 * the sum over live members plus departed bytes, by the same rules: io
 * counts exited threads and reaped children too.  A vanished child's bytes
 * are taken as moved into its live parent when its CPU time was, as far as
 * the parent's bytes grew (settle()).
 *
 * Open descriptors (proc.fds): the size of /proc/<pid>/fd is the count on
 * procfs since Linux 6.2; elsewhere (older kernels: 0; a captured tree on
 * an ordinary filesystem: the directory's block size) the directory is
 * listed.
 *
 * A value that cannot be real is refused, noted once in the log, and its
 * column left empty for that sample (the bounds: node_limits()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/log.h"
#include "perfmon/mem.h"
#include "perfmon/parse.h"
#include "perfmon/proctree.h"
#include "perfmon/source.h"
#include "perfmon/vec.h"

/* STEPD: a slurmstepd of the followed job; not a member, its children are. */
enum { UNKNOWN = 0, TREE = 1, OTHER = 2, STEPD = 3 };

enum { F_STAT, F_SCHED, F_STATM, F_IO, F_SMAPS, F_FDDIR, NFILES };
static const char *const file_name[NFILES] = {"stat", "schedstat",    "statm",
                                              "io",   "smaps_rollup", "fd"};

/* Descriptors of members' files stay open between samples (a re-read is
 * one pread instead of open+read+read+close), for at most this many
 * members, so a huge tree cannot exhaust the descriptor limit. */
#define MAX_KEPT 256

typedef struct pent {
    int32_t pid;  /* 0 = empty slot */
    int32_t ppid; /* at the last read: it changes when orphaned */
    uint8_t state;
    uint8_t carried; /* copied into the next table */
    uint8_t recheck; /* verdict provisional: classify afresh at the next listing */
    uint8_t seen;    /* read at least once: the counters below are valid */
    uint8_t have_io;
    uint8_t sink;   /* collects vanished children in this sample (settle()) */
    uint32_t seq;   /* the sample in which it was last read */
    int fd[NFILES]; /* kept descriptors, -1 when closed */
    uint64_t start; /* starttime (field 22): a reused pid has another */
    /* At the last read, in microseconds: the member's CPU time as counted
     * (own + max(ch, ch_floor), or a zombie child's exact rusage, never
     * less than at the read before), its own time (utime+stime, or a
     * zombie's exact time on the CPU), and cutime+cstime then and at the
     * read before (0 before the first).  ch_floor: what its reaped
     * children are known to have brought to cutime+cstime (settle()). */
    uint64_t cpu, own, ch, ch_prev, ch_floor;
    uint64_t rb, wb, rb_prev, wb_prev; /* io read_bytes, write_bytes, likewise */
    uint64_t in_cpu, in_rb, in_wb;     /* vanished under it, this sample */
    /* Gauges of the last full read. */
    uint64_t threads, vsize, rss_pages, shared, nfd;
    uint8_t have_shared, have_fds;
    /* cached: the last full read is reusable while the member, single-
     * threaded, has not run since: its schedstat (time on the CPU, ns, and
     * timeslices) still says sched_ns, sched_cnt.  Re-read at least every
     * STAT_REFRESH samples for RSS, which reclaim lowers while a process
     * sleeps.  (A multithreaded member is read in full every sample: its
     * schedstat is the main thread's only.) */
    uint8_t cached, stat_age;
    uint64_t sched_ns, sched_cnt;
} pent;

#define STAT_REFRESH 10

/* A member gone since the last sample, with its figures at its last read.
 * final: read as a zombie just before the sampler reaped it (reaping());
 * ch0, rb0, wb0 are then the figures of the read before. */
typedef struct gone {
    int32_t pid, ppid;
    uint8_t final, have_io;
    uint64_t cpu, ch, rb, wb;
    uint64_t ch0, rb0, wb0, floor0;
    uint64_t in_cpu, in_rb, in_wb;
} gone;

typedef struct ptab {
    pent *e;
    size_t cap; /* power of two */
} ptab;

/* Impossible-value kinds, each noted once. */
enum { B_CPU, B_RSS, B_SHARED, B_VM, B_THREADS, B_IO, B_FDS, B_PSS, NBAD };
static const char *const bad_col[NBAD] = {"proc.cpu_time and proc.cpu_percent",
                                          "proc.rss and proc.mem_percent",
                                          "proc.shared",
                                          "proc.vms",
                                          "proc.threads",
                                          "proc.read_bytes and proc.write_bytes",
                                          "proc.fds",
                                          "proc.pss, proc.uss and proc.swap"};

typedef struct tree_state {
    ptab tab, next;
    int32_t *pending;
    size_t npending, cap_pending;
    DIR *proc;
    int col_count, col_threads, col_fds, col_cpu, col_pct, col_rss, col_vms, col_shared;
    int col_pss, col_uss, col_swap, col_mempct, col_rb, col_wb;
    /* The last two samples with a CPU figure: microseconds and times. */
    uint64_t prev_cpu, prev2_cpu;
    int64_t prev_mono, prev2_mono;
    int have_prev, have_prev2;
    uint64_t mem_total;
    int warned_io, warned_smaps, warned_fd;
    int smaps_ok, io_ok;
    int procfs;       /* the /proc root is procfs (not a captured copy) */
    size_t kept;      /* members with kept descriptors */
    int32_t *listing; /* pids of the last /proc listing */
    size_t cap_listing;
    int64_t pss_every_ns; /* smaps_rollup refresh period */
    int64_t pss_last_ns;  /* 0: not read yet */
    int pss_now;          /* read smaps_rollup in this sample */
    uint64_t pss_rss;     /* the tree's RSS in the sample that last read it */
    int fd_loadavg;       /* /proc/loadavg, for the last pid created */
    int64_t last_pid;     /* at the last listing; -1 = list next time */
    int npending_unknown; /* pids left undecided: list again */
    uint32_t seq;         /* samples read so far */
    /* Members gone since the last sample, and the live members that
     * collect them (settle()). */
    gone *gone;
    size_t ngone, cap_gone;
    pent **sinks;
    size_t nsinks, cap_sinks;
    /* What departed members took with them (see the top of the file);
     * CPU times are kept in microseconds. */
    uint64_t dep_cpu, dep_rb, dep_wb;
    uint64_t us_per_tick; /* 1e6 / USER_HZ when exact, else 0 */
    int32_t self;         /* the sampler's pid */
    /* Bounds of a real value (check_*()), from the node's uptime, CPUs and
     * memory; warned[k] once a kind was refused. */
    double uptime_s; /* at open; 100 years when unknown */
    int64_t open_mono_ns;
    uint64_t ncpus;
    uint64_t cpu_max, io_max, mem_max_pages;
    uint8_t warned[NBAD];
} tree_state;

static size_t hash_pid(int32_t pid, size_t cap)
{
    return ((uint32_t)pid * 2654435761u) & (cap - 1);
}

static pent *tab_find(const ptab *t, int32_t pid)
{
    if (!t->cap)
        return NULL;
    for (size_t i = hash_pid(pid, t->cap);; i = (i + 1) & (t->cap - 1)) {
        if (t->e[i].pid == pid)
            return &t->e[i];
        if (t->e[i].pid == 0)
            return NULL;
    }
}

static pent *tab_insert(ptab *t, int32_t pid)
{
    for (size_t i = hash_pid(pid, t->cap);; i = (i + 1) & (t->cap - 1)) {
        if (t->e[i].pid == pid || t->e[i].pid == 0) {
            if (t->e[i].pid == 0)
                for (int k = 0; k < NFILES; k++)
                    t->e[i].fd[k] = -1;
            t->e[i].pid = pid;
            return &t->e[i];
        }
    }
}

static void close_files(tree_state *st, pent *e)
{
    int had = 0;
    for (int k = 0; k < NFILES; k++) {
        had |= e->fd[k] >= 0;
        pm_close_kept(&e->fd[k]);
    }
    if (had && st->kept)
        st->kept--;
}

static int push_gone(tree_state *st, const gone *g)
{
    if (PM_VEC_RESERVE(st->gone, st->cap_gone, st->ngone + 1, 64) != 0)
        return -1;
    st->gone[st->ngone++] = *g;
    return 0;
}

/* A member is gone (its stat no longer reads, or its pid now names
 * another process): keep its last figures for settle(), forget the pid. */
static void vanish(tree_state *st, pent *e)
{
    if (e->state == TREE && e->seen) {
        gone g;
        memset(&g, 0, sizeof g);
        g.pid = e->pid;
        g.ppid = e->ppid;
        g.have_io = e->have_io;
        g.cpu = e->cpu;
        g.ch = e->ch;
        g.rb = e->rb;
        g.wb = e->wb;
        if (push_gone(st, &g) != 0) {
            /* Out of memory: count it as departed outright. */
            st->dep_cpu += e->cpu;
            st->dep_rb += e->rb;
            st->dep_wb += e->wb;
        }
    }
    close_files(st, e);
    e->state = UNKNOWN;
    e->seen = e->cached = 0;
    e->cpu = e->own = e->ch = e->ch_prev = e->ch_floor = 0;
}

static int is_root(const pm_sctx *ctx, int32_t pid)
{
    for (size_t i = 0; i < ctx->nroots; i++)
        if (ctx->roots[i] == pid)
            return 1;
    return 0;
}

/* Fields 2 (comm, into comm[cap]) and 4 (ppid) of /proc/<pid>/stat; the
 * name may contain spaces and parentheses, so it ends at the last ')'. */
static int read_ppid(int procfd, int32_t pid, int32_t *ppid, char *comm, size_t cap)
{
    char path[32], buf[1024];
    snprintf(path, sizeof path, "%d/stat", (int)pid);
    if (pm_read_small(procfd, path, buf, sizeof buf, NULL) <= 0)
        return -1;
    const char *p = strrchr(buf, ')');
    const char *open = strchr(buf, '(');
    if (!p || p[1] != ' ' || !open || open > p)
        return -1;
    size_t len = (size_t)(p - open - 1);
    if (len >= cap)
        len = cap - 1;
    memcpy(comm, open + 1, len);
    comm[len] = '\0';
    p += 2;
    if (!*p || p[1] != ' ') /* state letter */
        return -1;
    p += 2;
    int64_t v;
    if (pm_scan_i64(&p, &v) != 0 || v < 0 || v > INT32_MAX)
        return -1;
    *ppid = (int32_t)v;
    return 0;
}

/* Is pid (named comm) a step daemon of the followed SLURM job, other than
 * the sampler's own step?  1 yes, 0 no, -1 not yet known: a slurmstepd
 * that has not yet set its title (it does so early, before starting any
 * task), to be looked at again. */
static int slurm_stepd(const pm_sctx *ctx, int32_t pid, const char *comm)
{
    static const char pre[] = "slurmstepd: [";
    if (strcmp(comm, "slurmstepd") != 0)
        return 0;
    char path[32], buf[160];
    snprintf(path, sizeof path, "%d/cmdline", (int)pid);
    if (pm_read_small(ctx->proc_fd, path, buf, sizeof buf, NULL) <= 0)
        return 0;
    if (strncmp(buf, pre, sizeof pre - 1) != 0)
        return -1;
    const char *job = buf + sizeof pre - 1;
    const char *dot = strchr(job, '.');
    const char *end = dot ? strchr(dot, ']') : NULL;
    if (!end)
        return 0;
    size_t jl = (size_t)(dot - job), sl = (size_t)(end - dot - 1);
    if (jl != strlen(ctx->slurm_job) || memcmp(job, ctx->slurm_job, jl) != 0)
        return 0;
    if (ctx->slurm_step && sl == strlen(ctx->slurm_step) &&
        memcmp(dot + 1, ctx->slurm_step, sl) == 0)
        return 0;
    return 1;
}

static int proc_uid_ok(const pm_sctx *ctx, int32_t pid)
{
    char path[32];
    struct stat st;
    snprintf(path, sizeof path, "%d", (int)pid);
    if (fstatat(ctx->proc_fd, path, &st, 0) != 0)
        return 0;
    return st.st_uid == ctx->uid;
}

static int64_t mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* What no real value can exceed, by a wide margin (a factor 2 and a
 * minute on top of the node's figures), so that only garbage is refused:
 *   - a CPU-time field (ticks): uptime x CPUs, the time all CPUs together
 *     have run since boot (a child's time reaches its parent's cutime
 *     only once it has run, on the same CPUs);
 *   - resident or shared pages: the node's memory (MemTotal);
 *   - virtual size: 2^57 bytes, the largest user address space (5-level
 *     paging); also the memory bound when MemTotal is unknown;
 *   - I/O bytes: 2 TiB per second of uptime, beyond any node's storage
 *     and page-cache bandwidth;
 *   - threads: 2^22 (PID_MAX_LIMIT); descriptors: 2^31 (fs.nr_open).
 * Uptime comes from <proc>/uptime (100 years when absent: a captured tree
 * may lack it), CPUs from the cpuN lines of <proc>/stat or the running
 * system, whichever is more. */
#define MAX_VM ((uint64_t)1 << 57)
#define MAX_THREADS ((uint64_t)1 << 22)
#define MAX_FDS ((uint64_t)1 << 31)
static void node_limits(tree_state *st, const pm_sctx *ctx)
{
    char buf[256];
    double up;
    char *f[1];
    st->uptime_s = 100.0 * 365.25 * 86400;
    if (pm_read_small(ctx->proc_fd, "uptime", buf, sizeof buf, NULL) > 0 &&
        pm_split_fields(buf, f, 1) == 1 && pm_parse_double(f[0], &up) == 0 && up >= 0 &&
        up < st->uptime_s)
        st->uptime_s = up;
    st->open_mono_ns = mono_now();
    uint64_t n = 0;
    char *text = NULL;
    size_t cap = 0;
    int fd = -1;
    if (pm_pread_grow(&fd, ctx->proc_fd, "stat", &text, &cap, 1 << 24) > 0) {
        char *cur = text, *line;
        while ((line = pm_next_line(&cur)) != NULL)
            if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9')
                n++;
    }
    free(text);
    pm_close_kept(&fd);
    long sys = sysconf(_SC_NPROCESSORS_CONF);
    if (sys > 0 && (uint64_t)sys > n)
        n = (uint64_t)sys;
    st->ncpus = n ? n : 1;
    uint64_t mem = st->mem_total ? st->mem_total * 2 : MAX_VM;
    st->mem_max_pages = mem / (uint64_t)(ctx->page_size > 0 ? ctx->page_size : 4096);
}

/* Refresh the time-dependent bounds for this sample. */
static void time_limits(tree_state *st, const pm_sctx *ctx)
{
    double up = st->uptime_s + (double)(mono_now() - st->open_mono_ns) / 1e9 + 60.0;
    double cpu = 2.0 * up * (double)st->ncpus * (double)ctx->clk_tck;
    double io = up * 2.0 * 1099511627776.0;
    st->cpu_max = cpu < 9e18 ? (uint64_t)cpu : (uint64_t)9e18;
    st->io_max = io < 9e18 ? (uint64_t)io : (uint64_t)9e18;
}

/* Refuse value v of kind k above max: note it once, 0 when it is fine. */
static int refuse(tree_state *st, const pm_sctx *ctx, int k, int32_t pid, const char *file,
                  const char *what, uint64_t v, uint64_t max)
{
    if (v <= max)
        return 0;
    if (!st->warned[k]) {
        st->warned[k] = 1;
        pm_log(PM_LOG_WARN,
               "proctree: %s/%d/%s: %s %llu is impossible (more than %llu); %s "
               "not recorded in the samples where such a value is read",
               ctx->proc_root, (int)pid, file, what, (unsigned long long)v, (unsigned long long)max,
               bad_col[k]);
    }
    return 1;
}

static int tree_open(const pm_sctx *ctx, pm_schema *s, void **state, pm_error *err)
{
    if (ctx->nroots == 0 && !ctx->slurm_job)
        return pm_error_set(err, PM_ENOENT, "no process to follow (system-wide sampling)");
    tree_state *st = calloc(1, sizeof *st);
    if (!st)
        return pm_error_set(err, PM_ENOMEM, "proctree: out of memory");
    int fd = openat(ctx->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    st->proc = fd >= 0 ? fdopendir(fd) : NULL;
    if (!st->proc) {
        if (fd >= 0)
            close(fd);
        free(st);
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot list", ctx->proc_root);
    }
    char buf[4096];
    if (pm_read_small(ctx->proc_fd, "meminfo", buf, sizeof buf, NULL) > 0 &&
        pm_kv_u64(buf, "MemTotal", &st->mem_total) == 0)
        st->mem_total *= 1024;
    node_limits(st, ctx);
    st->self = (int32_t)getpid();
    if (ctx->clk_tck > 0 && 1000000 % ctx->clk_tck == 0)
        st->us_per_tick = (uint64_t)(1000000 / ctx->clk_tck);
    st->smaps_ok = st->io_ok = 1;
    st->pss_every_ns = ctx->pss_interval_ns;
    st->fd_loadavg = -1;
    st->last_pid = -1;
    struct statfs sfs;
    st->procfs = fstatfs(ctx->proc_fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
#define COL(var, name, unit, kind, type) \
    st->var = pm_schema_add(s, name, unit, kind, type, "proc", 0)
    COL(col_count, "proc.count", "1", PM_GAUGE, PM_U64);
    COL(col_threads, "proc.threads", "1", PM_GAUGE, PM_U64);
    COL(col_fds, "proc.fds", "1", PM_GAUGE, PM_U64);
    COL(col_cpu, "proc.cpu_time", "s", PM_COUNTER, PM_F64);
    COL(col_pct, "proc.cpu_percent", "%", PM_GAUGE, PM_F64);
    COL(col_rss, "proc.rss", "B", PM_GAUGE, PM_U64);
    COL(col_vms, "proc.vms", "B", PM_GAUGE, PM_U64);
    COL(col_shared, "proc.shared", "B", PM_GAUGE, PM_U64);
    COL(col_pss, "proc.pss", "B", PM_GAUGE, PM_U64);
    COL(col_uss, "proc.uss", "B", PM_GAUGE, PM_U64);
    COL(col_swap, "proc.swap", "B", PM_GAUGE, PM_U64);
    COL(col_mempct, "proc.mem_percent", "%", PM_GAUGE, PM_F64);
    COL(col_rb, "proc.read_bytes", "B", PM_COUNTER, PM_U64);
    COL(col_wb, "proc.write_bytes", "B", PM_COUNTER, PM_U64);
#undef COL
    if (st->col_wb < 0) {
        closedir(st->proc);
        free(st);
        return pm_error_set(err, PM_ENOMEM, "proctree: cannot add columns");
    }
    *state = st;
    return 0;
}

static int grow_tab(ptab *t, size_t need)
{
    size_t cap = 256;
    while (cap < need * 2)
        cap *= 2;
    if (cap != t->cap) {
        pent *e = pm_realloc_array(t->e, cap, sizeof *e);
        if (!e)
            return -1;
        t->e = e;
        t->cap = cap;
    }
    memset(t->e, 0, t->cap * sizeof *t->e);
    return 0;
}

static int push_pending(tree_state *st, int32_t pid)
{
    if (PM_VEC_RESERVE(st->pending, st->cap_pending, st->npending + 1, 256) != 0)
        return -1;
    st->pending[st->npending++] = pid;
    return 0;
}

/* Rebuild the pid table from a fresh listing of /proc and classify the
 * pids seen for the first time. */
static int discover(tree_state *st, const pm_sctx *ctx)
{
    /* One pass over /proc collects the pids; then the table is sized. */
    const int32_t self = (int32_t)getpid();
    struct dirent *e;
    size_t count = 0;
    rewinddir(st->proc);
    while ((e = readdir(st->proc)) != NULL) {
        uint64_t v;
        if (e->d_name[0] < '1' || e->d_name[0] > '9' || pm_parse_u64(e->d_name, &v) != 0 ||
            v > INT32_MAX)
            continue;
        if (PM_VEC_RESERVE(st->listing, st->cap_listing, count + 1, 1024) != 0)
            return -ENOMEM;
        st->listing[count++] = (int32_t)v;
    }
    if (grow_tab(&st->next, count + 16) != 0)
        return -ENOMEM;
    st->npending = 0;
    for (size_t li = 0; li < count; li++) {
        int32_t pid = st->listing[li];
        pent *old = tab_find(&st->tab, pid);
        pent *n = tab_insert(&st->next, pid);
        if (old && old->state != UNKNOWN && !old->recheck) {
            *n = *old;
            n->carried = 0;
            old->carried = 1;
            continue;
        }
        if (old)
            close_files(st, old);
        n->state = UNKNOWN;
        n->recheck = 0;
        char comm[32];
        if (read_ppid(ctx->proc_fd, pid, &n->ppid, comm, sizeof comm) != 0)
            continue; /* vanished or unreadable: stays UNKNOWN, decided next time */
        if (ctx->slurm_job) {
            int v = pid == self ? 0 : slurm_stepd(ctx, pid, comm);
            if (v != 0 || pid == self) {
                n->state = v > 0 ? STEPD : OTHER;
                n->recheck = v < 0;
                continue;
            }
        }
        if (push_pending(st, pid) != 0)
            return -ENOMEM;
    }
    /* Resolve parents before children; parents may be pending too. */
    int changed = 1;
    while (changed) {
        changed = 0;
        for (size_t i = 0; i < st->npending; i++) {
            pent *n = tab_find(&st->next, st->pending[i]);
            if (!n || n->state != UNKNOWN)
                continue;
            if (is_root(ctx, n->pid) || (ctx->subreaper && n->ppid == self)) {
                n->state = TREE;
                changed = 1;
                continue;
            }
            pent *par = n->ppid > 0 ? tab_find(&st->next, n->ppid) : NULL;
            if (par && par->state == UNKNOWN)
                continue;
            if (par && (par->state == TREE || par->state == STEPD) &&
                (ctx->any_uid || proc_uid_ok(ctx, n->pid)))
                n->state = TREE;
            else
                n->state = OTHER;
            changed = 1;
        }
    }
    st->npending_unknown = 0;
    for (size_t i = 0; i < st->next.cap; i++)
        if (st->next.e[i].pid && (st->next.e[i].state == UNKNOWN || st->next.e[i].recheck))
            st->npending_unknown = 1;
    /* Whatever is left waits on an unreadable parent: not ours. */
    for (size_t i = 0; i < st->npending; i++) {
        pent *n = tab_find(&st->next, st->pending[i]);
        if (n && n->state == UNKNOWN)
            n->state = OTHER;
    }
    /* Processes that are gone: release their descriptors. */
    for (size_t i = 0; i < st->tab.cap; i++) {
        pent *o = &st->tab.e[i];
        if (o->pid && !o->carried)
            vanish(st, o);
    }
    ptab tmp = st->tab;
    st->tab = st->next;
    st->next = tmp;
    return 0;
}

typedef struct totals {
    uint64_t count, threads, fds, rss, vms, shared, pss, uss, swap, rb, wb, cpu;
    int have_pss, have_io, have_fds;
    uint8_t bad[NBAD]; /* an impossible value was met: the column stays empty */
} totals;

/* Read one of a member's files, through a kept descriptor when allowed. */
static ssize_t member_file(tree_state *st, const pm_sctx *ctx, pent *e, int k, char *buf,
                           size_t cap)
{
    char path[48];
    snprintf(path, sizeof path, "%d/%s", (int)e->pid, file_name[k]);
    if (k == F_STAT && e->fd[F_STAT] < 0 && st->kept < MAX_KEPT) {
        ssize_t r = pm_pread_kept(&e->fd[F_STAT], ctx->proc_fd, path, buf, cap, NULL);
        if (e->fd[F_STAT] >= 0)
            st->kept++;
        return r;
    }
    /* A member whose stat is kept keeps its other files too. */
    if (e->fd[F_STAT] >= 0)
        return pm_pread_kept(&e->fd[k], ctx->proc_fd, path, buf, cap, NULL);
    return pm_read_small(ctx->proc_fd, path, buf, cap, NULL);
}

/* Number of open descriptors.  On procfs since Linux 6.2 the size of
 * /proc/<pid>/fd says it (older kernels report 0); anywhere else, as in a
 * captured tree on an ordinary filesystem whose directories have a block
 * size, the size means nothing and the directory is listed. */
static int count_fds(tree_state *st, const pm_sctx *ctx, pent *e, uint64_t *out)
{
    char path[48];
    snprintf(path, sizeof path, "%d/fd", (int)e->pid);
    if (st->procfs) {
        struct stat sb;
        if (e->fd[F_STAT] >= 0 && e->fd[F_FDDIR] < 0)
            e->fd[F_FDDIR] = openat(ctx->proc_fd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int rc =
            e->fd[F_FDDIR] >= 0 ? fstat(e->fd[F_FDDIR], &sb) : fstatat(ctx->proc_fd, path, &sb, 0);
        if (rc != 0)
            goto fail;
        if (sb.st_size > 0) {
            *out = (uint64_t)sb.st_size;
            return 0;
        }
    }
    int dfd = openat(ctx->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        goto fail;
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        goto fail;
    }
    struct dirent *de;
    uint64_t nfd = 0;
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.')
            nfd++;
    closedir(d);
    *out = nfd;
    return 0;
fail:
    if (errno != ENOENT && errno != ESRCH && !st->warned_fd) {
        st->warned_fd = 1;
        pm_log(PM_LOG_INFO, "proctree: %s/%s not readable (%s); open fds not recorded",
               ctx->proc_root, path, strerror(errno));
    }
    return -1;
}

/* The fields of /proc/<pid>/stat used here. */
typedef struct pstat {
    char state;
    int32_t ppid;
    uint64_t ut, stt, threads, start, vsize, rss;
    int64_t cut, cst;
} pstat;

/* Parse a stat line; the name (field 2) may hold spaces and parentheses,
 * so the fields start after the last ')'.  proc(5) fields from 3 (state)
 * on: f[0] is field 3, so field N is f[N - 3]: ppid 4, utime 14, stime 15,
 * cutime 16, cstime 17, num_threads 20, starttime 22, vsize 23 (bytes),
 * rss 24 (pages).  0, or -1 when malformed. */
static int parse_stat(char *buf, pstat *ps)
{
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    char *f[24];
    int64_t ppid;
    if (pm_split_fields(p + 1, f, 24) < 22 || pm_parse_i64(f[1], &ppid) != 0 || ppid < 0 ||
        ppid > INT32_MAX || pm_parse_u64(f[11], &ps->ut) || pm_parse_u64(f[12], &ps->stt) ||
        pm_parse_i64(f[13], &ps->cut) || pm_parse_i64(f[14], &ps->cst) ||
        pm_parse_u64(f[17], &ps->threads) || pm_parse_u64(f[19], &ps->start) ||
        pm_parse_u64(f[20], &ps->vsize) || pm_parse_u64(f[21], &ps->rss))
        return -1;
    ps->ppid = (int32_t)ppid;
    ps->state = f[0][0];
    return 0;
}

static uint64_t ticks_us(const tree_state *st, const pm_sctx *ctx, uint64_t ticks)
{
    if (st->us_per_tick)
        return ticks * st->us_per_tick;
    return (uint64_t)((long double)ticks * 1e6L / (long double)ctx->clk_tck);
}

/* A zombie child of the sampler (the command at the last sample, an
 * adopted orphan before it is reaped): its exact CPU time, self and reaped
 * children, in microseconds, as wait() would report it (waitid with
 * WNOWAIT fills the rusage without reaping).  0 when not such a child. */
static uint64_t zombie_rusage_us(const tree_state *st, const pm_sctx *ctx, int32_t pid,
                                 const pstat *ps)
{
    if (!ctx->subreaper || ps->ppid != st->self || ps->state != 'Z')
        return 0;
    siginfo_t si;
    struct rusage ru;
    memset(&si, 0, sizeof si);
    memset(&ru, 0, sizeof ru);
    if (syscall(SYS_waitid, P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT, &ru) != 0 ||
        si.si_pid != pid)
        return 0;
    return (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec +
           (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
}

/* A member's own CPU time (utime + stime), its children's (cutime +
 * cstime), in us, from a stat reading, and its exact total when it is a
 * zombie child of the sampler (else 0). */
static void cpu_us(const tree_state *st, const pm_sctx *ctx, int32_t pid, const pstat *ps,
                   uint64_t *own, uint64_t *ch, uint64_t *ru)
{
    *ch = ticks_us(st, ctx, (uint64_t)ps->cut + (uint64_t)ps->cst);
    *own = ticks_us(st, ctx, ps->ut + ps->stt);
    *ru = zombie_rusage_us(st, ctx, pid, ps);
}

/* Set a member's CPU figures from a read of the same process: own and
 * cutime + cstime (ch), and ru, its exact total when known (else 0).
 * What it counts is own + the larger of ch and what its reaped children
 * are known to have brought (ch_floor, settle()), or ru, and never less
 * than before. */
static void set_cpu(pent *e, uint64_t own, uint64_t ch, uint64_t ru)
{
    if (e->seen && own < e->own)
        own = e->own;
    e->own = own;
    e->ch = ch;
    uint64_t c = own + (ch > e->ch_floor ? ch : e->ch_floor);
    if (ru > c)
        c = ru;
    if (!e->seen || c > e->cpu)
        e->cpu = c;
}

/* Are the CPU-time fields real?  cutime and cstime are signed in the
 * kernel's format but never negative. */
static int cpu_ok(tree_state *st, const pm_sctx *ctx, int32_t pid, const pstat *ps)
{
    const char *f = "stat";
    return !(refuse(st, ctx, B_CPU, pid, f, "utime (ticks)", ps->ut, st->cpu_max) ||
             refuse(st, ctx, B_CPU, pid, f, "stime (ticks)", ps->stt, st->cpu_max) ||
             refuse(st, ctx, B_CPU, pid, f,
                    ps->cut < 0 ? "cutime (negative, read as unsigned)" : "cutime (ticks)",
                    (uint64_t)ps->cut, st->cpu_max) ||
             refuse(st, ctx, B_CPU, pid, f,
                    ps->cst < 0 ? "cstime (negative, read as unsigned)" : "cstime (ticks)",
                    (uint64_t)ps->cst, st->cpu_max));
}

/* read_bytes and write_bytes of /proc/<pid>/io: 0, -1 when unreadable
 * (r holds the read's result), -2 when impossible. */
static int read_io(tree_state *st, const pm_sctx *ctx, pent *e, uint64_t *rb, uint64_t *wb,
                   ssize_t *r)
{
    char buf[1024];
    *r = member_file(st, ctx, e, F_IO, buf, sizeof buf);
    if (*r <= 0 || pm_kv_u64(buf, "read_bytes", rb) != 0 || pm_kv_u64(buf, "write_bytes", wb) != 0)
        return -1;
    if (refuse(st, ctx, B_IO, e->pid, "io", "read_bytes", *rb, st->io_max) ||
        refuse(st, ctx, B_IO, e->pid, "io", "write_bytes", *wb, st->io_max))
        return -2;
    return 0;
}

/* The only thread's schedstat (proc(5): /proc/<pid>/schedstat): time on
 * the CPU (ns) and timeslices run.  0, or -1 when unreadable or all zero
 * (a kernel without sched_info reports "0 0 0"). */
static int read_sched(tree_state *st, const pm_sctx *ctx, pent *e, uint64_t *ns, uint64_t *cnt)
{
    char buf[128];
    char *f[3];
    if (member_file(st, ctx, e, F_SCHED, buf, sizeof buf) <= 0 || pm_split_fields(buf, f, 3) != 3 ||
        pm_parse_u64(f[0], ns) != 0 || pm_parse_u64(f[2], cnt) != 0 || (*ns == 0 && *cnt == 0))
        return -1;
    return 0;
}

/* Add a member's figures (as last read) to the totals. */
static void add_member(const pm_sctx *ctx, const pent *e, totals *t)
{
    t->count++;
    t->threads += e->threads;
    t->vms += e->vsize;
    t->rss += e->rss_pages * (uint64_t)ctx->page_size;
    t->cpu += e->cpu;
    if (e->have_shared)
        t->shared += e->shared;
    if (e->have_io) {
        t->rb += e->rb;
        t->wb += e->wb;
        t->have_io = 1;
    }
    if (e->have_fds) {
        t->fds += e->nfd;
        t->have_fds = 1;
    }
}

static void read_pss(tree_state *st, const pm_sctx *ctx, pent *e, totals *t)
{
    char buf[4096];
    ssize_t r = member_file(st, ctx, e, F_SMAPS, buf, sizeof buf);
    uint64_t pss, pc = 0, pd = 0, sw = 0;
    if (r > 0 && pm_kv_u64(buf, "Pss", &pss) == 0) {
        pm_kv_u64(buf, "Private_Clean", &pc);
        pm_kv_u64(buf, "Private_Dirty", &pd);
        pm_kv_u64(buf, "Swap", &sw);
        uint64_t kb_max = st->mem_max_pages * (uint64_t)ctx->page_size / 1024;
        if (refuse(st, ctx, B_PSS, e->pid, "smaps_rollup", "Pss (kB)", pss, kb_max) ||
            refuse(st, ctx, B_PSS, e->pid, "smaps_rollup", "Private_Clean (kB)", pc, kb_max) ||
            refuse(st, ctx, B_PSS, e->pid, "smaps_rollup", "Private_Dirty (kB)", pd, kb_max) ||
            refuse(st, ctx, B_PSS, e->pid, "smaps_rollup", "Swap (kB)", sw, MAX_VM / 1024))
            t->bad[B_PSS] = 1;
        t->pss += pss * 1024;
        t->uss += (pc + pd) * 1024;
        t->swap += sw * 1024;
        t->have_pss = 1;
    } else if (r < 0 && r != -ENOENT && r != -ESRCH && !st->warned_smaps) {
        st->warned_smaps = 1;
        pm_log(PM_LOG_INFO,
               "proctree: %s/%d/smaps_rollup not readable (%s); PSS/USS not "
               "recorded",
               ctx->proc_root, (int)e->pid, strerror((int)-r));
    }
}

static void read_member(tree_state *st, const pm_sctx *ctx, pent *e, totals *t)
{
    char buf[4096];
    pstat ps;
    /* A single-threaded member whose thread has not been on a CPU since
     * the last full read cannot have changed its times, children's times
     * (reaping takes a wait() call), I/O, threads or descriptors: one
     * schedstat read stands for all (see pent). */
    uint64_t sns = 0, scnt = 0;
    int have_sched = (!e->seen || e->threads == 1) && read_sched(st, ctx, e, &sns, &scnt) == 0;
    if (have_sched && e->cached && sns == e->sched_ns && scnt == e->sched_cnt &&
        e->stat_age < STAT_REFRESH) {
        e->stat_age++;
        e->seq = st->seq;
        e->ch_prev = e->ch;
        e->rb_prev = e->rb;
        e->wb_prev = e->wb;
        add_member(ctx, e, t);
        if (st->smaps_ok && st->pss_now)
            read_pss(st, ctx, e, t);
        return;
    }
    if (member_file(st, ctx, e, F_STAT, buf, sizeof buf) <= 0) {
        /* Exited since the listing, or its pid was reused (a kept
         * descriptor then fails): forget it so the next listing
         * classifies the pid afresh. */
        vanish(st, e);
        return;
    }
    if (parse_stat(buf, &ps) != 0)
        return;
    if (e->seen && ps.start != e->start) {
        vanish(st, e); /* the pid names another process now */
        st->last_pid = -1;
        return;
    }
    int bad = 0;
    e->ppid = ps.ppid;
    if (refuse(st, ctx, B_THREADS, e->pid, "stat", "num_threads", ps.threads, MAX_THREADS))
        t->bad[B_THREADS] = bad = 1;
    if (refuse(st, ctx, B_VM, e->pid, "stat", "vsize (bytes)", ps.vsize, MAX_VM))
        t->bad[B_VM] = bad = 1;
    if (refuse(st, ctx, B_RSS, e->pid, "stat", "rss (pages)", ps.rss, st->mem_max_pages))
        t->bad[B_RSS] = bad = 1;
    e->threads = ps.threads;
    e->vsize = ps.vsize;
    e->rss_pages = ps.rss;

    /* CPU: an impossible reading leaves the member's last figures as
     * they were and the tree's point empty. */
    if (cpu_ok(st, ctx, e->pid, &ps)) {
        uint64_t own, ch, ru;
        cpu_us(st, ctx, e->pid, &ps, &own, &ch, &ru);
        /* A zombie's CPU is counted now, when it has been spent, not when
         * its parent reaps it: exactly, by its thread's time on the CPU
         * (schedstat, ns), since utime and stime are each truncated to
         * ticks (a 5 ms process reads 0).  The thread is the leader alone,
         * so for a process that had other threads this is less than its
         * total, and the ticks are kept when they say more. */
        if (ps.state == 'Z' && (have_sched || read_sched(st, ctx, e, &sns, &scnt) == 0)) {
            have_sched = 1;
            if (sns / 1000 > own)
                own = sns / 1000;
        }
        e->ch_prev = e->seen ? e->ch : 0;
        set_cpu(e, own, ch, ru);
        e->start = ps.start;
        e->seen = 1;
    } else {
        t->bad[B_CPU] = bad = 1;
        if (!e->seen)
            e->ch = e->cpu = 0;
        e->ch_prev = e->ch;
    }
    e->seq = st->seq;

    /* statm field 3: resident shared (file-backed + shmem) pages. */
    e->have_shared = 0;
    if (member_file(st, ctx, e, F_STATM, buf, sizeof buf) > 0) {
        const char *q = buf;
        uint64_t sz, res, sh;
        if (pm_scan_u64(&q, &sz) == 0 && pm_scan_u64(&q, &res) == 0 && pm_scan_u64(&q, &sh) == 0) {
            if (refuse(st, ctx, B_SHARED, e->pid, "statm", "shared (pages)", sh,
                       st->mem_max_pages)) {
                t->bad[B_SHARED] = bad = 1;
            } else {
                e->shared = sh * (uint64_t)ctx->page_size;
                e->have_shared = 1;
            }
        }
    }
    e->rb_prev = e->rb;
    e->wb_prev = e->wb;
    if (st->io_ok) {
        uint64_t rb, wb;
        ssize_t r;
        int rc = read_io(st, ctx, e, &rb, &wb, &r);
        if (rc == 0) {
            if (!e->have_io)
                e->rb_prev = e->wb_prev = 0;
            e->rb = rb;
            e->wb = wb;
            e->have_io = 1;
        } else if (rc == -2) {
            t->bad[B_IO] = bad = 1;
        } else if (r < 0 && r != -ENOENT && r != -ESRCH && !st->warned_io) {
            st->warned_io = 1;
            pm_log(PM_LOG_INFO,
                   "proctree: %s/%d/io not readable (%s); process I/O not "
                   "recorded",
                   ctx->proc_root, (int)e->pid, strerror((int)-r));
        }
    }
    e->have_fds = count_fds(st, ctx, e, &e->nfd) == 0;
    if (e->have_fds && refuse(st, ctx, B_FDS, e->pid, "fd", "descriptor count", e->nfd, MAX_FDS))
        t->bad[B_FDS] = bad = 1;
    add_member(ctx, e, t);
    e->sched_ns = sns;
    e->sched_cnt = scnt;
    e->stat_age = 0;
    /* Next time, schedstat (read before this read) decides whether this
     * read still holds. */
    e->cached = !bad && e->seen && e->threads == 1 && have_sched;
    if (st->smaps_ok && st->pss_now)
        read_pss(st, ctx, e, t);
}

/* Children vanished under a collector since its read before (in_*: their
 * figures at their last read, counted until now).  Its cutime + cstime
 * was at least base (the larger of its reading then and its floor) and,
 * if their time reached it, is now at least base + in_cpu, which becomes
 * its floor: the children's time stays counted, once, through the
 * collector, whatever its truncated reading (ch) says, until that reading
 * passes the floor.  A reading short of the floor by more than the
 * truncation of cutime and cstime (under 1 tick each) means their time
 * did not arrive (a parent that ignores SIGCHLD: the kernel reaps its
 * children and drops their times): that much departed with them, and
 * then their bytes too; when their time did arrive, so did their bytes,
 * as far as the collector's io grew (d_rb, d_wb).  Returns the floor. */
static uint64_t settle(tree_state *st, uint64_t base, uint64_t ch, uint64_t in_cpu, uint64_t in_rb,
                       uint64_t in_wb, uint64_t d_rb, uint64_t d_wb)
{
    uint64_t need = base + in_cpu;
    uint64_t slack = 2 * (st->us_per_tick ? st->us_per_tick : 10000);
    uint64_t lost = need > ch + slack ? need - ch - slack : 0;
    st->dep_cpu += lost;
    st->dep_rb += lost ? in_rb : in_rb > d_rb ? in_rb - d_rb : 0;
    st->dep_wb += lost ? in_wb : in_wb > d_wb ? in_wb - d_wb : 0;
    return need - lost;
}

static uint64_t grew(uint64_t before, uint64_t after)
{
    return after > before ? after - before : 0;
}

static gone *gone_find(tree_state *st, int32_t pid)
{
    for (size_t i = 0; i < st->ngone; i++)
        if (st->gone[i].pid == pid)
            return &st->gone[i];
    return NULL;
}

/* Account for the members gone since the last sample (after the live
 * ones were read): each goes to the nearest ancestor, by last known
 * parents, that is alive and read in this sample or was read final by
 * reaping(); without one (its parent was not a member) it departs whole. */
static uint64_t settle_gone(tree_state *st)
{
    uint64_t more = 0; /* what the live collectors count beyond their reads */
    st->nsinks = 0;
    for (size_t i = 0; i < st->ngone; i++) {
        gone *g = &st->gone[i];
        if (g->final)
            continue;
        int32_t p = g->ppid;
        gone *hg = NULL;
        pent *he = NULL;
        for (int depth = 0; depth < 64 && p > 0; depth++) {
            gone *up = gone_find(st, p);
            if (up && up->final) {
                hg = up;
                break;
            }
            if (up) {
                p = up->ppid;
                continue;
            }
            pent *e = tab_find(&st->tab, p);
            if (e && e->state == TREE && e->seen && e->seq == st->seq)
                he = e;
            break;
        }
        uint64_t rb = g->have_io ? g->rb : 0, wb = g->have_io ? g->wb : 0;
        if (hg) {
            hg->in_cpu += g->cpu;
            hg->in_rb += rb;
            hg->in_wb += wb;
        } else if (he) {
            if (!he->sink) {
                if (PM_VEC_RESERVE(st->sinks, st->cap_sinks, st->nsinks + 1, 16) != 0)
                    goto outside;
                st->sinks[st->nsinks++] = he;
                he->sink = 1;
                he->in_cpu = he->in_rb = he->in_wb = 0;
            }
            he->in_cpu += g->cpu;
            he->in_rb += rb;
            he->in_wb += wb;
        } else {
        outside:
            st->dep_cpu += g->cpu;
            st->dep_rb += rb;
            st->dep_wb += wb;
        }
    }
    for (size_t i = 0; i < st->nsinks; i++) {
        pent *e = st->sinks[i];
        uint64_t base = e->ch_prev > e->ch_floor ? e->ch_prev : e->ch_floor;
        uint64_t floor = settle(st, base, e->ch, e->in_cpu, e->in_rb, e->in_wb,
                                e->have_io ? grew(e->rb_prev, e->rb) : 0,
                                e->have_io ? grew(e->wb_prev, e->wb) : 0);
        if (floor > e->ch_floor)
            e->ch_floor = floor;
        uint64_t before = e->cpu;
        set_cpu(e, e->own, e->ch, 0);
        more += e->cpu - before;
        e->sink = 0;
    }
    /* A zombie the sampler reaps counts its exact rusage (tree_reaping()),
     * which holds what reached it; only a loss is added. */
    for (size_t i = 0; i < st->ngone; i++) {
        gone *g = &st->gone[i];
        if (g->final && (g->in_cpu || g->in_rb || g->in_wb))
            (void)settle(st, g->ch0 > g->floor0 ? g->ch0 : g->floor0, g->ch, g->in_cpu, g->in_rb,
                         g->in_wb, grew(g->rb0, g->rb), grew(g->wb0, g->wb));
    }
    st->ngone = 0;
    return more;
}

/* pid, a child of the sampler (the command, or an orphan of the tree it
 * adopted as subreaper), is a zombie about to be reaped: read its final
 * figures, which would be lost with it. */
static void tree_reaping(void *state, const pm_sctx *ctx, pid_t pid)
{
    tree_state *st = state;
    if (!st || pid <= 0 || pid > INT32_MAX)
        return;
    pent *e = tab_find(&st->tab, (int32_t)pid);
    pent tmp;
    if (!e || e->state != TREE) {
        /* Not seen as a member yet: born since the last listing.  All the
         * sampler adopts descends from its command, so it is one. */
        memset(&tmp, 0, sizeof tmp);
        tmp.pid = (int32_t)pid;
        for (int k = 0; k < NFILES; k++)
            tmp.fd[k] = -1;
        e = &tmp;
    }
    char buf[4096];
    pstat ps;
    time_limits(st, ctx);
    if (member_file(st, ctx, e, F_STAT, buf, sizeof buf) <= 0 || parse_stat(buf, &ps) != 0 ||
        (e->seen && ps.start != e->start) || !cpu_ok(st, ctx, e->pid, &ps)) {
        vanish(st, e); /* counted by its last figures, if any */
        return;
    }
    gone g;
    memset(&g, 0, sizeof g);
    g.pid = e->pid;
    g.ppid = ps.ppid;
    g.final = 1;
    uint64_t own, ru;
    cpu_us(st, ctx, e->pid, &ps, &own, &g.ch, &ru);
    g.ch0 = e->seen ? e->ch : 0;
    if (g.ch0 > g.ch)
        g.ch0 = g.ch;
    g.floor0 = e->seen ? e->ch_floor : 0;
    set_cpu(e, own, g.ch, ru);
    g.cpu = e->cpu;
    uint64_t rb, wb;
    ssize_t r;
    if (st->io_ok && read_io(st, ctx, e, &rb, &wb, &r) == 0) {
        g.have_io = 1;
        g.rb = rb;
        g.wb = wb;
        g.rb0 = e->have_io && e->rb <= rb ? e->rb : 0;
        g.wb0 = e->have_io && e->wb <= wb ? e->wb : 0;
    } else if (e->have_io) {
        g.rb = g.rb0 = e->rb;
        g.wb = g.wb0 = e->wb;
    }
    if (push_gone(st, &g) != 0) {
        vanish(st, e);
        return;
    }
    st->dep_cpu += g.cpu;
    st->dep_rb += g.rb;
    st->dep_wb += g.wb;
    close_files(st, e);
    e->state = UNKNOWN;
    e->seen = e->cached = 0;
}

/* The pid most recently created on the node (proc(5): /proc/loadavg,
 * fifth field), or -1.  While it does not change, no process was born and
 * the tree can only have shrunk, which failing reads reveal: the listing
 * of /proc, the costliest step, is skipped. */
static int64_t last_pid(tree_state *st, const pm_sctx *ctx)
{
    char buf[128];
    if (pm_pread_kept(&st->fd_loadavg, ctx->proc_fd, "loadavg", buf, sizeof buf, NULL) <= 0)
        return -1;
    char *f[5];
    int64_t v;
    if (pm_split_fields(buf, f, 5) != 5 || pm_parse_i64(f[4], &v) != 0)
        return -1;
    return v;
}

/* Is this the first sample of -- CMD, taken while the command, a child of
 * the sampler, still waits at its start gate (it execs once the sample is
 * taken)?  Its memory is then the sampler's copied image. */
static int at_gate(const tree_state *st, const pm_sctx *ctx)
{
    if (st->seq != 1)
        return 0;
    for (size_t i = 0; i < ctx->nroots; i++) {
        const pent *e = tab_find(&st->tab, ctx->roots[i]);
        if (e && e->ppid == st->self)
            return 1;
    }
    return 0;
}

static int tree_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    tree_state *st = state;
    st->seq++;
    time_limits(st, ctx);
    int64_t lp = last_pid(st, ctx);
    if (lp < 0 || lp != st->last_pid || st->npending_unknown) {
        if (discover(st, ctx) != 0)
            return -1;
        st->last_pid = lp; /* read_member() resets it on a reused pid */
    }
    totals t;
    memset(&t, 0, sizeof t);
    /* smaps_rollup: at the first sample of the command itself, then
     * every --pss-interval, and sooner when the RSS moves (below). */
    int gate = at_gate(st, ctx);
    st->pss_now =
        !gate && (st->pss_last_ns == 0 || ctx->now_mono_ns - st->pss_last_ns >= st->pss_every_ns);
    if (st->pss_now)
        st->pss_last_ns = ctx->now_mono_ns;
    for (size_t i = 0; i < st->tab.cap; i++)
        if (st->tab.e[i].pid && st->tab.e[i].state == TREE)
            read_member(st, ctx, &st->tab.e[i], &t);
    t.cpu += settle_gone(st);
    /* The tree's RSS moved by more than an eighth since smaps_rollup was
     * last read: read it now, so a job shorter than --pss-interval (or a
     * phase that allocates) is not left with the figures of its start. */
    if (!st->pss_now && !gate && st->smaps_ok && !t.bad[B_RSS] &&
        (t.rss > st->pss_rss + st->pss_rss / 8 || t.rss + st->pss_rss / 8 < st->pss_rss)) {
        st->pss_now = 1;
        st->pss_last_ns = ctx->now_mono_ns;
        for (size_t i = 0; i < st->tab.cap; i++) {
            pent *e = &st->tab.e[i];
            if (e->pid && e->state == TREE && e->seen && e->seq == st->seq)
                read_pss(st, ctx, e, &t);
        }
    }
    if (st->pss_now && !t.bad[B_RSS])
        st->pss_rss = t.rss;
    pm_sample_u64(s, st->col_count, t.count);
    if (t.count == 0)
        return 0; /* the tree is gone: only the count is meaningful */
    if (!t.bad[B_THREADS])
        pm_sample_u64(s, st->col_threads, t.threads);
    if (!t.bad[B_CPU]) {
        uint64_t cpu = t.cpu + st->dep_cpu;
        pm_sample_f64(s, st->col_cpu, (double)cpu / 1e6);
        /* The percentage over the interval since the sample before; an
         * interval under half the one before it (the last sample, taken
         * as the command exits, moments after the one before) is merged
         * with that one: over a few ms, the kernel's tick truncation made
         * up at once (and the exact rusage of the end) would read as many
         * times the CPUs. */
        uint64_t base_cpu = st->prev_cpu;
        int64_t base_mono = st->prev_mono;
        if (st->have_prev2 &&
            ctx->now_mono_ns - st->prev_mono < (st->prev_mono - st->prev2_mono) / 2) {
            base_cpu = st->prev2_cpu;
            base_mono = st->prev2_mono;
        }
        if (st->have_prev && ctx->now_mono_ns > base_mono && cpu >= base_cpu)
            pm_sample_f64(s, st->col_pct,
                          100.0 * ((double)(cpu - base_cpu) / 1e6) /
                              ((double)(ctx->now_mono_ns - base_mono) / 1e9));
        st->prev2_cpu = st->prev_cpu;
        st->prev2_mono = st->prev_mono;
        st->have_prev2 = st->have_prev;
        st->prev_cpu = cpu;
        st->prev_mono = ctx->now_mono_ns;
        st->have_prev = 1;
    }
    if (!t.bad[B_RSS]) {
        pm_sample_u64(s, st->col_rss, t.rss);
        if (st->mem_total)
            pm_sample_f64(s, st->col_mempct, 100.0 * (double)t.rss / (double)st->mem_total);
    }
    if (!t.bad[B_SHARED])
        pm_sample_u64(s, st->col_shared, t.shared);
    if (!t.bad[B_VM])
        pm_sample_u64(s, st->col_vms, t.vms);
    if (t.have_pss && !t.bad[B_PSS]) {
        pm_sample_u64(s, st->col_pss, t.pss);
        pm_sample_u64(s, st->col_uss, t.uss);
        pm_sample_u64(s, st->col_swap, t.swap);
    }
    if (t.have_io && !t.bad[B_IO]) {
        pm_sample_u64(s, st->col_rb, t.rb + st->dep_rb);
        pm_sample_u64(s, st->col_wb, t.wb + st->dep_wb);
    }
    if (t.have_fds && !t.bad[B_FDS])
        pm_sample_u64(s, st->col_fds, t.fds);
    return 0;
}

static void tree_close(void *state)
{
    tree_state *st = state;
    if (!st)
        return;
    if (st->proc)
        closedir(st->proc);
    for (size_t i = 0; i < st->tab.cap; i++)
        if (st->tab.e[i].pid)
            close_files(st, &st->tab.e[i]);
    free(st->tab.e);
    free(st->next.e);
    free(st->pending);
    free(st->listing);
    free(st->gone);
    free(st->sinks);
    pm_close_kept(&st->fd_loadavg);
    free(st);
}

const pm_source pm_source_proctree = {
    .name = "proctree",
    .open = tree_open,
    .read = tree_read,
    .reaping = tree_reaping,
    .close = tree_close,
};

static int cmp_pid(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

int pm_proctree_members(const pm_sctx *ctx, size_t max, pid_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    int fd = openat(ctx->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return PM_EIO;
    }
    /* Every process with its parent, then the tree grown from the roots
     * until it stops growing (one pass per generation). */
    int32_t *pid = NULL, *ppid = NULL;
    size_t np = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        uint64_t v;
        int32_t pp;
        char comm[32];
        if (pm_parse_u64(e->d_name, &v) != 0 || v == 0 || v > INT32_MAX ||
            read_ppid(ctx->proc_fd, (int32_t)v, &pp, comm, sizeof comm) != 0)
            continue;
        if (np == cap) {
            size_t nc = cap ? cap * 2 : 1024;
            int32_t *a = realloc(pid, nc * sizeof *a),
                    *b = a ? realloc(ppid, nc * sizeof *b) : NULL;
            if (a)
                pid = a;
            if (!a || !b) {
                rc = PM_ENOMEM;
                break;
            }
            ppid = b;
            cap = nc;
        }
        pid[np] = (int32_t)v;
        ppid[np++] = pp;
    }
    closedir(d);
    pid_t *m = rc ? NULL : malloc((max ? max : 1) * sizeof *m);
    uint8_t *in = rc || !m ? NULL : calloc(np ? np : 1, 1);
    if (!rc && (!m || !in))
        rc = PM_ENOMEM;
    size_t k = 0;
    for (size_t r = 0; !rc && r < ctx->nroots && k < max; r++)
        m[k++] = ctx->roots[r];
    for (size_t i = 0; !rc && i < np; i++)
        in[i] = is_root(ctx, pid[i]);
    pid_t *sorted = rc ? NULL : malloc((max ? max : 1) * sizeof *sorted);
    if (!rc && !sorted)
        rc = PM_ENOMEM;
    for (int grew = 1; !rc && grew && k < max;) {
        grew = 0;
        size_t ns = k;
        memcpy(sorted, m, ns * sizeof *m);
        qsort(sorted, ns, sizeof *sorted, cmp_pid);
        for (size_t i = 0; i < np && k < max; i++) {
            pid_t pp = ppid[i];
            if (!in[i] && bsearch(&pp, sorted, ns, sizeof *sorted, cmp_pid)) {
                in[i] = 1;
                m[k++] = pid[i];
                grew = 1;
            }
        }
    }
    free(sorted);
    free(pid);
    free(ppid);
    free(in);
    if (rc) {
        free(m);
        return rc;
    }
    *out = m;
    *n = k;
    return 0;
}

int pm_proctree_follows(const void *state, int pid)
{
    const tree_state *st = state;
    if (!st || pid <= 0)
        return 0;
    const pent *e = tab_find(&st->tab, (int32_t)pid);
    return e && e->state == TREE;
}
