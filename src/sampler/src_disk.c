/* Disk source: /proc/diskstats (Documentation/admin-guide/iostats.rst)
 * summed over whole physical devices, and the usage of the filesystems
 * holding the output directory and "/".
 *
 * Whole devices are the entries of /sys/block; partitions are not listed
 * there, so summing them never counts a byte twice.  Without /sys/block (a
 * captured /proc with no /sys, a container without sysfs) they are the
 * names of /proc/diskstats that are not a partition of another listed
 * name by the kernel's naming rule (block/partitions/core.c): disk name,
 * then "p" when the disk name ends in a digit, then the partition number
 * (sda -> sda1, nvme0n1 -> nvme0n1p1, mmcblk0 -> mmcblk0p1).  The list is
 * taken once, at start; the metadata says where it came from.
 * Stacked or virtual devices (dm-*, md*, loop*, ram*, zram*, nbd*) are left
 * out for the same reason: their I/O is also counted on the disks beneath.
 * Sectors in diskstats are always 512 bytes, whatever the device's size.
 *
 * A device line with a count that cannot be real (an I/O or sector count
 * above 2^54, i.e. 8 EiB through one device, or an I/O time above 2^42 ms,
 * 139 years) leaves the sample's disk counters unrecorded (their sums
 * would be wrong either way), noted once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/log.h"
#include "perfmon/mem.h"
#include "perfmon/parse.h"
#include "perfmon/source.h"
#include "perfmon/vec.h"

#include "sread.h"

/* Whole devices: at most this many (multipath hosts list every path of
 * every LUN as an sd device), named in fewer than DEV_NAME bytes. */
#define MAX_DEVS 65536
#define DEV_NAME 32
/* /proc/diskstats is about 100-200 bytes a device: 4 MiB holds tens of
 * thousands (loop devices of snaps and containers, NVMe namespaces). */
#define DISKSTATS_MAX (4u << 20)
#define COUNT_MAX (1ull << 54)
#define MS_MAX (1ull << 42)

typedef struct disk_state {
    char (*devs)[DEV_NAME]; /* sorted, for bsearch */
    size_t ndevs, capdevs;
    int rb, wb, rops, wops, busy;
    int out_pct, out_used, out_size, root_pct;
    char *buf;
    size_t cap;
    int fd;
    int warned_big;
    int warned_bad;
    int64_t fs_due;   /* the file systems' next statvfs (pm_sctx_rare_due) */
    const char *from; /* where the device list came from */
    char why[160];    /* why there are no disk counters ("" when there are) */
} disk_state;

static int skipped_name(const char *n)
{
    static const char *const skip[] = {"loop", "ram", "zram", "dm-", "md", "nbd", NULL};
    for (int i = 0; skip[i]; i++)
        if (strncmp(n, skip[i], strlen(skip[i])) == 0)
            return 1;
    return 0;
}

static int cmp_dev(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void disk_free(disk_state *st)
{
    pm_close_kept(&st->fd);
    free(st->devs);
    free(st->buf);
    free(st);
}

/* Append name to the device list.  Returns 0, 1 when the list is full,
 * or -ENOMEM. */
static int push_dev(disk_state *st, const char *name)
{
    if (st->ndevs == MAX_DEVS)
        return 1;
    if (PM_VEC_RESERVE(st->devs, st->capdevs, st->ndevs + 1, 16) != 0)
        return -ENOMEM;
    snprintf(st->devs[st->ndevs++], DEV_NAME, "%s", name);
    return 0;
}

/* Is name a partition of a device in the sorted list all[0..n)?  By the
 * kernel's naming rule: parent + digits when the parent's name ends in a
 * letter, parent + "p" + digits when it ends in a digit. */
static int partition_name(const char *name, char (*all)[DEV_NAME], size_t n)
{
    size_t len = strlen(name), end = len;
    while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9')
        end--;
    if (end == len || end == 0)
        return 0; /* no partition number, or only digits */
    char parent[DEV_NAME];
    if (end >= 2 && name[end - 1] == 'p' && name[end - 2] >= '0' && name[end - 2] <= '9')
        end--; /* nvme0n1p1: parent nvme0n1 */
    else if (name[end - 1] >= '0' && name[end - 1] <= '9')
        return 0;
    memcpy(parent, name, end);
    parent[end] = '\0';
    return bsearch(parent, all, n, sizeof *all, cmp_dev) != NULL;
}

/* Without /sys/block: the whole devices among the names of diskstats (in
 * st->buf, len bytes).  Returns 0, 1 when the list is full, or -ENOMEM. */
static int list_from_diskstats(disk_state *st, ssize_t len)
{
    char *copy = malloc((size_t)len + 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, st->buf, (size_t)len + 1);
    char *cur = copy, *line;
    int rc = 0;
    while (rc == 0 && (line = pm_next_line(&cur)) != NULL) {
        char *f[4];
        if (pm_split_fields(line, f, 4) >= 3 && strlen(f[2]) < DEV_NAME)
            rc = push_dev(st, f[2]);
    }
    free(copy);
    if (rc < 0)
        return rc;
    qsort(st->devs, st->ndevs, sizeof *st->devs, cmp_dev);
    /* Keep the whole, real devices, in place (the order stays sorted). */
    char(*all)[DEV_NAME] = pm_realloc_array(NULL, st->ndevs ? st->ndevs : 1, sizeof *all);
    if (!all)
        return -ENOMEM;
    memcpy(all, st->devs, st->ndevs * sizeof *all);
    size_t n = st->ndevs, k = 0;
    for (size_t i = 0; i < n; i++) {
        if (skipped_name(all[i]) || partition_name(all[i], all, n) ||
            (k > 0 && strcmp(st->devs[k - 1], all[i]) == 0))
            continue;
        memcpy(st->devs[k++], all[i], DEV_NAME);
    }
    st->ndevs = k;
    free(all);
    return rc;
}

/* The whole devices: the entries of /sys/block, less the stacked and
 * virtual ones.  Returns 0, -ENOENT when there is no /sys/block, or
 * -ENOMEM. */
static int list_devices(const pm_sctx *ctx, disk_state *st)
{
    int fd = openat(ctx->sys_fd, "block", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return -ENOENT;
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || skipped_name(e->d_name) || strlen(e->d_name) >= DEV_NAME)
            continue;
        rc = push_dev(st, e->d_name);
    }
    closedir(d);
    if (rc < 0)
        return rc;
    if (rc == 1)
        pm_log(PM_LOG_WARN, "disk: more than %d devices in %s/block; only the first counted",
               MAX_DEVS, ctx->sys_root);
    if (st->ndevs)
        qsort(st->devs, st->ndevs, sizeof *st->devs, cmp_dev);
    return 0;
}

static int disk_open(const pm_sctx *ctx, pm_schema *s, void **state, pm_error *err)
{
    disk_state *st = calloc(1, sizeof *st);
    if (!st)
        return pm_error_set(err, PM_ENOMEM, "disk: out of memory");
    st->fd = -1;
    st->from = "sys/block";
    int lrc = list_devices(ctx, st);
    if (lrc == -ENOMEM) {
        disk_free(st);
        return pm_error_set(err, PM_ENOMEM, "disk: out of memory");
    }
    ssize_t n = lrc == -ENOENT || st->ndevs > 0
                    ? pm_sread_records(&st->fd, ctx->proc_fd, "diskstats", &st->buf, &st->cap,
                                       DISKSTATS_MAX)
                    : 0;
    if (n == -ENOMEM) {
        disk_free(st);
        return pm_error_set(err, PM_ENOMEM, "disk: out of memory");
    }
    if (lrc == -ENOENT && n > 0) {
        st->from = "diskstats";
        int r2 = list_from_diskstats(st, n);
        if (r2 < 0) {
            disk_free(st);
            return pm_error_set(err, PM_ENOMEM, "disk: out of memory");
        }
        pm_log(PM_LOG_INFO,
               "disk: no %s/block: %zu whole devices taken from the names in "
               "%s/diskstats",
               ctx->sys_root, st->ndevs, ctx->proc_root);
        if (r2 == 1)
            pm_log(PM_LOG_WARN,
                   "disk: more than %d devices in %s/diskstats; only the first "
                   "counted",
                   MAX_DEVS, ctx->proc_root);
    }
    if (n == -EFBIG)
        pm_log(PM_LOG_WARN,
               "disk: %s/diskstats is larger than %u bytes; disk counters not "
               "recorded",
               ctx->proc_root, DISKSTATS_MAX);
    if (n == -EFBIG)
        snprintf(st->why, sizeof st->why, "%s/diskstats is larger than %u bytes", ctx->proc_root,
                 DISKSTATS_MAX);
    else if (n < 0)
        snprintf(st->why, sizeof st->why, "%s/diskstats: %s", ctx->proc_root, strerror((int)-n));
    else if (st->ndevs == 0)
        snprintf(st->why, sizeof st->why, "no whole disk in %s", st->from);
    int have_stats = n > 0 && st->ndevs > 0;
    if (have_stats) {
        st->rb = pm_schema_add(s, "disk.read_bytes", "B", PM_COUNTER, PM_U64, "disk", 0);
        st->wb = pm_schema_add(s, "disk.write_bytes", "B", PM_COUNTER, PM_U64, "disk", 0);
        st->rops = pm_schema_add(s, "disk.read_ops", "1", PM_COUNTER, PM_U64, "disk", 0);
        st->wops = pm_schema_add(s, "disk.write_ops", "1", PM_COUNTER, PM_U64, "disk", 0);
        st->busy = pm_schema_add(s, "disk.busy_time", "s", PM_COUNTER, PM_F64, "disk", 0);
    } else {
        st->rb = st->wb = st->rops = st->wops = st->busy = -1;
        st->ndevs = 0;
    }
    st->out_pct = pm_schema_add(s, "fs.out.usage_pct", "%", PM_GAUGE, PM_F64, "disk", 0);
    st->out_used = pm_schema_add(s, "fs.out.used", "B", PM_GAUGE, PM_U64, "disk", 0);
    st->out_size = pm_schema_add(s, "fs.out.size", "B", PM_GAUGE, PM_U64, "disk", 0);
    st->root_pct = pm_schema_add(s, "fs.root.usage_pct", "%", PM_GAUGE, PM_F64, "disk", 0);
    if (st->root_pct < 0) {
        disk_free(st);
        return pm_error_set(err, PM_ENOMEM, "disk: cannot add columns");
    }
    *state = st;
    return 0;
}

static int whole_device(const disk_state *st, const char *name)
{
    return bsearch(name, st->devs, st->ndevs, sizeof *st->devs, cmp_dev) != NULL;
}

/* Usage as df(1) shows it: used / (used + available to users). */
static void fs_usage(const char *path, pm_sample *s, int pct, int used_col, int size_col)
{
    struct statvfs v;
    if (!path || statvfs(path, &v) != 0 || v.f_blocks == 0)
        return;
    double bs = (double)v.f_frsize;
    double used = ((double)v.f_blocks - (double)v.f_bfree) * bs;
    double avail = (double)v.f_bavail * bs;
    if (used + avail > 0)
        pm_sample_f64(s, pct, 100.0 * used / (used + avail));
    if (used_col >= 0)
        pm_sample_u64(s, used_col, (uint64_t)used);
    if (size_col >= 0)
        pm_sample_u64(s, size_col, (uint64_t)((double)v.f_blocks * bs));
}

static int disk_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    disk_state *st = state;
    if (st->ndevs) {
        ssize_t len =
            pm_sread_records(&st->fd, ctx->proc_fd, "diskstats", &st->buf, &st->cap, DISKSTATS_MAX);
        if (len == -EFBIG && !st->warned_big) {
            st->warned_big = 1;
            pm_log(PM_LOG_WARN,
                   "disk: %s/diskstats grew beyond %u bytes; disk counters not "
                   "recorded",
                   ctx->proc_root, DISKSTATS_MAX);
        }
        if (len > 0) {
            uint64_t rs = 0, ws = 0, ro = 0, wo = 0, ticks = 0;
            const char *bad = NULL;
            char *cur = st->buf, *line;
            while ((line = pm_next_line(&cur)) != NULL) {
                /* major minor name, then 11, 15 or 17 numbers. */
                char *f[20];
                size_t n = pm_split_fields(line, f, 20);
                if (n < 14 || !whole_device(st, f[2]))
                    continue;
                uint64_t v[11];
                int ok = 1;
                for (int i = 0; i < 11; i++)
                    ok &= pm_parse_u64(f[3 + i], &v[i]) == 0;
                if (!ok)
                    continue;
                if (v[0] > COUNT_MAX || v[2] > COUNT_MAX || v[4] > COUNT_MAX || v[6] > COUNT_MAX ||
                    v[9] > MS_MAX) {
                    bad = f[2];
                    break;
                }
                ro += v[0];    /* reads completed */
                rs += v[2];    /* sectors read */
                wo += v[4];    /* writes completed */
                ws += v[6];    /* sectors written */
                ticks += v[9]; /* ms spent doing I/O */
            }
            /* Sums of at most 65536 devices below 2^54 stay below 2^70: a
             * sum above 2^55 sectors (bytes past 2^64) is no more real. */
            if (!bad && (rs > 2 * COUNT_MAX || ws > 2 * COUNT_MAX))
                bad = "the sum over devices";
            if (bad && !st->warned_bad) {
                st->warned_bad = 1;
                pm_log(PM_LOG_WARN,
                       "disk: %s/diskstats: %s: a count that cannot be real; disk "
                       "counters not recorded in such samples (noted once)",
                       ctx->proc_root, bad);
            }
            if (!bad) {
                pm_sample_u64(s, st->rb, rs * 512);
                pm_sample_u64(s, st->wb, ws * 512);
                pm_sample_u64(s, st->rops, ro);
                pm_sample_u64(s, st->wops, wo);
                pm_sample_f64(s, st->busy, (double)ticks / 1000.0);
            }
        }
    }
    /* How full the file systems are changes slowly, and statvfs on a
     * network file system (an NFS or Lustre output directory) may cost a
     * round trip: at most once a second (the analysis holds the gauge). */
    if (pm_sctx_rare_due(ctx, &st->fs_due)) {
        fs_usage(ctx->out_dir, s, st->out_pct, st->out_used, st->out_size);
        fs_usage("/", s, st->root_pct, -1, -1);
    }
    return 0;
}

static void disk_describe(void *state, pm_buf *j)
{
    disk_state *st = state;
    pm_buf_puts(j, "\"disks\":[");
    for (size_t i = 0; i < st->ndevs; i++) {
        if (i)
            pm_buf_puts(j, ",");
        pm_buf_json_str(j, st->devs[i]);
    }
    pm_buf_puts(j, "],\"disks_from\":");
    pm_buf_json_str(j, st->from);
    pm_buf_puts(j, ",\"disk_counters\":");
    pm_buf_json_str(j, st->why[0] ? st->why : "ok");
}

static void disk_close(void *state)
{
    disk_state *st = state;
    if (st)
        disk_free(st);
}

const pm_source pm_source_disk = {
    .name = "disk",
    .open = disk_open,
    .read = disk_read,
    .describe = disk_describe,
    .close = disk_close,
};
