/* The report's first page: the job at a glance (who, where, when, how
 * long), requested against used, resource use per phase, the key figures,
 * the nodes that stand out and the efficiency notes, and the room where
 * pm_report_write later writes the contents (d->toc_page).  Called once,
 * first, by pm_report_write; report_or_dash and report_nodes_text also
 * make the running header.
 */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/buf.h"
#include "perfmon/export.h"
#include "perfmon/mem.h"
#include "perfmon/phase_stats.h"
#include "perfmon/request_use.h"
#include "perfmon/units.h"

static size_t total_samples(const pm_analysis *a)
{
    size_t n = 0;
    for (size_t h = 0; h < a->in.nhosts; h++)
        n += a->in.hosts[h].n;
    return n;
}

static void kv_row(pdf_doc *d, const char *k, const char *v)
{
    static const double w[2] = {130, CONTENT_W - 130};
    static const int right[2] = {0, 0};
    pdf_table t = {2, w, right, NULL, 9};
    const char *cells[2] = {k, v};
    pdf_table_row(d, &t, cells, 0);
}

/* The efficiency notes, a rule that fired on several nodes folded into
 * one line (most severe first, the job-level notes before node notes). */
static void notes(pdf_doc *d)
{
    const pm_analysis *a = d->a;
    static const char *const sev[] = {"info", "warning", "critical"};
    /* info blue-grey, warning orange, critical red */
    static const double ink[3][3] = {{0.25, 0.35, 0.55}, {0.78, 0.42, 0.0}, {0.78, 0.08, 0.08}};
    if (a->nnotes == 0) {
        pdf_paragraph(d, "No rule fired.", 9);
        return;
    }
    pm_note_line *l = NULL;
    size_t n = pm_note_lines(a, &l);
    if (!l) {
        d->oom = 1;
        return;
    }
    char buf[1024];
    for (size_t i = 0; i < n; i++) {
        const pm_note *nt = &a->notes[l[i].note];
        const char *msg = nt->message ? nt->message : nt->rule;
        int s = l[i].severity;
        memcpy(d->ink, ink[s], sizeof d->ink);
        if (l[i].count == 1)
            snprintf(buf, sizeof buf, "[%s] %s", sev[s], msg);
        else if (l[i].count > l[i].shown)
            snprintf(buf, sizeof buf, "[%s] %zu nodes (%s and %zu more), e.g. %s", sev[s],
                     l[i].count, l[i].hosts, l[i].count - l[i].shown, msg);
        else
            snprintf(buf, sizeof buf, "[%s] %zu nodes (%s), e.g. %s", sev[s], l[i].count,
                     l[i].hosts, msg);
        pdf_paragraph(d, buf, 9);
        memset(d->ink, 0, sizeof d->ink);
    }
    free(l);
}

const char *report_or_dash(const char *s)
{
    return s && *s ? s : "-";
}

/* "3 nodes", or "1 node, 2 GPUs": GPUs are hosts of their own in the
 * analysis (gpu-<n>.<node>) but not nodes of the job. */
void report_nodes_text(const pm_analysis *a, char *buf, size_t cap)
{
    size_t ngpu = 0;
    for (size_t h = 0; h < a->in.nhosts; h++)
        ngpu += a->in.hosts[h].gpu != 0;
    size_t nn = a->in.nhosts - ngpu;
    int w = snprintf(buf, cap, "%zu node%s", nn, nn == 1 ? "" : "s");
    if (ngpu && w > 0 && (size_t)w < cap)
        snprintf(buf + w, cap - (size_t)w, ", %zu GPU%s", ngpu, ngpu == 1 ? "" : "s");
}

/* Requested vs used (request_out.c's lines, as --stats), the note for
 * far-apart figures in the warning colour. */
static void request_rows(pdf_doc *d)
{
    char lines[3][160], note[512];
    size_t n;
    pm_request_use_lines(d->a, lines, &n);
    for (size_t i = 0; i < n; i++) {
        const char *colon = strchr(lines[i], ':');
        char k[16];
        snprintf(k, sizeof k, "%.*s", colon ? (int)(colon - lines[i]) : 0, lines[i]);
        kv_row(d, colon ? k : "Requested", colon ? colon + 2 : lines[i]);
    }
    pm_request_use u;
    pm_request_use_compute(d->a, &u);
    if (pm_request_note(&u, note, sizeof note)) {
        static const double orange[3] = {0.78, 0.42, 0.0};
        memcpy(d->ink, orange, sizeof d->ink);
        pdf_paragraph(d, note, 9);
        memset(d->ink, 0, sizeof d->ink);
    }
}

/* Resource use per phase on page 1, where the job has phases: the cells
 * --stats prints (pm_phase_use_cells). */
static void phase_use_table(pdf_doc *d)
{
    const pm_phase_stats *st = d->a->phase_stats;
    if (!st || !st->nkinds)
        return;
    pdf_subheading(d, "Resource use per phase (whole job)");
    static const double w[PM_PHASE_USE_COLS] = {95, 46, 52, 48, 56, 52, 54, 52, 56};
    static const int right[PM_PHASE_USE_COLS] = {0, 1, 1, 1, 1, 1, 1, 1, 1};
    pdf_table t = {PM_PHASE_USE_COLS, w, right, PM_PHASE_USE_HEAD, 8};
    pdf_table_head(d, &t);
    for (size_t k = 0; k < st->nkinds; k++) {
        char c[PM_PHASE_USE_COLS][48];
        const char *cells[PM_PHASE_USE_COLS];
        pm_phase_use_cells(&st->kinds[k], c);
        for (int i = 0; i < PM_PHASE_USE_COLS; i++)
            cells[i] = c[i];
        pdf_table_row(d, &t, cells, (int)(k % 2));
    }
    pdf_paragraph(d,
                  "Time: the longest node's; CPU time in core-seconds, its share of the CPUs the "
                  "nodes have over the phase; memory: the highest node's peak of the job's RSS "
                  "(of its memory used where no process tree was followed); bytes summed over "
                  "nodes.",
                  7.5);
    d->y += 8;
    if (!pm_phase_energy_any(st))
        return;
    /* the energy of each kind: the same cells as --stats' "Energy per phase" */
    static const double we[PM_PHASE_ENERGY_COLS] = {95, 80, 60, 230};
    static const int righte[PM_PHASE_ENERGY_COLS] = {0, 1, 1, 0};
    pdf_table te = {PM_PHASE_ENERGY_COLS, we, righte, PM_PHASE_ENERGY_HEAD, 8};
    pdf_table_head(d, &te);
    for (size_t k = 0; k < st->nkinds; k++) {
        char c[PM_PHASE_ENERGY_COLS][48];
        const char *cells[PM_PHASE_ENERGY_COLS];
        pm_phase_energy_cells(&st->kinds[k], c);
        for (int i = 0; i < PM_PHASE_ENERGY_COLS; i++)
            cells[i] = c[i];
        pdf_table_row(d, &te, cells, (int)(k % 2));
    }
    pdf_paragraph(d,
                  "Energy summed over the kind's phases and nodes: the CPUs' from RAPL's package "
                  "and DRAM counters, the GPUs' from NVML's energy counter, their power "
                  "integrated only where a GPU has no counter.",
                  7.5);
    d->y += 8;
}
size_t report_figure_span(const pm_analysis *a, const pm_figure *f, double *mn, double *mean,
                          double *mx)
{
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    size_t k = 0;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        double v = pm_figure_value(&a->nodes[h], f);
        if (!isfinite(v))
            continue;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        sum += v;
        k++;
    }
    *mn = lo;
    *mx = hi;
    *mean = k ? sum / (double)k : NAN;
    return k;
}

/* Byte counts scaled to their size (KiB ... TiB), energies from J to MWh
 * and times (CPU hours too) from s to h, each cell on its own, by the
 * formatters --stats and --compare use; other figures as numbers with
 * their unit in the label. */
int report_figure_cell(const pm_layout_figure *lf, const pm_figure *f, double v, char *out,
                       size_t cap)
{
    if (!strcmp(f->unit, "MiB") || !strcmp(f->unit, "B")) {
        pm_fmt_bytes(v * (!strcmp(f->unit, "MiB") ? 1048576.0 : 1.0), out, cap);
        return 1;
    }
    if (!strcmp(f->unit, "kWh") || !strcmp(f->unit, "J")) {
        pm_fmt_energy(v * (!strcmp(f->unit, "kWh") ? 3.6e6 : 1.0), out, cap);
        return 1;
    }
    if (!strcmp(f->unit, "h") || !strcmp(f->unit, "s")) {
        pm_fmt_duration(v * (!strcmp(f->unit, "h") ? 3600.0 : 1.0), out, cap);
        return 1;
    }
    pdf_num(v * lf->scale, out, cap);
    return 0;
}

void report_figure_label(const pm_layout_figure *lf, const pm_figure *f, int scaled, char *out,
                         size_t cap)
{
    const char *lab = lf->label[0] ? lf->label : f->label;
    if (scaled)
        snprintf(out, cap, "%s", lab);
    else
        snprintf(out, cap, "%s (%s)", lab, lf->unit[0] ? lf->unit : f->unit);
}

int report_figure_row_make(const pm_analysis *a, const pm_layout_figure *lf, report_figure_row *row)
{
    const pm_figure *f = pm_figure_find(lf->key);
    double mn, mean, mx;
    if (!f || !report_figure_span(a, f, &mn, &mean, &mx))
        return 0;
    char(*c)[160] = row->cell;
    int scaled = report_figure_cell(lf, f, mn, c[1], sizeof c[1]);
    report_figure_cell(lf, f, mean, c[2], sizeof c[2]);
    report_figure_cell(lf, f, mx, c[3], sizeof c[3]);
    report_figure_cell(lf, f, pm_figure_value(&a->job, f), c[4], sizeof c[4]);
    report_figure_label(lf, f, scaled, c[0], sizeof c[0]);
    return 1;
}

/* The verdict in words, then what the profile cannot say (gray). */
static void verdict_lines(pdf_doc *d)
{
    const pm_analysis *a = d->a;
    char verdict[2048];
    if (pm_verdict_text(a, verdict, sizeof verdict)) {
        pdf_paragraph(d, verdict, 10.5);
        d->y += 3;
    }
    char limits[8][160];
    size_t nlim = pm_verdict_limits(a, limits, 8);
    static const double gray[3] = {0.35, 0.35, 0.35};
    memcpy(d->ink, gray, sizeof d->ink);
    for (size_t i = 0; i < nlim; i++)
        pdf_paragraph(d, limits[i], 8.5);
    memset(d->ink, 0, sizeof d->ink);
    d->y += 8;
}

/* The job's facts: id, user, scheduler, nodes, span, sampling, command,
 * status, what it asked for. */
static void job_rows(pdf_doc *d)
{
    const pm_analysis *a = d->a;
    char buf[512], b2[128];
    snprintf(buf, sizeof buf, "%s", pm_analysis_info(a, offsetof(pm_profile_info, job_id)));
    kv_row(d, "Job ID", buf[0] ? buf : "-");
    kv_row(d, "User", report_or_dash(pm_analysis_info(a, offsetof(pm_profile_info, user))));
    kv_row(d, "Scheduler",
           report_or_dash(pm_analysis_info(a, offsetof(pm_profile_info, scheduler))));
    report_nodes_text(a, buf, sizeof buf);
    kv_row(d, "Nodes", buf);
    pdf_utc(a->t_start, buf, sizeof buf);
    kv_row(d, "Start", buf);
    pdf_utc(a->t_end, buf, sizeof buf);
    kv_row(d, "End", buf);
    pdf_duration(a->t_end - a->t_start, buf, sizeof buf);
    kv_row(d, "Duration", buf);
    double iv = NAN;
    if (a->in.nhosts)
        iv = a->in.hosts[0].interval;
    pdf_num(iv, b2, sizeof b2);
    snprintf(buf, sizeof buf, "%s s (analysis grid %.3g s)", b2, a->grid_step);
    kv_row(d, "Sampling interval", buf);
    snprintf(buf, sizeof buf, "%zu", total_samples(a));
    kv_row(d, "Samples analysed", buf);
    const char *cmd = pm_analysis_info(a, offsetof(pm_profile_info, command));
    if (*cmd)
        kv_row(d, "Command", cmd);
    if (pm_analysis_incomplete(a, buf, sizeof buf))
        kv_row(d, "Status", buf);
    request_rows(d);
    d->y += 10;
}

/* The layout's key figures: per node and for the job. */
static void key_figures_table(pdf_doc *d)
{
    const pm_analysis *a = d->a;
    pdf_subheading(d, "Key figures (per node, and for the whole job)");
    static const double w[5] = {175, 84, 84, 84, 84};
    static const int right[5] = {0, 1, 1, 1, 1};
    static const char *const head[5] = {"Figure", "Min node", "Average", "Max node", "Job"};
    pdf_table t = {5, w, right, head, 8.5};
    pdf_table_head(d, &t);
    for (size_t i = 0; i < d->l->nfigures; i++) {
        report_figure_row row;
        if (!report_figure_row_make(a, &d->l->figures[i], &row))
            continue;
        const char *cells[5] = {row.cell[0], row.cell[1], row.cell[2], row.cell[3], row.cell[4]};
        pdf_table_row(d, &t, cells, (int)(i % 2));
    }
    d->y += 8;
}

/* Nodes that stand out, in both directions: the metrics whose busiest
 * node's mean is furthest above the per-node average, or whose least
 * busy node's is furthest below it (an idle node among many hardly
 * moves the maximum). */
static void stand_out(pdf_doc *d)
{
    const pm_analysis *a = d->a;
    char buf[512];
    if (a->in.nhosts > 1) {
        pdf_subheading(d, "Nodes that stand out");
        int shown = 0;
        size_t used[5];
        for (int pick = 0; pick < 5; pick++) {
            double best = 1.15;
            size_t bm = SIZE_MAX;
            for (size_t m = 0; m < a->nmetrics; m++) {
                int dup = 0;
                for (int u = 0; u < pick; u++)
                    dup |= used[u] == m;
                const pm_metric_result *r = &a->metrics[m];
                if (dup || r->nhosts_with_data < 2 || !isfinite(r->imbalance) ||
                    strcmp(r->def->page, "quality") == 0)
                    continue;
                double lo = INFINITY;
                for (size_t h = 0; h < a->in.nhosts; h++)
                    if (r->host[h] && isfinite(r->host[h]->st.mean) && r->host[h]->st.mean < lo)
                        lo = r->host[h]->st.mean;
                double score = r->imbalance;
                if (lo > 0 && isfinite(lo) && r->avg_per_node / lo > score)
                    score = r->avg_per_node / lo;
                if (score > best) {
                    best = score;
                    bm = m;
                }
            }
            if (bm == SIZE_MAX)
                break;
            used[pick] = bm;
            const pm_metric_result *r = &a->metrics[bm];
            /* The hosts with the largest and the smallest mean. */
            size_t hm = 0, hl = 0;
            double hv = -INFINITY, lv = INFINITY;
            for (size_t h = 0; h < a->in.nhosts; h++) {
                if (!r->host[h] || !isfinite(r->host[h]->st.mean))
                    continue;
                if (r->host[h]->st.mean > hv) {
                    hv = r->host[h]->st.mean;
                    hm = h;
                }
                if (r->host[h]->st.mean < lv) {
                    lv = r->host[h]->st.mean;
                    hl = h;
                }
            }
            char v1[32], v2[32], v3[32];
            pdf_num(hv, v1, sizeof v1);
            pdf_num(r->avg_per_node, v2, sizeof v2);
            pdf_num(lv, v3, sizeof v3);
            const char *u = pm_unit_shown(r->def->unit), *g = *u ? " " : "";
            int wn =
                snprintf(buf, sizeof buf, "%s: %s averages %s%s%s against %s%s%s per node (x%.2f)",
                         r->def->name, a->in.hosts[hm].name, v1, g, u, v2, g, u, r->imbalance);
            if (wn > 0 && (size_t)wn < sizeof buf && hl != hm && lv * 1.15 < r->avg_per_node)
                snprintf(buf + wn, sizeof buf - (size_t)wn, "; %s only %s%s%s.",
                         a->in.hosts[hl].name, v3, g, u);
            else if (wn > 0 && (size_t)wn + 1 < sizeof buf)
                snprintf(buf + wn, sizeof buf - (size_t)wn, ".");
            pdf_paragraph(d, buf, 9);
            shown++;
        }
        if (!shown)
            pdf_paragraph(d, "No metric differs between nodes by more than 15%.", 9);
        d->y += 6;
    }
}

void report_summary_page(pdf_doc *d)
{
    pdf_text(d, MARGIN_X, d->y, 20, 1, "Job performance report");
    d->y += 30;
    verdict_lines(d);
    job_rows(d);
    key_figures_table(d);
    phase_use_table(d);
    stand_out(d);
    pdf_subheading(d, "Efficiency notes");
    notes(d);
    d->y += 6;
    /* Contents: lines filled in with page numbers at the end. */
    pdf_subheading(d, "Contents");
    d->toc_page = d->page;
}
