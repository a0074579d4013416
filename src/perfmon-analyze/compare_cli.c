/* perfmon-analyze --compare DIR_A DIR_B: both jobs analysed with the same
 * options, compared, written as text, JSON and optionally a PDF (job B's
 * report with a comparison section).  Exit codes: docs/man/perfmon-analyze.1. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze_cli.h"
#include "perfmon/cli.h"
#include "perfmon/compare.h"
#include "perfmon/export.h"
#include "perfmon/html.h"
#include "perfmon/report.h"

enum {
    EXIT_OK = PM_EXIT_OK,
    EXIT_WORSE = PM_EXIT_FAIL,
    EXIT_USAGE = PM_EXIT_USAGE,
    EXIT_OUTPUT = PM_EXIT_OUTPUT,
    EXIT_MIXED = PM_EXIT_MIXED
};

static void print_warnings(const pm_analysis *a, const char *which, int verbose)
{
    for (size_t i = 0; i < a->in.nwarnings; i++)
        fprintf(stderr, "perfmon-analyze: %s: warning: %s\n", which, a->in.warnings[i]);
    if (verbose)
        for (size_t i = 0; i < a->in.nignored; i++)
            fprintf(stderr, "perfmon-analyze: %s: note: %s\n", which, a->in.ignored[i]);
}

static int write_pdf(const pm_compare_cli *cl, const pm_comparison *cmp)
{
    pm_error err;
    pm_error_clear(&err);
    pm_report_opts ro = *cl->report;
    if (!ro.pdf_path)
        ro.pdf_path = "job-compare.pdf";
    ro.compare = cmp;
    char *js = pm_stats_json_string(cmp->b);
    if (!js) {
        fprintf(stderr, "perfmon-analyze: out of memory for the statistics\n");
        return EXIT_OUTPUT;
    }
    ro.stats_json = js;
    int rc = pm_report_write(cmp->b, &ro, &err);
    free(js);
    if (rc) {
        fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
        return rc == PM_EUSAGE ? PM_EXIT_USAGE : EXIT_OUTPUT;
    }
    if (!cl->quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "perfmon-analyze: wrote %s\n", ro.pdf_path);
    return EXIT_OK;
}

static int write_html(const pm_compare_cli *cl, const pm_comparison *cmp)
{
    pm_error err;
    pm_error_clear(&err);
    pm_html_opts ho;
    pm_html_opts_init(&ho);
    ho.path = cl->html_path ? cl->html_path : "job-compare.html";
    ho.layout_path = cl->report->layout_path;
    ho.template_dir = cl->templates;
    ho.compare = cmp;
    if (pm_html_write(cmp->b, &ho, &err) != 0) {
        fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
        return EXIT_OUTPUT;
    }
    if (!cl->quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "perfmon-analyze: wrote %s\n", ho.path);
    return EXIT_OK;
}

/* Most runs of one side analysed one by one. */
#define RUNS_MAX 64

/* Analyse one side: its only run, or, where its inputs hold several runs
 * of one job and neither --run nor --job picks one, each run (reruns of
 * the job: "--run 1", "--run 2", ...), oldest first, into x[0..*n).
 * Returns 0, or the analysis' error with err set. */
static int analyse_side(const char *path, const pm_analyze_opts *opts, pm_analysis **x, size_t *n,
                        pm_error *err)
{
    *n = 0;
    int rc = pm_analysis_run(&path, 1, opts, &x[0], err);
    if (rc == 0) {
        *n = 1;
        return 0;
    }
    if (rc != PM_EUSAGE || opts->run || opts->job)
        return rc;
    pm_error first = *err;
    pm_analyze_opts o = *opts;
    char num[24];
    for (size_t k = 1; k <= RUNS_MAX; k++) {
        snprintf(num, sizeof num, "%zu", k);
        o.run = num;
        pm_error e;
        pm_error_clear(&e);
        if (pm_analysis_run(&path, 1, &o, &x[*n], &e) != 0)
            break; /* past the last run */
        ++*n;
    }
    int one_job = *n >= 2;
    for (size_t k = 1; k < *n && one_job; k++)
        one_job = strcmp(pm_analysis_job_id(x[k]), pm_analysis_job_id(x[0])) == 0;
    if (!one_job) { /* several jobs, or not runs at all: the first refusal stands */
        for (size_t k = 0; k < *n; k++)
            pm_analysis_free(x[k]);
        *n = 0;
        *err = first;
        return rc;
    }
    return 0;
}

int pm_compare_main(const pm_compare_cli *cl)
{
    pm_error err;
    pm_error_clear(&err);
    pm_compare_cfg *cfg = NULL;
    if (pm_compare_cfg_load(cl->cfg_path, &cfg, &err) != 0) {
        fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
        return EXIT_USAGE;
    }
    /* runs[k][0..nruns[k]): the runs of side k, oldest first; x[k] the
     * last, whose figures, metrics and phases the rows show */
    pm_analysis *runs[2][RUNS_MAX] = {{NULL}}, *x[2] = {NULL, NULL};
    size_t nruns[2] = {0, 0};
    const char *path[2] = {cl->path_a, cl->path_b}, *which[2] = {"A", "B"};
    pm_comparison *cmp = NULL;
    int status = EXIT_OK;
    for (int k = 0; k < 2; k++) {
        if (analyse_side(path[k], cl->analyze, runs[k], &nruns[k], &err) != 0) {
            fprintf(stderr, "perfmon-analyze: %s: %s\n", which[k], err.msg);
            status = EXIT_USAGE;
            goto out;
        }
        x[k] = runs[k][nruns[k] - 1];
        if (!cl->quiet)
            for (size_t r = 0; r < nruns[k]; r++)
                print_warnings(runs[k][r], which[k], cl->analyze->verbose);
    }
    pm_compare_opts co;
    pm_compare_opts_init(&co);
    co.threshold_pct = cl->threshold_pct;
    co.label_a = cl->path_a;
    co.label_b = cl->path_b;
    co.gate = cl->gate;
    if (pm_compare_run(x[0], x[1], cfg, &co, &cmp, &err) != 0 ||
        pm_compare_runs(cmp, (const pm_analysis *const *)runs[0], nruns[0],
                        (const pm_analysis *const *)runs[1], nruns[1], &err) != 0) {
        fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
        status = EXIT_OUTPUT;
        goto out;
    }
    int bad = 0;
    if (cl->want_text || cl->want_json) {
        int rc =
            cl->want_json ? pm_compare_json(cmp, stdout, &err) : pm_compare_text(cmp, stdout, &err);
        if (rc && rc != PM_EIO) /* a write error is told once, below */
            fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
        bad = rc != 0;
    }
    int e = errno;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "perfmon-analyze: stdout: write failed: %s\n", strerror(errno ? errno : e));
        bad = 1;
    }
    if (bad)
        status = EXIT_OUTPUT;
    if (cl->want_pdf && write_pdf(cl, cmp) != EXIT_OK)
        status = EXIT_OUTPUT;
    if (cl->want_html && write_html(cl, cmp) != EXIT_OK)
        status = EXIT_OUTPUT;
    if (status == EXIT_OK && cmp->overall == PM_OVERALL_WORSE)
        status = EXIT_WORSE;
    if (status == EXIT_OK && cmp->overall == PM_OVERALL_MIXED)
        status = EXIT_MIXED;
    if (status == EXIT_OK && cmp->gated_suspect)
        status = PM_EXIT_SUSPECT;
out:
    pm_comparison_free(cmp);
    for (int k = 0; k < 2; k++)
        for (size_t r = 0; r < nruns[k]; r++)
            pm_analysis_free(runs[k][r]);
    pm_compare_cfg_free(cfg);
    return status;
}
