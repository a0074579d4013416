/* gpu_dcgm.h - SM activity and the pipes through DCGM's profiling fields,
 * for GPUs without NVML's GPM (Volta, Turing, Ampere data-center GPUs),
 * for the NVIDIA GPU source (src_nvml.c).  Private to the sampler.
 *
 * libdcgm is opened at run time (PERFMON_DCGM_LIB, else libdcgm.so.4,
 * libdcgm.so.3; not at all with PERFMON_DCGM=off); the sampler connects to the node's running host engine
 * (nv-hostengine at 127.0.0.1, which a site's DCGM exporter runs and
 * whose profiling counters it then shares), else starts an engine of its
 * own in its process.  It watches the profiling fields on all GPUs once a
 * second and records DCGM's latest values at each sample.
 *
 * Ownership: pm_dcgm_open returns an owned handle; pm_dcgm_close(NULL)
 * is a no-op.
 */
#ifndef PERFMON_GPU_DCGM_H
#define PERFMON_GPU_DCGM_H

#include <stddef.h>

#include "perfmon/source.h"

#define PM_DCGM_NF 9 /* columns per GPU (gpu_dcgm.c, dcgm_fields[]) */

typedef struct pm_dcgm pm_dcgm;

/* DCGM watching the profiling fields, or NULL with why (cap bytes). */
pm_dcgm *pm_dcgm_open(char *why, size_t cap);

/* DCGM's id of the GPU whose NVML UUID is uuid; -1 when DCGM does not
 * know it. */
int pm_dcgm_find(const pm_dcgm *d, const char *uuid);

/* The columns <prefix>.<metric> of GPU id into col[].  Returns 0 or a
 * negative PM_E* code of pm_schema_add. */
int pm_dcgm_add(const char *prefix, pm_schema *s, int col[PM_DCGM_NF]) PM_WUR;

/* Record GPU id's latest values; a blank or failed field stays
 * unrecorded. */
void pm_dcgm_read(pm_dcgm *d, int id, const int col[PM_DCGM_NF], pm_sample *s);

void pm_dcgm_close(pm_dcgm *d);

#endif
