/* Requested against used (docs/analysis.md, "Requested vs used"): the
 * request the sampler recorded in each node's metadata ("request") set
 * against the job's wall time, its memory peak and its CPU time. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "perfmon/units.h"
#include "perfmon/analysis.h"
#include "perfmon/request_use.h"

static double num(const cJSON *o, const char *k)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(x) && isfinite(x->valuedouble) && x->valuedouble >= 0 ? x->valuedouble
                                                                                : NAN;
}

void pm_request_use_compute(const pm_analysis *a, pm_request_use *u)
{
    memset(u, 0, sizeof *u);
    u->time_limit_s = u->wall_s = u->time_pct = NAN;
    u->mem_req_bytes = u->mem_used_bytes = u->mem_pct = NAN;
    u->cpus_req = u->cpu_used_core_s = u->cpu_req_core_s = u->cpu_pct = NAN;
    double start = NAN;
    int mi = pm_analysis_metric(a, "mem_used");
    double mem_pct = NAN;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        const pm_host *ho = &a->in.hosts[h];
        if (ho->gpu || !ho->prof || !ho->prof->meta_json)
            continue;
        cJSON *j = cJSON_Parse(ho->prof->meta_json);
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "request");
        const cJSON *sch = cJSON_GetObjectItemCaseSensitive(r, "scheduler");
        if (!cJSON_IsObject(r) || !cJSON_IsString(sch)) {
            cJSON_Delete(j);
            continue;
        }
        if (!u->have) {
            u->have = 1;
            snprintf(u->scheduler, sizeof u->scheduler, "%s", sch->valuestring);
        }
        if (isnan(u->time_limit_s))
            u->time_limit_s = num(r, "time_limit_s");
        if (isnan(start))
            start = num(r, "start_time");
        const pm_node_summary *s = &a->nodes[h];
        double wall = s->wall_time_s;
        /* Memory: the job's processes where the tree was followed. */
        double used = s->proc_peak_rss_bytes;
        const char *from = "job processes";
        if (!isfinite(used)) {
            const pm_series *se = mi >= 0 ? a->metrics[mi].host[h] : NULL;
            used = se ? se->st.max * a->metrics[mi].def->conversion : NAN;
            from = "node";
        }
        double req = num(r, "mem_bytes");
        if (isfinite(req) && req > 0) {
            if (isnan(u->mem_req_bytes) || req > u->mem_req_bytes)
                u->mem_req_bytes = req;
            if (isfinite(used) && (isnan(mem_pct) || used / req * 100 > mem_pct)) {
                mem_pct = used / req * 100;
                u->mem_used_bytes = used;
                u->mem_used_from = from;
            }
        }
        double cpus = num(r, "cpus");
        if (isfinite(cpus) && cpus > 0 && isfinite(wall)) {
            double cs = s->proc_cpu_hours * 3600.0;
            u->cpu_used_from = "job processes";
            if (!isfinite(cs)) {
                cs = s->cpu_avg_utilization_pct / 100.0 * ho->ncpus * wall;
                u->cpu_used_from = "node";
            }
            if (isfinite(cs)) {
                u->cpus_req = isnan(u->cpus_req) ? cpus : fmax(u->cpus_req, cpus);
                u->cpu_used_core_s = isnan(u->cpu_used_core_s) ? cs : u->cpu_used_core_s + cs;
                u->cpu_req_core_s =
                    (isnan(u->cpu_req_core_s) ? 0 : u->cpu_req_core_s) + cpus * wall;
            }
        }
        cJSON_Delete(j);
    }
    if (!u->have)
        return;
    u->mem_pct = mem_pct;
    /* The job began before the sampler where the scheduler says when. */
    u->wall_s = a->t_end - (isfinite(start) && start < a->t_start ? start : a->t_start);
    if (u->time_limit_s > 0)
        u->time_pct = u->wall_s / u->time_limit_s * 100.0;
    if (u->cpu_req_core_s > 0)
        u->cpu_pct = u->cpu_used_core_s / u->cpu_req_core_s * 100.0;
}

/* A share for a sentence: "6 %", "2.5 %", "0.31 %". */
static void pct(double v, char *out, size_t cap)
{
    snprintf(out, cap, v >= 9.95 ? "%.0f %%" : v >= 0.995 ? "%.1f %%" : "%.2g %%", v);
}

int pm_request_note(const pm_request_use *u, char *out, size_t cap)
{
    if (!cap)
        return 0;
    out[0] = 0;
    if (!u->have)
        return 0;
    char a[32], b[32], p[32];
    size_t len = 0;
    int n = 0;
    const double far = 25.0;
    if (u->time_pct < far) {
        pct(u->time_pct, p, sizeof p);
        pm_fmt_duration(u->wall_s, a, sizeof a);
        pm_fmt_duration(u->time_limit_s, b, sizeof b);
        len += (size_t)snprintf(out + len, cap - len,
                                "Used %s of the requested walltime (%s of %s)", p, a, b);
        n++;
    }
    if (len < cap && u->mem_pct < far) {
        pct(u->mem_pct, p, sizeof p);
        pm_fmt_bytes(u->mem_used_bytes, a, sizeof a);
        pm_fmt_bytes(u->mem_req_bytes, b, sizeof b);
        len += (size_t)snprintf(out + len, cap - len,
                                "%speak memory %s of the requested (%s of %s per node)",
                                n ? "; " : "Used ", p, a, b);
        n++;
    }
    if (len < cap && u->cpu_pct < far) {
        pct(u->cpu_pct, p, sizeof p);
        len += (size_t)snprintf(out + len, cap - len,
                                "%s%s of the requested CPU time (%.0f CPU%s per node)",
                                n ? "; " : "Used ", p, u->cpus_req, u->cpus_req == 1 ? "" : "s");
        n++;
    }
    if (n && len + 2 < cap)
        snprintf(out + len, cap - len, ".");
    return n;
}
