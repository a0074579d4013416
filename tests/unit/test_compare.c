/* compare: the noise estimate and the verdict on series with hand-computed
 * values, compare.json parsing, and whole comparisons of the synthetic job
 * pair in fixtures/compare/ (written by gen_all below; the test checks the
 * committed files are what it writes, PM_REGEN_FIXTURES=1 rewrites them). */
#include <math.h>
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

#include "perfmon/catalog.h"
#include "perfmon/compare.h"
#include "perfmon/export.h"
#include "perfmon/fileio.h"
#include "perfmon/profile.h"
#include "perfmon/report.h"
#include "synth.h"
#include "../support/testutil.h"

#define N 100

/* 50 + 5 (-1)^i + shift: mean 50 + shift (time-weighted too: each
 * trapezoid averages a high and a low point).  The differences are +-10,
 * perfectly anti-correlated, so rho is clamped to 0 and
 * se = sqrt(mean(d^2) / 2 / n) = sqrt(100 / 2 / 100) = 0.70711. */
static void alternating(double *t, double *v, double shift)
{
    for (size_t i = 0; i < N; i++) {
        t[i] = 1.7e9 + (double)i;
        v[i] = 50 + shift + (i % 2 ? -5.0 : 5.0);
    }
}

static void side_of(const double *t, const double *v, pm_compare_side *s)
{
    double scratch[N];
    pm_compare_side_series(t, v, N, PM_W_TRAPEZOID, scratch, s);
}

static void test_se_hand_values(void **state)
{
    (void)state;
    double t[N], v[N], scratch[N];
    alternating(t, v, 0);
    assert_float_equal(pm_compare_se(v, N, scratch), sqrt(0.5), 1e-12);

    /* Constant: the mean is exact. */
    for (size_t i = 0; i < N; i++)
        v[i] = 42;
    assert_float_equal(pm_compare_se(v, N, scratch), 0, 0);

    /* 0, 0, 1, 1, 0, 0, ...: the differences 0, 1, 0, -1, ... have a lag-1
     * correlation near 0, so rho = 1 + 2 r1 is clamped to 0.9:
     * sigma^2 = mean(d^2) / (2 * 0.1), se^2 = sigma^2 * 1.9 / 0.1 / n
     * with mean(d^2) = 49 / 99. */
    for (size_t i = 0; i < N; i++)
        v[i] = (i / 2) % 2 ? 1 : 0;
    double msq = 49.0 / 99.0;
    assert_float_equal(pm_compare_se(v, N, scratch), sqrt(msq / 0.2 * 19 / N), 1e-12);

    /* A gap breaks the chain of differences; too few points give NaN. */
    double g[5] = {1, NAN, 3, NAN, 5};
    assert_true(isnan(pm_compare_se(g, 5, scratch)));
    double two[2] = {1, 2};
    assert_true(isnan(pm_compare_se(two, 2, scratch)));
    double none[3] = {NAN, NAN, NAN};
    assert_true(isnan(pm_compare_se(none, 3, scratch)));
}

static pm_compare_row row_for(double shift_b, int better, double threshold)
{
    double ta[N], va[N], tb[N], vb[N];
    alternating(ta, va, 0);
    alternating(tb, vb, shift_b);
    pm_compare_row r;
    memset(&r, 0, sizeof r);
    side_of(ta, va, &r.a);
    side_of(tb, vb, &r.b);
    r.better = better;
    r.threshold_pct = threshold;
    pm_compare_judge(&r, 3);
    return r;
}

static void test_same_job_twice(void **state)
{
    (void)state;
    pm_compare_row r = row_for(0, PM_BETTER_LOWER, 0);
    assert_float_equal(r.a.mean, 50, 1e-12);
    assert_float_equal(r.diff, 0, 0);
    assert_float_equal(r.pct, 0, 0);
    assert_float_equal(r.zscore, 0, 0);
    assert_false(r.significant);
    assert_int_equal(r.verdict, PM_VERDICT_SAME);
}

static void test_30pct_more_cpu_is_worse(void **state)
{
    (void)state;
    /* B = 65 +- 5 against 50 +- 5: +30 %, se of the difference
     * sqrt(0.5 + 0.5) = 1, so z = 15. */
    pm_compare_row r = row_for(15, PM_BETTER_LOWER, 10);
    assert_float_equal(r.b.mean, 65, 1e-12);
    assert_float_equal(r.pct, 30, 1e-9);
    assert_float_equal(r.se, 1, 1e-12);
    assert_float_equal(r.zscore, 15, 1e-9);
    assert_true(r.significant);
    assert_int_equal(r.verdict, PM_VERDICT_WORSE);
    assert_int_equal(row_for(15, PM_BETTER_HIGHER, 10).verdict, PM_VERDICT_BETTER);
    assert_int_equal(row_for(15, PM_BETTER_NONE, 10).verdict, PM_VERDICT_CHANGED);
    assert_int_equal(row_for(-15, PM_BETTER_LOWER, 10).verdict, PM_VERDICT_BETTER);
    /* Beyond 30 %, it is the same. */
    assert_int_equal(row_for(15, PM_BETTER_LOWER, 30).verdict, PM_VERDICT_SAME);
    assert_int_equal(row_for(15, PM_BETTER_LOWER, 29.9).verdict, PM_VERDICT_WORSE);
}

static void test_noise_is_not_significant(void **state)
{
    (void)state;
    /* +0.5 (1 %) with noise of sd 5: z = 0.5 / 1 = 0.5. */
    pm_compare_row r = row_for(0.5, PM_BETTER_LOWER, 0.5);
    assert_float_equal(r.pct, 1, 1e-9);
    assert_float_equal(r.zscore, 0.5, 1e-9);
    assert_false(r.significant);
    assert_int_equal(r.verdict, PM_VERDICT_NOISE);
    assert_int_equal(row_for(0.5, PM_BETTER_LOWER, 10).verdict, PM_VERDICT_SAME);
    /* z = 3 exactly is not beyond 3 standard errors; just above is. */
    assert_int_equal(row_for(3, PM_BETTER_LOWER, 1).verdict, PM_VERDICT_NOISE);
    assert_int_equal(row_for(3.01, PM_BETTER_LOWER, 1).verdict, PM_VERDICT_WORSE);
}

static void test_judge_edges(void **state)
{
    (void)state;
    pm_compare_row r;
    memset(&r, 0, sizeof r);
    r.better = PM_BETTER_LOWER;
    r.threshold_pct = 10;
    /* Job figures have no noise estimate: the threshold alone decides. */
    r.a = (pm_compare_side){1, 100, NAN, NAN, NAN};
    r.b = (pm_compare_side){1, 111, NAN, NAN, NAN};
    pm_compare_judge(&r, 3);
    assert_true(isnan(r.se));
    assert_true(isnan(r.zscore));
    assert_int_equal(r.verdict, PM_VERDICT_WORSE);
    /* ... unless the absolute floor is not passed. */
    r.min_abs = 11;
    pm_compare_judge(&r, 3);
    assert_int_equal(r.verdict, PM_VERDICT_SAME);
    r.min_abs = 0;
    /* A at 0: any increase is infinitely many percent. */
    r.a.mean = 0;
    r.b.mean = 0.5;
    pm_compare_judge(&r, 3);
    assert_true(isinf(r.pct) && r.pct > 0);
    assert_int_equal(r.verdict, PM_VERDICT_WORSE);
    r.b.mean = 0;
    pm_compare_judge(&r, 3);
    assert_float_equal(r.pct, 0, 0);
    assert_int_equal(r.verdict, PM_VERDICT_SAME);
    /* Zero noise on both sides: any difference is significant. */
    r.a = (pm_compare_side){10, 100, 100, 100, 0};
    r.b = (pm_compare_side){10, 120, 120, 120, 0};
    pm_compare_judge(&r, 3);
    assert_true(isinf(r.zscore));
    assert_int_equal(r.verdict, PM_VERDICT_WORSE);
    /* A series too short to estimate its noise is never significant. */
    r.kind = PM_CMP_METRIC;
    r.a = (pm_compare_side){2, 100, 100, 100, NAN};
    r.b = (pm_compare_side){2, 150, 150, 150, NAN};
    pm_compare_judge(&r, 3);
    assert_false(r.significant);
    assert_int_equal(r.verdict, PM_VERDICT_NOISE);
    /* Present in one job only. */
    r.a.mean = NAN;
    pm_compare_judge(&r, 3);
    assert_int_equal(r.verdict, PM_VERDICT_MISSING);
    assert_string_equal(pm_verdict_name(PM_VERDICT_MISSING), "missing");
    assert_int_equal(pm_better_parse("higher"), PM_BETTER_HIGHER);
    assert_int_equal(pm_better_parse("Higher"), -1);
}

/* Every row's verdict mirrors when A and B swap, on random rows of every
 * kind, with and without noise, floors and zeros: "worse" both ways is
 * impossible. */
static void test_judge_mirrors(void **state)
{
    (void)state;
    uint64_t x = 88172645463325252ull;
    size_t worse = 0, better = 0;
    for (int i = 0; i < 200000; i++) {
        double u[8];
        for (int k = 0; k < 8; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            u[k] = (double)(x >> 11) / 9007199254740992.0;
        }
        pm_compare_row ab;
        memset(&ab, 0, sizeof ab);
        ab.kind = (int)(u[0] * 4);
        ab.better = (int)(u[1] * 3);
        ab.threshold_pct = u[2] < 0.2 ? 0 : u[2] * 30;
        ab.min_abs = u[3] < 0.5 ? 0 : u[3] * 5;
        double a = u[4] < 0.05 ? 0 : 50 + 100 * u[4], b = u[5] < 0.05 ? 0 : 50 + 100 * u[5];
        double sa = u[6] < 0.3 ? NAN : u[6] * 10, sb = u[7] < 0.3 ? NAN : u[7] * 10;
        ab.a = (pm_compare_side){1, a, NAN, NAN, sa};
        ab.b = (pm_compare_side){1, b, NAN, NAN, sb};
        pm_compare_row ba = ab;
        ba.a = ab.b;
        ba.b = ab.a;
        pm_compare_judge(&ab, 3);
        pm_compare_judge(&ba, 3);
        int want = ab.verdict == PM_VERDICT_WORSE    ? PM_VERDICT_BETTER
                   : ab.verdict == PM_VERDICT_BETTER ? PM_VERDICT_WORSE
                                                     : ab.verdict;
        if (ba.verdict != want)
            fail_msg("row %d: A %g B %g thr %g floor %g: %s one way, %s the other", i, a, b,
                     ab.threshold_pct, ab.min_abs, pm_verdict_name(ab.verdict),
                     pm_verdict_name(ba.verdict));
        worse += ab.verdict == PM_VERDICT_WORSE;
        better += ab.verdict == PM_VERDICT_BETTER;
    }
    assert_true(worse > 1000 && better > 1000); /* the rows exercise both */
}

/* The table of figure semantics as perfmon-archive check reads it, and
 * the --gate / --no-gate rules. */
static void test_entry_semantics(void **state)
{
    (void)state;
    char p[4200];
    snprintf(p, sizeof p, "%s/../templates/compare.json", pm_test_fixtures());
    pm_compare_cfg *cfg = NULL;
    pm_error err;
    if (pm_compare_cfg_load(p, &cfg, &err) != 0)
        fail_msg("%s", err.msg);
    static const struct {
        const char *entry;
        int better, gate;
        double pct;
    } rows[] = {
        {"BM_MatMul/1024", PM_BETTER_LOWER, 1, 5},            /* a TensorFlow timing */
        {"wall_time_s", PM_BETTER_LOWER, 1, 10},              /* the job's timing */
        {"cpu_avg_utilization_pct", PM_BETTER_HIGHER, 0, 10}, /* informational */
        {"max_t_mem_percent", PM_BETTER_LOWER, 0, 10},
        {"sampler_lateness_max_s", PM_BETTER_NONE, 0, 10},
        {"repaired", PM_BETTER_NONE, 0, 10},
        {"phase:solve", PM_BETTER_LOWER, 0, 10},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        pm_compare_rule r;
        pm_compare_cfg_entry(cfg, rows[i].entry, &r);
        if (r.better != rows[i].better || r.gate != rows[i].gate ||
            fabs(r.threshold_pct - rows[i].pct) > 1e-12)
            fail_msg("%s: better %d gate %d pct %g", rows[i].entry, r.better, r.gate,
                     r.threshold_pct);
    }
    /* Every TensorFlow timing and throughput is gated, every sampler figure never. */
    for (size_t i = 0; i < cfg->ntf; i++)
        assert_int_equal(cfg->tf[i].gate, cfg->tf[i].better != PM_BETTER_NONE);
    for (size_t i = 0; i < cfg->nfigures; i++)
        if (pm_compare_is_sampler(cfg->figures[i].key))
            assert_false(cfg->figures[i].gate);
    pm_compare_cfg_free(cfg);

    const char *on[] = {"energy_j", "sampler_cpu_pct"}, *off[] = {"wall_time_s"};
    pm_gate_names g = {on, 2, off, 1};
    assert_true(pm_gate_decide(&g, "energy_j", PM_BETTER_LOWER, 0));
    assert_false(pm_gate_decide(&g, "wall_time_s", PM_BETTER_LOWER, 1));
    assert_false(pm_gate_decide(&g, "sampler_cpu_pct", PM_BETTER_LOWER, 1));
    assert_false(pm_gate_decide(&g, "energy_j", PM_BETTER_NONE, 1));
    assert_true(pm_gate_decide(NULL, "x", PM_BETTER_HIGHER, 1));
    char buf[64];
    const char *list[4];
    assert_int_equal(pm_gate_parse_list("a,b", 1, buf, sizeof buf, list, 0, 4), 2);
    assert_string_equal(list[1], "b");
    assert_int_equal(pm_gate_parse_list("a,,b", 1, buf, sizeof buf, list, 0, 4), -1);
    assert_int_equal(pm_gate_parse_list("sampler_late", 1, buf, sizeof buf, list, 0, 4), -1);
    assert_int_equal(pm_gate_parse_list("sampler_late", 0, buf, sizeof buf, list, 0, 4), 1);
    assert_int_equal(pm_gate_parse_list("a,b,c", 1, buf, sizeof buf, list, 2, 4), -1);
    /* Why each was refused, in words. */
    char why[256];
    pm_gate_list_why("a,,b", 1, 0, 4, why, sizeof why);
    assert_non_null(strstr(why, "an empty name"));
    pm_gate_list_why("a,sampler_late", 1, 0, 4, why, sizeof why);
    assert_non_null(strstr(why, "sampler_late is one of the sampler's own figures"));
    pm_gate_list_why("a,b,c", 1, 2, 4, why, sizeof why);
    assert_string_equal(why, "more than 4 names in all");
}

static void test_cfg_parse(void **state)
{
    (void)state;
    pm_compare_cfg *c = NULL;
    pm_error err;
    const char *ok =
        "{\"threshold_pct\": 5, \"z\": 2, \"default_better\": \"lower\","
        " \"phases\": {\"better\": \"none\"},"
        " \"figures\": [{\"key\": \"wall_time_s\", \"better\": \"lower\", \"min_abs\": 1}],"
        " \"metrics\": [{\"id\": \"cpu_usage\", \"better\": \"higher\", \"threshold_pct\": 2},"
        "               {\"id\": \"mem_used\"}]}";
    assert_int_equal(pm_compare_cfg_parse("c.json", ok, &c, &err), 0);
    assert_float_equal(c->threshold_pct, 5, 0);
    assert_float_equal(c->z, 2, 0);
    assert_int_equal(c->phase_better, PM_BETTER_NONE);
    assert_int_equal(c->nfigures, 1);
    assert_float_equal(c->figures[0].min_abs, 1, 0);
    const pm_compare_rule *r = pm_compare_cfg_metric(c, "cpu_usage");
    assert_non_null(r);
    assert_int_equal(r->better, PM_BETTER_HIGHER);
    assert_float_equal(r->threshold_pct, 2, 0);
    r = pm_compare_cfg_metric(c, "mem_used");
    assert_int_equal(r->better, PM_BETTER_LOWER); /* default_better */
    assert_true(isnan(r->threshold_pct));
    assert_null(pm_compare_cfg_metric(c, "nope"));
    pm_compare_cfg_free(c);

    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"{\"metrics\": [{\"id\": \"x\", \"better\": \"up\"}]}",
         "c.json: metrics[0].better: expected"},
        {"{\"figures\": [{\"key\": \"nope\"}]}", "\"nope\" is not a job figure"},
        {"{\"metrics\": [{\"id\": \"x\"}, {\"id\": \"x\"}]}",
         "metrics[1].id: \"x\" is listed twice"},
        {"{\"metrics\": [{\"better\": \"lower\"}]}", "metrics[0].id: expected a string"},
        {"{\"threshold_pct\": -1}", "c.json: threshold_pct: expected a number >= 0"},
        {"{\"z\": \"3\"}", "c.json: z: expected a number"},
        {"{\"phases\": 1}", "c.json: phases: expected an object"},
        {"{\"metrics\": {}}", "metrics: expected an array"},
        {"[1]", "c.json: expected an object"},
        {"{\"figures\": [{\"key\": \"sampler_late\", \"better\": \"lower\", \"gate\": true}]}",
         "figures[0].gate: \"sampler_late\" is the sampler's own and is never gated"},
        {"{\"figures\": [{\"key\": \"samples\", \"gate\": true}]}", "cannot be gated"},
        {"{\"figures\": [{\"key\": \"samples\", \"gate\": 1}]}",
         "figures[0].gate: expected true or false"},
        {"{\"metrics\": [{\"id\": \"x\", \"series\": \"y\"}]}",
         "metrics[0].series: expected a catalog metric id (figures only)"},
        {"{\"phases\": {\"better\": \"none\", \"gate\": true}}", "phases.gate"},
        {"{\n  \"z\": 3,\n  oops\n}", "c.json:3:"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        c = NULL;
        pm_error_clear(&err);
        assert_int_not_equal(pm_compare_cfg_parse("c.json", bad[i].text, &c, &err), 0);
        assert_null(c);
        if (!strstr(err.msg, bad[i].msg))
            fail_msg("row %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i].msg);
    }
}

/* The shipped compare.json names exactly the shipped catalog's metrics. */
static void test_shipped_cfg_covers_catalog(void **state)
{
    (void)state;
    char p1[4200], p2[4200];
    snprintf(p1, sizeof p1, "%s/../templates/metrics.json", pm_test_fixtures());
    snprintf(p2, sizeof p2, "%s/../templates/compare.json", pm_test_fixtures());
    pm_catalog *cat = NULL;
    pm_compare_cfg *cfg = NULL;
    pm_error err;
    assert_int_equal(pm_catalog_load(p1, &cat, &err), 0);
    if (pm_compare_cfg_load(p2, &cfg, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(cfg->nmetrics, cat->n);
    for (size_t i = 0; i < cat->n; i++)
        if (!pm_compare_cfg_metric(cfg, cat->m[i].id))
            fail_msg("compare.json lacks %s", cat->m[i].id);
    assert_true(cfg->nfigures >= 10);
    assert_float_equal(cfg->threshold_pct, PM_COMPARE_DEFAULT_THRESHOLD, 0);
    pm_compare_cfg_free(cfg);
    pm_catalog_free(cat);
}

/* ---- the synthetic pair ------------------------------------------------------ */

typedef struct job_spec {
    const char *dir;
    double start;       /* epoch s */
    size_t n;           /* samples at 1 s */
    double wave_phase;  /* the "noise" of the CPU series */
    double compute_end; /* s after the start */
} job_spec;

static const job_spec JOBS[] = {
    {"base", 1.7e9, 120, 0.0, 110},
    {"rerun", 1.7e9 + 3600, 120, 2.0, 110},
    {"slow", 1.7e9 + 7200, 156, 0.0, 146},
};

static int write_events(const char *path, const char *host, double start, double compute_end)
{
    static const struct {
        const char *name, *edge;
        int end;
        double at;
    } marks[] = {{"setup", "start", 0, 1},
                 {"setup", "end", 0, 20},
                 {"compute", "start", 0, 20},
                 {"compute", "end", 1, 0}};
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    for (size_t i = 0; i < sizeof marks / sizeof *marks; i++) {
        double e = marks[i].end ? compute_end : marks[i].at;
        long long wall = (long long)llround((start + e) * 1e9),
                  mono = 1000000000LL + llround(e * 1e9);
        fprintf(
            f,
            "{\"perfmon_event\":1,\"host\":\"%s\",\"pid\":1,\"wall_ns\":\"%lld\",\"mono_ns\":\"%lld\","
            "\"name\":\"%s\",\"edge\":\"%s\",\"attrs\":{}}\n",
            host, wall, mono, marks[i].name, marks[i].edge);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static int gen_all(const char *root)
{
    char path[4200];
    pm_error err;
    for (size_t j = 0; j < sizeof JOBS / sizeof *JOBS; j++) {
        snprintf(path, sizeof path, "%s/%s", root, JOBS[j].dir);
        mkdir(path, 0755);
        for (int h = 1; h <= 2; h++) {
            char host[16];
            snprintf(host, sizeof host, "node-%d", h);
            pm_synth s;
            pm_synth_init(&s, host);
            s.start_s = JOBS[j].start;
            s.n = JOBS[j].n;
            s.cpu_wave = 6;
            s.wave_period_s = 5;
            s.wave_phase = JOBS[j].wave_phase + h;
            s.format = PM_FMT_BIN1; /* the fixtures stay binary version 1 */
            snprintf(path, sizeof path, "%s/%s/%s.pmp", root, JOBS[j].dir, host);
            unlink(path);
            if (pm_synth_write(path, &s, &err) != 0) {
                fprintf(stderr, "%s\n", err.msg);
                return -1;
            }
            snprintf(path, sizeof path, "%s/%s/%s.events", root, JOBS[j].dir, host);
            if (write_events(path, host, JOBS[j].start, JOBS[j].compute_end) != 0)
                return -1;
        }
    }
    return 0;
}

static void test_fixtures_match_generator(void **state)
{
    (void)state;
    char dir[4200];
    if (getenv("PM_REGEN_FIXTURES")) {
        snprintf(dir, sizeof dir, "%s/compare", pm_test_fixtures());
        mkdir(dir, 0755);
        assert_int_equal(gen_all(dir), 0);
        return;
    }
    char *tmp = pm_test_tmpdir();
    assert_non_null(tmp);
    snprintf(dir, sizeof dir, "%s", tmp);
    assert_int_equal(gen_all(dir), 0);
    for (size_t j = 0; j < sizeof JOBS / sizeof *JOBS; j++)
        for (int h = 1; h <= 2; h++)
            for (int k = 0; k < 2; k++) {
                char p1[4400], p2[4400];
                const char *ext = k ? "events" : "pmp";
                snprintf(p1, sizeof p1, "%s/%s/node-%d.%s", dir, JOBS[j].dir, h, ext);
                snprintf(p2, sizeof p2, "%s/compare/%s/node-%d.%s", pm_test_fixtures(), JOBS[j].dir,
                         h, ext);
                char why[9000];
                if (pm_test_same_file(p1, p2, why, sizeof why) != 0)
                    fail_msg("%s (PM_REGEN_FIXTURES=1 rewrites the fixtures)", why);
            }
    pm_test_rmrf(dir);
}

static pm_analysis *analyse(const char *job)
{
    char dir[4200], cat[4200];
    snprintf(dir, sizeof dir, "%s/compare/%s", pm_test_fixtures(), job);
    snprintf(cat, sizeof cat, "%s/../templates/metrics.json", pm_test_fixtures());
    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    o.catalog_path = cat;
    o.rules_path = NULL;
    const char *paths[1] = {dir};
    pm_analysis *a = NULL;
    pm_error err;
    if (pm_analysis_run(paths, 1, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    return a;
}

static pm_comparison *compare(const pm_analysis *a, const pm_analysis *b, double threshold)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/../templates/compare.json", pm_test_fixtures());
    pm_compare_cfg *cfg = NULL;
    pm_error err;
    if (pm_compare_cfg_load(p, &cfg, &err) != 0)
        fail_msg("%s", err.msg);
    pm_compare_opts o;
    pm_compare_opts_init(&o);
    o.threshold_pct = threshold;
    pm_comparison *c = NULL;
    assert_int_equal(pm_compare_run(a, b, cfg, &o, &c, &err), 0);
    pm_compare_cfg_free(cfg);
    return c;
}

static const pm_compare_row *find_row(const pm_comparison *c, int kind, const char *key,
                                      const char *phase)
{
    for (size_t i = 0; i < c->nrows; i++)
        if (c->rows[i].kind == kind && strcmp(c->rows[i].key, key) == 0 &&
            strcmp(c->rows[i].phase, phase) == 0)
            return &c->rows[i];
    fail_msg("no row %s %s", key, phase);
    return NULL;
}

static void test_synthetic_pair(void **state)
{
    (void)state;
    pm_analysis *base = analyse("base"), *rerun = analyse("rerun"), *slow = analyse("slow");

    /* The same job twice: every row the same, nothing significant. */
    pm_comparison *c = compare(base, base, NAN);
    assert_int_equal(c->count[PM_VERDICT_SAME], c->nrows);
    assert_int_equal(c->nphase_kinds, 2);
    pm_comparison_free(c);

    /* A rerun an hour later whose CPU "noise" has another phase. */
    c = compare(base, rerun, NAN);
    assert_int_equal(c->count[PM_VERDICT_WORSE], 0);
    const pm_compare_row *r = find_row(c, PM_CMP_METRIC, "cpu_usage", "");
    assert_true(fabs(r->pct) < 1);
    assert_false(r->significant);
    pm_comparison_free(c);
    /* With no threshold at all, the noise check alone keeps it quiet. */
    c = compare(base, rerun, 0);
    r = find_row(c, PM_CMP_METRIC, "cpu_usage", "");
    assert_int_equal(r->verdict, PM_VERDICT_NOISE);
    pm_comparison_free(c);

    /* 156 instead of 120 samples: wall time 155 s against 119 s, and so
     * CPU hours (16 CPUs on 2 nodes) +30.25 %. */
    c = compare(base, slow, NAN);
    r = find_row(c, PM_CMP_FIGURE, "wall_time_s", "");
    assert_float_equal(r->a.mean, 119, 1e-6);
    assert_float_equal(r->b.mean, 155, 1e-6);
    assert_int_equal(r->verdict, PM_VERDICT_WORSE);
    r = find_row(c, PM_CMP_FIGURE, "node_cpu_hours", "");
    assert_float_equal(r->a.mean, 2 * 119.0 * 16 / 3600, 1e-9);
    assert_float_equal(r->pct, 100 * 36.0 / 119, 1e-6);
    /* CPU hours inherit the noise of cpu_usage (its mean's relative
     * standard error, scaled to the figure): +30 % is within it here. */
    const pm_compare_row *cpu = find_row(c, PM_CMP_METRIC, "cpu_usage", "");
    assert_true(r->a.se > 0 && r->b.se > 0);
    assert_float_equal(r->a.se / r->a.mean, cpu->a.se / cpu->a.mean, 0.002);
    assert_false(r->significant);
    assert_int_equal(r->verdict, PM_VERDICT_NOISE);
    /* Only the wall time is gated: B is worse because of it alone. */
    assert_int_equal(c->gated_worse, 1);
    assert_int_equal(c->gated_better, 0);
    assert_int_equal(c->overall, PM_OVERALL_WORSE);
    /* The compute phase lasted 126 s instead of 90 s on both nodes. */
    r = find_row(c, PM_CMP_PHASE_DURATION, "duration", "compute");
    assert_float_equal(r->a.mean, 90, 1e-6);
    assert_float_equal(r->b.mean, 126, 1e-6);
    assert_int_equal(r->verdict, PM_VERDICT_WORSE);
    r = find_row(c, PM_CMP_PHASE_DURATION, "duration", "setup");
    assert_int_equal(r->verdict, PM_VERDICT_SAME);
    assert_true(c->count[PM_VERDICT_WORSE] >= 3);
    pm_comparison_free(c);
    /* Swapped: better, never worse. */
    c = compare(slow, base, NAN);
    assert_int_equal(c->overall, PM_OVERALL_BETTER);
    assert_int_equal(c->gated_worse, 0);
    /* --threshold 50 overrides the configuration: nothing is that much worse. */
    pm_comparison_free(c);
    c = compare(base, slow, 50);
    assert_int_equal(c->count[PM_VERDICT_WORSE], 0);
    assert_float_equal(c->threshold_pct, 50, 0);

    /* The overlay: both all-node series on elapsed time, A an hour and B
     * two hours after 1.7e9 but both from 0. */
    size_t row = (size_t)(find_row(c, PM_CMP_METRIC, "cpu_usage", "") - c->rows);
    pm_overlay ov;
    pm_error err;
    assert_int_equal(pm_overlay_build(c, row, &ov, &err), 0);
    assert_int_equal(ov.plot.nseries, 2);
    assert_int_equal(ov.plot.time_axis, PM_AXIS_ELAPSED);
    assert_float_equal(ov.series[0].t[0], 0, 1e-6);
    assert_float_equal(ov.series[1].t[0], 0, 1e-6);
    assert_float_equal(ov.series[1].t[ov.series[1].n - 1], 155, 1e-6);
    assert_string_equal(ov.label[0], "A: A (job synthetic)");
    assert_non_null(strstr(ov.title, "Average CPU Usage: mean A 49.97 %, B 50 %"));
    pm_overlay_free(&ov);
    size_t fig = (size_t)(find_row(c, PM_CMP_FIGURE, "wall_time_s", "") - c->rows);
    assert_int_equal(pm_overlay_build(c, fig, &ov, &err), PM_ENOENT);

    /* The JSON parses back with the verdict. */
    char *js = pm_compare_json_string(c);
    assert_non_null(js);
    assert_non_null(strstr(js, "\"verdict\":\t\"ok\""));
    free(js);
    pm_comparison_free(c);
    pm_analysis_free(base);
    pm_analysis_free(rerun);
    pm_analysis_free(slow);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_se_hand_values),
        cmocka_unit_test(test_same_job_twice),
        cmocka_unit_test(test_30pct_more_cpu_is_worse),
        cmocka_unit_test(test_noise_is_not_significant),
        cmocka_unit_test(test_judge_edges),
        cmocka_unit_test(test_judge_mirrors),
        cmocka_unit_test(test_entry_semantics),
        cmocka_unit_test(test_cfg_parse),
        cmocka_unit_test(test_shipped_cfg_covers_catalog),
        cmocka_unit_test(test_fixtures_match_generator),
        cmocka_unit_test(test_synthetic_pair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
