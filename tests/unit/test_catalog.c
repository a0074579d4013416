/* Catalog parsing: the shipped catalog, and each kind of bad entry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../support/testutil.h"
#include "perfmon/catalog.h"

static void test_shipped_catalog(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/../templates/metrics.json", pm_test_fixtures());
    pm_catalog *c = NULL;
    pm_error err;
    if (pm_catalog_load(path, &c, &err) != 0)
        fail_msg("%s", err.msg);
    assert_true(c->n >= 30);
    int pk = pm_catalog_find(c, "rapl_package");
    assert_true(pk >= 0);
    assert_true(pm_metric_matches(&c->m[pk], "rapl.package-0"));
    assert_true(pm_metric_matches(&c->m[pk], "rapl.package-7"));
    assert_false(pm_metric_matches(&c->m[pk], "rapl.dram-0"));
    assert_int_equal(c->m[pk].comb, PM_COMB_TOTAL);
    assert_true(c->m[pk].rate);
    int no = pm_catalog_find(c, "net_out");
    assert_true(pm_metric_matches(&c->m[no], "net.all.bytes_sent")); /* SKA import */
    assert_int_equal(pm_catalog_find(c, "nope"), -1);
    pm_catalog_free(c);
    pm_catalog_free(NULL);
}

static void test_bad_catalogs(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } rows[] = {
        {"{\"metrics\": [\n  {\"id\": \"x\",, }\n]}", "c.json:2:15: malformed JSON"},
        {"{\"metrics\": 3}", "c.json: metrics: expected an array"},
        {"{\"metrics\": [{\"name\": \"X\", \"unit\": \"1\", \"columns\": [\"a\"]}]}",
         "c.json: metrics[0].id: missing"},
        {"{\"metrics\": [{\"id\": \"a b\", \"name\": \"X\", \"unit\": \"1\", \"columns\": [\"a\"]}]}",
         "metrics[0].id: \"a b\" may hold only"},
        {"{\"metrics\": [{\"id\": \"a\", \"name\": \"X\", \"unit\": \"1\", \"columns\": []}]}",
         "metrics[0].columns: expected 1 to"},
        {"{\"metrics\": [{\"id\": \"a\", \"name\": \"X\", \"unit\": \"1\", \"columns\": [\"a\"], \"comb\": \"Sum\"}]}",
         "metrics[0].comb: \"Sum\" is not Total or Average"},
        {"{\"metrics\": [{\"id\": \"a\", \"name\": \"X\", \"unit\": \"1\", \"columns\": [\"a\"], \"conversion\": 0}]}",
         "metrics[0].conversion: expected a positive number"},
        {"{\"metrics\": [{\"id\": \"a\", \"name\": \"X\", \"unit\": \"1\", \"columns\": [\"a\"], \"rate\": 1}]}",
         "metrics[0].rate: expected true or false"},
        {"{\"metrics\": [{\"id\": \"a\", \"name\": \"X\", \"unit\": \"1\", \"columns\": [\"a\"]},"
         " {\"id\": \"a\", \"name\": \"Y\", \"unit\": \"1\", \"columns\": [\"b\"]}]}",
         "metrics[1].id: \"a\" is used twice"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        pm_catalog *c = NULL;
        pm_error err;
        pm_error_clear(&err);
        int rc = pm_catalog_parse("c.json", rows[r].text, &c, &err);
        if (rc != PM_EFORMAT || !strstr(err.msg, rows[r].msg))
            fail_msg("row %zu: rc %d, \"%s\"; want \"%s\"", r, rc, err.msg, rows[r].msg);
        assert_null(c);
    }
}

/* "derive": "ratio": the numerator and denominator roles, the shipped
 * counter ratios, and malformed ratio entries. */
static void test_ratio(void **state)
{
    (void)state;
    static const char text[] =
        "{\"metrics\":[{\"id\":\"ipc\",\"name\":\"IPC\",\"unit\":\"1\","
        "\"columns\":[\"perf.instructions\"],\"derive\":\"ratio\","
        "\"per\":[\"perf.cycles\",\"perf.ref_*\"],\"rate\":true},"
        "{\"id\":\"plain\",\"name\":\"P\",\"unit\":\"1\",\"columns\":[\"a.*\"],"
        "\"derive\":\"sum\"}]}";
    pm_catalog *c = NULL;
    pm_error err;
    assert_int_equal(pm_catalog_parse("r.json", text, &c, &err), 0);
    assert_int_equal(c->m[0].derive, PM_DERIVE_RATIO);
    assert_int_equal(c->m[0].nper, 2);
    assert_int_equal(pm_metric_role(&c->m[0], "perf.instructions"), PM_ROLE_VALUE);
    assert_int_equal(pm_metric_role(&c->m[0], "perf.cycles"), PM_ROLE_PER);
    assert_int_equal(pm_metric_role(&c->m[0], "perf.ref_cycles"), PM_ROLE_PER);
    assert_int_equal(pm_metric_role(&c->m[0], "perf.branches"), PM_ROLE_NONE);
    assert_true(pm_metric_matches(&c->m[0], "perf.cycles"));
    assert_int_equal(c->m[1].derive, PM_DERIVE_SUM);
    assert_int_equal(c->m[1].nper, 0);
    pm_catalog_free(c);

    char path[4096];
    snprintf(path, sizeof path, "%s/../templates/metrics.json", pm_test_fixtures());
    assert_int_equal(pm_catalog_load(path, &c, &err), 0);
    int ipc = pm_catalog_find(c, "perf_ipc");
    assert_true(ipc >= 0);
    assert_int_equal(c->m[ipc].derive, PM_DERIVE_RATIO);
    assert_int_equal(pm_metric_role(&c->m[ipc], "perf.cycles"), PM_ROLE_PER);
    int miss = pm_catalog_find(c, "perf_cache_miss_ratio");
    assert_true(miss >= 0 && c->m[miss].conversion == 0.01);
    assert_true(pm_catalog_find(c, "perf_flops_dp") >= 0 && pm_catalog_find(c, "perf_mem_bw") >= 0);
    pm_catalog_free(c);

    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"{\"metrics\":[{\"id\":\"r\",\"name\":\"R\",\"unit\":\"1\",\"columns\":[\"a\"],"
         "\"derive\":\"ratio\"}]}",
         "metrics[0].per: expected 1 to 16 patterns"},
        {"{\"metrics\":[{\"id\":\"r\",\"name\":\"R\",\"unit\":\"1\",\"columns\":[\"a\"],"
         "\"per\":[\"b\"]}]}",
         "metrics[0].per: only with"},
        {"{\"metrics\":[{\"id\":\"r\",\"name\":\"R\",\"unit\":\"1\",\"columns\":[\"a\"],"
         "\"derive\":\"product\",\"per\":[\"b\"]}]}",
         "metrics[0].derive: \"product\" is not sum or ratio"},
        {"{\"metrics\":[{\"id\":\"r\",\"name\":\"R\",\"unit\":\"1\",\"columns\":[\"a\"],"
         "\"derive\":\"ratio\",\"per\":[7]}]}",
         "metrics[0].per: expected strings"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        c = NULL;
        assert_int_equal(pm_catalog_parse("bad.json", bad[i].text, &c, &err), PM_EFORMAT);
        if (!strstr(err.msg, bad[i].msg))
            fail_msg("row %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i].msg);
        assert_null(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_catalog),
        cmocka_unit_test(test_bad_catalogs),
        cmocka_unit_test(test_ratio),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
