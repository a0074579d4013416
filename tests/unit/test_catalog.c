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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_catalog),
        cmocka_unit_test(test_bad_catalogs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
