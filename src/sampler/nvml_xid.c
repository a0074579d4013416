/* NVIDIA GPU source, XID errors: one NVML event set, each GPU registered
 * for critical XID errors, polled at each sample (src_nvml.c).
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

/* The event set for XID errors, where the library has the entry points. */
void pm_nv_open_events(nvml_state *st)
{
    const nvml_fns *f = &st->f;
    if (!f->ev_create || !f->ev_register || !f->ev_wait || !f->ev_free) {
        snprintf(st->xid_why, sizeof st->xid_why,
                 "NVML library lacks %s: no XID events (gpu.<n>.xid)",
                 !f->ev_create     ? "nvmlEventSetCreate"
                 : !f->ev_register ? "nvmlDeviceRegisterEvents"
                 : !f->ev_wait     ? "nvmlEventSetWait_v2"
                                   : "nvmlEventSetFree");
        return;
    }
    nvmlReturn_t nr = f->ev_create(&st->events);
    if (nr != NVML_SUCCESS) {
        st->events = NULL;
        snprintf(st->xid_why, sizeof st->xid_why,
                 "NVML cannot make an event set (%s): no XID events (gpu.<n>.xid)",
                 pm_nv_errstr(st, nr));
    }
}

/* Register g for XID events; its gpu.<n>.xid column when it can be.
 * Returns 0 or a negative PM_E* code. */
int pm_nv_register_xid(nvml_state *st, gpu *g, pm_schema *s)
{
    g->col_xid = -1;
    if (!st->events)
        return 0;
    unsigned long long types = nvmlEventTypeXidCriticalError;
    nvmlReturn_t nr = NVML_SUCCESS;
    if (st->f.ev_supported && st->f.ev_supported(g->dev, &types) == NVML_SUCCESS &&
        !(types & nvmlEventTypeXidCriticalError))
        nr = NVML_ERROR_NOT_SUPPORTED;
    if (nr == NVML_SUCCESS)
        nr = st->f.ev_register(g->dev, nvmlEventTypeXidCriticalError, st->events);
    if (nr != NVML_SUCCESS) {
        if (!st->xid_why[0])
            snprintf(st->xid_why, sizeof st->xid_why,
                     "GPU %u cannot report XID events (%s): it has no gpu.%u.xid", g->index,
                     pm_nv_errstr(st, nr), g->index);
        return 0;
    }
    char name[48];
    snprintf(name, sizeof name, "gpu.%u.xid", g->index);
    g->col_xid = pm_schema_add(s, name, "1", PM_COUNTER, PM_U64, "events", 0);
    return g->col_xid < 0 ? g->col_xid : 0;
}

/* The XID events waiting in the set, each an "xid" event note. */
void pm_nv_read_xid(nvml_state *st, const pm_sctx *ctx)
{
    for (int k = 0; k < XID_PER_SAMPLE; k++) {
        nvmlEventData_t ev;
        memset(&ev, 0, sizeof ev);
        nvmlReturn_t nr = st->f.ev_wait(st->events, &ev, 0);
        if (nr == NVML_ERROR_TIMEOUT)
            return;
        if (nr != NVML_SUCCESS) {
            /* Said once; the set is polled again next sample. */
            if (!st->xid_noted) {
                char msg[200];
                snprintf(msg, sizeof msg, "nvml: waiting for XID events failed: %s",
                         pm_nv_errstr(st, nr));
                pm_sctx_note(ctx, msg);
                st->xid_noted = 1;
            }
            return;
        }
        if (!(ev.eventType & nvmlEventTypeXidCriticalError))
            continue;
        gpu *g = NULL;
        for (size_t i = 0; i < st->n && !g; i++)
            if (st->g[i].dev == ev.device)
                g = &st->g[i];
        if (!g || g->col_xid < 0)
            continue;
        g->xid++;
        char msg[160];
        snprintf(msg, sizeof msg, "{\"event\":\"xid\",\"t\":%.6f,\"gpu\":%u,\"xid\":%llu}",
                 (double)pm_wall_ns() / 1e9, g->index, ev.eventData);
        pm_sctx_note(ctx, msg);
    }
}
