/* The HTML report's plain-HTML tables (see html_int.h): the job, the key
 * figures, the efficiency notes, the constant metrics and the statistics
 * per node, readable where scripts are blocked. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_int.h"
#include "perfmon/export.h"
#include "perfmon/mem.h"
#include "perfmon/phase_stats.h"
#include "perfmon/request_use.h"
#include "perfmon/spread.h"
#include "perfmon/units.h"
#include "report_int.h"

/* ---- the plain-HTML parts ------------------------------------------------- */

static void kv(pm_buf *b, const char *k, const char *v)
{
    pm_buf_puts(b, "<tr><th scope=\"row\">");
    pm_html_text(b, k);
    pm_buf_puts(b, "</th><td>");
    pm_html_text(b, v);
    pm_buf_puts(b, "</td></tr>\n");
}

void html_job_table(html_ctx *c)
{
    const pm_analysis *a = c->a;
    pm_buf *b = &c->body;
    char buf[512], b2[128];
    pm_buf_puts(b, "<table class=\"kv\" id=\"job\">\n");
    kv(b, "Job ID", report_or_dash(pm_analysis_info(a, offsetof(pm_profile_info, job_id))));
    kv(b, "User", report_or_dash(pm_analysis_info(a, offsetof(pm_profile_info, user))));
    kv(b, "Scheduler", report_or_dash(pm_analysis_info(a, offsetof(pm_profile_info, scheduler))));
    report_nodes_text(a, buf, sizeof buf);
    kv(b, "Nodes", buf);
    pdf_utc(a->t_start, buf, sizeof buf);
    kv(b, "Start", buf);
    pdf_utc(a->t_end, buf, sizeof buf);
    kv(b, "End", buf);
    pdf_duration(a->t_end - a->t_start, buf, sizeof buf);
    kv(b, "Duration", buf);
    pdf_num(a->in.nhosts ? a->in.hosts[0].interval : NAN, b2, sizeof b2);
    snprintf(buf, sizeof buf, "%s s (analysis grid %.3g s)", b2, a->grid_step);
    kv(b, "Sampling interval", buf);
    const char *cmd = pm_analysis_info(a, offsetof(pm_profile_info, command));
    if (*cmd)
        kv(b, "Command", cmd);
    if (pm_analysis_incomplete(a, buf, sizeof buf))
        kv(b, "Status", buf);
    char lines[3][160];
    size_t n;
    pm_request_use_lines(a, lines, &n);
    for (size_t i = 0; i < n; i++) {
        const char *colon = strchr(lines[i], ':');
        char k[16];
        snprintf(k, sizeof k, "%.*s", colon ? (int)(colon - lines[i]) : 0, lines[i]);
        kv(b, colon ? k : "Requested", colon ? colon + 2 : lines[i]);
    }
    pm_buf_puts(b, "</table>\n");
    pm_request_use u;
    pm_request_use_compute(a, &u);
    char note[512];
    if (pm_request_note(&u, note, sizeof note)) {
        pm_buf_puts(b, "<p class=\"warning\">");
        pm_html_text(b, note);
        pm_buf_puts(b, "</p>\n");
    }
}

/* A key figure's cell as the PDF's key figures table writes it
 * (report_summary.c): bytes, energies and times scaled each on its own,
 * other figures as numbers with the unit in the label. */
static void td(pm_buf *b, const char *s, int num)
{
    pm_buf_puts(b, num ? "<td class=\"num\">" : "<td>");
    pm_html_text(b, s);
    pm_buf_puts(b, "</td>");
}

/* A number's cell with its value for sorting (data-v; none when not finite). */
static void td_num(pm_buf *b, const char *s, double v)
{
    if (isfinite(v))
        pm_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">", v);
    else
        pm_buf_puts(b, "<td class=\"num\">");
    pm_html_text(b, s);
    pm_buf_puts(b, "</td>");
}

void html_key_figures(html_ctx *c)
{
    const pm_analysis *a = c->a;
    pm_buf *b = &c->body;
    pm_buf_puts(b, "<table id=\"figures\"><thead><tr><th>Figure</th><th>Min node</th>"
                   "<th>Average</th><th>Max node</th><th>Job</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < c->l->nfigures; i++) {
        report_figure_row row;
        if (!report_figure_row_make(a, &c->l->figures[i], &row))
            continue;
        pm_buf_puts(b, "<tr>");
        for (int k = 0; k < 5; k++)
            td(b, row.cell[k], k > 0);
        pm_buf_puts(b, "</tr>\n");
    }
    pm_buf_puts(b, "</tbody></table>\n");
}

/* Resource use and energy per phase kind, where the job has phases: the
 * cells of --stats' and page 1's tables (pm_phase_use_cells,
 * pm_phase_energy_cells). */
void html_phase_use(html_ctx *c)
{
    const pm_phase_stats *st = c->a->phase_stats;
    pm_buf *b = &c->body;
    if (!st || !st->nkinds)
        return;
    pm_buf_puts(b, "<h2 id=\"phase-use\">Resource use per phase (whole job)</h2>\n"
                   "<table id=\"phase-use-table\"><thead><tr>");
    for (int i = 0; i < PM_PHASE_USE_COLS; i++) {
        pm_buf_puts(b, "<th>");
        pm_html_text(b, PM_PHASE_USE_HEAD[i]);
        pm_buf_puts(b, "</th>");
    }
    pm_buf_puts(b, "</tr></thead><tbody>\n");
    for (size_t k = 0; k < st->nkinds; k++) {
        char cells[PM_PHASE_USE_COLS][48];
        pm_phase_use_cells(&st->kinds[k], cells);
        pm_buf_puts(b, "<tr>");
        for (int i = 0; i < PM_PHASE_USE_COLS; i++)
            td(b, cells[i], i > 0);
        pm_buf_puts(b, "</tr>\n");
    }
    pm_buf_puts(b, "</tbody></table>\n");
    if (!pm_phase_energy_any(st))
        return;
    pm_buf_puts(b, "<table id=\"phase-energy\"><thead><tr>");
    for (int i = 0; i < PM_PHASE_ENERGY_COLS; i++) {
        pm_buf_puts(b, "<th>");
        pm_html_text(b, PM_PHASE_ENERGY_HEAD[i]);
        pm_buf_puts(b, "</th>");
    }
    pm_buf_puts(b, "</tr></thead><tbody>\n");
    for (size_t k = 0; k < st->nkinds; k++) {
        char cells[PM_PHASE_ENERGY_COLS][48];
        pm_phase_energy_cells(&st->kinds[k], cells);
        pm_buf_puts(b, "<tr>");
        for (int i = 0; i < PM_PHASE_ENERGY_COLS; i++)
            td(b, cells[i], i == 1 || i == 2);
        pm_buf_puts(b, "</tr>\n");
    }
    pm_buf_puts(b, "</tbody></table>\n<p class=\"help\">Energy summed over the kind's phases "
                   "and nodes: the CPUs' from RAPL's package and DRAM counters, the GPUs' from "
                   "NVML's energy counter, their power integrated only where a GPU has no "
                   "counter.</p>\n");
}

/* Above this many nodes the statistics per node are data for the script,
 * which shows the rows a search or a sort asks for: 10,000 rows of HTML
 * would be most of the file and seconds of the browser's parsing.  The
 * plain HTML then has each figure's spread across the nodes. */
#define PM_HTML_TABLE_NODES 1000

/* PM_HTML_TABLE_NODES, or the environment's PM_HTML_TABLE_NODES (so that
 * the tests see the script's table on a small job). */
static size_t table_nodes(void)
{
    const char *e = getenv("PM_HTML_TABLE_NODES");
    char *end;
    unsigned long long v = e && *e ? strtoull(e, &end, 10) : 0;
    return e && *e && !*end && v ? (size_t)v : PM_HTML_TABLE_NODES;
}

/* The spread of each figure across the nodes (the PDF's above 16 nodes). */
static void spread_table(html_ctx *c, const pm_figure *const *fs,
                         const pm_layout_figure *const *lfs, size_t nf)
{
    const pm_analysis *a = c->a;
    pm_buf *b = &c->body;
    double *v = pm_alloc_array(a->in.nhosts ? a->in.nhosts : 1, sizeof *v);
    if (!v) {
        c->oom = 1;
        return;
    }
    pm_buf_printf(b,
                  "<p>%zu nodes: each figure's spread across them (5th and 95th percentiles "
                  "interpolated); every node's row is below, found by its name or a sort "
                  "(with the script).</p>\n<table id=\"spread\"><thead><tr><th>Figure</th>"
                  "<th>Min</th><th>5th pct</th><th>Median</th><th>95th pct</th><th>Max</th>"
                  "<th>Job</th></tr></thead><tbody>\n",
                  a->in.nhosts);
    for (size_t i = 0; i < nf; i++) {
        for (size_t h = 0; h < a->in.nhosts; h++)
            v[h] = pm_figure_value(&a->nodes[h], fs[i]);
        pm_spread sp;
        if (pm_spread_of(v, a->in.nhosts, &sp) != 0) {
            c->oom = 1;
            break;
        }
        double q[6] = {sp.min, sp.p5, sp.median, sp.p95, sp.max, pm_figure_value(&a->job, fs[i])};
        char cell[48], lab[160];
        int scaled = report_figure_cell(lfs[i], fs[i], 0, cell, sizeof cell);
        report_figure_label(lfs[i], fs[i], scaled, lab, sizeof lab);
        pm_buf_puts(b, "<tr>");
        td(b, lab, 0);
        for (int k = 0; k < 6; k++) {
            if (isfinite(q[k]))
                report_figure_cell(lfs[i], fs[i], q[k], cell, sizeof cell);
            else
                snprintf(cell, sizeof cell, "-");
            td(b, cell, 1);
        }
        pm_buf_puts(b, "</tr>\n");
    }
    pm_buf_puts(b, "</tbody></table>\n");
    free(v);
}

/* The statistics per node: the key figures of each node, a row each; a
 * click on a row highlights the node in every chart.  Above
 * PM_HTML_TABLE_NODES nodes the rows go to the data ("table": per node its
 * index, then per figure its cell's text and its value for sorting). */
void html_node_table(html_ctx *c)
{
    const pm_analysis *a = c->a;
    pm_buf *b = &c->body, *d = &c->data;
    const pm_figure *fs[64];
    const pm_layout_figure *lfs[64];
    size_t nf = 0;
    int as_data = a->in.nhosts > table_nodes();
    for (size_t i = 0; i < c->l->nfigures && nf < 64; i++) {
        const pm_figure *f = pm_figure_find(c->l->figures[i].key);
        if (!f)
            continue;
        lfs[nf] = &c->l->figures[i];
        fs[nf++] = f;
    }
    if (as_data)
        spread_table(c, fs, lfs, nf);
    pm_buf_puts(b, "<table id=\"nodes\"><thead><tr><th>Node</th>");
    for (size_t i = 0; i < nf; i++) {
        char tmp[48], lab[160];
        int scaled = report_figure_cell(lfs[i], fs[i], 0, tmp, sizeof tmp);
        report_figure_label(lfs[i], fs[i], scaled, lab, sizeof lab);
        pm_buf_puts(b, "<th>");
        pm_html_text(b, lab);
        pm_buf_puts(b, "</th>");
    }
    pm_buf_puts(b, "</tr></thead><tbody>\n");
    pm_buf_puts(d, as_data ? ",\"table\":[" : ",\"table\":null");
    for (size_t h = 0; h < a->in.nhosts; h++) {
        if (as_data)
            pm_buf_printf(d, "%s[%zu", h ? "," : "", h);
        else {
            pm_buf_printf(b, "<tr data-node=\"%zu\">", h);
            td(b, a->in.hosts[h].name, 0);
        }
        for (size_t i = 0; i < nf; i++) {
            char cell[48];
            double v = pm_figure_value(&a->nodes[h], fs[i]);
            if (isfinite(v))
                report_figure_cell(lfs[i], fs[i], v, cell, sizeof cell);
            else
                snprintf(cell, sizeof cell, "-");
            if (!as_data) {
                td_num(b, cell, v);
                continue;
            }
            pm_buf_puts(d, ",");
            pm_html_json_str(d, cell);
            if (isfinite(v))
                pm_buf_printf(d, ",%.7g", v);
            else
                pm_buf_puts(d, ",null");
        }
        pm_buf_puts(as_data ? d : b, as_data ? "]" : "</tr>\n");
    }
    if (as_data)
        pm_buf_puts(d, "]");
    pm_buf_puts(b, "</tbody></table>\n");
}

void html_notes_list(html_ctx *c)
{
    const pm_analysis *a = c->a;
    pm_buf *b = &c->body;
    static const char *const sev[] = {"info", "warning", "critical"};
    if (a->nnotes == 0) {
        pm_buf_puts(b, "<p>No rule fired.</p>\n");
        return;
    }
    pm_note_line *l = NULL;
    size_t n = pm_note_lines(a, &l);
    if (!l) {
        c->oom = 1;
        return;
    }
    pm_buf_puts(b, "<ul id=\"notes\">\n");
    char buf[1024];
    for (size_t i = 0; i < n; i++) {
        const pm_note *nt = &a->notes[l[i].note];
        const char *msg = nt->message ? nt->message : nt->rule;
        int s = l[i].severity >= 0 && l[i].severity <= 2 ? l[i].severity : 0;
        if (l[i].count == 1)
            snprintf(buf, sizeof buf, "%s", msg);
        else if (l[i].count > l[i].shown)
            snprintf(buf, sizeof buf, "%zu nodes (%s and %zu more), e.g. %s", l[i].count,
                     l[i].hosts, l[i].count - l[i].shown, msg);
        else
            snprintf(buf, sizeof buf, "%zu nodes (%s), e.g. %s", l[i].count, l[i].hosts, msg);
        pm_buf_printf(b, "<li class=\"%s\"><b>[%s]</b> ", sev[s], sev[s]);
        pm_html_text(b, buf);
        pm_buf_puts(b, "</li>\n");
    }
    pm_buf_puts(b, "</ul>\n");
    free(l);
}

void html_constant_table(html_ctx *c, const flat_row *fl, size_t nfl, const char *missing)
{
    const pm_analysis *a = c->a;
    pm_buf *b = &c->body;
    if (nfl) {
        pm_buf_puts(b, "<h2 id=\"constant\">Constant over the job</h2>\n<p>Each of these metrics "
                       "stayed flat (within 0.1 % on every node) for the whole job, so it is "
                       "given as a number instead of a plot.</p>\n<table><thead><tr><th>Section"
                       "</th><th>Metric</th><th>Value</th><th>Nodes</th></tr></thead><tbody>\n");
        for (size_t i = 0; i < nfl; i++) {
            const pm_metric_result *r = &a->metrics[fl[i].metric];
            char val[96], nodes[48];
            report_constant_cells(a, r, fl[i].lo, fl[i].hi, val, sizeof val, nodes, sizeof nodes);
            pm_buf_puts(b, "<tr>");
            td(b, c->l->groups[fl[i].group].title, 0);
            td(b, r->def->name, 0);
            td(b, val, 1);
            td(b, nodes, 1);
            pm_buf_puts(b, "</tr>\n");
        }
        pm_buf_puts(b, "</tbody></table>\n");
    }
    if (*missing) {
        pm_buf_puts(b, "<p>No data on this job for: ");
        pm_html_text(b, missing);
        pm_buf_puts(b, ".</p>\n");
    }
}
