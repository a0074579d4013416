/* The report's comparison with another job (--compare): both jobs, the
 * verdict, the table of figures that differ and the charts of the metrics
 * that changed most.  Called by pm_report_write after the summary, when
 * the options carry a comparison.
 */
#include "report_int.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/compare.h"
#include "perfmon/mem.h"
#include "perfmon/units.h"

static int verdict_rank(int v)
{
    /* Plotted in this order: worse, better, changed, noise, same (missing: nothing to overlay). */
    static const int rank[] = {4, 3, 2, 1, 0, 5};
    return v >= 0 && v <= PM_VERDICT_MISSING ? rank[v] : 7;
}

static void compare_table(pdf_doc *d, const pm_comparison *c)
{
    static const double w[6] = {181, 48, 74, 74, 58, 76};
    static const int right[6] = {0, 0, 1, 1, 1, 0};
    static const char *const head[6] = {"Figure or metric", "Unit", "A", "B", "B - A", "Verdict"};
    pdf_table t = {6, w, right, head, 8};
    pdf_table_head(d, &t);
    int shade = 0;
    size_t hidden = 0;
    for (size_t i = 0; i < c->nrows; i++) {
        const pm_compare_row *r = &c->rows[i];
        if (r->kind == PM_CMP_PHASE_METRIC && r->verdict == PM_VERDICT_SAME) {
            hidden++;
            continue;
        }
        char name[200], ca[48], cb[48], cp[48];
        if (r->kind == PM_CMP_END) { /* the states, not numbers */
            char ev[64];
            pm_compare_row_verdict(r, ev, sizeof ev);
            const char *cells[6] = {
                r->name, "", pm_end_state_name((int)r->a.mean), pm_end_state_name((int)r->b.mean),
                "",      ev};
            pdf_table_row(d, &t, cells, shade);
            shade = !shade;
            continue;
        }
        if (r->phase[0])
            snprintf(name, sizeof name, "%s: %s", r->phase, r->name);
        else
            snprintf(name, sizeof name, "%s", r->name);
        /* Bytes as MiB: ten-digit byte counts do not read. */
        int bytes = strcmp(r->unit, "B") == 0;
        double sc = bytes ? 1.0 / 1048576 : 1;
        pdf_num(r->a.mean * sc, ca, sizeof ca);
        pdf_num(r->b.mean * sc, cb, sizeof cb);
        pm_compare_pct_text(r->pct, cp, sizeof cp);
        char cv[64];
        pm_compare_row_verdict(r, cv, sizeof cv);
        const char *cells[6] = {name, bytes ? "MiB" : pm_unit_shown(r->unit), ca, cb, cp, cv};
        pdf_table_row(d, &t, cells, shade);
        shade = !shade;
    }
    if (hidden) {
        char buf[160];
        snprintf(buf, sizeof buf,
                 "%zu resource figures during phases are within the threshold "
                 "and not listed.",
                 hidden);
        d->y += 4;
        pdf_paragraph(d, buf, 8);
    }
}

/* The comparison section: both jobs, the verdict, the table, then the
 * overlays of every metric, the ones judged worse first. */
int report_compare_pages(pdf_doc *d, pm_error *err)
{
    const pm_comparison *c = d->o->compare;
    char buf[1024], la[600], lb[600];
    pdf_new_page(d);
    pdf_heading(d, "Comparison with another job", 1);
    pm_compare_job_label(c, 0, la, sizeof la);
    pm_compare_job_label(c, 1, lb, sizeof lb);
    snprintf(buf, sizeof buf, "%s is the reference; %s is the job of this report.", la, lb);
    pdf_paragraph(d, buf, 9);
    char rule[512];
    pm_compare_rule_text(c, rule, sizeof rule);
    snprintf(buf, sizeof buf,
             "%c%s. Worse or better follows each metric's better direction, changed means it has "
             "none; (info) marks a row that is not gated. Series values are time-weighted means "
             "of the all-node series (Total or Average).",
             rule[0] == 'a' ? 'A' : rule[0], rule + 1);
    pdf_paragraph(d, buf, 9);
    /* How each job ended, first (docs/report.md). */
    char ea[512], eb[512];
    pm_end_text(c->a, SIZE_MAX, ea, sizeof ea);
    pm_end_text(c->b, SIZE_MAX, eb, sizeof eb);
    snprintf(buf, sizeof buf, "How they ended: A %s; B %s.", ea, eb);
    pdf_paragraph(d, buf, 9);
    /* The verdict the exit status gives, from the same function as the text. */
    char verdict[900];
    pm_compare_verdict_text(c, verdict, sizeof verdict);
    snprintf(buf, sizeof buf, "Verdict: %s.", verdict);
    d->y += 2;
    pdf_paragraph(d, buf, 10);
    snprintf(buf, sizeof buf,
             "Of %zu comparisons: %zu worse, %zu better, %zu changed, %zu within the noise, "
             "%zu the same, %zu in one job only.",
             c->nrows, c->count[PM_VERDICT_WORSE], c->count[PM_VERDICT_BETTER],
             c->count[PM_VERDICT_CHANGED], c->count[PM_VERDICT_NOISE], c->count[PM_VERDICT_SAME],
             c->count[PM_VERDICT_MISSING]);
    pdf_paragraph(d, buf, 9);
    d->y += 6;
    compare_table(d, c);

    size_t *order = pm_alloc_array(c->nrows ? c->nrows : 1, sizeof *order), n = 0;
    if (!order)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    for (int rank = 0; rank <= 5; rank++)
        for (size_t i = 0; i < c->nrows; i++)
            if (c->rows[i].kind == PM_CMP_METRIC && verdict_rank(c->rows[i].verdict) == rank)
                order[n++] = i;
    int ppp = d->l->plots_per_page > 0 ? d->l->plots_per_page : 3;
    double slot = (PAGE_H - TOP - BOTTOM - 30) / ppp;
    int placed = ppp, rc = 0, first = 1;
    for (size_t k = 0; k < n && rc == 0; k++) {
        pm_overlay ov;
        int brc = pm_overlay_build(c, order[k], &ov, err);
        if (brc == PM_ENOENT)
            continue;
        if (brc) {
            rc = brc;
            break;
        }
        if (placed == ppp) {
            pdf_new_page(d);
            pdf_heading(d,
                        first ? "Comparison: all-node series, A and B on elapsed time"
                              : "Comparison: all-node series (continued)",
                        first);
            first = 0;
            placed = 0;
        }
        pm_canvas *cv = report_render_canvas(report_draw_chart, &ov.plot, CONTENT_W, slot - 8);
        if (!cv)
            rc = pm_error_set(err, PM_ENOMEM, "cannot draw the %s overlay", c->rows[order[k]].key);
        else if (pdf_place_canvas(d, cv, slot - 8) != 0)
            rc = pm_error_set(err, PM_EIO, "cannot place the %s overlay (PDF library error 0x%04X)",
                              c->rows[order[k]].key, (unsigned)d->hpdf_error);
        pm_canvas_free(cv);
        pm_overlay_free(&ov);
        d->y += 8;
        placed++;
    }
    free(order);
    return rc;
}
