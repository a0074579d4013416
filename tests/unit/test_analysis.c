/* The whole engine on fixtures and synthetic profiles: node figures,
 * --compat=ska numbers, windows, repairs, rules, merging, strictness and
 * the --stats --json document (parsed back, compared by meaning). */
#include <cJSON.h>
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
#include "perfmon/analysis.h"
#include "perfmon/parse.h"
#include "perfmon/export.h"
#include "perfmon/writer.h"
#include "synth.h"

static void close_to(double a, double b, int line)
{
    if (!(fabs(a - b) <= 1e-9 * (1 + fabs(b))))
        fail_msg("line %d: got %.17g, want %.17g", line, a, b);
}
#define CLOSE(a, b) close_to((a), (b), __LINE__)

static char g_cat[4096], g_rules[4096];

static void opts(pm_analyze_opts *o)
{
    snprintf(g_cat, sizeof g_cat, "%s/../templates/metrics.json", pm_test_fixtures());
    snprintf(g_rules, sizeof g_rules, "%s/../templates/rules.json", pm_test_fixtures());
    pm_analyze_opts_init(o);
    o->catalog_path = g_cat;
    o->rules_path = g_rules;
}

static pm_analysis *run(const char *rel, const pm_analyze_opts *o)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", pm_test_fixtures(), rel);
    const char *paths[] = {path};
    pm_analysis *a = NULL;
    pm_error err;
    if (pm_analysis_run(paths, 1, o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    return a;
}

static const pm_metric_result *metric(const pm_analysis *a, const char *id)
{
    int m = pm_analysis_metric(a, id);
    if (m < 0)
        fail_msg("no metric %s", id);
    return &a->metrics[m];
}

static void test_node_figures(void **state)
{
    (void)state;
    pm_analyze_opts o;
    opts(&o);
    pm_analysis *a = run("perfmon", &o);
    assert_int_equal(a->in.nhosts, 4);
    assert_string_equal(a->in.hosts[0].name, "node-a");
    const pm_node_summary *n = &a->nodes[0];
    /* node-a: 40 samples at 1 s, 16 CPUs at 50 %, RAPL wrapping every 10 s */
    CLOSE(n->wall_time_s, 39);
    CLOSE(n->cpu_avg_utilization_pct, 50);
    CLOSE(n->cpu_avg_utilization_over40_pct, 100);
    CLOSE(n->cpu_avg_utilization_over80_pct, 0);
    CLOSE(n->node_cpu_hours, 39.0 / 3600 * 16);
    CLOSE(n->node_unused_cpu_hours, 39.0 / 3600 * 8);
    CLOSE(n->max_t_cpu_pct_per_cpu_max, 75);
    CLOSE(n->total_disk_io_read_mb, 78);
    CLOSE(n->total_net_io_ext_sent_mb, 39);
    CLOSE(n->energy_j, 39 * 210.0);
    CLOSE(n->energy_kwh, 39 * 210.0 / 3.6e6);
    CLOSE(n->avg_power_w, 210);
    CLOSE(n->proc_cpu_hours, 39 * 4.0 / 3600);
    CLOSE(n->sampler_cpu_pct, 0.1);
    CLOSE(n->sampler_late, 0);
    char title[256];
    pm_metric_title(metric(a, "net_out"), 1, title, sizeof title);
    /* four hosts at 1 MiB/s while all report */
    assert_true(strncmp(title, "Total Output Traffic (all-node series): mean ", 45) == 0);
    assert_non_null(strstr(title, " MiB/s, max 4 MiB/s"));
    pm_metric_title(metric(a, "cpu_usage"), 0, title, sizeof title);
    assert_string_equal(title, "Average CPU Usage/Node: 50 %, Max CPU Usage/Node: 50 %");
    /* node-b: the counter reset at sample 20 is repaired, not a spike */
    const pm_metric_result *net = metric(a, "net_out");
    CLOSE(a->nodes[1].total_net_io_ext_sent_mb, 38);
    assert_int_equal(net->host[1]->repaired, 1);
    CLOSE(net->host[1]->st.max, 1);
    CLOSE(net->host[1]->st.mean, 1);
    /* RAPL wraps are unwrapped exactly: a flat 200 W, 3 wraps per socket */
    const pm_metric_result *pk = metric(a, "rapl_package");
    assert_int_equal(pk->host[0]->wraps, 6);
    assert_int_equal(pk->host[0]->repaired, 0);
    CLOSE(pk->host[0]->st.min, 200);
    CLOSE(pk->host[0]->st.max, 200);
    assert_int_equal(pk->host[0]->qc.n[PM_Q_WRAP], 3); /* both sockets wrap together */
    /* node-c (JSON Lines) recorded no RAPL and no IB: absent, not zero */
    assert_null(pk->host[2]);
    assert_int_equal(pk->nhosts_with_data, 3);
    assert_true(isnan(a->nodes[2].energy_j));
    /* node-c's gap at sample 7 is NaN, excluded from statistics */
    const pm_metric_result *cpu = metric(a, "cpu_usage");
    assert_true(isnan(cpu->host[2]->v[7]));
    assert_int_equal(cpu->host[2]->qc.n[PM_Q_GAP], 1);
    assert_int_equal(cpu->host[2]->st.nvalid, 39);
    /* the torn file is a warning, its complete samples kept */
    assert_int_equal(a->in.hosts[3].n, 19);
    assert_int_equal(a->in.nwarnings, 2);
    assert_non_null(strstr(a->in.warnings[0], "torn"));
    /* and it has no end record (the sampler was killed): flagged, the
     * complete files are not */
    assert_string_equal(a->in.hosts[3].incomplete, "no end record");
    assert_non_null(strstr(a->in.warnings[1], "node-torn: incomplete: no end record"));
    for (size_t h = 0; h < 3; h++)
        assert_string_equal(a->in.hosts[h].incomplete, "");
    /* node-torn stopped after 18 s, the others ran 39 s: nothing slow;
     * the rules file flags only what exceeds the median */
    for (size_t i = 0; i < a->nnotes; i++)
        assert_string_not_equal(a->notes[i].rule, "slow_node");
    /* job figures */
    CLOSE(a->job.energy_j, 3 * 39 * 210.0 - 39 * 210.0 + 18 * 210.0);
    CLOSE(a->job.cpu_avg_utilization_pct, 50);
    pm_analysis_free(a);
}

static void test_compat_ska(void **state)
{
    (void)state;
    pm_analyze_opts o;
    opts(&o);
    o.compat_ska = 1;
    pm_analysis *a = run("ska/cpu_metrics.json", &o);
    /* hosts in sorted name order */
    assert_string_equal(a->in.hosts[0].name, "node-a");
    const pm_metric_result *cpu = metric(a, "cpu_usage");
    CLOSE(cpu->avg_per_node, (70 + 25) / 2.0);
    CLOSE(cpu->max_per_node, 90);
    /* combined by position, Average: 30 40 50 60 90 */
    assert_int_equal(cpu->agg.n, 5);
    CLOSE(cpu->agg.st.mean, 54);
    CLOSE(cpu->agg.t[0], 100.5);
    /* rates: first sample 0 and counted; the negative takes the previous */
    const pm_metric_result *net = metric(a, "net_out");
    CLOSE(net->host[1]->st.mean, 0.8);   /* 0 1 1 1 1 */
    CLOSE(net->host[0]->st.mean, 0.375); /* 0 .5 .5 .5 */
    CLOSE(net->avg_per_node, (0.8 + 0.375) / 2);
    CLOSE(net->agg.st.mean, 1.1); /* 0 1.5 1.5 1.5 1 */
    CLOSE(net->agg.st.max, 1.5);
    /* RAPL titles per socket: node-b's means 0.8 and 1.6 W, max 2 W; node-a
     * has no RAPL and counts as 0 W on both sockets, as in SKA's table */
    const pm_metric_result *pk = metric(a, "rapl_package");
    CLOSE(pk->avg_per_node, (0.8 + 1.6 + 0 + 0) / 4);
    assert_int_equal(pk->nhosts_with_data, 2);
    CLOSE(pk->max_per_node, 2);
    /* padded NaN held forward as SKA does: 100 150 200 200 200 */
    CLOSE(metric(a, "proc_cpu")->host[1]->st.mean, 170);
    pm_analysis_free(a);

    /* The default mode differs: NaN first rate, time weights, hold repair. */
    opts(&o);
    a = run("ska/cpu_metrics.json", &o);
    net = metric(a, "net_out");
    CLOSE(net->host[1]->st.mean, 1);
    CLOSE(net->host[0]->st.mean, 0.5);
    assert_int_equal(net->host[1]->repaired, 1);
    CLOSE(metric(a, "proc_cpu")->host[1]->st.mean, 150);
    pm_analysis_free(a);
}

static void test_window_and_repair_modes(void **state)
{
    (void)state;
    pm_analyze_opts o;
    opts(&o);
    o.has_start = o.has_end = 1;
    o.start_rel = o.end_rel = 1;
    o.start = 10;
    o.end = 19;
    pm_analysis *a = run("perfmon", &o);
    /* the job starts with node-c, 0.3 s before node-a: node-a keeps its
     * samples 10..18 */
    CLOSE(a->t_start, 1.7e9 + 9.7);
    assert_int_equal(a->in.hosts[0].n, 9);
    assert_int_equal(a->in.hosts[0].outside_window, 31);
    CLOSE(a->nodes[0].wall_time_s, 8);
    pm_analysis_free(a);

    static const struct {
        int mode;
        double reset_value; /* node-b net_out at the reset sample 20 */
        int q;
    } rows[] = {
        {PM_REPAIR_HOLD, 1, PM_Q_RESET},
        {PM_REPAIR_INTERP, 1, PM_Q_RESET},
        {PM_REPAIR_ZERO, 0, PM_Q_RESET},
        {PM_REPAIR_DROP, NAN, PM_Q_DROPPED},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        opts(&o);
        o.repair = rows[r].mode;
        a = run("perfmon", &o);
        const pm_series *s = metric(a, "net_out")->host[1];
        if (isnan(rows[r].reset_value))
            assert_true(isnan(s->v[20]));
        else
            CLOSE(s->v[20], rows[r].reset_value);
        assert_int_equal(s->q[20], rows[r].q);
        pm_analysis_free(a);
    }
}

static void test_rules_and_merge(void **state)
{
    (void)state;
    char *tmp = pm_test_tmpdir();
    assert_non_null(tmp);
    char dir[256], path[512];
    snprintf(dir, sizeof dir, "%s", tmp);
    pm_synth s;
    pm_error err;
    /* a leaking, mostly idle host */
    pm_synth_init(&s, "leaky");
    s.n = 800;
    s.cpu_pct = 10;
    s.rss_growth = 1048576;
    snprintf(path, sizeof path, "%s/leaky.pmp", dir);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    /* and a host whose sampler ran twice: two files, two formats */
    pm_synth_init(&s, "merged");
    s.n = 400;
    snprintf(path, sizeof path, "%s/part1.pmp", dir);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    s.start_s += 400;
    snprintf(path, sizeof path, "%s/part2.jsonl", dir);
    s.format = PM_FMT_JSONL;
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    /* and one that ran 1.25 times as long as the median node */
    pm_synth_init(&s, "slowpoke");
    s.n = 1000;
    snprintf(path, sizeof path, "%s/slowpoke.pmp", dir);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    pm_analyze_opts o;
    opts(&o);
    const char *paths[] = {dir};
    pm_analysis *a = NULL;
    if (pm_analysis_run(paths, 1, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(a->in.nhosts, 3);
    assert_int_equal(a->in.hosts[0].nfiles, 1);
    assert_string_equal(a->in.hosts[1].name, "merged");
    assert_int_equal(a->in.hosts[1].nfiles, 2);
    assert_string_equal(a->in.hosts[1].format, "mixed");
    assert_int_equal(a->in.hosts[1].n, 800);
    int low = 0, leak = 0, slow = 0;
    for (size_t i = 0; i < a->nnotes; i++) {
        low += strcmp(a->notes[i].rule, "low_cpu") == 0;
        if (strcmp(a->notes[i].rule, "slow_node") == 0) {
            slow++;
            assert_int_equal(a->notes[i].host, 2);
            CLOSE(a->notes[i].value, 999.0 / 799.0);
        }
        if (strcmp(a->notes[i].rule, "rss_growth") == 0) {
            leak++;
            assert_true(a->notes[i].value > 5);
            assert_non_null(strstr(a->notes[i].message, "leaky"));
        }
    }
    assert_int_equal(low, 1);
    assert_int_equal(leak, 1);
    assert_int_equal(slow, 1);

    /* --stats --json parses back with its documented keys. */
    char *js = pm_stats_json_string(a);
    cJSON *root = cJSON_Parse(js);
    assert_non_null(root);
    const cJSON *meta = cJSON_GetObjectItem(root, "perfmon_analyze");
    assert_int_equal(cJSON_GetObjectItem(meta, "schema")->valueint, PM_STATS_JSON_SCHEMA);
    const cJSON *job = cJSON_GetObjectItem(root, "job");
    CLOSE(cJSON_GetObjectItem(job, "cpu_avg_utilization_pct")->valuedouble, 110.0 / 3);
    const cJSON *node = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "nodes"), 0);
    assert_string_equal(cJSON_GetObjectItem(node, "host")->valuestring, "leaky");
    assert_true(cJSON_IsObject(cJSON_GetObjectItem(node, "clock")));
    const cJSON *m0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "metrics"), 0);
    assert_string_equal(cJSON_GetObjectItem(m0, "id")->valuestring, "cpu_usage");
    assert_true(cJSON_IsObject(cJSON_GetObjectItem(m0, "quality")));
    assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(root, "notes")) >= 2);
    cJSON_Delete(root);
    free(js);
    pm_analysis_free(a);
    pm_test_rmrf(dir);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    char *tmp = pm_test_tmpdir();
    char dir[256], path[512];
    snprintf(dir, sizeof dir, "%s", tmp);
    pm_analyze_opts o;
    opts(&o);
    pm_analysis *a = NULL;
    pm_error err;
    const char *paths[] = {dir};
    /* empty directory */
    assert_int_equal(pm_analysis_run(paths, 1, &o, &a, &err), PM_ENOENT);
    assert_non_null(strstr(err.msg, "holds no files"));
    /* missing path */
    const char *missing[] = {"/nonexistent/perfmon"};
    assert_int_equal(pm_analysis_run(missing, 1, &o, &a, &err), PM_ENOENT);
    /* one good profile and one malformed SKA file */
    pm_synth s;
    pm_synth_init(&s, "good");
    snprintf(path, sizeof path, "%s/good.pmp", dir);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    snprintf(path, sizeof path, "%s/bad.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"host_names\": [\"x\"],\n \"x\": {\"time_stamps\": [1,]}}\n", f);
    fclose(f);
    assert_int_equal(pm_analysis_run(paths, 1, &o, &a, &err), 0);
    assert_int_equal(a->in.nhosts, 1);
    assert_int_equal(a->in.nwarnings, 1);
    assert_non_null(strstr(a->in.warnings[0], "bad.json:2:"));
    pm_analysis_free(a);
    o.strict = 1;
    assert_int_equal(pm_analysis_run(paths, 1, &o, &a, &err), PM_EFORMAT);
    assert_non_null(strstr(err.msg, "bad.json:2:"));
    assert_null(a);
    /* bad window */
    o.strict = 0;
    o.has_start = o.has_end = 1;
    o.start = 2e9;
    o.end = 1.9e9;
    assert_int_equal(pm_analysis_run(paths, 1, &o, &a, &err), PM_EUSAGE);
    pm_test_rmrf(dir);
}

/* A sum over sockets with one socket missing a sample is missing there,
 * not a dip. */
static void test_socket_gap(void **state)
{
    (void)state;
    char *tmp = pm_test_tmpdir();
    char dir[256], path[512];
    snprintf(dir, sizeof dir, "%s", tmp);
    snprintf(path, sizeof path, "%s/h.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"host_name\": \"h\", \"time_stamps\": [0, 1, 2, 3, 4],\n"
          " \"rapl_powercap\": {\"package-0\": [0, 1e6, 2e6, 3e6, 4e6],\n"
          "                   \"package-1\": [0, 1e6, null, 3e6, 4e6]}}\n",
          f);
    fclose(f);
    pm_analyze_opts o;
    opts(&o);
    const char *paths[] = {dir};
    pm_analysis *a = NULL;
    pm_error err;
    if (pm_analysis_run(paths, 1, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    const pm_series *sr = metric(a, "rapl_package")->host[0];
    assert_int_equal(sr->ncolumns, 2);
    CLOSE(sr->v[1], 2);
    assert_true(isnan(sr->v[2]) && isnan(sr->v[3]));
    assert_int_equal(sr->q[2], PM_Q_GAP);
    CLOSE(sr->v[4], 2);
    CLOSE(sr->st.min, 2);
    pm_analysis_free(a);
    pm_test_rmrf(dir);
}

static void test_time_bounds(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int ok, rel;
        double v;
    } rows[] = {
        {"+90", 1, 1, 90},
        {"+2m", 1, 1, 120},
        {"30", 1, 1, 30},
        {"1700000000", 1, 0, 1700000000},
        {"2023-11-14T22:13:20Z", 1, 0, 1700000000},
        {"2023-11-14T22:13:20", 1, 0, 1700000000},
        {"yesterday", 0, 0, 0},
        {"", 0, 0, 0},
        {"-5", 0, 0, 0},
        {"2023-11-14T22:13:20+01", 0, 0, 0},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        double v = 0;
        int rel = -1;
        int rc = pm_parse_time_bound(rows[r].s, &v, &rel);
        if ((rc == 0) != rows[r].ok)
            fail_msg("row %zu (%s): rc %d", r, rows[r].s, rc);
        if (rows[r].ok) {
            assert_int_equal(rel, rows[r].rel);
            CLOSE(v, rows[r].v);
        }
    }
}

/* Column projection through the whole engine: a node profile with
 * columns read by nothing (cpu.idle, mem.free), one read only by the node
 * figures (mem.total), metric columns and a GPU's column (moved out of
 * the node's list, the flags of the columns after it with them).  The first
 * are not decoded; the figures and metrics come out as the written values
 * say (1,200 samples at 1 s, node1's in two files: cpu.percent 40, proc.rss 1000 + i,
 * mem.total 8 GiB, gpu.0.util 75). */
static void test_projection(void **state)
{
    (void)state;
    static const pm_column cols[] = {
        {.name = "cpu.percent", .unit = "%", .group = "cpu", .kind = PM_GAUGE, .type = PM_F64},
        {.name = "cpu.idle", .unit = "s", .group = "cpu", .kind = PM_COUNTER, .type = PM_F64},
        {.name = "mem.total", .unit = "B", .group = "memory", .kind = PM_GAUGE, .type = PM_U64},
        {.name = "gpu.0.util", .unit = "%", .group = "gpu", .kind = PM_GAUGE, .type = PM_F64},
        {.name = "mem.free", .unit = "B", .group = "memory", .kind = PM_GAUGE, .type = PM_U64},
        {.name = "proc.rss", .unit = "B", .group = "proc", .kind = PM_GAUGE, .type = PM_U64},
    };
    const size_t nc = sizeof cols / sizeof *cols, n = 600;
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s", pm_test_tmpdir());
    pm_error err;
    /* node1 in two files, merged by the analysis (a sampler restarted while
     * node2 went on): samples 0..599 and 600..1199; node2 in one file. */
    for (size_t part = 0; part < 3; part++) {
        snprintf(path, sizeof path, "%s/node%zu.pmp", dir, part);
        pm_profile_info in;
        memset(&in, 0, sizeof in);
        strcpy(in.host, part < 2 ? "node1" : "node2");
        strcpy(in.scheduler, "local");
        strcpy(in.job_id, "77");
        in.start_wall_ns = 1700000000000000000LL;
        in.start_mono_ns = 1000000000LL;
        in.interval_ns = 1000000000LL;
        pm_writer *w;
        assert_int_equal(pm_writer_open(&w, path, PM_FMT_BIN, &in, cols, nc, NULL, &err), 0);
        for (size_t i = part == 1 ? n : 0; i < (part == 0 ? n : 2 * n); i++) {
            pm_value v[6];
            uint8_t present[1] = {0x3f};
            v[0].f = 40;
            v[1].f = 0.5 * (double)i;
            v[2].u = 8ull << 30;
            v[3].f = 75;
            v[4].u = (4ull << 30) - 4096 * i;
            v[5].u = 1000 + i;
            int64_t t = (int64_t)i * in.interval_ns;
            assert_int_equal(
                pm_writer_sample(w, in.start_mono_ns + t, in.start_wall_ns + t, v, present, &err),
                0);
        }
        assert_int_equal(pm_writer_close(w, &err), 0);
    }
    pm_analyze_opts o;
    opts(&o);
    const char *paths[] = {dir};
    pm_analysis *a = NULL;
    if (pm_analysis_run(paths, 1, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(a->in.nhosts, 4); /* the nodes and their GPUs */
    const pm_host *node = NULL, *gpu = NULL;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        const char *name = pm_profile_host(a->in.hosts[h].prof);
        if (strcmp(name, "node1") == 0)
            node = &a->in.hosts[h];
        else if (strcmp(name, "gpu-0.node1") == 0)
            gpu = &a->in.hosts[h];
    }
    assert_non_null(node);
    assert_non_null(gpu);
    const pm_profile *p = node->prof;
    assert_int_equal(p->ncols, nc - 1); /* gpu.0.util moved to the GPU */
    assert_non_null(p->unread);
    static const char *const skipped[] = {"cpu.idle", "mem.free"};
    static const char *const read[] = {"cpu.percent", "mem.total", "proc.rss"};
    for (size_t k = 0; k < 2; k++) {
        int c = pm_profile_column(p, skipped[k]);
        assert_true(c >= 0);
        assert_true(p->unread[c]);
    }
    for (size_t k = 0; k < 3; k++) {
        int c = pm_profile_column(p, read[k]);
        assert_true(c >= 0);
        assert_false(p->unread[c]);
    }
    CLOSE(node->mem_total, (double)(8ull << 30));
    const pm_node_summary *ns = &a->nodes[node - a->in.hosts];
    CLOSE(ns->cpu_avg_utilization_pct, 40);
    CLOSE(ns->proc_peak_rss_bytes, 1000 + (double)(2 * n - 1));
    assert_int_equal(node->n, 2 * n);
    CLOSE(a->nodes[gpu - a->in.hosts].gpu_avg_utilization_pct, 75);
    CLOSE(metric(a, "cpu_usage")->all.mean, 40);
    pm_analysis_free(a);
    pm_test_rmrf(dir);
}

/* The stopped rule (templates/rules.json node_stopped) on generated nodes
 * without a process tree (so their node CPU is the job's): 80 % until a
 * node goes idle at 1 % from sample idle_from of 121 at 1 s.  It fires on
 * a node stopped for 10 % of the job or more while most others go on,
 * with the onset (the start of the first idle interval, sample
 * idle_from - 1), in memory and with --stream alike. */
static void test_rule_stopped(void **state)
{
    (void)state;
    static const struct {
        size_t hosts, nidle, idle_from; /* the first nidle hosts go idle */
        int fires;
    } rows[] = {
        {4, 1, 60, 1},  /* half the job: named, onset sample 59 */
        {4, 1, 100, 1}, /* the last 17 %: named */
        {4, 1, 115, 0}, /* the last 5 %: below 10 % of the job */
        {4, 2, 60, 0},  /* half the nodes: the job's own pattern, not a node */
        {1, 1, 60, 0},  /* one node: no others that went on */
        {4, 0, 0, 0},   /* steady */
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        for (int stream = 0; stream <= 1; stream++) {
            char *tmp = pm_test_tmpdir();
            assert_non_null(tmp);
            pm_error err;
            for (size_t k = 0; k < rows[r].hosts; k++) {
                char host[16], path[512];
                snprintf(host, sizeof host, "n%zu", k);
                snprintf(path, sizeof path, "%s/%s.pmp", tmp, host);
                pm_synth s;
                pm_synth_init(&s, host);
                s.n = 121;
                s.groups = PM_SYNTH_IB; /* no process tree */
                s.cpu_pct = 80;
                if (k < rows[r].nidle) {
                    s.idle_from = rows[r].idle_from;
                    s.idle_pct = 1;
                }
                if (pm_synth_write(path, &s, &err) != 0)
                    fail_msg("%s", err.msg);
            }
            pm_analyze_opts o;
            opts(&o);
            o.stream = stream;
            const char *paths[] = {tmp};
            pm_analysis *a = NULL;
            if (pm_analysis_run(paths, 1, &o, &a, &err) != 0)
                fail_msg("%s", err.msg);
            const pm_note *hit = NULL;
            for (size_t i = 0; i < a->nnotes; i++)
                if (strcmp(a->notes[i].rule, "node_stopped") == 0) {
                    if (hit)
                        fail_msg("row %zu: node_stopped twice", r);
                    hit = &a->notes[i];
                }
            if (rows[r].fires != (hit != NULL))
                fail_msg("row %zu%s: node_stopped %s", r, stream ? " (--stream)" : "",
                         hit ? hit->message : "did not fire");
            if (hit) {
                assert_string_equal(a->in.hosts[hit->host].name, "n0");
                /* (CLOSE's relative bound is 1.7 s at these times) */
                if (fabs(hit->t - (1.7e9 + (double)(rows[r].idle_from - 1))) > 1e-3)
                    fail_msg("row %zu: onset %.3f", r, hit->t - 1.7e9);
                CLOSE(hit->value, (double)(121 - rows[r].idle_from) / 120 * 100);
                assert_non_null(strstr(hit->message, "from 80 % to 1 % for the last"));
                assert_non_null(strstr(hit->message, "while the other 3 nodes went on"));
            }
            pm_analysis_free(a);
            pm_test_rmrf(tmp);
        }
    }
}

/* A JSON Lines profile of host at path: 101 samples at 1 s from 1.7e9 of
 * the columns cols[ncols] (a name, then 'c' counter or 'g' gauge), the
 * value of column c at sample i from val(c, i). */
static void write_jsonl(const char *path, const char *host, const char *const *cols, size_t ncols,
                        double (*val)(size_t c, size_t i))
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"format\":\"perfmon-profile\",\"version\":1,\"host\":\"%s\",\"job_id\":\"j\","
            "\"start\":1700000000,\"start_mono\":10,\"interval\":1,\"run_id\":\"0000000000000001\","
            "\"columns\":[",
            host);
    for (size_t c = 0; c < ncols; c++)
        fprintf(
            f,
            "%s{\"name\":\"%s\",\"unit\":\"1\",\"group\":\"x\",\"kind\":\"%s\",\"type\":\"f64\"}",
            c ? "," : "", cols[c] + 1, cols[c][0] == 'c' ? "counter" : "gauge");
    fprintf(f, "]}\n");
    for (size_t i = 0; i <= 100; i++) {
        fprintf(f, "{\"t\":%zu,\"mono\":%zu,\"v\":[", 1700000000 + i, 10 + i);
        for (size_t c = 0; c < ncols; c++)
            fprintf(f, "%s%.17g", c ? "," : "", val(c, i));
        fprintf(f, "]}\n");
    }
    assert_int_equal(fclose(f), 0);
}

/* Columns: node memory, the cgroup's memory and limit, PSI memory full of
 * the cgroup and of the node, throttled and all periods. */
static const char *const SIGN_COLS[] = {
    "gmem.percent",  "gcg.mem_current",           "gcg.mem_limit",  "ccg.psi_mem_full",
    "cpsi.mem_full", "ccg.cpu_throttled_periods", "ccg.cpu_periods"};
static int g_sign_row;
static double sign_val(size_t c, size_t i)
{
    double x = (double)i;
    switch (c) {
    case 0: /* node memory: row 0 climbs 50 -> 95 % (90 % first at sample 89) */
        return g_sign_row == 0 ? 50 + 0.45 * x : 50;
    case 1: /* cgroup memory: row 1 climbs to 99 of 100 (90 first at 90) */
        return g_sign_row == 1 ? x * 0.99 : 10;
    case 2: return 100;
    case 3: /* the cgroup stalls 40 % of each second from sample 50 (row 2) */
        return g_sign_row == 2 && i > 50 ? (x - 50) * 0.4 : 0;
    case 4: /* the node stalls, but the cgroup's own column comes first */ return 0.5 * x;
    case 5: /* 30 % of the periods throttled from sample 80 (row 3) */
        return g_sign_row == 3 && i > 80 ? (x - 80) * 3 : 0;
    default: return x * 10;
    }
}

/* The memory and share rules on one host: the measure that fired, its
 * value and its onset, the same in memory and with --stream. */
static void test_rule_memory_share(void **state)
{
    (void)state;
    static const struct {
        const char *rule; /* the one note of a memory or share rule */
        double value, t;  /* t: s after the start */
        const char *words;
    } rows[] = {
        {"memory_near_capacity", 95, 89, "memory use reached 95 % of the node"},
        {"memory_near_capacity", 99, 91,
         "the job's cgroup memory reached 99 % of its limit of 100 B"},
        {"memory_pressure", 20, 50, "the job's processes all stalled waiting for memory 20 %"},
        {"cpu_throttled", 6, 80, "throttled it in 6 % of its scheduling periods"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        for (int stream = 0; stream <= 1; stream++) {
            g_sign_row = (int)r;
            char *tmp = pm_test_tmpdir();
            assert_non_null(tmp);
            char path[512];
            snprintf(path, sizeof path, "%s/j_h.jsonl", tmp);
            write_jsonl(path, "h", SIGN_COLS, sizeof SIGN_COLS / sizeof *SIGN_COLS, sign_val);
            pm_analyze_opts o;
            opts(&o);
            o.stream = stream;
            const char *paths[] = {tmp};
            pm_analysis *a = NULL;
            pm_error err;
            if (pm_analysis_run(paths, 1, &o, &a, &err) != 0)
                fail_msg("%s", err.msg);
            const pm_note *hit = NULL;
            for (size_t i = 0; i < a->nnotes; i++) {
                const pm_note *n = &a->notes[i];
                if (!strcmp(n->type, "memory") || !strcmp(n->type, "share")) {
                    /* the node's PSI is 50 %, but the cgroup's own comes first */
                    if (hit || strcmp(n->rule, rows[r].rule) != 0)
                        fail_msg("row %zu%s: unexpected note %s", r, stream ? " (--stream)" : "",
                                 n->message);
                    hit = n;
                }
            }
            if (!hit)
                fail_msg("row %zu%s: no %s note", r, stream ? " (--stream)" : "", rows[r].rule);
            CLOSE(hit->value, rows[r].value);
            if (fabs(hit->t - (1700000000 + rows[r].t)) > 1e-3)
                fail_msg("row %zu: onset %.3f, want %.0f", r, hit->t - 1700000000, rows[r].t);
            if (!strstr(hit->message, rows[r].words))
                fail_msg("row %zu: \"%s\" lacks \"%s\"", r, hit->message, rows[r].words);
            pm_analysis_free(a);
            pm_test_rmrf(tmp);
        }
    }
}

/* A per-host rule without what it needs is refused with its place. */
static void test_rule_bad_share(void **state)
{
    (void)state;
    char *tmp = pm_test_tmpdir();
    assert_non_null(tmp);
    char rules[512], path[512];
    snprintf(rules, sizeof rules, "%s/rules.json", tmp);
    FILE *f = fopen(rules, "w");
    assert_non_null(f);
    fputs("{\"rules\": [{\"id\": \"p\", \"type\": \"share\", \"op\": \">\", "
          "\"threshold\": 10, \"message\": \"m\"}]}\n",
          f);
    assert_int_equal(fclose(f), 0);
    pm_synth s;
    pm_synth_init(&s, "n0");
    pm_error err;
    snprintf(path, sizeof path, "%s/n0.pmp", tmp);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    pm_analyze_opts o;
    opts(&o);
    o.rules_path = rules;
    const char *paths[] = {path};
    pm_analysis *a = NULL;
    assert_int_equal(pm_analysis_run(paths, 1, &o, &a, &err), PM_EFORMAT);
    assert_null(a);
    assert_non_null(strstr(err.msg, "rules[0].sources: a share rule needs 1 to 4 sources"));
    pm_test_rmrf(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_figures),      cmocka_unit_test(test_projection),
        cmocka_unit_test(test_compat_ska),        cmocka_unit_test(test_window_and_repair_modes),
        cmocka_unit_test(test_rules_and_merge),   cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_socket_gap),        cmocka_unit_test(test_time_bounds),
        cmocka_unit_test(test_rule_stopped),      cmocka_unit_test(test_rule_bad_share),
        cmocka_unit_test(test_rule_memory_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
