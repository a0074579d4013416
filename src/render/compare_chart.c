/* The overlay chart of a comparison (report.h): both jobs' all-node
 * series of one metric on elapsed time, so runs that started at different
 * times line up. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/compare.h"
#include "perfmon/mem.h"
#include "perfmon/report.h"

void pm_overlay_free(pm_overlay *o)
{
    if (!o)
        return;
    free(o->t[0]);
    free(o->t[1]);
    memset(o, 0, sizeof *o);
}

int pm_overlay_build(const pm_comparison *c, size_t row, pm_overlay *o, pm_error *err)
{
    memset(o, 0, sizeof *o);
    if (row >= c->nrows || c->rows[row].kind != PM_CMP_METRIC)
        return PM_ENOENT;
    const pm_compare_row *r = &c->rows[row];
    const pm_analysis *x[2] = {c->a, c->b};
    const pm_metric_def *d = NULL;
    for (int k = 0; k < 2; k++) {
        int m = pm_analysis_metric(x[k], r->key);
        if (m < 0 || x[k]->metrics[m].agg.st.nvalid == 0) {
            pm_overlay_free(o);
            return PM_ENOENT;
        }
        const pm_aggregate *g = &x[k]->metrics[m].agg;
        d = x[k]->metrics[m].def;
        o->t[k] = pm_alloc_array(g->n ? g->n : 1, sizeof *o->t[k]);
        if (!o->t[k]) {
            pm_overlay_free(o);
            return pm_error_set(err, PM_ENOMEM, "%s: out of memory for the overlay", r->key);
        }
        for (size_t i = 0; i < g->n; i++)
            o->t[k][i] = g->t[i] - x[k]->t_start;
        pm_compare_job_label(c, k, o->label[k], sizeof o->label[k]);
        o->series[k] = (pm_plot_series){o->label[k], o->t[k], g->v, g->n};
    }
    const char *u = pm_unit_shown(d->unit);
    char pct[32];
    pm_compare_pct_text(r->pct, pct, sizeof pct);
    snprintf(o->title, sizeof o->title, "%s %s: mean A %.4g%s%s, B %.4g%s%s (%s), %s",
             d->comb == PM_COMB_TOTAL ? "Total" : "Average", d->name, r->a.mean, *u ? " " : "", u,
             r->b.mean, *u ? " " : "", u, pct, pm_verdict_name(r->verdict));
    if (*u)
        snprintf(o->ylabel, sizeof o->ylabel, "%s (%s)", d->name, u);
    else
        snprintf(o->ylabel, sizeof o->ylabel, "%s", d->name);
    o->plot.title = o->title;
    o->plot.ylabel = o->ylabel;
    o->plot.logy = d->log_scale;
    o->plot.time_axis = PM_AXIS_ELAPSED;
    o->plot.t_origin = 0;
    o->plot.series = o->series;
    o->plot.nseries = 2;
    o->plot.legend = 1;
    return 0;
}
