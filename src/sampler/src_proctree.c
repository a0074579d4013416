/* Process-tree source: the monitored processes and all their descendants
 * (of the same user unless ctx->any_uid), re-discovered every sample.
 * In a SLURM job (ctx->slurm_job) the roots are the children of the job's
 * step daemons on this node, each titled "slurmstepd: [JOB.STEP]" (STEP
 * a number, batch, extern or interactive), except the sampler's own step.
 *
 * Discovery reads the parent of each process once, when its pid first
 * appears in /proc, and remembers whether it belongs to the tree: a
 * process's parent only changes when it is orphaned, so the verdict holds
 * for its lifetime.  /proc is listed only when a process was born on the
 * node (the newest pid in /proc/loadavg changed).  Where the kernel has
 * children files (/proc/<pid>/task/<tid>/children, CONFIG_PROC_CHILDREN)
 * not even then, as a rule: only a member that ran since its children
 * were last known can have started one (its schedstat, read anyway, says
 * whether it ran), so those members' children files are read, and /proc
 * is listed when one names a pid the table lacks, when such a member
 * exited (its children went to a reaper; the kernel keeps an exited,
 * unreaped child on its parent's list, so zombies are found), when a
 * file does not read, and at most a second after the last listing (a
 * child started with CLONE_PARENT is its starter's sibling).  A
 * steady-state sample therefore costs the reads of the tree's own files,
 * however many other processes the node runs and starts.
 *
 * With -- CMD the sampler is a subreaper above the tree (ctx->subreaper):
 * the tree's orphans become its children, and every child of the sampler
 * is a member, whenever it is first seen.
 *
 * A member none of whose threads has been on a CPU since its last full
 * read (stat, statm, io, fd count) cannot have changed its times, reaped
 * or started a child, done I/O or opened a file: that read is reused, at
 * most STAT_REFRESH samples (for RSS, which reclaim lowers while a
 * process sleeps).  Whether it ran, its threads' schedstat (time on the
 * CPU and timeslices) says: the process's for a single-threaded member,
 * each thread's for one with at most MAX_TASKS threads (the process's
 * schedstat is the main thread's alone); one with more is read in full
 * every sample.  With -- CMD a task-clock perf counter inherited by
 * everything the command starts sums the whole tree's time on the CPU:
 * while it stands still, no member ran, and no schedstat is read.
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
 * column left empty for that sample (the bounds: pm_ptree_node_limits()).
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

#include <linux/perf_event.h>

#include "perfmon/fileio.h"
#include "perfmon/log.h"
#include "perfmon/mem.h"
#include "perfmon/parse.h"
#include "perfmon/proctree.h"
#include "perfmon/source.h"
#include "perfmon/vec.h"

#include "sread.h"
#include "ptree.h"

/* -- CMD, before the command is forked (its pid still 0): a task-clock
 * counter on the sampler, disabled, enabled at exec and inherited, so
 * that it counts the time on the CPU of the command and of every task it
 * starts, threads included (perf_event_open(2): reading an inherited
 * counter sums the task's and its descendants', the exited ones
 * included).  The sampler's own time is never counted.  -1 when the
 * kernel refuses it (the members are then asked one by one). */
static int open_tree_clock(const pm_sctx *ctx, const tree_state *st)
{
    if (!st->procfs || ctx->nroots != 1 || ctx->roots[0] != 0)
        return -1;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.disabled = 1;
    a.enable_on_exec = 1;
    a.inherit = 1;
    /* Counted all the same (the task's whole time on the CPU, kernel
     * included: measured), and allowed under perf_event_paranoid 2. */
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd >= 0 && fd <= INT32_MAX ? (int)fd : -1;
}

/* Did no task of the tree run since the last read of its clock?  After a
 * read that found it moved, the next CLOCK_SKIP - 1 samples do not ask
 * (the answer would likely be no, and reading the counter of a running
 * task interrupts its CPU); the read after them is a new baseline. */
#define CLOCK_SKIP 8
static int tree_idle(tree_state *st)
{
    if (st->fd_clock < 0)
        return 0;
    if (st->clock_wait) {
        if (--st->clock_wait == 0)
            st->have_clock = 0;
        return 0;
    }
    uint64_t v;
    ssize_t n;
    do
        n = read(st->fd_clock, &v, sizeof v);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof v) {
        pm_close_kept(&st->fd_clock);
        return 0;
    }
    int idle = st->have_clock && v == st->clock;
    if (st->have_clock && !idle)
        st->clock_wait = CLOCK_SKIP - 1;
    st->clock = v;
    st->have_clock = 1;
    return idle;
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
    pm_ptree_node_limits(st, ctx);
    st->self = (int32_t)getpid();
    if (ctx->clk_tck > 0 && 1000000 % ctx->clk_tck == 0)
        st->us_per_tick = (uint64_t)(1000000 / ctx->clk_tck);
    st->smaps_ok = st->io_ok = 1;
    st->pss_every_ns = ctx->pss_interval_ns;
    /* Kept descriptors: FDS_PER_KEPT a member, leaving 256 to the rest. */
    struct rlimit nofile = {0, 0};
    (void)getrlimit(RLIMIT_NOFILE, &nofile);
    rlim_t cur = nofile.rlim_cur == RLIM_INFINITY ? (rlim_t)1 << 20 : nofile.rlim_cur;
    st->max_kept = cur > 256 ? (size_t)(cur - 256) / FDS_PER_KEPT : 0;
    if (st->max_kept > 65536)
        st->max_kept = 65536;
    st->fd_loadavg = -1;
    st->last_pid = -1;
    struct statfs sfs;
    st->procfs = fstatfs(ctx->proc_fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
    /* Children files (CONFIG_PROC_CHILDREN): the sampler's own on procfs,
     * the first root's in a captured tree.  In a SLURM job the roots are
     * found by listing, every time. */
    char cpath[64];
    if (st->procfs)
        snprintf(cpath, sizeof cpath, "thread-self/children");
    else
        snprintf(cpath, sizeof cpath, "%d/task/%d/children", ctx->nroots ? (int)ctx->roots[0] : 0,
                 ctx->nroots ? (int)ctx->roots[0] : 0);
    st->children_ok =
        !ctx->slurm_job && ctx->nroots && faccessat(ctx->proc_fd, cpath, R_OK, 0) == 0;
    st->fd_clock = open_tree_clock(ctx, st);
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
        pm_close_kept(&st->fd_clock);
        closedir(st->proc);
        free(st);
        return pm_error_set(err, PM_ENOMEM, "proctree: cannot add columns");
    }
    *state = st;
    return 0;
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
            pent *e = pm_ptree_find(&st->tab, p);
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
        pm_ptree_set_cpu(e, e->own, e->ch, 0);
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
    st->orphans = 1; /* its children, if any, are the sampler's now */
    pent *e = pm_ptree_find(&st->tab, (int32_t)pid);
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
    pm_ptree_time_limits(st, ctx);
    if (pm_ptree_member_file(st, ctx, e, F_STAT, buf, sizeof buf) <= 0 ||
        pm_ptree_parse_stat(buf, &ps) != 0 || (e->seen && ps.start != e->start) ||
        !pm_ptree_cpu_ok(st, ctx, e->pid, &ps)) {
        pm_ptree_vanish(st, e); /* counted by its last figures, if any */
        return;
    }
    gone g;
    memset(&g, 0, sizeof g);
    g.pid = e->pid;
    g.ppid = ps.ppid;
    g.final = 1;
    uint64_t own, ru;
    pm_ptree_cpu_us(st, ctx, e->pid, &ps, &own, &g.ch, &ru);
    g.ch0 = e->seen ? e->ch : 0;
    if (g.ch0 > g.ch)
        g.ch0 = g.ch;
    g.floor0 = e->seen ? e->ch_floor : 0;
    pm_ptree_set_cpu(e, own, g.ch, ru);
    g.cpu = e->cpu;
    uint64_t rb, wb;
    ssize_t r;
    if (st->io_ok && pm_ptree_read_io(st, ctx, e, &rb, &wb, &r) == 0) {
        g.have_io = 1;
        g.rb = rb;
        g.wb = wb;
        g.rb0 = e->have_io && e->rb <= rb ? e->rb : 0;
        g.wb0 = e->have_io && e->wb <= wb ? e->wb : 0;
    } else if (e->have_io) {
        g.rb = g.rb0 = e->rb;
        g.wb = g.wb0 = e->wb;
    }
    if (pm_ptree_push_gone(st, &g) != 0) {
        pm_ptree_vanish(st, e);
        return;
    }
    st->dep_cpu += g.cpu;
    st->dep_rb += g.rb;
    st->dep_wb += g.wb;
    pm_ptree_close_files(st, e);
    e->state = UNKNOWN;
    e->seen = e->cached = 0;
}

/* Is this the first sample of -- CMD, taken while the command, a child of
 * the sampler, still waits at its start gate (it execs once the sample is
 * taken)?  Its memory is then the sampler's copied image. */
static int at_gate(const tree_state *st, const pm_sctx *ctx)
{
    if (st->seq != 1)
        return 0;
    for (size_t i = 0; i < ctx->nroots; i++) {
        const pent *e = pm_ptree_find(&st->tab, ctx->roots[i]);
        if (e && e->ppid == st->self)
            return 1;
    }
    return 0;
}

static int tree_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    tree_state *st = state;
    st->seq++;
    pm_ptree_time_limits(st, ctx);
    int64_t lp = pm_ptree_last_pid(st, ctx);
    int listed = 0;
    if (lp < 0 || st->last_pid < 0 || st->npending_unknown ||
        (lp != st->last_pid && !st->children_ok)) {
        if (pm_ptree_discover(st, ctx) != 0)
            return -1;
        st->last_pid = lp; /* pm_ptree_read_member() resets it on a reused pid */
        listed = 1;
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
    st->idle = tree_idle(st);
    for (size_t m = 0; m < st->nmembers; m++) {
        pent *e = &st->tab.e[st->members[m]];
        if (e->pid && e->state == TREE)
            pm_ptree_read_member(st, ctx, e, &t);
    }
    st->idle = 0; /* members found below are read afresh */
    /* A process was born on the node since the last look.  Now that the
     * members' reads have said which ran (only those can have started
     * one), their children files say whether it is the tree's: /proc is
     * listed only when one names a process the table lacks, when a member
     * that may have had such a child exited, and otherwise at most a
     * second after the last listing (a child started with CLONE_PARENT is
     * its starter's sibling).  New members are read at once, in this
     * sample; those already read keep their figures. */
    if (!listed && lp != st->last_pid) {
        /* (last_pid < 0: a member's pid was found reused in this sample.) */
        if (st->last_pid < 0 || ctx->now_mono_ns - st->list_ns >= PM_RARE_NS ||
            !pm_ptree_children_known(st, ctx)) {
            if (pm_ptree_discover(st, ctx) != 0)
                return -1;
            for (size_t m = 0; m < st->nmembers; m++) {
                pent *e = &st->tab.e[st->members[m]];
                if (e->pid && e->state == TREE && e->seq != st->seq)
                    pm_ptree_read_member(st, ctx, e, &t);
            }
        }
        st->last_pid = lp;
    }
    t.cpu += settle_gone(st);
    /* The tree's RSS moved by more than an eighth since smaps_rollup was
     * last read: read it now, so a job shorter than --pss-interval (or a
     * phase that allocates) is not left with the figures of its start. */
    if (!st->pss_now && !gate && st->smaps_ok && !t.bad[B_RSS] &&
        (t.rss > st->pss_rss + st->pss_rss / 8 || t.rss + st->pss_rss / 8 < st->pss_rss)) {
        st->pss_now = 1;
        st->pss_last_ns = ctx->now_mono_ns;
        for (size_t m = 0; m < st->nmembers; m++) {
            pent *e = &st->tab.e[st->members[m]];
            if (e->pid && e->state == TREE && e->seen && e->seq == st->seq)
                pm_ptree_read_pss(st, ctx, e, &t);
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
            pm_ptree_close_files(st, &st->tab.e[i]);
    free(st->tab.e);
    free(st->next.e);
    free(st->pending);
    free(st->listing);
    free(st->members);
    free(st->gone);
    free(st->sinks);
    pm_close_kept(&st->fd_loadavg);
    pm_close_kept(&st->fd_clock);
    free(st);
}

const pm_source pm_source_proctree = {
    .name = "proctree",
    .open = tree_open,
    .read = tree_read,
    .reaping = tree_reaping,
    .close = tree_close,
};
