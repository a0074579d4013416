/* Memory source: /proc/meminfo (proc(5); values in kB).
 *
 * "used" follows psutil and free(1): total - available.  Kernels before
 * 3.14 have no MemAvailable; "used" is then the classic definition of
 * free(1) before it: total - free - buffers - cached.  Which one a profile
 * holds is in the metadata ("mem_used"), decided once at start.
 *
 * A value above 2^50 kB (1 EiB; x86-64 addresses at most 4 PiB) cannot be
 * real: it is not recorded, nor what is computed from it, and noted once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/fileio.h"
#include "perfmon/log.h"
#include "perfmon/parse.h"
#include "perfmon/source.h"

#define KB_MAX (1ull << 50)

enum { K_TOTAL, K_AVAIL, K_FREE, K_BUFFERS, K_CACHED, K_SHMEM, K_SWTOTAL, K_SWFREE, NKEYS };
static const char *const keys[NKEYS] = {"MemTotal", "MemAvailable", "MemFree",   "Buffers",
                                        "Cached",   "Shmem",        "SwapTotal", "SwapFree"};

typedef struct mem_state {
    int total, avail, used, free_, buffers, cached, shared, pct;
    int swap_total, swap_used, swap_pct;
    int classic;     /* no MemAvailable at start: used = total - free - buffers - cached */
    unsigned warned; /* bit per key: an impossible value was noted */
    int fd;
} mem_state;

static const char used_available[] = "MemTotal - MemAvailable";
static const char used_classic[] = "MemTotal - MemFree - Buffers - Cached (no MemAvailable: "
                                   "kernel before 3.14)";

/* keys[k] in bytes: 0, or -1 when absent or malformed, or -2 when the
 * value cannot be real (noted once per key). */
static int kv_bytes(mem_state *st, const pm_sctx *ctx, const char *buf, int k, uint64_t *out)
{
    uint64_t v;
    if (pm_kv_u64(buf, keys[k], &v) != 0)
        return -1;
    if (v > KB_MAX) {
        if (!(st->warned & (1u << k))) {
            st->warned |= 1u << k;
            pm_log(PM_LOG_WARN,
                   "memory: %s/meminfo: %s %llu kB cannot be real (above 2^50 kB); "
                   "not recorded",
                   ctx->proc_root, keys[k], (unsigned long long)v);
        }
        return -2;
    }
    *out = v * 1024;
    return 0;
}

static int mem_open(const pm_sctx *ctx, pm_schema *s, void **state, pm_error *err)
{
    char buf[8192];
    uint64_t v;
    if (pm_read_small(ctx->proc_fd, "meminfo", buf, sizeof buf, NULL) <= 0 ||
        pm_kv_u64(buf, "MemTotal", &v) != 0)
        return pm_error_set(err, PM_EIO, "%s/meminfo: cannot read MemTotal", ctx->proc_root);
    mem_state *st = calloc(1, sizeof *st);
    if (!st)
        return pm_error_set(err, PM_ENOMEM, "memory: out of memory");
    st->fd = -1;
    st->classic = pm_kv_u64(buf, "MemAvailable", &v) != 0;
    st->total = pm_schema_add(s, "mem.total", "B", PM_GAUGE, PM_U64, "memory", 0);
    st->avail = pm_schema_add(s, "mem.available", "B", PM_GAUGE, PM_U64, "memory", 0);
    st->used = pm_schema_add(s, "mem.used", "B", PM_GAUGE, PM_U64, "memory", 0);
    st->free_ = pm_schema_add(s, "mem.free", "B", PM_GAUGE, PM_U64, "memory", 0);
    st->buffers = pm_schema_add(s, "mem.buffers", "B", PM_GAUGE, PM_U64, "memory", 0);
    st->cached = pm_schema_add(s, "mem.cached", "B", PM_GAUGE, PM_U64, "memory", 0);
    st->shared = pm_schema_add(s, "mem.shared", "B", PM_GAUGE, PM_U64, "memory", 0);
    st->pct = pm_schema_add(s, "mem.percent", "%", PM_GAUGE, PM_F64, "memory", 0);
    st->swap_total = pm_schema_add(s, "swap.total", "B", PM_GAUGE, PM_U64, "memory", 0);
    st->swap_used = pm_schema_add(s, "swap.used", "B", PM_GAUGE, PM_U64, "memory", 0);
    st->swap_pct = pm_schema_add(s, "swap.percent", "%", PM_GAUGE, PM_F64, "memory", 0);
    if (st->swap_pct < 0) {
        free(st);
        return pm_error_set(err, PM_ENOMEM, "memory: cannot add columns");
    }
    if (st->classic)
        pm_log(PM_LOG_INFO,
               "memory: %s/meminfo has no MemAvailable (kernel before 3.14): "
               "memory used is %s",
               ctx->proc_root, used_classic);
    *state = st;
    return 0;
}

static void put_used(mem_state *st, pm_sample *s, uint64_t total, uint64_t unused)
{
    uint64_t used = total > unused ? total - unused : 0;
    pm_sample_u64(s, st->used, used);
    if (total)
        pm_sample_f64(s, st->pct, 100.0 * (double)used / (double)total);
}

static int mem_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    mem_state *st = state;
    char buf[8192];
    if (pm_pread_kept(&st->fd, ctx->proc_fd, "meminfo", buf, sizeof buf, NULL) <= 0)
        return -1;
    uint64_t v[NKEYS] = {0};
    int rc[NKEYS];
    for (int k = 0; k < NKEYS; k++)
        rc[k] = kv_bytes(st, ctx, buf, k, &v[k]);
    if (rc[K_TOTAL] == -1)
        return -1;
    int ok_total = rc[K_TOTAL] == 0;
    if (ok_total)
        pm_sample_u64(s, st->total, v[K_TOTAL]);
    if (!st->classic && rc[K_AVAIL] == 0) {
        pm_sample_u64(s, st->avail, v[K_AVAIL]);
        if (ok_total)
            put_used(st, s, v[K_TOTAL], v[K_AVAIL]);
    }
    if (st->classic && ok_total && rc[K_FREE] == 0 && rc[K_BUFFERS] == 0 && rc[K_CACHED] == 0)
        put_used(st, s, v[K_TOTAL], v[K_FREE] + v[K_BUFFERS] + v[K_CACHED]);
    if (rc[K_FREE] == 0)
        pm_sample_u64(s, st->free_, v[K_FREE]);
    if (rc[K_BUFFERS] == 0)
        pm_sample_u64(s, st->buffers, v[K_BUFFERS]);
    if (rc[K_CACHED] == 0)
        pm_sample_u64(s, st->cached, v[K_CACHED]);
    if (rc[K_SHMEM] == 0)
        pm_sample_u64(s, st->shared, v[K_SHMEM]);
    if (rc[K_SWTOTAL] == 0 && rc[K_SWFREE] == 0) {
        uint64_t t = v[K_SWTOTAL], f = v[K_SWFREE];
        uint64_t used = t > f ? t - f : 0;
        pm_sample_u64(s, st->swap_total, t);
        pm_sample_u64(s, st->swap_used, used);
        pm_sample_f64(s, st->swap_pct, t ? 100.0 * (double)used / (double)t : 0.0);
    }
    return 0;
}

static void mem_describe(void *state, pm_buf *j)
{
    mem_state *st = state;
    pm_buf_puts(j, "\"mem_used\":");
    pm_buf_json_str(j, st->classic ? used_classic : used_available);
}

static void mem_close(void *state)
{
    mem_state *st = state;
    if (!st)
        return;
    pm_close_kept(&st->fd);
    free(st);
}

const pm_source pm_source_memory = {
    .name = "memory",
    .open = mem_open,
    .read = mem_read,
    .describe = mem_describe,
    .close = mem_close,
    .essential = 1,
};
