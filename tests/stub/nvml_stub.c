/* A stand-in for libnvidia-ml.so.1: the NVML entry points that
 * src/sampler/src_nvml.c resolves, with the same signatures (checked
 * against src/sampler/nvml_api.h), answering scripted values, so that the
 * real loading and reading code runs in the tests without a GPU.
 *
 * The script is the environment variable PERFMON_NVML_STUB, read at
 * nvmlInit: words separated by blanks or ';'
 *   gpus=N              number of GPUs (default 2, at most 8; 0: none)
 *   init=E              nvmlInit returns NVML error E
 *   unsupported=I:WHAT  GPU I answers NOT_SUPPORTED to WHAT: util, enc, dec,
 *                       mem, bar1, power, energy, temp, fan, clock, pcie,
 *                       ecc, throttle, violation, procs
 *   lost=I:N            GPU I answers GPU_IS_LOST to everything from its
 *                       N-th utilisation query on (the sampler asks once
 *                       when it opens, then once per sample)
 *   procs=PATH          compute processes: lines "GPU PID BYTES", re-read
 *                       at every query
 *   util=I:V            GPU I's utilisation (default 10 + 40 * I)
 *   xid=PATH            XID events: lines "GPU XID", each delivered once by
 *                       nvmlEventSetWait_v2 (in file order, re-read at each
 *                       wait) to a set the GPU is registered with
 *   noevents=I          GPU I supports no events (registering answers
 *                       NOT_SUPPORTED)
 *   eventset=E          nvmlEventSetCreate returns NVML error E
 *   events_log=PATH     appends "create", "register I", "free" as they
 *                       happen (to check that the set is freed)
 *
 * GPU I otherwise reports: memory utilisation 5+I %, encoder 1+I %,
 * decoder 2+I %, 16 GiB memory of which (I+1) GiB used, BAR1 (I+1) * 2 MiB,
 * power 100 + 50*I W, energy = that power times the time since nvmlInit,
 * temperature 40+I C, fan 30+I %, clocks 1400+I / 1410+I / 877 MHz, PCIe
 * TX 1000*(I+1) and RX 2000*(I+1) KB/s, ECC 3 corrected and 0 uncorrected
 * errors, throttle reasons 0x4 on odd GPUs, power violation time a tenth
 * of the time since nvmlInit on odd GPUs, none on even ones.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml_api.h"

#define MAX_STUB_GPUS 8

enum {
    W_UTIL,
    W_ENC,
    W_DEC,
    W_MEM,
    W_BAR1,
    W_POWER,
    W_ENERGY,
    W_TEMP,
    W_FAN,
    W_CLOCK,
    W_PCIE,
    W_ECC,
    W_THROTTLE,
    W_VIOLATION,
    W_PROCS,
    NWHAT
};
static const char *const what_name[NWHAT] = {"util",  "enc",    "dec",      "mem",       "bar1",
                                             "power", "energy", "temp",     "fan",       "clock",
                                             "pcie",  "ecc",    "throttle", "violation", "procs"};

static struct stub_gpu {
    int unsupported[NWHAT];
    unsigned lost_at; /* 0: never */
    unsigned calls;   /* utilisation queries so far */
    int util;
    int no_events;
    int registered;
} gpus[MAX_STUB_GPUS];
static unsigned ngpus;
static int init_error;
static int initialised;
static char procs_path[512];
static char xid_path[512], events_log[512];
static int eventset_error;
static unsigned xid_delivered; /* lines of xid_path delivered so far */
static int the_set;            /* the one event set: its address is the handle */
static int set_live;
static struct timespec t0;

static void parse_script(void)
{
    memset(gpus, 0, sizeof gpus);
    ngpus = 2;
    init_error = 0;
    procs_path[0] = xid_path[0] = events_log[0] = '\0';
    eventset_error = 0;
    xid_delivered = 0;
    set_live = 0;
    for (unsigned i = 0; i < MAX_STUB_GPUS; i++)
        gpus[i].util = 10 + 40 * (int)i;
    const char *env = getenv("PERFMON_NVML_STUB");
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", env ? env : "");
    for (char *save = NULL, *w = strtok_r(buf, " \t;", &save); w;
         w = strtok_r(NULL, " \t;", &save)) {
        unsigned i = 0, n = 0;
        char what[32];
        if (sscanf(w, "gpus=%u", &n) == 1)
            ngpus = n > MAX_STUB_GPUS ? MAX_STUB_GPUS : n;
        else if (sscanf(w, "init=%d", &init_error) == 1)
            continue;
        else if (sscanf(w, "lost=%u:%u", &i, &n) == 2 && i < MAX_STUB_GPUS)
            gpus[i].lost_at = n;
        else if (sscanf(w, "util=%u:%u", &i, &n) == 2 && i < MAX_STUB_GPUS)
            gpus[i].util = (int)n;
        else if (strncmp(w, "procs=", 6) == 0)
            snprintf(procs_path, sizeof procs_path, "%s", w + 6);
        else if (strncmp(w, "xid=", 4) == 0)
            snprintf(xid_path, sizeof xid_path, "%s", w + 4);
        else if (strncmp(w, "events_log=", 11) == 0)
            snprintf(events_log, sizeof events_log, "%s", w + 11);
        else if (sscanf(w, "eventset=%d", &eventset_error) == 1)
            continue;
        else if (sscanf(w, "noevents=%u", &i) == 1 && i < MAX_STUB_GPUS)
            gpus[i].no_events = 1;
        else if (sscanf(w, "unsupported=%u:%31s", &i, what) == 2 && i < MAX_STUB_GPUS) {
            for (int k = 0; k < NWHAT; k++)
                if (strcmp(what, what_name[k]) == 0)
                    gpus[i].unsupported[k] = 1;
        }
    }
}

static double since_init(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9;
}

/* Device handles are 1-based GPU numbers in disguise. */
static struct stub_gpu *dev(nvmlDevice_t d, unsigned *index)
{
    size_t i = (size_t)(uintptr_t)d;
    if (!initialised || i == 0 || i > ngpus)
        return NULL;
    *index = (unsigned)(i - 1);
    return &gpus[i - 1];
}

/* Common checks of every device query: initialised, a valid handle, not
 * lost, WHAT supported.  Returns NVML_SUCCESS to go on. */
static nvmlReturn_t check(nvmlDevice_t d, int what, const void *out, unsigned *index)
{
    struct stub_gpu *g = dev(d, index);
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    if (!g || !out)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (what == W_UTIL)
        g->calls++;
    if (g->lost_at && g->calls >= g->lost_at)
        return NVML_ERROR_GPU_IS_LOST;
    if (g->unsupported[what])
        return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void)
{
    parse_script();
    if (init_error)
        return init_error;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    initialised = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    initialised = 0;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    *deviceCount = ngpus;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    if (index >= ngpus)
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = (nvmlDevice_t)(uintptr_t)(index + 1);
    return NVML_SUCCESS;
}

#define CHECK(what, out)                             \
    unsigned i;                                      \
    nvmlReturn_t rc_ = check(device, what, out, &i); \
    if (rc_ != NVML_SUCCESS)                         \
    return rc_

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
    CHECK(W_UTIL, utilization);
    utilization->gpu = (unsigned)gpus[i].util;
    utilization->memory = 5 + i;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs)
{
    CHECK(W_ENC, utilization);
    *utilization = 1 + i;
    *samplingPeriodUs = 167000;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs)
{
    CHECK(W_DEC, utilization);
    *utilization = 2 + i;
    *samplingPeriodUs = 167000;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    CHECK(W_MEM, memory);
    memory->total = 16ULL << 30;
    memory->used = (unsigned long long)(i + 1) << 30;
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory)
{
    CHECK(W_BAR1, bar1Memory);
    bar1Memory->bar1Total = 256ULL << 20;
    bar1Memory->bar1Used = (unsigned long long)(i + 1) * (2ULL << 20);
    bar1Memory->bar1Free = bar1Memory->bar1Total - bar1Memory->bar1Used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    CHECK(W_POWER, power);
    *power = 100000 + 50000 * i;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy)
{
    CHECK(W_ENERGY, energy);
    *energy = (unsigned long long)((100000 + 50000 * i) * since_init()); /* mW * s = mJ */
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensorType, unsigned int *temp)
{
    CHECK(W_TEMP, temp);
    if (sensorType != NVML_TEMPERATURE_GPU)
        return NVML_ERROR_INVALID_ARGUMENT;
    *temp = 40 + i;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int *speed)
{
    CHECK(W_FAN, speed);
    *speed = 30 + i;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clock)
{
    CHECK(W_CLOCK, clock);
    switch (type) {
    case NVML_CLOCK_GRAPHICS: *clock = 1400 + i; break;
    case NVML_CLOCK_SM: *clock = 1410 + i; break;
    case NVML_CLOCK_MEM: *clock = 877; break;
    default: return NVML_ERROR_INVALID_ARGUMENT;
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, int counter, unsigned int *value)
{
    CHECK(W_PCIE, value);
    if (counter != NVML_PCIE_UTIL_TX_BYTES && counter != NVML_PCIE_UTIL_RX_BYTES)
        return NVML_ERROR_INVALID_ARGUMENT;
    *value = (counter == NVML_PCIE_UTIL_TX_BYTES ? 1000 : 2000) * (i + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int errorType, int counterType,
                                         unsigned long long *eccCounts)
{
    CHECK(W_ECC, eccCounts);
    if (counterType != NVML_VOLATILE_ECC && counterType != NVML_AGGREGATE_ECC)
        return NVML_ERROR_INVALID_ARGUMENT;
    *eccCounts = errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED ? 3 : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long *reasons)
{
    CHECK(W_THROTTLE, reasons);
    *reasons = i % 2 ? 0x4 : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, int perfPolicyType,
                                          nvmlViolationTime_t *violTime)
{
    CHECK(W_VIOLATION, violTime);
    violTime->referenceTime = (unsigned long long)time(NULL) * 1000000ULL;
    violTime->violationTime = perfPolicyType == NVML_PERF_POLICY_POWER && i % 2
                                  ? (unsigned long long)(since_init() * 1e8)
                                  : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v2_t *infos)
{
    CHECK(W_PROCS, infoCount);
    unsigned n = 0, cap = *infoCount;
    FILE *f = procs_path[0] ? fopen(procs_path, "r") : NULL;
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        unsigned g, pid;
        unsigned long long bytes;
        if (sscanf(line, "%u %u %llu", &g, &pid, &bytes) != 3 || g != i)
            continue;
        if (n < cap && infos) {
            memset(&infos[n], 0, sizeof infos[n]);
            infos[n].pid = pid;
            infos[n].usedGpuMemory = bytes;
        }
        n++;
    }
    if (f)
        fclose(f);
    *infoCount = n;
    return n > cap ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                  nvmlProcessInfo_v1_t *infos)
{
    (void)device;
    (void)infos;
    *infoCount = 0;
    return NVML_ERROR_NOT_SUPPORTED; /* the sampler must prefer _v3 */
}

/* Identity queries work on a lost GPU too. */
#define IDENTITY(out)               \
    unsigned i;                     \
    if (!dev(device, &i) || !(out)) \
    return NVML_ERROR_INVALID_ARGUMENT

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    IDENTITY(name);
    snprintf(name, length, "Stub GPU %u", i);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    IDENTITY(uuid);
    snprintf(uuid, length, "GPU-00000000-0000-0000-0000-00000000000%u", i);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    IDENTITY(pci);
    memset(pci, 0, sizeof *pci);
    pci->bus = 0x3b + i;
    snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
    IDENTITY(limit);
    *limit = 300000;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    snprintf(version, length, "550.54.15");
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    *cudaDriverVersion = 12040;
    return NVML_SUCCESS;
}

static void log_event(const char *what, int gpu)
{
    FILE *f = events_log[0] ? fopen(events_log, "a") : NULL;
    if (!f)
        return;
    if (gpu >= 0)
        fprintf(f, "%s %d\n", what, gpu);
    else
        fprintf(f, "%s\n", what);
    fclose(f);
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    if (eventset_error)
        return eventset_error;
    if (!set || set_live)
        return NVML_ERROR_INVALID_ARGUMENT;
    set_live = 1;
    for (unsigned i = 0; i < MAX_STUB_GPUS; i++)
        gpus[i].registered = 0;
    *set = (nvmlEventSet_t)(void *)&the_set;
    log_event("create", -1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *eventTypes)
{
    unsigned i;
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    if (!dev(device, &i) || !eventTypes)
        return NVML_ERROR_INVALID_ARGUMENT;
    *eventTypes = gpus[i].no_events ? 0 : nvmlEventTypeXidCriticalError;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes,
                                      nvmlEventSet_t set)
{
    unsigned i;
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    if (!dev(device, &i) || set != (nvmlEventSet_t)(void *)&the_set || !set_live)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (gpus[i].no_events || (eventTypes & ~nvmlEventTypeXidCriticalError))
        return NVML_ERROR_NOT_SUPPORTED;
    gpus[i].registered = 1;
    log_event("register", (int)i);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
    (void)timeoutms; /* the stub never waits */
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    if (set != (nvmlEventSet_t)(void *)&the_set || !set_live || !data)
        return NVML_ERROR_INVALID_ARGUMENT;
    FILE *f = xid_path[0] ? fopen(xid_path, "r") : NULL;
    char line[128];
    unsigned n = 0;
    nvmlReturn_t rc = NVML_ERROR_TIMEOUT;
    while (f && fgets(line, sizeof line, f)) {
        unsigned g;
        unsigned long long xid;
        if (sscanf(line, "%u %llu", &g, &xid) != 2 || n++ < xid_delivered)
            continue;
        xid_delivered++;
        if (g >= ngpus || !gpus[g].registered)
            continue; /* not registered: never reported */
        memset(data, 0, sizeof *data);
        data->device = (nvmlDevice_t)(uintptr_t)(g + 1);
        data->eventType = nvmlEventTypeXidCriticalError;
        data->eventData = xid;
        rc = NVML_SUCCESS;
        break;
    }
    if (f)
        fclose(f);
    return rc;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    if (set != (nvmlEventSet_t)(void *)&the_set || !set_live)
        return NVML_ERROR_INVALID_ARGUMENT;
    set_live = 0;
    log_event("free", -1);
    return NVML_SUCCESS;
}
