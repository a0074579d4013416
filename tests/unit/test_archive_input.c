/* perfmon-archive's input readers: TensorFlow TestResults and perfmon
 * statistics fixtures (fixtures/archive/), the kind told from content,
 * hostile documents (NaN, huge numbers, deep nesting, NUL bytes, bad
 * UTF-8, duplicate and over-long names, SQL metacharacters), --since. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/archive.h"
#include "perfmon/fileio.h"
#include "testutil.h"

static char *fixture(const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/archive/%s", pm_test_fixtures(), name);
    char *text = NULL;
    pm_error err;
    if (pm_read_whole(path, 1 << 20, &text, len, &err) != 0)
        fail_msg("%s", err.msg);
    return text;
}

static const pm_arch_entry *find(const pm_arch_run *r, const char *name)
{
    for (size_t i = 0; i < r->nentries; i++)
        if (strcmp(r->entries[i].name, name) == 0)
            return &r->entries[i];
    return NULL;
}

static void test_tf_fixture(void **state)
{
    (void)state;
    size_t len;
    char *text = fixture("tf-results.json", &len);
    pm_arch_run *r = NULL;
    pm_error err;
    assert_int_equal(pm_arch_parse_tf("tf.json", text, len, &r, &err), 0);
    assert_string_equal(r->test, "//tensorflow/core/kernels:matmul_op_test");
    assert_int_equal(r->kind, PM_ARCH_TENSORFLOW);
    assert_true(r->start_us == 1700000000LL * 1000000);
    assert_int_equal(r->nentries, 3);
    const pm_arch_entry *e = find(r, "BM_MatMul/1024");
    assert_non_null(e);
    assert_true(e->timing == 0.0123);
    /* iterations and extras are kept in the entry's info */
    assert_non_null(strstr(e->info, "\"iters\":\"100\""));
    assert_non_null(strstr(e->info, "\"flops\""));
    e = find(r, "BM_Conv2D/3x3"); /* wallTime given as a string */
    assert_non_null(e);
    assert_true(e->timing == 0.0456);
    assert_non_null(find(r, "BM_Reduce"));
    /* the whole file, verbatim, is the test's info */
    assert_int_equal(strlen(r->info), len);
    assert_memory_equal(r->info, text, len);
    assert_true(strlen(r->digest) > 9);
    pm_arch_run_free(r);
    free(text);

    text = fixture("tf-no-entries.json", &len);
    assert_int_equal(pm_arch_parse("e.json", text, len, NULL, &r, &err), 0);
    assert_int_equal(r->nentries, 0);
    assert_true(r->start_us == 1700003600LL * 1000000);
    pm_arch_run_free(r);
    free(text);
}

static void test_stats_fixture(void **state)
{
    (void)state;
    size_t len;
    char *text = fixture("perfmon-stats.json", &len);
    pm_arch_run *r = NULL;
    pm_error err;
    /* detected from content */
    assert_int_equal(pm_arch_parse("s.json", text, len, "nightly", &r, &err), 0);
    assert_int_equal(r->kind, PM_ARCH_PERFMON_STATS);
    assert_string_equal(r->test, "nightly");
    assert_true(r->start_us == 1699999999700000LL);
    const pm_arch_entry *e = find(r, "wall_time_s");
    assert_non_null(e);
    assert_true(fabs(e->timing - 39.700000047683716) < 1e-12);
    assert_non_null(find(r, "energy_j"));
    assert_null(find(r, "energy_kwh")); /* null: not recorded */
    assert_null(find(r, "hosts"));      /* layout, not a figure */
    assert_null(find(r, "start"));
    e = find(r, "phase:solve");
    assert_non_null(e);
    assert_true(e->timing == 61.5);
    assert_non_null(strstr(e->info, "\"count\":8"));
    e = find(r, "phase:checkpoint");
    assert_non_null(e);
    assert_true(e->timing == 2.25);
    assert_null(find(r, "phase:idle")); /* null total */
    /* the 32 job figures that have a value, and two phases */
    assert_int_equal(r->nentries, 32 + 2);
    pm_arch_run_free(r);

    /* without --test and without a job id: refused, saying what to do */
    assert_int_equal(pm_arch_parse_stats("s.json", text, len, NULL, &r, &err), PM_EFORMAT);
    assert_null(r);
    assert_non_null(strstr(err.msg, "s.json: "));
    assert_non_null(strstr(err.msg, "--test"));
    free(text);

    static const char with_id[] =
        "{\"perfmon_analyze\":{\"schema\":1},\"job\":{\"job_id\":\"4242\",\"start\":1700000000,"
        "\"wall_time_s\":12}}";
    assert_int_equal(pm_arch_parse("j.json", with_id, strlen(with_id), NULL, &r, &err), 0);
    assert_string_equal(r->test, "4242");
    assert_int_equal(r->nentries, 1);
    pm_arch_run_free(r);
}

static char *deep(size_t depth)
{
    char *s = malloc(2 * depth + 64);
    size_t n = (size_t)sprintf(s, "{\"name\":\"d\",\"startTime\":1,\"x\":");
    for (size_t i = 0; i < depth; i++)
        s[n++] = '[';
    for (size_t i = 0; i < depth; i++)
        s[n++] = ']';
    s[n++] = '}';
    s[n] = 0;
    return s;
}

static void test_bad_documents(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *want; /* in the message */
    } rows[] = {
        {"", "b.json:1:1: not valid JSON"},
        {"{\"name\":\"t\",\n \"startTime\": }", "b.json:2:15: not valid JSON"},
        {"[1,2]", "not a JSON object"},
        {"{\"x\":1}", "neither TensorFlow TestResults"},
        {"{\"name\":\"t\"}", "\"startTime\" is missing"},
        {"{\"name\":\"t\",\"startTime\":-5}", "\"startTime\""},
        {"{\"name\":\"t\",\"startTime\":\"99999999999999999999\"}", "\"startTime\""},
        {"{\"name\":\"t\",\"startTime\":1e400}", "\"startTime\""},
        {"{\"name\":\"\",\"startTime\":1}", "\"name\""},
        {"{\"name\":7,\"startTime\":1}", "\"name\""},
        {"{\"name\":\"t\",\"startTime\":1,\"entries\":[]}", "\"entries\" is not an object"},
        {"{\"name\":\"t\",\"startTime\":1,\"entries\":{\"entry\":{}}}", "is not an array"},
        {"{\"name\":\"t\",\"startTime\":1,\"entries\":{\"entry\":[3]}}",
         "entry[0] is not an object"},
        {"{\"name\":\"t\",\"startTime\":1,\"entries\":{\"entry\":[{\"name\":\"a\"}]}}",
         "entry \"a\": \"wallTime\" is missing or not a finite number"},
        {"{\"name\":\"t\",\"startTime\":1,\"entries\":{\"entry\":[{\"name\":\"a\",\"wallTime\":"
         "\"NaN\"}]}}",
         "\"wallTime\" is missing or not a finite number"},
        {"{\"name\":\"t\",\"startTime\":1,\"entries\":{\"entry\":[{\"name\":\"a\",\"wallTime\":"
         "1e999}]}}",
         "not a finite number"},
        {"{\"name\":\"t\",\"startTime\":1,\"entries\":{\"entry\":[{\"name\":\"a\",\"wallTime\":1},"
         "{\"name\":\"a\",\"wallTime\":2}]}}",
         "entry \"a\" appears twice"},
        {"{\"perfmon_analyze\":{\"schema\":2},\"job\":{\"start\":1}}", "schema 2 is not supported"},
        {"{\"perfmon_analyze\":{\"schema\":1}}", "\"job\" is missing"},
        {"{\"perfmon_analyze\":{\"schema\":1},\"job\":{\"start\":null}}", "\"job.start\""},
        {"{\"name\":\"t\xff\",\"startTime\":1}", "not valid UTF-8"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        pm_arch_run *r = (pm_arch_run *)1;
        pm_error err;
        pm_error_clear(&err);
        int rc = pm_arch_parse("b.json", rows[i].text, strlen(rows[i].text), "t", &r, &err);
        if (rc == 0 || r != NULL || !strstr(err.msg, rows[i].want))
            fail_msg("row %zu: rc %d, message \"%s\", want \"%s\"", i, rc, err.msg, rows[i].want);
        if (strncmp(err.msg, "b.json", 6) != 0)
            fail_msg("row %zu: the file is not named: %s", i, err.msg);
    }

    /* A NUL byte inside the document. */
    static const char nul[] = "{\"name\":\"t\",\"startTime\":1}\0{}";
    pm_arch_run *r = NULL;
    pm_error err;
    assert_int_equal(pm_arch_parse("n.json", nul, sizeof nul - 1, NULL, &r, &err), PM_EFORMAT);
    assert_non_null(strstr(err.msg, "NUL byte"));

    /* Nesting far beyond cJSON's limit: an error, not a crash. */
    char *d = deep(100000);
    assert_int_equal(pm_arch_parse("deep.json", d, strlen(d), NULL, &r, &err), PM_EFORMAT);
    assert_non_null(strstr(err.msg, "deep.json:1:"));
    free(d);
    /* and a depth cJSON accepts is kept verbatim */
    d = deep(200);
    assert_int_equal(pm_arch_parse("deep.json", d, strlen(d), NULL, &r, &err), 0);
    assert_string_equal(r->info, d);
    pm_arch_run_free(r);
    free(d);

    /* Names longer than PM_ARCH_NAME_MAX. */
    char *big = malloc(PM_ARCH_NAME_MAX + 100);
    int n = sprintf(big, "{\"name\":\"");
    memset(big + n, 'x', PM_ARCH_NAME_MAX + 1);
    strcpy(big + n + PM_ARCH_NAME_MAX + 1, "\",\"startTime\":1}");
    assert_int_equal(pm_arch_parse("long.json", big, strlen(big), NULL, &r, &err), PM_EFORMAT);
    assert_non_null(strstr(err.msg, "longer than"));
    free(big);
}

static void test_hostile_names_kept(void **state)
{
    (void)state;
    static const char doc[] =
        "{\"name\":\"x'); DROP TABLE test; --\",\"startTime\":\"1700000000\","
        "\"entries\":{\"entry\":[{\"name\":\"\\\"q\\\" 'a' ; DELETE FROM entry; %s %n\","
        "\"wallTime\":1e300},{\"name\":\"\xc3\xa9t\xc3\xa9\",\"wallTime\":-0.0}]}}";
    pm_arch_run *r = NULL;
    pm_error err;
    assert_int_equal(pm_arch_parse("h.json", doc, strlen(doc), NULL, &r, &err), 0);
    assert_string_equal(r->test, "x'); DROP TABLE test; --");
    assert_non_null(find(r, "\"q\" 'a' ; DELETE FROM entry; %s %n"));
    assert_true(find(r, "\"q\" 'a' ; DELETE FROM entry; %s %n")->timing == 1e300);
    assert_non_null(find(r, "\xc3\xa9t\xc3\xa9"));
    pm_arch_run_free(r);
}

static void test_dates(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int ok;
        int64_t us;
    } rows[] = {
        {"0", 1, 0},
        {"1700000000", 1, 1700000000LL * 1000000},
        {"2023-11-14", 1, 1699920000LL * 1000000},
        {"2023-11-14T22:13:20Z", 1, 1700000000LL * 1000000},
        {"2023-11-14T22:13:20", 1, 1700000000LL * 1000000},
        {"2023-11-14 22:13", 0, 0},
        {"yesterday", 0, 0},
        {"-5", 0, 0},
        {"", 0, 0},
        {"99999999999999", 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        int64_t us = -1;
        int rc = pm_arch_parse_date(rows[i].s, &us);
        if ((rc == 0) != rows[i].ok || (rows[i].ok && us != rows[i].us))
            fail_msg("row %zu (%s): rc %d, %lld", i, rows[i].s, rc, (long long)us);
    }
    char out[40];
    pm_arch_format_time(1700000000LL * 1000000, out, sizeof out);
    assert_string_equal(out, "2023-11-14T22:13:20Z");
    pm_arch_format_time(1699999999700000LL, out, sizeof out);
    assert_string_equal(out, "2023-11-14T22:13:19.700000Z");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tf_fixture),    cmocka_unit_test(test_stats_fixture),
        cmocka_unit_test(test_bad_documents), cmocka_unit_test(test_hostile_names_kept),
        cmocka_unit_test(test_dates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
