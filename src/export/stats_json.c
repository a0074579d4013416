/* --stats --json: the machine-readable summary (keys in docs/analysis.md). */
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "perfmon/export.h"
#include "perfmon/json.h"

/* Returns the object added (NULL when out of memory), so that a caller
 * need not look it up again among thousands of hosts' keys. */
static cJSON *stats_obj(cJSON *parent, const char *key, const pm_stats *s, const pm_analysis *a)
{
    cJSON *o = cJSON_AddObjectToObject(parent, key);
    if (!o)
        return NULL;
    pm_json_num(o, "points", (double)s->n);
    pm_json_num(o, "valid", (double)s->nvalid);
    pm_json_num(o, "mean", s->mean);
    pm_json_num(o, "min", s->min);
    pm_json_num(o, "min_time", s->t_min);
    pm_json_num(o, "max", s->max);
    pm_json_num(o, "max_time", s->t_max);
    if (a) {
        if (s->host_min >= 0)
            cJSON_AddStringToObject(o, "min_host", a->in.hosts[s->host_min].name);
        if (s->host_max >= 0)
            cJSON_AddStringToObject(o, "max_host", a->in.hosts[s->host_max].name);
    }
    pm_json_num(o, "p50", s->p50);
    pm_json_num(o, "p95", s->p95);
    pm_json_num(o, "stddev", s->sd);
    pm_json_num(o, "duration_s", s->duration);
    return o;
}

static void quality_obj(cJSON *parent, const pm_qcounts *q, size_t repaired, size_t wraps)
{
    cJSON *o = cJSON_AddObjectToObject(parent, "quality");
    if (!o)
        return;
    for (int k = 0; k < PM_Q_N; k++)
        pm_json_num(o, pm_quality_name(k), (double)q->n[k]);
    pm_json_num(o, "repaired", (double)repaired);
    pm_json_num(o, "wraps_corrected", (double)wraps);
}

static void figures(cJSON *o, const pm_node_summary *s)
{
    for (size_t i = 0; i < PM_NFIGURES; i++)
        pm_json_num(o, PM_FIGURES[i].key, pm_figure_value(s, &PM_FIGURES[i]));
    pm_json_num(o, "repaired", (double)s->repaired);
    pm_json_num(o, "dropped_timestamps", (double)s->dropped);
}

static void num_or_null(cJSON *o, const char *k, double v, int have)
{
    if (have)
        pm_json_num(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

/* "end_state": the job's (h = SIZE_MAX) or host h's end (docs/analysis.md, "How
 * the job ended"). */
static void end_obj(const pm_analysis *a, cJSON *parent, size_t h)
{
    cJSON *o = cJSON_AddObjectToObject(parent, "end_state");
    size_t eh = h == SIZE_MAX ? a->end.host : h;
    if (!o || !a->ends)
        return;
    const pm_end *e = eh != SIZE_MAX ? &a->ends[eh] : NULL;
    cJSON_AddStringToObject(o, "state", pm_end_state_name(e ? e->state : PM_END_UNKNOWN));
    num_or_null(o, "exit_status", e ? e->exit_status : 0, e && e->exit_status >= 0);
    num_or_null(o, "signal", e ? e->signal : 0, e && e->signal > 0);
    const char *sn = e && e->signal > 0 ? pm_signal_name(e->signal) : NULL;
    if (sn)
        cJSON_AddStringToObject(o, "signal_name", sn);
    else
        cJSON_AddNullToObject(o, "signal_name");
    cJSON_AddBoolToObject(o, "signal_inferred", e && e->signal_inferred);
    if (h == SIZE_MAX) {
        if (e)
            cJSON_AddStringToObject(o, "host", a->in.hosts[eh].name);
        else
            cJSON_AddNullToObject(o, "host");
        cJSON *hs = cJSON_AddArrayToObject(o, "hosts");
        for (size_t k = 0; e && hs && k < a->in.nhosts; k++)
            if (!a->in.hosts[k].gpu && a->ends[k].state == e->state)
                cJSON_AddItemToArray(hs, cJSON_CreateString(a->in.hosts[k].name));
    }
    num_or_null(o, "t", e ? e->t : 0, e && !isnan(e->t));
    if (e && e->state == PM_END_OOM) {
        cJSON *k = cJSON_AddObjectToObject(o, "oom");
        num_or_null(k, "pid", e->oom_pid, e->oom_pid >= 0);
        if (e->oom_comm[0])
            cJSON_AddStringToObject(k, "comm", e->oom_comm);
        else
            cJSON_AddNullToObject(k, "comm");
        cJSON_AddStringToObject(k, "scope",
                                e->oom_scope == 1   ? "cgroup"
                                : e->oom_scope == 2 ? "node"
                                                    : "unknown");
        num_or_null(k, "mem_limit_bytes", e->mem_limit, !isnan(e->mem_limit));
        num_or_null(k, "mem_last_minute_max_bytes", e->mem_last_max, !isnan(e->mem_last_max));
    }
    char b[512];
    pm_end_text(a, h, b, sizeof b);
    cJSON_AddStringToObject(o, "detail", b);
}

char *pm_stats_json_string(const pm_analysis *a)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON *meta = cJSON_AddObjectToObject(root, "perfmon_analyze");
    pm_json_num(meta, "schema", PM_STATS_JSON_SCHEMA);
    cJSON_AddStringToObject(meta, "repair", pm_repair_name(a->opts.repair));
    cJSON_AddStringToObject(
        meta, "align", a->opts.compat_ska || a->opts.align == PM_ALIGN_INDEX ? "index" : "time");
    cJSON_AddStringToObject(meta, "compat", a->opts.compat_ska ? "ska" : "none");

    cJSON *job = cJSON_AddObjectToObject(root, "job");
    size_t ngpus = 0;
    for (size_t h = 0; h < a->in.nhosts; h++)
        ngpus += a->in.hosts[h].gpu != 0;
    pm_json_num(job, "hosts", (double)(a->in.nhosts - ngpus)); /* nodes; GPUs in gpu_count */
    pm_json_num(job, "start", a->t_start);
    pm_json_num(job, "end", a->t_end);
    pm_json_num(job, "grid_step_s", a->grid_step);
    cJSON_AddStringToObject(job, "job_id", pm_analysis_info(a, offsetof(pm_profile_info, job_id)));
    cJSON_AddStringToObject(job, "user", pm_analysis_info(a, offsetof(pm_profile_info, user)));
    cJSON_AddStringToObject(job, "scheduler",
                            pm_analysis_info(a, offsetof(pm_profile_info, scheduler)));
    char inc[256];
    cJSON_AddBoolToObject(job, "incomplete", pm_analysis_incomplete(a, inc, sizeof inc) != 0);
    if (inc[0])
        cJSON_AddStringToObject(job, "incomplete_reason", inc + strlen("incomplete: "));
    else
        cJSON_AddNullToObject(job, "incomplete_reason");
    figures(job, &a->job);
    end_obj(a, job, SIZE_MAX);

    cJSON *nodes = cJSON_AddArrayToObject(root, "nodes");
    for (size_t h = 0; h < a->in.nhosts; h++) {
        const pm_host *ho = &a->in.hosts[h];
        cJSON *n = cJSON_CreateObject();
        if (!n)
            break;
        cJSON_AddItemToArray(nodes, n);
        cJSON_AddStringToObject(n, "host", ho->name);
        cJSON_AddBoolToObject(n, "gpu", ho->gpu != 0);
        cJSON_AddStringToObject(n, "format", ho->format);
        cJSON_AddBoolToObject(n, "incomplete", ho->incomplete[0] != 0);
        if (ho->incomplete[0])
            cJSON_AddStringToObject(n, "incomplete_reason", ho->incomplete);
        else
            cJSON_AddNullToObject(n, "incomplete_reason");
        if (!ho->gpu)
            end_obj(a, n, h);
        cJSON *files = cJSON_AddArrayToObject(n, "files");
        for (size_t i = 0; i < ho->nfiles; i++)
            cJSON_AddItemToArray(files, cJSON_CreateString(ho->files[i]));
        pm_json_num(n, "outside_window", (double)ho->outside_window);
        pm_json_num(n, "interval_s", ho->interval);
        pm_json_num(n, "ncpus", ho->ncpus);
        pm_json_num(n, "mem_total_bytes", ho->mem_total);
        cJSON *c = cJSON_AddObjectToObject(n, "clock");
        cJSON_AddStringToObject(c, "method", ho->clock.method ? "monotonic-wall" : "start-spread");
        pm_json_num(c, "offset_s", ho->clock.offset_s);
        pm_json_num(c, "drift_ppm", ho->clock.method ? ho->clock.drift_ppm : NAN);
        pm_json_num(c, "step_max_s", ho->clock.method ? ho->clock.step_max_s : NAN);
        figures(n, &a->nodes[h]);
    }

    cJSON *mets = cJSON_AddArrayToObject(root, "metrics");
    for (size_t m = 0; m < a->nmetrics; m++) {
        const pm_metric_result *r = &a->metrics[m];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddItemToArray(mets, o);
        cJSON_AddStringToObject(o, "id", r->def->id);
        cJSON_AddStringToObject(o, "name", r->def->name);
        cJSON_AddStringToObject(o, "unit", r->def->unit);
        cJSON_AddStringToObject(o, "category", r->def->category);
        cJSON_AddStringToObject(o, "comb", r->def->comb == PM_COMB_TOTAL ? "Total" : "Average");
        cJSON_AddBoolToObject(o, "rate", r->def->rate);
        pm_json_num(o, "nodes", (double)r->nhosts_with_data);
        pm_json_num(o, "avg_per_node", r->avg_per_node);
        pm_json_num(o, "max_per_node", r->max_per_node);
        pm_json_num(o, "imbalance", r->imbalance);
        stats_obj(o, "all", &r->all, a);
        cJSON *ag = stats_obj(o, "aggregate", &r->agg.st, NULL);
        pm_json_num(ag, "min_nodes", (double)r->agg.min_count);
        pm_json_num(ag, "interpolated", (double)r->agg.interpolated);
        quality_obj(o, &r->qc, r->repaired, r->wraps);
        cJSON *hs = cJSON_AddObjectToObject(o, "hosts");
        for (size_t h = 0; h < a->in.nhosts; h++) {
            const pm_series *s = r->host[h];
            if (!s)
                continue;
            /* Not found again by name: that search is linear in the
             * hosts, quadratic over the job (9 of the 15 s of --json on
             * 10,000 nodes). */
            cJSON *ho = stats_obj(hs, a->in.hosts[h].name, &s->st, NULL);
            if (ho)
                quality_obj(ho, &s->qc, s->repaired, s->wraps);
        }
    }

    static const char *const sev[] = {"info", "warning", "critical"};
    cJSON *notes = cJSON_AddArrayToObject(root, "notes");
    for (size_t i = 0; i < a->nnotes; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddItemToArray(notes, o);
        cJSON_AddStringToObject(o, "rule", a->notes[i].rule);
        cJSON_AddStringToObject(o, "severity", sev[a->notes[i].severity]);
        if (a->notes[i].host >= 0)
            cJSON_AddStringToObject(o, "host", a->in.hosts[a->notes[i].host].name);
        else
            cJSON_AddNullToObject(o, "host");
        pm_json_num(o, "value", a->notes[i].value);
        if (isfinite(a->notes[i].t)) /* when it began (per-host rules) */
            pm_json_num(o, "t", a->notes[i].t);
        cJSON_AddStringToObject(o, "message", a->notes[i].message);
    }
    cJSON *evs = cJSON_AddArrayToObject(root, "events");
    for (size_t i = 0; evs && i < a->nevents; i++) {
        const pm_job_event *e = &a->events[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddItemToArray(evs, o);
        pm_json_num(o, "t", e->t);
        pm_json_num(o, "t_end", e->t_end);
        cJSON_AddStringToObject(o, "host", a->in.hosts[e->host].name);
        cJSON_AddStringToObject(o, "kind", pm_event_kind_name(e->kind));
        pm_json_num(o, "value", e->value);
        cJSON_AddStringToObject(o, "detail", e->detail);
    }
    pm_json_num(root, "events_dropped", (double)a->events_dropped);
    pm_phases_json(a, root);
    pm_request_use_json(a, root);
    cJSON *w = cJSON_AddArrayToObject(root, "warnings");
    for (size_t i = 0; i < a->in.nwarnings; i++)
        cJSON_AddItemToArray(w, cJSON_CreateString(a->in.warnings[i]));
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

int pm_stats_json(const pm_analysis *a, FILE *f, pm_error *err)
{
    char *s = pm_stats_json_string(a);
    if (!s)
        return pm_error_set(err, PM_ENOMEM, "stats: out of memory");
    size_t len = strlen(s);
    size_t wr = fwrite(s, 1, len, f);
    free(s);
    if (wr != len || fputc('\n', f) == EOF || fflush(f) != 0)
        return pm_error_sys(err, PM_EIO, errno, "stats: write failed");
    return 0;
}
