/* SKA perfmon JSON import: layout, ragged lists, integer timestamps,
 * missing groups, and error positions. */
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
#include "perfmon/ska.h"

static void free_list(pm_profile **p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pm_profile_free(p[i]);
    free(p);
}

static double at(const pm_profile *p, const char *col, size_t i)
{
    int c = pm_profile_column(p, col);
    if (c < 0)
        fail_msg("%s: no column %s", p->info.host, col);
    return p->values[c][i];
}

static void test_merged_file(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/ska/cpu_metrics.json", pm_test_fixtures());
    pm_profile **ps = NULL;
    size_t n = 0;
    pm_error err;
    if (pm_ska_read(path, &ps, &n, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(n, 2);
    const pm_profile *b = ps[0], *a = ps[1]; /* host_names order */
    assert_string_equal(b->info.host, "node-b");
    assert_string_equal(a->info.host, "node-a");
    assert_int_equal(b->format, PM_FMT_SKA);
    assert_int_equal(b->n, 5);
    assert_int_equal(a->n, 4);
    /* integer timestamps, seconds */
    assert_true(b->t_wall_ns[1] == 102000000000LL);
    assert_true(a->t_mono_ns[0] == 0);
    /* mapped names and values */
    assert_true(at(b, "cpu.percent", 4) == 90);
    assert_true(at(b, "ib.bytes_sent", 1) == 4194304); /* SKA already x4 */
    assert_true(at(b, "rapl.package-1", 4) == 16000000);
    assert_true(at(b, "proc.swap", 0) == 0); /* numbers as strings */
    assert_true(at(b, "net.all.bytes_sent", 2) == 1048576);
    /* ragged: padded with NaN, and truncated */
    assert_true(isnan(at(b, "proc.cpu_percent", 3)));
    assert_true(at(a, "cpu.percent", 3) == 40);
    assert_int_equal(b->nwarnings, 1);
    assert_int_equal(a->nwarnings, 1);
    assert_non_null(strstr(a->warnings[0], "6 values for 4 time stamps, truncated"));
    /* missing optional groups are absent columns, not zeros */
    assert_int_equal(pm_profile_column(a, "ib.bytes_sent"), -1);
    assert_int_equal(pm_profile_column(a, "rapl.package-0"), -1);
    assert_int_equal(pm_profile_column(b, "proc.vms"), -1); /* empty list */
    free_list(ps, n);
}

/* A host listed without data is a warning; a long name is kept whole. */
static void test_partial_and_long_names(void **state)
{
    (void)state;
    char *name = malloc(10001);
    assert_non_null(name);
    memset(name, 'h', 10000);
    name[10000] = 0;
    size_t cap = 2 * 10000 + 200;
    char *text = malloc(cap);
    assert_non_null(text);
    snprintf(
        text, cap,
        "{\"host_names\": [\"%s\", \"ghost\", \"b\\u00e9\"], \"%s\": {\"time_stamps\": [1, 2]},"
        " \"b\\u00e9\": {\"time_stamps\": [1, 2]}}",
        name, name);
    pm_profile **ps = NULL;
    size_t n = 0;
    pm_error err;
    pm_error_clear(&err);
    if (pm_ska_decode("t.json", text, strlen(text), &ps, &n, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(n, 2);
    assert_string_equal(pm_profile_host(ps[0]), name);
    assert_int_equal(strlen(ps[0]->info.host), sizeof ps[0]->info.host - 1);
    assert_string_equal(pm_profile_host(ps[1]), "b\xc3\xa9");
    assert_null(ps[1]->host_long);
    assert_int_equal(ps[0]->nwarnings, 1);
    assert_non_null(
        strstr(ps[0]->warnings[0], "t.json: host ghost: listed in host_names but has no data"));
    free_list(ps, n);
    free(text);
    free(name);
}

/* A host whose time_stamps holds no time forms no profile (it would be a
 * run of its own dated 1970): a warning names it and the file, and the
 * other hosts are kept; a file where no host has samples is refused. */
static void test_host_without_samples(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t nprof; /* 0: refused */
        const char *msg;
    } rows[] = {
        {"{\"host_names\": [\"a\", \"e\", \"b\"], \"a\": {\"time_stamps\": [1, 2]},"
         " \"e\": {\"time_stamps\": [], \"cpu_percent_sys\": []}, \"b\": {\"time_stamps\": [1, 2]}}",
         2,
         "t.json: host e: no samples (time_stamps holds no time), not analysed (the other hosts are)"},
        {"{\"host_names\": [\"a\", \"e\", \"f\"], \"a\": {\"time_stamps\": [1, 2]},"
         " \"e\": {\"time_stamps\": [\"x\"]}, \"f\": {\"time_stamps\": []}}",
         1, "t.json: 2 hosts have no samples (time_stamps holds no time), the first e"},
        {"{\"host_names\": [\"e\"], \"e\": {\"time_stamps\": []}}", 0,
         "t.json: none of the 1 host in host_names has samples"},
        {"{\"time_stamps\": [], \"cpu_percent_sys\": []}", 0,
         "t.json: host t: no samples (time_stamps holds no time), not analysed"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        pm_profile **ps = NULL;
        size_t n = 0;
        pm_error err;
        pm_error_clear(&err);
        int rc = pm_ska_decode("t.json", rows[r].text, strlen(rows[r].text), &ps, &n, &err);
        if (rows[r].nprof == 0) {
            assert_int_equal(rc, PM_EFORMAT);
            assert_null(ps);
            if (!strstr(err.msg, rows[r].msg))
                fail_msg("row %zu: \"%s\"", r, err.msg);
            continue;
        }
        if (rc != 0)
            fail_msg("row %zu: %s", r, err.msg);
        assert_int_equal(n, rows[r].nprof);
        assert_string_equal(pm_profile_host(ps[0]), "a");
        assert_int_equal(ps[0]->nwarnings, 1);
        if (!strstr(ps[0]->warnings[0], rows[r].msg))
            fail_msg("row %zu: \"%s\"", r, ps[0]->warnings[0]);
        free_list(ps, n);
    }
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int rc;
        const char *msg;
    } rows[] = {
        {"{\n  \"host_names\": [\"x\"],\n  \"x\": {\"time_stamps\": [1, 2,, 3]}\n}", PM_EFORMAT,
         "t.json:3:30: malformed JSON"},
        {"{\"host_names\": [\"x\"], \"x\": {\"time_stamps\": [1]]}", PM_EFORMAT,
         "t.json:1:47: mismatched bracket"},
        {"{\"host_names\": [\"x\"], \"x\": {\"a\": \"unterminated}", PM_EFORMAT,
         "t.json:1:34: unterminated string"},
        {"{\"host_names\": [\"x\"]} trailing", PM_EFORMAT, "t.json:1:23: trailing characters"},
        {"{\"a\": 1}", PM_ENOENT, "not SKA perfmon output"},
        {"{\"host_names\": [\"x\", \"y\"]}", PM_EFORMAT,
         "t.json: none of the 2 hosts in host_names has data"},
        {"{\"host_names\": []}", PM_EFORMAT, "t.json: host_names is empty"},
        {"{\"host_names\": [\"x\", 3]}", PM_EFORMAT,
         "t.json: host_names[1]: expected a non-empty string"},
        {"{\"host_names\": [\"x\"], \"x\": {\"time_stamps\": 5}}", PM_EFORMAT,
         "t.json: host x: time_stamps: missing or not a list"},
        {"{\"host_names\": [\"x\"], \"x\": {\"time_stamps\": [1], \"memory_info\": {\"rss\": 3}}}",
         PM_EFORMAT, "t.json:1:72: host x: memory_info.rss: expected a list"},
        {"{\"host_names\": [\"x\"], \"x\": {\"time_stamps\": [1, 01]}}", PM_EFORMAT,
         "t.json:1:49: malformed JSON: expected ',' or ']'"},
        {"{\"host_names\": [\"x\"], \"x\": {\"time_stamps\": [1.]}}", PM_EFORMAT,
         "t.json:1:47: malformed JSON: expected a digit"},
        {"{\"host_names\": [\"x\"], \"x\": {\"time_stamps\": [nul]}}", PM_EFORMAT,
         "malformed JSON: unexpected value"},
        {"[1, 2]", PM_EFORMAT, "t.json:1:1: expected a JSON object"},
        {"{", PM_EFORMAT, "t.json:1:2: expected a member name"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        pm_profile **ps = NULL;
        size_t n = 0;
        pm_error err;
        pm_error_clear(&err);
        int rc = pm_ska_decode("t.json", rows[r].text, strlen(rows[r].text), &ps, &n, &err);
        if (rc != rows[r].rc || !strstr(err.msg, rows[r].msg))
            fail_msg("row %zu: rc %d, message \"%s\"; want %d, \"%s\"", r, rc, err.msg, rows[r].rc,
                     rows[r].msg);
        assert_null(ps);
    }
}

/* Numbers decode exactly as strtod does (the fast path is exact). */
static void test_numbers(void **state)
{
    (void)state;
    static const char *const nums[] = {"0",
                                       "-0",
                                       "1",
                                       "0.1",
                                       "0.3",
                                       "123.456",
                                       "1e-3",
                                       "2.5E+3",
                                       "123456789012345678",
                                       "9007199254740993",
                                       "1.7976931348623157e308",
                                       "4.9e-324",
                                       "0.000001234",
                                       "99.99999999999999",
                                       "1700000000",
                                       "-17.25",
                                       "3.141592653589793238462643383279"};
    size_t n = sizeof nums / sizeof *nums;
    char text[2048];
    size_t o = (size_t)snprintf(text, sizeof text, "{\"time_stamps\": [");
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "%s%zu", i ? "," : "", i);
    o += (size_t)snprintf(text + o, sizeof text - o, "], \"cpu_percent_sys\": [");
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "%s%s", i ? ", " : "", nums[i]);
    snprintf(text + o, sizeof text - o, "]}");
    pm_profile **ps = NULL;
    size_t np = 0;
    pm_error err;
    if (pm_ska_decode("n.json", text, strlen(text), &ps, &np, &err) != 0)
        fail_msg("%s", err.msg);
    for (size_t i = 0; i < n; i++) {
        double want = strtod(nums[i], NULL), got = at(ps[0], "cpu.percent", i);
        if (memcmp(&want, &got, sizeof got) != 0)
            fail_msg("%s: got %.17g, want %.17g", nums[i], got, want);
    }
    free_list(ps, np);
}

/* Runs of white space of every length from 0 to 40 (spaces, tabs, CR, LF
 * mixed) around every token, up to the last byte of the buffer: the
 * values are those written, and a stray byte after a long run is reported
 * at its own line and column. */
static void ws_run(char *out, size_t *o, size_t len, size_t seed)
{
    static const char ws[] = " \t\r\n   ";
    for (size_t i = 0; i < len; i++)
        out[(*o)++] = ws[(seed * 7 + i * 3) % (sizeof ws - 1)];
}

static void test_whitespace(void **state)
{
    (void)state;
    enum { N = 41 };
    for (size_t trail = 0; trail < 20; trail++) {
        size_t cap = 16384, o = 0, run = 0;
        char *text = malloc(cap);
        assert_non_null(text);
        const char *parts[] = {"{", "\"time_stamps\"", ":", "["};
        for (size_t k = 0; k < 4; k++) {
            ws_run(text, &o, run++ % N, trail);
            memcpy(text + o, parts[k], strlen(parts[k]));
            o += strlen(parts[k]);
        }
        for (size_t i = 0; i < N; i++) {
            ws_run(text, &o, run++ % N, trail);
            o += (size_t)snprintf(text + o, cap - o, "%zu", 100 + i);
            ws_run(text, &o, i, trail);
            text[o++] = i + 1 < N ? ',' : ']';
        }
        o += (size_t)snprintf(text + o, cap - o, ",\"cpu_percent_sys\":[");
        for (size_t i = 0; i < N; i++) {
            ws_run(text, &o, N - 1 - i, trail);
            o += (size_t)snprintf(text + o, cap - o, "%zu.25", i);
            ws_run(text, &o, (i * 5) % N, trail);
            text[o++] = i + 1 < N ? ',' : ']';
        }
        ws_run(text, &o, trail, trail);
        text[o++] = '}';
        ws_run(text, &o, trail, trail + 1); /* the buffer ends in white space */
        char *exact = malloc(o);            /* no NUL after it: a read past the end is caught */
        assert_non_null(exact);
        memcpy(exact, text, o);
        pm_profile **ps = NULL;
        size_t np = 0;
        pm_error err;
        if (pm_ska_decode("w.json", exact, o, &ps, &np, &err) != 0)
            fail_msg("trail %zu: %s", trail, err.msg);
        assert_int_equal(np, 1);
        assert_int_equal(ps[0]->n, N);
        for (size_t i = 0; i < N; i++) {
            assert_true(ps[0]->t_wall_ns[i] == (int64_t)(100 + i) * 1000000000);
            assert_true(at(ps[0], "cpu.percent", i) == (double)i + 0.25);
        }
        free_list(ps, np);
        /* A stray '@' after a run of 33 blanks on line 3. */
        o = (size_t)snprintf(text, cap, "{\"time_stamps\": [1,\n2,\n");
        size_t col = 1;
        for (size_t i = 0; i < 33; i++, col++)
            text[o++] = i % 2 ? ' ' : '\t';
        text[o++] = '@';
        text[o++] = ']';
        text[o++] = '}';
        memcpy(exact, text, o);
        assert_int_not_equal(pm_ska_decode("w.json", exact, o, &ps, &np, &err), 0);
        char want[64];
        snprintf(want, sizeof want, "w.json:3:%zu:", col);
        if (!strstr(err.msg, want))
            fail_msg("error %s, want position %s", err.msg, want);
        free(exact);
        free(text);
    }
}

static void test_per_host_file(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/ska/single-host.json", pm_test_fixtures());
    pm_profile **ps = NULL;
    size_t n = 0;
    pm_error err;
    if (pm_ska_read(path, &ps, &n, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(n, 1);
    assert_string_equal(ps[0]->info.host, "solo");
    assert_int_equal(ps[0]->n, 4);
    free_list(ps, n);
    /* Without a host_name the file name stands in. */
    const char *t = "{\"time_stamps\": [1, 2], \"cpu_percent_sys\": [1, 2]}";
    assert_int_equal(pm_ska_decode("/x/node-7.json", t, strlen(t), &ps, &n, &err), 0);
    assert_string_equal(ps[0]->info.host, "node-7");
    free_list(ps, n);
}

static void test_sniff(void **state)
{
    (void)state;
    assert_true(pm_ska_sniff("  {\"host_names\"", 15));
    assert_false(pm_ska_sniff("hello", 5));
    const char *jl = "{\"format\":\"perfmon-profile\",\"version\":1}\n";
    assert_false(pm_ska_sniff(jl, strlen(jl)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merged_file),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_partial_and_long_names),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_whitespace),
        cmocka_unit_test(test_per_host_file),
        cmocka_unit_test(test_host_without_samples),
        cmocka_unit_test(test_sniff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
