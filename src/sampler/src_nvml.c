/* NVIDIA GPU source: per-GPU metrics through NVML (NVML API reference,
 * "Device Queries"), the library being opened at run time with dlopen so
 * that perfmon neither builds nor links against the driver.
 * PERFMON_NVML_LIB names another library to open (the tests' stand-in);
 * the default is the driver's libnvidia-ml.so.1.
 *
 * Columns are gpu.<n>.<metric> for NVML device index n, which the analyzer
 * turns into one series per GPU named gpu-<n>.<host> as SKA perfmon does.
 * Values are recorded in NVML's own units (mW, mJ, KB/s, MHz, ns) and
 * converted by the catalog.  A pm_nv_query that answers NOT_SUPPORTED when the
 * source opens gets no column; one that fails later leaves its column
 * unrecorded for that sample (and is not asked again after
 * NOT_SUPPORTED); GPU_IS_LOST stops all reading of that GPU, said once.
 *
 * Cost: each pm_nv_query is an ioctl into the driver (tens of microseconds),
 * except nvmlDeviceGetPcieThroughput, which samples the bus for 20 ms per
 * direction.  PCIe throughput is therefore read for at most
 * PCIE_PER_SAMPLE GPUs per sample, in turn, so a sample's cost does not
 * grow with the GPU count by 40 ms a GPU.
 *
 * XID errors (the driver's critical error reports, "Xid" in the kernel
 * log) come as NVML events, reported only after their registration: at
 * open, one event set is made and each GPU that supports it is registered
 * for nvmlEventTypeXidCriticalError; at each sample the set is polled
 * (nvmlEventSetWait_v2 with a timeout of 0) for at most XID_PER_SAMPLE
 * events.  Each is an "xid" event note and counts in gpu.<n>.xid, the
 * XIDs of that GPU since the sampler's start.  Without the entry points
 * (a driver before NVML 4.304) or the set, there are no xid columns, said
 * once in a note and in the metadata's "gpu_xid".
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

/* Newest name first; the first one the library has is used. */
static const struct sym {
    size_t off;
    int required;
    const char *names[3];
} syms[] = {
#define S(f, req, ...)              \
    {                               \
        offsetof(nvml_fns, f), req, \
        {                           \
            __VA_ARGS__             \
        }                           \
    }
    S(init, 1, "nvmlInit_v2", "nvmlInit"),
    S(shutdown, 1, "nvmlShutdown"),
    S(error_string, 0, "nvmlErrorString"),
    S(count, 1, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"),
    S(handle, 1, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"),
    S(util, 0, "nvmlDeviceGetUtilizationRates"),
    S(enc, 0, "nvmlDeviceGetEncoderUtilization"),
    S(dec, 0, "nvmlDeviceGetDecoderUtilization"),
    S(mem, 0, "nvmlDeviceGetMemoryInfo"),
    S(bar1, 0, "nvmlDeviceGetBAR1MemoryInfo"),
    S(power, 0, "nvmlDeviceGetPowerUsage"),
    S(energy, 0, "nvmlDeviceGetTotalEnergyConsumption"),
    S(temp, 0, "nvmlDeviceGetTemperature"),
    S(fan, 0, "nvmlDeviceGetFanSpeed"),
    S(clock, 0, "nvmlDeviceGetClockInfo"),
    S(pcie, 0, "nvmlDeviceGetPcieThroughput"),
    S(ecc, 0, "nvmlDeviceGetTotalEccErrors"),
    S(throttle, 0, "nvmlDeviceGetCurrentClocksEventReasons",
      "nvmlDeviceGetCurrentClocksThrottleReasons"),
    S(violation, 0, "nvmlDeviceGetViolationStatus"),
    /* _v3 and _v2 fill nvmlProcessInfo_v2_t, the plain name the v1 form */
    S(procs, 0, "nvmlDeviceGetComputeRunningProcesses_v3",
      "nvmlDeviceGetComputeRunningProcesses_v2"),
    S(procs_v1, 0, "nvmlDeviceGetComputeRunningProcesses"),
    S(name, 0, "nvmlDeviceGetName"),
    S(uuid, 0, "nvmlDeviceGetUUID"),
    S(pci, 0, "nvmlDeviceGetPciInfo_v3"),
    S(plimit, 0, "nvmlDeviceGetEnforcedPowerLimit"),
    S(driver, 0, "nvmlSystemGetDriverVersion"),
    S(cuda, 0, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"),
    S(ev_create, 0, "nvmlEventSetCreate"),
    S(ev_supported, 0, "nvmlDeviceGetSupportedEventTypes"),
    S(ev_register, 0, "nvmlDeviceRegisterEvents"),
    /* the plain name fills the struct without its last two members */
    S(ev_wait, 0, "nvmlEventSetWait_v2", "nvmlEventSetWait"),
    S(ev_free, 0, "nvmlEventSetFree"),
    S(putil, 0, "nvmlDeviceGetProcessUtilization"),
    S(mig_mode, 0, "nvmlDeviceGetMigMode"),
    S(mig_count, 0, "nvmlDeviceGetMaxMigDeviceCount"),
    S(mig_handle, 0, "nvmlDeviceGetMigDeviceHandleByIndex"),
    S(mig_gi, 0, "nvmlDeviceGetGpuInstanceId"),
    S(gpm_support, 0, "nvmlGpmQueryDeviceSupport"),
    S(gpm_alloc, 0, "nvmlGpmSampleAlloc"),
    S(gpm_free, 0, "nvmlGpmSampleFree"),
    S(gpm_get, 0, "nvmlGpmSampleGet"),
    S(gpm_mig_get, 0, "nvmlGpmMigSampleGet"),
    S(gpm_metrics, 0, "nvmlGpmMetricsGet"),
#undef S
};

static const struct metric {
    const char *suffix;
    const char *unit;
    int kind;
    int q;    /* the pm_nv_query that yields it */
    int slot; /* its place among the pm_nv_query's outputs */
    int tree; /* only when a process tree is followed */
} metrics[] = {
    {"util", "%", PM_GAUGE, Q_UTIL, 0, 0},
    {"mem_util", "%", PM_GAUGE, Q_UTIL, 1, 0},
    {"enc_util", "%", PM_GAUGE, Q_ENC, 0, 0},
    {"dec_util", "%", PM_GAUGE, Q_DEC, 0, 0},
    {"mem_used", "B", PM_GAUGE, Q_MEM, 0, 0},
    {"mem_total", "B", PM_GAUGE, Q_MEM, 1, 0},
    {"bar1_used", "B", PM_GAUGE, Q_BAR1, 0, 0},
    {"power", "mW", PM_GAUGE, Q_POWER, 0, 0},
    {"energy", "mJ", PM_COUNTER, Q_ENERGY, 0, 0},
    {"temp", "C", PM_GAUGE, Q_TEMP, 0, 0},
    {"fan", "%", PM_GAUGE, Q_FAN, 0, 0},
    {"clock_graphics", "MHz", PM_GAUGE, Q_CLK_GR, 0, 0},
    {"clock_sm", "MHz", PM_GAUGE, Q_CLK_SM, 0, 0},
    {"clock_mem", "MHz", PM_GAUGE, Q_CLK_MEM, 0, 0},
    {"pcie_tx", "KB/s", PM_GAUGE, Q_PCIE_TX, 0, 0},
    {"pcie_rx", "KB/s", PM_GAUGE, Q_PCIE_RX, 0, 0},
    {"ecc_sbe", "1", PM_COUNTER, Q_ECC_SBE, 0, 0},
    {"ecc_dbe", "1", PM_COUNTER, Q_ECC_DBE, 0, 0},
    {"throttle_reasons", "1", PM_GAUGE, Q_THROTTLE, 0, 0},
    {"throttle_power", "ns", PM_COUNTER, Q_VIOL_POWER, 0, 0},
    {"throttle_thermal", "ns", PM_COUNTER, Q_VIOL_THERMAL, 0, 0},
    {"procs", "1", PM_GAUGE, Q_PROCS, 0, 0},
    {"job_procs", "1", PM_GAUGE, Q_PROCS, 1, 1},
    {"job_mem", "B", PM_GAUGE, Q_PROCS, 2, 1},
    {"job_sm_util", "%", PM_GAUGE, Q_PUTIL, 0, 1},
    {"job_mem_util", "%", PM_GAUGE, Q_PUTIL, 1, 1},
};
_Static_assert(sizeof metrics / sizeof metrics[0] == NMET, "NMET (nvml.h) counts metrics[]");

const char *pm_nv_errstr(const nvml_state *st, nvmlReturn_t rc)
{
    static char buf[32];
    const char *s = st->f.error_string ? st->f.error_string(rc) : NULL;
    if (s)
        return s;
    snprintf(buf, sizeof buf, "NVML error %d", rc);
    return buf;
}

static void nvml_close(void *state)
{
    nvml_state *st = state;
    if (!st)
        return;
    if (st->events && st->f.ev_free)
        st->f.ev_free(st->events);
    for (size_t i = 0; i < st->n; i++)
        pm_gpm_close(&st->g[i].gpm);
    pm_dcgm_close(st->dcgm);
    if (st->f.shutdown)
        st->f.shutdown();
    if (st->dl)
        dlclose(st->dl);
    free(st);
}

static int resolve(nvml_state *st, pm_error *err)
{
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = NULL;
        for (size_t k = 0; k < 3 && syms[i].names[k] && !p; k++)
            p = dlsym(st->dl, syms[i].names[k]);
        if (!p && syms[i].required)
            return pm_error_set(err, PM_ENOENT, "NVML library lacks %s", syms[i].names[0]);
        /* POSIX guarantees a function pointer round-trips through void *. */
        memcpy((char *)&st->f + syms[i].off, &p, sizeof p);
    }
    return 0;
}

/* One pm_nv_query of one GPU; out gets its values. */
nvmlReturn_t pm_nv_query(nvml_state *st, const pm_sctx *ctx, gpu *g, int q, uint64_t out[3],
                         int *partial)
{
    const nvml_fns *f = &st->f;
    nvmlDevice_t d = g->dev;
    unsigned int u = 0, period = 0;
    unsigned long long ull = 0;
    uint64_t v = 0, v2 = 0;
    nvmlReturn_t rc = NVML_ERROR_NOT_SUPPORTED;
    *partial = 0;
#define CALL(fn, ...) (f->fn ? f->fn(__VA_ARGS__) : NVML_ERROR_NOT_SUPPORTED)
    switch (q) {
    case Q_UTIL: {
        nvmlUtilization_t ut = {0, 0};
        rc = CALL(util, d, &ut);
        v = ut.gpu;
        v2 = ut.memory;
        break;
    }
    case Q_MEM: {
        nvmlMemory_t m = {0, 0, 0};
        rc = CALL(mem, d, &m);
        v = m.used;
        v2 = m.total;
        break;
    }
    case Q_BAR1: {
        nvmlBAR1Memory_t b1 = {0, 0, 0};
        rc = CALL(bar1, d, &b1);
        v = b1.bar1Used;
        break;
    }
    case Q_VIOL_POWER:
    case Q_VIOL_THERMAL: {
        nvmlViolationTime_t vt = {0, 0};
        rc = CALL(violation, d,
                  q == Q_VIOL_POWER ? NVML_PERF_POLICY_POWER : NVML_PERF_POLICY_THERMAL, &vt);
        v = vt.violationTime;
        break;
    }
    case Q_PROCS: return pm_nv_query_procs(st, ctx, g, out, partial);
    case Q_PUTIL: return pm_nv_query_putil(st, ctx, g, out);
    case Q_ENC:
        rc = CALL(enc, d, &u, &period);
        v = u;
        break;
    case Q_DEC:
        rc = CALL(dec, d, &u, &period);
        v = u;
        break;
    case Q_POWER:
        rc = CALL(power, d, &u);
        v = u;
        break;
    case Q_TEMP:
        rc = CALL(temp, d, NVML_TEMPERATURE_GPU, &u);
        v = u;
        break;
    case Q_FAN:
        rc = CALL(fan, d, &u);
        v = u;
        break;
    case Q_CLK_GR:
        rc = CALL(clock, d, NVML_CLOCK_GRAPHICS, &u);
        v = u;
        break;
    case Q_CLK_SM:
        rc = CALL(clock, d, NVML_CLOCK_SM, &u);
        v = u;
        break;
    case Q_CLK_MEM:
        rc = CALL(clock, d, NVML_CLOCK_MEM, &u);
        v = u;
        break;
    case Q_PCIE_TX:
        rc = CALL(pcie, d, NVML_PCIE_UTIL_TX_BYTES, &u);
        v = u;
        break;
    case Q_PCIE_RX:
        rc = CALL(pcie, d, NVML_PCIE_UTIL_RX_BYTES, &u);
        v = u;
        break;
    case Q_ENERGY:
        rc = CALL(energy, d, &ull);
        v = ull;
        break;
    case Q_ECC_SBE:
        rc = CALL(ecc, d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, &ull);
        v = ull;
        break;
    case Q_ECC_DBE:
        rc = CALL(ecc, d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, &ull);
        v = ull;
        break;
    case Q_THROTTLE:
        rc = CALL(throttle, d, &ull);
        v = ull;
        break;
    default: break;
    }
#undef CALL
    if (rc == NVML_SUCCESS) {
        out[0] = v;
        out[1] = v2;
    }
    return rc;
}

static void set_lost(nvml_state *st, gpu *g)
{
    g->lost = 1;
    pm_log(PM_LOG_WARN, "GPU %s (%s) is lost (NVML: %s); its columns are no longer recorded",
           g->prefix + 4, g->bus_id[0] ? g->bus_id : g->name,
           pm_nv_errstr(st, NVML_ERROR_GPU_IS_LOST));
}

/* Names, memory size and power limit for the metadata. */
static void identify(nvml_state *st, gpu *g)
{
    nvmlPciInfo_t pci;
    unsigned int mw;
    nvmlMemory_t m;
    if (!st->f.name || st->f.name(g->dev, g->name, sizeof g->name) != NVML_SUCCESS)
        g->name[0] = '\0';
    if (!st->f.uuid || st->f.uuid(g->dev, g->uuid, sizeof g->uuid) != NVML_SUCCESS)
        g->uuid[0] = '\0';
    memset(&pci, 0, sizeof pci);
    if (st->f.pci && st->f.pci(g->dev, &pci) == NVML_SUCCESS)
        snprintf(g->bus_id, sizeof g->bus_id, "%.*s", (int)sizeof pci.busId, pci.busId);
    if (st->f.plimit && st->f.plimit(g->dev, &mw) == NVML_SUCCESS)
        g->power_limit_mw = mw;
    if (st->f.mem && st->f.mem(g->dev, &m) == NVML_SUCCESS)
        g->mem_total = m.total;
    /* The library's strings are NUL-terminated by contract; make sure. */
    g->name[sizeof g->name - 1] = g->uuid[sizeof g->uuid - 1] = '\0';
}

/* Ask each pm_nv_query once; NOT_SUPPORTED ones get no column.  Returns 0, 1
 * when the GPU is lost already, or a negative PM_E* code. */
static int add_columns(nvml_state *st, const pm_sctx *ctx, gpu *g, pm_schema *s)
{
    for (int q = 0; q < NQ; q++) {
        uint64_t out[3] = {0, 0, 0};
        int partial;
        nvmlReturn_t rc = pm_nv_query(st, ctx, g, q, out, &partial);
        if (rc == NVML_ERROR_GPU_IS_LOST)
            return 1;
        g->unsupported[q] = rc == NVML_ERROR_NOT_SUPPORTED;
    }
    for (size_t m = 0; m < NMET; m++) {
        g->col[m] = -1;
        if (g->unsupported[metrics[m].q] || (metrics[m].tree && ctx->nroots == 0))
            continue;
        char name[64];
        snprintf(name, sizeof name, "%s.%s", g->prefix, metrics[m].suffix);
        g->col[m] = pm_schema_add(s, name, metrics[m].unit, metrics[m].kind, PM_U64, "gpu", 0);
        if (g->col[m] < 0)
            return g->col[m];
    }
    return 0;
}

/* DCGM's profiling fields for a GPU without GPM, where DCGM has them;
 * otherwise why not is added to g->gpm_why.  Returns 0 or a negative
 * PM_E* code. */
static int try_dcgm(nvml_state *st, gpu *g, pm_schema *s)
{
    if (!st->dcgm_tried) {
        st->dcgm_tried = 1;
        st->dcgm = pm_dcgm_open(st->dcgm_why, sizeof st->dcgm_why);
    }
    int id = st->dcgm ? pm_dcgm_find(st->dcgm, g->uuid) : -1;
    if (id < 0) {
        size_t n = strlen(g->gpm_why);
        snprintf(g->gpm_why + n, sizeof g->gpm_why - n, ", and DCGM: %s",
                 st->dcgm ? "it does not profile this GPU" : st->dcgm_why);
        return 0;
    }
    int rc = pm_dcgm_add(g->prefix, s, g->dcgm_col);
    if (rc == 0)
        g->dcgm_id = id;
    return rc;
}

/* One GPU or MIG instance (mig: 1 + its GPU instance id, parent its
 * GPU) as st->g[st->n].  Returns 0 (a GPU lost already is skipped) or a
 * negative PM_E* code. */
static int add_gpu(nvml_state *st, const pm_sctx *ctx, pm_schema *s, nvmlDevice_t dev,
                   unsigned index, unsigned mig, nvmlDevice_t parent)
{
    if (st->n >= MAX_GPUS) {
        pm_log(PM_LOG_INFO, "GPU %u%s skipped: more than %d GPUs and MIG instances", index,
               mig ? " (a MIG instance)" : "", MAX_GPUS);
        return 0;
    }
    gpu *g = &st->g[st->n];
    memset(g, 0, sizeof *g);
    g->index = index;
    g->mig = mig;
    g->dev = dev;
    g->gpm.prev = -1;
    if (mig)
        snprintf(g->prefix, sizeof g->prefix, "gpu.%u.mig%u", index, mig - 1);
    else
        snprintf(g->prefix, sizeof g->prefix, "gpu.%u", index);
    identify(st, g);
    int rc = add_columns(st, ctx, g, s);
    if (rc == 1) {
        pm_log(PM_LOG_INFO, "GPU %s skipped: %s", g->prefix + 4,
               pm_nv_errstr(st, NVML_ERROR_GPU_IS_LOST));
        return 0;
    }
    if (rc == 0 && !mig)
        rc = pm_nv_register_xid(st, g, s);
    else
        g->col_xid = -1;
    if (rc == 0)
        rc = pm_gpm_open(&g->gpm, &st->gpm_api, mig ? parent : dev, mig != 0, mig ? mig - 1 : 0,
                         g->prefix, s, &g->gpm_on, g->gpm_why, sizeof g->gpm_why);
    g->dcgm_id = -1;
    if (rc == 0 && !g->gpm_on && !mig)
        rc = try_dcgm(st, g, s);
    if (rc < 0)
        return rc;
    st->n++;
    return 0;
}

/* The MIG instances of GPU index (when MIG is on), each a device of its
 * own.  Returns 0 or a negative PM_E* code. */
static int add_migs(nvml_state *st, const pm_sctx *ctx, pm_schema *s, nvmlDevice_t dev,
                    unsigned index)
{
    const nvml_fns *f = &st->f;
    unsigned cur = 0, pending = 0, max = 0;
    if (!f->mig_mode || !f->mig_count || !f->mig_handle || !f->mig_gi ||
        f->mig_mode(dev, &cur, &pending) != NVML_SUCCESS || cur != NVML_DEVICE_MIG_ENABLE ||
        f->mig_count(dev, &max) != NVML_SUCCESS)
        return 0;
    if (max > MAX_GPUS)
        max = MAX_GPUS;
    for (unsigned k = 0; k < max; k++) {
        nvmlDevice_t m;
        unsigned gi;
        nvmlReturn_t nr = f->mig_handle(dev, k, &m);
        if (nr == NVML_ERROR_NOT_FOUND)
            continue; /* no instance in that slot */
        if (nr != NVML_SUCCESS || f->mig_gi(m, &gi) != NVML_SUCCESS || gi > 999) {
            pm_log(PM_LOG_INFO, "GPU %u: MIG device %u skipped: %s", index, k,
                   pm_nv_errstr(st, nr != NVML_SUCCESS ? nr : NVML_ERROR_UNKNOWN));
            continue;
        }
        int rc = add_gpu(st, ctx, s, m, index, gi + 1, dev);
        if (rc)
            return rc;
    }
    return 0;
}

static int nvml_open(const pm_sctx *ctx, pm_schema *s, void **state, pm_error *err)
{
    const char *lib = getenv("PERFMON_NVML_LIB");
    if (!lib || !*lib)
        lib = DEFAULT_LIB;
    nvml_state *st = calloc(1, sizeof *st);
    if (!st)
        return pm_error_set(err, PM_ENOMEM, "nvml: out of memory");
    st->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!st->dl) {
        const char *why = dlerror();
        pm_error_set(err, PM_ENOENT, "no NVIDIA driver library (%s)", why ? why : lib);
        nvml_close(st);
        return PM_ENOENT;
    }
    int rc = resolve(st, err);
    if (rc) {
        memset(&st->f, 0, sizeof st->f);
        nvml_close(st);
        return rc;
    }
    nvmlReturn_t nr = st->f.init();
    if (nr != NVML_SUCCESS) {
        pm_error_set(err, PM_ENOENT, "NVML cannot start: %s", pm_nv_errstr(st, nr));
        st->f.shutdown = NULL; /* nothing to shut down */
        nvml_close(st);
        return PM_ENOENT;
    }
    unsigned int count = 0;
    nr = st->f.count(&count);
    if (nr != NVML_SUCCESS || count == 0) {
        pm_error_set(err, PM_ENOENT, "no NVIDIA GPU%s%s", nr ? ": " : "",
                     nr ? pm_nv_errstr(st, nr) : "");
        nvml_close(st);
        return PM_ENOENT;
    }
    if (count > MAX_GPUS)
        count = MAX_GPUS;
    if (st->f.driver && st->f.driver(st->driver, sizeof st->driver) == NVML_SUCCESS)
        st->driver[sizeof st->driver - 1] = '\0';
    else
        st->driver[0] = '\0';
    if (!st->f.cuda || st->f.cuda(&st->cuda) != NVML_SUCCESS)
        st->cuda = 0;
    pm_nv_open_events(st);
    st->gpm_api = (pm_gpm_api){st->f.gpm_support, st->f.gpm_alloc,   st->f.gpm_free,
                               st->f.gpm_get,     st->f.gpm_mig_get, st->f.gpm_metrics};
    for (unsigned i = 0; i < count && rc == 0; i++) {
        nvmlDevice_t dev;
        nr = st->f.handle(i, &dev);
        if (nr != NVML_SUCCESS) {
            pm_log(PM_LOG_INFO, "GPU %u skipped: %s", i, pm_nv_errstr(st, nr));
            continue;
        }
        rc = add_gpu(st, ctx, s, dev, i, 0, NULL);
        if (rc == 0)
            rc = add_migs(st, ctx, s, dev, i);
    }
    if (rc < 0) {
        nvml_close(st);
        return pm_error_set(err, rc, "nvml: cannot add columns");
    }
    if (st->events) {
        int any = 0;
        for (size_t i = 0; i < st->n; i++)
            any |= st->g[i].col_xid >= 0;
        if (!any) {
            st->f.ev_free(st->events);
            st->events = NULL;
        }
    }
    if (st->n == 0) {
        nvml_close(st);
        return pm_error_set(err, PM_ENOENT, "no usable NVIDIA GPU (%u listed)", count);
    }
    *state = st;
    return 0;
}

static void read_gpu(nvml_state *st, const pm_sctx *ctx, gpu *g, int pcie, pm_sample *s)
{
    for (int q = 0; q < NQ && !g->lost; q++) {
        if (g->unsupported[q] || ((q == Q_PCIE_TX || q == Q_PCIE_RX) && !pcie))
            continue;
        uint64_t out[3] = {0, 0, 0};
        int partial;
        nvmlReturn_t rc = pm_nv_query(st, ctx, g, q, out, &partial);
        if (rc == NVML_ERROR_GPU_IS_LOST) {
            set_lost(st, g);
            break;
        }
        if (rc == NVML_ERROR_NOT_SUPPORTED)
            g->unsupported[q] = 1;
        if (rc != NVML_SUCCESS)
            continue;
        for (size_t m = 0; m < NMET; m++)
            if (metrics[m].q == q && !(partial && metrics[m].slot > 0))
                pm_sample_u64(s, g->col[m], out[metrics[m].slot]);
    }
    if (g->dcgm_id >= 0 && !g->lost)
        pm_dcgm_read(st->dcgm, g->dcgm_id, g->dcgm_col, s);
    nvmlReturn_t rc = g->gpm_on && !g->lost ? pm_gpm_read(&g->gpm, s) : NVML_SUCCESS;
    if (rc == NVML_ERROR_GPU_IS_LOST) {
        set_lost(st, g);
    } else if (rc != NVML_SUCCESS && !g->gpm_failed) {
        /* Said once; the samples it fails in have no GPM values. */
        g->gpm_failed = 1;
        pm_log(PM_LOG_WARN,
               "GPU %s: GPM sampling failed (NVML: %s); its SM activity is not "
               "recorded where it fails",
               g->prefix + 4, pm_nv_errstr(st, rc));
    }
}

/* Once: each GPU whose SM activity cannot be measured, and why. */
static void note_gpm(nvml_state *st, const pm_sctx *ctx)
{
    st->gpm_noted = 1;
    for (size_t i = 0; i < st->n; i++) {
        const gpu *g = &st->g[i];
        if (g->gpm_on || g->dcgm_id >= 0)
            continue;
        char msg[480];
        snprintf(msg, sizeof msg,
                 "nvml: SM activity not measurable on this GPU: GPU %s (%s): %s; "
                 "no sm_active, tensor or pipe columns",
                 g->prefix + 4, g->name[0] ? g->name : "unnamed", g->gpm_why);
        pm_sctx_note(ctx, msg);
    }
}

static int nvml_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    nvml_state *st = state;
    if (st->xid_why[0] && !st->xid_noted) {
        /* Said once, in the profile (open() comes before the writers). */
        char msg[220];
        snprintf(msg, sizeof msg, "nvml: %s", st->xid_why);
        pm_sctx_note(ctx, msg);
        st->xid_noted = 1;
    }
    if (!st->gpm_noted)
        note_gpm(st, ctx);
    if (st->events)
        pm_nv_read_xid(st, ctx);
    for (size_t i = 0; i < st->n; i++)
        if (!st->g[i].lost)
            pm_sample_u64(s, st->g[i].col_xid, st->g[i].xid);
    st->nnow = 0;
    /* PCIe for PCIE_PER_SAMPLE GPUs in turn (all of them when fewer). */
    size_t first = st->n <= PCIE_PER_SAMPLE ? 0 : st->pcie_next % st->n;
    for (size_t i = 0; i < st->n; i++) {
        size_t k = (i + st->n - first) % st->n; /* position in this sample's turn */
        read_gpu(st, ctx, &st->g[i], k < PCIE_PER_SAMPLE, s);
    }
    st->pcie_next = (unsigned)((first + PCIE_PER_SAMPLE) % (st->n ? st->n : 1));
    memcpy(st->seen, st->now, st->nnow * sizeof st->now[0]);
    st->nseen = st->nnow;
    return 0;
}

static void json_member(pm_buf *j, const char *key, const char *value)
{
    pm_buf_printf(j, ",\"%s\":", key);
    pm_buf_json_str(j, value);
}

static void nvml_describe(void *state, pm_buf *j)
{
    nvml_state *st = state;
    pm_buf_puts(j, "\"gpus\":[");
    for (size_t i = 0; i < st->n; i++) {
        const gpu *g = &st->g[i];
        pm_buf_printf(j, "%s{\"index\":%u", i ? "," : "", g->index);
        if (g->mig)
            pm_buf_printf(j, ",\"mig_gpu_instance\":%u", g->mig - 1);
        json_member(j, "columns", g->prefix);
        json_member(j, "sm_activity", g->gpm_on ? "gpm" : g->dcgm_id >= 0 ? "dcgm" : g->gpm_why);
        json_member(j, "name", g->name);
        json_member(j, "uuid", g->uuid);
        json_member(j, "pci_bus_id", g->bus_id);
        json_member(j, "driver_version", st->driver);
        if (st->cuda > 0)
            pm_buf_printf(j, ",\"cuda_version\":\"%d.%d\"", st->cuda / 1000, st->cuda % 1000 / 10);
        pm_buf_printf(j, ",\"memory_total_bytes\":%llu", g->mem_total);
        if (g->power_limit_mw)
            pm_buf_printf(j, ",\"power_limit_w\":%.3f", g->power_limit_mw / 1000.0);
        pm_buf_puts(j, "}");
    }
    pm_buf_puts(j, "]");
    json_member(j, "gpu_xid", st->xid_why[0] ? st->xid_why : "ok");
}

const pm_source pm_source_nvml = {
    .name = "nvml",
    .open = nvml_open,
    .read = nvml_read,
    .describe = nvml_describe,
    .close = nvml_close,
};
