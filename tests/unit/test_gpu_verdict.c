/* GPU verdicts (src/analysis/gpu_verdict.c, the "gpu" rules of
 * templates/rules.json) on profiles generated with the profile writer:
 * four GPUs of one node over 60 s, each scripted to earn one verdict at a
 * known time, a MIG instance beside them, and a node whose GPU look-alike
 * columns must not make MIG devices.  Each note is checked for its rule,
 * its GPU, its onset and its figures; the same analysis under --stream
 * gives the same notes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <cmocka.h>

#include "../support/testutil.h"
#include "perfmon/analysis.h"
#include "perfmon/writer.h"

#define NS 60    /* samples, one a second */
#define T0 1.7e9 /* the first sample (s since the epoch) */
#define TURN 30  /* GPU 0 is starved from this sample on */

static char dir[4096], rules[4200];

typedef double (*colfn)(size_t i);
#define CONST(name, v)           \
    static double name(size_t i) \
    {                            \
        (void)i;                 \
        return v;                \
    }
CONST(c50, 50)
CONST(c90, 90)
CONST(c2, 2)
CONST(c70, 70)
CONST(c80, 80)
CONST(c10, 10)
CONST(c5, 5)
CONST(c85, 85)
CONST(c75, 75)
CONST(c20, 20)
CONST(c21, 21)
CONST(mib, 1048576)
/* GPU 0: working, then starved: NVML busier, the SMs mostly waiting */
static double util0(size_t i)
{
    return i < TURN ? 60 : 95;
}
static double sm0(size_t i)
{
    return i < TURN ? 60 : 12;
}
/* the sampler's first sample has no GPM interval: not recorded */
static double sm1(size_t i)
{
    return i == 0 ? NAN : 2;
}

typedef struct colspec {
    const char *name;
    colfn f;
} colspec;

static void write_profile(const char *file, const char *host, const colspec *cs, size_t nc)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    pm_column cols[20];
    memset(cols, 0, sizeof cols);
    assert_true(nc <= 20);
    for (size_t c = 0; c < nc; c++) {
        snprintf(cols[c].name, sizeof cols[c].name, "%s", cs[c].name);
        snprintf(cols[c].unit, sizeof cols[c].unit, "%s",
                 strstr(cs[c].name, "mem_used") ? "B" : "%");
        snprintf(cols[c].group, sizeof cols[c].group, "gpu");
        cols[c].kind = PM_GAUGE;
        cols[c].type = PM_F64;
    }
    pm_profile_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.host, sizeof info.host, "%s", host);
    snprintf(info.job_id, sizeof info.job_id, "gpu-verdict");
    info.start_wall_ns = (int64_t)T0 * 1000000000;
    info.start_mono_ns = 1000000000;
    info.interval_ns = 1000000000;
    pm_writer *w = NULL;
    pm_error err;
    if (pm_writer_open(&w, path, PM_FMT_BIN, &info, cols, nc, NULL, &err) != 0)
        fail_msg("%s", err.msg);
    for (size_t i = 0; i < NS; i++) {
        pm_value v[20];
        uint8_t present[3] = {0, 0, 0};
        for (size_t c = 0; c < nc; c++) {
            v[c].f = cs[c].f(i);
            if (!isnan(v[c].f))
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
    static const colspec n1[] = {
        {"cpu.percent", c50},          {"gpu.0.util", util0},      {"gpu.0.sm_active", sm0},
        {"gpu.1.util", c90},           {"gpu.1.sm_active", sm1},   {"gpu.2.util", c70},
        {"gpu.2.sm_active", c70},      {"gpu.2.dram_active", c80}, {"gpu.2.fp32_active", c10},
        {"gpu.2.tensor_active", c5},   {"gpu.3.util", c90},        {"gpu.3.sm_active", c85},
        {"gpu.3.fp64_active", c75},    {"gpu.3.dram_active", c20}, {"gpu.0.mig1.mem_used", mib},
        {"gpu.0.mig1.sm_active", c21},
    };
    write_profile("n1.pmp", "n1", n1, sizeof n1 / sizeof n1[0]);
    /* look-alikes: no MIG instance; they stay on GPU 5 as gpu.mig... */
    static const colspec n2[] = {
        {"cpu.percent", c50},       {"gpu.5.util", c2},      {"gpu.5.mig.util", c2},
        {"gpu.5.mig1234.util", c2}, {"gpu.5.migx.util", c2},
    };
    write_profile("n2.pmp", "n2", n2, sizeof n2 / sizeof n2[0]);
    /* The shipped gpu rules, without their minimum duration. */
    char path[4300];
    snprintf(path, sizeof path, "%s/../templates/rules.json", pm_test_fixtures());
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    cJSON *root = cJSON_Parse(text), *out = cJSON_CreateArray();
    assert_non_null(root);
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(root, "rules")) {
        if (strcmp(cJSON_GetObjectItem(r, "type")->valuestring, "gpu") != 0)
            continue;
        cJSON *c = cJSON_Duplicate(r, 1);
        cJSON_ReplaceItemInObject(c, "min_duration_s", cJSON_CreateNumber(0));
        cJSON_AddItemToArray(out, c);
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "version", 1);
    cJSON_AddItemToObject(doc, "rules", out);
    char *s = cJSON_Print(doc);
    snprintf(rules, sizeof rules, "%s/gpu_rules.json", dir);
    f = fopen(rules, "w");
    assert_non_null(f);
    fputs(s, f);
    assert_int_equal(fclose(f), 0);
    free(s);
    cJSON_Delete(doc);
    cJSON_Delete(root);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pm_test_rmrf(dir);
    return 0;
}

static pm_analysis *analyse(int stream)
{
    static char cat[4096];
    snprintf(cat, sizeof cat, "%s/../templates/metrics.json", pm_test_fixtures());
    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    o.catalog_path = cat;
    o.rules_path = rules;
    o.stream = stream;
    const char *paths[] = {dir};
    pm_analysis *a = NULL;
    pm_error err;
    if (pm_analysis_run(paths, 1, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    return a;
}

static int host_of(const pm_analysis *a, const char *name)
{
    for (size_t h = 0; h < a->in.nhosts; h++)
        if (strcmp(a->in.hosts[h].name, name) == 0)
            return (int)h;
    return -1;
}

/* The note of rule on host; fails when there is not exactly one. */
static const pm_note *note(const pm_analysis *a, const char *rule, const char *host)
{
    const pm_note *found = NULL;
    int h = host_of(a, host);
    for (size_t k = 0; k < a->nnotes; k++)
        if (strcmp(a->notes[k].rule, rule) == 0 && a->notes[k].host == h) {
            if (found)
                fail_msg("two %s notes on %s", rule, host);
            found = &a->notes[k];
        }
    if (!found)
        fail_msg("no %s note on %s", rule, host);
    return found;
}

static void has(const pm_note *n, const char *text)
{
    if (!strstr(n->message, text))
        fail_msg("\"%s\" not in \"%s\"", text, n->message);
}

static void test_devices(void **state)
{
    (void)state;
    pm_analysis *a = analyse(0);
    static const char *const names[] = {"n1",       "n2",       "gpu-0.mig1.n1", "gpu-0.n1",
                                        "gpu-1.n1", "gpu-2.n1", "gpu-3.n1",      "gpu-5.n2"};
    assert_int_equal(a->in.nhosts, 8);
    for (size_t h = 0; h < 8; h++)
        assert_string_equal(a->in.hosts[h].name, names[h]);
    const pm_host *mig = &a->in.hosts[2], *g5 = &a->in.hosts[7];
    assert_true(mig->gpu);
    assert_true(pm_profile_column(mig->prof, "gpu.sm_active") >= 0);
    assert_true(pm_profile_column(mig->prof, "gpu.mem_used") >= 0);
    assert_true(pm_profile_column(a->in.hosts[3].prof, "gpu.mig1.sm_active") < 0);
    assert_true(pm_profile_column(g5->prof, "gpu.mig.util") >= 0);
    assert_true(pm_profile_column(g5->prof, "gpu.mig1234.util") >= 0);
    assert_true(pm_profile_column(g5->prof, "gpu.migx.util") >= 0);
    /* A MIG instance is a share of its GPU: not a GPU of its own. */
    assert_true(a->nodes[2].gpu_count == 0 && a->nodes[2].gpu_hours == 0);
    assert_true(a->job.gpu_count == 5); /* GPUs 0-3 and 5 */
    pm_analysis_free(a);
}

static void test_verdicts(void **state)
{
    (void)state;
    pm_analysis *a = analyse(0);
    size_t gpu_notes = 0;
    for (size_t k = 0; k < a->nnotes; k++)
        gpu_notes += strncmp(a->notes[k].rule, "gpu_", 4) == 0;
    /* starved, held_idle, memory_bound, compute_bound, one_idle (GPUs 1
     * and 5), unmeasured (GPU 5: utilisation, no SM activity) */
    assert_int_equal(gpu_notes, 7);

    const pm_note *n = note(a, "gpu_starved", "gpu-0.n1");
    assert_true(fabs(n->t - (T0 + TURN)) < 1e-6);
    assert_true(fabs(n->value - 50) < 1e-9); /* 30 of 60 samples */
    has(n, "busy but starved in 50 % of the samples (first at ");
    has(n, ", 0:00:30 into the job): NVML counted the GPU busy (95 % utilisation) while its "
           "SMs were active 12 % of the time");

    n = note(a, "gpu_held_idle", "gpu-1.n1");
    assert_true(fabs(n->t - (T0 + 1)) < 1e-6); /* the first measured sample */
    has(n, "in 100 % of the samples (0:00:01 to 0:00:59 into the job); NVML's utilisation "
           "averaged 90 %, SM activity 2 %");

    n = note(a, "gpu_memory_bound", "gpu-2.n1");
    has(n, "DRAM ran at 80 % of its bandwidth and the busiest pipe (FP32 pipe) was active 10 %");
    n = note(a, "gpu_compute_bound", "gpu-3.n1");
    has(n, "its FP64 pipe was active 75 % of the time and DRAM ran at 20 %");
    n = note(a, "gpu_one_idle", "gpu-1.n1");
    /* GPUs 0 (36 %), 2 and 3 worked: (36 + 70 + 85) / 3 */
    has(n, "its SM activity averaged 2 % while the other 3 GPUs worked (64 % on average)");
    n = note(a, "gpu_one_idle", "gpu-5.n2"); /* judged by its utilisation */
    has(n, "stayed idle over the job (0:00:00 to 0:00:59): its utilisation averaged 2 %");
    n = note(a, "gpu_unmeasured", "gpu-5.n2");
    has(n, "SM activity was not measured on gpu-5.n2 (");
    pm_analysis_free(a);
}

/* --stream computes the verdicts that walk the samples in its per-host
 * step: every note the same as in memory, in the same order, with the
 * same onset and figure (to the bit), and the four of them there. */
static void test_stream(void **state)
{
    (void)state;
    pm_analysis *m = analyse(0), *s = analyse(1);
    assert_int_equal(s->nnotes, m->nnotes);
    size_t walked = 0;
    for (size_t i = 0; i < m->nnotes; i++) {
        const pm_note *x = &m->notes[i], *y = &s->notes[i];
        assert_string_equal(y->rule, x->rule);
        assert_int_equal(y->host, x->host);
        assert_string_equal(y->message, x->message);
        assert_memory_equal(&y->t, &x->t, sizeof x->t);
        assert_memory_equal(&y->value, &x->value, sizeof x->value);
        walked += !strcmp(x->rule, "gpu_held_idle") || !strcmp(x->rule, "gpu_starved") ||
                  !strcmp(x->rule, "gpu_memory_bound") || !strcmp(x->rule, "gpu_compute_bound");
    }
    assert_true(walked >= 4);
    pm_analysis_free(m);
    pm_analysis_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_devices),
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_stream),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
