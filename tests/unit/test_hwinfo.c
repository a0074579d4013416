/* Unit tests of the hardware metadata (src/sampler/hwinfo.c): the JSON is
 * parsed back and checked by meaning, on the fixture trees and on
 * generated /proc/cpuinfo files (microarchitecture and vector tables). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "perfmon/source.h"

#include "../support/testutil.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* pm_hwinfo_json leaves the object open for the sources' descriptions:
 * close it and parse. */
static cJSON *hwinfo(const char *proc, const char *sys, const char *host, pm_sctx *ctx)
{
    pm_error err;
    assert_int_equal(pm_sctx_open(ctx, proc, sys, &err), 0);
    ctx->clk_tck = 100;
    ctx->page_size = 4096;
    char *s = pm_hwinfo_json(ctx, host);
    assert_non_null(s);
    size_t n = strlen(s);
    char *closed = malloc(n + 2);
    assert_non_null(closed);
    memcpy(closed, s, n);
    closed[n] = '}';
    closed[n + 1] = '\0';
    cJSON *j = cJSON_Parse(closed);
    if (!j)
        fail_msg("hwinfo JSON does not parse: %s", closed);
    free(closed);
    free(s);
    pm_sctx_close(ctx);
    return j;
}

static cJSON *hwinfo_node(const char *node, const char *host)
{
    char proc[4200], sys[4200];
    snprintf(proc, sizeof proc, "%s/nodes/%s/proc", pm_test_fixtures(), node);
    snprintf(sys, sizeof sys, "%s/nodes/%s/sys", pm_test_fixtures(), node);
    pm_sctx ctx;
    return hwinfo(proc, sys, host, &ctx);
}

static cJSON *get(const cJSON *o, const char *path)
{
    /* "cpu.sockets" style lookups */
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *cur = o;
    for (char *save = NULL, *t = strtok_r(buf, ".", &save); t; t = strtok_r(NULL, ".", &save)) {
        cur = cJSON_GetObjectItemCaseSensitive(cur, t);
        if (!cur)
            fail_msg("no member %s", path);
    }
    return (cJSON *)(uintptr_t)cur;
}

static double num(const cJSON *o, const char *path)
{
    cJSON *v = get(o, path);
    if (!cJSON_IsNumber(v))
        fail_msg("%s is not a number", path);
    return v->valuedouble;
}

static const char *str(const cJSON *o, const char *path)
{
    cJSON *v = get(o, path);
    if (!cJSON_IsString(v))
        fail_msg("%s is not a string", path);
    return v->valuestring;
}

static void test_hwinfo_two_socket_skylake(void **state)
{
    (void)state;
    cJSON *j = hwinfo_node("hpc-ib-rapl", "cn0421");
    assert_string_equal(str(j, "hostname"), "cn0421");
    assert_string_equal(str(j, "kernel"), "4.18.0-513.5.1.el8_9.x86_64");
    assert_string_equal(str(j, "cpu.vendor"), "GenuineIntel");
    assert_string_equal(str(j, "cpu.model_name"), "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz");
    assert_int_equal((int)num(j, "cpu.family"), 6);
    assert_int_equal((int)num(j, "cpu.model"), 0x55);
    assert_int_equal((int)num(j, "cpu.stepping"), 4);
    assert_string_equal(str(j, "cpu.microarchitecture"), "skylake-sp");
    assert_string_equal(str(j, "cpu.vector"), "avx512");
    /* 2 sockets x 2 cores x 2 hardware threads */
    assert_int_equal((int)num(j, "cpu.sockets"), 2);
    assert_int_equal((int)num(j, "cpu.cores"), 4);
    assert_int_equal((int)num(j, "cpu.threads"), 8);
    assert_true(num(j, "cpu.mhz") == 2600.123); /* the highest "cpu MHz" */
    assert_int_equal((int)num(j, "cpu.max_mhz"), 3700);
    cJSON *caches = get(j, "cpu.caches");
    assert_true(cJSON_IsArray(caches));
    static const struct {
        int level;
        const char *type, *size;
    } want[] = {{1, "Data", "32K"},
                {1, "Instruction", "32K"},
                {2, "Unified", "1024K"},
                {3, "Unified", "22528K"}};
    assert_int_equal(cJSON_GetArraySize(caches), (int)N(want));
    for (size_t i = 0; i < N(want); i++) {
        cJSON *c = cJSON_GetArrayItem(caches, (int)i);
        assert_int_equal((int)num(c, "level"), want[i].level);
        assert_string_equal(str(c, "type"), want[i].type);
        assert_string_equal(str(c, "size"), want[i].size);
    }
    assert_true(num(j, "memory.total_bytes") == 196608000.0 * 1024);
    /* node0 and node1; "online" and "possible" are not nodes */
    assert_int_equal((int)num(j, "numa_nodes"), 2);
    assert_int_equal((int)num(j, "clk_tck"), 100);
    assert_int_equal((int)num(j, "page_size"), 4096);
    assert_true(cJSON_IsString(get(j, "os")));
    cJSON_Delete(j);
}

static void test_hwinfo_minimal_vm(void **state)
{
    (void)state;
    cJSON *j = hwinfo_node("minimal", "vm-1");
    assert_string_equal(str(j, "kernel"), "3.10.0-1160.el7.x86_64");
    assert_string_equal(str(j, "cpu.vendor"), "AuthenticAMD");
    assert_string_equal(str(j, "cpu.microarchitecture"), "zen2"); /* family 23 model 49 */
    assert_string_equal(str(j, "cpu.vector"), "avx2");
    /* No "physical id"/"core id" lines (a VM): one socket, a core per
     * thread. */
    assert_int_equal((int)num(j, "cpu.sockets"), 1);
    assert_int_equal((int)num(j, "cpu.threads"), 2);
    assert_int_equal((int)num(j, "cpu.cores"), 2);
    assert_null(cJSON_GetObjectItem(get(j, "cpu"), "max_mhz"));
    assert_int_equal(cJSON_GetArraySize(get(j, "cpu.caches")), 0);
    assert_int_equal((int)num(j, "numa_nodes"), 0);
    assert_true(num(j, "memory.total_bytes") == 2048000.0 * 1024);
    cJSON_Delete(j);
}

static void test_hwinfo_hostile_hostname(void **state)
{
    (void)state;
    static const char *const hosts[] = {"a\"b\\c", "tab\there",
                                        "bad\xff"
                                        "utf8",
                                        ""};
    for (size_t i = 0; i < N(hosts); i++) {
        cJSON *j = hwinfo_node("minimal", hosts[i]);
        const char *h = str(j, "hostname");
        if (i == 2)
            assert_string_equal(h, "bad\xef\xbf\xbd"
                                   "utf8");
        else
            assert_string_equal(h, hosts[i]);
        cJSON_Delete(j);
    }
}

/* Write tmp/proc/cpuinfo with one processor block. */
static void write_cpuinfo(const char *dir, const char *vendor, int family, int model,
                          const char *flags)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/proc", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/proc/cpuinfo", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "processor\t: 0\nvendor_id\t: %s\ncpu family\t: %d\nmodel\t\t: %d\n"
            "model name\t: Some CPU\nstepping\t: 1\ncpu MHz\t\t: 1000.000\n"
            "flags\t\t: %s\n\n",
            vendor, family, model, flags);
    assert_int_equal(fclose(f), 0);
}

static void test_hwinfo_microarch_table(void **state)
{
    (void)state;
    static const struct {
        const char *vendor;
        int family, model;
        const char *arch;
    } rows[] = {
        {"GenuineIntel", 6, 0x55, "skylake-sp"},
        {"GenuineIntel", 6, 0x3F, "haswell"},
        {"GenuineIntel", 6, 0x4F, "broadwell"},
        {"GenuineIntel", 6, 0x6A, "icelake-sp"},
        {"GenuineIntel", 6, 0x8F, "sapphirerapids"},
        {"GenuineIntel", 6, 0xCF, "emeraldrapids"},
        {"GenuineIntel", 6, 0xAD, "graniterapids"},
        {"GenuineIntel", 6, 0x2D, "sandybridge-ep"},
        {"GenuineIntel", 6, 0x99, "unknown"},  /* not in the table */
        {"GenuineIntel", 15, 0x55, "unknown"}, /* right model, wrong family */
        {"AuthenticAMD", 0x17, 0x01, "zen"},
        {"AuthenticAMD", 0x17, 0x31, "zen2"},
        {"AuthenticAMD", 0x19, 0x01, "zen3"},
        {"AuthenticAMD", 0x19, 0x11, "zen4"}, /* Genoa */
        {"AuthenticAMD", 0x19, 0xA0, "zen4"}, /* Bergamo */
        {"AuthenticAMD", 0x19, 0x21, "zen3"},
        {"AuthenticAMD", 0x1A, 0x02, "zen5"},
        {"AuthenticAMD", 6, 0x55, "unknown"}, /* Intel model number on AMD */
        {"HygonGenuine", 0x18, 0x01, "unknown"},
        {"", 0, 0, "unknown"},
    };
    char *tmp = pm_test_tmpdir();
    assert_non_null(tmp);
    char *dir = strdup(tmp);
    char proc[4200];
    snprintf(proc, sizeof proc, "%s/proc", dir);
    for (size_t i = 0; i < N(rows); i++) {
        write_cpuinfo(dir, rows[i].vendor, rows[i].family, rows[i].model, "fpu sse sse2");
        pm_sctx ctx;
        cJSON *j = hwinfo(proc, "/nonexistent/sys", "h", &ctx);
        const char *got = str(j, "cpu.microarchitecture");
        if (strcmp(got, rows[i].arch) != 0)
            fail_msg("%s family %#x model %#x: %s, expected %s", rows[i].vendor, rows[i].family,
                     rows[i].model, got, rows[i].arch);
        assert_string_equal(str(j, "cpu.vector"), "sse");
        cJSON_Delete(j);
    }
    pm_test_rmrf(dir);
    free(dir);
}

static void test_hwinfo_vector_table(void **state)
{
    (void)state;
    static const struct {
        const char *flags;
        const char *vector;
    } rows[] = {
        {"fpu sse sse2 avx avx2 avx512f avx512cd", "avx512"},
        {"fpu sse sse2 avx f16c avx2 bmi2", "avx2"},
        {"fpu sse sse2 avx f16c", "avx"},
        {"fpu sse sse2", "sse"},
        {"fpu sse sse2 xavx", "sse"}, /* a name that merely contains avx */
        {"fpu sse sse2 avx", "avx"},  /* last flag of the line */
        {"avx fpu sse", "avx"},       /* first */
        {"fpu avx2", "avx2"},
        {"fpu avx512f", "avx512"},
        {"fpu avx512fp16 avx2", "avx2"}, /* avx512f only as a prefix */
        {"fpu avx_vnni sse", "sse"},
        /* far into a long line, as on real CPUs (~1,500 characters) */
        {"fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts "
         "acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art "
         "arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf pni "
         "pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid "
         "dca sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand avx2 avx512f",
         "avx512"},
    };
    char *tmp = pm_test_tmpdir();
    assert_non_null(tmp);
    char *dir = strdup(tmp);
    char proc[4200];
    snprintf(proc, sizeof proc, "%s/proc", dir);
    for (size_t i = 0; i < N(rows); i++) {
        write_cpuinfo(dir, "GenuineIntel", 6, 0x55, rows[i].flags);
        pm_sctx ctx;
        cJSON *j = hwinfo(proc, "/nonexistent/sys", "h", &ctx);
        const char *got = str(j, "cpu.vector");
        if (strcmp(got, rows[i].vector) != 0)
            fail_msg("flags \"%s\": vector %s, expected %s", rows[i].flags, got, rows[i].vector);
        cJSON_Delete(j);
    }
    pm_test_rmrf(dir);
    free(dir);
}

static void test_hwinfo_no_cpuinfo(void **state)
{
    (void)state;
    /* An empty /proc: the metadata is still valid JSON, with defaults. */
    char *tmp = pm_test_tmpdir();
    assert_non_null(tmp);
    char *dir = strdup(tmp);
    pm_sctx ctx;
    cJSON *j = hwinfo(dir, "/nonexistent/sys", "h", &ctx);
    assert_string_equal(str(j, "cpu.vendor"), "");
    assert_string_equal(str(j, "cpu.microarchitecture"), "unknown");
    assert_int_equal((int)num(j, "cpu.sockets"), 1);
    assert_int_equal((int)num(j, "cpu.threads"), 0);
    assert_null(cJSON_GetObjectItem(j, "memory"));
    assert_true(cJSON_IsString(get(j, "kernel"))); /* falls back to uname */
    cJSON_Delete(j);
    pm_test_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hwinfo_two_socket_skylake),
        cmocka_unit_test(test_hwinfo_minimal_vm),
        cmocka_unit_test(test_hwinfo_hostile_hostname),
        cmocka_unit_test(test_hwinfo_microarch_table),
        cmocka_unit_test(test_hwinfo_vector_table),
        cmocka_unit_test(test_hwinfo_no_cpuinfo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
