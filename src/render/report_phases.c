/* The report's phases page: a timeline of every node's phases, the
 * resource use per phase kind and the marks that did not pair.  Called by
 * pm_report_write when the job has phases, before the plot pages.
 */
#include "report_int.h"

#include "perfmon/clock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/export.h"
#include "perfmon/mem.h"
#include "perfmon/phase_stats.h"
#include "perfmon/units.h"

/* The phases: a timeline of every node's phases, the per-kind table and
 * the marks that did not pair. */
int report_phases_page(pdf_doc *d, pm_error *err)
{
    const pm_analysis *a = d->a;
    const pm_phase_stats *st = a->phase_stats;
    int phases = st && a->in.phases.n;
    if (!phases && !a->nevents)
        return 0;
    const pm_phase_set *ps = &a->in.phases;
    pm_timeline_data td;
    int rc = pm_timeline_build(a, d->o->elapsed, &td, err);
    if (rc)
        return rc;
    pdf_new_page(d);
    pdf_heading(d, phases && a->nevents ? "Phases and events" : phases ? "Phases" : "Events", 1);
    double h = fmin(PAGE_H - TOP - BOTTOM - 230, 140 + 9.0 * (double)td.tl.nrows);
    size_t nmarks = td.tl.nmarks;
    pm_canvas *cv = report_render_canvas(report_draw_timeline, &td.tl, CONTENT_W, h);
    rc = cv ? pdf_place_canvas(d, cv, h) : PM_ENOMEM;
    pm_canvas_free(cv);
    pm_timeline_data_free(&td);
    if (rc)
        return pm_error_set(err, rc, "cannot draw the phase timeline");
    if (nmarks) {
        d->y += 4;
        pdf_paragraph(d,
                      "Event marks: red, a kill, an uncorrected memory or GPU error, a link down "
                      "or a command that failed; orange, a memory limit reached, thermal "
                      "throttling, corrected errors, Infiniband errors or a signal to the "
                      "sampler; grey, a command that exited with status 0.",
                      7.5);
    }
    d->y += 10;
    if (!phases) {
        report_events_table(d);
        return 0;
    }
    static const double w[7] = {131, 50, 50, 70, 70, 70, 70};
    static const int right[7] = {0, 1, 1, 1, 1, 1, 1};
    static const char *const head[7] = {"Phase",      "Nodes",      "Count",         "Total s",
                                        "Avg/node s", "Max/node s", "Start spread s"};
    pdf_table t = {7, w, right, head, 8};
    pdf_table_head(d, &t);
    for (size_t k = 0; k < st->nkinds; k++) {
        const pm_phase_kind_stats *ks = &st->kinds[k];
        char c[7][64];
        snprintf(c[0], 64, "%s", ks->name);
        snprintf(c[1], 64, "%zu", ks->hosts);
        snprintf(c[2], 64, "%zu", ks->count);
        pdf_num(ks->total_s, c[3], 64);
        pdf_num(ks->avg_host_s, c[4], 64);
        pdf_num(ks->max_host_s, c[5], 64);
        pdf_num(ks->start_spread_s, c[6], 64);
        const char *cells[7] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
        pdf_table_row(d, &t, cells, (int)(k % 2));
    }
    if (ps->nproblems) {
        d->y += 8;
        pdf_subheading(d, "Marks that did not pair");
        for (size_t i = 0; i < ps->nproblems && i < 30; i++)
            pdf_paragraph(d, ps->problems[i], 8);
        if (ps->nproblems > 30) {
            char buf[64];
            snprintf(buf, sizeof buf, "... and %zu more.", ps->nproblems - 30);
            pdf_paragraph(d, buf, 8);
        }
    }
    if (a->nevents) {
        d->y += 8;
        report_events_table(d);
    }
    return 0;
}

#define EVENTS_SHOWN 40

/* The events (job_end.h): time, host, kind, what; the first EVENTS_SHOWN. */
void report_events_table(pdf_doc *d)
{
    const pm_analysis *a = d->a;
    if (!a->nevents)
        return;
    pdf_subheading(d, "Events");
    static const double w[4] = {50, 80, 80, 301};
    static const int right[4] = {0, 0, 0, 0};
    static const char *const head[4] = {"UTC", "Host", "Kind", "What"};
    pdf_table t = {4, w, right, head, 7.5};
    pdf_table_head(d, &t);
    for (size_t i = 0; i < a->nevents && i < EVENTS_SHOWN; i++) {
        const pm_job_event *e = &a->events[i];
        char iso[48], tm[48];
        /* the day is in the page's header: the time of day (and the day where it differs) */
        if (pm_utc_iso(e->t, iso, sizeof iso) < 0 || strlen(iso) < 19)
            snprintf(tm, sizeof tm, "-");
        else
            snprintf(tm, sizeof tm, "%.8s", iso + 11);
        const char *cells[4] = {tm, a->in.hosts[e->host].name, pm_event_kind_name(e->kind),
                                e->detail};
        pdf_table_row(d, &t, cells, (int)(i % 2));
    }
    if (a->nevents > EVENTS_SHOWN) {
        char buf[96];
        snprintf(buf, sizeof buf,
                 "... and %zu more (perfmon-analyze --stats --json lists them all).",
                 a->nevents - EVENTS_SHOWN);
        pdf_paragraph(d, buf, 8);
    }
}
