/* SM activity, occupancy, pipe activity, DRAM bandwidth share and PCIe
 * and NVLink traffic through NVML's GPM interface (NVML API reference,
 * "GPM Functions"; Hopper and later, driver 520 and later).  Semantics of
 * each metric: NVIDIA's nvml.h comments on nvmlGpmMetricId_t, summed up
 * in docs/format.md "GPU".
 *
 * GPM answers only for the two samples' interval, so the values are
 * interval means: a perfmon sample records the means since the previous
 * perfmon sample, as the kernel's counters do once the analyzer takes
 * their rate.  A value outside 0..100 % (or a negative or non-finite
 * rate) is not recorded: the library's numbers are treated as input.
 *
 * NVML wants two samples at least 100 ms apart (GPM_MIN_NS): a perfmon
 * sample sooner than that after the last GPM sample takes none and
 * records nothing, and the next one measures the longer interval.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu_gpm.h"
#include "perfmon/clock.h"

static const struct gpm_metric {
    unsigned id;
    const char *suffix;
    const char *unit;
    double max; /* the largest sane value */
} gpm_metrics[PM_GPM_NMET] = {
    {NVML_GPM_METRIC_SM_UTIL, "sm_active", "%", 100},
    {NVML_GPM_METRIC_SM_OCCUPANCY, "sm_occupancy", "%", 100},
    {NVML_GPM_METRIC_ANY_TENSOR_UTIL, "tensor_active", "%", 100},
    {NVML_GPM_METRIC_FP64_UTIL, "fp64_active", "%", 100},
    {NVML_GPM_METRIC_FP32_UTIL, "fp32_active", "%", 100},
    {NVML_GPM_METRIC_FP16_UTIL, "fp16_active", "%", 100},
    {NVML_GPM_METRIC_DRAM_BW_UTIL, "dram_active", "%", 100},
    {NVML_GPM_METRIC_PCIE_TX_PER_SEC, "gpm_pcie_tx", "MiB/s", 1e9},
    {NVML_GPM_METRIC_PCIE_RX_PER_SEC, "gpm_pcie_rx", "MiB/s", 1e9},
    {NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, "nvlink_tx", "MiB/s", 1e9},
    {NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, "nvlink_rx", "MiB/s", 1e9},
};

#define GPM_MIN_NS 100000000LL

static nvmlReturn_t take(pm_gpm *g, nvmlGpmSample_t smp)
{
    if (g->mig)
        return g->api->mig_get ? g->api->mig_get(g->dev, g->gi, smp) : NVML_ERROR_NOT_SUPPORTED;
    return g->api->get(g->dev, smp);
}

void pm_gpm_close(pm_gpm *g)
{
    for (int k = 0; k < 2; k++) {
        if (g->s[k] && g->api && g->api->free)
            g->api->free(g->s[k]);
        g->s[k] = NULL;
    }
    g->prev = -1;
}

int pm_gpm_open(pm_gpm *g, const pm_gpm_api *api, nvmlDevice_t dev, int mig, unsigned gi,
                const char *prefix, pm_schema *s, int *on, char *why, size_t cap)
{
    memset(g, 0, sizeof *g);
    g->api = api;
    g->dev = dev;
    g->mig = mig;
    g->gi = gi;
    g->prev = -1;
    *on = 0;
    for (int m = 0; m < PM_GPM_NMET; m++)
        g->col[m] = -1;
    if (!api->support || !api->alloc || !api->free || !api->get || !api->metrics ||
        (mig && !api->mig_get)) {
        snprintf(why, cap, "the NVML library has no GPM interface (driver before 520)");
        return 0;
    }
    nvmlGpmSupport_t sup;
    memset(&sup, 0, sizeof sup);
    sup.version = NVML_GPM_SUPPORT_VERSION;
    nvmlReturn_t rc = api->support(dev, &sup);
    if (rc != NVML_SUCCESS || !sup.isSupportedDevice) {
        snprintf(why, cap, "%s",
                 rc != NVML_SUCCESS ? "NVML cannot tell whether it has GPM"
                                    : "it has no GPM (before Hopper)");
        return 0;
    }
    if (api->alloc(&g->s[0]) != NVML_SUCCESS || api->alloc(&g->s[1]) != NVML_SUCCESS) {
        pm_gpm_close(g);
        snprintf(why, cap, "NVML cannot allocate GPM samples");
        return 0;
    }
    rc = take(g, g->s[0]);
    if (rc != NVML_SUCCESS) {
        pm_gpm_close(g);
        snprintf(why, cap, "its first GPM sample failed (NVML error %d)", (int)rc);
        return 0;
    }
    g->prev = 0;
    g->t_prev_ns = pm_mono_ns();
    for (int m = 0; m < PM_GPM_NMET; m++) {
        char name[80];
        snprintf(name, sizeof name, "%s.%s", prefix, gpm_metrics[m].suffix);
        g->col[m] = pm_schema_add(s, name, gpm_metrics[m].unit, PM_GAUGE, PM_F64, "gpu", 0);
        if (g->col[m] < 0) {
            int e = g->col[m];
            pm_gpm_close(g);
            return e;
        }
    }
    *on = 1;
    return 0;
}

nvmlReturn_t pm_gpm_read(pm_gpm *g, pm_sample *s)
{
    if (g->prev < 0)
        return NVML_SUCCESS;
    int64_t now = pm_mono_ns();
    if (now - g->t_prev_ns < GPM_MIN_NS)
        return NVML_SUCCESS;
    int next = 1 - g->prev;
    nvmlReturn_t rc = take(g, g->s[next]);
    if (rc != NVML_SUCCESS)
        return rc; /* the next sample measures from s[prev] again */
    g->t_prev_ns = now;
    nvmlGpmMetricsGet_t mg;
    memset(&mg, 0, sizeof mg);
    mg.version = NVML_GPM_METRICS_GET_VERSION;
    mg.sample1 = g->s[g->prev];
    mg.sample2 = g->s[next];
    int which[PM_GPM_NMET];
    for (int m = 0; m < PM_GPM_NMET; m++)
        if (!g->off[m]) {
            which[mg.numMetrics] = m;
            mg.metrics[mg.numMetrics++].metricId = gpm_metrics[m].id;
        }
    g->prev = next;
    if (mg.numMetrics == 0)
        return NVML_SUCCESS;
    rc = g->api->metrics(&mg);
    if (rc != NVML_SUCCESS)
        return rc;
    for (unsigned k = 0; k < mg.numMetrics && k < PM_GPM_NMET; k++) {
        int m = which[k];
        const nvmlGpmMetric_t *x = &mg.metrics[k];
        if (x->nvmlReturn == NVML_ERROR_NOT_SUPPORTED)
            g->off[m] = 1;
        if (x->nvmlReturn != NVML_SUCCESS || x->metricId != gpm_metrics[m].id ||
            !isfinite(x->value) || x->value < 0 || x->value > gpm_metrics[m].max * 1.001)
            continue;
        pm_sample_f64(s, g->col[m], x->value > gpm_metrics[m].max ? gpm_metrics[m].max : x->value);
    }
    return NVML_SUCCESS;
}
