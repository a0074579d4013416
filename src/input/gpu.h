/* gpu.h - a node profile's GPUs split off (gpu.c).
 * Private to src/input. */
#ifndef PM_INPUT_GPU_H
#define PM_INPUT_GPU_H

#include <stddef.h>

#include "perfmon/profile.h"

/* Move the gpu.<n>.<metric> columns of p into one new profile per GPU,
 * host gpu-<n>.<p's host>, columns gpu.<metric> (gpu.c).  *out gets the
 * new profiles (the caller owns them and the array), *nout their count.
 * Returns 0 or PM_ENOMEM. */
int pm_gpu_split(pm_profile *p, pm_profile ***out, size_t *nout) PM_WUR;

#endif
