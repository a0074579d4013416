/* dcgm_api.h - the part of NVIDIA DCGM's C API (dcgm_agent.h,
 * dcgm_structs.h, dcgm_fields.h) that the GPU source uses for profiling
 * metrics on GPUs without NVML's GPM (gpu_dcgm.c).  Declared here, as
 * NVIDIA's headers have them, so that perfmon builds without DCGM:
 * libdcgm is opened at run time, and the tests' stand-in
 * (tests/stub/dcgm_stub.c) defines the same entry points.
 *
 * Not installed; not part of perfmon's API.
 */
#ifndef PERFMON_DCGM_API_H
#define PERFMON_DCGM_API_H

#include <stdint.h>

typedef int dcgmReturn_t;
typedef uintptr_t dcgmHandle_t;
typedef uintptr_t dcgmGpuGrp_t;
typedef uintptr_t dcgmFieldGrp_t;

#define DCGM_ST_OK 0
#define DCGM_MAX_NUM_DEVICES 32
#define DCGM_MAX_STR_LENGTH 256
#define DCGM_MAX_BLOB_LENGTH 4096
#define DCGM_GROUP_ALL_GPUS 0x7fffffff

/* dcgmOperationMode_t: AUTO, the engine updates watched fields itself */
#define DCGM_OPERATION_MODE_AUTO 1

/* field types (dcgmFieldValue_v1.fieldType) */
#define DCGM_FT_DOUBLE ((unsigned short)'d')
#define DCGM_FT_INT64 ((unsigned short)'i')
#define DCGM_FT_STRING ((unsigned short)'s')

/* values at or above these mean "no value" */
#define DCGM_INT64_BLANK 0x7ffffffffffffff0LL
#define DCGM_FP64_BLANK 140737488355328.0

/* fields: the GPU's UUID, and the profiling metrics (ratios 0.0-1.0 of
 * the time or of the peak, over DCGM's update interval) */
#define DCGM_FI_DEV_UUID 54
#define DCGM_FI_PROF_SM_ACTIVE 1002
#define DCGM_FI_PROF_SM_OCCUPANCY 1003
#define DCGM_FI_PROF_PIPE_TENSOR_ACTIVE 1004
#define DCGM_FI_PROF_DRAM_ACTIVE 1005
#define DCGM_FI_PROF_PIPE_FP64_ACTIVE 1006
#define DCGM_FI_PROF_PIPE_FP32_ACTIVE 1007
#define DCGM_FI_PROF_PIPE_FP16_ACTIVE 1008
#define DCGM_FI_PROF_NVLINK_TX_BYTES 1011 /* B/s */
#define DCGM_FI_PROF_NVLINK_RX_BYTES 1012

typedef struct {
    unsigned int version; /* dcgmFieldValue_version1 */
    unsigned short fieldId;
    unsigned short fieldType; /* DCGM_FT_* */
    int status;               /* DCGM_ST_OK or the field's error */
    int64_t ts;               /* us since the epoch */
    union {
        int64_t i64;
        double dbl;
        char str[DCGM_MAX_STR_LENGTH];
        char blob[DCGM_MAX_BLOB_LENGTH];
    } value;
} dcgmFieldValue_v1;

#define MAKE_DCGM_VERSION(typeName, ver) \
    ((unsigned int)(sizeof(typeName) | ((unsigned long)(ver) << 24U)))
#define dcgmFieldValue_version1 MAKE_DCGM_VERSION(dcgmFieldValue_v1, 1)

dcgmReturn_t dcgmInit(void);
dcgmReturn_t dcgmShutdown(void);
const char *errorString(dcgmReturn_t result);
/* The node's running host engine (nv-hostengine), which the site's DCGM
 * exporter shares; else an engine in this process. */
dcgmReturn_t dcgmConnect(const char *ipAddress, dcgmHandle_t *pDcgmHandle);
dcgmReturn_t dcgmDisconnect(dcgmHandle_t pDcgmHandle);
dcgmReturn_t dcgmStartEmbedded(int opMode, dcgmHandle_t *pDcgmHandle);
dcgmReturn_t dcgmStopEmbedded(dcgmHandle_t pDcgmHandle);
dcgmReturn_t dcgmGetAllSupportedDevices(dcgmHandle_t pDcgmHandle,
                                        unsigned int gpuIdList[DCGM_MAX_NUM_DEVICES], int *count);
dcgmReturn_t dcgmFieldGroupCreate(dcgmHandle_t dcgmHandle, int numFieldIds,
                                  unsigned short *fieldIds, const char *fieldGroupName,
                                  dcgmFieldGrp_t *dcgmFieldGroupId);
dcgmReturn_t dcgmFieldGroupDestroy(dcgmHandle_t dcgmHandle, dcgmFieldGrp_t dcgmFieldGroupId);
dcgmReturn_t dcgmWatchFields(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId,
                             dcgmFieldGrp_t fieldGroupId, long long updateFreq, double maxKeepAge,
                             int maxKeepSamples);
dcgmReturn_t dcgmUnwatchFields(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId,
                               dcgmFieldGrp_t fieldGroupId);
dcgmReturn_t dcgmUpdateAllFields(dcgmHandle_t pDcgmHandle, int waitForUpdate);
dcgmReturn_t dcgmGetLatestValuesForFields(dcgmHandle_t pDcgmHandle, int gpuId,
                                          unsigned short fields[], unsigned int count,
                                          dcgmFieldValue_v1 values[]);

#endif
