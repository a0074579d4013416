/* Reading an analysis's results: the profile fields of its hosts, a metric
 * by id, a metric's plot title, and whether the profiles are unfinished. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "perfmon/analysis.h"

void pm_fmt_title_num(double v, char *out, size_t cap)
{
    double a = fabs(v);
    if (!isfinite(v))
        snprintf(out, cap, "n/a");
    else if (a >= 1e4 && a < 1e9)
        snprintf(out, cap, "%.0f", v);
    else if (a != 0 && (a < 1e-3 || a >= 1e9))
        snprintf(out, cap, "%.3g", v);
    else
        snprintf(out, cap, "%.4g", v);
}

int pm_metric_title(const pm_metric_result *r, int all_nodes, char *buf, size_t cap)
{
    const pm_metric_def *d = r->def;
    const char *u = strcmp(d->unit, "1") == 0 ? "" : d->unit, *us = *u ? " " : "";
    char v1[32], v2[32];
    if (all_nodes) {
        /* The all-node series' own statistics: a different quantity from
         * the per-node figures (docs/analysis.md, "Which mean"). */
        pm_fmt_title_num(r->agg.st.mean, v1, sizeof v1);
        pm_fmt_title_num(r->agg.st.max, v2, sizeof v2);
        return snprintf(buf, cap, "%s %s (all-node series): mean %s%s%s, max %s%s%s",
                        d->comb == PM_COMB_TOTAL ? "Total" : "Average", d->name, v1, us, u, v2, us,
                        u);
    }
    pm_fmt_title_num(r->avg_per_node, v1, sizeof v1);
    pm_fmt_title_num(r->max_per_node, v2, sizeof v2);
    return snprintf(buf, cap, "Average %s/Node: %s%s%s, Max %s/Node: %s%s%s", d->name, v1, us, u,
                    d->name, v2, us, u);
}

const char *pm_analysis_info(const pm_analysis *a, size_t off)
{
    for (size_t h = 0; h < a->in.nhosts; h++) {
        const pm_profile *p = a->in.hosts[h].prof;
        if (!p || off >= sizeof p->info)
            continue;
        const char *s = (const char *)&p->info + off;
        if (*s)
            return s;
    }
    return "";
}

int pm_analysis_metric(const pm_analysis *a, const char *id)
{
    for (size_t i = 0; i < a->nmetrics; i++)
        if (strcmp(a->metrics[i].def->id, id) == 0)
            return (int)i;
    return -1;
}

size_t pm_analysis_incomplete(const pm_analysis *a, char *buf, size_t cap)
{
    size_t n = 0, shown = 0, len = 0;
    const char *why = NULL;
    char hosts[160] = "";
    if (cap)
        buf[0] = 0;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        const pm_host *ho = &a->in.hosts[h];
        if (!ho->incomplete[0] || ho->gpu)
            continue;
        n++;
        if (!why || ho->incomplete[0] == 't') /* "the sampler was still running" */
            why = ho->incomplete;
        if (shown < 3 && len + 2 < sizeof hosts) {
            int w = snprintf(hosts + len, sizeof hosts - len, "%s%s", shown ? ", " : "", ho->name);
            len = w > 0 && (size_t)w < sizeof hosts - len ? len + (size_t)w : sizeof hosts - 1;
            shown++;
        }
    }
    if (n && cap) {
        if (n > shown)
            snprintf(buf, cap, "incomplete: %s (%s and %zu more)", why, hosts, n - shown);
        else
            snprintf(buf, cap, "incomplete: %s (%s)", why, hosts);
    }
    return n;
}
