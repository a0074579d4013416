/* cgroup source, its files: the table of the files read and the columns
 * they give (docs/format.md, "The job's cgroup"), opening them, and
 * parsing what one read returns (src_cgroup.c).
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
            (buf[strcspn(buf, "\n")] = '\0', pm_cg_parse_devnum(buf, &k->maj, &k->min) != 0))
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
    ssize_t n = pm_cg_pread0(fd, buf, sizeof buf);
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
int pm_cg_open_files(const pm_sctx *ctx, cg_state *st, pm_schema *s)
{
    for (size_t i = 0; i < st->nh; i++) {
        hier *h = &st->h[i];
        unsigned off = 0;
        if (h->ctrl & C_V2) {
            v2_missing(h, &off);
            static const char *const cname[3] = {"memory", "io", "pids"};
            for (int b = 0; b < 3; b++)
                if (off & (1u << b))
                    pm_cg_add_note(
                        st,
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
                pm_cg_add_note(st, "cgroup: %s not available%s%s%s", sp->file, sp->why ? " (" : "",
                               sp->why ? sp->why : "", sp->why ? ")" : "");
                continue;
            }
            ssize_t n = pm_cg_pread0(f->fd, st->buf, CG_BUF);
            if (n < 0) {
                pm_cg_add_note(st, "cgroup: %s cannot be read: %s", sp->file, strerror((int)-n));
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
                pm_cg_add_note(st, "cgroup: %s has no %s%s", sp->file, missing,
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
        pm_cg_add_note(st, "cgroup: no CPU throttling columns: the cgroup made for the command has "
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
    pm_cg_add_note(st, "cgroup: %s: malformed line ignored (starting \"%s\")", f->name, shown);
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
        int got = 0, err = pm_cg_parse_devnum(fl[0], &maj, &min) != 0;
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
        if (n != 3 || pm_cg_parse_devnum(fl[0], &maj, &min) != 0 || pm_parse_u64(fl[2], &v) != 0) {
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

void pm_cg_read_file(cg_state *st, cgfile *f, pm_sample *s)
{
    ssize_t n = pm_cg_pread0(f->fd, st->buf, CG_BUF);
    if (n <= 0)
        return; /* the cgroup went away: nothing recorded */
    const spec *sp = f->sp;
    uint64_t v;
    switch (sp->kind) {
    case K_SINGLE:
        if (pm_cg_single_u64(st->buf, &v) == 0)
            put(st, s, f->col[0], sp->f[0].scale, v);
        else
            bad(st, f, st->buf);
        break;
    case K_LIMIT:
        if (strcmp(st->buf, "max\n") == 0 || strcmp(st->buf, "max") == 0)
            break; /* v2: no limit */
        if (pm_cg_single_u64(st->buf, &v) != 0)
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
