/* Unit tests of the stated invariants (invariant.h): in a debug or SAN=1
 * build, a broken invariant of the arena, the thread pool, the ordered
 * bounded window, the text buffer, a series, the binary codec (its batch
 * and its code words' lanes), the JSON scanner's cursor or the report's
 * rows under --stream aborts with "invariant failed" (each case runs in a
 * child process, its state broken on purpose); in a release build the
 * checks are compiled out and their conditions never run.  Hostile input
 * (times backwards, NaN) is not a broken invariant and never aborts. */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/profile/bin_codec.h"
#include "perfmon/analysis.h"
#include "perfmon/arena.h"
#include "perfmon/buf.h"
#include "perfmon/invariant.h"
#include "perfmon/json_scan.h"
#include "perfmon/series.h"
#include "perfmon/threads.h"
#include "perfmon/window.h"
#include "testutil.h"

/* Run fn in a child with stderr in a pipe; returns the child's wait status
 * and the first bytes it wrote to stderr in msg. */
static int in_child(void (*fn)(void), char *msg, size_t cap)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        fn();
        _exit(0);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < cap && (n = read(fds[0], msg + got, cap - 1 - got)) > 0)
        got += (size_t)n;
    msg[got] = '\0';
    close(fds[0]);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return st;
}

/* Aborted on the invariant, named, when the checks are on.  Off (release),
 * a broken state is undefined behaviour with nothing to catch it: not run. */
static void expect_caught(void (*fn)(void), const char *expr)
{
    if (!PM_ASSERTS_ON) {
        skip();
        return;
    }
    char msg[1024];
    int st = in_child(fn, msg, sizeof msg);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGABRT);
    assert_non_null(strstr(msg, "invariant failed"));
    assert_non_null(strstr(msg, expr));
}

static void arena_broken(void)
{
    pm_arena a;
    pm_arena_init(&a);
    a.npieces = a.cap + 1; /* more pieces than room for them */
    (void)pm_arena_alloc(&a, 1, 8);
}

static void pool_broken(void)
{
    pm_pool p = {.n = 4, .next = 5}; /* an item claimed past the end */
    pthread_mutex_init(&p.lock, NULL);
    (void)pm_pool_next(&p);
}

static void window_put_unclaimed(void)
{
    pm_window w;
    if (pm_window_init(&w, 4, 2, 0) != 0)
        _exit(3);
    (void)pm_window_put(&w, 1, NULL); /* item 1 made, never claimed */
}

static void window_overfull(void)
{
    pm_window w;
    size_t i;
    if (pm_window_init(&w, 4, 2, 0) != 0)
        _exit(3);
    w.held = w.cap; /* held items with their slots free */
    (void)pm_window_claim(&w, &i);
}

static void buf_broken(void)
{
    pm_buf b;
    pm_buf_init(&b);
    pm_buf_puts(&b, "abc");
    b.len = b.cap; /* the text's end past the capacity */
    pm_buf_puts(&b, "d");
}

static void series_broken(void)
{
    /* pm_hold_sparse is for a cleaned time axis: this one goes back. */
    double t[4] = {0, 2, 1, 3}, v[4] = {1, NAN, NAN, 2}, scratch[4];
    uint8_t q[4] = {0};
    (void)pm_hold_sparse(t, v, q, 4, 0.5, scratch);
}

/* A one-column codec of format version 2, its decoder's batch set up. */
static void codec_one(pm_codec *c)
{
    pm_column col = {.name = "x", .unit = "1", .group = "g", .kind = PM_GAUGE, .type = PM_F64};
    if (pm_codec_init(c, &col, 1, 1, 2) != 0)
        _exit(3);
}

static void codec_full_batch(void)
{
    pm_codec c;
    codec_one(&c);
    c.nb = PM_CODEC_BATCH; /* the caller forgot to flush a full batch */
    const unsigned char rec[] = {0, 0, 0x01};
    int64_t m, w;
    (void)pm_codec_parse(&c, 0, rec, sizeof rec, sizeof rec, &m, &w);
}

static void codec_key_in_batch(void)
{
    pm_codec c;
    codec_one(&c);
    c.nb = 3; /* a key sample parsed into a batch that holds rows */
    const unsigned char rec[] = {0, 0, 0x01};
    int64_t m, w;
    (void)pm_codec_parse(&c, 1, rec, sizeof rec, sizeof rec, &m, &w);
}

static void codec_lanes(void)
{
    pm_codec c;
    codec_one(&c);
    c.nw = 2; /* a code word past the record's codes */
    const unsigned char rec[] = {0, 0, 0x00};
    int64_t m, w;
    (void)pm_codec_parse(&c, 0, rec, sizeof rec, sizeof rec, &m, &w);
}

static void jscan_broken(void)
{
    static const char text[] = "{\"a\": 1}";
    pm_error err;
    pm_jscan s;
    pm_jscan_init(&s, "t.json", text, sizeof text - 1, 0, &err);
    s.p = s.e + 1; /* the cursor past the end it may read */
    if (pm_jscan_skip(&s) != 0)
        _exit(4); /* not reached: the cursor is checked first */
}

/* The stream mode's report rows: a stretch asked for backwards. */
static void report_row_broken(void)
{
    char cat[4096], path[4096];
    snprintf(cat, sizeof cat, "%s/../templates/metrics.json", pm_test_fixtures());
    snprintf(path, sizeof path, "%s/perfmon", pm_test_fixtures());
    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    o.catalog_path = cat;
    o.stream = 1;
    o.report = PM_REPORT_DOC;
    const char *paths[] = {path};
    pm_analysis *a = NULL;
    pm_error err;
    if (pm_analysis_run(paths, 1, &o, &a, &err) != 0 || a->nmetrics == 0)
        _exit(3);
    double out[8];
    if (pm_report_row(a, &a->metrics[0], 0, PM_REPORT_BAND_COLS, 5, 2, out, &err) != 0)
        _exit(4); /* not reached */
}

static void test_arena(void **state)
{
    (void)state;
    expect_caught(arena_broken, "a->npieces <= a->cap");
}

static void test_pool(void **state)
{
    (void)state;
    expect_caught(pool_broken, "p->next <= p->n");
}

static void test_window(void **state)
{
    (void)state;
    expect_caught(window_put_unclaimed, "i < w->next");
    expect_caught(window_overfull, "w->held < w->cap");
}

static void test_buf(void **state)
{
    (void)state;
    expect_caught(buf_broken, "b->len < b->cap");
}

static void test_series(void **state)
{
    (void)state;
    expect_caught(series_broken, "times_increasing");
}

static void test_codec_batch(void **state)
{
    (void)state;
    expect_caught(codec_full_batch, "c->nb < PM_CODEC_BATCH");
    expect_caught(codec_key_in_batch, "!key || c->nb == 0");
}

static void test_codec_lanes(void **state)
{
    (void)state;
    expect_caught(codec_lanes, "8 * k < (c->ncols + 3) / 4");
}

static void test_jscan_cursor(void **state)
{
    (void)state;
    expect_caught(jscan_broken, "(s)->p <= (s)->e");
}

static void test_report_row(void **state)
{
    (void)state;
    expect_caught(report_row_broken, "g0 <= g1");
}

/* Hostile times are input, not a broken invariant: cleaned, never fatal. */
static void test_hostile_times_pass(void **state)
{
    (void)state;
    double t[7] = {5, NAN, 4, 6, 6, INFINITY, 7};
    size_t keep[7], dropped = 0;
    size_t k = pm_time_increasing(t, 7, keep, &dropped);
    assert_int_equal(k, 3); /* 5, 6, 7: by hand */
    assert_int_equal(dropped, 4);
    assert_int_equal(keep[0], 0);
    assert_int_equal(keep[1], 3);
    assert_int_equal(keep[2], 6);
}

static int evaluated;
static int side_effect(void)
{
    evaluated++;
    return 1;
}

/* Release builds only type-check the condition. */
static void test_condition_runs_only_when_on(void **state)
{
    (void)state;
    evaluated = 0;
    PM_ASSERT(side_effect());
    assert_int_equal(evaluated, PM_ASSERTS_ON ? 1 : 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_buf),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_series),
        cmocka_unit_test(test_codec_batch),
        cmocka_unit_test(test_codec_lanes),
        cmocka_unit_test(test_jscan_cursor),
        cmocka_unit_test(test_report_row),
        cmocka_unit_test(test_hostile_times_pass),
        cmocka_unit_test(test_condition_runs_only_when_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
