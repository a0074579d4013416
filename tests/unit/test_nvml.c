/* Unit tests of the GPU source (src/sampler/src_nvml.c): the real dlopen,
 * dlsym and reading code runs against the stand-in NVML library that the
 * Makefile builds from tests/stub/nvml_stub.c ($PM_BUILD/tests/
 * libnvml_stub.so), scripted through PERFMON_NVML_STUB (values listed at
 * the top of the stub).  The process tree of the GPU processes is the one
 * captured in fixtures/nodes/hpc-ib-rapl: 100 -> {101, 102 -> 103}, an
 * unrelated 200, and 1235 whose name fakes a parent field.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "perfmon/buf.h"
#include "perfmon/source.h"

#include "../support/testutil.h"

typedef struct gh {
    char notes[4096]; /* the notes written, one a line */
    pm_sctx ctx;
    pm_schema schema;
    pm_sample s;
    void *state;
    pm_error err;
    int rc;
    pid_t roots[1];
} gh;

static char stub_path[4096], dcgm_path[4096];
static char tmp[4096];

static int setup(void **state)
{
    (void)state;
    const char *b = getenv("PM_BUILD");
    snprintf(stub_path, sizeof stub_path, "%s/tests/libnvml_stub.so", b ? b : "build/release");
    snprintf(dcgm_path, sizeof dcgm_path, "%s/tests/libdcgm_stub.so", b ? b : "build/release");
    if (access(stub_path, R_OK) != 0)
        fail_msg("%s missing: build it with make", stub_path);
    snprintf(tmp, sizeof tmp, "%s", pm_test_tmpdir());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pm_test_rmrf(tmp);
    return 0;
}

/* Open the source with the stub scripted by script; root pid 100 of the
 * fixture tree is followed when tree is set. */
static void take_note(void *arg, const char *text)
{
    gh *h = arg;
    size_t n = strlen(h->notes);
    snprintf(h->notes + n, sizeof h->notes - n, "%s\n", text);
}

static int g_open(gh *h, const char *lib, const char *script, int tree)
{
    char proc[4200], sys[4200];
    memset(h, 0, sizeof *h);
    snprintf(proc, sizeof proc, "%s/nodes/hpc-ib-rapl/proc", pm_test_fixtures());
    snprintf(sys, sizeof sys, "%s/nodes/hpc-ib-rapl/sys", pm_test_fixtures());
    assert_int_equal(pm_sctx_open(&h->ctx, proc, sys, &h->err), 0);
    h->ctx.uid = getuid();
    h->roots[0] = 100;
    h->ctx.roots = h->roots;
    h->ctx.nroots = tree ? 1 : 0;
    h->ctx.note = take_note;
    h->ctx.note_arg = h;
    setenv("PERFMON_NVML_LIB", lib ? lib : stub_path, 1);
    setenv("PERFMON_NVML_STUB", script, 1);
    /* no DCGM unless a test asks for the stand-in (dcgm_open) */
    if (!getenv("PERFMON_DCGM_STUB"))
        setenv("PERFMON_DCGM_LIB", "/nonexistent/libdcgm.so.4", 1);
    pm_schema_init(&h->schema);
    h->rc = pm_source_nvml.open(&h->ctx, &h->schema, &h->state, &h->err);
    if (h->rc == 0)
        assert_int_equal(pm_sample_init(&h->s, h->schema.n), 0);
    return h->rc;
}

static void g_read(gh *h)
{
    pm_sample_clear(&h->s);
    assert_int_equal(pm_source_nvml.read(h->state, &h->ctx, &h->s), 0);
}

static void g_close(gh *h)
{
    if (h->rc == 0) {
        pm_source_nvml.close(h->state);
        pm_sample_free(&h->s);
    }
    pm_schema_free(&h->schema);
    pm_sctx_close(&h->ctx);
}

static int col(const gh *h, const char *name)
{
    for (size_t i = 0; i < h->schema.n; i++)
        if (strcmp(h->schema.cols[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* The recorded value of a column; -1 when not recorded this sample. */
static long long val(const gh *h, const char *name)
{
    int c = col(h, name);
    if (c < 0)
        fail_msg("no column %s", name);
    if (!((h->s.present[c / 8] >> (c % 8)) & 1))
        return -1;
    return (long long)h->s.v[c].u;
}

static const char *const all_metrics[] = {"util",
                                          "mem_util",
                                          "enc_util",
                                          "dec_util",
                                          "mem_used",
                                          "mem_total",
                                          "bar1_used",
                                          "power",
                                          "energy",
                                          "temp",
                                          "fan",
                                          "clock_graphics",
                                          "clock_sm",
                                          "clock_mem",
                                          "pcie_tx",
                                          "pcie_rx",
                                          "ecc_sbe",
                                          "ecc_dbe",
                                          "throttle_reasons",
                                          "throttle_power",
                                          "throttle_thermal",
                                          "procs",
                                          "job_procs",
                                          "job_mem"};
#define NALL (sizeof all_metrics / sizeof all_metrics[0])

static void test_columns_and_unsupported(void **state)
{
    (void)state;
    gh h;
    assert_int_equal(g_open(&h, NULL, "gpus=2 unsupported=1:fan unsupported=0:energy", 1), 0);
    char name[64];
    for (unsigned g = 0; g < 2; g++)
        for (size_t m = 0; m < NALL; m++) {
            snprintf(name, sizeof name, "gpu.%u.%s", g, all_metrics[m]);
            int missing = (g == 1 && !strcmp(all_metrics[m], "fan")) ||
                          (g == 0 && !strcmp(all_metrics[m], "energy"));
            if (missing)
                assert_int_equal(col(&h, name), -1);
            else if (col(&h, name) < 0)
                fail_msg("no column %s", name);
        }
    /* and gpu.<n>.xid, the XID events, on both */
    assert_int_equal(h.schema.n, 2 * NALL - 2 + 2);
    assert_int_equal(h.schema.cols[col(&h, "gpu.1.xid")].kind, PM_COUNTER);
    assert_string_equal(h.schema.cols[col(&h, "gpu.1.xid")].group, "events");
    assert_int_equal(col(&h, "gpu.2.util"), -1);
    const pm_column *e = &h.schema.cols[col(&h, "gpu.1.energy")];
    assert_string_equal(e->unit, "mJ");
    assert_string_equal(e->group, "gpu");
    assert_int_equal(e->kind, PM_COUNTER);
    assert_int_equal(h.schema.cols[col(&h, "gpu.0.throttle_power")].kind, PM_COUNTER);
    assert_int_equal(h.schema.cols[col(&h, "gpu.0.ecc_dbe")].kind, PM_COUNTER);
    assert_int_equal(h.schema.cols[col(&h, "gpu.0.util")].kind, PM_GAUGE);
    assert_string_equal(h.schema.cols[col(&h, "gpu.0.power")].unit, "mW");
    g_close(&h);
}

static void test_values(void **state)
{
    (void)state;
    gh h;
    assert_int_equal(g_open(&h, NULL, "gpus=2 util=1:75", 0), 0);
    g_read(&h);
    static const struct {
        const char *col;
        long long v;
    } rows[] = {
        {"gpu.0.util", 10},
        {"gpu.1.util", 75},
        {"gpu.0.mem_util", 5},
        {"gpu.1.mem_util", 6},
        {"gpu.0.enc_util", 1},
        {"gpu.1.dec_util", 3},
        {"gpu.0.mem_used", 1LL << 30},
        {"gpu.1.mem_used", 2LL << 30},
        {"gpu.1.mem_total", 16LL << 30},
        {"gpu.1.bar1_used", 4LL << 20},
        {"gpu.0.power", 100000},
        {"gpu.1.power", 150000},
        {"gpu.0.temp", 40},
        {"gpu.1.fan", 31},
        {"gpu.0.clock_graphics", 1400},
        {"gpu.1.clock_sm", 1411},
        {"gpu.0.clock_mem", 877},
        {"gpu.0.pcie_tx", 1000},
        {"gpu.1.pcie_rx", 4000},
        {"gpu.0.ecc_sbe", 3},
        {"gpu.0.ecc_dbe", 0},
        {"gpu.0.throttle_reasons", 0},
        {"gpu.1.throttle_reasons", 4},
        {"gpu.0.throttle_power", 0},
        {"gpu.1.throttle_thermal", 0},
        {"gpu.0.procs", 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (val(&h, rows[i].col) != rows[i].v)
            fail_msg("%s = %lld, expected %lld", rows[i].col, val(&h, rows[i].col), rows[i].v);
    /* Without a followed tree there are no job columns. */
    assert_int_equal(col(&h, "gpu.0.job_mem"), -1);
    assert_int_equal(col(&h, "gpu.0.job_procs"), -1);
    /* Counters move with time: energy at 100 W is 100 mJ per ms. */
    long long e0 = val(&h, "gpu.0.energy"), v0 = val(&h, "gpu.1.throttle_power");
    usleep(20000);
    g_read(&h);
    long long de = val(&h, "gpu.0.energy") - e0;
    assert_true(de >= 2000 && de < 200000);
    assert_true(val(&h, "gpu.1.energy") > val(&h, "gpu.0.energy"));
    assert_true(val(&h, "gpu.1.throttle_power") - v0 >= 2000000); /* a tenth of >= 20 ms, ns */
    g_close(&h);
}

/* GPU memory of the monitored tree: the stub lists 103 (in the tree), 200
 * (not) and 1235 (a fake parent in its name; really a child of 1). */
static void test_tree_processes(void **state)
{
    (void)state;
    char path[4200], script[4400];
    snprintf(path, sizeof path, "%s/procs", tmp);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "0 103 1048576\n0 200 4096\n0 1235 8192\n1 101 2048\n1 102 %llu\n",
            (unsigned long long)-1); /* NVML_VALUE_NOT_AVAILABLE */
    assert_int_equal(fclose(f), 0);
    snprintf(script, sizeof script, "gpus=2 procs=%s", path);
    gh h;
    assert_int_equal(g_open(&h, NULL, script, 1), 0);
    for (int round = 0; round < 2; round++) { /* the second from the cache */
        g_read(&h);
        assert_int_equal(val(&h, "gpu.0.procs"), 3);
        assert_int_equal(val(&h, "gpu.0.job_procs"), 1);
        assert_int_equal(val(&h, "gpu.0.job_mem"), 1048576);
        assert_int_equal(val(&h, "gpu.1.procs"), 2);
        assert_int_equal(val(&h, "gpu.1.job_procs"), 2);
        assert_int_equal(val(&h, "gpu.1.job_mem"), 2048); /* unknown memory adds nothing */
    }
    /* More processes than the source lists: the count is kept, the
     * tree's share is unknown. */
    f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 300; i++)
        fprintf(f, "0 %d 1\n", 5000 + i);
    assert_int_equal(fclose(f), 0);
    g_read(&h);
    assert_int_equal(val(&h, "gpu.0.procs"), 300);
    assert_int_equal(val(&h, "gpu.0.job_procs"), -1);
    assert_int_equal(val(&h, "gpu.0.job_mem"), -1);
    assert_int_equal(val(&h, "gpu.1.procs"), 0);
    g_close(&h);
}

static void test_gpu_lost(void **state)
{
    (void)state;
    gh h;
    /* GPU 1's third utilisation query is lost: open asks once, so the
     * first sample reads it and the second does not. */
    assert_int_equal(g_open(&h, NULL, "gpus=2 lost=1:3", 0), 0);
    g_read(&h);
    assert_int_equal(val(&h, "gpu.1.util"), 50);
    assert_int_equal(val(&h, "gpu.1.temp"), 41);
    for (int i = 0; i < 2; i++) {
        g_read(&h);
        assert_int_equal(val(&h, "gpu.0.util"), 10);
        assert_int_equal(val(&h, "gpu.0.power"), 100000);
        for (size_t m = 0; m < NALL; m++) {
            char name[64];
            snprintf(name, sizeof name, "gpu.1.%s", all_metrics[m]);
            if (col(&h, name) >= 0 && val(&h, name) != -1)
                fail_msg("%s recorded after the GPU was lost", name);
        }
    }
    g_close(&h);
    /* Lost already when the source opens: that GPU gets no columns. */
    assert_int_equal(g_open(&h, NULL, "gpus=2 lost=0:1", 0), 0);
    assert_int_equal(col(&h, "gpu.0.util"), -1);
    assert_true(col(&h, "gpu.1.util") >= 0);
    g_close(&h);
}

/* PCIe throughput costs 20 ms a direction: two GPUs a sample, in turn. */
static void test_pcie_in_turn(void **state)
{
    (void)state;
    gh h;
    assert_int_equal(g_open(&h, NULL, "gpus=5", 0), 0);
    int seen[5] = {0};
    for (int r = 0; r < 5; r++) {
        g_read(&h);
        int n = 0;
        for (int g = 0; g < 5; g++) {
            char name[32];
            snprintf(name, sizeof name, "gpu.%d.pcie_tx", g);
            if (val(&h, name) >= 0) {
                n++;
                seen[g]++;
                snprintf(name, sizeof name, "gpu.%d.pcie_rx", g);
                assert_int_equal(val(&h, name), 2000 * (g + 1));
            }
            snprintf(name, sizeof name, "gpu.%d.util", g);
            assert_true(val(&h, name) >= 0); /* everything else every sample */
        }
        assert_int_equal(n, 2);
    }
    for (int g = 0; g < 5; g++)
        assert_int_equal(seen[g], 2);
    g_close(&h);
}

static void test_absent(void **state)
{
    (void)state;
    static const struct {
        const char *lib; /* NULL: the stub */
        const char *script;
        const char *msg;
    } rows[] = {
        {"/nonexistent/libnvidia-ml.so.1", "", "no NVIDIA driver library"},
        {"libc.so.6", "", "NVML library lacks nvmlInit_v2"},
        {NULL, "init=9", "NVML cannot start: Driver Not Loaded"},
        {NULL, "gpus=0", "no NVIDIA GPU"},
        {NULL, "gpus=1 lost=0:1", "no usable NVIDIA GPU (1 listed)"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        gh h;
        assert_int_equal(g_open(&h, rows[i].lib, rows[i].script, 1), PM_ENOENT);
        if (!strstr(h.err.msg, rows[i].msg))
            fail_msg("row %zu: '%s' lacks '%s'", i, h.err.msg, rows[i].msg);
        assert_int_equal(h.schema.n, 0);
        g_close(&h);
    }
    pm_source_nvml.close(NULL);
}

static void test_describe(void **state)
{
    (void)state;
    gh h;
    assert_int_equal(g_open(&h, NULL, "gpus=2", 0), 0);
    pm_buf b;
    pm_buf_init(&b);
    pm_buf_puts(&b, "{");
    pm_source_nvml.describe(h.state, &b);
    pm_buf_puts(&b, "}");
    cJSON *j = cJSON_Parse(b.data);
    assert_non_null(j);
    const cJSON *gpus = cJSON_GetObjectItem(j, "gpus");
    assert_int_equal(cJSON_GetArraySize(gpus), 2);
    const cJSON *g1 = cJSON_GetArrayItem(gpus, 1);
    assert_int_equal(cJSON_GetObjectItem(g1, "index")->valueint, 1);
    assert_string_equal(cJSON_GetObjectItem(g1, "name")->valuestring, "Stub GPU 1");
    assert_string_equal(cJSON_GetObjectItem(g1, "uuid")->valuestring,
                        "GPU-00000000-0000-0000-0000-000000000001");
    assert_string_equal(cJSON_GetObjectItem(g1, "pci_bus_id")->valuestring, "00000000:3C:00.0");
    assert_string_equal(cJSON_GetObjectItem(g1, "driver_version")->valuestring, "550.54.15");
    assert_string_equal(cJSON_GetObjectItem(g1, "cuda_version")->valuestring, "12.4");
    assert_true(cJSON_GetObjectItem(g1, "memory_total_bytes")->valuedouble == 17179869184.0);
    assert_true(cJSON_GetObjectItem(g1, "power_limit_w")->valuedouble == 300.0);
    assert_string_equal(cJSON_GetObjectItem(j, "gpu_xid")->valuestring, "ok");
    cJSON_Delete(j);
    pm_buf_free(&b);
    g_close(&h);
}

/* XID errors: registered at open, polled each sample, one event note
 * each and counted per GPU; the set is freed at close. */
static void test_xid_events(void **state)
{
    (void)state;
    char xid[4200], log[4200], script[9000];
    snprintf(xid, sizeof xid, "%s/xid", tmp);
    snprintf(log, sizeof log, "%s/events.log", tmp);
    FILE *f = fopen(xid, "w");
    assert_non_null(f);
    assert_int_equal(fclose(f), 0);
    unlink(log);
    snprintf(script, sizeof script, "gpus=3 noevents=2 xid=%s events_log=%s", xid, log);
    gh h;
    assert_int_equal(g_open(&h, NULL, script, 0), 0);
    assert_true(col(&h, "gpu.0.xid") >= 0);
    assert_true(col(&h, "gpu.1.xid") >= 0);
    assert_int_equal(col(&h, "gpu.2.xid"), -1); /* supports no events */
    g_read(&h);
    assert_int_equal(val(&h, "gpu.0.xid"), 0);
    assert_int_equal(val(&h, "gpu.1.xid"), 0);
    assert_non_null(strstr(h.notes, "nvml: GPU 2 cannot report XID events"));
    assert_null(strstr(h.notes, "\"event\""));
    /* Two XIDs on GPU 1, one on GPU 0, one on GPU 2 (not registered). */
    f = fopen(xid, "w");
    assert_non_null(f);
    fprintf(f, "1 79\n2 13\n0 48\n1 94\n");
    assert_int_equal(fclose(f), 0);
    h.notes[0] = '\0';
    g_read(&h);
    assert_int_equal(val(&h, "gpu.0.xid"), 1);
    assert_int_equal(val(&h, "gpu.1.xid"), 2);
    int n = 0, seen = 0;
    for (char *l = h.notes, *nl; *l; l = nl + 1) {
        nl = strchr(l, '\n');
        assert_non_null(nl);
        *nl = '\0';
        cJSON *e = cJSON_Parse(l);
        assert_non_null(e);
        assert_string_equal(cJSON_GetObjectItem(e, "event")->valuestring, "xid");
        assert_true(cJSON_GetObjectItem(e, "t")->valuedouble > 1e9);
        int g = cJSON_GetObjectItem(e, "gpu")->valueint,
            x = cJSON_GetObjectItem(e, "xid")->valueint;
        seen |= (g == 1 && x == 79) << 0 | (g == 0 && x == 48) << 1 | (g == 1 && x == 94) << 2;
        n++;
        cJSON_Delete(e);
    }
    assert_int_equal(n, 3);
    assert_int_equal(seen, 7);
    /* Each event once. */
    h.notes[0] = '\0';
    g_read(&h);
    assert_int_equal(val(&h, "gpu.1.xid"), 2);
    assert_string_equal(h.notes, "");
    g_close(&h);
    char buf[256] = "";
    f = fopen(log, "r");
    assert_non_null(f);
    size_t r = fread(buf, 1, sizeof buf - 1, f);
    buf[r] = '\0';
    fclose(f);
    assert_string_equal(buf, "create\nregister 0\nregister 1\nfree\n");

    /* No event set: no xid columns, said once in a note. */
    assert_int_equal(g_open(&h, NULL, "gpus=2 eventset=999", 0), 0);
    assert_int_equal(col(&h, "gpu.0.xid"), -1);
    assert_int_equal(col(&h, "gpu.1.xid"), -1);
    assert_true(col(&h, "gpu.1.util") >= 0);
    g_read(&h);
    g_read(&h);
    /* said once, before the notes on GPM (these GPUs have none) */
    static const char *const want[] = {
        "nvml: NVML cannot make an event set (Unknown Error): no XID events (gpu.<n>.xid)\n"
        "nvml: SM activity not measurable on this GPU: GPU 0 (Stub GPU 0): it has no GPM "
        "(before Hopper), and DCGM: no DCGM library (/nonexistent/libdcgm.so.4",
        "); no sm_active, tensor or pipe columns\n"
        "nvml: SM activity not measurable on this GPU: GPU 1 (Stub GPU 1): it has no GPM "
        "(before Hopper), and DCGM: no DCGM library (/nonexistent/libdcgm.so.4"};
    const char *p = strstr(h.notes, want[0]);
    assert_true(p == h.notes);
    assert_non_null(strstr(p, want[1]));
    assert_int_equal(strlen(h.notes) - strlen(strrchr(h.notes, '\n')), strlen(h.notes) - 1);
    g_close(&h);
    /* No GPU can report them: the set is given back at once. */
    unlink(log);
    snprintf(script, sizeof script, "gpus=2 noevents=0 noevents=1 events_log=%s", log);
    assert_int_equal(g_open(&h, NULL, script, 0), 0);
    assert_int_equal(col(&h, "gpu.0.xid"), -1);
    f = fopen(log, "r");
    assert_non_null(f);
    r = fread(buf, 1, sizeof buf - 1, f);
    buf[r] = '\0';
    fclose(f);
    assert_string_equal(buf, "create\nfree\n");
    g_close(&h);
}

/* A GPM column's value this sample; NAN when not recorded. */
static double fval(const gh *h, const char *name)
{
    int c = col(h, name);
    if (c < 0)
        fail_msg("no column %s", name);
    if (!((h->s.present[c / 8] >> (c % 8)) & 1))
        return NAN;
    return h->s.v[c].f;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void assert_near(double v, double want, double tol, const char *what)
{
    if (!(v >= want - tol && v <= want + tol))
        fail_msg("%s = %g, expected %g +- %g", what, v, want, tol);
}

/* A Hopper (GPU 0, GPM) beside an older GPU (GPU 1): GPM columns on GPU 0
 * only, interval means of the scripted levels, a note once for GPU 1. */
static void test_gpm_columns_and_values(void **state)
{
    (void)state;
    char levels[4200], log[4200], script[9000];
    snprintf(levels, sizeof levels, "%s/levels", tmp);
    snprintf(log, sizeof log, "%s/gpm.log", tmp);
    write_file(levels, "");
    unlink(log);
    snprintf(script, sizeof script, "gpus=2 gpm=0 unsupported=0:nvlink levels=%s events_log=%s",
             levels, log);
    gh h;
    assert_int_equal(g_open(&h, NULL, script, 0), 0);
    static const char *const gpm[] = {"sm_active",   "sm_occupancy", "tensor_active", "fp64_active",
                                      "fp32_active", "fp16_active",  "dram_active",   "gpm_pcie_tx",
                                      "gpm_pcie_rx", "nvlink_tx",    "nvlink_rx"};
    char name[64];
    for (size_t m = 0; m < sizeof gpm / sizeof gpm[0]; m++) {
        snprintf(name, sizeof name, "gpu.0.%s", gpm[m]);
        int c = col(&h, name);
        if (c < 0)
            fail_msg("no column %s", name);
        assert_int_equal(h.schema.cols[c].type, PM_F64);
        assert_int_equal(h.schema.cols[c].kind, PM_GAUGE);
        snprintf(name, sizeof name, "gpu.1.%s", gpm[m]);
        assert_int_equal(col(&h, name), -1); /* no zero columns on the old GPU */
    }
    assert_string_equal(h.schema.cols[col(&h, "gpu.0.nvlink_rx")].unit, "MiB/s");
    assert_string_equal(h.schema.cols[col(&h, "gpu.0.sm_active")].unit, "%");
    /* Sooner than 100 ms after open: no GPM sample, nothing recorded. */
    g_read(&h);
    assert_true(isnan(fval(&h, "gpu.0.sm_active")));
    /* Then the interval since the sample taken at open. */
    usleep(100000);
    g_read(&h);
    assert_near(fval(&h, "gpu.0.sm_active"), 20, 0.01, "SM activity since open");
    assert_null(strstr(h.notes, "GPU 0 ("));
    assert_non_null(strstr(h.notes, "nvml: SM activity not measurable on this GPU: GPU 1 (Stub "
                                    "GPU 1): it has no GPM (before Hopper)"));
    usleep(100000);
    g_read(&h);
    assert_near(fval(&h, "gpu.0.sm_active"), 20, 0.01, "SM activity");
    assert_near(fval(&h, "gpu.0.sm_occupancy"), 15, 0.01, "occupancy");
    assert_near(fval(&h, "gpu.0.tensor_active"), 5, 0.01, "tensor");
    assert_near(fval(&h, "gpu.0.fp64_active"), 1, 0.01, "FP64");
    assert_near(fval(&h, "gpu.0.fp32_active"), 10, 0.01, "FP32");
    assert_near(fval(&h, "gpu.0.fp16_active"), 2, 0.01, "FP16");
    assert_near(fval(&h, "gpu.0.dram_active"), 30, 0.01, "DRAM");
    assert_near(fval(&h, "gpu.0.gpm_pcie_tx"), 100, 0.01, "PCIe TX");
    assert_near(fval(&h, "gpu.0.gpm_pcie_rx"), 200, 0.01, "PCIe RX");
    assert_true(isnan(fval(&h, "gpu.0.nvlink_tx"))); /* NOT_SUPPORTED: not recorded */
    /* A level changes when the stub reads it (at this read's utilisation
     * query): the interval after it has the new level. */
    write_file(levels, "sm=0:80 dram=0:150 util=0:99");
    usleep(100000);
    h.notes[0] = '\0';
    g_read(&h);
    /* (the new level from the utilisation query to the GPM sample: a few
     * microseconds, more under valgrind) */
    assert_near(fval(&h, "gpu.0.sm_active"), 35, 15, "SM activity before the change");
    assert_int_equal(val(&h, "gpu.0.util"), 99);
    usleep(100000);
    g_read(&h);
    assert_near(fval(&h, "gpu.0.sm_active"), 80, 0.01, "SM activity after the change");
    assert_true(isnan(fval(&h, "gpu.0.dram_active"))); /* 150 % is not a share: dropped */
    assert_string_equal(h.notes, "");                  /* the GPM note was said once */
    pm_buf j;
    pm_buf_init(&j);
    pm_source_nvml.describe(h.state, &j);
    pm_buf_add(&j, "", 1);
    assert_non_null(strstr(j.data, "\"sm_activity\":\"gpm\""));
    assert_non_null(strstr(j.data, "\"sm_activity\":\"it has no GPM (before Hopper), and DCGM: "));
    pm_buf_free(&j);
    g_close(&h);
    char buf[256] = "";
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    size_t r = fread(buf, 1, sizeof buf - 1, f);
    buf[r] = '\0';
    fclose(f);
    /* two samples for GPU 0, given back (the event set around them) */
    assert_non_null(strstr(buf, "gpm alloc\ngpm alloc\n"));
    assert_non_null(strstr(buf, "gpm free\ngpm free\n"));
}

/* MIG: GPU 0 split into instances 1 and 3, each a device of its own with
 * its memory, its processes and its GPM metrics; no utilisation. */
static void test_mig_instances(void **state)
{
    (void)state;
    char procs[4200], script[9000];
    snprintf(procs, sizeof procs, "%s/procs", tmp);
    write_file(procs, "0 103 1048576 3\n0 200 4096 1\n");
    snprintf(script, sizeof script, "gpus=1 gpm=0 mig=0:2 procs=%s", procs);
    gh h;
    assert_int_equal(g_open(&h, NULL, script, 1), 0);
    assert_true(col(&h, "gpu.0.util") >= 0);
    assert_true(col(&h, "gpu.0.sm_active") >= 0);
    for (int gi = 1; gi <= 3; gi += 2) {
        char name[64];
        snprintf(name, sizeof name, "gpu.0.mig%d.mem_used", gi);
        assert_true(col(&h, name) >= 0);
        snprintf(name, sizeof name, "gpu.0.mig%d.sm_active", gi);
        assert_true(col(&h, name) >= 0);
        snprintf(name, sizeof name, "gpu.0.mig%d.util", gi); /* NOT_SUPPORTED on MIG */
        assert_int_equal(col(&h, name), -1);
        snprintf(name, sizeof name, "gpu.0.mig%d.power", gi);
        assert_int_equal(col(&h, name), -1);
        snprintf(name, sizeof name, "gpu.0.mig%d.xid", gi);
        assert_int_equal(col(&h, name), -1);
    }
    assert_int_equal(col(&h, "gpu.0.mig2.mem_used"), -1);
    g_read(&h);
    usleep(100000);
    g_read(&h);
    assert_int_equal(val(&h, "gpu.0.mig1.mem_used"), 1LL << 28);
    assert_int_equal(val(&h, "gpu.0.mig3.mem_used"), 2LL << 28);
    assert_int_equal(val(&h, "gpu.0.mig3.job_mem"), 1048576);
    assert_int_equal(val(&h, "gpu.0.mig1.job_mem"), 0); /* pid 200 is not the job's */
    assert_int_equal(val(&h, "gpu.0.mig1.procs"), 1);
    assert_near(fval(&h, "gpu.0.sm_active"), 20, 0.01, "the GPU's SM activity");
    assert_near(fval(&h, "gpu.0.mig1.sm_active"), 21, 0.01, "instance 1's");
    assert_near(fval(&h, "gpu.0.mig3.sm_active"), 22, 0.01, "instance 3's");
    pm_buf j;
    pm_buf_init(&j);
    pm_source_nvml.describe(h.state, &j);
    pm_buf_add(&j, "", 1);
    assert_non_null(strstr(j.data, "\"mig_gpu_instance\":3,\"columns\":\"gpu.0.mig3\""));
    pm_buf_free(&j);
    g_close(&h);
}

/* The followed processes' share of the GPU: per pid the mean of its
 * samples, summed over the tree's pids (103 is the tree's, 200 not). */
static void test_process_utilisation(void **state)
{
    (void)state;
    char putil[4200], script[9000];
    snprintf(putil, sizeof putil, "%s/putil", tmp);
    write_file(putil, "0 103 40 10\n0 200 90 50\n0 103 60 20\n0 101 5 1\n1 200 70 7\n");
    snprintf(script, sizeof script, "gpus=2 putil=%s", putil);
    gh h;
    assert_int_equal(g_open(&h, NULL, script, 1), 0);
    g_read(&h);
    assert_int_equal(val(&h, "gpu.0.job_sm_util"), 55); /* 103: 50, 101: 5 */
    assert_int_equal(val(&h, "gpu.0.job_mem_util"), 16);
    assert_int_equal(val(&h, "gpu.1.job_sm_util"), 0); /* only 200 there */
    write_file(putil, "");
    g_read(&h);
    assert_int_equal(val(&h, "gpu.0.job_sm_util"), 0); /* NOT_FOUND: nobody ran */
    g_close(&h);
    /* Not followed, or not supported: no column. */
    assert_int_equal(g_open(&h, NULL, script, 0), 0);
    assert_int_equal(col(&h, "gpu.0.job_sm_util"), -1);
    g_close(&h);
    assert_int_equal(g_open(&h, NULL, "gpus=1", 1), 0);
    assert_int_equal(col(&h, "gpu.0.job_sm_util"), -1);
    g_close(&h);
}

/* A GPM GPU lost mid-run: its GPM columns stop with the others. */
static void test_gpm_lost(void **state)
{
    (void)state;
    gh h;
    assert_int_equal(g_open(&h, NULL, "gpus=2 gpm=0 gpm=1 lost=0:3", 0), 0);
    usleep(100000);
    g_read(&h);
    usleep(100000);
    g_read(&h);
    assert_true(isnan(fval(&h, "gpu.0.sm_active")));
    assert_near(fval(&h, "gpu.1.sm_active"), 30, 0.01, "GPU 1's SM activity");
    usleep(100000);
    g_read(&h);
    assert_true(isnan(fval(&h, "gpu.0.sm_active")));
    assert_int_equal(val(&h, "gpu.0.util"), -1);
    assert_near(fval(&h, "gpu.1.sm_active"), 30, 0.01, "GPU 1 goes on");
    g_close(&h);
}

/* Open with the DCGM stand-in scripted by dscript. */
static int dcgm_open(gh *h, const char *script, const char *dscript, int tree)
{
    setenv("PERFMON_DCGM_LIB", dcgm_path, 1);
    setenv("PERFMON_DCGM_STUB", dscript, 1);
    int rc = g_open(h, NULL, script, tree);
    unsetenv("PERFMON_DCGM_STUB");
    return rc;
}

static void read_log(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t r = fread(buf, 1, cap - 1, f);
    buf[r] = '\0';
    fclose(f);
    unlink(path);
}

/* Older GPUs with DCGM: its profiling fields stand in for GPM, from the
 * node's host engine, else an embedded one; DCGM refusing, or not
 * knowing a GPU, is said in that GPU's note. */
static void test_dcgm(void **state)
{
    (void)state;
    char log[4200], dscript[4400], buf[512];
    snprintf(log, sizeof log, "%s/dcgm.log", tmp);
    unlink(log);
    snprintf(dscript, sizeof dscript, "log=%s blank=1", log);
    gh h;
    assert_int_equal(dcgm_open(&h, "gpus=2 gpm=0", dscript, 0), 0);
    /* GPU 0 has GPM, GPU 1 DCGM: the same columns */
    assert_int_equal(h.schema.cols[col(&h, "gpu.1.sm_active")].type, PM_F64);
    assert_string_equal(h.schema.cols[col(&h, "gpu.1.nvlink_tx")].unit, "MiB/s");
    assert_int_equal(col(&h, "gpu.1.gpm_pcie_tx"), -1);
    usleep(100000);
    g_read(&h);
    assert_near(fval(&h, "gpu.0.sm_active"), 20, 0.01, "GPU 0 by GPM");
    assert_true(isnan(fval(&h, "gpu.1.sm_active"))); /* blank: no value yet */
    assert_string_equal(h.notes, "");
    g_close(&h);
    read_log(log, buf, sizeof buf);
    assert_string_equal(buf, "connect\ngroup\nwatch\nunwatch\ndestroy\ndisconnect\nshutdown\n");

    snprintf(dscript, sizeof dscript, "log=%s gpus=1 hostengine=0 sm=0:0.03 dram=0:0.6", log);
    assert_int_equal(dcgm_open(&h, "gpus=2", dscript, 0), 0);
    g_read(&h);
    assert_near(fval(&h, "gpu.0.sm_active"), 3, 1e-9, "SM activity by DCGM");
    assert_near(fval(&h, "gpu.0.dram_active"), 60, 1e-9, "DRAM");
    assert_near(fval(&h, "gpu.0.fp32_active"), 20, 1e-9, "FP32");
    assert_near(fval(&h, "gpu.0.nvlink_rx"), 20, 1e-9, "NVLink RX MiB/s");
    assert_int_equal(col(&h, "gpu.1.sm_active"), -1); /* DCGM lists one GPU */
    assert_string_equal(h.notes, "nvml: SM activity not measurable on this GPU: GPU 1 (Stub GPU "
                                 "1): it has no GPM (before Hopper), and DCGM: it does not profile "
                                 "this GPU; no sm_active, tensor or pipe columns\n");
    pm_buf j;
    pm_buf_init(&j);
    pm_source_nvml.describe(h.state, &j);
    pm_buf_add(&j, "", 1);
    assert_non_null(strstr(j.data, "\"sm_activity\":\"dcgm\""));
    pm_buf_free(&j);
    g_close(&h);
    read_log(log, buf, sizeof buf);
    assert_string_equal(buf, "embedded\ngroup\nwatch\nunwatch\ndestroy\nstop\nshutdown\n");

    /* Turned off: the library is not even opened. */
    setenv("PERFMON_DCGM", "off", 1);
    assert_int_equal(dcgm_open(&h, "gpus=1", dscript, 0), 0);
    unsetenv("PERFMON_DCGM");
    assert_int_equal(col(&h, "gpu.0.sm_active"), -1);
    g_read(&h);
    assert_non_null(strstr(h.notes, ", and DCGM: turned off (PERFMON_DCGM=off); "));
    g_close(&h);
    assert_int_equal(access(log, F_OK), -1);

    /* Profiling held elsewhere: no columns, the reason in the note. */
    snprintf(dscript, sizeof dscript, "log=%s watch=-33", log);
    assert_int_equal(dcgm_open(&h, "gpus=1", dscript, 0), 0);
    assert_int_equal(col(&h, "gpu.0.sm_active"), -1);
    g_read(&h);
    assert_non_null(strstr(h.notes, "it has no GPM (before Hopper), and DCGM: DCGM cannot watch "
                                    "the profiling fields (The requested operation could not be "
                                    "completed because the affected resource is in use); "));
    g_close(&h);
    read_log(log, buf, sizeof buf);
    assert_string_equal(buf, "connect\ngroup\ndestroy\ndisconnect\nshutdown\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns_and_unsupported),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_tree_processes),
        cmocka_unit_test(test_gpu_lost),
        cmocka_unit_test(test_pcie_in_turn),
        cmocka_unit_test(test_absent),
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_xid_events),
        cmocka_unit_test(test_gpm_columns_and_values),
        cmocka_unit_test(test_mig_instances),
        cmocka_unit_test(test_process_utilisation),
        cmocka_unit_test(test_gpm_lost),
        cmocka_unit_test(test_dcgm),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
