/* Scanner binary profiles: the generator's files read back (phases per
 * node and worker, totals per kind and key as Scanner's statistics()),
 * the master file, content sniffing, the committed fixtures, and damaged
 * files: a corrupted count, every truncation, a string without its NUL,
 * non-printable names, trailing bytes, each giving "file: offset: what". */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/fileio.h"
#include "perfmon/phase.h"
#include "perfmon/scanner.h"
#include "scanner_gen.h"
#include "testutil.h"

#define T0 1700000005000000000LL /* inside the perfmon fixtures' run */

/* cmocka compares floats in single precision: epoch seconds need doubles. */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static size_t encode(const pm_sgen_file *f, unsigned char **buf)
{
    size_t n = pm_sgen_encode(f, NULL, 0);
    *buf = malloc(n + 1);
    assert_non_null(*buf);
    assert_int_equal(pm_sgen_encode(f, *buf, n), n);
    return n;
}

static const pm_phase *find(const pm_phase_set *s, const char *host, const char *track,
                            const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].host, host) == 0 && strcmp(s->v[i].track, track) == 0 &&
            strcmp(s->v[i].name, name) == 0)
            return &s->v[i];
    return NULL;
}

/* A total (kind, key, time or counter); fails the test when absent. */
static int64_t total(const pm_phase_set *s, const char *kind, const char *name, int is_time)
{
    for (size_t i = 0; i < s->ncounters; i++)
        if (strcmp(s->counters[i].kind, kind) == 0 && strcmp(s->counters[i].name, name) == 0 &&
            s->counters[i].is_time == is_time)
            return s->counters[i].value;
    fail_msg("no total %s/%s", kind, name);
    return 0;
}

static void test_worker_file(void **state)
{
    (void)state;
    pm_sgen_file f;
    pm_sgen_example(0, T0, &f);
    unsigned char *buf;
    size_t n = encode(&f, &buf);
    assert_true(pm_scanner_sniff(buf, n));
    pm_phase_set s = {0};
    pm_error err;
    size_t nw = 0;
    assert_int_equal(pm_scanner_decode("p0.bin", buf, n, &s, &nw, &err), 0);
    assert_int_equal(nw, 1 + 1 + 6 + 1);
    assert_int_equal(s.n, 2 + 3 + 6 + 1);
    const pm_phase *p = find(&s, "node 0", "load[0]", "idle");
    assert_non_null(p);
    assert_near(p->t0, 1700000005.0 + 1.5, 1e-6);
    assert_near(p->t1, 1700000005.0 + 5.0, 1e-6);
    assert_non_null(find(&s, "node 0", "process_job[0]", "task"));
    assert_non_null(find(&s, "node 0", "eval[1]/pre", "decode"));
    assert_non_null(find(&s, "node 0", "eval[0]/post", "encode"));
    assert_non_null(find(&s, "node 0", "save[0]", "io"));
    /* Totals per kind and key: load io is 1.0 s + 0.8 s. */
    assert_int_equal(total(&s, "load", "io", 1), 1800000000LL);
    assert_int_equal(total(&s, "save", "io", 1), 1000000000LL);
    assert_int_equal(total(&s, "eval", "decode", 1), 2000000000LL);
    assert_int_equal(total(&s, "load", "io_read", 0), 1048576);
    assert_int_equal(total(&s, "eval", "rows", 0), 1000);
    assert_int_equal(s.scanner_files, 1);
    assert_near(s.scanner_total_s, 10.0, 1e-9);
    pm_phase_set_free(&s);
    free(buf);
}

static void test_master_and_nodes(void **state)
{
    (void)state;
    pm_phase_set s = {0};
    pm_error err;
    for (int node = -1; node <= 1; node++) {
        pm_sgen_file f;
        pm_sgen_example(node, T0, &f);
        unsigned char *buf;
        size_t n = encode(&f, &buf);
        assert_true(pm_scanner_sniff(buf, n));
        assert_int_equal(pm_scanner_decode("p.bin", buf, n, &s, NULL, &err), 0);
        free(buf);
    }
    const pm_phase *m = find(&s, "master", "master[0]", "schedule");
    assert_non_null(m);
    assert_near(m->t1 - m->t0, 9.8, 1e-6);
    const pm_phase *p = find(&s, "node 1", "load[0]", "idle");
    assert_non_null(p);
    assert_near(p->t0, 1700000005.0 + 0.2 + 1.5, 1e-6);
    /* Summed over both nodes, as Scanner's statistics(). */
    assert_int_equal(total(&s, "load", "io", 1), 3600000000LL);
    assert_int_equal(total(&s, "load", "idle", 1), 7000000000LL);
    assert_int_equal(total(&s, "process_job", "task", 1), 18000000000LL);
    assert_int_equal(total(&s, "load", "io_read", 0), 2097152);
    assert_int_equal(total(&s, "load", "rows", 0), 2000);
    assert_int_equal(total(&s, "eval", "rows", 0), 2000);
    assert_int_equal(total(&s, "master", "jobs", 0), 1);
    assert_int_equal(s.scanner_files, 3);
    assert_near(s.scanner_total_s, 10.2, 1e-6);
    pm_phase_set_free(&s);
}

static void test_sniff(void **state)
{
    (void)state;
    static const char bin[] = "\x89PMPROF\n\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
    static const char ev[] = "{\"perfmon_event\":1,\"host\":\"a\",\"pid\":1,\"wall_ns\":\"1\"}\n";
    unsigned char zero[64] = {0};
    assert_false(pm_scanner_sniff(bin, sizeof bin - 1));
    assert_false(pm_scanner_sniff(ev, sizeof ev - 1));
    assert_false(pm_scanner_sniff(zero, sizeof zero)); /* empty worker type */
    assert_false(pm_scanner_sniff(zero, 10));
    pm_sgen_file f;
    pm_sgen_example(0, T0, &f);
    unsigned char *buf;
    size_t n = encode(&f, &buf);
    assert_true(pm_scanner_sniff(buf, 36));
    assert_false(pm_scanner_sniff(buf, 35)); /* the type's NUL not yet seen */
    buf[7] ^= 0x80;                          /* a negative start */
    assert_false(pm_scanner_sniff(buf, n));
    free(buf);
}

/* The fixtures are the generator's example job; PM_REGEN=1 rewrites them. */
static void test_fixtures(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int node;
    } files[] = {{"profile_0.bin", 0}, {"profile_1.bin", 1}, {"profile_master.bin", -1}};
    for (size_t i = 0; i < 3; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/scanner/%s", pm_test_fixtures(), files[i].name);
        pm_sgen_file f;
        pm_sgen_example(files[i].node, T0, &f);
        const char *regen = getenv("PM_REGEN");
        if (regen && strcmp(regen, "1") == 0)
            assert_int_equal(pm_sgen_write(path, &f, (size_t)-1), 0);
        unsigned char *want;
        size_t n = encode(&f, &want);
        char *got = NULL;
        size_t len = 0;
        pm_error err;
        assert_int_equal(pm_read_whole(path, 1 << 20, &got, &len, &err), 0);
        assert_int_equal(len, n);
        assert_memory_equal(got, want, n);
        pm_phase_set s = {0};
        assert_int_equal(pm_scanner_read(path, &s, NULL, &err), 0);
        assert_true(s.n > 0);
        pm_phase_set_free(&s);
        free(got);
        free(want);
    }
}

/* Decode bytes expected to fail; check the code, the message and how many
 * workers were kept. */
static void expect_bad(const unsigned char *buf, size_t n, int code, const char *msg, size_t kept)
{
    pm_phase_set s = {0};
    pm_error err;
    size_t nw = 99;
    int rc = pm_scanner_decode("bad.bin", buf, n, &s, &nw, &err);
    if (rc != code || !strstr(err.msg, msg) || strncmp(err.msg, "bad.bin: offset ", 16) != 0)
        fail_msg("rc %d (want %d), message \"%s\" (want \"%s\")", rc, code, err.msg, msg);
    assert_int_equal(nw, kept);
    pm_phase_set_free(&s);
}

static void test_corrupt_counts(void **state)
{
    (void)state;
    pm_sgen_file f;
    pm_sgen_example(0, T0, &f);
    pm_sgen_worker load = *f.load, first = *f.first;
    f.load = &load;
    f.first = &first;
    unsigned char *buf;
    size_t n;
    static const struct {
        int64_t count;
        const char *msg;
    } rows[] = {
        {2000000000LL, "counter count 2000000000 is corrupt (allowed 0 to 1000000)"},
        {1000001, "counter count 1000001 is corrupt"},
        {5000, "counter count 5000 needs at least 45000 bytes"},
        {-1, "counter count -1 is corrupt"},
        {INT64_MIN, "counter count -9223372036854775808 is corrupt"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        load.bad_counter_count = rows[i].count;
        n = encode(&f, &buf);
        expect_bad(buf, n, rows[i].count == 5000 ? PM_ETRUNC : PM_EFORMAT, rows[i].msg,
                   1); /* process_job kept */
        free(buf);
    }
    load.bad_counter_count = 0;
    /* The same in the first worker: nothing kept. */
    first.bad_counter_count = 1LL << 40;
    n = encode(&f, &buf);
    expect_bad(buf, n, PM_EFORMAT, "counter count 1099511627776 is corrupt", 0);
    free(buf);
    first.bad_counter_count = 0;
    first.bad_key_count = 257;
    n = encode(&f, &buf);
    expect_bad(buf, n, PM_EFORMAT, "key count 257 is corrupt", 0);
    free(buf);
    first.bad_key_count = -5;
    n = encode(&f, &buf);
    expect_bad(buf, n, PM_EFORMAT, "key count -5 is corrupt", 0);
    free(buf);
    /* One key fewer than written: the second name is read as the count. */
    first.bad_key_count = 1;
    n = encode(&f, &buf);
    expect_bad(buf, n, PM_EFORMAT, "offset 60: interval count 564051267772788 is corrupt", 0);
    free(buf);
    /* An interval naming an index the dictionary lacks (the first
     * interval's index byte: 16 + 8 + "process_job" + "" + 8 + 8 + the two
     * entries + 8 = 74), or a dictionary giving an index twice. */
    first.bad_key_count = 0;
    n = encode(&f, &buf);
    buf[74] = 9;
    expect_bad(buf, n, PM_EFORMAT, "offset 74: interval key index 9 is not in the dictionary", 0);
    buf[74] = 0;
    buf[65] = 0; /* "task" gets index 0, as "setup" has */
    expect_bad(buf, n, PM_EFORMAT, "offset 65: key index 0 given twice", 0);
    free(buf);
}

static void test_truncated(void **state)
{
    (void)state;
    pm_sgen_file f;
    pm_sgen_example(0, T0, &f);
    unsigned char *buf;
    size_t n = encode(&f, &buf);
    /* Every prefix fails with an offset, and keeps only whole workers. */
    size_t prev_kept = 0;
    for (size_t len = 0; len < n; len++) {
        pm_phase_set s = {0};
        pm_error err;
        size_t nw = 0;
        int rc = pm_scanner_decode("cut.bin", buf, len, &s, &nw, &err);
        if (rc != PM_ETRUNC || strncmp(err.msg, "cut.bin: offset ", 16) != 0)
            fail_msg("length %zu of %zu: rc %d, \"%s\"", len, n, rc, err.msg);
        assert_true(nw >= prev_kept);
        prev_kept = nw;
        pm_phase_set_free(&s);
    }
    assert_int_equal(prev_kept, 8); /* all but the save worker */
    /* Cut inside the first worker's type string (after "proc"). */
    expect_bad(buf, 28, PM_ETRUNC,
               "offset 24: worker type has no terminating NUL before the end of the file", 0);
    expect_bad(buf, 20, PM_ETRUNC, "offset 16: truncated: worker node needs 8 bytes, 4 left", 0);
    /* One byte too many. */
    unsigned char *more = malloc(n + 1);
    memcpy(more, buf, n);
    more[n] = 7;
    expect_bad(more, n + 1, PM_EFORMAT, "offset ", 9);
    expect_bad(more, n + 1, PM_EFORMAT, ": 1 bytes after the last worker", 9);
    free(more);
    free(buf);
}

static void test_bad_strings_and_times(void **state)
{
    (void)state;
    pm_sgen_file f;
    pm_sgen_example(0, T0, &f);
    pm_sgen_worker first = *f.first;
    f.first = &first;
    unsigned char *buf;
    size_t n;
    /* A key name of 2000 bytes: longer than any Scanner writes. */
    char longkey[2001];
    memset(longkey, 'k', 2000);
    longkey[2000] = 0;
    pm_sgen_interval iv[1] = {{longkey, 0, 1}};
    first.iv = iv;
    first.niv = 1;
    n = encode(&f, &buf);
    expect_bad(buf, n, PM_EFORMAT, "key name longer than 1024 bytes (no NUL)", 0);
    free(buf);
    iv[0].key = "ok";
    iv[0].start = 5;
    iv[0].end = 4;
    n = encode(&f, &buf);
    expect_bad(buf, n, PM_EFORMAT, "interval ends (4 ns) before it starts (5 ns)", 0);
    free(buf);
    iv[0].end = 6;
    first.type = "proc\tjob";
    n = encode(&f, &buf);
    expect_bad(buf, n, PM_EFORMAT, "offset 28: worker type has a byte 0x09 that is not printable",
               0);
    free(buf);
    first.type = "";
    n = encode(&f, &buf);
    expect_bad(buf, n, PM_EFORMAT, "offset 24: empty worker type", 0);
    free(buf);
    first.type = "process_job";
    f.end_ns = f.start_ns - 1;
    n = encode(&f, &buf);
    expect_bad(buf, n, PM_EFORMAT, "offset 0: start", 0);
    free(buf);
}

/* A hostile interval: extreme times give finite phases, saturated totals. */
static void test_extreme_values(void **state)
{
    (void)state;
    pm_sgen_interval iv[2] = {{"x", INT64_MIN, INT64_MAX}, {"x", 0, INT64_MAX}};
    pm_sgen_counter ct[2] = {{"c", INT64_MAX}, {"c", INT64_MAX}};
    pm_sgen_worker w = {0, "load", "", 0, iv, 2, ct, 2, 0, 0};
    pm_sgen_file f = {.start_ns = 0, .end_ns = 1, .first = &w, .master = 1};
    unsigned char *buf;
    size_t n = encode(&f, &buf);
    pm_phase_set s = {0};
    pm_error err;
    assert_int_equal(pm_scanner_decode("x.bin", buf, n, &s, NULL, &err), 0);
    assert_int_equal(total(&s, "load", "x", 1), INT64_MAX);
    assert_int_equal(total(&s, "load", "c", 0), INT64_MAX);
    pm_phase_set_free(&s);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worker_file),
        cmocka_unit_test(test_master_and_nodes),
        cmocka_unit_test(test_sniff),
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_corrupt_counts),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_bad_strings_and_times),
        cmocka_unit_test(test_extreme_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
