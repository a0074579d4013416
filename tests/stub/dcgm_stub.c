/* A stand-in for libdcgm.so.4: the DCGM entry points that
 * src/sampler/gpu_dcgm.c resolves, with the signatures of
 * src/sampler/dcgm_api.h, answering scripted values.
 *
 * The script is the environment variable PERFMON_DCGM_STUB, read at
 * dcgmInit: words separated by blanks or ';'
 *   gpus=N          GPUs DCGM lists (default 2), GPU I with the NVML stand-in's
 *                   UUID of GPU I (GPU-00000000-0000-0000-0000-00000000000I)
 *   hostengine=0    no host engine to connect to (the embedded engine starts)
 *   embedded=E      dcgmStartEmbedded returns E
 *   watch=E         dcgmWatchFields returns E (profiling held elsewhere)
 *   sm=I:V          GPU I's SM activity ratio (default 0.4 + 0.1 * I);
 *                   dram=I:V, fp64=I:V likewise (defaults 0.35, 0.01)
 *   blank=I         GPU I's fields are all blank (no value yet)
 *   log=PATH        appends what happens: connect, embedded, group, watch,
 *                   unwatch, destroy, disconnect, stop, shutdown
 * Other fields: occupancy 0.3, tensor 0.05, FP32 0.2, FP16 0.02, NVLink TX
 * 10 MiB/s and RX 20 MiB/s.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcgm_api.h"

#define MAX_STUB_GPUS 8
#define ST_BADPARAM (-1)
#define ST_UNINITIALIZED (-2)
#define ST_CONNECTION_NOT_VALID (-15)

static struct {
    double sm, dram, fp64;
    int blank;
} gpus[MAX_STUB_GPUS];
static unsigned ngpus;
static int hostengine, embedded_error, watch_error, initialised, watched;
static char log_path[512];

static void say(const char *what)
{
    FILE *f = log_path[0] ? fopen(log_path, "a") : NULL;
    if (f) {
        fprintf(f, "%s\n", what);
        fclose(f);
    }
}

dcgmReturn_t dcgmInit(void)
{
    ngpus = 2;
    hostengine = 1;
    embedded_error = watch_error = watched = 0;
    log_path[0] = '\0';
    for (unsigned i = 0; i < MAX_STUB_GPUS; i++) {
        gpus[i].sm = 0.4 + 0.1 * i;
        gpus[i].dram = 0.35;
        gpus[i].fp64 = 0.01;
        gpus[i].blank = 0;
    }
    const char *env = getenv("PERFMON_DCGM_STUB");
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", env ? env : "");
    for (char *save = NULL, *w = strtok_r(buf, " \t;", &save); w;
         w = strtok_r(NULL, " \t;", &save)) {
        unsigned i, n;
        double v;
        if (sscanf(w, "gpus=%u", &n) == 1)
            ngpus = n > MAX_STUB_GPUS ? MAX_STUB_GPUS : n;
        else if (sscanf(w, "hostengine=%d", &hostengine) == 1)
            continue;
        else if (sscanf(w, "embedded=%d", &embedded_error) == 1)
            continue;
        else if (sscanf(w, "watch=%d", &watch_error) == 1)
            continue;
        else if (sscanf(w, "sm=%u:%lf", &i, &v) == 2 && i < MAX_STUB_GPUS)
            gpus[i].sm = v;
        else if (sscanf(w, "dram=%u:%lf", &i, &v) == 2 && i < MAX_STUB_GPUS)
            gpus[i].dram = v;
        else if (sscanf(w, "fp64=%u:%lf", &i, &v) == 2 && i < MAX_STUB_GPUS)
            gpus[i].fp64 = v;
        else if (sscanf(w, "blank=%u", &i) == 1 && i < MAX_STUB_GPUS)
            gpus[i].blank = 1;
        else if (strncmp(w, "log=", 4) == 0)
            snprintf(log_path, sizeof log_path, "%s", w + 4);
    }
    initialised = 1;
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmShutdown(void)
{
    initialised = 0;
    say("shutdown");
    return DCGM_ST_OK;
}

const char *errorString(dcgmReturn_t result)
{
    switch (result) {
    case DCGM_ST_OK: return "Success";
    case ST_CONNECTION_NOT_VALID: return "Host engine connection invalid/disconnected";
    case -6: return "This request is serviced by a module of DCGM that is not currently loaded";
    case -33:
        return "The requested operation could not be completed because the affected resource is in use";
    default: return "Unknown Error";
    }
}

#define HANDLE ((dcgmHandle_t)0x5ca1ab1e)

dcgmReturn_t dcgmConnect(const char *ipAddress, dcgmHandle_t *pDcgmHandle)
{
    if (!initialised)
        return ST_UNINITIALIZED;
    if (!ipAddress || !pDcgmHandle)
        return ST_BADPARAM;
    if (!hostengine)
        return ST_CONNECTION_NOT_VALID;
    *pDcgmHandle = HANDLE;
    say("connect");
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmDisconnect(dcgmHandle_t h)
{
    say("disconnect");
    return h == HANDLE ? DCGM_ST_OK : ST_BADPARAM;
}

dcgmReturn_t dcgmStartEmbedded(int opMode, dcgmHandle_t *pDcgmHandle)
{
    if (!initialised)
        return ST_UNINITIALIZED;
    if (opMode != DCGM_OPERATION_MODE_AUTO || !pDcgmHandle)
        return ST_BADPARAM;
    if (embedded_error)
        return embedded_error;
    *pDcgmHandle = HANDLE;
    say("embedded");
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmStopEmbedded(dcgmHandle_t h)
{
    say("stop");
    return h == HANDLE ? DCGM_ST_OK : ST_BADPARAM;
}

dcgmReturn_t dcgmGetAllSupportedDevices(dcgmHandle_t h,
                                        unsigned int gpuIdList[DCGM_MAX_NUM_DEVICES], int *count)
{
    if (h != HANDLE || !gpuIdList || !count)
        return ST_BADPARAM;
    for (unsigned i = 0; i < ngpus; i++)
        gpuIdList[i] = i;
    *count = (int)ngpus;
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmFieldGroupCreate(dcgmHandle_t h, int numFieldIds, unsigned short *fieldIds,
                                  const char *fieldGroupName, dcgmFieldGrp_t *id)
{
    if (h != HANDLE || numFieldIds <= 0 || !fieldIds || !fieldGroupName || !id)
        return ST_BADPARAM;
    *id = 7;
    say("group");
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmFieldGroupDestroy(dcgmHandle_t h, dcgmFieldGrp_t id)
{
    say("destroy");
    return h == HANDLE && id == 7 ? DCGM_ST_OK : ST_BADPARAM;
}

dcgmReturn_t dcgmWatchFields(dcgmHandle_t h, dcgmGpuGrp_t groupId, dcgmFieldGrp_t fieldGroupId,
                             long long updateFreq, double maxKeepAge, int maxKeepSamples)
{
    if (h != HANDLE || groupId != DCGM_GROUP_ALL_GPUS || fieldGroupId != 7 || updateFreq <= 0 ||
        maxKeepAge <= 0 || maxKeepSamples <= 0)
        return ST_BADPARAM;
    if (watch_error)
        return watch_error;
    watched = 1;
    say("watch");
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmUnwatchFields(dcgmHandle_t h, dcgmGpuGrp_t groupId, dcgmFieldGrp_t fieldGroupId)
{
    say("unwatch");
    watched = 0;
    return h == HANDLE && groupId == DCGM_GROUP_ALL_GPUS && fieldGroupId == 7 ? DCGM_ST_OK
                                                                              : ST_BADPARAM;
}

dcgmReturn_t dcgmUpdateAllFields(dcgmHandle_t h, int waitForUpdate)
{
    (void)waitForUpdate;
    return h == HANDLE ? DCGM_ST_OK : ST_BADPARAM;
}

dcgmReturn_t dcgmGetLatestValuesForFields(dcgmHandle_t h, int gpuId, unsigned short fields[],
                                          unsigned int count, dcgmFieldValue_v1 values[])
{
    if (h != HANDLE || gpuId < 0 || (unsigned)gpuId >= ngpus || !fields || !values)
        return ST_BADPARAM;
    for (unsigned k = 0; k < count; k++) {
        dcgmFieldValue_v1 *v = &values[k];
        if (v->version != dcgmFieldValue_version1)
            return -5; /* DCGM_ST_VER_MISMATCH */
        v->fieldId = fields[k];
        v->status = watched ? DCGM_ST_OK : -22; /* DCGM_ST_NOT_WATCHED */
        v->ts = 1;
        double d = -1;
        switch (fields[k]) {
        case DCGM_FI_DEV_UUID:
            v->fieldType = DCGM_FT_STRING;
            snprintf(v->value.str, sizeof v->value.str, "GPU-00000000-0000-0000-0000-00000000000%d",
                     gpuId);
            continue;
        case DCGM_FI_PROF_SM_ACTIVE: d = gpus[gpuId].sm; break;
        case DCGM_FI_PROF_SM_OCCUPANCY: d = 0.3; break;
        case DCGM_FI_PROF_PIPE_TENSOR_ACTIVE: d = 0.05; break;
        case DCGM_FI_PROF_DRAM_ACTIVE: d = gpus[gpuId].dram; break;
        case DCGM_FI_PROF_PIPE_FP64_ACTIVE: d = gpus[gpuId].fp64; break;
        case DCGM_FI_PROF_PIPE_FP32_ACTIVE: d = 0.2; break;
        case DCGM_FI_PROF_PIPE_FP16_ACTIVE: d = 0.02; break;
        case DCGM_FI_PROF_NVLINK_TX_BYTES:
        case DCGM_FI_PROF_NVLINK_RX_BYTES:
            v->fieldType = DCGM_FT_INT64;
            v->value.i64 = gpus[gpuId].blank                           ? DCGM_INT64_BLANK
                           : fields[k] == DCGM_FI_PROF_NVLINK_TX_BYTES ? 10 << 20
                                                                       : 20 << 20;
            continue;
        default: v->status = -6; continue;
        }
        v->fieldType = DCGM_FT_DOUBLE;
        v->value.dbl = gpus[gpuId].blank ? DCGM_FP64_BLANK : d;
    }
    return DCGM_ST_OK;
}
