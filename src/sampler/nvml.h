/* nvml.h - the NVIDIA GPU source's state, shared by its files:
 * src_nvml.c (the source's table, the devices, the queries of a sample),
 * nvml_procs.c (the job's processes on each GPU and its share of it) and
 * nvml_xid.c (XID error events).  Private to the sampler.
 */
#ifndef PERFMON_NVML_SRC_H
#define PERFMON_NVML_SRC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpu_dcgm.h"
#include "gpu_gpm.h"
#include "nvml_api.h"
#include "perfmon/clock.h"
#include "perfmon/fileio.h"
#include "perfmon/log.h"
#include "perfmon/parse.h"
#include "perfmon/source.h"

#define MAX_GPUS 64
#define MAX_PROCS 256    /* compute processes listed per GPU and sample */
#define MAX_PUTIL 512    /* process utilisation samples per GPU and sample */
#define MAX_VERDICTS 256 /* tree verdicts remembered between samples */
#define MAX_DEPTH 64     /* parent links followed to find a root */
#define PCIE_PER_SAMPLE 2
#define XID_PER_SAMPLE 64 /* events taken from the set per sample */
#define DEFAULT_LIB "libnvidia-ml.so.1"

/* The entry points, resolved by dlsym; an optional one that is missing
 * (an old driver) makes its queries unsupported. */
typedef struct nvml_fns {
#define FN(name) __typeof__(name) *
    FN(nvmlInit_v2) init;
    FN(nvmlShutdown) shutdown;
    FN(nvmlErrorString) error_string;
    FN(nvmlDeviceGetCount_v2) count;
    FN(nvmlDeviceGetHandleByIndex_v2) handle;
    FN(nvmlDeviceGetUtilizationRates) util;
    FN(nvmlDeviceGetEncoderUtilization) enc;
    FN(nvmlDeviceGetDecoderUtilization) dec;
    FN(nvmlDeviceGetMemoryInfo) mem;
    FN(nvmlDeviceGetBAR1MemoryInfo) bar1;
    FN(nvmlDeviceGetPowerUsage) power;
    FN(nvmlDeviceGetTotalEnergyConsumption) energy;
    FN(nvmlDeviceGetTemperature) temp;
    FN(nvmlDeviceGetFanSpeed) fan;
    FN(nvmlDeviceGetClockInfo) clock;
    FN(nvmlDeviceGetPcieThroughput) pcie;
    FN(nvmlDeviceGetTotalEccErrors) ecc;
    FN(nvmlDeviceGetCurrentClocksEventReasons) throttle;
    FN(nvmlDeviceGetViolationStatus) violation;
    FN(nvmlDeviceGetComputeRunningProcesses_v3) procs;
    FN(nvmlDeviceGetComputeRunningProcesses) procs_v1;
    FN(nvmlDeviceGetName) name;
    FN(nvmlDeviceGetUUID) uuid;
    FN(nvmlDeviceGetPciInfo_v3) pci;
    FN(nvmlDeviceGetEnforcedPowerLimit) plimit;
    FN(nvmlSystemGetDriverVersion) driver;
    FN(nvmlSystemGetCudaDriverVersion_v2) cuda;
    FN(nvmlEventSetCreate) ev_create;
    FN(nvmlDeviceGetSupportedEventTypes) ev_supported;
    FN(nvmlDeviceRegisterEvents) ev_register;
    FN(nvmlEventSetWait_v2) ev_wait;
    FN(nvmlEventSetFree) ev_free;
    FN(nvmlDeviceGetProcessUtilization) putil;
    FN(nvmlDeviceGetMigMode) mig_mode;
    FN(nvmlDeviceGetMaxMigDeviceCount) mig_count;
    FN(nvmlDeviceGetMigDeviceHandleByIndex) mig_handle;
    FN(nvmlDeviceGetGpuInstanceId) mig_gi;
    FN(nvmlGpmQueryDeviceSupport) gpm_support;
    FN(nvmlGpmSampleAlloc) gpm_alloc;
    FN(nvmlGpmSampleFree) gpm_free;
    FN(nvmlGpmSampleGet) gpm_get;
    FN(nvmlGpmMigSampleGet) gpm_mig_get;
    FN(nvmlGpmMetricsGet) gpm_metrics;
#undef FN
} nvml_fns;

/* Queries: one NVML call each, filling one to three metrics. */
enum {
    Q_UTIL,
    Q_ENC,
    Q_DEC,
    Q_MEM,
    Q_BAR1,
    Q_POWER,
    Q_ENERGY,
    Q_TEMP,
    Q_FAN,
    Q_CLK_GR,
    Q_CLK_SM,
    Q_CLK_MEM,
    Q_PCIE_TX,
    Q_PCIE_RX,
    Q_ECC_SBE,
    Q_ECC_DBE,
    Q_THROTTLE,
    Q_VIOL_POWER,
    Q_VIOL_THERMAL,
    Q_PROCS,
    Q_PUTIL,
    NQ
};

#define NMET 26 /* the rows of metrics[] (src_nvml.c, checked there) */

typedef struct gpu {
    unsigned index;  /* NVML's device index (the parent's for a MIG instance) */
    unsigned mig;    /* 0, or 1 + the MIG instance's GPU instance id */
    char prefix[32]; /* of its columns: gpu.<index> or gpu.<index>.mig<gi> */
    nvmlDevice_t dev;
    int lost;
    unsigned char unsupported[NQ];
    int col[NMET]; /* -1: no column */
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    char bus_id[32];
    unsigned long long mem_total;
    unsigned power_limit_mw;
    int col_xid;  /* -1: not registered for XID events */
    uint64_t xid; /* XID events seen */
    pm_gpm gpm;
    int gpm_on;        /* SM activity and the others are read */
    int gpm_failed;    /* a GPM sample failed (said once) */
    char gpm_why[300]; /* why not ("" when read) */
    int dcgm_id;       /* DCGM's id when its profiling fields stand in, else -1 */
    int dcgm_col[PM_DCGM_NF];
    unsigned long long putil_ts; /* newest process utilisation sample seen (us) */
} gpu;

typedef struct verdict {
    int32_t pid;
    int8_t in_tree;
} verdict;

typedef struct nvml_state {
    void *dl;
    nvml_fns f;
    gpu g[MAX_GPUS];
    size_t n;
    unsigned pcie_next; /* next GPU whose PCIe throughput is read */
    char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    int cuda;                              /* 12040 for 12.4, 0 when unknown */
    nvmlProcessInfo_v2_t procs[MAX_PROCS]; /* or as many v1 entries */
    verdict seen[MAX_VERDICTS], now[MAX_VERDICTS];
    size_t nseen, nnow;
    nvmlEventSet_t events; /* NULL: no XID events */
    char xid_why[200];     /* why some GPU or all have no xid column ("" none) */
    int xid_noted;
    pm_gpm_api gpm_api;
    pm_dcgm *dcgm; /* DCGM, opened for the first GPU without GPM */
    int dcgm_tried;
    char dcgm_why[200];                              /* why DCGM is not read */
    int gpm_noted;                                   /* the notes on GPM said */
    nvmlProcessUtilizationSample_t putil[MAX_PUTIL]; /* one GPU's samples */
} nvml_state;

const char *pm_nv_errstr(const nvml_state *st, nvmlReturn_t rc);
nvmlReturn_t pm_nv_query_procs(nvml_state *st, const pm_sctx *ctx, gpu *g, uint64_t out[3],
                               int *partial);
nvmlReturn_t pm_nv_query_putil(nvml_state *st, const pm_sctx *ctx, gpu *g, uint64_t out[3]);
nvmlReturn_t pm_nv_query(nvml_state *st, const pm_sctx *ctx, gpu *g, int q, uint64_t out[3],
                         int *partial);
void pm_nv_open_events(nvml_state *st);
int pm_nv_register_xid(nvml_state *st, gpu *g, pm_schema *s);
void pm_nv_read_xid(nvml_state *st, const pm_sctx *ctx);

#endif
