/* Requested vs used in --stats: the text section and the JSON object
 * "request" (docs/analysis.md, "Requested vs used"). */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>

#include "perfmon/units.h"
#include "perfmon/export.h"
#include "perfmon/request_use.h"
#include "perfmon/json.h"

void pm_request_use_json(const pm_analysis *a, cJSON *root)
{
    pm_request_use u;
    pm_request_use_compute(a, &u);
    if (!u.have)
        return;
    cJSON *o = cJSON_AddObjectToObject(root, "request");
    if (!o)
        return;
    cJSON_AddStringToObject(o, "scheduler", u.scheduler);
    pm_json_num(o, "time_limit_s", u.time_limit_s);
    pm_json_num(o, "wall_s", u.wall_s);
    pm_json_num(o, "time_pct", u.time_pct);
    pm_json_num(o, "mem_req_bytes", u.mem_req_bytes);
    pm_json_num(o, "mem_used_bytes", u.mem_used_bytes);
    if (u.mem_used_from)
        cJSON_AddStringToObject(o, "mem_used_from", u.mem_used_from);
    pm_json_num(o, "mem_pct", u.mem_pct);
    pm_json_num(o, "cpus_req", u.cpus_req);
    pm_json_num(o, "cpu_req_core_s", u.cpu_req_core_s);
    pm_json_num(o, "cpu_used_core_s", u.cpu_used_core_s);
    if (u.cpu_used_from)
        cJSON_AddStringToObject(o, "cpu_used_from", u.cpu_used_from);
    pm_json_num(o, "cpu_pct", u.cpu_pct);
    char note[512];
    if (pm_request_note(&u, note, sizeof note))
        cJSON_AddStringToObject(o, "note", note);
}

void pm_request_use_lines(const pm_analysis *a, char lines[3][160], size_t *n)
{
    pm_request_use u;
    char x[32], y[32];
    pm_request_use_compute(a, &u);
    *n = 0;
    if (!u.have)
        return;
    if (isfinite(u.time_limit_s)) {
        pm_fmt_duration(u.wall_s, x, sizeof x);
        pm_fmt_duration(u.time_limit_s, y, sizeof y);
        snprintf(lines[(*n)++], 160, "Walltime: %s used of %s requested (%.1f %%)", x, y,
                 u.time_pct);
    }
    if (isfinite(u.mem_req_bytes)) {
        pm_fmt_bytes(u.mem_used_bytes, x, sizeof x);
        pm_fmt_bytes(u.mem_req_bytes, y, sizeof y);
        snprintf(lines[(*n)++], 160, "Memory: peak %s of %s requested per node (%.1f %%, %s)", x, y,
                 u.mem_pct, u.mem_used_from ? u.mem_used_from : "-");
    }
    if (isfinite(u.cpus_req)) {
        pm_fmt_duration(u.cpu_used_core_s, x, sizeof x);
        pm_fmt_duration(u.cpu_req_core_s, y, sizeof y);
        snprintf(lines[(*n)++], 160,
                 "CPUs: %.0f requested per node; CPU time %s used of %s (%.1f %%, %s)", u.cpus_req,
                 x, y, u.cpu_pct, u.cpu_used_from ? u.cpu_used_from : "-");
    }
}

void pm_request_use_text(const pm_analysis *a, FILE *f)
{
    char lines[3][160];
    size_t n;
    pm_request_use_lines(a, lines, &n);
    if (!n)
        return;
    fprintf(f, "\nRequested vs used\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  %s\n", lines[i]);
    pm_request_use u;
    char note[512];
    pm_request_use_compute(a, &u);
    if (pm_request_note(&u, note, sizeof note))
        fprintf(f, "  %s\n", note);
}
