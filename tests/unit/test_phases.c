/* Job phases: marks written by many processes at once (none lost or torn),
 * the events reader (a torn line skipped, the rest kept), pairing (nested,
 * repeated, keyed, one-shot, unmatched), phase statistics over an analysis
 * (durations, start spread, resource use during a phase), and the Chrome
 * trace parsed back. */
#include <cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfmon/analysis.h"
#include "perfmon/export.h"
#include "perfmon/fileio.h"
#include "perfmon/phase.h"
#include "perfmon/phase_stats.h"
#include "synth.h"
#include "testutil.h"

/* An events line at wall time t (s since the epoch). */
static void put_event(FILE *f, const char *host, const char *name, const char *edge, double t,
                      const char *attrs, double diff)
{
    fprintf(f,
            "{\"perfmon_event\":1,\"host\":\"%s\",\"pid\":1,\"wall_ns\":\"%lld\","
            "\"mono_ns\":\"%lld\",\"name\":\"%s\",\"edge\":\"%s\"",
            host, (long long)llround(t * 1e9), (long long)llround((t - 1.7e9 + 50) * 1e9), name,
            edge);
    if (diff >= 0)
        fprintf(f, ",\"diff_s\":%g", diff);
    fprintf(f, ",\"attrs\":%s}\n", attrs ? attrs : "{}");
}

static const pm_phase *find_phase(const pm_phase_set *s, const char *host, const char *name,
                                  const char *key, size_t nth)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].host, host) == 0 && strcmp(s->v[i].name, name) == 0 &&
            strcmp(s->v[i].key, key) == 0 && nth-- == 0)
            return &s->v[i];
    return NULL;
}

static void test_pairing(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char path[4200];
    snprintf(path, sizeof path, "%s/a.events", dir);
    FILE *f = fopen(path, "w");
    double t = 1.7e9;
    /* repeated */
    put_event(f, "n1", "load", "start", t + 0, NULL, -1);
    put_event(f, "n1", "load", "end", t + 10, NULL, -1);
    put_event(f, "n1", "load", "start", t + 20, NULL, -1);
    put_event(f, "n1", "load", "end", t + 25, NULL, -1);
    /* nested, same name: the inner end closes the inner start */
    put_event(f, "n1", "step", "start", t + 30, NULL, -1);
    put_event(f, "n1", "step", "start", t + 31, NULL, -1);
    put_event(f, "n1", "step", "end", t + 33, NULL, -1);
    put_event(f, "n1", "step", "end", t + 40, NULL, -1);
    /* keyed and interleaved, as Batch Shipyard's img */
    put_event(f, "n1", "pull", "start", t + 50, "{\"img\":\"a\",\"size\":\"3\"}", -1);
    put_event(f, "n1", "pull", "start", t + 51, "{\"img\":\"b\"}", -1);
    put_event(f, "n1", "pull", "end", t + 55, "{\"img\":\"a\",\"ok\":\"1\"}", -1);
    put_event(f, "n1", "pull", "end", t + 60, "{\"img\":\"b\"}", -1);
    /* one-shot */
    put_event(f, "n1", "save", "once", t + 70, NULL, 4.5);
    /* unmatched: an end without start, a start without end */
    put_event(f, "n1", "orphan", "end", t + 80, NULL, -1);
    put_event(f, "n2", "load", "start", t + 5, NULL, -1);
    /* a torn line in the middle and trailing garbage */
    fputs("{\"perfmon_event\":1,\"host\":\"n1\",\"na\n", f);
    put_event(f, "n2", "load", "end", t + 9, NULL, -1);
    put_event(f, "n2", "load", "start", t + 12, NULL, -1);
    fputs("not json at all\n", f);
    fclose(f);

    pm_event_list ev;
    size_t bad = 0;
    pm_error err;
    assert_int_equal(pm_events_read(path, &ev, &bad, &err), 0);
    assert_int_equal(bad, 2);
    assert_non_null(strstr(err.msg, "a.events:16:"));
    assert_int_equal(ev.n, 17);
    pm_phase_set ps;
    memset(&ps, 0, sizeof ps);
    assert_int_equal(pm_phases_pair(&ev, &ps, &err), 0);

    const pm_phase *p = find_phase(&ps, "n1", "load", "", 0);
    assert_non_null(p);
    assert_true(fabs(p->t1 - p->t0 - 10) < 1e-6);
    p = find_phase(&ps, "n1", "load", "", 1);
    assert_non_null(p);
    assert_true(fabs(p->t1 - p->t0 - 5) < 1e-6);
    p = find_phase(&ps, "n1", "step", "", 0); /* inner, closed first */
    assert_non_null(p);
    assert_true(fabs(p->t0 - (t + 31)) < 1e-6 && fabs(p->t1 - (t + 33)) < 1e-6);
    p = find_phase(&ps, "n1", "step", "", 1);
    assert_true(fabs(p->t0 - (t + 30)) < 1e-6 && fabs(p->t1 - (t + 40)) < 1e-6);
    p = find_phase(&ps, "n1", "pull", "a", 0);
    assert_non_null(p);
    assert_true(fabs(p->t1 - p->t0 - 5) < 1e-6);
    assert_non_null(strstr(p->attrs, "\"size\":\"3\""));
    assert_non_null(strstr(p->attrs, "\"ok\":\"1\"")); /* the end's attributes merged */
    p = find_phase(&ps, "n1", "pull", "b", 0);
    assert_true(fabs(p->t1 - p->t0 - 9) < 1e-6);
    p = find_phase(&ps, "n1", "save", "", 0);
    assert_true(fabs(p->t1 - (t + 70)) < 1e-6 && fabs(p->t1 - p->t0 - 4.5) < 1e-6);
    p = find_phase(&ps, "n2", "load", "", 0);
    assert_true(fabs(p->t1 - p->t0 - 4) < 1e-6);
    assert_int_equal(ps.n, 8);
    /* Two problems, each naming host, phase and time. */
    assert_int_equal(ps.nproblems, 2);
    int end_no_start = 0, start_no_end = 0;
    for (size_t i = 0; i < ps.nproblems; i++) {
        if (strstr(ps.problems[i], "n1: end of orphan at 2023-11-14T22:14:40.000Z has no start"))
            end_no_start = 1;
        if (strstr(ps.problems[i], "n2: start of load at 2023-11-14T22:13:32.000Z has no end"))
            start_no_end = 1;
    }
    assert_true(end_no_start && start_no_end);
    pm_phase_set_free(&ps);
    pm_event_list_free(&ev);
    pm_test_rmrf(dir);
    free(dir);
}

/* 16 processes x 200 marks each into one file: every event there, whole. */
static void test_concurrent_marks(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    enum { PROCS = 16, EACH = 200 };
    pid_t kids[PROCS];
    for (int k = 0; k < PROCS; k++) {
        kids[k] = fork();
        assert_true(kids[k] >= 0);
        if (kids[k] == 0) {
            char a1[64], a2[300];
            /* Long attributes make a torn write easy to see. */
            memset(a2, 'x', sizeof a2);
            memcpy(a2, "pad=", 4);
            a2[sizeof a2 - 1] = 0;
            for (int i = 0; i < EACH; i++) {
                snprintf(a1, sizeof a1, "img=p%d-%d", k, i);
                const char *attrs[2] = {a1, a2};
                pm_error err;
                if (pm_event_append(dir, "node-x", "work", i % 2 ? PM_EDGE_END : PM_EDGE_START, NAN,
                                    attrs, 2, &err) != 0)
                    _exit(1);
            }
            _exit(0);
        }
    }
    for (int k = 0; k < PROCS; k++) {
        int st;
        assert_int_equal(waitpid(kids[k], &st, 0), kids[k]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/node-x.events", dir);
    pm_event_list ev;
    size_t bad = 0;
    pm_error err;
    assert_int_equal(pm_events_read(path, &ev, &bad, &err), 0);
    assert_int_equal(bad, 0);
    assert_int_equal(ev.n, PROCS * EACH);
    /* Each (process, i) exactly once. */
    static unsigned char seen[PROCS][EACH];
    memset(seen, 0, sizeof seen);
    for (size_t i = 0; i < ev.n; i++) {
        int k, j;
        assert_int_equal(sscanf(ev.v[i].key, "p%d-%d", &k, &j), 2);
        assert_true(k >= 0 && k < PROCS && j >= 0 && j < EACH);
        assert_int_equal(seen[k][j]++, 0);
        assert_string_equal(ev.v[i].host, "node-x");
    }
    pm_event_list_free(&ev);
    pm_test_rmrf(dir);
    free(dir);
}

static void test_append_errors(void **state)
{
    (void)state;
    pm_error err;
    const char *bad_attr[1] = {"novalue"};
    assert_int_equal(pm_event_append("/tmp", "h", "", PM_EDGE_START, NAN, NULL, 0, &err),
                     PM_EUSAGE);
    assert_int_equal(pm_event_append("/tmp", "h", "x", PM_EDGE_ONESHOT, NAN, NULL, 0, &err),
                     PM_EUSAGE);
    assert_int_equal(pm_event_append("/tmp", "h", "x", PM_EDGE_START, NAN, bad_attr, 1, &err),
                     PM_EUSAGE);
    assert_non_null(strstr(err.msg, "novalue"));
    assert_int_not_equal(
        pm_event_append("/nonexistent/dir", "h", "x", PM_EDGE_START, NAN, NULL, 0, &err), 0);
    assert_non_null(strstr(err.msg, "/nonexistent/dir/h.events"));
    /* Too long for one atomic line. */
    char big[5000];
    memset(big, 'v', sizeof big);
    memcpy(big, "k=", 2);
    big[sizeof big - 1] = 0;
    const char *attrs[1] = {big};
    assert_int_equal(pm_event_append("/tmp", "h", "x", PM_EDGE_START, NAN, attrs, 1, &err),
                     PM_EUSAGE);
}

/* Phases over an analysis: statistics and resource use inside phases. */
static void test_phase_stats_and_trace(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    double t0 = 1.7e9;
    for (int k = 0; k < 3; k++) {
        char host[32], path[4200];
        snprintf(host, sizeof host, "n%d", k);
        snprintf(path, sizeof path, "%s/%s.pmp", dir, host);
        pm_synth s;
        pm_synth_init(&s, host);
        s.n = 120;
        s.cpu_pct = 20 + 30 * k; /* 20, 50, 80 % */
        pm_error err;
        assert_int_equal(pm_synth_write(path, &s, &err), 0);
    }
    char ev[4200];
    snprintf(ev, sizeof ev, "%s/marks.events", dir);
    FILE *f = fopen(ev, "w");
    for (int k = 0; k < 3; k++) {
        char host[32];
        snprintf(host, sizeof host, "n%d", k);
        put_event(f, host, "compute", "start", t0 + 10 + k * 2, NULL, -1); /* starts 10, 12, 14 */
        put_event(f, host, "compute", "end", t0 + 50 + k * 2, NULL, -1);   /* 40 s each */
        put_event(f, host, "io", "once", t0 + 100, NULL, 10.0);
    }
    fclose(f);
    char cat[4200], rules[4200];
    snprintf(cat, sizeof cat, "%s/../templates/metrics.json", pm_test_fixtures());
    snprintf(rules, sizeof rules, "%s/../templates/rules.json", pm_test_fixtures());
    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    o.catalog_path = cat;
    o.rules_path = rules;
    pm_analysis *a = NULL;
    pm_error err;
    const char *paths[1] = {dir};
    assert_int_equal(pm_analysis_run(paths, 1, &o, &a, &err), 0);
    const pm_phase_stats *st = a->phase_stats;
    assert_non_null(st);
    assert_int_equal(st->nkinds, 2);
    const pm_phase_kind_stats *c = &st->kinds[0];
    assert_string_equal(c->name, "compute"); /* earliest first */
    assert_int_equal(c->hosts, 3);
    assert_int_equal(c->count, 3);
    assert_true(fabs(c->total_s - 120) < 1e-6);
    assert_true(fabs(c->avg_host_s - 40) < 1e-6);
    assert_true(fabs(c->start_spread_s - 4) < 1e-6);
    assert_true(fabs(c->start_sd_s - sqrt(8.0 / 3.0)) < 1e-6);
    int m = pm_analysis_metric(a, "cpu_usage");
    assert_true(m >= 0);
    assert_true(fabs(c->mean[m] - 50) < 1e-6); /* (20 + 50 + 80) / 3, equal durations */
    int pw = pm_analysis_metric(a, "rapl_package");
    if (pw >= 0 && isfinite(c->energy_j[pw])) /* 200 W per node for 40 s on 3 nodes */
        assert_true(fabs(c->energy_j[pw] - 3 * 40 * 200) < 3 * 40 * 200 * 0.02);
    assert_string_equal(st->kinds[1].name, "io");
    assert_true(fabs(st->kinds[1].total_s - 30) < 1e-6);

    /* JSON section. */
    char *js = pm_stats_json_string(a);
    cJSON *root = cJSON_Parse(js);
    assert_non_null(root);
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(root, "phases");
    const cJSON *k0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ph, "kinds"), 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(k0, "name")->valuestring, "compute");
    assert_true(fabs(cJSON_GetObjectItemCaseSensitive(k0, "start_spread_s")->valuedouble - 4) <
                1e-6);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ph, "nodes")), 6);
    cJSON_Delete(root);
    free(js);

    /* The trace parses back: X events for phases with their host and
     * duration, counter events, names for every process. */
    char tr[4200];
    snprintf(tr, sizeof tr, "%s/trace.json", dir);
    assert_int_equal(pm_export_trace(a, tr, &err), 0);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(pm_read_whole(tr, 64 << 20, &text, &len, &err), 0);
    root = cJSON_ParseWithLength(text, len);
    assert_non_null(root);
    const cJSON *evs = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    size_t nx = 0, nc = 0, nnames = 0;
    double compute_dur = 0;
    for (const cJSON *e = evs->child; e; e = e->next) {
        const char *phs = cJSON_GetObjectItemCaseSensitive(e, "ph")->valuestring;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (strcmp(phs, "X") == 0) {
            nx++;
            assert_true(cJSON_GetObjectItemCaseSensitive(e, "ts")->valuedouble >= 0);
            if (strcmp(name->valuestring, "compute") == 0)
                compute_dur += cJSON_GetObjectItemCaseSensitive(e, "dur")->valuedouble;
        } else if (strcmp(phs, "C") == 0) {
            nc++;
        } else if (strcmp(phs, "M") == 0 && strcmp(name->valuestring, "process_name") == 0) {
            nnames++;
        }
    }
    assert_int_equal(nx, 6);
    assert_true(fabs(compute_dur - 120e6) < 1);
    assert_true(nc > 100);
    assert_int_equal(nnames, 3);
    cJSON_Delete(root);
    free(text);

    /* Gzip-compressed by name. */
    snprintf(tr, sizeof tr, "%s/trace.json.gz", dir);
    assert_int_equal(pm_export_trace(a, tr, &err), 0);
    unsigned char magic[2] = {0, 0};
    f = fopen(tr, "rb");
    assert_int_equal(fread(magic, 1, 2, f), 2);
    fclose(f);
    assert_true(magic[0] == 0x1f && magic[1] == 0x8b);
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pairing),
        cmocka_unit_test(test_concurrent_marks),
        cmocka_unit_test(test_append_errors),
        cmocka_unit_test(test_phase_stats_and_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
