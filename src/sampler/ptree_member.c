/* Process-tree members: reading one member's files (stat, schedstat,
 * statm, io, smaps_rollup, the fd directory) into its figures, with the
 * bounds that refuse impossible values (src_proctree.c).
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
#include "ptree.h"

static const char *const file_name[NFILES] = {"stat", "schedstat",    "statm",
                                              "io",   "smaps_rollup", "fd"};

static const char *const bad_col[NBAD] = {"proc.cpu_time and proc.cpu_percent",
                                          "proc.rss and proc.mem_percent",
                                          "proc.shared",
                                          "proc.vms",
                                          "proc.threads",
                                          "proc.read_bytes and proc.write_bytes",
                                          "proc.fds",
                                          "proc.pss, proc.uss and proc.swap"};

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
void pm_ptree_node_limits(tree_state *st, const pm_sctx *ctx)
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
void pm_ptree_time_limits(tree_state *st, const pm_sctx *ctx)
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

/* Read one of a member's files, through a kept descriptor when allowed. */
ssize_t pm_ptree_member_file(tree_state *st, const pm_sctx *ctx, pent *e, int k, char *buf,
                             size_t cap)
{
    char path[48];
    /* The path matters only to open the file (a kept descriptor is used
     * only while stat's is kept). */
    if (e->fd[k] < 0 || e->fd[F_STAT] < 0)
        snprintf(path, sizeof path, "%d/%s", (int)e->pid, file_name[k]);
    else
        path[0] = '\0';
    if (k == F_STAT && e->fd[F_STAT] < 0 && st->kept < st->max_kept) {
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

/* Parse a stat line; the name (field 2) may hold spaces and parentheses,
 * so the fields start after the last ')'.  proc(5) fields from 3 (state)
 * on: f[0] is field 3, so field N is f[N - 3]: ppid 4, utime 14, stime 15,
 * cutime 16, cstime 17, num_threads 20, starttime 22, vsize 23 (bytes),
 * rss 24 (pages).  0, or -1 when malformed. */
int pm_ptree_parse_stat(char *buf, pstat *ps)
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
void pm_ptree_cpu_us(const tree_state *st, const pm_sctx *ctx, int32_t pid, const pstat *ps,
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
void pm_ptree_set_cpu(pent *e, uint64_t own, uint64_t ch, uint64_t ru)
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
int pm_ptree_cpu_ok(tree_state *st, const pm_sctx *ctx, int32_t pid, const pstat *ps)
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
int pm_ptree_read_io(tree_state *st, const pm_sctx *ctx, pent *e, uint64_t *rb, uint64_t *wb,
                     ssize_t *r)
{
    char buf[1024];
    *r = pm_ptree_member_file(st, ctx, e, F_IO, buf, sizeof buf);
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
    if (pm_ptree_member_file(st, ctx, e, F_SCHED, buf, sizeof buf) <= 0 ||
        pm_split_fields(buf, f, 3) != 3 || pm_parse_u64(f[0], ns) != 0 ||
        pm_parse_u64(f[2], cnt) != 0 || (*ns == 0 && *cnt == 0))
        return -1;
    return 0;
}

/* List the threads of a kept multithreaded member (/proc/<pid>/task) into
 * e->tasks, their descriptors closed.  0, or -1 when unreadable or when it
 * has more than MAX_TASKS threads (then it is read in full every sample). */
static int list_tasks(const pm_sctx *ctx, pent *e)
{
    if (!e->tasks) {
        e->tasks = malloc(sizeof *e->tasks);
        if (!e->tasks)
            return -1;
        e->tasks->n = 0;
    }
    ptasks *tk = e->tasks;
    for (int i = 0; i < tk->n; i++)
        pm_close_kept(&tk->fd[i]);
    tk->n = 0;
    int n = pm_ptree_list_threads(ctx, e->pid, tk->tid, MAX_TASKS);
    if (n <= 0)
        return -1;
    for (int i = 0; i < n; i++)
        tk->fd[i] = -1;
    tk->n = n;
    return 0;
}

/* The schedstat sums over the threads of a kept multithreaded member
 * (e->threads of them at its last full read), listing them first when
 * they are not known or their number changed.  While no thread runs,
 * none is born or ends (that takes a running thread), so equal sums mean
 * no thread ran: both fields only grow.  0, or -1 when one is unreadable
 * (a thread ended: listed again next time). */
static int read_sched_tasks(tree_state *st, const pm_sctx *ctx, pent *e, uint64_t *ns,
                            uint64_t *cnt)
{
    if ((!e->tasks || (uint64_t)e->tasks->n != e->threads) && list_tasks(ctx, e) != 0)
        return -1;
    ptasks *tk = e->tasks;
    *ns = *cnt = 0;
    for (int i = 0; i < tk->n; i++) {
        char path[64], buf[128];
        char *f[3];
        uint64_t a, b;
        if (tk->fd[i] < 0)
            snprintf(path, sizeof path, "%d/task/%d/schedstat", (int)e->pid, (int)tk->tid[i]);
        else
            path[0] = '\0';
        if (pm_pread_kept(&tk->fd[i], ctx->proc_fd, path, buf, sizeof buf, NULL) <= 0 ||
            pm_split_fields(buf, f, 3) != 3 || pm_parse_u64(f[0], &a) != 0 ||
            pm_parse_u64(f[2], &b) != 0 || (a == 0 && b == 0) || a > UINT64_MAX - *ns ||
            b > UINT64_MAX - *cnt) {
            tk->n = 0; /* list again next time */
            return -1;
        }
        *ns += a;
        *cnt += b;
    }
    (void)st;
    return 0;
}

/* Ask first whether the member ran since its last full read?  Always at
 * its first read and for a single-threaded member, for a multithreaded one
 * when its descriptors are kept and it has at most MAX_TASKS threads;
 * except for BUSY_SKIP samples after BUSY_CHECKS checks in a row found it
 * had run (it is then read in full unasked: the check would only add to
 * the cost).  *multi: ask all its threads. */
static int want_check(const pent *e, int *multi)
{
    *multi = e->seen && e->threads > 1;
    if (!e->seen)
        return 1;
    if (e->skip_checks)
        return 0;
    return !*multi || (e->threads <= MAX_TASKS && e->fd[F_STAT] >= 0);
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

void pm_ptree_read_pss(tree_state *st, const pm_sctx *ctx, pent *e, totals *t)
{
    char buf[4096];
    ssize_t r = pm_ptree_member_file(st, ctx, e, F_SMAPS, buf, sizeof buf);
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

void pm_ptree_read_member(tree_state *st, const pm_sctx *ctx, pent *e, totals *t)
{
    char buf[4096];
    pstat ps;
    /* A member none of whose threads has been on a CPU since the last full
     * read cannot have changed its times, children's times (reaping takes
     * a wait() call), I/O, threads or descriptors: its threads' schedstat
     * stands for all (see pent).  A check that finds it ran is the baseline
     * of the full read that follows. */
    uint64_t sns = 0, scnt = 0;
    int multi, have_sched = 0;
    if (want_check(e, &multi)) {
        /* No task of the tree ran since the last sample (st->idle): its
         * schedstat says what it said at its last full read. */
        if (st->idle && e->cached) {
            sns = e->sched_ns;
            scnt = e->sched_cnt;
            have_sched = 1;
        } else {
            have_sched = (multi ? read_sched_tasks(st, ctx, e, &sns, &scnt)
                                : read_sched(st, ctx, e, &sns, &scnt)) == 0;
        }
    } else if (e->skip_checks) {
        e->skip_checks--;
    }
    /* Not on a CPU since its last read: it started no process either. */
    int idle = have_sched && e->cached && sns == e->sched_ns && scnt == e->sched_cnt;
    if (!idle)
        e->dirty = 1;
    if (idle && e->stat_age < STAT_REFRESH) {
        e->busy = 0;
        e->stat_age++;
        e->seq = st->seq;
        e->ch_prev = e->ch;
        e->rb_prev = e->rb;
        e->wb_prev = e->wb;
        add_member(ctx, e, t);
        if (st->smaps_ok && st->pss_now)
            pm_ptree_read_pss(st, ctx, e, t);
        return;
    }
    if (have_sched && e->cached && (sns != e->sched_ns || scnt != e->sched_cnt) &&
        ++e->busy >= BUSY_CHECKS) {
        e->busy = 0;
        e->skip_checks = BUSY_SKIP;
    }
    if (pm_ptree_member_file(st, ctx, e, F_STAT, buf, sizeof buf) <= 0) {
        /* Exited since the listing, or its pid was reused (a kept
         * descriptor then fails): forget it so the next listing
         * classifies the pid afresh. */
        pm_ptree_vanish(st, e);
        return;
    }
    if (pm_ptree_parse_stat(buf, &ps) != 0)
        return;
    if (e->seen && ps.start != e->start) {
        pm_ptree_vanish(st, e); /* the pid names another process now */
        st->last_pid = -1;
        return;
    }
    int bad = 0;
    e->ppid = ps.ppid;
    /* Exited: its children, the ones the table may lack among them, went
     * to a reaper, where no member's children file shows them. */
    if (ps.state == 'Z' && !e->zombie) {
        e->zombie = 1;
        st->orphans = 1;
    }
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
    if (pm_ptree_cpu_ok(st, ctx, e->pid, &ps)) {
        uint64_t own, ch, ru;
        pm_ptree_cpu_us(st, ctx, e->pid, &ps, &own, &ch, &ru);
        /* A zombie's CPU is counted now, when it has been spent, not when
         * its parent reaps it: exactly, by its thread's time on the CPU
         * (schedstat, ns), since utime and stime are each truncated to
         * ticks (a 5 ms process reads 0).  The thread is the leader alone,
         * so for a process that had other threads this is less than its
         * total, and the ticks are kept when they say more. */
        uint64_t zns = sns, zcnt = scnt;
        if (ps.state == 'Z' &&
            ((have_sched && !multi) || read_sched(st, ctx, e, &zns, &zcnt) == 0)) {
            if (!multi) {
                sns = zns;
                scnt = zcnt;
                have_sched = 1;
            }
            if (zns / 1000 > own)
                own = zns / 1000;
        }
        e->ch_prev = e->seen ? e->ch : 0;
        pm_ptree_set_cpu(e, own, ch, ru);
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
    if (pm_ptree_member_file(st, ctx, e, F_STATM, buf, sizeof buf) > 0) {
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
        int rc = pm_ptree_read_io(st, ctx, e, &rb, &wb, &r);
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
     * read still holds: the main thread's when it has one thread, the sums
     * over the threads listed when they are all it has. */
    e->cached = !bad && e->seen && have_sched &&
                (multi ? e->tasks && (uint64_t)e->tasks->n == e->threads : e->threads == 1);
    if (st->smaps_ok && st->pss_now)
        pm_ptree_read_pss(st, ctx, e, t);
}
