/* How often the regression gate cries wolf, and whether it finds a real
 * slowdown (docs/archive.md, "How often it cries wolf"): reruns of one
 * benchmark with a shared machine's noise (tests/support/gate_noise.h),
 * judged by `perfmon-archive check` with its defaults and the table of
 * figure semantics (templates/compare.json), first by the check's
 * statistics over many seeds, then end to end: each rerun archived in
 * an SQLite store and `perfmon-archive check` run after it. */
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
#include "perfmon/archive.h"
#include "perfmon/archive_check.h"
#include "perfmon/archive_store.h"
#include "perfmon/compare.h"
#include "../../src/perfmon-archive/archive_cli.h"
#include "testutil.h"

#define RUNS 30
#define SLOW_AT 25    /* the first slowed run (1-based) */
#define SLOWDOWN 1.10 /* 10 % */
#define SEEDS 1000

static const char *templates(void)
{
    static char path[4096];
    const char *root = getenv("PM_ROOT");
    snprintf(path, sizeof path, "%s/templates", root && *root ? root : ".");
    return path;
}

/* The check options of a TensorFlow timing, as perfmon-archive check
 * takes them from the table. */
static void tf_opts(pm_check_opts *o, int *gated)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/compare.json", templates());
    pm_compare_cfg *cfg = NULL;
    pm_error err;
    pm_error_clear(&err);
    if (pm_compare_cfg_load(path, &cfg, &err) != 0)
        fail_msg("%s", err.msg);
    pm_compare_rule rule;
    pm_compare_cfg_entry(cfg, "BM_solve", &rule);
    pm_check_opts_init(o);
    o->better = rule.better;
    o->min_abs = rule.min_abs;
    o->min_change = rule.threshold_pct / 100;
    *gated = pm_gate_decide(NULL, "BM_solve", rule.better, rule.gate);
    pm_compare_cfg_free(cfg);
}

static void reruns(uint64_t seed, int slow, double *v)
{
    pm_noise g;
    pm_noise_init(&g, seed);
    for (int i = 0; i < RUNS; i++)
        v[i] = pm_noise_timing(&g, 2.5) * (slow && i + 1 >= SLOW_AT ? SLOWDOWN : 1);
}

static void test_rates(void **state)
{
    (void)state;
    pm_check_opts o;
    int gated;
    tf_opts(&o, &gated);
    assert_true(gated && o.better == PM_CHECK_LOWER && o.min_change == 0.05);
    size_t checks = 0, alarms = 0, found_at = 0, found_3 = 0, quiet_seqs = 0;
    double v[RUNS];
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        reruns(seed, 0, v);
        size_t seq_alarms = 0;
        for (size_t n = 1; n <= RUNS; n++) {
            pm_check_result r;
            pm_check_series(v, n, &o, &r);
            if (r.verdict == PM_CHECK_SHORT)
                continue;
            checks++;
            seq_alarms += r.verdict == PM_CHECK_REGRESSION;
        }
        alarms += seq_alarms;
        quiet_seqs += seq_alarms == 0;
        reruns(seed + 1000000, 1, v);
        int found = 0;
        for (size_t n = SLOW_AT; n < SLOW_AT + 3; n++) {
            pm_check_result r;
            pm_check_series(v, n, &o, &r);
            if (r.verdict == PM_CHECK_REGRESSION && !found) {
                found = 1;
                found_at += n == SLOW_AT;
                found_3++;
            }
        }
    }
    print_message("reruns: %d seeds x %d runs, window %zu, threshold %g, min change %g %%, "
                  "min history %zu\n",
                  SEEDS, RUNS, o.window, o.threshold, o.min_change * 100, o.min_history);
    print_message("false alarms: %zu of %zu checks (%.2f %%); %zu of %d sequences of %d runs "
                  "never failed\n",
                  alarms, checks, 100.0 * (double)alarms / (double)checks, quiet_seqs, SEEDS, RUNS);
    print_message("10 %% slowdown from run %d: found at run %d in %zu of %d (%.1f %%), by run %d "
                  "in %zu (%.1f %%)\n",
                  SLOW_AT, SLOW_AT, found_at, SEEDS, 100.0 * (double)found_at / SEEDS, SLOW_AT + 2,
                  found_3, 100.0 * (double)found_3 / SEEDS);
    /* At most 1 failing check in 20 at the default threshold ... */
    assert_true(alarms * 20 <= checks);
    /* ... and the slowdown is found every time, at the latest 2 runs on. */
    assert_int_equal(found_3, SEEDS);
}

/* perfmon-archive check on the store after each archived rerun: its exit
 * status, 0 ok, 1 a regression. */
static int check_cli(const char *db)
{
    char a[7][4200];
    snprintf(a[0], sizeof a[0], "perfmon-archive");
    snprintf(a[1], sizeof a[1], "check");
    snprintf(a[2], sizeof a[2], "--db");
    snprintf(a[3], sizeof a[3], "%s", db);
    snprintf(a[4], sizeof a[4], "--templates");
    snprintf(a[5], sizeof a[5], "%s", templates());
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

static void test_archived_reruns(void **state)
{
    (void)state;
    char *d = pm_test_tmpdir();
    assert_non_null(d);
    char dir[256], db[512];
    snprintf(dir, sizeof dir, "%s", d);
    size_t alarms = 0, checks = 0, found = 0;
    const int seeds = 4;
    for (int seed = 0; seed < seeds; seed++)
        for (int slow = 0; slow < 2; slow++) {
            snprintf(db, sizeof db, "%s/a%d%d.sqlite", dir, seed, slow);
            pm_store *s = NULL;
            pm_error err;
            pm_error_clear(&err);
            if (pm_store_open(db, &s, &err) != 0)
                fail_msg("%s", err.msg);
            double v[RUNS], statv[RUNS];
            reruns((uint64_t)seed + (slow ? 1000000 : 0), slow, v);
            int first_alarm = 0;
            for (int i = 0; i < RUNS; i++) {
                char doc[256];
                snprintf(doc, sizeof doc,
                         "{\"name\": \"nightly\", \"startTime\": \"%d\", \"entries\": {\"entry\": "
                         "[{\"name\": \"BM_solve\", \"iters\": \"10\", \"wallTime\": %.17g}]}}",
                         1700000000 + i * 86400, v[i]);
                pm_arch_run *r = NULL;
                if (pm_arch_parse("rerun.json", doc, strlen(doc), NULL, &r, &err) != 0)
                    fail_msg("%s", err.msg);
                int result;
                if (pm_store_put(s, r, "rerun.json", &result, &err) != 0)
                    fail_msg("%s", err.msg);
                pm_arch_run_free(r);
                int rc = check_cli(db);
                assert_true(rc == 0 || rc == 1);
                /* the same verdict as the statistics alone */
                pm_check_opts o;
                int gated;
                tf_opts(&o, &gated);
                memcpy(statv, v, sizeof v);
                pm_check_result cr;
                pm_check_series(statv, (size_t)i + 1, &o, &cr);
                assert_int_equal(rc, cr.verdict == PM_CHECK_REGRESSION);
                if (!slow && cr.verdict != PM_CHECK_SHORT) {
                    checks++;
                    alarms += rc == 1;
                }
                if (slow && i + 1 >= SLOW_AT && i + 1 < SLOW_AT + 3 && rc == 1 && !first_alarm) {
                    first_alarm = i + 1;
                    found++;
                }
            }
            pm_store_close(s);
        }
    print_message("archived: %zu false alarms in %zu checks; slowdown found in %zu of %d\n", alarms,
                  checks, found, seeds);
    assert_true(alarms * 20 <= checks);
    assert_int_equal(found, seeds);
    pm_test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rates),
        cmocka_unit_test(test_archived_reruns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
