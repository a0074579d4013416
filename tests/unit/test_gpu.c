/* GPUs in the analysis (src/input/gpu.c and the GPU figures of
 * summary.c): the gpu.<n>.* columns of a node's profile become hosts
 * gpu-<n>.<node>, merged across files like any host, aggregated over all
 * GPUs, with GPU hours, utilisation and energy per GPU and for the job. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../support/testutil.h"
#include "perfmon/analysis.h"
#include "perfmon/writer.h"

static void close_to(double a, double b, int line)
{
    if (!(fabs(a - b) <= 1e-9 * (1 + fabs(b))))
        fail_msg("line %d: got %.17g, want %.17g", line, a, b);
}
#define CLOSE(a, b) close_to((a), (b), __LINE__)

static char dir[4096];

/* Column c of sample i (t = i seconds): NaN = not recorded. */
typedef double (*colfn)(size_t i);
static double cpu50(size_t i)
{
    (void)i;
    return 50;
}
static double util20(size_t i)
{
    (void)i;
    return 20;
}
static double util40(size_t i)
{
    (void)i;
    return 40;
}
static double util80(size_t i)
{
    (void)i;
    return 80;
}
static double util0(size_t i)
{
    (void)i;
    return 0;
}
static double mw100(size_t i)
{
    (void)i;
    return 100000;
}
static double mw200(size_t i)
{
    (void)i;
    return 200000;
}
static double mw50(size_t i)
{
    (void)i;
    return 50000;
}
static double mj100(size_t i)
{
    return 100000.0 * (double)i + 7e6;
} /* 100 W since long ago */
static double mem2g(size_t i)
{
    return (double)(i + 1) * (1 << 20);
}

typedef struct colspec {
    const char *name, *unit;
    int kind;
    colfn f;
} colspec;

static void write_profile(const char *file, const char *host, const colspec *cs, size_t nc,
                          size_t from, size_t to)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    pm_column cols[16];
    memset(cols, 0, sizeof cols);
    assert_true(nc <= 16);
    for (size_t c = 0; c < nc; c++) {
        snprintf(cols[c].name, sizeof cols[c].name, "%s", cs[c].name);
        snprintf(cols[c].unit, sizeof cols[c].unit, "%s", cs[c].unit);
        snprintf(cols[c].group, sizeof cols[c].group, "%.8s", cs[c].name);
        cols[c].kind = (uint8_t)cs[c].kind;
        cols[c].type = PM_F64;
    }
    pm_profile_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.host, sizeof info.host, "%s", host);
    snprintf(info.job_id, sizeof info.job_id, "gpu-test");
    info.start_wall_ns = (int64_t)1700000000 * 1000000000;
    info.start_mono_ns = 1000000000;
    info.interval_ns = 1000000000;
    pm_writer *w = NULL;
    pm_error err;
    if (pm_writer_open(&w, path, PM_FMT_BIN, &info, cols, nc, NULL, &err) != 0)
        fail_msg("%s", err.msg);
    for (size_t i = from; i < to; i++) {
        pm_value v[16];
        uint8_t present[2] = {0, 0};
        for (size_t c = 0; c < nc; c++) {
            v[c].f = cs[c].f(i);
            present[c / 8] |= (uint8_t)(1u << (c % 8));
        }
        int64_t off = (int64_t)i * 1000000000;
        assert_int_equal(pm_writer_sample(w, info.start_mono_ns + off, info.start_wall_ns + off, v,
                                          present, &err),
                         0);
    }
    assert_int_equal(pm_writer_close(w, &err), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s", pm_test_tmpdir());
    /* node-a: GPUs 0 (energy counter), 1 (power only), 10 (utilisation
     * only), in two files; columns that only look like GPU ones stay. */
    static const colspec a[] = {
        {"cpu.percent", "%", PM_GAUGE, cpu50},     {"gpu.0.util", "%", PM_GAUGE, util20},
        {"gpu.1.util", "%", PM_GAUGE, util80},     {"gpu.0.power", "mW", PM_GAUGE, mw100},
        {"gpu.0.energy", "mJ", PM_COUNTER, mj100}, {"gpu.1.power", "mW", PM_GAUGE, mw200},
        {"gpu.10.util", "%", PM_GAUGE, util0},     {"gpu.0.mem_used", "B", PM_GAUGE, mem2g},
        {"gpu.x.util", "%", PM_GAUGE, util0},      {"gpu.0", "%", PM_GAUGE, util0},
        {"gpux.0.util", "%", PM_GAUGE, util0},     {"gpu.12345.util", "%", PM_GAUGE, util0},
    };
    write_profile("a1.pmp", "node-a", a, sizeof a / sizeof a[0], 0, 5);
    write_profile("a2.pmp", "node-a", a, sizeof a / sizeof a[0], 5, 11);
    static const colspec b[] = {
        {"cpu.percent", "%", PM_GAUGE, cpu50},
        {"gpu.0.util", "%", PM_GAUGE, util40},
        {"gpu.0.power", "mW", PM_GAUGE, mw50},
    };
    write_profile("b.pmp", "node-b", b, sizeof b / sizeof b[0], 0, 11);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pm_test_rmrf(dir);
    return 0;
}

static pm_analysis *analyse(void)
{
    static char cat[4096];
    snprintf(cat, sizeof cat, "%s/../templates/metrics.json", pm_test_fixtures());
    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    o.catalog_path = cat;
    const char *paths[] = {dir};
    pm_analysis *a = NULL;
    pm_error err;
    if (pm_analysis_run(paths, 1, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    return a;
}

static int column(const pm_host *h, const char *name)
{
    return pm_profile_column(h->prof, name);
}

static void test_gpu_hosts(void **state)
{
    (void)state;
    pm_analysis *a = analyse();
    static const char *const names[] = {"node-a",       "node-b",       "gpu-0.node-a",
                                        "gpu-0.node-b", "gpu-1.node-a", "gpu-10.node-a"};
    assert_int_equal(a->in.nhosts, 6);
    for (size_t h = 0; h < 6; h++) {
        assert_string_equal(a->in.hosts[h].name, names[h]);
        assert_int_equal(a->in.hosts[h].gpu, h >= 2);
        assert_int_equal(a->in.hosts[h].n, 11); /* node-a's two files merged, GPUs too */
    }
    assert_int_equal(a->in.hosts[2].nfiles, 2);
    /* The node keeps its own columns and the look-alikes, in order. */
    const pm_host *na = &a->in.hosts[0];
    static const char *const kept[] = {"cpu.percent", "gpu.x.util", "gpu.0", "gpux.0.util",
                                       "gpu.12345.util"};
    assert_int_equal(na->prof->ncols, 5);
    for (size_t c = 0; c < 5; c++)
        assert_string_equal(na->prof->cols[c].name, kept[c]);
    /* Each GPU has its metrics under gpu.<metric>, kinds and units kept. */
    const pm_host *g0 = &a->in.hosts[2];
    assert_int_equal(g0->prof->ncols, 4);
    int e = column(g0, "gpu.energy");
    assert_true(e >= 0);
    assert_int_equal(g0->prof->cols[e].kind, PM_COUNTER);
    assert_string_equal(g0->prof->cols[e].unit, "mJ");
    assert_true(column(g0, "gpu.util") >= 0 && column(g0, "cpu.percent") < 0);
    assert_int_equal(a->in.hosts[5].prof->ncols, 1);
    /* The GPU series and their all-GPU aggregate; no GPU value on a node. */
    const pm_metric_result *u = &a->metrics[pm_analysis_metric(a, "gpu_util")];
    assert_int_equal(u->nhosts_with_data, 4);
    assert_null(u->host[0]);
    assert_null(u->host[1]);
    CLOSE(u->host[4]->st.mean, 80);
    CLOSE(u->agg.st.mean, (20 + 40 + 80 + 0) / 4.0);
    assert_int_equal(u->agg.min_count, 4);
    const pm_metric_result *p = &a->metrics[pm_analysis_metric(a, "gpu_power")];
    CLOSE(p->agg.st.mean, 100 + 200 + 50); /* W, Total */
    const pm_metric_result *cpu = &a->metrics[pm_analysis_metric(a, "cpu_usage")];
    assert_int_equal(cpu->nhosts_with_data, 2);
    pm_analysis_free(a);
}

static void test_gpu_figures(void **state)
{
    (void)state;
    pm_analysis *a = analyse();
    const pm_node_summary *g0 = &a->nodes[2], *g1 = &a->nodes[4], *gb = &a->nodes[3],
                          *g10 = &a->nodes[5];
    CLOSE(g0->wall_time_s, 10);
    CLOSE(g0->gpu_count, 1);
    CLOSE(g0->gpu_hours, 10.0 / 3600);
    CLOSE(g0->gpu_avg_utilization_pct, 20);
    CLOSE(g0->gpu_energy_j, 1000); /* the counter's increase */
    CLOSE(g0->gpu_avg_power_w, 100);
    CLOSE(g0->gpu_peak_mem_bytes, 11 << 20);
    CLOSE(g1->gpu_energy_j, 2000); /* no counter: power over time */
    CLOSE(gb->gpu_energy_j, 500);
    assert_true(isnan(g10->gpu_energy_j)); /* neither */
    CLOSE(g10->gpu_avg_utilization_pct, 0);
    assert_true(isnan(g0->samples)); /* the node's, not counted again */
    assert_true(isnan(g0->cpu_avg_utilization_pct));
    assert_true(isnan(a->nodes[0].gpu_count));
    CLOSE(a->nodes[0].cpu_avg_utilization_pct, 50);
    const pm_node_summary *j = &a->job;
    CLOSE(j->gpu_count, 4);
    CLOSE(j->gpu_hours, 40.0 / 3600);
    CLOSE(j->gpu_avg_utilization_pct, 35);
    CLOSE(j->gpu_energy_j, 3500);
    CLOSE(j->gpu_avg_power_w, 350);
    CLOSE(j->samples, 22);
    CLOSE(j->cpu_avg_utilization_pct, 50);
    pm_analysis_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_hosts),
        cmocka_unit_test(test_gpu_figures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
