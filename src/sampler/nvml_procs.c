/* NVIDIA GPU source, the job's processes: which compute and graphics
 * processes on a GPU belong to the followed tree, and the job's share of
 * the GPU from per-process utilisation (src_nvml.c).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpu_dcgm.h"
#include "gpu_gpm.h"
#include "nvml_api.h"
#include "perfmon/clock.h"
#include "perfmon/fileio.h"
#include "perfmon/log.h"
#include "perfmon/parse.h"
#include "perfmon/source.h"
#include "nvml.h"

/* Is pid in the monitored tree?  Follows parent links (proc(5) stat
 * field 4, read after the last ')') up to a root, at most MAX_DEPTH. */
static int walk_tree(const pm_sctx *ctx, int32_t pid)
{
    if (!ctx->any_uid) {
        char dir[24];
        struct stat sb;
        snprintf(dir, sizeof dir, "%d", (int)pid);
        if (fstatat(ctx->proc_fd, dir, &sb, 0) != 0 || sb.st_uid != ctx->uid)
            return 0;
    }
    for (int depth = 0; depth < MAX_DEPTH && pid > 0; depth++) {
        for (size_t r = 0; r < ctx->nroots; r++)
            if (ctx->roots[r] == pid)
                return 1;
        char path[32], buf[512];
        snprintf(path, sizeof path, "%d/stat", (int)pid);
        if (pm_read_small(ctx->proc_fd, path, buf, sizeof buf, NULL) <= 0)
            return 0;
        const char *p = strrchr(buf, ')');
        int64_t ppid;
        if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
            return 0;
        p += 4;
        if (pm_scan_i64(&p, &ppid) != 0 || ppid < 0 || ppid > INT32_MAX)
            return 0;
        pid = (int32_t)ppid;
    }
    return 0;
}

/* The verdict for pid, reusing the previous sample's: a process listed by
 * the driver is alive, so its pid cannot have been reused meanwhile
 * unless it vanished from the list, which drops it from the cache. */
static int in_tree(nvml_state *st, const pm_sctx *ctx, int32_t pid)
{
    for (size_t i = 0; i < st->nnow; i++)
        if (st->now[i].pid == pid)
            return st->now[i].in_tree;
    int v = -1;
    for (size_t i = 0; i < st->nseen; i++)
        if (st->seen[i].pid == pid)
            v = st->seen[i].in_tree;
    if (v < 0)
        v = walk_tree(ctx, pid);
    if (st->nnow < MAX_VERDICTS)
        st->now[st->nnow++] = (verdict){pid, (int8_t)v};
    return v;
}

/* Compute processes: count, and count and memory of the tree's. */
nvmlReturn_t pm_nv_query_procs(nvml_state *st, const pm_sctx *ctx, gpu *g, uint64_t out[3],
                               int *partial)
{
    unsigned int n = MAX_PROCS;
    size_t size = sizeof(nvmlProcessInfo_v2_t);
    nvmlReturn_t rc;
    if (st->f.procs) {
        rc = st->f.procs(g->dev, &n, st->procs);
    } else if (st->f.procs_v1) {
        size = sizeof(nvmlProcessInfo_v1_t);
        rc = st->f.procs_v1(g->dev, &n, (nvmlProcessInfo_v1_t *)st->procs);
    } else {
        return NVML_ERROR_NOT_SUPPORTED;
    }
    *partial = 0;
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
        out[0] = n; /* the count needed; the list itself did not fit */
        *partial = 1;
        return NVML_SUCCESS;
    }
    if (rc != NVML_SUCCESS)
        return rc;
    if (n > MAX_PROCS)
        n = MAX_PROCS;
    out[0] = n;
    out[1] = out[2] = 0;
    for (unsigned i = 0; i < n && ctx->nroots; i++) {
        nvmlProcessInfo_v1_t pi; /* pid and memory lead both layouts */
        memcpy(&pi, (const unsigned char *)st->procs + i * size, sizeof pi);
        if (pi.pid == 0 || pi.pid > INT32_MAX || !in_tree(st, ctx, (int32_t)pi.pid))
            continue;
        out[1]++;
        if (pi.usedGpuMemory != NVML_VALUE_NOT_AVAILABLE)
            out[2] += pi.usedGpuMemory;
    }
    return NVML_SUCCESS;
}

/* The followed processes' share of the GPU since the previous pm_nv_query:
 * per process the mean of its driver samples (smUtil, memUtil: % of the
 * driver's sample period in which a kernel of it ran, in which it used
 * memory), summed over the tree's processes. */
nvmlReturn_t pm_nv_query_putil(nvml_state *st, const pm_sctx *ctx, gpu *g, uint64_t out[3])
{
    if (!st->f.putil)
        return NVML_ERROR_NOT_SUPPORTED;
    unsigned int n = MAX_PUTIL;
    nvmlReturn_t rc = st->f.putil(g->dev, st->putil, &n, g->putil_ts);
    out[0] = out[1] = 0;
    if (rc == NVML_ERROR_NOT_FOUND)
        return NVML_SUCCESS; /* no process ran a kernel since */
    if (rc != NVML_SUCCESS)
        return rc;
    if (n > MAX_PUTIL)
        n = MAX_PUTIL;
    double sm = 0, mem = 0;
    for (unsigned i = 0; i < n; i++) {
        const nvmlProcessUtilizationSample_t *x = &st->putil[i];
        if (x->timeStamp > g->putil_ts)
            g->putil_ts = x->timeStamp;
    }
    /* Each pid once: its samples' mean, where the pid's first sample is. */
    for (unsigned i = 0; i < n && ctx->nroots; i++) {
        const nvmlProcessUtilizationSample_t *x = &st->putil[i];
        int first = 1;
        for (unsigned k = 0; k < i && first; k++)
            first = st->putil[k].pid != x->pid;
        if (!first || x->pid == 0 || x->pid > INT32_MAX || !in_tree(st, ctx, (int32_t)x->pid))
            continue;
        double s1 = 0, s2 = 0;
        unsigned c = 0;
        for (unsigned k = i; k < n; k++)
            if (st->putil[k].pid == x->pid && st->putil[k].smUtil <= 100 &&
                st->putil[k].memUtil <= 100) {
                s1 += st->putil[k].smUtil;
                s2 += st->putil[k].memUtil;
                c++;
            }
        if (c) {
            sm += s1 / c;
            mem += s2 / c;
        }
    }
    out[0] = (uint64_t)(sm > 100 ? 100 : sm + 0.5);
    out[1] = (uint64_t)(mem > 100 ? 100 : mem + 0.5);
    return NVML_SUCCESS;
}
