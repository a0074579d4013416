/* cgroup source: the kernel's own accounting of the job's cgroup.
 *
 * Which cgroup (docs/perfmon-sample.md, "The job's cgroup"):
 * - `-- CMD`: a fresh child cgroup `perfmon-<sampler pid>` made under the
 *   sampler's own cgroup (each v1 hierarchy, or v2), into which CMD is
 *   moved (adopt) before it is released from its start gate, removed at
 *   close; when it cannot be made, the sampler's own cgroup if that is a
 *   SLURM job's, otherwise nothing (and a note says why);
 * - `-p PID`: the cgroup of that process (a SLURM job's level when it is in
 *   one);
 * - inside a SLURM job: the job's cgroup from the sampler's own cgroup.
 * The cgroup is always read from /proc/PID/cgroup (cgroups(7)): `0::/path`
 * on v2, `ID:controllers:/path` per v1 hierarchy.  The hierarchies are
 * under <sys>/fs/cgroup: v2 when it holds cgroup.controllers; otherwise v1
 * mounts named after their controllers (`cpu,cpuacct` or `cpuacct`), and
 * on a hybrid system the cgroup2 mount `unified` gives the pressure files.
 *
 * Files (Documentation/admin-guide/cgroup-v2.rst, cgroup-v1/) are
 * opened once at open() and read with pread(fd, ..., 0) every sample.  A
 * file the kernel does not have is left out with one note; a value that
 * does not parse is not recorded.
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

#define CG_PATH 1024 /* longest cgroup path taken */
#define CG_BUF 16384 /* bounded read of one file (memory.stat is ~3 KiB) */
#define MAX_HIER 6
#define MAX_FILES 24
#define MAX_KEYS 6
#define MAX_DISKS 64
#define MAX_NOTES 24
#define NOTE_LEN 320
/* v1 memory.limit_in_bytes when no limit is set: PAGE_COUNTER_MAX pages,
 * 0x7FFFFFFFFFFFF000 with 4 KiB pages; anything from 2^62 on is taken as
 * unlimited (no machine has 4 EiB). */
#define V1_UNLIMITED (1ull << 62)

/* Controllers (v1 hierarchies) and the parts of a v2 cgroup. */
enum {
    C_CPUACCT = 1,
    C_CPU = 2,
    C_MEMORY = 4,
    C_BLKIO = 8,
    C_PIDS = 16,
    C_PSI = 32, /* the pressure files: v2 only (hybrid: the unified mount) */
    C_V2 = 64,  /* the cpu.stat, memory.*, io.*, pids.* files of v2 */
};

static const struct {
    const char *name;
    unsigned bit;
} v1_ctrl[] = {
    {"cpuacct", C_CPUACCT}, {"cpu", C_CPU},   {"memory", C_MEMORY},
    {"blkio", C_BLKIO},     {"pids", C_PIDS},
};
#define NV1 (sizeof v1_ctrl / sizeof v1_ctrl[0])

enum { K_SINGLE, K_LIMIT, K_KEYED, K_PSI, K_IOSTAT, K_BLKIO };
enum { S_RAW, S_USEC, S_NSEC, S_TICK };
/* How often a file is read (docs/format.md, "The job's cgroup"):
 *   W_EVERY  every sample: the job's CPU and memory, the accounting itself;
 *   W_SLOW   at the first sample, then every --pss-interval, like PSS:
 *            gauges that change slowly or cost most to read (memory.stat
 *            sums per-CPU counters, and on v2 flushes them first: about a
 *            third of a sample's cost on v1); the analysis holds a sparse
 *            gauge;
 *   W_RARE   at most every PM_RARE_NS and at the first and the last sample
 *            (source.h, pm_sctx_rare_due): the split of the CPU time, the
 *            I/O and pressure counters (the analysis spreads a sparse
 *            counter's rate over the span between its readings), the
 *            limit's event counters and the high-water marks (only their
 *            rises and last values count). */
enum { W_EVERY, W_SLOW, W_RARE };

typedef struct field {
    const char *key; /* keyed files: the key; PSI: "some"/"full" */
    const char *col;
    const char *unit;
    int kind;  /* PM_COUNTER or PM_GAUGE */
    int scale; /* S_RAW: a u64 column; else seconds in an f64 column */
} field;

typedef struct spec {
    unsigned ctrl;
    const char *file;
    const char *alt; /* read instead when file is absent (may be NULL) */
    int kind;
    int when;        /* W_*: how often it is read */
    const char *why; /* why the kernel may lack it (note), or NULL */
    field f[MAX_KEYS];
} spec;

#define CNT PM_COUNTER
#define GAU PM_GAUGE

/* docs/format.md, "The job's cgroup": one row per file. */
static const spec specs[] = {
    /* v2 (cgroup-v2.rst) */
    {C_V2,
     "cpu.stat",
     NULL,
     K_KEYED,
     W_EVERY,
     NULL,
     {{"usage_usec", "cg.cpu_usage", "s", CNT, S_USEC},
      {"user_usec", "cg.cpu_user", "s", CNT, S_USEC},
      {"system_usec", "cg.cpu_system", "s", CNT, S_USEC},
      {"nr_periods", "cg.cpu_periods", "1", CNT, S_RAW},
      {"nr_throttled", "cg.cpu_throttled_periods", "1", CNT, S_RAW},
      {"throttled_usec", "cg.cpu_throttled", "s", CNT, S_USEC}}},
    {C_V2,
     "memory.current",
     NULL,
     K_SINGLE,
     W_EVERY,
     NULL,
     {{NULL, "cg.mem_current", "B", GAU, S_RAW}}},
    {C_V2,
     "memory.peak",
     NULL,
     K_SINGLE,
     W_RARE,
     "Linux before 5.19",
     {{NULL, "cg.mem_peak", "B", GAU, S_RAW}}},
    {C_V2, "memory.max", NULL, K_LIMIT, W_SLOW, NULL, {{NULL, "cg.mem_limit", "B", GAU, S_RAW}}},
    {C_V2,
     "memory.stat",
     NULL,
     K_KEYED,
     W_SLOW,
     NULL,
     {{"anon", "cg.mem_anon", "B", GAU, S_RAW},
      {"file", "cg.mem_file", "B", GAU, S_RAW},
      {"kernel", "cg.mem_kernel", "B", GAU, S_RAW}}},
    {C_V2,
     "memory.events",
     NULL,
     K_KEYED,
     W_RARE,
     NULL,
     {{"low", "cg.mem_events_low", "1", CNT, S_RAW},
      {"high", "cg.mem_events_high", "1", CNT, S_RAW},
      {"max", "cg.mem_events_max", "1", CNT, S_RAW},
      {"oom", "cg.mem_events_oom", "1", CNT, S_RAW},
      {"oom_kill", "cg.mem_events_oom_kill", "1", CNT, S_RAW}}},
    {C_V2, "io.stat", NULL, K_IOSTAT, W_RARE, NULL, {{0}}},
    {C_V2, "pids.current", NULL, K_SINGLE, W_RARE, NULL, {{NULL, "cg.pids", "1", GAU, S_RAW}}},
    {C_PSI,
     "cpu.pressure",
     NULL,
     K_PSI,
     W_RARE,
     "PSI off in this kernel (psi=0 or no CONFIG_PSI)",
     {{"some", "cg.psi_cpu_some", "s", CNT, S_USEC},
      {"full", "cg.psi_cpu_full", "s", CNT, S_USEC}}},
    {C_PSI,
     "memory.pressure",
     NULL,
     K_PSI,
     W_RARE,
     "PSI off in this kernel (psi=0 or no CONFIG_PSI)",
     {{"some", "cg.psi_mem_some", "s", CNT, S_USEC},
      {"full", "cg.psi_mem_full", "s", CNT, S_USEC}}},
    {C_PSI,
     "io.pressure",
     NULL,
     K_PSI,
     W_RARE,
     "PSI off in this kernel (psi=0 or no CONFIG_PSI)",
     {{"some", "cg.psi_io_some", "s", CNT, S_USEC}, {"full", "cg.psi_io_full", "s", CNT, S_USEC}}},
    /* v1 (cgroup-v1/cpuacct.rst, memory.rst, blkio-controller.rst, pids.rst;
     * scheduler/sched-bwc.rst for cpu.stat) */
    {C_CPUACCT,
     "cpuacct.usage",
     NULL,
     K_SINGLE,
     W_EVERY,
     NULL,
     {{NULL, "cg.cpu_usage", "s", CNT, S_NSEC}}},
    {C_CPUACCT,
     "cpuacct.stat",
     NULL,
     K_KEYED,
     W_RARE,
     NULL,
     {{"user", "cg.cpu_user", "s", CNT, S_TICK}, {"system", "cg.cpu_system", "s", CNT, S_TICK}}},
    {C_CPU,
     "cpu.stat",
     NULL,
     K_KEYED,
     W_RARE,
     "no CFS bandwidth control in this kernel",
     {{"nr_periods", "cg.cpu_periods", "1", CNT, S_RAW},
      {"nr_throttled", "cg.cpu_throttled_periods", "1", CNT, S_RAW},
      {"throttled_time", "cg.cpu_throttled", "s", CNT, S_NSEC}}},
    {C_MEMORY,
     "memory.usage_in_bytes",
     NULL,
     K_SINGLE,
     W_EVERY,
     NULL,
     {{NULL, "cg.mem_current", "B", GAU, S_RAW}}},
    {C_MEMORY,
     "memory.max_usage_in_bytes",
     NULL,
     K_SINGLE,
     W_RARE,
     NULL,
     {{NULL, "cg.mem_peak", "B", GAU, S_RAW}}},
    {C_MEMORY,
     "memory.limit_in_bytes",
     NULL,
     K_LIMIT,
     W_SLOW,
     NULL,
     {{NULL, "cg.mem_limit", "B", GAU, S_RAW}}},
    {C_MEMORY,
     "memory.stat",
     NULL,
     K_KEYED,
     W_SLOW,
     NULL,
     {{"total_rss", "cg.mem_anon", "B", GAU, S_RAW},
      {"total_cache", "cg.mem_file", "B", GAU, S_RAW}}},
    {C_MEMORY,
     "memory.kmem.usage_in_bytes",
     NULL,
     K_SINGLE,
     W_SLOW,
     "no kernel memory accounting (CONFIG_MEMCG_KMEM)",
     {{NULL, "cg.mem_kernel", "B", GAU, S_RAW}}},
    {C_MEMORY,
     "memory.failcnt",
     NULL,
     K_SINGLE,
     W_RARE,
     NULL,
     {{NULL, "cg.mem_events_max", "1", CNT, S_RAW}}},
    {C_MEMORY,
     "memory.oom_control",
     NULL,
     K_KEYED,
     W_RARE,
     NULL,
     {{"oom_kill", "cg.mem_events_oom_kill", "1", CNT, S_RAW}}},
    {C_BLKIO,
     "blkio.throttle.io_service_bytes_recursive",
     "blkio.throttle.io_service_bytes",
     K_BLKIO,
     W_RARE,
     NULL,
     {{"bytes", NULL, NULL, 0, 0}}},
    {C_BLKIO,
     "blkio.throttle.io_serviced_recursive",
     "blkio.throttle.io_serviced",
     K_BLKIO,
     W_RARE,
     NULL,
     {{"ops", NULL, NULL, 0, 0}}},
    {C_PIDS, "pids.current", NULL, K_SINGLE, W_RARE, NULL, {{NULL, "cg.pids", "1", GAU, S_RAW}}},
};
#define NSPECS (sizeof specs / sizeof specs[0])

/* One cgroup directory: a v1 hierarchy's, the v2 one, or (hybrid) the
 * unified mount's for the pressure files. */
typedef struct hier {
    unsigned ctrl;
    int version;
    char mount[64];     /* under sys: "fs/cgroup/cpu,cpuacct" */
    char path[CG_PATH]; /* the cgroup, from /proc/PID/cgroup */
    int dirfd;          /* the cgroup's directory */
    int parentfd;       /* created: the directory it was made in */
    char made[32];      /* created: its name, "" otherwise */
    int off;            /* CMD could not be moved into it: not read */
} hier;

typedef struct cgfile {
    const spec *sp;
    size_t hi;        /* its hierarchy in st->h */
    const char *name; /* the name opened (spec file or alt) */
    int fd;
    int col[MAX_KEYS];
    int bad_noted;
} cgfile;

typedef struct disk {
    char name[32];
    unsigned maj, min;
    int col[4]; /* read_bytes, write_bytes, read_ops, write_ops */
} disk;

typedef struct cg_state {
    hier h[MAX_HIER];
    size_t nh;
    cgfile f[MAX_FILES];
    size_t nf;
    disk d[MAX_DISKS];
    size_t nd;
    int io_tot[4]; /* cg.io_read_bytes, _write_bytes, _read_ops, _write_ops */
    long clk_tck;
    int created;   /* perfmon made the cgroups for CMD */
    int adopted;   /* CMD is in them (or nothing needs adopting) */
    int dead;      /* nothing to record (adopting failed) */
    int announced; /* the notes were written */
    int version;
    pid_t from_pid;
    const char *level;
    int64_t slow_due; /* mono time the slow files are read again */
    int64_t rare_due; /* and the rare ones (pm_sctx_rare_due) */
    char notes[MAX_NOTES][NOTE_LEN];
    size_t nnotes;
    char *buf;
} cg_state;

static void add_note(cg_state *st, const char *fmt, ...) PM_PRINTF(2, 3);
static void add_note(cg_state *st, const char *fmt, ...)
{
    if (st->nnotes == MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->notes[st->nnotes++], NOTE_LEN, fmt, ap);
    va_end(ap);
    pm_log(PM_LOG_INFO, "%s", st->notes[st->nnotes - 1]);
}

/* ------------------------------------------------------------ reading */

/* Read fd from offset 0 into buf (cap bytes, NUL-terminated).  When the
 * file fills the buffer, the cut last line is dropped.  Returns the length
 * or -errno. */
static ssize_t pread0(int fd, char *buf, size_t cap)
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
static int single_u64(char *buf, uint64_t *v)
{
    size_t len = strlen(buf);
    if (len && buf[len - 1] == '\n')
        buf[--len] = '\0';
    return pm_parse_u64(buf, v);
}

/* "MAJ:MIN" */
static int parse_devnum(const char *s, unsigned *maj, unsigned *min)
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
            add_note(st, "cgroup: %s%s not found under %s (%s)", h.mount, h.path, ctx->sys_root,
                     strerror(errno));
            continue;
        }
        st->h[k++] = h;
    }
    st->nh = k;
    return k;
}

static void close_hiers(cg_state *st)
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
                add_note(st, "cgroup: no pressure columns (%s)", why);
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
static void remove_children(cg_state *st)
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

/* ---------------------------------------------------------- the files */

static int add_col(pm_schema *s, const char *name, const char *unit, int kind, int scale)
{
    return pm_schema_add(s, name, unit, kind, scale == S_RAW ? PM_U64 : PM_F64, "cgroup", 0);
}

/* Is key a line's first word in text? */
static int has_key(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, key, n) == 0 && (p[n] == ' ' || p[n] == '\t'))
            return 1;
    return 0;
}

static const char *const disk_skip[] = {"loop", "ram", "zram", "dm-", "md", "nbd", NULL};

/* The whole disks of <sys>/block at start, less stacked and virtual ones
 * (their I/O reaches a disk below them), with MAJ:MIN from block/D/dev. */
static void list_disks(const pm_sctx *ctx, cg_state *st)
{
    int fd = openat(ctx->sys_fd, "block", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL && st->nd < MAX_DISKS) {
        const char *n = e->d_name;
        int skip = n[0] == '.' || strlen(n) >= sizeof st->d[0].name;
        for (int i = 0; !skip && disk_skip[i]; i++)
            skip = strncmp(n, disk_skip[i], strlen(disk_skip[i])) == 0;
        for (const char *c = n; !skip && *c; c++)
            skip = !(isalnum((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.');
        if (skip)
            continue;
        char rel[96], buf[64];
        snprintf(rel, sizeof rel, "block/%s/dev", n);
        disk *k = &st->d[st->nd];
        if (pm_read_small(ctx->sys_fd, rel, buf, sizeof buf, NULL) <= 0 ||
            (buf[strcspn(buf, "\n")] = '\0', parse_devnum(buf, &k->maj, &k->min) != 0))
            continue;
        snprintf(k->name, sizeof k->name, "%s", n);
        st->nd++;
    }
    closedir(d);
    /* sorted, so the columns come in a stable order */
    for (size_t i = 1; i < st->nd; i++)
        for (size_t j = i; j > 0 && strcmp(st->d[j - 1].name, st->d[j].name) > 0; j--) {
            disk t = st->d[j];
            st->d[j] = st->d[j - 1];
            st->d[j - 1] = t;
        }
}

static int io_columns(const pm_sctx *ctx, cg_state *st, pm_schema *s)
{
    static const char *const tot[4] = {"cg.io_read_bytes", "cg.io_write_bytes", "cg.io_read_ops",
                                       "cg.io_write_ops"};
    static const char *const per[4] = {"read_bytes", "write_bytes", "read_ops", "write_ops"};
    if (st->io_tot[0] >= 0)
        return 0; /* one of the two blkio files added them */
    list_disks(ctx, st);
    for (int i = 0; i < 4; i++)
        if ((st->io_tot[i] = add_col(s, tot[i], i < 2 ? "B" : "1", CNT, S_RAW)) < 0)
            return st->io_tot[i];
    for (size_t k = 0; k < st->nd; k++)
        for (int i = 0; i < 4; i++) {
            char name[96];
            snprintf(name, sizeof name, "cg.io.%s.%s", st->d[k].name, per[i]);
            if ((st->d[k].col[i] = add_col(s, name, i < 2 ? "B" : "1", CNT, S_RAW)) < 0)
                return st->d[k].col[i];
        }
    return 0;
}

/* v2 cgroup.controllers of h: which of memory, io, pids the cgroup has
 * (the cpu.stat usage fields and the pressure files are always there). */
static unsigned v2_missing(const hier *h, unsigned *mask)
{
    char buf[512];
    *mask = 0;
    int fd = openat(h->dirfd, "cgroup.controllers", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = pread0(fd, buf, sizeof buf);
    close(fd);
    if (n < 0)
        return 0;
    char *f[32];
    size_t nf = pm_split_fields(buf, f, 32);
    unsigned have = 0;
    for (size_t i = 0; i < nf; i++) {
        if (strcmp(f[i], "memory") == 0)
            have |= 1;
        if (strcmp(f[i], "io") == 0)
            have |= 2;
        if (strcmp(f[i], "pids") == 0)
            have |= 4;
    }
    *mask = ~have & 7u;
    return 1;
}

/* cpu.stat's throttling keys (v2 and v1) */
static int throttle_key(const char *key)
{
    return strcmp(key, "nr_periods") == 0 || strncmp(key, "nr_throttled", 12) == 0 ||
           strncmp(key, "throttled_", 10) == 0;
}

static unsigned spec_controller(const spec *sp)
{
    if (sp->kind == K_PSI)
        return 0; /* pressure is tracked for every v2 cgroup */
    if (strncmp(sp->file, "memory.", 7) == 0)
        return 1;
    if (strncmp(sp->file, "io.stat", 7) == 0)
        return 2;
    if (strncmp(sp->file, "pids.", 5) == 0)
        return 4;
    return 0;
}

/* Open every file the hierarchies have and add its columns. */
static int open_files(const pm_sctx *ctx, cg_state *st, pm_schema *s)
{
    for (size_t i = 0; i < st->nh; i++) {
        hier *h = &st->h[i];
        unsigned off = 0;
        if (h->ctrl & C_V2) {
            v2_missing(h, &off);
            static const char *const cname[3] = {"memory", "io", "pids"};
            for (int b = 0; b < 3; b++)
                if (off & (1u << b))
                    add_note(st,
                             "cgroup: no %s accounting: the %s controller is not enabled for %s "
                             "(its parent's cgroup.subtree_control)",
                             cname[b], cname[b], h->path);
        }
        for (size_t k = 0; k < NSPECS; k++) {
            const spec *sp = &specs[k];
            if (!(sp->ctrl & h->ctrl) || (spec_controller(sp) & off) || st->nf == MAX_FILES)
                continue;
            if (st->created && sp->ctrl == C_CPU)
                continue;
            if (sp->ctrl == C_PSI && h->version != 2)
                continue;
            cgfile *f = &st->f[st->nf];
            memset(f, 0, sizeof *f);
            f->sp = sp;
            f->hi = i;
            f->name = sp->file;
            f->fd = openat(h->dirfd, sp->file, O_RDONLY | O_CLOEXEC);
            if (f->fd < 0 && sp->alt) {
                f->name = sp->alt;
                f->fd = openat(h->dirfd, sp->alt, O_RDONLY | O_CLOEXEC);
            }
            if (f->fd < 0) {
                add_note(st, "cgroup: %s not available%s%s%s", sp->file, sp->why ? " (" : "",
                         sp->why ? sp->why : "", sp->why ? ")" : "");
                continue;
            }
            ssize_t n = pread0(f->fd, st->buf, CG_BUF);
            if (n < 0) {
                add_note(st, "cgroup: %s cannot be read: %s", sp->file, strerror((int)-n));
                close(f->fd);
                continue;
            }
            int rc = 0, cols = 0;
            char missing[160] = "";
            for (int j = 0; j < MAX_KEYS; j++)
                f->col[j] = -1;
            if (sp->kind == K_IOSTAT || sp->kind == K_BLKIO) {
                rc = io_columns(ctx, st, s);
                cols = 1;
            } else {
                for (int j = 0; j < MAX_KEYS && sp->f[j].col; j++) {
                    if (st->created && sp->f[j].key && throttle_key(sp->f[j].key))
                        continue;
                    if (sp->kind == K_KEYED || sp->kind == K_PSI) {
                        if (!has_key(st->buf, sp->f[j].key)) {
                            size_t len = strlen(missing);
                            snprintf(missing + len, sizeof missing - len, "%s%s", len ? ", " : "",
                                     sp->f[j].key);
                            continue;
                        }
                    }
                    f->col[j] =
                        add_col(s, sp->f[j].col, sp->f[j].unit, sp->f[j].kind, sp->f[j].scale);
                    if (f->col[j] < 0) {
                        rc = f->col[j];
                        break;
                    }
                    cols++;
                }
            }
            if (rc < 0) {
                close(f->fd);
                return rc;
            }
            if (missing[0])
                add_note(st, "cgroup: %s has no %s%s", sp->file, missing,
                         sp->ctrl == C_V2 && strcmp(sp->file, "cpu.stat") == 0
                             ? " (the cpu controller is not enabled for the cgroup)"
                             : "");
            if (!cols) {
                close(f->fd);
                continue;
            }
            st->nf++;
        }
    }
    if (st->created)
        add_note(st, "cgroup: no CPU throttling columns: the cgroup made for the command has "
                     "no CPU limit of its own, and cpu.stat counts only the throttling by a "
                     "cgroup's own limit");
    return 0;
}

/* -------------------------------------------------------- parse a sample */

static void put(cg_state *st, pm_sample *s, int col, int scale, uint64_t v)
{
    switch (scale) {
    case S_RAW: pm_sample_u64(s, col, v); break;
    case S_USEC: pm_sample_f64(s, col, (double)v / 1e6); break;
    case S_NSEC: pm_sample_f64(s, col, (double)v / 1e9); break;
    default:
        pm_sample_f64(s, col, (double)v / (double)(st->clk_tck > 0 ? st->clk_tck : 100));
        break;
    }
}

static void bad(cg_state *st, cgfile *f, const char *line)
{
    if (f->bad_noted)
        return;
    f->bad_noted = 1;
    char shown[48];
    snprintf(shown, sizeof shown, "%s", line);
    add_note(st, "cgroup: %s: malformed line ignored (starting \"%s\")", f->name, shown);
    st->announced = 0; /* written at the next sample */
}

/* "key value" lines: cpu.stat, memory.stat, memory.events, cpuacct.stat,
 * memory.oom_control. */
static void parse_keyed(cg_state *st, cgfile *f, char *text, pm_sample *s)
{
    char *cur = text, *line;
    unsigned seen = 0;
    while ((line = pm_next_line(&cur)) != NULL) {
        char *fl[3];
        size_t n = pm_split_fields(line, fl, 3);
        if (n == 0)
            continue;
        for (int j = 0; j < MAX_KEYS && f->sp->f[j].col; j++) {
            if (f->col[j] < 0 || strcmp(fl[0], f->sp->f[j].key) != 0 || (seen & (1u << j)))
                continue;
            uint64_t v;
            seen |= 1u << j; /* the first line of a key counts, even malformed */
            if (n != 2 || pm_parse_u64(fl[1], &v) != 0) {
                bad(st, f, fl[0]);
                break;
            }
            put(st, s, f->col[j], f->sp->f[j].scale, v);
        }
    }
}

/* PSI: "some avg10=0.00 avg60=0.00 avg300=0.00 total=<us>" and "full ...". */
static void parse_psi(cg_state *st, cgfile *f, char *text, pm_sample *s)
{
    char *cur = text, *line;
    while ((line = pm_next_line(&cur)) != NULL) {
        char *fl[6];
        size_t n = pm_split_fields(line, fl, 6);
        if (n == 0)
            continue;
        uint64_t v;
        const char *tot = n == 5 ? fl[4] : NULL;
        if (!tot || strncmp(tot, "total=", 6) != 0 || pm_parse_u64(tot + 6, &v) != 0) {
            bad(st, f, fl[0]);
            continue;
        }
        for (int j = 0; j < 2; j++)
            if (f->col[j] >= 0 && strcmp(fl[0], f->sp->f[j].key) == 0)
                put(st, s, f->col[j], S_USEC, v);
    }
}

static disk *find_disk(cg_state *st, unsigned maj, unsigned min)
{
    for (size_t k = 0; k < st->nd; k++)
        if (st->d[k].maj == maj && st->d[k].min == min)
            return &st->d[k];
    return NULL;
}

/* v2 io.stat: "MAJ:MIN rbytes=N wbytes=N rios=N wios=N dbytes=N dios=N"
 * (more keys on some kernels, e.g. cost.* with io.cost).  A device without
 * a line has done no I/O in the cgroup (the kernel lists only devices with
 * counts): 0.  Totals over the whole disks when there is a list of them,
 * else over every line. */
static void parse_iostat(cg_state *st, cgfile *f, char *text, pm_sample *s)
{
    static const char *const keys[4] = {"rbytes=", "wbytes=", "rios=", "wios="};
    uint64_t tot[4] = {0};
    uint64_t per[MAX_DISKS][4];
    memset(per, 0, sizeof per);
    char *cur = text, *line;
    while ((line = pm_next_line(&cur)) != NULL) {
        char *fl[24];
        size_t n = pm_split_fields(line, fl, 24);
        if (n == 0)
            continue;
        unsigned maj, min;
        uint64_t v[4];
        int got = 0, err = parse_devnum(fl[0], &maj, &min) != 0;
        for (size_t i = 1; i < n && !err; i++)
            for (int k = 0; k < 4; k++) {
                size_t kl = strlen(keys[k]);
                if (strncmp(fl[i], keys[k], kl) == 0) {
                    if (pm_parse_u64(fl[i] + kl, &v[k]) != 0)
                        err = 1;
                    got |= 1 << k;
                }
            }
        if (err || got != 15) {
            bad(st, f, fl[0]);
            return; /* nothing recorded from a file in doubt */
        }
        disk *d = find_disk(st, maj, min);
        if (st->nd && !d)
            continue;
        for (int k = 0; k < 4; k++) {
            tot[k] += v[k];
            if (d)
                per[d - st->d][k] = v[k];
        }
    }
    for (int k = 0; k < 4; k++) {
        pm_sample_u64(s, st->io_tot[k], tot[k]);
        for (size_t i = 0; i < st->nd; i++)
            pm_sample_u64(s, st->d[i].col[k], per[i][k]);
    }
}

/* v1 blkio.throttle.io_service_bytes / io_serviced: "MAJ:MIN Read N" ...
 * "MAJ:MIN Total N", and a last "Total N". */
static void parse_blkio(cg_state *st, cgfile *f, char *text, pm_sample *s)
{
    int ops = strcmp(f->sp->f[0].key, "ops") == 0;
    uint64_t tot[2] = {0};
    uint64_t per[MAX_DISKS][2];
    memset(per, 0, sizeof per);
    char *cur = text, *line;
    while ((line = pm_next_line(&cur)) != NULL) {
        char *fl[4];
        size_t n = pm_split_fields(line, fl, 4);
        if (n == 0)
            continue;
        if (n == 2 && strcmp(fl[0], "Total") == 0)
            continue;
        unsigned maj, min;
        uint64_t v;
        if (n != 3 || parse_devnum(fl[0], &maj, &min) != 0 || pm_parse_u64(fl[2], &v) != 0) {
            bad(st, f, fl[0]);
            return;
        }
        int k = strcmp(fl[1], "Read") == 0 ? 0 : strcmp(fl[1], "Write") == 0 ? 1 : -1;
        disk *d = find_disk(st, maj, min);
        if (k < 0 || (st->nd && !d))
            continue;
        tot[k] += v;
        if (d)
            per[d - st->d][k] = v;
    }
    for (int k = 0; k < 2; k++) {
        pm_sample_u64(s, st->io_tot[2 * ops + k], tot[k]);
        for (size_t i = 0; i < st->nd; i++)
            pm_sample_u64(s, st->d[i].col[2 * ops + k], per[i][k]);
    }
}

static void read_file(cg_state *st, cgfile *f, pm_sample *s)
{
    ssize_t n = pread0(f->fd, st->buf, CG_BUF);
    if (n <= 0)
        return; /* the cgroup went away: nothing recorded */
    const spec *sp = f->sp;
    uint64_t v;
    switch (sp->kind) {
    case K_SINGLE:
        if (single_u64(st->buf, &v) == 0)
            put(st, s, f->col[0], sp->f[0].scale, v);
        else
            bad(st, f, st->buf);
        break;
    case K_LIMIT:
        if (strcmp(st->buf, "max\n") == 0 || strcmp(st->buf, "max") == 0)
            break; /* v2: no limit */
        if (single_u64(st->buf, &v) != 0)
            bad(st, f, st->buf);
        else if (v < V1_UNLIMITED)
            put(st, s, f->col[0], S_RAW, v);
        break;
    case K_KEYED: parse_keyed(st, f, st->buf, s); break;
    case K_PSI: parse_psi(st, f, st->buf, s); break;
    case K_IOSTAT: parse_iostat(st, f, st->buf, s); break;
    default: parse_blkio(st, f, st->buf, s); break;
    }
}

/* ------------------------------------------------------------- the ops */

static void cg_free(cg_state *st)
{
    for (size_t i = 0; i < st->nf; i++)
        pm_close_kept(&st->f[i].fd);
    st->nf = 0;
    remove_children(st);
    close_hiers(st);
    free(st->buf);
    free(st);
}

/* Find the cgroup: returns 1 when found (st->h[] open, version, level and
 * from_pid set), 0 when there is none (reason in why). */
static int find(const pm_sctx *ctx, cg_state *st, char *why, size_t cap)
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
            add_note(st, "cgroup: cannot make a cgroup for the command (%s): no cgroup columns",
                     why);
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
            add_note(st, "cgroup: cannot make a cgroup for the command (%s)%s", why,
                     rc == -EACCES || rc == -EPERM || rc == -EROFS
                         ? ": run as root or in a delegated cgroup"
                         : "");
            close_hiers(st);
        } else {
            add_note(st,
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
            add_note(st, "cgroup: %s", why);
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
        add_note(st, "cgroup: %d malformed line(s) of /proc/%d/cgroup ignored", L->bad,
                 (int)st->from_pid);
    free(L);
    return found;
}

static int cg_open(const pm_sctx *ctx, pm_schema *s, void **state, pm_error *err)
{
    cg_state *st = calloc(1, sizeof *st);
    char *buf = malloc(CG_BUF);
    if (!st || !buf) {
        free(st);
        free(buf);
        return pm_error_set(err, PM_ENOMEM, "cgroup: out of memory");
    }
    st->buf = buf;
    st->clk_tck = ctx->clk_tck;
    for (int i = 0; i < 4; i++)
        st->io_tot[i] = -1;
    char why[CG_PATH + 200];
    why[0] = '\0';
    if (!find(ctx, st, why, sizeof why)) {
        if (st->nnotes && ctx->nroots > 0 && ctx->roots[0] <= 0) {
            /* -- CMD: the notes say why there is no cgroup */
            st->dead = 1;
            st->adopted = 1;
            *state = st;
            return 0;
        }
        cg_free(st);
        return pm_error_set(err, PM_ENOENT, "%s", why);
    }
    st->adopted = !st->created;
    int rc = open_files(ctx, st, s);
    if (rc < 0) {
        cg_free(st);
        return pm_error_set(err, rc, "cgroup: cannot add columns");
    }
    *state = st;
    return 0;
}

/* Write the pending notes: the cgroup event first, at the first sample. */
static void announce(cg_state *st, const pm_sctx *ctx, const pm_sample *s)
{
    if (!st->dead && st->level) {
        pm_buf b;
        pm_buf_init(&b);
        pm_buf_puts(&b, "{\"event\":\"cgroup\",\"t\":");
        pm_buf_json_num(&b, (double)s->wall_ns / 1e9);
        pm_buf_printf(&b, ",\"version\":%d,\"path\":", st->version);
        /* the hierarchy that holds most: v2, else memory's, else the first */
        const hier *h = &st->h[0];
        for (size_t i = 0; i < st->nh; i++)
            if (st->h[i].ctrl & (C_V2 | C_MEMORY)) {
                h = &st->h[i];
                break;
            }
        pm_buf_json_str(&b, h->path);
        pm_buf_printf(&b, ",\"from_pid\":%d,\"created\":%d,\"level\":", (int)st->from_pid,
                      st->created);
        pm_buf_json_str(&b, st->level);
        pm_buf_puts(&b, "}");
        if (!b.oom)
            pm_sctx_note(ctx, b.data);
        pm_buf_free(&b);
        st->level = NULL; /* once */
    }
    for (size_t i = 0; i < st->nnotes; i++)
        pm_sctx_note(ctx, st->notes[i]);
    st->nnotes = 0;
    st->announced = 1;
}

static int cg_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    cg_state *st = state;
    if (!st->announced)
        announce(st, ctx, s);
    if (st->dead || !st->adopted)
        return -1;
    int slow = ctx->pss_interval_ns <= 0 || !st->slow_due || ctx->now_mono_ns >= st->slow_due;
    if (slow && ctx->pss_interval_ns > 0)
        st->slow_due = (ctx->now_mono_ns ? ctx->now_mono_ns : 1) + ctx->pss_interval_ns;
    int rare = pm_sctx_rare_due(ctx, &st->rare_due);
    for (size_t i = 0; i < st->nf; i++)
        if (!st->h[st->f[i].hi].off && (slow || st->f[i].sp->when != W_SLOW) &&
            (rare || st->f[i].sp->when != W_RARE))
            read_file(st, &st->f[i], s);
    if (!st->announced)
        announce(st, ctx, s); /* a malformed line seen just now */
    return 0;
}

/* -- CMD: move the command (pid, held at its start gate) into the
 * cgroups made for it. */
static void cg_adopt(void *state, const pm_sctx *ctx, pid_t pid)
{
    (void)ctx;
    cg_state *st = state;
    if (!st->created || st->dead)
        return;
    char num[24];
    int len = snprintf(num, sizeof num, "%d\n", (int)pid);
    for (size_t i = 0; i < st->nh; i++) {
        int fd = openat(st->h[i].dirfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
        int rc = fd < 0 ? -errno : pm_write_all(fd, num, (size_t)len);
        if (fd >= 0 && close(fd) != 0 && rc == 0)
            rc = -errno;
        if (rc != 0 && st->h[i].ctrl == C_PSI) {
            add_note(st, "cgroup: no pressure columns (cannot move the command into %s%s: %s)",
                     st->h[i].mount, st->h[i].path, strerror(-rc));
            st->h[i].off = 1;
        } else if (rc != 0) {
            add_note(st, "cgroup: cannot move the command into %s%s: %s; no cgroup columns",
                     st->h[i].mount, st->h[i].path, strerror(-rc));
            st->dead = 1;
            return;
        }
    }
    st->from_pid = pid;
    st->adopted = 1;
}

static void cg_close(void *state)
{
    if (state)
        cg_free(state);
}

const pm_source pm_source_cgroup = {
    .name = "cgroup",
    .open = cg_open,
    .read = cg_read,
    .adopt = cg_adopt,
    .close = cg_close,
};
