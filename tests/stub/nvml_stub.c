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
 *   energy=I:F          GPU I's energy counter runs at F times its power
 *                       (default 1)
 *   xid=PATH            XID events: lines "GPU XID", each delivered once by
 *                       nvmlEventSetWait_v2 (in file order, re-read at each
 *                       wait) to a set the GPU is registered with
 *   noevents=I          GPU I supports no events (registering answers
 *                       NOT_SUPPORTED)
 *   eventset=E          nvmlEventSetCreate returns NVML error E
 *   events_log=PATH     appends "create", "register I", "free" as they
 *                       happen (to check that the set is freed), and
 *                       "gpm alloc", "gpm free" for GPM samples
 *   gpm=I               GPU I has GPM (a Hopper): nvmlGpmQueryDeviceSupport
 *                       says so and its GPM samples work; the others (and
 *                       all by default) are older GPUs without it
 *   levels=PATH         activity levels, re-read at each GPM sample and
 *                       utilisation query: words util=I:V sm=I:V occ=I:V
 *                       tensor=I:V fp64=I:V fp32=I:V fp16=I:V dram=I:V
 *                       pcietx=I:V pcierx=I:V nvltx=I:V nvlrx=I:V (%, MiB/s)
 *   unsupported=I:nvlink GPU I has no NVLink: its GPM NVLink metrics answer
 *                       NOT_SUPPORTED
 *   unsupported=I:gpmget nvmlGpmMetricsGet fails on GPU I's samples
 *                       (NVML_ERROR_UNKNOWN)
 *   mig=I:K             GPU I is in MIG mode with K instances (GPU instance
 *                       ids 1, 3, 5, ...): only memory, processes, names
 *                       and GPM through nvmlGpmMigSampleGet answer on them
 *   putil=PATH          process utilisation samples: lines "GPU PID SM MEM",
 *                       re-read at each query, stamped with the time of the
 *                       query (no putil: NOT_SUPPORTED; empty: NOT_FOUND)
 *
 * GPM metrics are what the levels give, integrated over time: each GPM
 * sample holds the integral of each level since nvmlInit, and
 * nvmlGpmMetricsGet divides the difference of two samples by the time
 * between them, so a level changed mid-interval shows as its share.
 * Samples less than 100 ms apart (NVML's documented minimum) are refused
 * with NVML_ERROR_INVALID_ARGUMENT (the real library's code for it is not
 * documented).
 * Default levels of GPU I: SM activity 20+10*I %, occupancy 15, tensor 5,
 * FP64 1, FP32 10, FP16 2, DRAM 30 %, PCIe TX 100 and RX 200 MiB/s, NVLink
 * TX 300 and RX 400 MiB/s; MIG instance G of it: SM activity that + G.
 *
 * GPU I otherwise reports: memory utilisation 5+I %, encoder 1+I %,
 * decoder 2+I %, 16 GiB memory of which (I+1) GiB used, BAR1 (I+1) * 2 MiB,
 * power 100 + 50*I W, energy = that power times the time since nvmlInit
 * (times F with the word energy=I:F: a counter that the reported power's
 * integral does not give, to tell which of the two an energy came from),
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

/* GPM levels, in nvmlGpmMetricId_t terms */
enum {
    L_SM,
    L_OCC,
    L_TENSOR,
    L_FP64,
    L_FP32,
    L_FP16,
    L_DRAM,
    L_PCIETX,
    L_PCIERX,
    L_NVLTX,
    L_NVLRX,
    NLEV
};
static const char *const level_name[NLEV] = {"sm",   "occ",    "tensor", "fp64",  "fp32", "fp16",
                                             "dram", "pcietx", "pcierx", "nvltx", "nvlrx"};
static const unsigned level_metric[NLEV] = {NVML_GPM_METRIC_SM_UTIL,
                                            NVML_GPM_METRIC_SM_OCCUPANCY,
                                            NVML_GPM_METRIC_ANY_TENSOR_UTIL,
                                            NVML_GPM_METRIC_FP64_UTIL,
                                            NVML_GPM_METRIC_FP32_UTIL,
                                            NVML_GPM_METRIC_FP16_UTIL,
                                            NVML_GPM_METRIC_DRAM_BW_UTIL,
                                            NVML_GPM_METRIC_PCIE_TX_PER_SEC,
                                            NVML_GPM_METRIC_PCIE_RX_PER_SEC,
                                            NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC,
                                            NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC};

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
    W_NVLINK,
    W_GPMGET,
    NWHAT
};
static const char *const what_name[NWHAT] = {
    "util",  "enc",  "dec", "mem",      "bar1",      "power", "energy", "temp",  "fan",
    "clock", "pcie", "ecc", "throttle", "violation", "procs", "nvlink", "gpmget"};

static struct stub_gpu {
    int unsupported[NWHAT];
    unsigned lost_at; /* 0: never */
    unsigned calls;   /* utilisation queries so far */
    int util;
    int no_events;
    int registered;
    int gpm;
    unsigned migs;           /* MIG instances (0: MIG off) */
    double level[NLEV];      /* GPM activity levels */
    double energy_scale;     /* the energy counter runs at this times the power */
    double acc[NLEV], acc_t; /* their integrals up to acc_t (s since init) */
} gpus[MAX_STUB_GPUS];
static unsigned ngpus;
static int init_error;
static int initialised;
static char procs_path[512];
static char xid_path[512], events_log[512];
static char levels_path[512], putil_path[512];
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
    procs_path[0] = xid_path[0] = events_log[0] = levels_path[0] = putil_path[0] = '\0';
    eventset_error = 0;
    xid_delivered = 0;
    set_live = 0;
    for (unsigned i = 0; i < MAX_STUB_GPUS; i++) {
        static const double dflt[NLEV] = {20, 15, 5, 1, 10, 2, 30, 100, 200, 300, 400};
        gpus[i].util = 10 + 40 * (int)i;
        gpus[i].energy_scale = 1;
        memcpy(gpus[i].level, dflt, sizeof dflt);
        gpus[i].level[L_SM] += 10 * i;
    }
    const char *env = getenv("PERFMON_NVML_STUB");
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", env ? env : "");
    for (char *save = NULL, *w = strtok_r(buf, " \t;", &save); w;
         w = strtok_r(NULL, " \t;", &save)) {
        unsigned i = 0, n = 0;
        double f = 0;
        char what[32];
        if (sscanf(w, "gpus=%u", &n) == 1)
            ngpus = n > MAX_STUB_GPUS ? MAX_STUB_GPUS : n;
        else if (sscanf(w, "init=%d", &init_error) == 1)
            continue;
        else if (sscanf(w, "lost=%u:%u", &i, &n) == 2 && i < MAX_STUB_GPUS)
            gpus[i].lost_at = n;
        else if (sscanf(w, "util=%u:%u", &i, &n) == 2 && i < MAX_STUB_GPUS)
            gpus[i].util = (int)n;
        else if (sscanf(w, "energy=%u:%lf", &i, &f) == 2 && i < MAX_STUB_GPUS && f >= 0)
            gpus[i].energy_scale = f;
        else if (sscanf(w, "gpm=%u", &i) == 1 && i < MAX_STUB_GPUS)
            gpus[i].gpm = 1;
        else if (sscanf(w, "mig=%u:%u", &i, &n) == 2 && i < MAX_STUB_GPUS)
            gpus[i].migs = n > 7 ? 7 : n;
        else if (strncmp(w, "levels=", 7) == 0)
            snprintf(levels_path, sizeof levels_path, "%s", w + 7);
        else if (strncmp(w, "putil=", 6) == 0)
            snprintf(putil_path, sizeof putil_path, "%s", w + 6);
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

/* Integrate every GPU's levels up to now, then take the levels file's
 * words (util=I:V and the GPM levels) as the levels from now on. */
static void update_levels(void)
{
    double now = since_init();
    for (unsigned i = 0; i < ngpus; i++) {
        for (int l = 0; l < NLEV; l++)
            gpus[i].acc[l] += gpus[i].level[l] * (now - gpus[i].acc_t);
        gpus[i].acc_t = now;
    }
    FILE *f = levels_path[0] ? fopen(levels_path, "r") : NULL;
    char w[64];
    while (f && fscanf(f, "%63s", w) == 1) {
        char name[16];
        unsigned i;
        double v;
        if (sscanf(w, "%15[a-z0-9]=%u:%lf", name, &i, &v) != 3 || i >= MAX_STUB_GPUS)
            continue;
        if (strcmp(name, "util") == 0)
            gpus[i].util = (int)v;
        for (int l = 0; l < NLEV; l++)
            if (strcmp(name, level_name[l]) == 0)
                gpus[i].level[l] = v;
    }
    if (f)
        fclose(f);
}

/* Device handles are 1-based GPU numbers in disguise; a MIG instance's
 * handle is 0x100 * (1 + its slot) + its GPU's number. */
static struct stub_gpu *dev(nvmlDevice_t d, unsigned *index)
{
    size_t i = (size_t)(uintptr_t)d & 0xff;
    size_t slot = (size_t)(uintptr_t)d >> 8;
    if (!initialised || i == 0 || i > ngpus || (slot && slot > gpus[i - 1].migs))
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
    /* A MIG instance answers for its memory and processes only. */
    if ((uintptr_t)d >> 8 && what != W_MEM && what != W_PROCS)
        return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

static unsigned mig_slot(nvmlDevice_t d)
{
    return (unsigned)((uintptr_t)d >> 8);
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
    update_levels();
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
    if (mig_slot(device)) {
        memory->total = 2ULL << 30;
        memory->used = (unsigned long long)mig_slot(device) << 28;
    }
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
    /* mW * s = mJ */
    *energy = (unsigned long long)(gpus[i].energy_scale * (100000 + 50000 * i) * since_init());
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
        unsigned g, pid, gi = 0;
        unsigned long long bytes;
        int k = sscanf(line, "%u %u %llu %u", &g, &pid, &bytes, &gi);
        if (k < 3 || g != i || (mig_slot(device) && (k < 4 || gi != 2 * mig_slot(device) - 1)))
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

/* Multi-Instance GPU */
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
                                  unsigned int *pendingMode)
{
    IDENTITY(currentMode);
    if (!pendingMode || mig_slot(device))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!gpus[i].migs && !gpus[i].gpm)
        return NVML_ERROR_NOT_SUPPORTED; /* before Ampere */
    *currentMode = *pendingMode = gpus[i].migs ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
    IDENTITY(count);
    if (mig_slot(device))
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = gpus[i].migs ? 7 : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t *migDevice)
{
    IDENTITY(migDevice);
    if (mig_slot(device) || !gpus[i].migs)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (index >= gpus[i].migs)
        return NVML_ERROR_NOT_FOUND;
    *migDevice = (nvmlDevice_t)(uintptr_t)(0x100u * (index + 1) + i + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)
{
    IDENTITY(id);
    if (!mig_slot(device))
        return NVML_ERROR_INVALID_ARGUMENT;
    *id = 2 * mig_slot(device) - 1;
    return NVML_SUCCESS;
}

/* Process utilisation */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount,
                                             unsigned long long lastSeenTimeStamp)
{
    CHECK(W_PROCS, processSamplesCount);
    if (!putil_path[0])
        return NVML_ERROR_NOT_SUPPORTED;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    unsigned long long ts =
        (unsigned long long)now.tv_sec * 1000000ULL + (unsigned long long)now.tv_nsec / 1000;
    unsigned n = 0, cap = utilization ? *processSamplesCount : 0;
    FILE *f = fopen(putil_path, "r");
    char line[128];
    while (f && fgets(line, sizeof line, f)) {
        unsigned g, pid, sm, mem;
        if (sscanf(line, "%u %u %u %u", &g, &pid, &sm, &mem) != 4 || g != i ||
            ts <= lastSeenTimeStamp)
            continue;
        if (n < cap) {
            memset(&utilization[n], 0, sizeof utilization[n]);
            utilization[n].pid = pid;
            utilization[n].timeStamp = ts;
            utilization[n].smUtil = sm;
            utilization[n].memUtil = mem;
        }
        n++;
    }
    if (f)
        fclose(f);
    *processSamplesCount = n;
    if (n == 0)
        return NVML_ERROR_NOT_FOUND;
    return n > cap ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

/* GPM */
#define SAMPLE_MAGIC 0x47504d53u
typedef struct nvmlGpmSample_st {
    unsigned magic;
    unsigned gpu;  /* 1-based; 0 while never taken */
    unsigned slot; /* MIG slot, 0 for the whole GPU */
    double t;
    double acc[NLEV];
} stub_sample;

nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport)
{
    IDENTITY(gpmSupport);
    if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    gpmSupport->isSupportedDevice = gpus[i].gpm && !mig_slot(device);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    if (!gpmSample)
        return NVML_ERROR_INVALID_ARGUMENT;
    stub_sample *x = calloc(1, sizeof *x);
    if (!x)
        return NVML_ERROR_UNKNOWN;
    x->magic = SAMPLE_MAGIC;
    *gpmSample = x;
    log_event("gpm alloc", -1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample)
{
    if (!gpmSample || gpmSample->magic != SAMPLE_MAGIC)
        return NVML_ERROR_INVALID_ARGUMENT;
    gpmSample->magic = 0;
    free(gpmSample);
    log_event("gpm free", -1);
    return NVML_SUCCESS;
}

static nvmlReturn_t take_sample(nvmlDevice_t device, unsigned slot, nvmlGpmSample_t x)
{
    unsigned i;
    const struct stub_gpu *g = dev(device, &i);
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    if (!g || !x)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (g->lost_at && g->calls >= g->lost_at)
        return NVML_ERROR_GPU_IS_LOST;
    if (x->magic != SAMPLE_MAGIC)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!gpus[i].gpm)
        return NVML_ERROR_NOT_SUPPORTED;
    if (slot && (!gpus[i].migs || slot > gpus[i].migs))
        return NVML_ERROR_NOT_FOUND;
    update_levels();
    x->gpu = i + 1;
    x->slot = slot;
    x->t = gpus[i].acc_t;
    memcpy(x->acc, gpus[i].acc, sizeof x->acc);
    /* A MIG instance's SM activity is its GPU's + its slot. */
    x->acc[L_SM] += slot * x->t;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample)
{
    if (mig_slot(device))
        return NVML_ERROR_INVALID_ARGUMENT;
    return take_sample(device, 0, gpmSample);
}

nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned int gpuInstanceId,
                                 nvmlGpmSample_t gpmSample)
{
    if (mig_slot(device) || gpuInstanceId % 2 == 0)
        return NVML_ERROR_INVALID_ARGUMENT; /* the parent, and ids 1, 3, 5, ... */
    return take_sample(device, (gpuInstanceId + 1) / 2, gpmSample);
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *mg)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    if (!mg)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (mg->version != NVML_GPM_METRICS_GET_VERSION)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    const stub_sample *a = mg->sample1, *b = mg->sample2;
    if (!a || !b || a->magic != SAMPLE_MAGIC || b->magic != SAMPLE_MAGIC || !a->gpu ||
        a->gpu != b->gpu || a->slot != b->slot || !(b->t - a->t >= 0.1) ||
        mg->numMetrics > NVML_GPM_METRIC_MAX)
        return NVML_ERROR_INVALID_ARGUMENT;
    const struct stub_gpu *g = &gpus[a->gpu - 1];
    if (g->unsupported[W_GPMGET])
        return NVML_ERROR_UNKNOWN;
    for (unsigned k = 0; k < mg->numMetrics; k++) {
        nvmlGpmMetric_t *m = &mg->metrics[k];
        m->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        m->value = 0;
        for (int l = 0; l < NLEV; l++)
            if (level_metric[l] == m->metricId) {
                if ((l == L_NVLTX || l == L_NVLRX) && g->unsupported[W_NVLINK])
                    break;
                m->value = (b->acc[l] - a->acc[l]) / (b->t - a->t);
                m->nvmlReturn = NVML_SUCCESS;
            }
    }
    return NVML_SUCCESS;
}
