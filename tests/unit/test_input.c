/* The input stage on profiles written by the writer API (pm_synth): runs
 * and jobs told apart (issue 14 item 3), one run written in two forms
 * read once (item 11), unfinished and empty inputs (item 6), JSON Lines
 * with whitespace (item 9), rejected files named (item 12).  Expected
 * values come from how the files were written (start times, sample
 * counts), never from the analysis. */
#include <cJSON.h>
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

#include "../support/testutil.h"
#include "perfmon/analysis.h"
#include "perfmon/phase.h"
#include "perfmon/profile.h"
#include "synth.h"

static char g_cat[4096];

/* The lines pm_analysis_run gave input_msg before failing. */
typedef struct msgs {
    char *line[64];
    int kind[64];
    size_t n;
} msgs;

static void on_msg(int kind, const char *msg, void *user)
{
    msgs *m = user;
    if (m->n < 64) {
        m->kind[m->n] = kind;
        m->line[m->n++] = strdup(msg);
    }
}

static void msgs_free(msgs *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->line[i]);
    m->n = 0;
}

/* The first message of this kind holding all of the strings (NULL-ended). */
static int msgs_has(const msgs *m, int kind, ...)
{
    for (size_t i = 0; i < m->n; i++) {
        if (m->kind[i] != kind)
            continue;
        va_list ap;
        va_start(ap, kind);
        int all = 1;
        for (const char *s; (s = va_arg(ap, const char *));)
            all &= strstr(m->line[i], s) != NULL;
        va_end(ap);
        if (all)
            return 1;
    }
    return 0;
}

static void opts(pm_analyze_opts *o, msgs *m)
{
    snprintf(g_cat, sizeof g_cat, "%s/../templates/metrics.json", pm_test_fixtures());
    pm_analyze_opts_init(o);
    o->catalog_path = g_cat;
    o->input_msg = on_msg;
    o->input_msg_user = m;
}

static void synth(const char *dir, const char *file, const char *host, const char *job,
                  const char *run_id, double start, size_t n, int format)
{
    pm_synth s;
    pm_synth_init(&s, host);
    s.job_id = job;
    s.run_id = run_id;
    s.start_s = start;
    s.n = n;
    s.format = format;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    pm_error err;
    if (pm_synth_write(path, &s, &err) != 0)
        fail_msg("%s", err.msg);
}

static int analyse(const char *dir, const pm_analyze_opts *o, pm_analysis **a, pm_error *err)
{
    const char *paths[] = {dir};
    *a = NULL;
    pm_error_clear(err);
    return pm_analysis_run(paths, 1, o, a, err);
}

static char *tmpdir(void)
{
    char *t = pm_test_tmpdir();
    assert_non_null(t);
    return strdup(t);
}

#define T0 1700000000.0

/* One job (two nodes) run twice, 6 minutes apart: two runs, refused and
 * listed; --run by number or run id picks one, whose span is its own. */
static void test_runs_apart(void **state)
{
    (void)state;
    char *dir = tmpdir();
    synth(dir, "j_n01.pmp", "n01", "J", "beef0001", T0, 10, PM_FMT_BIN);
    synth(dir, "j_n02.pmp", "n02", "J", "beef0002", T0 + 0.3, 10, PM_FMT_BIN);
    synth(dir, "j_n01.2.pmp", "n01", "J", "beef0003", T0 + 370, 10, PM_FMT_BIN);
    synth(dir, "j_n02.2.pmp", "n02", "J", "beef0004", T0 + 370.2, 10, PM_FMT_BIN);
    msgs m = {0};
    pm_analyze_opts o;
    opts(&o, &m);
    pm_analysis *a;
    pm_error err;
    assert_int_equal(analyse(dir, &o, &a, &err), PM_EUSAGE);
    assert_null(a);
    assert_non_null(strstr(err.msg, "2 runs of 1 job"));
    assert_non_null(strstr(err.msg, "--run N"));
    /* 1700000000 is 2023-11-14T22:13:20Z; each run spans 9 s */
    assert_true(msgs_has(&m, PM_MSG_DETAIL, "run 1: job J, from 2023-11-14T22:13:20Z for 9 s",
                         "2 hosts: n01, n02", "beef0001", "j_n01.pmp", NULL));
    assert_true(msgs_has(&m, PM_MSG_DETAIL, "run 2: job J, from 2023-11-14T22:19:30Z for 9 s",
                         "beef0003", "beef0004", "j_n02.2.pmp", NULL));
    msgs_free(&m);
    /* --job alone does not choose between runs of one job */
    o.job = "J";
    assert_int_equal(analyse(dir, &o, &a, &err), PM_EUSAGE);
    msgs_free(&m);
    const char *picks[] = {"2", "beef0003", "beef0004"};
    for (size_t k = 0; k < 3; k++) {
        o.run = picks[k];
        if (analyse(dir, &o, &a, &err) != 0)
            fail_msg("--run %s: %s", picks[k], err.msg);
        assert_int_equal(a->in.nhosts, 2);
        assert_int_equal(a->in.hosts[0].n, 10);
        assert_int_equal(a->in.hosts[1].n, 10);
        assert_int_equal(a->in.hosts[0].nfiles, 1);
        assert_non_null(strstr(a->in.hosts[0].files[0], "j_n01.2.pmp"));
        assert_true(fabs(a->t_start - (T0 + 370)) < 1e-6);
        assert_true(fabs(a->t_end - (T0 + 370.2 + 9)) < 1e-6);
        assert_true(fabs(a->nodes[0].wall_time_s - 9) < 1e-6);
        /* the other run's files are named as not selected (-v) */
        int noted = 0;
        for (size_t i = 0; i < a->in.nignored; i++)
            noted += strstr(a->in.ignored[i], "j_n01.pmp: job J, run 1: not selected") != NULL;
        assert_int_equal(noted, 1);
        pm_analysis_free(a);
    }
    o.run = "7";
    assert_int_equal(analyse(dir, &o, &a, &err), PM_EUSAGE);
    assert_non_null(strstr(err.msg, "--run 7: no such run"));
    msgs_free(&m);
    pm_test_rmrf(dir);
    free(dir);
    /* run again at once (1 s later, within the time tolerance): the hosts
     * come back with nobody sampling through the gap, so a second run */
    dir = tmpdir();
    synth(dir, "j_n01.pmp", "n01", "J", "beef0011", T0, 10, PM_FMT_BIN);
    synth(dir, "j_n01.2.pmp", "n01", "J", "beef0012", T0 + 10, 10, PM_FMT_BIN);
    o.run = NULL;
    o.job = NULL;
    assert_int_equal(analyse(dir, &o, &a, &err), PM_EUSAGE);
    assert_non_null(strstr(err.msg, "2 runs of 1 job"));
    assert_true(
        msgs_has(&m, PM_MSG_DETAIL, "run 2: job J, from 2023-11-14T22:13:30Z for 9 s", NULL));
    msgs_free(&m);
    pm_test_rmrf(dir);
    free(dir);
}

/* Two jobs in one directory (different --job-id, back to back): refused;
 * --job picks one. */
static void test_two_jobs(void **state)
{
    (void)state;
    char *dir = tmpdir();
    synth(dir, "A_n01.pmp", "n01", "A", "a0000001", T0, 20, PM_FMT_BIN);
    synth(dir, "B_n01.pmp", "n01", "B", "b0000001", T0 + 20, 30, PM_FMT_BIN);
    msgs m = {0};
    pm_analyze_opts o;
    opts(&o, &m);
    pm_analysis *a;
    pm_error err;
    assert_int_equal(analyse(dir, &o, &a, &err), PM_EUSAGE);
    assert_non_null(strstr(err.msg, "2 runs of 2 jobs"));
    assert_non_null(strstr(err.msg, "--job ID"));
    assert_true(msgs_has(&m, PM_MSG_DETAIL, "run 1: job A", "1 host: n01", NULL));
    assert_true(msgs_has(&m, PM_MSG_DETAIL, "run 2: job B", "B_n01.pmp", NULL));
    msgs_free(&m);
    o.job = "B";
    if (analyse(dir, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(a->in.nhosts, 1);
    assert_int_equal(a->in.hosts[0].n, 30);
    assert_true(fabs(a->nodes[0].wall_time_s - 29) < 1e-6);
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

/* One run written in both forms (-f both), and old copies identified by
 * pid and start time: read once, the binary form kept. */
static void test_both_forms(void **state)
{
    (void)state;
    char *dir = tmpdir();
    synth(dir, "j_n01.pmp", "n01", "J", "c0ffee01", T0, 6, PM_FMT_BIN);
    synth(dir, "j_n01.pmp.jsonl", "n01", "J", "c0ffee01", T0, 6, PM_FMT_JSONL);
    /* files written before run ids: the same pid and start time */
    pm_synth s;
    pm_synth_init(&s, "n02");
    s.pid = 4242;
    s.start_s = T0 + 0.123456789; /* the JSON form keeps microseconds */
    s.n = 6;
    char path[512];
    pm_error err;
    snprintf(path, sizeof path, "%s/j_n02.pmp.jsonl", dir);
    s.format = PM_FMT_JSONL;
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    snprintf(path, sizeof path, "%s/j_n02.pmp", dir);
    s.format = PM_FMT_BIN;
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    msgs m = {0};
    pm_analyze_opts o;
    opts(&o, &m);
    pm_analysis *a;
    /* n02's copies carry job "synthetic": name n01's files only first */
    char f1[512], f2[512];
    snprintf(f1, sizeof f1, "%s/j_n01.pmp", dir);
    snprintf(f2, sizeof f2, "%s/j_n01.pmp.jsonl", dir);
    const char *paths[] = {f2, f1};
    if (pm_analysis_run(paths, 2, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(a->in.nhosts, 1);
    assert_int_equal(a->in.hosts[0].n, 6); /* 6 taken, 6 analysed */
    assert_int_equal(a->in.hosts[0].nfiles, 1);
    assert_string_equal(a->in.hosts[0].format, "binary");
    assert_int_equal(a->in.nignored, 1);
    assert_non_null(strstr(a->in.ignored[0], "j_n01.pmp.jsonl: the same sampler run as"));
    assert_non_null(strstr(a->in.ignored[0], "c0ffee01"));
    pm_analysis_free(a);
    /* the old pair alone: pid 4242 and one start time */
    o.job = "synthetic";
    if (analyse(dir, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(a->in.nhosts, 1);
    assert_string_equal(a->in.hosts[0].name, "n02");
    assert_int_equal(a->in.hosts[0].n, 6);
    assert_string_equal(a->in.hosts[0].format, "binary");
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

/* Two samplers of one host at once: named, in a job of several nodes (the
 * other node bridges them) and alone. */
static void test_concurrent_samplers(void **state)
{
    (void)state;
    char *dir = tmpdir();
    synth(dir, "j_n01.pmp", "n01", "J", "d0000001", T0, 60, PM_FMT_BIN);
    synth(dir, "j_n01.2.pmp", "n01", "J", "d0000002", T0 + 10, 60, PM_FMT_BIN);
    msgs m = {0};
    pm_analyze_opts o;
    opts(&o, &m);
    pm_analysis *a;
    pm_error err;
    /* alone: two runs, and the clash is named */
    assert_int_equal(analyse(dir, &o, &a, &err), PM_EUSAGE);
    assert_true(msgs_has(&m, PM_MSG_DETAIL, "host n01 was sampled twice at once", "j_n01.pmp",
                         "j_n01.2.pmp", "d0000001", "d0000002", "overlap for 49 s", NULL));
    msgs_free(&m);
    /* with a node sampling through both: one run, refused for the clash */
    synth(dir, "j_n02.pmp", "n02", "J", "d0000003", T0, 80, PM_FMT_BIN);
    assert_int_equal(analyse(dir, &o, &a, &err), PM_EUSAGE);
    assert_non_null(strstr(err.msg, "host n01 was sampled twice at once"));
    assert_non_null(strstr(err.msg, "name the files of one sampler"));
    msgs_free(&m);
    /* a restarted sampler (one after the other) in that job is merged */
    char path[512];
    snprintf(path, sizeof path, "%s/j_n01.2.pmp", dir);
    unlink(path);
    synth(dir, "j_n01.2.pmp", "n01", "J", "d0000002", T0 + 60, 20, PM_FMT_BIN);
    if (analyse(dir, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(a->in.nhosts, 2);
    assert_int_equal(a->in.hosts[0].nfiles, 2);
    assert_int_equal(a->in.hosts[0].n, 80);
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

/* A day-old SKA file of a host beside a fresh profile of it: never one
 * host; the fresh job alone is 59 s on one node. */
static void test_old_ska_beside_profile(void **state)
{
    (void)state;
    char *dir = tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/cpu_metrics.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"host_names\": [\"n01\", \"n02\"]");
    for (int h = 1; h <= 2; h++) {
        fprintf(f, ", \"n0%d\": {\"time_stamps\": [", h);
        for (int i = 0; i < 10; i++)
            fprintf(f, "%s%.0f", i ? ", " : "", T0 - 86400 + i);
        fprintf(f, "], \"cpu_percent_sys\": [");
        for (int i = 0; i < 10; i++)
            fprintf(f, "%s50", i ? ", " : "");
        fprintf(f, "]}");
    }
    fprintf(f, "}\n");
    assert_int_equal(fclose(f), 0);
    synth(dir, "local_n01.pmp", "n01", "local", "e0000001", T0, 60, PM_FMT_BIN);
    msgs m = {0};
    pm_analyze_opts o;
    opts(&o, &m);
    pm_analysis *a;
    pm_error err;
    assert_int_equal(analyse(dir, &o, &a, &err), PM_EUSAGE);
    assert_non_null(strstr(err.msg, "2 runs of 2 jobs"));
    assert_true(msgs_has(&m, PM_MSG_DETAIL, "run 1: job (none), from 2023-11-13T22:13:20Z for 9 s",
                         "2 hosts: n01, n02", "cpu_metrics.json", NULL));
    assert_true(msgs_has(&m, PM_MSG_DETAIL, "run 2: job local", "local_n01.pmp", NULL));
    msgs_free(&m);
    o.align = PM_ALIGN_INDEX; /* the old hint: still refused, no 1-day job */
    assert_int_equal(analyse(dir, &o, &a, &err), PM_EUSAGE);
    msgs_free(&m);
    o.job = "local";
    if (analyse(dir, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(a->in.nhosts, 1);
    assert_int_equal(a->in.hosts[0].nfiles, 1);
    assert_true(fabs(a->nodes[0].wall_time_s - 59) < 1e-6);
    assert_true(fabs(a->job.wall_time_s - 59) < 1e-6);
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

/* Unfinished profiles: no end record; a pid that is alive here but did
 * not start with the profile (a reused pid) is not "still running". */
static void test_incomplete(void **state)
{
    (void)state;
    char *dir = tmpdir();
    char host[256] = "";
    assert_int_equal(gethostname(host, sizeof host - 1), 0);
    pm_synth s;
    pm_synth_init(&s, host);
    s.with_end = 0;
    s.pid = getpid(); /* alive, but started long after mono 1 s */
    s.run_id = "f0000001";
    char path[512];
    pm_error err;
    snprintf(path, sizeof path, "%s/a.pmp", dir);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    msgs m = {0};
    pm_analyze_opts o;
    opts(&o, &m);
    pm_analysis *a;
    if (analyse(dir, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    assert_string_equal(a->in.hosts[0].incomplete, "no end record");
    char buf[256];
    assert_int_equal(pm_analysis_incomplete(a, buf, sizeof buf), 1);
    assert_non_null(strstr(buf, "incomplete: no end record"));
    pm_analysis_free(a);
    /* with its end record: complete */
    unlink(path);
    s.with_end = 1;
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    if (analyse(dir, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    assert_string_equal(a->in.hosts[0].incomplete, "");
    assert_int_equal(pm_analysis_incomplete(a, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

/* Nothing to analyse: phase marks alone, a window after the job, files
 * that are not profiles (each named with its reason). */
static void test_nothing_to_analyse(void **state)
{
    (void)state;
    char *dir = tmpdir();
    pm_error err;
    assert_int_equal(pm_event_append(dir, "n01", "setup", PM_EDGE_START, NAN, NULL, 0, &err), 0);
    assert_int_equal(pm_event_append(dir, "n01", "setup", PM_EDGE_END, NAN, NULL, 0, &err), 0);
    msgs m = {0};
    pm_analyze_opts o;
    opts(&o, &m);
    pm_analysis *a;
    assert_int_equal(analyse(dir, &o, &a, &err), PM_EEMPTY);
    assert_non_null(strstr(err.msg, "no resource profile among 1 file: found only 1 phase marked "
                                    "in 1 events file"));
    msgs_free(&m);
    synth(dir, "j_n01.pmp", "n01", "J", NULL, T0, 10, PM_FMT_BIN);
    o.has_start = 1;
    o.start = T0 + 100;
    assert_int_equal(analyse(dir, &o, &a, &err), PM_EEMPTY);
    assert_non_null(strstr(err.msg, "no sample lies inside the --start/--end window"));
    assert_non_null(strstr(err.msg, "2023-11-14T22:13:20Z .. 2023-11-14T22:13:29Z"));
    o.has_start = 0;
    if (analyse(dir, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
    /* not profiles: an empty file, text, a JSON object of no known kind */
    dir = tmpdir();
    const char *names[] = {"empty.json", "notes.txt"};
    const char *texts[] = {"", "hello\n"};
    for (int i = 0; i < 2; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(texts[i], f);
        assert_int_equal(fclose(f), 0);
    }
    assert_int_equal(analyse(dir, &o, &a, &err), PM_ENOENT);
    assert_non_null(strstr(err.msg, "no readable profile among 2 files: "));
    assert_non_null(strstr(err.msg, "empty.json: empty file"));
    assert_true(msgs_has(&m, PM_MSG_IGNORED, "empty.json: empty file", NULL));
    assert_true(
        msgs_has(&m, PM_MSG_IGNORED, "notes.txt: offset 0: not a profile", "\"hello.\"", NULL));
    msgs_free(&m);
    pm_test_rmrf(dir);
    free(dir);
}

/* Insert JSON whitespace as other tools write it: a space after every
 * ':' and ',' outside strings, spaces inside brackets, CRLF line ends. */
static char *spaced(const char *in)
{
    size_t n = strlen(in);
    char *out = malloc(4 * n + 1), *o = out;
    int str = 0, esc = 0;
    for (const char *p = in; *p; p++) {
        char c = *p;
        if (str) {
            *o++ = c;
            if (esc)
                esc = 0;
            else if (c == '\\')
                esc = 1;
            else if (c == '"')
                str = 0;
            continue;
        }
        if (c == '"')
            str = 1;
        if (c == '\n')
            *o++ = '\r';
        if (c == ']' || c == '}')
            *o++ = ' ';
        *o++ = c;
        if (c == ':' || c == ',' || c == '[' || c == '{')
            *o++ = ' ';
    }
    *o = 0;
    return out;
}

static void same_profile(const pm_profile *x, const pm_profile *y)
{
    assert_int_equal(x->n, y->n);
    assert_int_equal(x->ncols, y->ncols);
    assert_string_equal(x->info.host, y->info.host);
    assert_string_equal(x->info.run_id, y->info.run_id);
    assert_true(x->info.start_wall_ns == y->info.start_wall_ns);
    assert_int_equal(x->has_end, y->has_end);
    assert_true(x->end.samples == y->end.samples);
    assert_int_equal(y->nwarnings, 0);
    for (size_t c = 0; c < x->ncols; c++) {
        assert_string_equal(x->cols[c].name, y->cols[c].name);
        for (size_t i = 0; i < x->n; i++) {
            double a = x->values[c][i], b = y->values[c][i];
            assert_true((isnan(a) && isnan(b)) || a == b);
        }
    }
    for (size_t i = 0; i < x->n; i++)
        assert_true(x->t_wall_ns[i] == y->t_wall_ns[i] && x->t_mono_ns[i] == y->t_mono_ns[i]);
}

static void test_jsonl_whitespace(void **state)
{
    (void)state;
    char *dir = tmpdir();
    synth(dir, "a.pmp.jsonl", "n01", "J", "ab000001", T0, 40, PM_FMT_JSONL);
    char path[512], path2[512];
    snprintf(path, sizeof path, "%s/a.pmp.jsonl", dir);
    snprintf(path2, sizeof path2, "%s/b.pmp.jsonl", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    char *sp = spaced(text);
    assert_non_null(strstr(sp, "{ \"format\": \"perfmon-profile\", "));
    assert_non_null(strstr(sp, "\r\n"));
    assert_int_equal(pm_profile_sniff(sp, strlen(sp)), PM_FMT_JSONL);
    f = fopen(path2, "w");
    assert_non_null(f);
    fputs(sp, f);
    assert_int_equal(fclose(f), 0);
    free(sp);
    pm_profile *x = NULL, *y = NULL;
    pm_error err;
    if (pm_profile_read(path, &x, &err) || pm_profile_read(path2, &y, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(x->n, 40);
    same_profile(x, y);
    pm_profile_free(x);
    pm_profile_free(y);
    /* the format key need not come first */
    const char *moved = "{\"version\": 1, \"host\": \"n\", \"format\" :\t\"perfmon-profile\"}";
    assert_int_equal(pm_profile_sniff(moved, strlen(moved)), PM_FMT_JSONL);
    const char *other = "{\"format\": \"perfmon-profiles\"}";
    assert_int_equal(pm_profile_sniff(other, strlen(other)), PM_FMT_UNKNOWN);
    pm_test_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_apart),
        cmocka_unit_test(test_two_jobs),
        cmocka_unit_test(test_both_forms),
        cmocka_unit_test(test_concurrent_samplers),
        cmocka_unit_test(test_old_ska_beside_profile),
        cmocka_unit_test(test_incomplete),
        cmocka_unit_test(test_nothing_to_analyse),
        cmocka_unit_test(test_jsonl_whitespace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
