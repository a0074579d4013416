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
 * CPU time of the tree is the sum over live members of utime + stime +
 * cutime + cstime (proc(5) fields 14-17): a child's time moves into its
 * parent's cutime when the parent reaps it, so the sum stays continuous
 * while processes come and go, and short-lived children are counted.
 * /proc/<pid>/io accumulates reaped children the same way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/log.h"
#include "perfmon/mem.h"
#include "perfmon/parse.h"
#include "perfmon/proctree.h"
#include "perfmon/source.h"

/* STEPD: a slurmstepd of the followed job; not a member, its children are. */
enum { UNKNOWN = 0, TREE = 1, OTHER = 2, STEPD = 3 };

enum { F_STAT, F_SCHED, F_STATM, F_IO, F_SMAPS, F_FDDIR, NFILES };
static const char *const file_name[NFILES] = {"stat", "schedstat", "statm", "io", "smaps_rollup",
                                              "fd"};

/* Descriptors of members' files stay open between samples (a re-read is
 * one pread instead of open+read+read+close), for at most this many
 * members, so a huge tree cannot exhaust the descriptor limit. */
#define MAX_KEPT 256

typedef struct pent {
    int32_t pid;      /* 0 = empty slot */
    int32_t ppid;
    uint8_t state;
    uint8_t carried;  /* copied into the next table */
    uint8_t recheck;  /* verdict provisional: classify afresh at the next listing */
    uint8_t cached;   /* the values below are valid */
    int fd[NFILES];   /* kept descriptors, -1 when closed */
    /* What the last full read found.  A process that has not been on a
     * CPU since (its schedstat timeslice count is unchanged) cannot have
     * changed its descriptor table or I/O counters, so those are reused
     * instead of re-read: a sleeping member costs two reads, not five. */
    uint64_t slices, rss_pages, shared, rb, wb, nfd;
    uint8_t have_shared, have_io, have_fds;
    /* The stat fields, reused while the member stays off the CPU (its
     * own CPU time, threads and children's times cannot change then), and
     * re-read at least every STAT_REFRESH samples for RSS, which memory
     * reclaim can lower while a process sleeps. */
    uint8_t have_stat, stat_age;
    uint64_t ut, stt, threads, vsize;
    int64_t cut, cst;
} pent;

#define STAT_REFRESH 10

typedef struct ptab {
    pent *e;
    size_t cap;       /* power of two */
} ptab;

typedef struct tree_state {
    ptab tab, next;
    int32_t *pending;
    size_t npending, cap_pending;
    DIR *proc;
    int col_count, col_threads, col_fds, col_cpu, col_pct, col_rss, col_vms, col_shared;
    int col_pss, col_uss, col_swap, col_mempct, col_rb, col_wb;
    double prev_cpu;
    int64_t prev_mono;
    int have_prev;
    uint64_t mem_total;
    int warned_io, warned_smaps, warned_fd;
    int smaps_ok, io_ok;
    size_t kept;      /* members with kept descriptors */
    int32_t *listing; /* pids of the last /proc listing */
    size_t cap_listing;
    int64_t pss_every_ns; /* smaps_rollup refresh period */
    int64_t pss_last_ns;
    int pss_now;      /* read smaps_rollup in this sample */
    int fd_loadavg;   /* /proc/loadavg, for the last pid created */
    int64_t last_pid; /* at the last listing; -1 = list next time */
    int npending_unknown; /* pids left undecided: list again */
} tree_state;

static size_t hash_pid(int32_t pid, size_t cap) { return ((uint32_t)pid * 2654435761u) & (cap - 1); }

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
    e->cached = 0;
    for (int k = 0; k < NFILES; k++) {
        had |= e->fd[k] >= 0;
        pm_close_kept(&e->fd[k]);
    }
    if (had && st->kept)
        st->kept--;
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
    st->smaps_ok = st->io_ok = 1;
    st->pss_every_ns = ctx->pss_interval_ns;
    st->fd_loadavg = -1;
    st->last_pid = -1;
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
    if (st->npending == st->cap_pending) {
        size_t nc = st->cap_pending ? st->cap_pending * 2 : 256;
        int32_t *p = pm_realloc_array(st->pending, nc, sizeof *p);
        if (!p)
            return -1;
        st->pending = p;
        st->cap_pending = nc;
    }
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
        if (count == st->cap_listing) {
            size_t nc = st->cap_listing ? st->cap_listing * 2 : 1024;
            int32_t *l = pm_realloc_array(st->listing, nc, sizeof *l);
            if (!l)
                return -ENOMEM;
            st->listing = l;
            st->cap_listing = nc;
        }
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
            if (is_root(ctx, n->pid)) {
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
            close_files(st, o);
    }
    ptab tmp = st->tab;
    st->tab = st->next;
    st->next = tmp;
    return 0;
}

typedef struct totals {
    uint64_t count, threads, fds, rss, vms, shared, pss, uss, swap, rb, wb;
    double cpu;
    int have_pss, have_io, have_fds;
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

/* Number of open descriptors: since Linux 6.2 the size of /proc/<pid>/fd
 * says it; older kernels report 0 and the directory is counted. */
static int count_fds(tree_state *st, const pm_sctx *ctx, pent *e, uint64_t *out)
{
    char path[48];
    snprintf(path, sizeof path, "%d/fd", (int)e->pid);
    struct stat sb;
    if (e->fd[F_STAT] >= 0 && e->fd[F_FDDIR] < 0)
        e->fd[F_FDDIR] = openat(ctx->proc_fd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int rc = e->fd[F_FDDIR] >= 0 ? fstat(e->fd[F_FDDIR], &sb)
                                 : fstatat(ctx->proc_fd, path, &sb, 0);
    if (rc != 0)
        goto fail;
    if (sb.st_size > 0) {
        *out = (uint64_t)sb.st_size;
        return 0;
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

/* Timeslices run so far (proc(5): /proc/<pid>/schedstat, third field). */
static int read_slices(tree_state *st, const pm_sctx *ctx, pent *e, uint64_t *out)
{
    char buf[128];
    if (member_file(st, ctx, e, F_SCHED, buf, sizeof buf) <= 0)
        return -1;
    char *f[3];
    if (pm_split_fields(buf, f, 3) != 3 || pm_parse_u64(f[2], out) != 0)
        return -1;
    return 0;
}

static void read_member(tree_state *st, const pm_sctx *ctx, pent *e, totals *t)
{
    char buf[4096];
    /* schedstat first: a member that has not run since the last sample
     * costs this one read (its stat is reused, see pent). */
    uint64_t slices;
    int have_slices = read_slices(st, ctx, e, &slices) == 0;
    int asleep = have_slices && e->cached && e->have_stat && slices == e->slices &&
                 e->stat_age < STAT_REFRESH;
    uint64_t ut, stt, threads, vsize, rss;
    int64_t cut, cst;
    if (asleep) {
        ut = e->ut;
        stt = e->stt;
        cut = e->cut;
        cst = e->cst;
        threads = e->threads;
        vsize = e->vsize;
        rss = e->rss_pages;
        e->stat_age++;
    } else {
        if (member_file(st, ctx, e, F_STAT, buf, sizeof buf) <= 0) {
            /* Exited since the listing, or its pid was reused: forget it
             * so the next listing classifies the pid afresh. */
            close_files(st, e);
            e->state = UNKNOWN;
            return;
        }
        char *p = strrchr(buf, ')');
        if (!p)
            return;
        /* proc(5) fields from 3 (state) on: f[0] is field 3, so field N is
         * f[N - 3]: utime 14, stime 15, cutime 16, cstime 17, num_threads
         * 20, vsize 23 (bytes), rss 24 (pages). */
        char *f[24];
        size_t n = pm_split_fields(p + 1, f, 24);
        if (n < 22)
            return;
        if (pm_parse_u64(f[11], &ut) || pm_parse_u64(f[12], &stt) || pm_parse_i64(f[13], &cut) ||
            pm_parse_i64(f[14], &cst) || pm_parse_u64(f[17], &threads) ||
            pm_parse_u64(f[20], &vsize) || pm_parse_u64(f[21], &rss))
            return;
        e->ut = ut;
        e->stt = stt;
        e->cut = cut;
        e->cst = cst;
        e->threads = threads;
        e->vsize = vsize;
        e->have_stat = 1;
        e->stat_age = 0;
    }
    t->count++;
    t->threads += threads;
    t->cpu += (double)(ut + stt + (uint64_t)(cut > 0 ? cut : 0) + (uint64_t)(cst > 0 ? cst : 0)) /
              (double)ctx->clk_tck;
    t->vms += vsize;
    t->rss += rss * (uint64_t)ctx->page_size;

    int idle = 0;
    if (have_slices) {
        idle = e->cached && slices == e->slices && rss == e->rss_pages;
        e->slices = slices;
    }
    e->rss_pages = rss;
    if (!idle) {
        e->have_shared = e->have_io = e->have_fds = 0;
        /* statm field 3: resident shared (file-backed + shmem) pages. */
        if (member_file(st, ctx, e, F_STATM, buf, sizeof buf) > 0) {
            const char *q = buf;
            uint64_t sz, res, sh;
            if (pm_scan_u64(&q, &sz) == 0 && pm_scan_u64(&q, &res) == 0 &&
                pm_scan_u64(&q, &sh) == 0) {
                e->shared = sh * (uint64_t)ctx->page_size;
                e->have_shared = 1;
            }
        }
        if (st->io_ok) {
            ssize_t r = member_file(st, ctx, e, F_IO, buf, sizeof buf);
            if (r > 0 && pm_kv_u64(buf, "read_bytes", &e->rb) == 0 &&
                pm_kv_u64(buf, "write_bytes", &e->wb) == 0) {
                e->have_io = 1;
            } else if (r < 0 && r != -ENOENT && r != -ESRCH && !st->warned_io) {
                st->warned_io = 1;
                pm_log(PM_LOG_INFO, "proctree: %s/%d/io not readable (%s); process I/O not "
                       "recorded", ctx->proc_root, (int)e->pid, strerror((int)-r));
            }
        }
        e->have_fds = count_fds(st, ctx, e, &e->nfd) == 0;
        e->cached = 1;
    }
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
    if (st->smaps_ok && st->pss_now) {
        ssize_t r = member_file(st, ctx, e, F_SMAPS, buf, sizeof buf);
        uint64_t pss, pc = 0, pd = 0, sw = 0;
        if (r > 0 && pm_kv_u64(buf, "Pss", &pss) == 0) {
            pm_kv_u64(buf, "Private_Clean", &pc);
            pm_kv_u64(buf, "Private_Dirty", &pd);
            pm_kv_u64(buf, "Swap", &sw);
            t->pss += pss * 1024;
            t->uss += (pc + pd) * 1024;
            t->swap += sw * 1024;
            t->have_pss = 1;
        } else if (r < 0 && r != -ENOENT && r != -ESRCH && !st->warned_smaps) {
            st->warned_smaps = 1;
            pm_log(PM_LOG_INFO, "proctree: %s/%d/smaps_rollup not readable (%s); PSS/USS not "
                   "recorded", ctx->proc_root, (int)e->pid, strerror((int)-r));
        }
    }
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

static int tree_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    tree_state *st = state;
    int64_t lp = last_pid(st, ctx);
    if (lp < 0 || lp != st->last_pid || st->npending_unknown) {
        if (discover(st, ctx) != 0)
            return -1;
        st->last_pid = lp;
    }
    totals t;
    memset(&t, 0, sizeof t);
    st->pss_now = st->pss_last_ns == 0 || ctx->now_mono_ns - st->pss_last_ns >= st->pss_every_ns;
    if (st->pss_now)
        st->pss_last_ns = ctx->now_mono_ns;
    for (size_t i = 0; i < st->tab.cap; i++)
        if (st->tab.e[i].pid && st->tab.e[i].state == TREE)
            read_member(st, ctx, &st->tab.e[i], &t);
    pm_sample_u64(s, st->col_count, t.count);
    if (t.count == 0)
        return 0; /* the tree is gone: only the count is meaningful */
    pm_sample_u64(s, st->col_threads, t.threads);
    pm_sample_f64(s, st->col_cpu, t.cpu);
    if (st->have_prev && ctx->now_mono_ns > st->prev_mono && t.cpu >= st->prev_cpu)
        pm_sample_f64(s, st->col_pct,
                      100.0 * (t.cpu - st->prev_cpu) /
                          ((double)(ctx->now_mono_ns - st->prev_mono) / 1e9));
    st->prev_cpu = t.cpu;
    st->prev_mono = ctx->now_mono_ns;
    st->have_prev = 1;
    pm_sample_u64(s, st->col_rss, t.rss);
    pm_sample_u64(s, st->col_vms, t.vms);
    pm_sample_u64(s, st->col_shared, t.shared);
    if (st->mem_total)
        pm_sample_f64(s, st->col_mempct, 100.0 * (double)t.rss / (double)st->mem_total);
    if (t.have_pss) {
        pm_sample_u64(s, st->col_pss, t.pss);
        pm_sample_u64(s, st->col_uss, t.uss);
        pm_sample_u64(s, st->col_swap, t.swap);
    }
    if (t.have_io) {
        pm_sample_u64(s, st->col_rb, t.rb);
        pm_sample_u64(s, st->col_wb, t.wb);
    }
    if (t.have_fds)
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
    pm_close_kept(&st->fd_loadavg);
    free(st);
}

const pm_source pm_source_proctree = {
    .name = "proctree",
    .open = tree_open,
    .read = tree_read,
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
            int32_t *a = realloc(pid, nc * sizeof *a), *b = a ? realloc(ppid, nc * sizeof *b) : NULL;
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
