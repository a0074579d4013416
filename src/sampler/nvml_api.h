/* nvml_api.h - the part of NVIDIA's NVML API that the GPU source uses.
 *
 * Declared here rather than taken from the CUDA toolkit's nvml.h so that
 * perfmon builds without the driver or the toolkit: libnvidia-ml.so.1 is
 * opened at run time (src_nvml.c) and the stand-in library of the tests
 * (tests/stub/nvml_stub.c) implements the same entry points.  Values and
 * layouts follow NVIDIA's nvml.h (NVML API reference, "Device Queries",
 * "Error reporting"); only what src_nvml.c calls is listed.
 *
 * Not installed; not part of perfmon's API.
 */
#ifndef PERFMON_NVML_API_H
#define PERFMON_NVML_API_H

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

/* nvmlReturn_t values */
#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_TIMEOUT 10
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25
#define NVML_ERROR_UNKNOWN 999

/* nvmlClockType_t */
#define NVML_CLOCK_GRAPHICS 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2

/* nvmlTemperatureSensors_t */
#define NVML_TEMPERATURE_GPU 0

/* nvmlPcieUtilCounter_t: KB/s averaged over 20 ms */
#define NVML_PCIE_UTIL_TX_BYTES 0
#define NVML_PCIE_UTIL_RX_BYTES 1

/* nvmlMemoryErrorType_t and nvmlEccCounterType_t */
#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0
#define NVML_AGGREGATE_ECC 1

/* nvmlPerfPolicyType_t */
#define NVML_PERF_POLICY_POWER 0
#define NVML_PERF_POLICY_THERMAL 1

/* nvmlProcessInfo_t.usedGpuMemory when the driver cannot tell */
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80

typedef struct nvmlUtilization_st {
    unsigned int gpu;    /* % of time a kernel ran, over the last sample period */
    unsigned int memory; /* % of time device memory was read or written */
} nvmlUtilization_t;

typedef struct nvmlMemory_st {
    unsigned long long total, free, used; /* bytes */
} nvmlMemory_t;

typedef struct nvmlBAR1Memory_st {
    unsigned long long bar1Total, bar1Free, bar1Used; /* bytes */
} nvmlBAR1Memory_t;

typedef struct nvmlViolationTime_st {
    unsigned long long referenceTime; /* us since the epoch */
    unsigned long long violationTime; /* ns spent under the policy's limit */
} nvmlViolationTime_t;

/* nvmlDeviceGetComputeRunningProcesses (v1) fills this... */
typedef struct nvmlProcessInfo_v1_st {
    unsigned int pid;
    unsigned long long usedGpuMemory; /* bytes, or NVML_VALUE_NOT_AVAILABLE */
} nvmlProcessInfo_v1_t;

/* ...its _v2 and _v3 forms this. */
typedef struct nvmlProcessInfo_v2_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

/* nvmlDeviceGetPciInfo_v3 */
typedef struct nvmlPciInfo_st {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32]; /* "00000000:3B:00.0" */
} nvmlPciInfo_t;

/* Events ("Event Handling Methods"): an event set that the GPUs' events
 * are registered with, and waited on.  NVML reports only events that
 * happen after their registration. */
typedef struct nvmlEventSet_st *nvmlEventSet_t;
#define nvmlEventTypeXidCriticalError 0x0000000000000008ULL

/* nvmlEventSetWait_v2 fills this; the older nvmlEventSetWait the same
 * without the last two members. */
typedef struct nvmlEventData_st {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData; /* the XID for nvmlEventTypeXidCriticalError */
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

/* GPU Performance Monitoring ("GPM", NVML 12.x, Hopper and later;
 * "GPM Structs", "GPM Functions"): the driver snapshots the GPU's
 * performance counters into an opaque sample; nvmlGpmMetricsGet computes
 * each asked metric over the time between two samples of one device
 * (at least 100 ms apart).  Percentages are 0.0 to 100.0, the PCIe and
 * NVLink rates MiB/s. */
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;

/* nvmlGpmMetricId_t (the ones read; the ids are NVML's) */
#define NVML_GPM_METRIC_GRAPHICS_UTIL 1
#define NVML_GPM_METRIC_SM_UTIL 2          /* % of time SMs were busy (SM activity) */
#define NVML_GPM_METRIC_SM_OCCUPANCY 3     /* % of warps resident vs the maximum */
#define NVML_GPM_METRIC_INTEGER_UTIL 4     /* % of time doing integer operations */
#define NVML_GPM_METRIC_ANY_TENSOR_UTIL 5  /* % of time any tensor pipe was busy */
#define NVML_GPM_METRIC_DFMA_TENSOR_UTIL 6 /* FP64 tensor */
#define NVML_GPM_METRIC_HMMA_TENSOR_UTIL 7 /* FP16/BF16 tensor */
#define NVML_GPM_METRIC_IMMA_TENSOR_UTIL 9 /* integer tensor */
#define NVML_GPM_METRIC_DRAM_BW_UTIL 10    /* % of the peak DRAM bandwidth */
#define NVML_GPM_METRIC_FP64_UTIL 11       /* % of time the non-tensor FP64 pipe was busy */
#define NVML_GPM_METRIC_FP32_UTIL 12
#define NVML_GPM_METRIC_FP16_UTIL 13
#define NVML_GPM_METRIC_PCIE_TX_PER_SEC 20 /* MiB/s */
#define NVML_GPM_METRIC_PCIE_RX_PER_SEC 21
#define NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC 60 /* MiB/s, all links */
#define NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC 61
#define NVML_GPM_METRIC_MAX 98 /* the size of nvmlGpmMetricsGet_t.metrics */

typedef struct {
    unsigned int metricId;   /* in: an NVML_GPM_METRIC_* */
    nvmlReturn_t nvmlReturn; /* out: this metric's status */
    double value;            /* out */
    struct {
        char *shortName;
        char *longName;
        char *unit;
    } metricInfo; /* out: the library's own strings */
} nvmlGpmMetric_t;

#define NVML_GPM_METRICS_GET_VERSION 1
typedef struct {
    unsigned int version;    /* NVML_GPM_METRICS_GET_VERSION */
    unsigned int numMetrics; /* entries of metrics[] asked */
    nvmlGpmSample_t sample1; /* the earlier sample */
    nvmlGpmSample_t sample2; /* the later one */
    nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

#define NVML_GPM_SUPPORT_VERSION 1
typedef struct {
    unsigned int version;           /* NVML_GPM_SUPPORT_VERSION */
    unsigned int isSupportedDevice; /* out: 0 or 1 */
} nvmlGpmSupport_t;

/* nvmlDeviceGetProcessUtilization fills these: one per process and
 * driver sample newer than the time stamp asked for. */
typedef struct nvmlProcessUtilizationSample_st {
    unsigned int pid;
    unsigned long long timeStamp; /* CPU time stamp, us */
    unsigned int smUtil;          /* % of the sample period a kernel of pid ran */
    unsigned int memUtil;         /* % of the period it read or wrote memory */
    unsigned int encUtil;
    unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/* Multi-Instance GPU ("MIG Management"): nvmlDeviceGetMigMode's modes. */
#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE 1

/* The entry points (NVIDIA's signatures).  src_nvml.c never calls them
 * by name: it resolves them with dlsym into pointers of these types; the
 * stand-in library of the tests defines them.  Where the library has an
 * older name with the same signature (nvmlInit, nvmlDeviceGetCount, ...),
 * src_nvml.c falls back to it. */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization);
nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs);
nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power); /* mW */
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                 unsigned long long *energy); /* mJ */
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensorType, unsigned int *temp);
nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int *speed);            /* % */
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clock); /* MHz */
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, int counter, unsigned int *value);
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int errorType, int counterType,
                                         unsigned long long *eccCounts);
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long *reasons);
nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, int perfPolicyType,
                                          nvmlViolationTime_t *violTime);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v2_t *infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                  nvmlProcessInfo_v1_t *infos);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit); /* mW */
nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion); /* 12040 */
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport);
nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample);
nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample);
nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample);
nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned int gpuInstanceId,
                                 nvmlGpmSample_t gpmSample);
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *metricsGet);
/* utilization NULL: *processSamplesCount gets the count needed
 * (NVML_ERROR_INSUFFICIENT_SIZE); NVML_ERROR_NOT_FOUND: no sample newer
 * than lastSeenTimeStamp (us). */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount,
                                             unsigned long long lastSeenTimeStamp);
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
                                  unsigned int *pendingMode);
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count);
/* NVML_ERROR_NOT_FOUND: no MIG device at that index */
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t *migDevice);
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id);
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set);
nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *eventTypes);
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes,
                                      nvmlEventSet_t set);
/* timeoutms 0: return at once, NVML_ERROR_TIMEOUT when no event waits. */
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms);
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);

#endif
