/* The analysis pipeline: the inputs (src/input, into a->in) -> time axes
 * (times.c) -> node figures and series (summary.c, derive.c; or one host
 * at a time, stream.c) -> phases and rules.  pm_analysis_run runs it,
 * under mpirun too (the ranks' handshakes: src/input/split.c,
 * split_stream.c); pm_analysis_free frees what it made.  Semantics:
 * docs/analysis.md. */
#include "perfmon/clock.h"
#include "perfmon/analysis.h"
#include "perfmon/input.h"
#include "perfmon/phase_stats.h"
#include "perfmon/split.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compat_ska.h"
#include "derive.h"
#include "project.h"
#include "report_keep.h"
#include "rules.h"
#include "stream.h"
#include "times.h"
#include "perfmon/split.h"
#include "perfmon/mem.h"
#include "perfmon/parse.h"
#include "perfmon/strs.h"

void pm_analyze_opts_init(pm_analyze_opts *o)
{
    memset(o, 0, sizeof *o);
    o->repair = PM_REPAIR_HOLD;
    o->align = PM_ALIGN_TIME;
}

/* What the input stage reads of the options. */
static pm_input_opts input_opts(const pm_analyze_opts *o)
{
    return (pm_input_opts){.strict = o->strict,
                           .stream = o->stream,
                           .job = o->job,
                           .run = o->run,
                           .split = o->split,
                           .progress = o->progress,
                           .progress_user = o->progress_user,
                           .input_msg = o->input_msg,
                           .input_msg_user = o->input_msg_user};
}

/* Each host's events and end (job_end.c), while every raw column is
 * there; the stream mode scans each host in its fold (stream.c). */
static int job_end_scan(pm_analysis *a, pm_error *err)
{
    int rc = pm_job_end_begin(a);
    for (size_t h = 0; h < a->in.nhosts && !rc; h++)
        rc = pm_job_end_host(a, h, &a->in.hosts[h]);
    if (!rc)
        rc = pm_job_end_finish(a);
    return rc ? pm_error_set(err, rc, "out of memory") : 0;
}

int pm_analysis_run(const char *const *paths, size_t npaths, const pm_analyze_opts *opts,
                    pm_analysis **out, pm_error *err)
{
    *out = NULL;
    gsl_set_error_handler_off();
    pm_analysis *a = calloc(1, sizeof *a);
    if (!a)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    pm_arena_init(&a->arena);
    a->opts = *opts;
    int rc = pm_catalog_load(opts->catalog_path ? opts->catalog_path : "templates/metrics.json",
                             &a->catalog, err);
    if (!rc && opts->compat_ska)
        pm_catalog_use_ska(a->catalog);
    if (!rc && opts->rules_path)
        rc = pm_rules_plan_load(a, err);
    if (!rc && opts->stream && opts->compat_ska)
        rc = pm_error_set(err, PM_EUSAGE, "--stream: --compat=ska is not streamed yet");
    pm_split *sp = opts->split && opts->split->size > 1 ? opts->split : NULL;
    /* --stream under mpirun: after the survey, every rank takes part in
     * the passes (split_stream.c), also one that failed before, and rank 0
     * owes the others their end (pm_remote_end). */
    int owed = opts->stream && sp && sp->bcast && sp->threads;
    if (!rc && opts->stream && sp && !owed)
        rc = pm_error_set(err, PM_EUSAGE,
                          "--stream: under mpirun it needs an MPI that threads may call "
                          "(MPI_THREAD_SERIALIZED), which this one is not");
    if (!rc) {
        pm_project_init(a);
        pm_input_opts io = input_opts(opts);
        rc = pm_input_load(&a->in, &io, paths, npaths, err);
    } else if (owed)
        rc = pm_split_survey_end(sp, rc, err);
    else if (sp)
        rc = pm_split_finish(sp, rc, err); /* the other ranks wait for this one */
    if (sp && sp->rank) {
        if (owed) /* read and send its hosts at each pass */
            rc = pm_remote_serve(&a->in, sp, rc, err);
        pm_analysis_free(a); /* a rank > 0 only reads (split.h) */
        return rc;
    }
    if (!rc && owed)
        rc = pm_remote_begin(&a->in, sp, err);
    if (rc || (opts->compat_ska && (rc = pm_compat_ska_prepare(a, err))))
        goto fail;
    if (opts->stream && a->in.phases.scanner_files) {
        rc = pm_error_set(err, PM_EUSAGE, "--stream: Scanner profiles are not streamed yet");
        goto fail;
    }
    /* Node figures read raw columns, so they come first; raw columns are
     * then released as soon as no metric still needs them.  The stream
     * mode computes both one host at a time (stream.c). */
    if ((rc = pm_times_setup(a, err)) ||
        (opts->stream ? (rc = pm_stream_build(a, err))
                      : ((rc = job_end_scan(a, err)) || (rc = pm_summary_compute(a, err)) ||
                         (rc = pm_metrics_build(a, err)))))
        goto fail;
    /* (the passes over the hosts are over) */
    if (owed && (owed = 0, rc = pm_remote_end(&a->in, sp, 0, err)))
        goto fail;
    pm_count_repairs(a);
    /* (the stream mode's come from its fold) */
    if (!opts->stream && (rc = pm_phase_stats_compute(a, err)))
        goto fail;
    if (opts->rules_path && (rc = pm_rules_eval(a, opts->rules_path, err)))
        goto fail;
    *out = a;
    return 0;
fail:
    if (owed)
        rc = pm_remote_end(&a->in, sp, rc, err);
    pm_analysis_free(a);
    return rc ? rc : PM_EFORMAT;
}

void pm_analysis_free(pm_analysis *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nmetrics; i++) {
        pm_metric_result *r = &a->metrics[i];
        for (size_t h = 0; h < a->in.nhosts; h++)
            pm_series_delete(r->host[h]);
        free(r->host);
    }
    free(a->metrics);
    if (a->refs)
        for (size_t h = 0; h < a->in.nhosts; h++)
            free(a->refs[h]);
    free(a->refs);
    free(a->nodes);
    for (size_t i = 0; i < a->nnotes; i++)
        free(a->notes[i].message);
    free(a->notes);
    pm_catalog_free(a->catalog);
    pm_phase_stats_free(a->phase_stats);
    pm_report_keep_free(a->keep);
    pm_job_end_free(a);
    pm_rules_plan_free(a->rule_plan);
    pm_inputs_free(&a->in);
    pm_arena_free(&a->arena);
    pthread_mutex_destroy(&a->arena.lock);
    free(a);
}
