/* How the job ended (job_end.c): the decision table row by row (each
 * state, precedence, the worst over hosts, old profiles without event
 * notes), the counter events (rises, resets, gaps, runs), hostile notes,
 * and the same answers in memory and with --stream.  Profiles are JSON
 * Lines written here (docs/format.md, "JSON Lines form"). */
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
#include "perfmon/job_end.h"

#define T0 1795824787.0 /* 2026-11-28T00:13:07Z */

static char g_cat[4096];

/* One host's profile: n samples at 1 s of cpu.percent and, when col is
 * set, one more column whose value at sample i is vals[i] (NAN: null). */
typedef struct host_spec {
    const char *host;
    size_t n;
    const char *col, *col_kind;
    const double *vals;
    const char *notes[4]; /* note texts, written after the samples */
    const char *end;      /* the end record's members after "t", or NULL: none */
    const char *command;
    const char *request; /* the metadata's request object, or NULL */
} host_spec;

static void write_host(const char *dir, const host_spec *s)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.jsonl", dir, s->host);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"format\":\"perfmon-profile\",\"version\":1,\"host\":\"%s\",\"job_id\":\"j1\","
            "\"scheduler\":\"local\",\"node_rank\":\"\",\"user\":\"u\",\"command\":\"%s\","
            "\"sampler\":\"test\",\"start\":%.6f,\"start_mono\":1.0,\"interval\":1.0,\"pid\":0,"
            "\"columns\":[{\"name\":\"cpu.percent\",\"unit\":\"%%\",\"group\":\"cpu\","
            "\"kind\":\"gauge\",\"type\":\"f64\"}",
            s->host, s->command ? s->command : "./app", T0);
    if (s->col)
        fprintf(f,
                ",{\"name\":\"%s\",\"unit\":\"1\",\"group\":\"events\",\"kind\":\"%s\","
                "\"type\":\"f64\"}",
                s->col, s->col_kind ? s->col_kind : "counter");
    fprintf(f, "]}\n");
    if (s->request)
        fprintf(f, "{\"metadata\":{\"hostname\":\"%s\",\"request\":%s}}\n", s->host, s->request);
    for (size_t i = 0; i < s->n; i++) {
        fprintf(f, "{\"t\":%.6f,\"mono\":%.6f,\"v\":[50", T0 + (double)i, 1.0 + (double)i);
        if (s->col) {
            if (isnan(s->vals[i]))
                fprintf(f, ",null");
            else
                fprintf(f, ",%.17g", s->vals[i]);
        }
        fprintf(f, "]}\n");
    }
    for (size_t k = 0; k < 4 && s->notes[k]; k++) {
        fputs("{\"note\":\"", f);
        for (const char *p = s->notes[k]; *p; p++) {
            if (*p == '"' || *p == '\\')
                fputc('\\', f);
            fputc(*p, f);
        }
        fputs("\"}\n", f);
    }
    if (s->end)
        fprintf(f, "{\"end\":{\"t\":%.6f,\"mono\":%.6f,%s}}\n", T0 + (double)s->n - 1, (double)s->n,
                s->end);
    assert_int_equal(fclose(f), 0);
}

/* Analyse the hosts in memory and with --stream: the same states and
 * events both ways (checked here), the in-memory analysis returned. */
static pm_analysis *analyse(const host_spec *hs, size_t nh, char *dir, size_t cap)
{
    snprintf(dir, cap, "%s", pm_test_tmpdir());
    for (size_t i = 0; i < nh; i++)
        write_host(dir, &hs[i]);
    snprintf(g_cat, sizeof g_cat, "%s/../templates/metrics.json", pm_test_fixtures());
    pm_analysis *out[2] = {NULL, NULL};
    for (int stream = 0; stream < 2; stream++) {
        pm_analyze_opts o;
        pm_analyze_opts_init(&o);
        o.catalog_path = g_cat;
        o.stream = stream;
        const char *paths[] = {dir};
        pm_error err;
        if (pm_analysis_run(paths, 1, &o, &out[stream], &err) != 0)
            fail_msg("%s", err.msg);
    }
    pm_analysis *a = out[0], *b = out[1];
    assert_int_equal(a->end.state, b->end.state);
    assert_int_equal(a->nevents, b->nevents);
    for (size_t i = 0; i < a->nevents; i++) {
        assert_int_equal(a->events[i].kind, b->events[i].kind);
        assert_string_equal(a->events[i].detail, b->events[i].detail);
    }
    char ta[512], tb[512];
    pm_end_text(a, SIZE_MAX, ta, sizeof ta);
    pm_end_text(b, SIZE_MAX, tb, sizeof tb);
    assert_string_equal(ta, tb);
    pm_analysis_free(b);
    return a;
}

static void done(pm_analysis *a, const char *dir)
{
    pm_analysis_free(a);
    pm_test_rmrf(dir);
}

/* ---- the decision table, one host ------------------------------------------ */

typedef struct row {
    const char *what;
    host_spec h;
    int state;
    int exit_status, signal, inferred;
    const char *text; /* a part of pm_end_text's words */
} row;

#define EXIT0 "{\"event\":\"exit\",\"t\":1795824796,\"pid\":7,\"status\":0}"
#define REQ "{\"scheduler\":\"slurm\",\"time_limit_s\":600,\"start_time\":1795824197}"
/* (the deadline is T0 + 10 s: start_time + 600) */
static const double OOMK[10] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1};
static const double MAXV[10] = {0, 0, 0, 0, 0, 2, 2, 2, 2, 2};

static const row ROWS[] = {
    {"exit 0 is completed",
     {"n1", 10, .notes = {EXIT0}, .end = "\"exit_status\":0,\"reason\":\"command exited\""},
     PM_END_COMPLETED,
     0,
     0,
     0,
     "completed (exit status 0)"},
    {"an exit event with a status is failed",
     {"n1", 10, .notes = {"{\"event\":\"exit\",\"t\":1795824796,\"pid\":7,\"status\":3}"},
      .end = "\"exit_status\":3,\"reason\":\"command exited\""},
     PM_END_FAILED,
     3,
     0,
     0,
     "exited with status 3"},
    {"an exit event with a signal",
     {"n1", 10,
      .notes = {"{\"event\":\"exit\",\"t\":1795824796,\"pid\":7,\"signal\":11,"
                "\"signal_name\":\"SIGSEGV\",\"core\":1}"},
      .end = "\"exit_status\":139,\"reason\":\"command exited\""},
     PM_END_SIGNAL,
     -1,
     11,
     0,
     "killed by signal 11 (SIGSEGV), core dumped"},
    {"an old profile: 137 and no exit event is read honestly",
     {"n1", 10, .end = "\"exit_status\":137,\"reason\":\"command exited\""},
     PM_END_FAILED,
     137,
     9,
     1,
     "exit status 137 (128 + 9: SIGKILL?)"},
    {"an old profile: 137 with the cgroup's oom_kill rising is an OOM kill",
     {"n1", 10, "cg.mem_events_oom_kill", "counter", OOMK,
      .end = "\"exit_status\":137,\"reason\":\"command exited\""},
     PM_END_OOM,
     137,
     9,
     1,
     "killed by the OOM killer on n1 at 2026-11-28T00:13:13Z, 3.0 s"},
    {"an oom_kill note of the job, the node ran out",
     {"n1", 10, "cg.mem_events_max", "counter", MAXV,
      .notes = {"{\"event\":\"oom_kill\",\"t\":1795824794,\"pid\":42,\"comm\":\"python3\","
                "\"constraint\":\"CONSTRAINT_NONE\",\"in_job\":1}",
                "{\"event\":\"exit\",\"t\":1795824795,\"pid\":7,\"signal\":9}"},
      .end = "\"exit_status\":137,\"reason\":\"command exited\""},
     PM_END_OOM,
     -1,
     9,
     0,
     "python3 (pid 42) on n1 at 2026-11-28T00:13:14Z, 2.0 s before the end; "
     "the whole node ran out of memory"},
    {"an oom_kill note of another process is an event only",
     {"n1", 10,
      .notes = {"{\"event\":\"oom_kill\",\"t\":1795824794,\"pid\":42,\"comm\":\"other\","
                "\"constraint\":\"CONSTRAINT_NONE\",\"in_job\":0}",
                EXIT0},
      .end = "\"exit_status\":0,\"reason\":\"command exited\""},
     PM_END_COMPLETED,
     0,
     0,
     0,
     "completed"},
    {"SIGTERM at the time limit is a timeout, over the signal",
     {"n1", 10, .request = REQ,
      .notes = {"{\"event\":\"signal\",\"t\":1795824796,\"signal\":15,\"forwarded\":1}",
                "{\"event\":\"exit\",\"t\":1795824796,\"pid\":7,\"signal\":15}"},
      .end = "\"exit_status\":143,\"reason\":\"command exited\""},
     PM_END_TIMEOUT,
     -1,
     15,
     0,
     "hit its time limit of 10.0 min"},
    {"a command that completes near its limit, even after a SIGTERM, completed",
     {"n1", 10, .request = REQ,
      .notes = {"{\"event\":\"signal\",\"t\":1795824795,\"signal\":15,\"forwarded\":1}", EXIT0},
      .end = "\"exit_status\":0,\"reason\":\"command exited\""},
     PM_END_COMPLETED,
     0,
     0,
     0,
     "completed"},
    {"an OOM kill near the limit is still the OOM kill",
     {"n1", 10, "cg.mem_events_oom_kill", "counter", OOMK, .request = REQ,
      .notes = {"{\"event\":\"signal\",\"t\":1795824796,\"signal\":15}"},
      .end = "\"exit_status\":137,\"reason\":\"command exited\""},
     PM_END_OOM,
     137,
     9,
     1,
     "killed by the OOM killer"},
    {"no command: sampling ended by SIGTERM",
     {"n1", 10, .command = "", .end = "\"exit_status\":-1,\"reason\":\"SIGTERM\""},
     PM_END_STOPPED,
     -1,
     0,
     0,
     "sampling ended: SIGTERM"},
    {"no end record",
     {"n1", 10, .end = NULL},
     PM_END_INCOMPLETE,
     -1,
     0,
     0,
     "incomplete: no end record"},
    {"hostile notes are plain notes",
     {"n1", 10,
      .notes = {"{\"event\":\"exit\",\"t\":\"soon\",\"status\":1}",
                "{\"event\":\"exit\",\"t\":1795824796,\"status\":1e300}",
                "{\"event\":", "{\"event\":\"oom_kill\",\"t\":-5,\"in_job\":1}"},
      .end = "\"exit_status\":0,\"reason\":\"command exited\""},
     PM_END_COMPLETED,
     0,
     0,
     0,
     "completed"},
};

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ROWS / sizeof *ROWS; i++) {
        const row *r = &ROWS[i];
        char dir[4096], text[512];
        pm_analysis *a = analyse(&r->h, 1, dir, sizeof dir);
        const pm_end *e = &a->ends[0];
        pm_end_text(a, SIZE_MAX, text, sizeof text);
        if (e->state != r->state || e->exit_status != r->exit_status || e->signal != r->signal ||
            e->signal_inferred != r->inferred || !strstr(text, r->text))
            fail_msg("%s: state %s status %d signal %d inferred %d: \"%s\"", r->what,
                     pm_end_state_name(e->state), e->exit_status, e->signal, e->signal_inferred,
                     text);
        assert_int_equal(a->end.state, r->state);
        done(a, dir);
    }
}

/* ---- several hosts: the worst, named ---------------------------------------- */

static void test_worst_over_hosts(void **state)
{
    (void)state;
    host_spec hs[3] = {
        {"n1", 10, .notes = {EXIT0}, .end = "\"exit_status\":0,\"reason\":\"command exited\""},
        {"n2", 10, .notes = {"{\"event\":\"exit\",\"t\":1795824796,\"pid\":7,\"status\":2}"},
         .end = "\"exit_status\":2,\"reason\":\"command exited\""},
        {"n3", 10, .notes = {EXIT0}, .end = "\"exit_status\":0,\"reason\":\"command exited\""},
    };
    char dir[4096], text[512];
    pm_analysis *a = analyse(hs, 3, dir, sizeof dir);
    assert_int_equal(a->end.state, PM_END_FAILED);
    assert_int_equal(a->end.host, 1);
    assert_int_equal(a->end.nhosts, 1);
    assert_int_equal(a->end.nnodes, 3);
    pm_end_text(a, SIZE_MAX, text, sizeof text);
    assert_string_equal(text, "exited with status 2 (failed) on n2");
    pm_end_sentence(a, text, sizeof text);
    assert_string_equal(text, "The job exited with status 2 (failed) on n2.");
    done(a, dir);

    /* a signal beats a failure, and an unfinished host does not hide it */
    hs[0].notes[0] = "{\"event\":\"exit\",\"t\":1795824796,\"pid\":7,\"signal\":6}";
    hs[0].end = "\"exit_status\":134,\"reason\":\"command exited\"";
    hs[2].end = NULL;
    hs[2].notes[0] = NULL;
    a = analyse(hs, 3, dir, sizeof dir);
    assert_int_equal(a->end.state, PM_END_SIGNAL);
    assert_int_equal(a->end.host, 0);
    assert_int_equal(a->ends[2].state, PM_END_INCOMPLETE);
    pm_end_text(a, SIZE_MAX, text, sizeof text);
    assert_non_null(strstr(text, "killed by signal 6 (SIGABRT) on n1 at "));
    done(a, dir);

    /* all completed: no host named */
    hs[0] = hs[1] = hs[2] =
        (host_spec){"n1", 10, .notes = {EXIT0}, .end = "\"exit_status\":0,\"reason\":\"x\""};
    hs[1].host = "n2";
    hs[2].host = "n3";
    a = analyse(hs, 3, dir, sizeof dir);
    assert_int_equal(a->end.nhosts, 3);
    pm_end_text(a, SIZE_MAX, text, sizeof text);
    assert_string_equal(text, "completed (exit status 0)");
    done(a, dir);
}

/* ---- counter events ---------------------------------------------------------- */

static void test_counter_events(void **state)
{
    (void)state;
    /* rises at 2 (+3) and 3 (+1) are one run; a reset at 5 is no event;
     * the gap at 7 and the rise across it (+2 at 8) is one */
    static const double ue[10] = {5, 5, 8, 9, 9, 0, 0, NAN, 2, 2};
    host_spec h = {"n1",
                   10,
                   "edac.ue",
                   "counter",
                   ue,
                   .notes = {EXIT0},
                   .end = "\"exit_status\":0,\"reason\":\"command exited\""};
    char dir[4096];
    pm_analysis *a = analyse(&h, 1, dir, sizeof dir);
    size_t n = 0;
    const pm_job_event *ev[4];
    for (size_t i = 0; i < a->nevents; i++)
        if (a->events[i].kind == PM_EV_EDAC_UE && n < 4)
            ev[n++] = &a->events[i];
    assert_int_equal(n, 2);
    assert_true(ev[0]->t == T0 + 2 && ev[0]->t_end == T0 + 3 && ev[0]->value == 4);
    assert_int_equal(ev[0]->severity, 2);
    assert_string_equal(ev[0]->detail, "uncorrected memory errors (EDAC) +4 over 1.0 s");
    assert_true(ev[1]->t == T0 + 8 && ev[1]->value == 2);
    /* an uncorrected error does not change how the job ended */
    assert_int_equal(a->end.state, PM_END_COMPLETED);
    /* the events are in time order: the exit (t0 + 9) last */
    assert_int_equal(a->events[a->nevents - 1].kind, PM_EV_EXIT);
    done(a, dir);
}

/* A GPU's counters are on its own host (gpu-<n>.<node>); its end is its
 * node's. */
static void test_gpu_events(void **state)
{
    (void)state;
    static const double xid[10] = {0, 0, 0, 1, 1, 1, 1, 1, 1, 1};
    host_spec h = {"n1",
                   10,
                   "gpu.0.xid",
                   "counter",
                   xid,
                   .notes = {EXIT0},
                   .end = "\"exit_status\":0,\"reason\":\"command exited\""};
    char dir[4096];
    pm_analysis *a = analyse(&h, 1, dir, sizeof dir);
    size_t found = 0;
    for (size_t i = 0; i < a->nevents; i++)
        if (a->events[i].kind == PM_EV_GPU_XID) {
            found++;
            assert_string_equal(a->in.hosts[a->events[i].host].name, "gpu-0.n1");
            assert_true(a->events[i].t == T0 + 3);
        }
    assert_int_equal(found, 1);
    assert_int_equal(a->end.state, PM_END_COMPLETED);
    assert_int_equal(a->end.nnodes, 1);
    done(a, dir);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(pm_signal_name(9), "SIGKILL");
    assert_string_equal(pm_signal_name(15), "SIGTERM");
    assert_null(pm_signal_name(0));
    assert_null(pm_signal_name(64));
    assert_string_equal(pm_end_state_name(PM_END_OOM), "oom");
    assert_string_equal(pm_end_state_name(99), "unknown");
    assert_string_equal(pm_event_kind_name(PM_EV_IB_SATURATED), "ib_saturated");
    assert_true(pm_note_is_event(EXIT0));
    assert_false(pm_note_is_event("source rapl absent: no powercap"));
    assert_false(pm_note_is_event("{\"event\":3}"));
    assert_false(pm_note_is_event("{\"event\":"));
    assert_true(pm_job_end_reads("cg.mem_events_oom_kill"));
    assert_false(pm_job_end_reads("cpu.user"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),          cmocka_unit_test(test_worst_over_hosts),
        cmocka_unit_test(test_counter_events), cmocka_unit_test(test_gpu_events),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
