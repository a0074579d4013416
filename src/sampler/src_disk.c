/* Disk source: /proc/diskstats (Documentation/admin-guide/iostats.rst)
 * summed over whole physical devices, and the usage of the filesystems
 * holding the output directory and "/".
 *
 * Whole devices are the entries of /sys/block; partitions are not listed
 * there, so summing them never counts a byte twice.  Stacked or virtual
 * devices (dm-*, md*, loop*, ram*, zram*, nbd*) are left out for the same
 * reason: their I/O is also counted on the disks beneath them.
 * Sectors in diskstats are always 512 bytes, whatever the device's size.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/log.h"
#include "perfmon/mem.h"
#include "perfmon/parse.h"
#include "perfmon/source.h"

/* Whole devices: at most this many (multipath hosts list every path of
 * every LUN as an sd device), named in fewer than DEV_NAME bytes. */
#define MAX_DEVS 65536
#define DEV_NAME 32
/* /proc/diskstats is about 100-200 bytes a device: 4 MiB holds tens of
 * thousands (loop devices of snaps and containers, NVMe namespaces). */
#define DISKSTATS_MAX (4u << 20)

typedef struct disk_state {
    char (*devs)[DEV_NAME]; /* sorted, for bsearch */
    size_t ndevs, capdevs;
    int rb, wb, rops, wops, busy;
    int out_pct, out_used, out_size, root_pct;
    char *buf;
    size_t cap;
    int fd;
    int warned_big;
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

/* The whole devices: the entries of /sys/block, less the stacked and
 * virtual ones.  Returns 0 or -ENOMEM. */
static int list_devices(const pm_sctx *ctx, disk_state *st)
{
    int fd = openat(ctx->sys_fd, "block", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    struct dirent *e;
    int more = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || skipped_name(e->d_name) || strlen(e->d_name) >= DEV_NAME)
            continue;
        if (st->ndevs == MAX_DEVS) {
            more = 1;
            break;
        }
        if (st->ndevs == st->capdevs) {
            size_t nc = st->capdevs ? st->capdevs * 2 : 16;
            char(*nd)[DEV_NAME] = pm_realloc_array(st->devs, nc, sizeof *nd);
            if (!nd) {
                closedir(d);
                return -ENOMEM;
            }
            st->devs = nd;
            st->capdevs = nc;
        }
        strcpy(st->devs[st->ndevs++], e->d_name);
    }
    closedir(d);
    if (more)
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
    if (list_devices(ctx, st) != 0) {
        disk_free(st);
        return pm_error_set(err, PM_ENOMEM, "disk: out of memory");
    }
    ssize_t n = st->ndevs > 0 ? pm_pread_grow(&st->fd, ctx->proc_fd, "diskstats", &st->buf,
                                              &st->cap, DISKSTATS_MAX)
                              : 0;
    if (n == -ENOMEM) {
        disk_free(st);
        return pm_error_set(err, PM_ENOMEM, "disk: out of memory");
    }
    if (n == -EFBIG)
        pm_log(PM_LOG_WARN, "disk: %s/diskstats is larger than %u bytes; disk counters not "
               "recorded", ctx->proc_root, DISKSTATS_MAX);
    int have_stats = n > 0;
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
        ssize_t len = pm_pread_grow(&st->fd, ctx->proc_fd, "diskstats", &st->buf, &st->cap,
                                    DISKSTATS_MAX);
        if (len == -EFBIG && !st->warned_big) {
            st->warned_big = 1;
            pm_log(PM_LOG_WARN, "disk: %s/diskstats grew beyond %u bytes; disk counters not "
                   "recorded", ctx->proc_root, DISKSTATS_MAX);
        }
        if (len > 0) {
            uint64_t rs = 0, ws = 0, ro = 0, wo = 0, ticks = 0;
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
                ro += v[0]; /* reads completed */
                rs += v[2]; /* sectors read */
                wo += v[4]; /* writes completed */
                ws += v[6]; /* sectors written */
                ticks += v[9]; /* ms spent doing I/O */
            }
            pm_sample_u64(s, st->rb, rs * 512);
            pm_sample_u64(s, st->wb, ws * 512);
            pm_sample_u64(s, st->rops, ro);
            pm_sample_u64(s, st->wops, wo);
            pm_sample_f64(s, st->busy, (double)ticks / 1000.0);
        }
    }
    fs_usage(ctx->out_dir, s, st->out_pct, st->out_used, st->out_size);
    fs_usage("/", s, st->root_pct, -1, -1);
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
    pm_buf_puts(j, "]");
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
