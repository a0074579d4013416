/* The verdict on page 1 of the report (verdict.c): byte and duration
 * scaling at their edges, and the sentences built from synthetic analyses
 * whose figures are known by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/units.h"
#include "perfmon/analysis.h"
#include "perfmon/phase_stats.h"
#include "perfmon/report.h"
#include "testutil.h"

static void bytes_is(double v, const char *want)
{
    char buf[32];
    pm_fmt_bytes(v, buf, sizeof buf);
    if (strcmp(buf, want) != 0)
        fail_msg("pm_fmt_bytes(%.17g) = \"%s\", want \"%s\"", v, buf, want);
}

static void test_fmt_bytes(void **state)
{
    (void)state;
    bytes_is(0, "0 B");
    bytes_is(1, "1 B");
    bytes_is(1023, "1023 B");
    bytes_is(1024, "1.0 KiB");
    bytes_is(1536, "1.5 KiB");
    bytes_is(99.94 * 1024, "99.9 KiB");
    bytes_is(100 * 1024, "100 KiB");
    bytes_is(1023 * 1024, "1023 KiB");
    bytes_is(1023.99 * 1024, "1.0 MiB"); /* not "1024 KiB" */
    bytes_is(1048576, "1.0 MiB");
    bytes_is(1.5 * 1099511627776.0, "1.5 TiB");
    /* the example: 1800270 MiB */
    bytes_is(1800270.0 * 1048576.0, "1.7 TiB");
    bytes_is(NAN, "-");
    bytes_is(INFINITY, "-");
    bytes_is(-1, "-");
    char small[4];
    pm_fmt_bytes(1.5 * 1099511627776.0, small, sizeof small);
    assert_string_equal(small, "1.5");
}

static void dur_is(double v, const char *want)
{
    char buf[32];
    pm_fmt_duration(v, buf, sizeof buf);
    if (strcmp(buf, want) != 0)
        fail_msg("pm_fmt_duration(%.17g) = \"%s\", want \"%s\"", v, buf, want);
}

static void test_fmt_duration(void **state)
{
    (void)state;
    dur_is(0, "0.0 s");
    dur_is(4.24, "4.2 s");
    dur_is(30, "30 s");
    dur_is(59.4, "59 s");
    dur_is(90, "1.5 min");
    dur_is(3599, "1.0 h");
    dur_is(3 * 3600 + 720, "3.2 h");
    dur_is(NAN, "-");
    dur_is(-5, "-");
}

static void energy_is(double v, const char *want)
{
    char buf[32];
    pm_fmt_energy(v, buf, sizeof buf);
    if (strcmp(buf, want) != 0)
        fail_msg("pm_fmt_energy(%.17g) = \"%s\", want \"%s\"", v, buf, want);
}

/* Hand-scaled: 1 Wh = 3600 J, 1 kWh = 3.6 MJ. */
static void test_fmt_energy(void **state)
{
    (void)state;
    energy_is(0, "0.0 J");
    energy_is(12.34, "12.3 J");
    energy_is(850, "850 J");
    energy_is(999.96, "1.0 kJ");
    energy_is(2500, "2.5 kJ");
    energy_is(3600, "1.0 Wh");
    energy_is(7200, "2.0 Wh");
    energy_is(0.002 * 3.6e6, "2.0 Wh"); /* the old "0.002 kWh" */
    energy_is(150 * 3600.0, "150 Wh");
    energy_is(3.6e6, "1.0 kWh");
    energy_is(7.26 * 3.6e6, "7.3 kWh");
    energy_is(998 * 3.6e6, "998 kWh");
    energy_is(2.5 * 3.6e9, "2.5 MWh");
    energy_is(NAN, "-");
    energy_is(-1, "-");
}

/* A synthetic analysis of n nodes: every figure NaN, then set by hand. */
typedef struct fake {
    pm_analysis a;
    pm_host hosts[8];
    pm_node_summary nodes[8];
    char names[8][16];
} fake;

static void nan_summary(pm_node_summary *s)
{
    double *d = (double *)s;
    for (size_t i = 0; i < offsetof(pm_node_summary, repaired) / sizeof(double); i++)
        d[i] = NAN;
    s->repaired = s->dropped = 0;
}

static void fake_init(fake *f, size_t n)
{
    memset(f, 0, sizeof *f);
    f->a.in.nhosts = n;
    f->a.in.hosts = f->hosts;
    f->a.nodes = f->nodes;
    nan_summary(&f->a.job);
    for (size_t h = 0; h < n; h++) {
        snprintf(f->names[h], sizeof f->names[h], "n%zu", h + 1);
        f->hosts[h].name = f->names[h];
        nan_summary(&f->nodes[h]);
        f->nodes[h].wall_time_s = 30;
    }
}

static void has(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("\"%s\" not in the verdict: %s", want, text);
}

static void lacks(const char *text, const char *unwanted)
{
    if (strstr(text, unwanted))
        fail_msg("\"%s\" in the verdict: %s", unwanted, text);
}

/* 2 nodes of 4 CPUs for 30 s, n2 idle: 52 % used overall. */
static void test_idle_node_named(void **state)
{
    (void)state;
    fake f;
    fake_init(&f, 2);
    f.nodes[0].cpu_avg_utilization_pct = 100;
    f.nodes[1].cpu_avg_utilization_pct = 4;
    /* job sums: 2 x 4 CPUs x 30 s = 240 CPU-s allocated; 124.8 used */
    f.a.job.node_cpu_hours = 240.0 / 3600.0;
    f.a.job.node_unused_cpu_hours = (240.0 - 124.8) / 3600.0;
    char v[2048];
    size_t n = pm_verdict_text(&f.a, v, sizeof v);
    assert_true(n >= 2);
    has(v, "52 % of the allocated CPU was used (2.1 min of 4.0 min CPU time).");
    has(v, "n2 was nearly idle: its CPU averaged 4 % against 100 % on the other nodes.");
    /* n1 is not named "busiest" against one idle node (100 / 4 > 1.5):
     * the idle node explains the gap */
    lacks(v, "busiest");
    /* no memory, network or disk figures: no sentence about them */
    lacks(v, "memory");
    lacks(v, "network");
    lacks(v, "disk");
}

/* 4 nodes at 60 %, n3 at 95 %: n3 is the busy one, nobody idle. */
static void test_busy_and_slow_node(void **state)
{
    (void)state;
    fake f;
    fake_init(&f, 4);
    for (size_t h = 0; h < 4; h++)
        f.nodes[h].cpu_avg_utilization_pct = 60;
    f.nodes[2].cpu_avg_utilization_pct = 95;
    f.nodes[3].wall_time_s = 45; /* median 30 s: 1.5 times */
    char v[2048];
    pm_verdict_text(&f.a, v, sizeof v);
    lacks(v, "idle");
    has(v, "n3 was the busiest node: its CPU averaged 95 % against 60 % on the other nodes.");
    has(v, "n4 ran 1.5 times as long as the median node (45 s against 30 s)");
    /* 1.4 times the others' mean: not named */
    f.nodes[2].cpu_avg_utilization_pct = 84;
    f.nodes[3].wall_time_s = 35; /* 1.17 times the median */
    pm_verdict_text(&f.a, v, sizeof v);
    lacks(v, "busiest");
    lacks(v, "median");
}

/* Memory close to the limit on one node, network and disk bytes scaled. */
static void test_memory_and_bytes(void **state)
{
    (void)state;
    fake f;
    fake_init(&f, 3);
    f.nodes[0].max_t_mem_percent = 40;
    f.nodes[1].max_t_mem_percent = 97;
    f.nodes[2].max_t_mem_percent = 55;
    f.a.job.total_net_io_ext_sent_mb = 1800270;
    f.a.job.total_net_io_ext_recv_mb = 1024;
    f.a.job.total_disk_io_read_mb = 0;
    f.a.job.total_disk_io_write_mb = 0.5;
    char v[2048];
    pm_verdict_text(&f.a, v, sizeof v);
    has(v, "n2 came within 3 % of running out of memory (peak 97 % of the node).");
    has(v, "1.7 TiB were sent and 1.0 GiB received over the network.");
    has(v, "0 B were read from disk and 512 KiB written.");

    /* far from the limit: where memory peaked, no alarm */
    f.nodes[1].max_t_mem_percent = 50;
    f.a.job.total_net_io_ext_sent_mb = 0;
    f.a.job.total_net_io_ext_recv_mb = 0;
    pm_verdict_text(&f.a, v, sizeof v);
    has(v, "Memory peaked at 55 % of a node (n3).");
    lacks(v, "running out");
    has(v, "Nothing was sent over the network outside the nodes.");
}

/* Phases: 2 kinds over 2 nodes; "exchange" sends 4 MiB/s for 2 x 450 s
 * (3600 MiB), "setup" 1 MiB/s for 2 x 200 s (400 MiB): 90 % of 4000 MiB. */
static void test_phase_share(void **state)
{
    (void)state;
    fake f;
    fake_init(&f, 2);
    pm_metric_def defs[2];
    memset(defs, 0, sizeof defs);
    snprintf(defs[0].id, sizeof defs[0].id, "cpu_usage");
    snprintf(defs[0].unit, sizeof defs[0].unit, "%%");
    snprintf(defs[1].id, sizeof defs[1].id, "net_out");
    snprintf(defs[1].unit, sizeof defs[1].unit, "MiB/s");
    pm_metric_result res[2];
    memset(res, 0, sizeof res);
    res[0].def = &defs[0];
    res[1].def = &defs[1];
    f.a.metrics = res;
    f.a.nmetrics = 2;
    double mean_setup[2] = {50, 1}, mean_exchange[2] = {90, 4};
    pm_phase_kind_stats kinds[2];
    memset(kinds, 0, sizeof kinds);
    kinds[0].name = (char *)(uintptr_t) "setup";
    kinds[0].total_s = 400;
    kinds[0].mean = mean_setup;
    kinds[1].name = (char *)(uintptr_t) "exchange";
    kinds[1].total_s = 900;
    kinds[1].mean = mean_exchange;
    /* The bytes of the resource-use table, not mean x duration: 3000 of 4000 MiB. */
    kinds[0].net_sent_bytes = 400 * 1048576.0;
    kinds[1].net_sent_bytes = 3000 * 1048576.0; /* less than 900 s x 4 MiB/s: the bytes count */
    kinds[0].disk_write_bytes = kinds[1].disk_write_bytes = NAN;
    pm_phase_stats ps = {.kinds = kinds, .nkinds = 2, .nmetrics = 2};
    f.a.phase_stats = &ps;
    f.a.job.total_net_io_ext_sent_mb = 4000;
    f.a.job.total_net_io_ext_recv_mb = 4000;
    char v[2048];
    pm_verdict_text(&f.a, v, sizeof v);
    has(v,
        "3.9 GiB were sent and 3.9 GiB received over the network. 75 % of the bytes sent fell in phase `exchange`.");
    /* no phases: no phase sentence */
    f.a.phase_stats = NULL;
    pm_verdict_text(&f.a, v, sizeof v);
    lacks(v, "phase");
}

/* GPUs are hosts of the analysis, not nodes: never idle nodes. */
static void test_gpu_hosts_left_out(void **state)
{
    (void)state;
    fake f;
    fake_init(&f, 3);
    f.nodes[0].cpu_avg_utilization_pct = 80;
    f.nodes[1].cpu_avg_utilization_pct = 78;
    f.hosts[2].gpu = 1;
    f.nodes[2].wall_time_s = 300;
    char v[2048];
    pm_verdict_text(&f.a, v, sizeof v);
    lacks(v, "idle");
    lacks(v, "n3");
}

static void test_limits(void **state)
{
    (void)state;
    fake f;
    fake_init(&f, 2);
    char lines[8][160];
    size_t n = pm_verdict_limits(&f.a, lines, 8);
    assert_int_equal(n, 4);
    assert_string_equal(lines[0], "No PMU counters on these nodes: IPC and FLOP/s not measured.");
    snprintf(f.hosts[1].incomplete, sizeof f.hosts[1].incomplete, "no end record");
    f.nodes[0].perf_instructions = 1e9;
    f.nodes[1].energy_j = 100;
    f.nodes[0].total_net_io_ext_sent_mb = 0;
    f.nodes[1].proc_peak_rss_bytes = 1e6;
    n = pm_verdict_limits(&f.a, lines, 8);
    assert_int_equal(n, 1);
    assert_string_equal(lines[0], "Incomplete profile: no end record (n2).");
    /* the cap on lines holds */
    fake_init(&f, 1);
    assert_int_equal(pm_verdict_limits(&f.a, lines, 2), 2);
}

/* A 30-second job of 2 nodes, one idle: the shipped rules fire (they
 * wanted 60 s, so every job under a minute read "No rule fired"), the
 * minutes-long ones (leaks, capacity) do not. */
static void test_short_job_rules(void **state)
{
    (void)state;
    fake f;
    fake_init(&f, 2);
    f.nodes[0].cpu_avg_utilization_pct = 70;
    f.nodes[1].cpu_avg_utilization_pct = 5;
    f.nodes[0].proc_peak_rss_bytes = f.nodes[1].proc_peak_rss_bytes = 1e6;
    f.hosts[0].mem_total = f.hosts[1].mem_total = 64e9;
    f.a.job.wall_time_s = 30;
    f.a.job.cpu_avg_utilization_pct = 37.5;
    char rules[4096];
    snprintf(rules, sizeof rules, "%s/../templates/rules.json", pm_test_fixtures());
    pm_error err = {0};
    if (pm_rules_eval(&f.a, rules, &err) != 0)
        fail_msg("%s", err.msg);
    int low = 0, share = 0, other = 0;
    for (size_t i = 0; i < f.a.nnotes; i++) {
        const pm_note *n = &f.a.notes[i];
        if (!strcmp(n->rule, "low_cpu")) {
            low++;
            assert_int_equal(n->host, 1);
            assert_true(n->value == 5);
        } else if (!strcmp(n->rule, "low_cpu_share")) {
            share++;
            assert_int_equal(n->host, -1);
            assert_true(n->value == 37.5);
        } else {
            other++;
        }
    }
    assert_int_equal(low, 1);
    assert_int_equal(share, 1);
    assert_int_equal(other, 0); /* capacity wants 5 min, even at 0.002 % */
    char v[2048];
    pm_verdict_text(&f.a, v, sizeof v);
    has(v, "2 efficiency notes below (0 critical).");
    for (size_t i = 0; i < f.a.nnotes; i++)
        free(f.a.notes[i].message);
    free(f.a.notes);

    /* 5 s: too short for any of them */
    fake_init(&f, 2);
    f.nodes[1].cpu_avg_utilization_pct = 5;
    for (size_t h = 0; h < 2; h++)
        f.nodes[h].wall_time_s = 5;
    f.a.job.wall_time_s = 5;
    f.a.job.cpu_avg_utilization_pct = 5;
    if (pm_rules_eval(&f.a, rules, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(f.a.nnotes, 0);
    free(f.a.notes);
}

/* The verdict counts the notes as page 1 lists them: a rule that fired on
 * six of eight nodes is one line ("6 nodes (n1, n2, n3, n4 and 2 more)"),
 * so 6 node notes + 1 job note + 1 critical node note read as 3 notes, 1
 * critical (it said "8 efficiency notes" above a list of 3 lines). */
static void test_notes_counted_as_shown(void **state)
{
    (void)state;
    fake f;
    fake_init(&f, 8);
    pm_note nt[8];
    memset(nt, 0, sizeof nt);
    for (int k = 0; k < 6; k++)
        nt[k] = (pm_note){.rule = "low_cpu", .severity = PM_SEV_INFO, .host = k};
    nt[6] = (pm_note){.rule = "low_cpu_share", .severity = PM_SEV_WARNING, .host = -1};
    nt[7] = (pm_note){.rule = "mem_near_oom", .severity = PM_SEV_CRITICAL, .host = 7};
    f.a.notes = nt;
    f.a.nnotes = 8;
    pm_note_line *l = NULL;
    size_t n = pm_note_lines(&f.a, &l);
    assert_non_null(l);
    assert_int_equal(n, 3);
    assert_int_equal(l[0].severity, PM_SEV_CRITICAL);
    assert_int_equal(l[0].note, 7);
    assert_int_equal(l[1].note, 6); /* the job's warning */
    assert_int_equal(l[2].count, 6);
    assert_int_equal(l[2].shown, 4);
    assert_string_equal(l[2].hosts, "n1, n2, n3, n4");
    free(l);
    char v[2048];
    pm_verdict_text(&f.a, v, sizeof v);
    has(v, "3 efficiency notes below (1 critical).");
    f.a.notes = NULL;
    f.a.nnotes = 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmt_bytes),
        cmocka_unit_test(test_fmt_duration),
        cmocka_unit_test(test_fmt_energy),
        cmocka_unit_test(test_idle_node_named),
        cmocka_unit_test(test_busy_and_slow_node),
        cmocka_unit_test(test_memory_and_bytes),
        cmocka_unit_test(test_gpu_hosts_left_out),
        cmocka_unit_test(test_phase_share),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_short_job_rules),
        cmocka_unit_test(test_notes_counted_as_shown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
