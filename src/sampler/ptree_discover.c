/* Process-tree discovery: which processes of the node belong to the
 * followed tree (src_proctree.c), from one listing of /proc and each new
 * pid's parent, read once; and the pid table that keeps the verdicts.
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

static size_t hash_pid(int32_t pid, size_t cap)
{
    return ((uint32_t)pid * 2654435761u) & (cap - 1);
}

pent *pm_ptree_find(const ptab *t, int32_t pid)
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

void pm_ptree_close_files(tree_state *st, pent *e)
{
    int had = 0;
    for (int k = 0; k < NFILES; k++) {
        had |= e->fd[k] >= 0;
        pm_close_kept(&e->fd[k]);
    }
    if (e->tasks) {
        for (int i = 0; i < e->tasks->n; i++)
            pm_close_kept(&e->tasks->fd[i]);
        free(e->tasks);
        e->tasks = NULL;
    }
    if (had && st->kept)
        st->kept--;
}

int pm_ptree_push_gone(tree_state *st, const gone *g)
{
    if (PM_VEC_RESERVE(st->gone, st->cap_gone, st->ngone + 1, 64) != 0)
        return -1;
    st->gone[st->ngone++] = *g;
    return 0;
}

/* A member is gone (its stat no longer reads, or its pid now names
 * another process): keep its last figures for settle(), forget the pid. */
void pm_ptree_vanish(tree_state *st, pent *e)
{
    if (e->state == TREE && e->dirty)
        st->orphans = 1; /* its children went to a reaper: list */
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
        if (pm_ptree_push_gone(st, &g) != 0) {
            /* Out of memory: count it as departed outright. */
            st->dep_cpu += e->cpu;
            st->dep_rb += e->rb;
            st->dep_wb += e->wb;
        }
    }
    pm_ptree_close_files(st, e);
    e->state = UNKNOWN;
    e->seen = e->cached = e->dirty = e->zombie = 0;
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
int pm_ptree_discover(tree_state *st, const pm_sctx *ctx)
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
    /* Room for the members read in this sample that the listing no
     * longer shows (below). */
    if (grow_tab(&st->next, count + st->nmembers + 16) != 0)
        return -ENOMEM;
    st->npending = 0;
    for (size_t li = 0; li < count; li++) {
        int32_t pid = st->listing[li];
        pent *old = pm_ptree_find(&st->tab, pid);
        pent *n = tab_insert(&st->next, pid);
        if (old && old->state != UNKNOWN && !old->recheck) {
            *n = *old;
            n->carried = 0;
            n->dirty = 0; /* the listing holds its children */
            old->carried = 1;
            continue;
        }
        if (old)
            pm_ptree_close_files(st, old);
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
            pent *n = pm_ptree_find(&st->next, st->pending[i]);
            if (!n || n->state != UNKNOWN)
                continue;
            if (is_root(ctx, n->pid) || (ctx->subreaper && n->ppid == self)) {
                n->state = TREE;
                changed = 1;
                continue;
            }
            pent *par = n->ppid > 0 ? pm_ptree_find(&st->next, n->ppid) : NULL;
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
        pent *n = pm_ptree_find(&st->next, st->pending[i]);
        if (n && n->state == UNKNOWN)
            n->state = OTHER;
    }
    /* Processes that are gone: release their descriptors.  A member read
     * in this sample (a listing after the members' reads) has its figures
     * in this sample's totals: it stays, for the next sample's read to
     * find it gone and account for it then (by its path: a kept
     * descriptor of a captured tree's file would still read). */
    for (size_t i = 0; i < st->tab.cap; i++) {
        pent *o = &st->tab.e[i];
        if (o->pid && !o->carried && o->state == TREE && o->seen && o->seq == st->seq) {
            pent *n = tab_insert(&st->next, o->pid);
            *n = *o;
            n->carried = 0;
            n->dirty = 0;
            n->tasks = NULL;
            o->carried = 1;
            pm_ptree_close_files(st, o);
        } else if (o->pid && !o->carried) {
            pm_ptree_vanish(st, o);
        }
    }
    st->orphans = 0;
    st->list_ns = ctx->now_mono_ns;
    ptab tmp = st->tab;
    st->tab = st->next;
    st->next = tmp;
    /* The members, so that a sample visits them alone, not every pid of
     * the node. */
    st->nmembers = 0;
    for (size_t i = 0; i < st->tab.cap; i++) {
        if (!st->tab.e[i].pid || st->tab.e[i].state != TREE)
            continue;
        if (PM_VEC_RESERVE(st->members, st->cap_members, st->nmembers + 1, 64) != 0)
            return -ENOMEM;
        st->members[st->nmembers++] = (uint32_t)i;
    }
    return 0;
}

/* Children files read in one look at most: beyond, a listing of /proc
 * costs less. */
#define MAX_CHILD_FILES 32

/* The children of thread tid of member pid (proc(5):
 * /proc/<pid>/task/<tid>/children, space-separated pids; the kernel keeps
 * a child that has exited on its parent's list until it is reaped, so a
 * zombie is there too): are they all members?  1 yes, 0 no (one is not:
 * an unknown pid, or one whose verdict is marked to be made afresh), -1
 * when the file does not read or parse. */
static int thread_children_known(tree_state *st, const pm_sctx *ctx, int32_t pid, int32_t tid)
{
    char path[48], buf[4096];
    int full = 0;
    snprintf(path, sizeof path, "%d/task/%d/children", (int)pid, (int)tid);
    ssize_t r = pm_read_small(ctx->proc_fd, path, buf, sizeof buf, &full);
    if (r < 0 || full)
        return -1;
    const char *p = buf;
    for (;;) {
        uint64_t v;
        pm_skip_blanks(&p);
        if (*p == '\0' || (*p == '\n' && p[1] == '\0'))
            return 1;
        if (pm_scan_u64(&p, &v) != 0 || v == 0 || v > INT32_MAX || (*p != ' ' && *p != '\n' && *p))
            return -1;
        pent *c = pm_ptree_find(&st->tab, (int32_t)v);
        if (c && c->state == OTHER && !ctx->any_uid)
            continue; /* another user's (-p): not followed */
        if (!c || c->state != TREE) {
            /* Known as not the tree's, yet a member's child: the pid was
             * reused since the listing that decided it. */
            if (c && c->state != UNKNOWN)
                c->recheck = 1;
            return 0;
        }
    }
}

int pm_ptree_list_threads(const pm_sctx *ctx, int32_t pid, int32_t *tid, int cap)
{
    char path[32];
    snprintf(path, sizeof path, "%d/task", (int)pid);
    int dfd = openat(ctx->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return -1;
    }
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d)) != NULL) {
        uint64_t v;
        if (de->d_name[0] == '.')
            continue;
        if (pm_parse_u64(de->d_name, &v) != 0 || v == 0 || v > INT32_MAX || n == cap) {
            n = -1;
            break;
        }
        tid[n++] = (int32_t)v;
    }
    closedir(d);
    return n;
}

int pm_ptree_children_known(tree_state *st, const pm_sctx *ctx)
{
    if (!st->children_ok || st->orphans)
        return 0;
    int files = 0;
    for (size_t m = 0; m < st->nmembers; m++) {
        pent *e = &st->tab.e[st->members[m]];
        if (!e->pid || e->state != TREE || !e->dirty)
            continue;
        if (!e->seen)
            return 0; /* its thread count is unknown */
        int32_t tid[MAX_TASKS];
        int n;
        if (e->threads <= 1) {
            tid[0] = e->pid;
            n = 1;
        } else if (e->tasks && (uint64_t)e->tasks->n == e->threads) {
            n = e->tasks->n;
            memcpy(tid, e->tasks->tid, (size_t)n * sizeof *tid);
        } else if ((n = pm_ptree_list_threads(ctx, e->pid, tid, MAX_TASKS)) <= 0) {
            return 0;
        }
        if ((files += n) > MAX_CHILD_FILES)
            return 0;
        for (int i = 0; i < n; i++)
            if (thread_children_known(st, ctx, e->pid, tid[i]) != 1)
                return 0;
    }
    for (size_t m = 0; m < st->nmembers; m++)
        st->tab.e[st->members[m]].dirty = 0;
    return 1;
}

/* The pid most recently created on the node (proc(5): /proc/loadavg,
 * fifth field), or -1.  While it does not change, no process was born and
 * the tree can only have shrunk, which failing reads reveal: the listing
 * of /proc, the costliest step, is skipped. */
int64_t pm_ptree_last_pid(tree_state *st, const pm_sctx *ctx)
{
    char buf[128];
    if (ctx->loadavg)
        snprintf(buf, sizeof buf, "%s", ctx->loadavg); /* split below writes into it */
    else if (pm_pread_kept(&st->fd_loadavg, ctx->proc_fd, "loadavg", buf, sizeof buf, NULL) <= 0)
        return -1;
    char *f[5];
    int64_t v;
    if (pm_split_fields(buf, f, 5) != 5 || pm_parse_i64(f[4], &v) != 0)
        return -1;
    return v;
}

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
    const pent *e = pm_ptree_find(&st->tab, (int32_t)pid);
    return e && e->state == TREE;
}
