/* The registry of sampler sources and the reader context. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "perfmon/source.h"

const pm_source *const pm_sources[] = {
    &pm_source_cpu,    &pm_source_memory,   &pm_source_disk,       &pm_source_net,
    &pm_source_nvml,   &pm_source_perf,     &pm_source_infiniband, &pm_source_rapl,
    &pm_source_events, &pm_source_proctree, &pm_source_cgroup,     NULL,
};

int pm_sctx_open(pm_sctx *ctx, const char *proc_root, const char *sys_root, pm_error *err)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->proc_fd = ctx->sys_fd = -1;
    ctx->proc_root = proc_root;
    ctx->sys_root = sys_root;
    ctx->proc_fd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (ctx->proc_fd < 0)
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot open", proc_root);
    ctx->sys_fd = open(sys_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (ctx->sys_fd < 0) {
        /* No /sys (a minimal container): sources that need it are absent. */
        ctx->sys_fd = open("/nonexistent-perfmon", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    long hz = sysconf(_SC_CLK_TCK);
    ctx->clk_tck = hz > 0 ? hz : 100;
    long ps = sysconf(_SC_PAGESIZE);
    ctx->page_size = ps > 0 ? ps : 4096;
    ctx->uid = getuid();
    return 0;
}

void pm_sctx_close(pm_sctx *ctx)
{
    if (ctx->proc_fd >= 0)
        close(ctx->proc_fd);
    if (ctx->sys_fd >= 0)
        close(ctx->sys_fd);
    ctx->proc_fd = ctx->sys_fd = -1;
}
