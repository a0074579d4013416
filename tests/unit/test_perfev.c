/* Unit tests of the counter event tables (src/sampler/perfev.c): every
 * table in templates/events parses; the CPUs of fixtures/cpus pick the
 * right one; raw configs are encoded as the PMU expects; malformed tables
 * are refused with file:line; derived counters match hand-computed sums. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/hwinfo.h"
#include "perfmon/perfev.h"

#include "../support/testutil.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char *events_dir(void)
{
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s/../templates/events", pm_test_fixtures());
    return dir;
}

static int find_ev(const pm_pev_table *t, const char *name)
{
    for (size_t i = 0; i < t->nev; i++)
        if (strcmp(t->ev[i].name, name) == 0)
            return (int)i;
    return -1;
}

static const pm_pev_derived *find_d(const pm_pev_table *t, const char *id)
{
    for (size_t i = 0; i < t->nd; i++)
        if (strcmp(t->d[i].id, id) == 0)
            return &t->d[i];
    return NULL;
}

/* Each fixture CPU and the table it must get ("" = none). */
static void test_select_by_cpu(void **state)
{
    (void)state;
    static const struct {
        const char *dir, *arch;
    } rows[] = {
        {"skylake-sp", "skylake-sp"},
        {"cascadelake", "skylake-sp"},
        {"icelake-sp", "icelake-sp"},
        {"sapphirerapids", "sapphirerapids"},
        {"emeraldrapids", "sapphirerapids"},
        {"zen2-rome", "zen2"},
        {"zen3-milan", "zen3"},
        {"zen4-genoa", "zen4"},
        {"zen5-turin", ""},
        {"haswell", ""},
    };
    for (size_t i = 0; i < N(rows); i++) {
        char proc[4096];
        snprintf(proc, sizeof proc, "%s/cpus/%s", pm_test_fixtures(), rows[i].dir);
        pm_sctx ctx;
        pm_error err;
        assert_int_equal(pm_sctx_open(&ctx, proc, "/nonexistent-perfmon", &err), 0);
        pm_cpu_ident id;
        assert_int_equal(pm_hwinfo_cpu_ident(&ctx, &id), 0);
        pm_sctx_close(&ctx);
        pm_pev_table *t = malloc(sizeof *t);
        assert_non_null(t);
        int rc = pm_pev_select(events_dir(), id.vendor, id.family, id.model, t, &err);
        if (!*rows[i].arch) {
            assert_int_equal(rc, PM_ENOENT);
            assert_non_null(strstr(err.msg, "no event table"));
            assert_non_null(strstr(err.msg, id.vendor));
        } else {
            if (rc)
                fail_msg("%s: %s", rows[i].dir, err.msg);
            assert_string_equal(t->arch, rows[i].arch);
            /* The hardware metadata names the same generation. */
            assert_non_null(strstr(id.microarch, rows[i].arch[0] == 'z' ? "zen" : ""));
        }
        free(t);
    }
}

/* What each shipped table provides, and the vendor codes behind it. */
static void test_tables_content(void **state)
{
    (void)state;
    pm_pev_table *t = malloc(sizeof *t);
    assert_non_null(t);
    pm_error err;
    /* Skylake-SP: FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE is event 0xC7
     * umask 0x10; offcore response keeps its extra register. */
    assert_int_equal(pm_pev_select(events_dir(), "GenuineIntel", 6, 0x55, t, &err), 0);
    int i = find_ev(t, "FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE");
    assert_true(i >= 0);
    assert_int_equal(t->ev[i].config, 0x10c7);
    i = find_ev(t, "OFFCORE_RESPONSE_0.L3_MISS_LOCAL_DRAM");
    assert_true(i >= 0);
    assert_int_equal(t->ev[i].config, 0x01b7);
    assert_int_equal(t->ev[i].config1, 0x3f840085b7ull);
    static const char *const intel[] = {"flops_sp", "flops_dp", "flops",
                                        "l2_bytes", "l3_bytes", "mem_bytes"};
    for (size_t k = 0; k < N(intel); k++)
        assert_non_null(find_d(t, intel[k]));
    /* No group needs more than the 4 general counters a hyperthread has. */
    for (int g = 0; g < t->ngroups; g++) {
        int n = 0;
        for (size_t e = 0; e < t->nev; e++)
            n += t->ev[e].group == g;
        assert_true(n >= 1 && n <= 4);
    }
    /* Sapphire Rapids moved L2_LINES_IN.ALL to 0x25. */
    assert_int_equal(pm_pev_select(events_dir(), "GenuineIntel", 6, 0x8f, t, &err), 0);
    assert_int_equal(t->ev[find_ev(t, "L2_LINES_IN.ALL")].config, 0x1f25);
    /* Zen 2 splits FLOPs by precision, Zen 3/4 do not. */
    assert_int_equal(pm_pev_select(events_dir(), "AuthenticAMD", 0x17, 0x31, t, &err), 0);
    assert_non_null(find_d(t, "flops_dp"));
    assert_int_equal(t->ev[find_ev(t, "FP_RET_SSE_AVX_OPS.DP_ALL")].config, 0xf003);
    assert_int_equal(pm_pev_select(events_dir(), "AuthenticAMD", 0x19, 0x11, t, &err), 0);
    assert_string_equal(t->arch, "zen4");
    assert_null(find_d(t, "flops_dp"));
    assert_non_null(find_d(t, "flops"));
    assert_non_null(find_d(t, "mem_bytes"));
    /* Boundaries of the Zen 4 model ranges. */
    assert_true(pm_pev_matches(t, "AuthenticAMD", 0x19, 0x10));
    assert_true(pm_pev_matches(t, "AuthenticAMD", 0x19, 0x1f));
    assert_false(pm_pev_matches(t, "AuthenticAMD", 0x19, 0x20));
    assert_false(pm_pev_matches(t, "AuthenticAMD", 0x17, 0x11));
    assert_false(pm_pev_matches(t, "GenuineIntel", 0x19, 0x11));
    free(t);
}

static const char good[] = "# comment line\n"
                           "arch  test-arch\n"
                           "title A test   table  \n"
                           "match GenuineIntel 6 0x55,0x6a-0x6c\n"
                           "match AuthenticAMD 0x19 17\n"
                           "event A event=0xc7 umask=0x10        # trailing comment\n"
                           "event B\tevent=0x1c0 umask=0x2 cmask=1 edge inv\n"
                           "group\n"
                           "group\n"
                           "event C event=0xb7 umask=0x01 config1=0x3f840085b7\n"
                           "derive x FLOP 2*A + B + 0.5*C\n"
                           "derive y B 64*C\n";

static void test_parse_encoding(void **state)
{
    (void)state;
    pm_pev_table t;
    pm_error err;
    assert_int_equal(pm_pev_parse("good.events", good, &t, &err), 0);
    assert_string_equal(t.arch, "test-arch");
    assert_string_equal(t.title, "A test   table");
    assert_int_equal(t.nm, 2);
    assert_int_equal(t.m[0].nr, 2);
    assert_int_equal(t.m[0].lo[1], 0x6a);
    assert_int_equal(t.m[0].hi[1], 0x6c);
    assert_true(pm_pev_matches(&t, "GenuineIntel", 6, 0x6b));
    assert_false(pm_pev_matches(&t, "GenuineIntel", 6, 0x6d));
    assert_true(pm_pev_matches(&t, "AuthenticAMD", 25, 17));
    assert_int_equal(t.nev, 3);
    assert_int_equal(t.ev[0].config, 0x10c7);
    /* AMD extended event bits 8-11 go to config bits 32-35; cmask 24-31,
     * edge 18, inv 23. */
    assert_int_equal(t.ev[1].config,
                     (1ull << 32) | 0xc0 | 0x2 << 8 | 1u << 24 | 1u << 18 | 1u << 23);
    assert_int_equal(t.ev[0].group, 0);
    assert_int_equal(t.ev[1].group, 0);
    assert_int_equal(t.ev[2].group, 1); /* two group lines in a row make one group */
    assert_int_equal(t.ngroups, 2);
    assert_int_equal(t.ev[2].config1, 0x3f840085b7ull);
    assert_int_equal(t.nd, 2);
    /* Hand-computed: x = 2*10 + 3 + 0.5*100 = 73; y = 64*100 = 6400. */
    double counts[3] = {10, 3, 100};
    assert_true(fabs(pm_pev_derive(&t.d[0], counts) - 73.0) < 1e-12);
    assert_true(fabs(pm_pev_derive(&t.d[1], counts) - 6400.0) < 1e-12);
    counts[1] = NAN; /* an event not counted: no partial sum */
    assert_true(isnan(pm_pev_derive(&t.d[0], counts)));
    assert_false(isnan(pm_pev_derive(&t.d[1], counts)));
}

/* FLOP weights of the real Skylake-SP table: scalar 1, 128-bit 2/4,
 * 256-bit 4/8, 512-bit 8/16 (double/single). */
static void test_flop_weights(void **state)
{
    (void)state;
    pm_pev_table *t = malloc(sizeof *t);
    assert_non_null(t);
    pm_error err;
    assert_int_equal(pm_pev_select(events_dir(), "GenuineIntel", 6, 0x55, t, &err), 0);
    double c[PM_PEV_MAX_EVENTS];
    for (size_t i = 0; i < PM_PEV_MAX_EVENTS; i++)
        c[i] = 0;
    c[find_ev(t, "FP_ARITH_INST_RETIRED.SCALAR_DOUBLE")] = 10;
    c[find_ev(t, "FP_ARITH_INST_RETIRED.128B_PACKED_DOUBLE")] = 20;
    c[find_ev(t, "FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE")] = 30;
    c[find_ev(t, "FP_ARITH_INST_RETIRED.512B_PACKED_DOUBLE")] = 40;
    c[find_ev(t, "FP_ARITH_INST_RETIRED.SCALAR_SINGLE")] = 1;
    c[find_ev(t, "FP_ARITH_INST_RETIRED.128B_PACKED_SINGLE")] = 2;
    c[find_ev(t, "FP_ARITH_INST_RETIRED.256B_PACKED_SINGLE")] = 3;
    c[find_ev(t, "FP_ARITH_INST_RETIRED.512B_PACKED_SINGLE")] = 4;
    c[find_ev(t, "L1D.REPLACEMENT")] = 1000;
    c[find_ev(t, "L2_LINES_IN.ALL")] = 100;
    c[find_ev(t, "L2_LINES_OUT.NON_SILENT")] = 50;
    c[find_ev(t, "OFFCORE_RESPONSE_0.L3_MISS_LOCAL_DRAM")] = 7;
    c[find_ev(t, "OFFCORE_RESPONSE_1.L3_MISS_REMOTE_DRAM")] = 3;
    /* 10 + 2*20 + 4*30 + 8*40 = 490; 1 + 4*2 + 8*3 + 16*4 = 97. */
    assert_true(pm_pev_derive(find_d(t, "flops_dp"), c) == 490.0);
    assert_true(pm_pev_derive(find_d(t, "flops_sp"), c) == 97.0);
    assert_true(pm_pev_derive(find_d(t, "flops"), c) == 587.0);
    assert_true(pm_pev_derive(find_d(t, "l2_bytes"), c) == 64000.0);
    assert_true(pm_pev_derive(find_d(t, "l3_bytes"), c) == 9600.0);
    assert_true(pm_pev_derive(find_d(t, "mem_bytes"), c) == 640.0);
    free(t);
}

static void test_parse_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } rows[] = {
        {"", "no arch line"},
        {"arch a\nevent A event=1\n", "no match line"},
        {"arch a\nmatch GenuineIntel 6 1\n", "no events"},
        {"arch a\narch b\n", "t:2: arch given twice"},
        {"arch a b\n", "t:1: arch"},
        {"arch a\nmatch GenuineIntel 6\n", "t:2: match: expected"},
        {"arch a\nmatch GenuineIntel six 1\n", "family \"six\""},
        {"arch a\nmatch GenuineIntel 6 9-3\n", "model range \"9\""},
        {"arch a\nmatch GenuineIntel 6 0x10000\n", "bad model"},
        {"arch a\nmatch Genuine\"Intel 6 1\n", "vendor string"},
        {"arch a\nfrobnicate\n", "t:2: unknown directive \"frobnicate\""},
        {"arch a\nevent A umask=1 event=1 speed=3\n", "unknown field \"speed\""},
        {"arch a\nevent A umask=1\n", "event=CODE missing"},
        {"arch a\nevent A event=0x1000\n", "event=0x1000"},
        {"arch a\nevent A event=1 umask=256\n", "umask=256"},
        {"arch a\nevent A event=1 umask=-1\n", "umask=-1"},
        {"arch a\nevent A event=1 fast\n", "unknown flag \"fast\""},
        {"arch a\nevent A event=1\nevent A event=2\n", "t:3: event: \"A\" is defined twice"},
        {"arch a\nevent A/b event=1\n", "not a valid event name"},
        {"arch a\nevent A event=1\nderive x F 2*B\n", "event \"B\" is not defined"},
        {"arch a\nevent A event=1\nderive x F 0*A\n", "weight \"0\""},
        {"arch a\nevent A event=1\nderive x F nan*A\n", "weight \"nan\""},
        {"arch a\nevent A event=1\nderive x F A A\n", "expected '+'"},
        {"arch a\nevent A event=1\nderive x F A +\n", "ends without a term"},
        {"arch a\nevent A event=1\nderive x F A\nderive x F A\n",
         "t:4: derive: \"x\" is defined twice"},
        {"arch a\ngroup 2\n", "group takes no arguments"},
        {"arch a\x01\n", "control character"},
    };
    for (size_t i = 0; i < N(rows); i++) {
        pm_pev_table t;
        pm_error err;
        pm_error_clear(&err);
        int rc = pm_pev_parse("t", rows[i].text, &t, &err);
        if (rc != PM_EFORMAT || !strstr(err.msg, rows[i].msg))
            fail_msg("row %zu: rc %d, \"%s\" lacks \"%s\"", i, rc, err.msg, rows[i].msg);
    }
    /* A line longer than the limit, and a table file that is malformed:
     * selection names the file. */
    char *long_line = malloc(5000);
    assert_non_null(long_line);
    memset(long_line, 'x', 4999);
    long_line[4999] = '\0';
    pm_pev_table t;
    pm_error err;
    assert_int_equal(pm_pev_parse("t", long_line, &t, &err), PM_EFORMAT);
    assert_non_null(strstr(err.msg, "t:1: line longer"));
    free(long_line);
    char *dir = pm_test_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/a.events", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("arch a\nmatch GenuineIntel 6 1\nevent A event=zz\n", f);
    fclose(f);
    assert_int_equal(pm_pev_select(dir, "GenuineIntel", 6, 1, &t, &err), PM_EFORMAT);
    assert_non_null(strstr(err.msg, "a.events:3: event: event=zz"));
    assert_int_equal(pm_pev_select("/nonexistent-perfmon", "GenuineIntel", 6, 1, &t, &err),
                     PM_ENOENT);
    pm_test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select_by_cpu),  cmocka_unit_test(test_tables_content),
        cmocka_unit_test(test_parse_encoding), cmocka_unit_test(test_flop_weights),
        cmocka_unit_test(test_parse_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
