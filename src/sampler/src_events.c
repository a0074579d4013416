/* Events source: the node's error and pressure counters, and the OOM
 * killer's kills from the kernel log (docs/format.md, "Node error and
 * pressure counters" and "Event notes").
 *
 *   node.oom_kill       /proc/vmstat oom_kill (Linux 4.13): every OOM kill
 *                       on the node, by a cgroup's limit or the node
 *                       running out
 *   psi.<res>_some/full /proc/pressure/{cpu,memory,io} total= (Linux 4.20,
 *                       Documentation/accounting/psi.rst), microseconds
 *                       recorded as seconds; the node's "full" line of cpu
 *                       (5.13) is always zero and is not recorded; read
 *                       with the error counters, at most once a second
 *                       (pm_sctx_rare_due: the kernel formats its averages
 *                       at each read, the costliest file of a sample)
 *   cpu.thermal_*       /sys/devices/system/cpu/cpuN/thermal_throttle/
 *                       core_throttle_count summed over CPUs, and
 *                       package_throttle_count once per physical package
 *                       (topology/physical_package_id) (Intel therm_throt)
 *   edac.ce, edac.ue    /sys/devices/system/edac/mc/mcN/ce_count, ue_count
 *                       summed over memory controllers
 *
 * Each part whose files are absent has no column; the metadata's "events"
 * object says why, and a part the kernel has switched off (PSI with
 * psi=0) is said once in a note.  Files are opened once and re-read with
 * pread.
 *
 * The kernel log (/dev/kmsg) is read where the sampler may (root, or
 * kernel.dmesg_restrict=0) and only on the running kernel's /proc (not a
 * captured tree): from its end at start, so only new records, at most
 * MAX_RECORDS a sample.  The OOM killer's lines (src/sampler/kmsg.c) make
 * one "oom_kill" event note per kill, its time converted from the
 * record's microseconds since boot with the difference of CLOCK_REALTIME
 * and CLOCK_MONOTONIC at the read (the kernel's local clock runs with
 * CLOCK_MONOTONIC, suspend aside).  A kill is in the job when its pid is
 * a followed process (ctx->followed) or its memory cgroup is the first
 * followed process's or below it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "perfmon/buf.h"
#include "perfmon/fileio.h"
#include "perfmon/kmsg.h"
#include "perfmon/log.h"
#include "perfmon/parse.h"
#include "perfmon/source.h"
#include "perfmon/vec.h"

#define MAX_CPUS 8192    /* CPUs whose thermal counters are summed */
#define MAX_KEPT 1024    /* counter files kept open; the rest reopened */
#define MAX_MC 256       /* EDAC memory controllers */
#define VMSTAT_MAX 65536 /* /proc/vmstat is a few KiB */
#define MAX_RECORDS 256  /* kernel log records read per sample */
#define KMSG_BUF 8192    /* the kernel's longest record (CONSOLE_EXT_LOG_MAX) */
#define KMSG_DEV "/dev/kmsg"

enum { R_CPU, R_MEM, R_IO, NRES };
static const char *const res_file[NRES] = {"pressure/cpu", "pressure/memory", "pressure/io"};
static const char *const res_col[NRES] = {"cpu", "mem", "io"};

/* A counter file under /sys, kept open. */
typedef struct kept {
    char path[112];
    int fd;
} kept;

typedef struct ev_state {
    int64_t rare_due; /* the error counters' next read (pm_sctx_rare_due) */
    /* node.oom_kill */
    int fd_vmstat, col_oom;
    char *vm_buf;
    size_t vm_cap;
    /* psi */
    int fd_psi[NRES], col_some[NRES], col_full[NRES];
    int have_psi;
    /* thermal: core files, then package files */
    kept *core, *pkg;
    size_t ncore, npkg;
    int col_core, col_pkg;
    /* edac */
    kept *ce, *ue;
    size_t nmc;
    int col_ce, col_ue;
    /* the kernel log */
    int kmsg;
    int kmsg_denied; /* the running kernel's log, not readable by the sampler */
    char rec[KMSG_BUF + 1];
    pm_oom_parser oom;
    uint64_t overwritten;
    int said_overwritten;
    char job_cg[256]; /* the first root's memory cgroup, "" unknown */
    /* why each part is absent ("" when present), for describe() and notes */
    char why_oom[160], why_psi[200], why_thermal[160], why_edac[160], why_kmsg[240];
    int noted; /* the notes of the first read are written */
} ev_state;

static void close_kept(kept *k, size_t n)
{
    for (size_t i = 0; i < n && k; i++)
        pm_close_kept(&k[i].fd);
    free(k);
}

static void ev_close(void *state)
{
    ev_state *st = state;
    if (!st)
        return;
    pm_close_kept(&st->fd_vmstat);
    for (int r = 0; r < NRES; r++)
        pm_close_kept(&st->fd_psi[r]);
    close_kept(st->core, st->ncore);
    close_kept(st->pkg, st->npkg);
    close_kept(st->ce, st->nmc);
    close_kept(st->ue, st->nmc);
    pm_close_kept(&st->kmsg);
    free(st->vm_buf);
    free(st);
}

/* An unsigned counter of a whole sysfs attribute through a kept (or, past
 * MAX_KEPT, reopened) descriptor.  Returns 0 or -1. */
static int read_kept(const pm_sctx *ctx, kept *k, size_t i, uint64_t *v)
{
    char buf[64];
    ssize_t n;
    if (i < MAX_KEPT)
        n = pm_pread_kept(&k->fd, ctx->sys_fd, k->path, buf, sizeof buf, NULL);
    else
        n = pm_read_small(ctx->sys_fd, k->path, buf, sizeof buf, NULL);
    if (n <= 0)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return pm_parse_u64(buf, v);
}

/* Sum of the counters of k[0..n): 0 when at least one was read. */
static int sum_kept(const pm_sctx *ctx, kept *k, size_t n, uint64_t *sum)
{
    int ok = 0;
    *sum = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        if (read_kept(ctx, &k[i], i, &v) == 0 && !__builtin_add_overflow(*sum, v, sum))
            ok = 1;
    }
    return ok ? 0 : -1;
}

static int add_kept(kept **arr, size_t *n, size_t *cap, const char *path)
{
    if (strlen(path) >= sizeof(*arr)->path || PM_VEC_RESERVE(*arr, *cap, *n + 1, 16) != 0)
        return -1;
    snprintf((*arr)[*n].path, sizeof(*arr)->path, "%s", path);
    (*arr)[(*n)++].fd = -1;
    return 0;
}

/* "oom_kill N" of /proc/vmstat (a list longer than a page: read whole). */
static int vmstat_oom(ev_state *st, const pm_sctx *ctx, uint64_t *v)
{
    if (pm_pread_grow(&st->fd_vmstat, ctx->proc_fd, "vmstat", &st->vm_buf, &st->vm_cap,
                      VMSTAT_MAX) <= 0)
        return -1;
    for (char *cur = st->vm_buf, *l; (l = pm_next_line(&cur)) != NULL;) {
        if (strncmp(l, "oom_kill ", 9) == 0)
            return pm_parse_u64(l + 9, v);
    }
    return -1;
}

/* The "total=" of the line of /proc/pressure/<res> that starts with
 * kind ("some" or "full"), microseconds.  0, or -1 when absent. */
static int psi_total(const char *text, const char *kind, uint64_t *us)
{
    size_t k = strlen(kind);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, kind, k) != 0 || l[k] != ' ')
            continue;
        size_t len = strcspn(l, "\n");
        char line[256];
        if (len >= sizeof line)
            return -1;
        memcpy(line, l, len);
        line[len] = '\0';
        const char *t = strstr(line, " total=");
        return t ? pm_parse_u64(t + 7, us) : -1;
    }
    return -1;
}

static int open_psi(ev_state *st, const pm_sctx *ctx, pm_schema *s)
{
    char buf[512];
    int full[NRES];
    for (int r = 0; r < NRES; r++) {
        uint64_t v;
        ssize_t n = pm_pread_kept(&st->fd_psi[r], ctx->proc_fd, res_file[r], buf, sizeof buf, NULL);
        if (n <= 0 || psi_total(buf, "some", &v) != 0) {
            int e = n < 0 ? (int)-n : 0;
            snprintf(st->why_psi, sizeof st->why_psi,
                     "%s/%s: %s: no psi.* columns (pressure stall information needs Linux "
                     "4.20 with CONFIG_PSI, and is off with psi=0)",
                     ctx->proc_root, res_file[r],
                     e == ENOENT ? "absent"
                     : e         ? strerror(e)
                                 : "no \"some ... total=\" line");
            for (int k = 0; k <= r; k++)
                pm_close_kept(&st->fd_psi[k]);
            return 0;
        }
        /* The node's cpu "full" (5.13) is always zero: not a column. */
        full[r] = r != R_CPU && psi_total(buf, "full", &v) == 0;
    }
    for (int r = 0; r < NRES; r++) {
        char name[32];
        snprintf(name, sizeof name, "psi.%s_some", res_col[r]);
        st->col_some[r] = pm_schema_add(s, name, "s", PM_COUNTER, PM_F64, "events", 0);
        if (st->col_some[r] < 0)
            return st->col_some[r];
        if (full[r]) {
            snprintf(name, sizeof name, "psi.%s_full", res_col[r]);
            st->col_full[r] = pm_schema_add(s, name, "s", PM_COUNTER, PM_F64, "events", 0);
            if (st->col_full[r] < 0)
                return st->col_full[r];
        }
    }
    st->have_psi = 1;
    return 0;
}

static int cmp_cpu(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* "cpu<N>" -> N, or -1. */
static long cpu_number(const char *name)
{
    uint64_t v;
    if (strncmp(name, "cpu", 3) != 0 || pm_parse_u64(name + 3, &v) != 0 || v >= 1u << 20)
        return -1;
    return (long)v;
}

static int open_thermal(ev_state *st, const pm_sctx *ctx, pm_schema *s)
{
    int fd = openat(ctx->sys_fd, "devices/system/cpu", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        snprintf(st->why_thermal, sizeof st->why_thermal, "%s/devices/system/cpu absent",
                 ctx->sys_root);
        return 0;
    }
    long *cpus = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL && n < MAX_CPUS) {
        long c = cpu_number(e->d_name);
        if (c < 0)
            continue;
        if (PM_VEC_RESERVE(cpus, cap, n + 1, 64) != 0) {
            rc = PM_ENOMEM;
            break;
        }
        cpus[n++] = c;
    }
    closedir(d);
    if (n)
        qsort(cpus, n, sizeof *cpus, cmp_cpu);
    size_t ccap = 0, pcap = 0;
    int64_t *pkgs = NULL; /* package ids seen */
    size_t np = 0, npcap = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char path[112], buf[64];
        snprintf(path, sizeof path,
                 "devices/system/cpu/cpu%ld/thermal_throttle/core_throttle_count", cpus[i]);
        if (pm_read_small(ctx->sys_fd, path, buf, sizeof buf, NULL) <= 0)
            continue;
        if (add_kept(&st->core, &st->ncore, &ccap, path) != 0) {
            rc = PM_ENOMEM;
            break;
        }
        /* One package file per physical package: the first CPU's. */
        int64_t id;
        snprintf(path, sizeof path, "devices/system/cpu/cpu%ld/topology/physical_package_id",
                 cpus[i]);
        if (pm_read_small(ctx->sys_fd, path, buf, sizeof buf, NULL) <= 0)
            continue;
        buf[strcspn(buf, "\n")] = '\0';
        if (pm_parse_i64(buf, &id) != 0)
            continue;
        int seen = 0;
        for (size_t k = 0; k < np && !seen; k++)
            seen = pkgs[k] == id;
        snprintf(path, sizeof path,
                 "devices/system/cpu/cpu%ld/thermal_throttle/package_throttle_count", cpus[i]);
        if (seen || pm_read_small(ctx->sys_fd, path, buf, sizeof buf, NULL) <= 0)
            continue;
        if (PM_VEC_RESERVE(pkgs, npcap, np + 1, 8) != 0 ||
            add_kept(&st->pkg, &st->npkg, &pcap, path) != 0) {
            rc = PM_ENOMEM;
            break;
        }
        pkgs[np++] = id;
    }
    free(cpus);
    free(pkgs);
    if (rc)
        return rc;
    if (st->ncore == 0) {
        snprintf(st->why_thermal, sizeof st->why_thermal,
                 "no %s/devices/system/cpu/cpu*/thermal_throttle/ (Intel CPUs with the "
                 "therm_throt driver have it)",
                 ctx->sys_root);
        return 0;
    }
    st->col_core =
        pm_schema_add(s, "cpu.thermal_core_throttles", "1", PM_COUNTER, PM_U64, "events", 0);
    if (st->col_core < 0)
        return st->col_core;
    if (st->npkg) {
        st->col_pkg =
            pm_schema_add(s, "cpu.thermal_package_throttles", "1", PM_COUNTER, PM_U64, "events", 0);
        if (st->col_pkg < 0)
            return st->col_pkg;
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int open_edac(ev_state *st, const pm_sctx *ctx, pm_schema *s)
{
    int fd = openat(ctx->sys_fd, "devices/system/edac/mc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        snprintf(st->why_edac, sizeof st->why_edac,
                 "no %s/devices/system/edac/mc (no EDAC driver for the memory controllers)",
                 ctx->sys_root);
        return 0;
    }
    char names[MAX_MC][32];
    char *order[MAX_MC];
    size_t nn = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && nn < MAX_MC) {
        uint64_t v;
        if (strncmp(e->d_name, "mc", 2) != 0 || pm_parse_u64(e->d_name + 2, &v) != 0 ||
            strlen(e->d_name) >= sizeof names[0])
            continue;
        snprintf(names[nn], sizeof names[nn], "%s", e->d_name);
        order[nn] = names[nn];
        nn++;
    }
    closedir(d);
    qsort(order, nn, sizeof *order, cmp_str);
    size_t cecap = 0, uecap = 0, nue = 0;
    for (size_t i = 0; i < nn; i++) {
        char ce[112], ue[112], buf[64];
        snprintf(ce, sizeof ce, "devices/system/edac/mc/%s/ce_count", order[i]);
        snprintf(ue, sizeof ue, "devices/system/edac/mc/%s/ue_count", order[i]);
        if (pm_read_small(ctx->sys_fd, ce, buf, sizeof buf, NULL) <= 0 ||
            pm_read_small(ctx->sys_fd, ue, buf, sizeof buf, NULL) <= 0)
            continue;
        if (add_kept(&st->ce, &st->nmc, &cecap, ce) != 0 ||
            add_kept(&st->ue, &nue, &uecap, ue) != 0)
            return PM_ENOMEM;
    }
    if (st->nmc == 0) {
        snprintf(st->why_edac, sizeof st->why_edac,
                 "%s/devices/system/edac/mc has no readable mc*/ce_count and ue_count",
                 ctx->sys_root);
        return 0;
    }
    st->col_ce = pm_schema_add(s, "edac.ce", "1", PM_COUNTER, PM_U64, "events", 0);
    st->col_ue = pm_schema_add(s, "edac.ue", "1", PM_COUNTER, PM_U64, "events", 0);
    return st->col_ue < 0 ? st->col_ue : 0;
}

/* The memory cgroup of pid from /proc/<pid>/cgroup: the v1 line whose
 * controllers include "memory", else the v2 line "0::".  Returns 0 with
 * out filled, or -1. */
static int memory_cgroup(const pm_sctx *ctx, pid_t pid, char *out, size_t cap)
{
    char path[32], buf[4096];
    snprintf(path, sizeof path, "%d/cgroup", (int)pid);
    if (pid <= 0 || pm_read_small(ctx->proc_fd, path, buf, sizeof buf, NULL) <= 0)
        return -1;
    const char *v2 = NULL;
    for (char *cur = buf, *l; (l = pm_next_line(&cur)) != NULL;) {
        char *c1 = strchr(l, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            continue;
        *c2 = '\0';
        if (strcmp(l, "0:") == 0 && c1[1] == '\0') {
            v2 = c2 + 1;
            continue;
        }
        for (char *save = NULL, *w = strtok_r(c1 + 1, ",", &save); w;
             w = strtok_r(NULL, ",", &save))
            if (strcmp(w, "memory") == 0) {
                if (strlen(c2 + 1) >= cap)
                    return -1;
                snprintf(out, cap, "%s", c2 + 1);
                return 0;
            }
    }
    if (!v2 || strlen(v2) >= cap)
        return -1;
    snprintf(out, cap, "%s", v2);
    return 0;
}

static void open_kmsg(ev_state *st, const pm_sctx *ctx)
{
    struct statfs sfs;
    if (fstatfs(ctx->proc_fd, &sfs) != 0 || sfs.f_type != PROC_SUPER_MAGIC) {
        snprintf(st->why_kmsg, sizeof st->why_kmsg,
                 "%s is not the running kernel's /proc: its kernel log is not read",
                 ctx->proc_root);
        return;
    }
    st->kmsg = open(KMSG_DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (st->kmsg < 0) {
        int e = errno;
        st->kmsg_denied = 1;
        snprintf(st->why_kmsg, sizeof st->why_kmsg,
                 "the kernel log cannot be read (" KMSG_DEV ": %s%s): OOM kills are counted "
                 "(node.oom_kill) but not named",
                 strerror(e),
                 e == EPERM || e == EACCES ? "; kernel.dmesg_restrict or its permissions" : "");
        return;
    }
    /* Only what the kernel logs from now on. */
    if (lseek(st->kmsg, 0, SEEK_END) < 0) {
        int e = errno;
        pm_close_kept(&st->kmsg);
        snprintf(st->why_kmsg, sizeof st->why_kmsg,
                 "the kernel log cannot be read from its end (" KMSG_DEV ": %s): OOM kills "
                 "are counted (node.oom_kill) but not named",
                 strerror(e));
    }
}

static int ev_open(const pm_sctx *ctx, pm_schema *s, void **state, pm_error *err)
{
    ev_state *st = calloc(1, sizeof *st);
    if (!st)
        return pm_error_set(err, PM_ENOMEM, "events: out of memory");
    st->fd_vmstat = st->kmsg = -1;
    st->col_oom = st->col_core = st->col_pkg = st->col_ce = st->col_ue = -1;
    for (int r = 0; r < NRES; r++)
        st->fd_psi[r] = st->col_some[r] = st->col_full[r] = -1;
    pm_oom_init(&st->oom);
    uint64_t v;
    int rc = 0;
    if (vmstat_oom(st, ctx, &v) == 0) {
        st->col_oom = pm_schema_add(s, "node.oom_kill", "1", PM_COUNTER, PM_U64, "events", 0);
        rc = st->col_oom < 0 ? st->col_oom : 0;
    } else {
        pm_close_kept(&st->fd_vmstat);
        snprintf(st->why_oom, sizeof st->why_oom,
                 "%s/vmstat has no oom_kill line (Linux 4.13 and later have it)", ctx->proc_root);
    }
    if (rc == 0)
        rc = open_psi(st, ctx, s);
    if (rc == 0)
        rc = open_thermal(st, ctx, s);
    if (rc == 0)
        rc = open_edac(st, ctx, s);
    if (rc != 0) {
        ev_close(st);
        return pm_error_set(err, rc, "events: cannot add columns");
    }
    open_kmsg(st, ctx);
    if (ctx->nroots > 0 && memory_cgroup(ctx, ctx->roots[0], st->job_cg, sizeof st->job_cg) != 0)
        st->job_cg[0] = '\0';
    if (st->col_oom < 0 && !st->have_psi && st->ncore == 0 && st->nmc == 0 && st->kmsg < 0) {
        pm_error_set(err, PM_ENOENT, "no node error or pressure counters: %s; %s", st->why_oom,
                     st->why_psi);
        ev_close(st);
        return PM_ENOENT;
    }
    *state = st;
    return 0;
}

/* Is cg (a memory cgroup path) the job's or below it? */
static int below_job(const char *job, const char *cg)
{
    size_t n = strlen(job);
    if (n == 0 || !cg[0] || strcmp(job, "/") == 0)
        return 0;
    return strncmp(cg, job, n) == 0 && (cg[n] == '\0' || cg[n] == '/');
}

/* The "oom_kill" event.  Its fields are bounded (kmsg.h), so its JSON,
 * even with every byte escaped, stays within a note's 4096 bytes. */
static void note_kill(ev_state *st, const pm_sctx *ctx, const pm_oom_kill *k, int64_t offset_ns)
{
    /* The job's cgroup as it is now (CMD may have moved itself since
     * the start), else as it was. */
    char cg[sizeof st->job_cg];
    if (ctx->nroots > 0 && memory_cgroup(ctx, ctx->roots[0], cg, sizeof cg) == 0)
        memcpy(st->job_cg, cg, sizeof cg);
    int in_job = (ctx->followed && ctx->followed(ctx->followed_arg, (int)k->pid)) ||
                 below_job(st->job_cg, k->task_memcg);
    double t = ((double)k->ts_us * 1e3 + (double)offset_ns) / 1e9;
    pm_buf b;
    pm_buf_init(&b);
    pm_buf_puts(&b, "{\"event\":\"oom_kill\",\"t\":");
    pm_buf_printf(&b, "%.6f,\"pid\":%d", t, (int)k->pid);
    if (k->comm[0]) {
        pm_buf_puts(&b, ",\"comm\":");
        pm_buf_json_str(&b, k->comm);
    }
    if (k->constraint[0]) {
        pm_buf_puts(&b, ",\"constraint\":");
        pm_buf_json_str(&b, k->constraint);
    }
    if (k->memcg[0]) {
        pm_buf_puts(&b, ",\"memcg\":");
        pm_buf_json_str(&b, k->memcg);
    }
    if (k->task_memcg[0]) {
        pm_buf_puts(&b, ",\"task_memcg\":");
        pm_buf_json_str(&b, k->task_memcg);
    }
    if (k->anon_rss_kb >= 0)
        pm_buf_printf(&b, ",\"anon_rss_kb\":%lld", (long long)k->anon_rss_kb);
    if (k->total_vm_kb >= 0)
        pm_buf_printf(&b, ",\"total_vm_kb\":%lld", (long long)k->total_vm_kb);
    pm_buf_printf(&b, ",\"in_job\":%d}", in_job);
    if (!b.oom)
        pm_sctx_note(ctx, b.data);
    pm_buf_free(&b);
}

static int64_t ts_ns(clockid_t c)
{
    struct timespec t;
    if (clock_gettime(c, &t) != 0)
        return 0;
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* New records of the kernel log, at most MAX_RECORDS. */
static void read_kmsg(ev_state *st, const pm_sctx *ctx)
{
    char *buf = st->rec;
    pm_oom_kill kills[4];
    int64_t offset = ts_ns(CLOCK_REALTIME) - ts_ns(CLOCK_MONOTONIC);
    int had_pending = st->oom.have_pending;
    for (int i = 0; i < MAX_RECORDS && st->kmsg >= 0; i++) {
        ssize_t n = read(st->kmsg, buf, KMSG_BUF);
        if (n < 0 && errno == EINTR) {
            i--;
            continue;
        }
        if (n < 0 && errno == EAGAIN)
            break;
        if (n < 0 && errno == EPIPE) {
            /* Records were overwritten before they were read: the next
             * read gives the oldest one left. */
            st->overwritten++;
            if (!st->said_overwritten) {
                st->said_overwritten = 1;
                pm_sctx_note(ctx, "events: the kernel log wrapped before the sampler read it: "
                                  "an OOM kill logged then may be missing (node.oom_kill "
                                  "counts it)");
            }
            continue;
        }
        if (n <= 0) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "events: the kernel log can no longer be read (" KMSG_DEV ": %s): OOM "
                     "kills from now on are counted (node.oom_kill) but not named",
                     n < 0 ? strerror(errno) : "end of file");
            pm_sctx_note(ctx, msg);
            pm_close_kept(&st->kmsg);
            break;
        }
        size_t k = pm_oom_feed(&st->oom, buf, (size_t)n, kills, 4);
        for (size_t j = 0; j < k; j++)
            note_kill(st, ctx, &kills[j], offset);
    }
    /* A summary line whose kill line has not come for a whole sample is
     * told alone. */
    if (st->oom.have_pending && had_pending) {
        size_t k = pm_oom_flush(&st->oom, kills, 4);
        for (size_t j = 0; j < k; j++)
            note_kill(st, ctx, &kills[j], offset);
    }
}

static int ev_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    ev_state *st = state;
    if (!st->noted) {
        /* Said once, in the profile (open() comes before the writers). */
        st->noted = 1;
        char msg[300];
        if (st->why_psi[0]) {
            snprintf(msg, sizeof msg, "events: %s", st->why_psi);
            pm_sctx_note(ctx, msg);
        }
        if (st->kmsg_denied) {
            snprintf(msg, sizeof msg, "events: %s", st->why_kmsg);
            pm_sctx_note(ctx, msg);
        }
    }
    uint64_t v;
    int rare = pm_sctx_rare_due(ctx, &st->rare_due);
    if (rare && st->col_oom >= 0 && vmstat_oom(st, ctx, &v) == 0)
        pm_sample_u64(s, st->col_oom, v);
    if (rare && st->have_psi) {
        char buf[512];
        for (int r = 0; r < NRES; r++) {
            if (pm_pread_kept(&st->fd_psi[r], ctx->proc_fd, res_file[r], buf, sizeof buf, NULL) <=
                0)
                continue;
            if (psi_total(buf, "some", &v) == 0)
                pm_sample_f64(s, st->col_some[r], (double)v / 1e6);
            if (st->col_full[r] >= 0 && psi_total(buf, "full", &v) == 0)
                pm_sample_f64(s, st->col_full[r], (double)v / 1e6);
        }
    }
    if (rare && st->ncore && sum_kept(ctx, st->core, st->ncore, &v) == 0)
        pm_sample_u64(s, st->col_core, v);
    if (rare && st->npkg && sum_kept(ctx, st->pkg, st->npkg, &v) == 0)
        pm_sample_u64(s, st->col_pkg, v);
    if (rare && st->nmc && sum_kept(ctx, st->ce, st->nmc, &v) == 0)
        pm_sample_u64(s, st->col_ce, v);
    if (rare && st->nmc && sum_kept(ctx, st->ue, st->nmc, &v) == 0)
        pm_sample_u64(s, st->col_ue, v);
    /* Every sample (one read that usually fails with EAGAIN): a kill is
     * told the job's while its process is still among the followed. */
    if (st->kmsg >= 0)
        read_kmsg(st, ctx);
    return 0;
}

static void member(pm_buf *j, const char *key, const char *why, int *first)
{
    pm_buf_printf(j, "%s\"%s\":", *first ? "" : ",", key);
    *first = 0;
    pm_buf_json_str(j, why[0] ? why : "ok");
}

static void ev_describe(void *state, pm_buf *j)
{
    ev_state *st = state;
    int first = 1;
    pm_buf_puts(j, "\"events\":{");
    member(j, "oom_kill", st->why_oom, &first);
    member(j, "psi", st->why_psi, &first);
    member(j, "thermal", st->why_thermal, &first);
    member(j, "edac", st->why_edac, &first);
    member(j, "kernel_log", st->why_kmsg, &first);
    pm_buf_puts(j, "}");
}

const pm_source pm_source_events = {
    .name = "events",
    .open = ev_open,
    .read = ev_read,
    .describe = ev_describe,
    .close = ev_close,
};
