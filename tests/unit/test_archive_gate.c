/* The gate across the entries of a test (docs/archive.md, "check"):
 *   - its rules on hand-made histories (a whole-test step, one entry alone
 *     young and old, within and beyond the test's tail, confirmed by the
 *     next run, informational entries left out);
 *   - its rates on simulated histories (tests/support/gate_sim.h, a fast
 *     fixed-seed version of bench/gate_rates), against the issue's
 *     targets and against judging each entry alone;
 *   - end to end: histories archived run by run in an SQLite store,
 *     `perfmon-archive check` after each, its exit status the gate's
 *     verdict (0 ok, 1 regression, 6 suspect). */
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gate_noise.h"
#include "gate_sim.h"
#include "perfmon/archive.h"
#include "perfmon/archive_gate.h"
#include "perfmon/archive_store.h"
#include "perfmon/cli.h"
#include "../../src/perfmon-archive/archive_cli.h"
#include "testutil.h"

#define NE 4
#define MAXR 64

/* A repeatable 1 % jitter. */
static double jitter(size_t run, size_t e)
{
    static const double d[] = {0, 0.01, -0.01, 0.005, -0.005, 0.008, -0.008, 0.003, -0.002};
    return 1 + d[(run * 5 + e * 3) % 9];
}

typedef struct hist {
    double v[NE][MAXR];
    size_t run[MAXR];
    size_t n;
    int gated[NE];
} hist;

/* runs runs of NE entries; f(run, entry) the factor of each value */
static void make(hist *h, size_t runs, double (*f)(size_t, size_t))
{
    memset(h, 0, sizeof *h);
    h->n = runs;
    for (size_t r = 0; r < runs; r++) {
        h->run[r] = r;
        for (size_t e = 0; e < NE; e++)
            h->v[e][r] = (1.0 + (double)e) * jitter(r, e) * f(r, e);
    }
    for (size_t e = 0; e < NE; e++)
        h->gated[e] = 1;
}

static void judge(const hist *h, pm_gate_entry *x, pm_gate_test *t)
{
    for (size_t e = 0; e < NE; e++) {
        memset(&x[e], 0, sizeof x[e]);
        x[e].v = h->v[e];
        x[e].run = h->run;
        x[e].n = h->n;
        pm_check_opts_init(&x[e].o);
        x[e].gated = h->gated[e];
        if (!h->gated[e])
            x[e].o.better = PM_CHECK_NONE;
    }
    pm_gate_opts g;
    pm_gate_opts_init(&g);
    pm_error err;
    pm_error_clear(&err);
    assert_int_equal(pm_gate_judge(x, NE, h->n, &g, t, &err), 0);
}

static size_t g_runs; /* the latest run of the factor functions below */
static double flat(size_t r, size_t e)
{
    (void)r, (void)e;
    return 1;
}
static double all_up(size_t r, size_t e)
{
    (void)e;
    return r + 1 == g_runs ? 1.10 : 1;
}
static double one_up(size_t r, size_t e)
{
    return r + 1 == g_runs && e == 2 ? 1.30 : 1;
}
static double one_up_twice(size_t r, size_t e)
{
    return r + 2 >= g_runs && e == 2 ? 1.30 : 1;
}
static double one_up_twice_hit(size_t r, size_t e)
{
    /* a +40 % hit of entry 1 in run 5, then entry 2 +30 % twice */
    return (r == 5 && e == 1) ? 1.40 : one_up_twice(r, e);
}
static double one_up_tail(size_t r, size_t e)
{
    /* a +40 % hit of entry 1 in run 5, then entry 2 +30 % in the latest */
    return (r == 5 && e == 1) ? 1.40 : one_up(r, e);
}
static double one_up_three(size_t r, size_t e)
{
    /* entry 2 +8 % in each of the last three runs */
    return r + 3 >= g_runs && e == 2 ? 1.08 : 1;
}

static double one_up_little(size_t r, size_t e)
{
    /* entry 2 +3 % in the latest run: above its usual level, but under
     * the minimum change (5 %): nothing to look at */
    return r + 1 == g_runs && e == 2 ? 1.03 : 1;
}
static double one_up_noisy(size_t r, size_t e)
{
    /* a noisier test (3 % jitter), entry 2 +7 % in the latest run: within
     * 3 sd, above its usual level and the minimum change */
    return (1 + 0.03 * sin((double)r * 7.3 + (double)e * 3.1)) *
           (r + 1 == g_runs && e == 2 ? 1.07 : 1);
}
static double one_up_twice_tail(size_t r, size_t e)
{
    /* a +40 % hit of entry 1 in run 5 (the tail is wide), then entry 2
     * +8 % in the last two runs */
    return (r == 5 && e == 1) ? 1.40 : r + 2 >= g_runs && e == 2 ? 1.08 : 1;
}

static void test_rules(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        size_t runs;
        double (*f)(size_t, size_t);
        int test_verdict, test_why;
        int e2_verdict, e2_why; /* entry 2's verdict */
        int e0_verdict;
    } rows[] = {
        {"flat", 12, flat, PM_GATE_OK, PM_GATE_WHY_NONE, PM_GATE_OK, PM_GATE_WHY_NONE, PM_GATE_OK},
        {"too few runs", 4, all_up, PM_GATE_SHORT, PM_GATE_WHY_NONE, PM_GATE_SHORT,
         PM_GATE_WHY_NONE, PM_GATE_SHORT},
        {"every entry +10 %: the whole test fails at once", 30, all_up, PM_GATE_REGRESSION,
         PM_GATE_WHY_TEST, PM_GATE_REGRESSION, PM_GATE_WHY_TEST, PM_GATE_REGRESSION},
        {"every entry +10 %, 12 runs: the whole test's tail unmeasured, suspect", 12, all_up,
         PM_GATE_SUSPECT, PM_GATE_WHY_UNMEASURED, PM_GATE_SUSPECT, PM_GATE_WHY_WITHIN,
         PM_GATE_SUSPECT},
        {"one entry +30 %, young history: suspect", 12, one_up, PM_GATE_OK, PM_GATE_WHY_NONE,
         PM_GATE_SUSPECT, PM_GATE_WHY_UNMEASURED, PM_GATE_OK},
        {"one entry +30 %, 16 judged runs without a tail: beyond it", 20, one_up, PM_GATE_OK,
         PM_GATE_WHY_NONE, PM_GATE_REGRESSION, PM_GATE_WHY_TAIL, PM_GATE_OK},
        {"one entry +30 %, a +40 % hit in the history: within it", 20, one_up_tail, PM_GATE_OK,
         PM_GATE_WHY_NONE, PM_GATE_SUSPECT, PM_GATE_WHY_WITHIN, PM_GATE_OK},
        {"one entry +30 % twice, young history without a hit: confirmed", 12, one_up_twice,
         PM_GATE_OK, PM_GATE_WHY_NONE, PM_GATE_REGRESSION, PM_GATE_WHY_CONFIRMED, PM_GATE_OK},
        {"one entry +30 % twice, young history with a hit: two hits or a step, the third "
         "decides",
         12, one_up_twice_hit, PM_GATE_OK, PM_GATE_WHY_NONE, PM_GATE_SUSPECT,
         PM_GATE_WHY_UNMEASURED, PM_GATE_OK},
        {"one entry +30 % twice, beyond the measured tail: confirmed", 20, one_up_twice, PM_GATE_OK,
         PM_GATE_WHY_NONE, PM_GATE_REGRESSION, PM_GATE_WHY_CONFIRMED, PM_GATE_OK},
        {"one entry +8 % three times: confirmed", 14, one_up_three, PM_GATE_OK, PM_GATE_WHY_NONE,
         PM_GATE_REGRESSION, PM_GATE_WHY_CONFIRMED, PM_GATE_OK},
        {"one entry +3 %: under the minimum change, ok", 20, one_up_little, PM_GATE_OK,
         PM_GATE_WHY_NONE, PM_GATE_OK, PM_GATE_WHY_NONE, PM_GATE_OK},
        {"one entry +7 % in a noisier test: one more run decides", 20, one_up_noisy, PM_GATE_OK,
         PM_GATE_WHY_NONE, PM_GATE_SUSPECT, PM_GATE_WHY_LOOK, PM_GATE_OK},
        {"one entry +8 % twice within a wide tail: confirmed", 24, one_up_twice_tail, PM_GATE_OK,
         PM_GATE_WHY_NONE, PM_GATE_REGRESSION, PM_GATE_WHY_CONFIRMED, PM_GATE_OK},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        hist h;
        g_runs = rows[i].runs;
        make(&h, rows[i].runs, rows[i].f);
        pm_gate_entry x[NE];
        pm_gate_test t;
        judge(&h, x, &t);
        if (t.verdict != rows[i].test_verdict || t.why != rows[i].test_why)
            fail_msg("%s: whole test %s (%s), want %s (%s)", rows[i].what,
                     pm_gate_verdict_name(t.verdict), pm_gate_why_text(t.why),
                     pm_gate_verdict_name(rows[i].test_verdict),
                     pm_gate_why_text(rows[i].test_why));
        if (x[2].verdict != rows[i].e2_verdict || x[2].why != rows[i].e2_why)
            fail_msg("%s: entry 2 %s (%s), want %s (%s)", rows[i].what,
                     pm_gate_verdict_name(x[2].verdict), pm_gate_why_text(x[2].why),
                     pm_gate_verdict_name(rows[i].e2_verdict), pm_gate_why_text(rows[i].e2_why));
        /* entry 0 is flat: it fails only with the whole test (at the top
         * of its jitter it may be suspect) */
        if ((x[0].verdict == PM_GATE_REGRESSION) != (rows[i].e0_verdict == PM_GATE_REGRESSION) ||
            (rows[i].e0_verdict == PM_GATE_SHORT) != (x[0].verdict == PM_GATE_SHORT))
            fail_msg("%s: entry 0 %s", rows[i].what, pm_gate_verdict_name(x[0].verdict));
    }
    /* The whole test is the median of the gated entries: with entry 2
     * informational, a +10 % of the three others still moves it, and
     * entry 2's own +30 % alone does not. */
    hist h;
    g_runs = 30;
    make(&h, 30, all_up);
    h.gated[2] = 0;
    pm_gate_entry x[NE];
    pm_gate_test t;
    judge(&h, x, &t);
    assert_int_equal(t.entries, 3);
    assert_int_equal(t.verdict, PM_GATE_REGRESSION);
    assert_true(fabs(t.change - 0.10) < 0.02);
    g_runs = 12;
    make(&h, 12, one_up);
    h.gated[2] = 0;
    judge(&h, x, &t);
    assert_int_equal(t.verdict, PM_GATE_OK);
    assert_int_equal(x[2].verdict, PM_GATE_SHORT); /* not gated: no verdict of the gate */
    /* One gated entry: no whole-test verdict. */
    make(&h, 12, one_up);
    h.gated[0] = h.gated[1] = h.gated[3] = 0;
    judge(&h, x, &t);
    assert_int_equal(t.verdict, PM_GATE_SHORT);
    assert_int_equal(x[2].verdict, PM_GATE_SUSPECT);
}

/* The rates, a fast version: fixed seeds, fewer of them (bench/gate_rates
 * prints them for 1,000; docs/archive.md has those).  The stable
 * histories are the costly ones (100 runs, each judged): 30 seeds of them;
 * the slowed ones are short: 200 seeds, so that a rate near its bound is
 * not decided by one or two histories. */
static void test_rates(void **state)
{
    (void)state;
    const char *wrap = getenv("PM_WRAP");
    /* under valgrind: the code paths, not the rates */
    size_t seeds = wrap && *wrap ? 4 : 30, slowed = wrap && *wrap ? 4 : 200;
    for (int m = 0; m < 2; m++) {
        pm_sim_rates a, g, d;
        assert_int_equal(pm_sim_run_parts(m, PM_SIM_ALONE, seeds, 1, PM_SIM_STABLE, &a), 0);
        assert_int_equal(
            pm_sim_run_parts(m, PM_SIM_GATE, seeds, 1, PM_SIM_STABLE | PM_SIM_PIPELINES, &g), 0);
        assert_int_equal(pm_sim_run_parts(m, PM_SIM_GATE, slowed, 1, PM_SIM_SLOWED, &d), 0);
        double n = (double)slowed;
        print_message(
            "%s tails, %zu stable and %zu slowed seeds: false failures alone %.2f %%, "
            "gate %.2f %% (suspect %.2f %%), pipelines %.2f %%; every entry +10 %%: "
            "at run 25 %.1f %%, by 26 %.1f %%; one entry by 27 %.1f %%; rerun "
            "protocol: every entry %.1f %%, one %.1f %%\n",
            m ? "whole-run" : "per-entry", seeds, slowed,
            100.0 * (double)a.fails / (double)a.checks, 100.0 * (double)g.fails / (double)g.checks,
            100.0 * (double)g.suspects / (double)g.checks,
            100.0 * (double)g.pipeline_fails / (double)g.pipelines, 100.0 * (double)d.all_at / n,
            100.0 * (double)d.all_by1 / n, 100.0 * (double)d.one_by2 / n,
            100.0 * (double)d.rerun_all / n, 100.0 * (double)d.rerun_one / n);
        if (wrap && *wrap)
            continue;
        /* each entry alone cries wolf: more than 1 check in 10 */
        assert_true(a.fails * 10 > a.checks);
        /* the gate: at most 1 false failure in 20 checks, suspect a pass;
         * and stable pipelines with the rerun protocol: at most 1 in 20 */
        assert_true(g.fails * 20 <= g.checks);
        assert_true(g.pipeline_fails * 20 <= g.pipelines);
        /* every entry 10 % slower: failed by run 26 always; at run 25 in at
         * least 90 % under per-entry tails */
        assert_int_equal(d.all_by1, slowed);
        if (m == PM_SIM_ENTRY_TAILS)
            assert_true(d.all_at * 10 >= slowed * 9);
        /* the first slowed pipeline with the rerun protocol, every entry */
        assert_true(d.rerun_all * 20 >= slowed * 19);
        /* one entry 10 % slower, by run 27: at least 95 % under per-entry
         * tails, 93 % under whole-run tails (the issue asks 95 %: not met,
         * docs/archive.md) */
        assert_true(d.one_by2 * 100 >= slowed * (m == PM_SIM_ENTRY_TAILS ? 95 : 93));
        /* the rerun protocol (up to two reruns) on one entry 10 % slower:
         * at least 90 % of first slowed pipelines fail (the issue asks 95 %:
         * not met, docs/archive.md) */
        assert_true(d.rerun_one * 10 >= slowed * 9);
    }
}

/* perfmon-archive check on the store: its exit status. */
static int check_cli(const char *db)
{
    char a[7][4200];
    const char *root = getenv("PM_ROOT");
    snprintf(a[0], sizeof a[0], "perfmon-archive");
    snprintf(a[1], sizeof a[1], "check");
    snprintf(a[2], sizeof a[2], "--db");
    snprintf(a[3], sizeof a[3], "%s", db);
    snprintf(a[4], sizeof a[4], "--templates");
    snprintf(a[5], sizeof a[5], "%s/templates", root && *root ? root : ".");
    snprintf(a[6], sizeof a[6], "nightly");
    char *argv[] = {a[0], a[1], a[2], a[3], a[4], a[5], a[6], NULL};
    fflush(stdout);
    int saved = dup(1), null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    close(null);
    int rc = pm_archive_main(7, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    return rc;
}

/* Runs of a 4-entry TensorFlow test with the per-entry tails model,
 * archived one by one; check after each: exit status = the gate on the
 * same values. */
static void test_archived(void **state)
{
    (void)state;
    char *d = pm_test_tmpdir();
    assert_non_null(d);
    char db[512];
    snprintf(db, sizeof db, "%s/a.sqlite", d);
    pm_store *s = NULL;
    pm_error err;
    pm_error_clear(&err);
    if (pm_store_open(db, &s, &err) != 0)
        fail_msg("%s", err.msg);
    static const char *const names[NE] = {"BM_a", "BM_b", "BM_c", "BM_d"};
    hist h;
    memset(&h, 0, sizeof h);
    for (size_t e = 0; e < NE; e++)
        h.gated[e] = 1;
    pm_noise g;
    pm_noise_init(&g, 42);
    size_t seen[8] = {0};
    for (size_t r = 0; r < 34; r++) {
        /* entry 1 +15 % now and then, every entry +10 % from run 30 on */
        char doc[1024];
        int len = snprintf(doc, sizeof doc,
                           "{\"name\": \"nightly\", \"startTime\": \"%zu\", \"entries\": "
                           "{\"entry\": [",
                           (size_t)1700000000 + r * 86400);
        for (size_t e = 0; e < NE; e++) {
            double u = pm_noise_uniform(&g);
            double x = (1.0 + (double)e) * (1 + 0.03 * (pm_noise_uniform(&g) - 0.5)) *
                       (u < 0.15 && e == 1 ? 1.15 : 1) * (r >= 30 ? 1.10 : 1);
            h.v[e][r] = x;
            len +=
                snprintf(doc + len, sizeof doc - (size_t)len,
                         "%s{\"name\": \"%s\", \"wallTime\": %.17g}", e ? ", " : "", names[e], x);
        }
        snprintf(doc + len, sizeof doc - (size_t)len, "]}}");
        h.run[r] = r;
        h.n = r + 1;
        pm_arch_run *run = NULL;
        if (pm_arch_parse("run.json", doc, strlen(doc), NULL, &run, &err) != 0)
            fail_msg("%s", err.msg);
        int result;
        if (pm_store_put(s, run, "run.json", &result, &err) != 0)
            fail_msg("%s", err.msg);
        pm_arch_run_free(run);
        int rc = check_cli(db);
        pm_gate_entry x[NE];
        pm_gate_test t;
        judge(&h, x, &t);
        int want = t.verdict == PM_GATE_REGRESSION ? PM_EXIT_FAIL
                   : t.verdict == PM_GATE_SUSPECT  ? PM_EXIT_SUSPECT
                                                   : PM_EXIT_OK;
        for (size_t e = 0; e < NE; e++)
            if (x[e].verdict == PM_GATE_REGRESSION)
                want = PM_EXIT_FAIL;
            else if (x[e].verdict == PM_GATE_SUSPECT && want == PM_EXIT_OK)
                want = PM_EXIT_SUSPECT;
        if (rc != want)
            fail_msg("run %zu: perfmon-archive check exit %d, the gate says %d", r + 1, rc, want);
        seen[rc]++;
        if (r == 30)
            assert_int_equal(rc, PM_EXIT_FAIL); /* the whole test +10 % */
    }
    print_message("archived: %zu ok, %zu suspect, %zu failed of 34 checks\n", seen[0], seen[6],
                  seen[1]);
    assert_true(seen[6] > 0); /* the entry's hits were suspect at least once */
    pm_store_close(s);
    pm_test_rmrf(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_rates),
        cmocka_unit_test(test_archived),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
