/* DCGM's profiling fields for GPUs without GPM (gpu_dcgm.h).  Field
 * semantics: NVIDIA's dcgm_fields.h, summed up in docs/format.md "GPU
 * activity"; the activity fields are ratios, recorded as percentages in
 * the same columns as GPM's, NVLink bytes per second as MiB/s. */
#include <dlfcn.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcgm_api.h"
#include "gpu_dcgm.h"

#define WATCH_US 1000000LL /* DCGM updates the fields once a second */

static const struct dcgm_field {
    unsigned short id;
    const char *suffix;
    const char *unit;
    double scale; /* to the column's unit */
    double max;   /* the largest sane value, in it */
} dcgm_fields[PM_DCGM_NF] = {
    {DCGM_FI_PROF_SM_ACTIVE, "sm_active", "%", 100, 100},
    {DCGM_FI_PROF_SM_OCCUPANCY, "sm_occupancy", "%", 100, 100},
    {DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, "tensor_active", "%", 100, 100},
    {DCGM_FI_PROF_PIPE_FP64_ACTIVE, "fp64_active", "%", 100, 100},
    {DCGM_FI_PROF_PIPE_FP32_ACTIVE, "fp32_active", "%", 100, 100},
    {DCGM_FI_PROF_PIPE_FP16_ACTIVE, "fp16_active", "%", 100, 100},
    {DCGM_FI_PROF_DRAM_ACTIVE, "dram_active", "%", 100, 100},
    {DCGM_FI_PROF_NVLINK_TX_BYTES, "nvlink_tx", "MiB/s", 1.0 / 1048576, 1e9},
    {DCGM_FI_PROF_NVLINK_RX_BYTES, "nvlink_rx", "MiB/s", 1.0 / 1048576, 1e9},
};

typedef struct dcgm_fns {
#define FN(name) __typeof__(name) *
    FN(dcgmInit) init;
    FN(dcgmShutdown) shutdown;
    FN(errorString) error_string;
    FN(dcgmConnect) connect;
    FN(dcgmDisconnect) disconnect;
    FN(dcgmStartEmbedded) start;
    FN(dcgmStopEmbedded) stop;
    FN(dcgmGetAllSupportedDevices) devices;
    FN(dcgmFieldGroupCreate) fg_create;
    FN(dcgmFieldGroupDestroy) fg_destroy;
    FN(dcgmWatchFields) watch;
    FN(dcgmUnwatchFields) unwatch;
    FN(dcgmGetLatestValuesForFields) latest;
#undef FN
} dcgm_fns;

static const struct {
    size_t off;
    const char *name;
} syms[] = {
    {offsetof(dcgm_fns, init), "dcgmInit"},
    {offsetof(dcgm_fns, shutdown), "dcgmShutdown"},
    {offsetof(dcgm_fns, error_string), "errorString"},
    {offsetof(dcgm_fns, connect), "dcgmConnect"},
    {offsetof(dcgm_fns, disconnect), "dcgmDisconnect"},
    {offsetof(dcgm_fns, start), "dcgmStartEmbedded"},
    {offsetof(dcgm_fns, stop), "dcgmStopEmbedded"},
    {offsetof(dcgm_fns, devices), "dcgmGetAllSupportedDevices"},
    {offsetof(dcgm_fns, fg_create), "dcgmFieldGroupCreate"},
    {offsetof(dcgm_fns, fg_destroy), "dcgmFieldGroupDestroy"},
    {offsetof(dcgm_fns, watch), "dcgmWatchFields"},
    {offsetof(dcgm_fns, unwatch), "dcgmUnwatchFields"},
    {offsetof(dcgm_fns, latest), "dcgmGetLatestValuesForFields"},
};

struct pm_dcgm {
    void *dl;
    dcgm_fns f;
    int inited, embedded, connected, watching;
    dcgmHandle_t h;
    dcgmFieldGrp_t fg;
    int have_fg;
    unsigned ids[DCGM_MAX_NUM_DEVICES];
    char uuid[DCGM_MAX_NUM_DEVICES][96];
    int n;
};

static const char *dcgm_err(const pm_dcgm *d, dcgmReturn_t rc)
{
    static char buf[32];
    const char *s = d->f.error_string ? d->f.error_string(rc) : NULL;
    if (s)
        return s;
    snprintf(buf, sizeof buf, "DCGM error %d", rc);
    return buf;
}

void pm_dcgm_close(pm_dcgm *d)
{
    if (!d)
        return;
    if (d->watching)
        d->f.unwatch(d->h, DCGM_GROUP_ALL_GPUS, d->fg);
    if (d->have_fg)
        d->f.fg_destroy(d->h, d->fg);
    if (d->connected)
        d->f.disconnect(d->h);
    if (d->embedded)
        d->f.stop(d->h);
    if (d->inited)
        d->f.shutdown();
    if (d->dl)
        dlclose(d->dl);
    free(d);
}

/* The libraries tried, newest first. */
static void *open_lib(char *why, size_t cap)
{
    const char *off = getenv("PERFMON_DCGM");
    if (off && strcmp(off, "off") == 0) {
        snprintf(why, cap, "turned off (PERFMON_DCGM=off)");
        return NULL;
    }
    const char *env = getenv("PERFMON_DCGM_LIB");
    static const char *const names[] = {"libdcgm.so.4", "libdcgm.so.3", "libdcgm.so"};
    if (env && *env) {
        void *dl = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (!dl) {
            const char *e = dlerror();
            snprintf(why, cap, "no DCGM library (%s)", e ? e : env);
        }
        return dl;
    }
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        void *dl = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);
        if (dl)
            return dl;
    }
    snprintf(why, cap, "no DCGM library (libdcgm.so.4 or .3)");
    return NULL;
}

/* Each supported GPU's UUID, to match DCGM's ids with NVML's GPUs. */
static int read_uuids(pm_dcgm *d, char *why, size_t cap)
{
    int count = 0;
    dcgmReturn_t rc = d->f.devices(d->h, d->ids, &count);
    if (rc != DCGM_ST_OK || count <= 0) {
        snprintf(why, cap, "DCGM lists no GPU (%s)", rc ? dcgm_err(d, rc) : "none supported");
        return -1;
    }
    d->n = count > DCGM_MAX_NUM_DEVICES ? DCGM_MAX_NUM_DEVICES : count;
    for (int i = 0; i < d->n; i++) {
        unsigned short fid = DCGM_FI_DEV_UUID;
        dcgmFieldValue_v1 v;
        memset(&v, 0, sizeof v);
        v.version = dcgmFieldValue_version1;
        d->uuid[i][0] = '\0';
        if (d->ids[i] > 0x7fffffff ||
            d->f.latest(d->h, (int)d->ids[i], &fid, 1, &v) != DCGM_ST_OK ||
            v.status != DCGM_ST_OK || v.fieldType != DCGM_FT_STRING)
            continue;
        v.value.str[sizeof v.value.str - 1] = '\0';
        snprintf(d->uuid[i], sizeof d->uuid[i], "%s", v.value.str);
    }
    return 0;
}

pm_dcgm *pm_dcgm_open(char *why, size_t cap)
{
    pm_dcgm *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    d->dl = open_lib(why, cap);
    if (!d->dl) {
        pm_dcgm_close(d);
        return NULL;
    }
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
        void *p = dlsym(d->dl, syms[i].name);
        if (!p) {
            snprintf(why, cap, "the DCGM library lacks %s", syms[i].name);
            pm_dcgm_close(d);
            return NULL;
        }
        memcpy((char *)&d->f + syms[i].off, &p, sizeof p);
    }
    dcgmReturn_t rc = d->f.init();
    if (rc != DCGM_ST_OK) {
        snprintf(why, cap, "DCGM cannot start (%s)", dcgm_err(d, rc));
        pm_dcgm_close(d);
        return NULL;
    }
    d->inited = 1;
    /* The node's host engine first: its profiling counters are shared
     * with the site's exporter; an engine of our own would compete. */
    if (d->f.connect("127.0.0.1", &d->h) == DCGM_ST_OK) {
        d->connected = 1;
    } else if ((rc = d->f.start(DCGM_OPERATION_MODE_AUTO, &d->h)) == DCGM_ST_OK) {
        d->embedded = 1;
    } else {
        snprintf(why, cap, "no DCGM host engine and none can start here (%s)", dcgm_err(d, rc));
        pm_dcgm_close(d);
        return NULL;
    }
    unsigned short ids[PM_DCGM_NF + 1];
    ids[0] = DCGM_FI_DEV_UUID;
    for (int k = 0; k < PM_DCGM_NF; k++)
        ids[k + 1] = dcgm_fields[k].id;
    char name[48];
    snprintf(name, sizeof name, "perfmon-%ld", (long)getpid());
    rc = d->f.fg_create(d->h, PM_DCGM_NF + 1, ids, name, &d->fg);
    if (rc != DCGM_ST_OK) {
        snprintf(why, cap, "DCGM cannot make a field group (%s)", dcgm_err(d, rc));
        pm_dcgm_close(d);
        return NULL;
    }
    d->have_fg = 1;
    rc = d->f.watch(d->h, DCGM_GROUP_ALL_GPUS, d->fg, WATCH_US, 5.0, 2);
    if (rc != DCGM_ST_OK) {
        snprintf(why, cap, "DCGM cannot watch the profiling fields (%s)", dcgm_err(d, rc));
        pm_dcgm_close(d);
        return NULL;
    }
    d->watching = 1;
    if (read_uuids(d, why, cap) != 0) {
        pm_dcgm_close(d);
        return NULL;
    }
    return d;
}

int pm_dcgm_find(const pm_dcgm *d, const char *uuid)
{
    for (int i = 0; d && uuid[0] && i < d->n; i++)
        if (strcmp(d->uuid[i], uuid) == 0)
            return (int)d->ids[i];
    return -1;
}

int pm_dcgm_add(const char *prefix, pm_schema *s, int col[PM_DCGM_NF])
{
    for (int k = 0; k < PM_DCGM_NF; k++) {
        char name[80];
        snprintf(name, sizeof name, "%s.%s", prefix, dcgm_fields[k].suffix);
        col[k] = pm_schema_add(s, name, dcgm_fields[k].unit, PM_GAUGE, PM_F64, "gpu", 0);
        if (col[k] < 0)
            return col[k];
    }
    return 0;
}

void pm_dcgm_read(pm_dcgm *d, int id, const int col[PM_DCGM_NF], pm_sample *s)
{
    unsigned short ids[PM_DCGM_NF];
    dcgmFieldValue_v1 v[PM_DCGM_NF];
    memset(v, 0, sizeof v);
    for (int k = 0; k < PM_DCGM_NF; k++) {
        ids[k] = dcgm_fields[k].id;
        v[k].version = dcgmFieldValue_version1;
    }
    if (d->f.latest(d->h, id, ids, PM_DCGM_NF, v) != DCGM_ST_OK)
        return;
    for (int k = 0; k < PM_DCGM_NF; k++) {
        const struct dcgm_field *fd = &dcgm_fields[k];
        double x = NAN;
        if (v[k].status != DCGM_ST_OK || v[k].fieldId != fd->id)
            continue;
        if (v[k].fieldType == DCGM_FT_DOUBLE && v[k].value.dbl < DCGM_FP64_BLANK)
            x = v[k].value.dbl * fd->scale;
        else if (v[k].fieldType == DCGM_FT_INT64 && v[k].value.i64 < DCGM_INT64_BLANK)
            x = (double)v[k].value.i64 * fd->scale;
        if (!isfinite(x) || x < 0 || x > fd->max * 1.001)
            continue;
        pm_sample_f64(s, col[k], x > fd->max ? fd->max : x);
    }
}
