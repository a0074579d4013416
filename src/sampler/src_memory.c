/* Memory source: /proc/meminfo (proc(5); values in kB).
 * "used" follows psutil and free(1): total - available. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/fileio.h"
#include "perfmon/parse.h"
#include "perfmon/source.h"

typedef struct mem_state {
    int total, avail, used, free_, buffers, cached, shared, pct;
    int swap_total, swap_used, swap_pct;
    int fd;
} mem_state;

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
    *state = st;
    return 0;
}

static int mem_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    mem_state *st = state;
    char buf[8192];
    if (pm_pread_kept(&st->fd, ctx->proc_fd, "meminfo", buf, sizeof buf, NULL) <= 0)
        return -1;
    uint64_t total, avail, v, sw_total = 0, sw_free = 0;
    if (pm_kv_u64(buf, "MemTotal", &total) != 0)
        return -1;
    total *= 1024;
    pm_sample_u64(s, st->total, total);
    if (pm_kv_u64(buf, "MemAvailable", &avail) == 0) {
        /* Kernels before 3.14 lack MemAvailable: leave it and "used" unset
         * rather than guess. */
        avail *= 1024;
        pm_sample_u64(s, st->avail, avail);
        uint64_t used = total > avail ? total - avail : 0;
        pm_sample_u64(s, st->used, used);
        if (total)
            pm_sample_f64(s, st->pct, 100.0 * (double)used / (double)total);
    }
    if (pm_kv_u64(buf, "MemFree", &v) == 0)
        pm_sample_u64(s, st->free_, v * 1024);
    if (pm_kv_u64(buf, "Buffers", &v) == 0)
        pm_sample_u64(s, st->buffers, v * 1024);
    if (pm_kv_u64(buf, "Cached", &v) == 0)
        pm_sample_u64(s, st->cached, v * 1024);
    if (pm_kv_u64(buf, "Shmem", &v) == 0)
        pm_sample_u64(s, st->shared, v * 1024);
    if (pm_kv_u64(buf, "SwapTotal", &sw_total) == 0 && pm_kv_u64(buf, "SwapFree", &sw_free) == 0) {
        uint64_t used = sw_total > sw_free ? sw_total - sw_free : 0;
        pm_sample_u64(s, st->swap_total, sw_total * 1024);
        pm_sample_u64(s, st->swap_used, used * 1024);
        pm_sample_f64(s, st->swap_pct, sw_total ? 100.0 * (double)used / (double)sw_total : 0.0);
    }
    return 0;
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
    .close = mem_close,
    .essential = 1,
};
