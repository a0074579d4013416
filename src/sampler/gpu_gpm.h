/* gpu_gpm.h - what a GPU's streaming multiprocessors did, through NVML's
 * GPU Performance Monitoring (GPM) interface (nvml_api.h), for the NVIDIA
 * GPU source (src_nvml.c).  Private to the sampler.
 *
 * GPM snapshots the GPU's performance counters into opaque samples and
 * computes a metric over the time between two samples of one device.
 * The source takes a GPM sample when it opens, then one per perfmon
 * sample at least 100 ms after the previous one (NVML's minimum), and
 * records the metrics over the interval since the previous.
 * A MIG instance is sampled through its parent GPU and its GPU instance
 * id (nvmlGpmMigSampleGet).
 *
 * Ownership: a pm_gpm holds two GPM samples from open to close.
 */
#ifndef PERFMON_GPU_GPM_H
#define PERFMON_GPU_GPM_H

#include <stddef.h>
#include <stdint.h>

#include "nvml_api.h"
#include "perfmon/source.h"

/* The GPM entry points, resolved by src_nvml.c; NULL where the library
 * lacks one (a driver before 520 has none of them). */
typedef struct pm_gpm_api {
    __typeof__(nvmlGpmQueryDeviceSupport) *support;
    __typeof__(nvmlGpmSampleAlloc) *alloc;
    __typeof__(nvmlGpmSampleFree) *free;
    __typeof__(nvmlGpmSampleGet) *get;
    __typeof__(nvmlGpmMigSampleGet) *mig_get;
    __typeof__(nvmlGpmMetricsGet) *metrics;
} pm_gpm_api;

#define PM_GPM_NMET 11 /* metrics read (gpu_gpm.c, gpm_metrics[]) */

typedef struct pm_gpm {
    const pm_gpm_api *api;
    nvmlDevice_t dev; /* the GPU, the parent GPU for a MIG instance */
    int mig;          /* sampled as GPU instance gi of dev */
    unsigned gi;      /* the GPU instance id */
    nvmlGpmSample_t s[2];
    int prev;          /* s[prev] is the earlier sample; -1 before the first */
    int64_t t_prev_ns; /* when s[prev] was taken (CLOCK_MONOTONIC) */
    int col[PM_GPM_NMET];
    unsigned char off[PM_GPM_NMET]; /* answered NOT_SUPPORTED: no longer asked */
} pm_gpm;

/* Probe GPM on dev (its instance gi when mig) and, where it works, add
 * the columns <prefix>.<metric> to s and take the first sample.  Returns
 * 0 with *on 1 when GPM is read, 0 with *on 0 and why (cap bytes) filled
 * when it is not, or a negative PM_E* code of pm_schema_add. */
int pm_gpm_open(pm_gpm *g, const pm_gpm_api *api, nvmlDevice_t dev, int mig, unsigned gi,
                const char *prefix, pm_schema *s, int *on, char *why, size_t cap);

/* Take a sample and record the metrics since the previous one.  Returns
 * NVML_SUCCESS or the failing call's code (NVML_ERROR_GPU_IS_LOST: the
 * caller stops reading the GPU); a failed sample leaves the metrics
 * unrecorded and the next one measures from the last good sample. */
nvmlReturn_t pm_gpm_read(pm_gpm *g, pm_sample *s);

/* Give the samples back; g may be zeroed or closed already. */
void pm_gpm_close(pm_gpm *g);

#endif
