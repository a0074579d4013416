/* cgroup source, finding the job's cgroup: the hierarchies mounted under
 * <sys>/fs/cgroup, the cgroup of a process from /proc/PID/cgroup, a SLURM
 * job's level, and the child cgroup made for -- CMD (src_cgroup.c).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "perfmon/buf.h"
#include "perfmon/clock.h"
#include "perfmon/fileio.h"
#include "perfmon/log.h"
#include "perfmon/parse.h"
#include "perfmon/source.h"

#include "cgroup.h"

static const struct {
    const char *name;
    unsigned bit;
} v1_ctrl[] = {
    {"cpuacct", C_CPUACCT}, {"cpu", C_CPU},   {"memory", C_MEMORY},
    {"blkio", C_BLKIO},     {"pids", C_PIDS},
};
#define NV1 (sizeof v1_ctrl / sizeof v1_ctrl[0])

/* ------------------------------------------------------------ reading */

/* Read fd from offset 0 into buf (cap bytes, NUL-terminated).  When the
 * file fills the buffer, the cut last line is dropped.  Returns the length
 * or -errno. */
ssize_t pm_cg_pread0(int fd, char *buf, size_t cap)
{
    ssize_t n;
    do
        n = pread(fd, buf, cap - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    buf[n] = '\0';
    if ((size_t)n == cap - 1) {
        char *nl = strrchr(buf, '\n');
        n = nl ? (ssize_t)(nl + 1 - buf) : 0;
        buf[n] = '\0';
    }
    return n;
}

/* The whole content of a one-value file: digits and one newline. */
int pm_cg_single_u64(char *buf, uint64_t *v)
{
    size_t len = strlen(buf);
    if (len && buf[len - 1] == '\n')
        buf[--len] = '\0';
    return pm_parse_u64(buf, v);
}

/* "MAJ:MIN" */
int pm_cg_parse_devnum(const char *s, unsigned *maj, unsigned *min)
{
    const char *p = s;
    uint64_t a, b;
    if (!isdigit((unsigned char)*p) || pm_scan_u64(&p, &a) != 0 || *p != ':')
        return -1;
    p++;
    if (!isdigit((unsigned char)*p) || pm_scan_u64(&p, &b) != 0 || *p != '\0' || a > 0xfff ||
        b > 0xfffff)
        return -1;
    *maj = (unsigned)a;
    *min = (unsigned)b;
    return 0;
}

/* ---------------------------------------------------- finding the cgroup */

/* A component of a cgroup path that names a SLURM job: `job_<digits>`, or
 * on v2 a SLUID (`s` + 13 Crockford Base32 characters, SLURM 26.05). */
static int slurm_job_name(const char *c, size_t len)
{
    if (len > 4 && strncmp(c, "job_", 4) == 0) {
        for (size_t i = 4; i < len; i++)
            if (!isdigit((unsigned char)c[i]))
                return 0;
        return 1;
    }
    return 0;
}

static int sluid_name(const char *c, size_t len)
{
    if (len != 14 || (c[0] != 's' && c[0] != 'S'))
        return 0;
    for (size_t i = 1; i < len; i++) {
        int u = toupper((unsigned char)c[i]);
        if (!(isdigit(u) || (u >= 'A' && u <= 'Z')) || u == 'I' || u == 'L' || u == 'O' || u == 'U')
            return 0;
    }
    return 1;
}

static int ends_with(const char *c, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && memcmp(c + len - n, suffix, n) == 0;
}

/* Cut path (a cgroup path) after the SLURM job's component: v2
 * `.../slurmstepd.scope/job_<id>` or `.../slurmstepd.scope/<SLUID>`, v1
 * `.../slurm/uid_<uid>/job_<id>` (`slurm_<node>/...` in builds for several
 * slurmd on one machine).  With want (SLURM_JOB_ID) a `job_<id>`
 * of another job does not count.  Returns 1 when cut, 0 when the path is
 * not in a SLURM job. */
static int slurm_job_level(char *path, const char *want)
{
    const char *prev = NULL, *prev2 = NULL;
    size_t prevlen = 0, prev2len = 0;
    char *c = path;
    while (*c == '/')
        c++;
    while (*c) {
        char *e = strchr(c, '/');
        size_t len = e ? (size_t)(e - c) : strlen(c);
        int under_scope = prev && ends_with(prev, prevlen, "slurmstepd.scope");
        /* v1: `slurm`, or `slurm_<node>` where SLURM is built for several
         * slurmd on one machine (Debian's packages are) */
        int under_uid = prev && prev2 && prevlen > 4 && strncmp(prev, "uid_", 4) == 0 &&
                        prev2len >= 5 && strncmp(prev2, "slurm", 5) == 0 &&
                        (prev2len == 5 || (prev2len > 6 && prev2[5] == '_'));
        int job = slurm_job_name(c, len) && (under_scope || under_uid);
        if (job && want && *want && (len - 4 != strlen(want) || strncmp(c + 4, want, len - 4) != 0))
            job = 0;
        if (job || (under_scope && sluid_name(c, len))) {
            c[len] = '\0';
            return 1;
        }
        prev2 = prev;
        prev2len = prevlen;
        prev = c;
        prevlen = len;
        if (!e)
            break;
        c = e + 1;
    }
    return 0;
}

/* A path from /proc/PID/cgroup that can be joined to a mount: absolute,
 * printable, no "." or ".." component. */
static int path_ok(const char *p)
{
    if (p[0] != '/' || strlen(p) >= CG_PATH)
        return 0;
    for (const char *c = p; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return 0;
    const char *c = p;
    while (*c) {
        while (*c == '/')
            c++;
        size_t len = strcspn(c, "/");
        if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
            return 0;
        c += len;
    }
    return 1;
}

/* The lines of /proc/PID/cgroup (cgroups(7)): "0::/path" for v2 (v2p),
 * "ID:ctrl[,ctrl]:/path" for v1.  For each wanted v1 controller the
 * hierarchy's controller list and path.  Returns 0, or -1 when the file
 * cannot be read (the process is gone). */
typedef struct cg_lines {
    int has_v2;
    char v2[CG_PATH];
    int has[NV1];
    char list[NV1][64];
    char path[NV1][CG_PATH];
    int bad; /* malformed lines skipped */
} cg_lines;

static int read_lines(const pm_sctx *ctx, const char *rel, cg_lines *L)
{
    memset(L, 0, sizeof *L);
    char buf[8192];
    int full = 0;
    ssize_t n = pm_read_small(ctx->proc_fd, rel, buf, sizeof buf, &full);
    if (n <= 0)
        return -1;
    if (full) {
        char *nl = strrchr(buf, '\n');
        if (nl)
            nl[1] = '\0';
    }
    char *cur = buf, *line;
    while ((line = pm_next_line(&cur)) != NULL) {
        if (!*line)
            continue;
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        uint64_t id;
        if (!c2) {
            L->bad++;
            continue;
        }
        *c1 = *c2 = '\0';
        const char *ctrls = c1 + 1, *path = c2 + 1;
        if (pm_parse_u64(line, &id) != 0 || !path_ok(path)) {
            L->bad++;
            continue;
        }
        if (id == 0 && !*ctrls) {
            L->has_v2 = 1;
            snprintf(L->v2, sizeof L->v2, "%s", path);
            continue;
        }
        if (strlen(ctrls) >= sizeof L->list[0])
            continue;
        /* each controller of the comma-separated list */
        const char *p = ctrls;
        while (*p) {
            size_t len = strcspn(p, ",");
            for (size_t k = 0; k < NV1; k++)
                if (strlen(v1_ctrl[k].name) == len && strncmp(p, v1_ctrl[k].name, len) == 0) {
                    L->has[k] = 1;
                    snprintf(L->list[k], sizeof L->list[k], "%s", ctrls);
                    snprintf(L->path[k], sizeof L->path[k], "%s", path);
                }
            p += len;
            if (*p == ',')
                p++;
        }
    }
    return 0;
}

static int exists_at(int dirfd, const char *rel)
{
    struct stat sb;
    return fstatat(dirfd, rel, &sb, 0) == 0;
}

/* Open <sys>/<mount><path> as a directory; -1 when it is not there. */
static int open_cgdir(const pm_sctx *ctx, const char *mount, const char *path)
{
    char rel[CG_PATH + 80];
    int n = snprintf(rel, sizeof rel, "%s%s", mount, strcmp(path, "/") == 0 ? "" : path);
    if (n < 0 || (size_t)n >= sizeof rel)
        return -1;
    return openat(ctx->sys_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* The hierarchies for the lines L: st->h[] filled with mount and path (no
 * directory opened yet).  Returns the cgroup version (1 or 2), or 0 when
 * there is no cgroup file system under sys. */
static int plan_hiers(const pm_sctx *ctx, const cg_lines *L, cg_state *st)
{
    st->nh = 0;
    if (exists_at(ctx->sys_fd, "fs/cgroup/cgroup.controllers")) {
        if (!L->has_v2)
            return 0;
        hier *h = &st->h[st->nh++];
        h->dirfd = h->parentfd = -1;
        h->ctrl = C_V2 | C_PSI;
        h->version = 2;
        snprintf(h->mount, sizeof h->mount, "fs/cgroup");
        snprintf(h->path, sizeof h->path, "%s", L->v2);
        return 2;
    }
    unsigned done = 0;
    for (size_t k = 0; k < NV1 && st->nh < MAX_HIER; k++) {
        if (!L->has[k] || (done & v1_ctrl[k].bit))
            continue;
        /* the mount is conventionally named after the hierarchy's
         * controller list ("cpu,cpuacct"), often with links per name */
        char mount[64];
        snprintf(mount, sizeof mount, "fs/cgroup/%s", L->list[k]);
        if (!exists_at(ctx->sys_fd, mount))
            snprintf(mount, sizeof mount, "fs/cgroup/%s", v1_ctrl[k].name);
        if (!exists_at(ctx->sys_fd, mount))
            continue;
        hier *h = &st->h[st->nh++];
        h->dirfd = h->parentfd = -1;
        h->version = 1;
        snprintf(h->mount, sizeof h->mount, "%s", mount);
        snprintf(h->path, sizeof h->path, "%s", L->path[k]);
        /* every wanted controller of this hierarchy */
        for (size_t j = k; j < NV1; j++)
            if (L->has[j] && strcmp(L->list[j], L->list[k]) == 0)
                h->ctrl |= v1_ctrl[j].bit;
        done |= h->ctrl;
    }
    if (L->has_v2 && st->nh < MAX_HIER &&
        exists_at(ctx->sys_fd, "fs/cgroup/unified/cgroup.controllers")) {
        hier *h = &st->h[st->nh++];
        h->dirfd = h->parentfd = -1;
        h->ctrl = C_PSI;
        h->version = 2;
        snprintf(h->mount, sizeof h->mount, "fs/cgroup/unified");
        snprintf(h->path, sizeof h->path, "%s", L->v2);
    }
    if (st->nh == 0)
        return 0;
    return st->h[0].version;
}

/* Open the planned hierarchies' directories.  take_root: the root cgroup
 * counts (only where perfmon makes a child in it).  A hierarchy whose
 * directory is missing or that is the root is dropped.  Returns the count
 * kept. */
static size_t open_hiers(const pm_sctx *ctx, cg_state *st, int take_root)
{
    size_t k = 0;
    for (size_t i = 0; i < st->nh; i++) {
        hier h = st->h[i];
        h.dirfd = h.parentfd = -1;
        if (!take_root && strcmp(h.path, "/") == 0)
            continue;
        h.dirfd = open_cgdir(ctx, h.mount, h.path);
        if (h.dirfd < 0) {
            pm_cg_add_note(st, "cgroup: %s%s not found under %s (%s)", h.mount, h.path,
                           ctx->sys_root, strerror(errno));
            continue;
        }
        st->h[k++] = h;
    }
    st->nh = k;
    return k;
}

void pm_cg_close_hiers(cg_state *st)
{
    for (size_t i = 0; i < st->nh; i++) {
        pm_close_kept(&st->h[i].dirfd);
        pm_close_kept(&st->h[i].parentfd);
    }
    st->nh = 0;
}

/* Remove the `perfmon-<pid>` cgroups under dirfd that samplers killed
 * before their end left behind: only those whose pid is gone, and rmdir
 * removes only a cgroup without processes or children. */
static void remove_stale(int dirfd)
{
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t pid;
        if (strncmp(e->d_name, "perfmon-", 8) != 0 || pm_parse_u64(e->d_name + 8, &pid) != 0 ||
            pid == 0 || pid > 0x3fffffff || (pid_t)pid == getpid())
            continue;
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
            unlinkat(dirfd, e->d_name, AT_REMOVEDIR);
    }
    closedir(d);
}

/* Make `perfmon-<pid>` in each hierarchy's cgroup (those just opened) and
 * make it the hierarchy's directory.  Returns 0, or -errno with nothing
 * left behind.  The hybrid system's unified mount (pressure only) is
 * optional: where it fails, it is dropped with a note. */
static int make_children(cg_state *st, char *why, size_t cap)
{
    size_t k = 0;
    char name[32];
    snprintf(name, sizeof name, "perfmon-%d", (int)getpid());
    for (size_t i = 0; i < st->nh; i++) {
        hier *h = &st->h[i];
        /* only in a cgroup file system (statfs(2) magic numbers), never in
         * a captured tree given as --sys-root */
        struct statfs sf;
        int rc = -1;
        if (fstatfs(h->dirfd, &sf) != 0)
            sf.f_type = 0;
        if (sf.f_type != 0x27e0eb && sf.f_type != 0x63677270) {
            errno = ENOTSUP;
        } else {
            remove_stale(h->dirfd);
            rc = mkdirat(h->dirfd, name, 0755);
        }
        if (rc != 0 && errno == EEXIST && unlinkat(h->dirfd, name, AT_REMOVEDIR) == 0)
            rc = mkdirat(h->dirfd, name, 0755); /* a leftover of an earlier pid */
        int fd = rc == 0 ? openat(h->dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (fd < 0) {
            int e = errno;
            snprintf(why, cap, "cannot make %s%s/%s: %s", h->mount,
                     strcmp(h->path, "/") == 0 ? "" : h->path, name,
                     e == ENOTSUP ? "not a cgroup file system" : strerror(e));
            if (rc == 0)
                unlinkat(h->dirfd, name, AT_REMOVEDIR);
            if (h->ctrl == C_PSI) {
                pm_cg_add_note(st, "cgroup: no pressure columns (%s)", why);
                close(h->dirfd);
                continue;
            }
            for (size_t j = 0; j < k; j++) {
                close(st->h[j].dirfd);
                unlinkat(st->h[j].parentfd, st->h[j].made, AT_REMOVEDIR);
                st->h[j].dirfd = st->h[j].parentfd;
                st->h[j].parentfd = -1;
                st->h[j].made[0] = '\0';
            }
            return -e;
        }
        h->parentfd = h->dirfd;
        h->dirfd = fd;
        snprintf(h->made, sizeof h->made, "%s", name);
        size_t len = strlen(h->path);
        snprintf(h->path + len, sizeof h->path - len, "%s%s", len > 1 ? "/" : "", name);
        st->h[k++] = *h;
    }
    st->nh = k;
    return 0;
}

/* Remove the cgroups made for CMD: after it has gone, the kernel may need
 * a moment to see the cgroup empty (EBUSY), so a few short tries. */
void pm_cg_remove_children(cg_state *st)
{
    for (size_t i = 0; i < st->nh; i++) {
        hier *h = &st->h[i];
        if (!h->made[0])
            continue;
        pm_close_kept(&h->dirfd);
        int rc = -1;
        for (int t = 0; t < 20; t++) {
            rc = unlinkat(h->parentfd, h->made, AT_REMOVEDIR);
            if (rc == 0 || errno != EBUSY)
                break;
            usleep(5000);
        }
        if (rc != 0 && errno != ENOENT)
            pm_log(PM_LOG_WARN, "cgroup: %s%s not removed: %s", h->mount, h->path,
                   errno == EBUSY ? "processes of the command still run in it" : strerror(errno));
        h->made[0] = '\0';
    }
}

/* Find the cgroup: returns 1 when found (st->h[] open, version, level and
 * from_pid set), 0 when there is none (reason in why). */
int pm_cg_find(const pm_sctx *ctx, cg_state *st, char *why, size_t cap)
{
    cg_lines *L = malloc(sizeof *L);
    if (!L) {
        snprintf(why, cap, "out of memory");
        return 0;
    }
    int found = 0;
    pid_t self = getpid();
    int cmd = ctx->nroots > 0 && ctx->roots[0] <= 0; /* -- CMD, not started yet */
    if (cmd) {
        /* CMD goes into a cgroup made under the sampler's own. */
        if (read_lines(ctx, "self/cgroup", L) != 0 || (st->version = plan_hiers(ctx, L, st)) == 0) {
            snprintf(why, cap, "no cgroup file system under %s/fs/cgroup", ctx->sys_root);
            pm_cg_add_note(
                st, "cgroup: cannot make a cgroup for the command (%s): no cgroup columns", why);
            goto out;
        }
        /* A cgroup perfmon makes has no CPU limit of its own, and cpu.stat
         * counts only the throttling by the cgroup's own limit (not its
         * parents'): a v1 hierarchy of the cpu controller alone has
         * nothing to give it. */
        size_t kept = 0;
        for (size_t i = 0; i < st->nh; i++)
            if (st->h[i].ctrl != C_CPU)
                st->h[kept++] = st->h[i];
        st->nh = kept;
        hier *keep = malloc(sizeof st->h);
        size_t nkeep = st->nh;
        if (!keep) {
            snprintf(why, cap, "out of memory");
            goto out;
        }
        memcpy(keep, st->h, sizeof st->h);
        if (open_hiers(ctx, st, 1) > 0) {
            int rc = make_children(st, why, cap);
            if (rc == 0) {
                st->created = 1;
                st->level = "created";
                st->from_pid = self;
                found = 1;
                free(keep);
                goto out;
            }
            pm_cg_add_note(st, "cgroup: cannot make a cgroup for the command (%s)%s", why,
                           rc == -EACCES || rc == -EPERM || rc == -EROFS
                               ? ": run as root or in a delegated cgroup"
                               : "");
            pm_cg_close_hiers(st);
        } else {
            pm_cg_add_note(st,
                           "cgroup: cannot make a cgroup for the command (the sampler's cgroup "
                           "directories are not under %s/fs/cgroup)",
                           ctx->sys_root);
        }
        /* fall back to the sampler's own cgroup, when it is a job's */
        memcpy(st->h, keep, sizeof st->h);
        st->nh = nkeep;
        free(keep);
        size_t k = 0;
        for (size_t i = 0; i < st->nh; i++)
            if (slurm_job_level(st->h[i].path, ctx->slurm_job))
                st->h[k++] = st->h[i];
        st->nh = k;
        if (k == 0 || open_hiers(ctx, st, 0) == 0) {
            snprintf(why, cap, "the sampler's own cgroup is not a job's: no cgroup columns");
            pm_cg_add_note(st, "cgroup: %s", why);
            goto out;
        }
        st->level = "job";
        st->from_pid = self;
        found = 1;
        goto out;
    }
    char rel[48];
    pid_t pid = ctx->nroots > 0 ? ctx->roots[0] : self;
    if (ctx->nroots > 0)
        snprintf(rel, sizeof rel, "%d/cgroup", (int)pid);
    else if (ctx->slurm_job)
        snprintf(rel, sizeof rel, "self/cgroup");
    else {
        snprintf(why, cap, "no job to follow (a system-wide run)");
        goto out;
    }
    if (read_lines(ctx, rel, L) != 0) {
        snprintf(why, cap, "%s/%s cannot be read", ctx->proc_root, rel);
        goto out;
    }
    if ((st->version = plan_hiers(ctx, L, st)) == 0) {
        snprintf(why, cap, "no cgroup file system under %s/fs/cgroup", ctx->sys_root);
        goto out;
    }
    /* in a SLURM job: the job's level, and only the hierarchies that
     * hold the job */
    size_t k = 0;
    for (size_t i = 0; i < st->nh; i++)
        if (slurm_job_level(st->h[i].path, ctx->slurm_job))
            st->h[k++] = st->h[i];
    int slurm = k > 0;
    if (ctx->slurm_job && !slurm) {
        snprintf(why, cap, "the sampler's cgroup is not in SLURM job %s's", ctx->slurm_job);
        goto out;
    }
    if (slurm)
        st->nh = k;
    size_t nroot = 0, nplan = st->nh;
    for (size_t i = 0; i < st->nh; i++)
        nroot += strcmp(st->h[i].path, "/") == 0;
    if (open_hiers(ctx, st, 0) == 0) {
        if (nroot == nplan)
            snprintf(why, cap, "process %d is in no cgroup of its own (the root cgroup)", (int)pid);
        else
            snprintf(why, cap, "the cgroup directories of process %d are not under %s/fs/cgroup",
                     (int)pid, ctx->sys_root);
        goto out;
    }
    st->level = slurm ? "job" : "process";
    st->from_pid = ctx->nroots > 0 ? pid : self;
    found = 1;
out:
    if (found && L->bad)
        pm_cg_add_note(st, "cgroup: %d malformed line(s) of /proc/%d/cgroup ignored", L->bad,
                       (int)st->from_pid);
    free(L);
    return found;
}
