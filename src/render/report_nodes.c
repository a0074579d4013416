/* The report's pages about the nodes: data quality (a row per node, or
 * the distribution of each column and the outlying nodes when there are
 * many) and hardware (one line per configuration, folded when nodes are
 * identical).  Called by pm_report_write after the summary (and the
 * comparison); report_outlier_table is also the statistics' outliers.
 */
#include "report_int.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/mem.h"
#include "perfmon/units.h"

#define HW_MAX_ROWS 10 /* hardware configurations listed */

/* The full per-host data-quality table (up to PM_SPREAD_MIN_NODES nodes). */
static void quality_table(pdf_doc *d)
{
    const pm_analysis *a = d->a;
    static const double w[10] = {92, 44, 40, 44, 46, 44, 50, 50, 52, 49};
    static const int right[10] = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    static const char *const head[10] = {"Host",        "Samples", "Interval s",   "Dropped",
                                         "Repaired",    "Gaps",    "Clock off. s", "Sampler CPU%",
                                         "Sampler MiB", "Missed"};
    pdf_table t = {10, w, right, head, 7.5};
    pdf_table_head(d, &t);
    double span = pm_quality_span(a);
    for (size_t h = 0; h < a->in.nhosts; h++) {
        pm_quality_row q;
        pm_quality_row_of(a, h, span, &q);
        char c[10][48];
        snprintf(c[0], 48, "%s", a->in.hosts[h].name);
        snprintf(c[1], 48, "%.0f", q.samples);
        pdf_num(q.interval_s, c[2], 48);
        snprintf(c[3], 48, "%.0f", q.dropped);
        snprintf(c[4], 48, "%.0f", q.repaired);
        snprintf(c[5], 48, "%.0f", q.gaps);
        pdf_num(q.clock_offset_s, c[6], 48);
        pdf_num(q.sampler_cpu_pct, c[7], 48);
        pdf_num(q.sampler_mib, c[8], 48);
        pdf_num(q.missed, c[9], 48);
        const char *cells[10];
        for (int i = 0; i < 10; i++)
            cells[i] = c[i];
        pdf_table_row(d, &t, cells, (int)(h % 2));
    }
}

/* A job with nothing wrong in its data says so in one line. */
static void quality_clean_line(pdf_doc *d)
{
    char buf[200];
    size_t n = d->a->in.nhosts;
    if (n == 1)
        snprintf(buf, sizeof buf,
                 "The node has every sample, no correction and a clock within a second.");
    else
        snprintf(buf, sizeof buf,
                 "All %zu nodes have every sample, no correction and a clock within a second.", n);
    pdf_paragraph(d, buf, 8.5);
}

/* Below the per-node table: what is wrong, node by node (up to four), or
 * the one line of a clean job. */
static void quality_table_verdict(pdf_doc *d)
{
    pm_node_rank worst[4];
    size_t nbad = 0;
    size_t nw = pm_quality_worst(d->a, worst, 4, &nbad);
    if (!nw) {
        quality_clean_line(d);
        return;
    }
    char buf[1200];
    int w = snprintf(buf, sizeof buf, "%zu of %zu node%s %s something to report:", nbad,
                     d->a->in.nhosts, d->a->in.nhosts == 1 ? "" : "s", nbad == 1 ? "has" : "have");
    for (size_t i = 0; i < nw && w > 0 && (size_t)w < sizeof buf; i++)
        w += snprintf(buf + w, sizeof buf - (size_t)w, "%s %s: %s", i ? ";" : "",
                      d->a->in.hosts[worst[i].host].name, worst[i].reason);
    if (w > 0 && (size_t)w + 1 < sizeof buf)
        snprintf(buf + w, sizeof buf - (size_t)w, "%s.", nw < nbad ? "; ..." : "");
    pdf_paragraph(d, buf, 8.5);
}

/* A distribution table: one row per column, its min, p5, median, p95 and
 * max across the nodes. */
static const double spread_w[6] = {171, 68, 68, 68, 68, 68};
static const int spread_right[6] = {0, 1, 1, 1, 1, 1};
static const char *const spread_head[6] = {"Across nodes", "Min",      "5th pct",
                                           "Median",       "95th pct", "Max"};

static void spread_row(pdf_doc *d, const pdf_table *t, const char *label, const double *v, size_t n,
                       int shade)
{
    pm_spread sp;
    if (pm_spread_of(v, n, &sp) != 0) {
        d->oom = 1;
        return;
    }
    if (sp.n == 0)
        return;
    char c[5][48];
    pdf_num(sp.min, c[0], 48);
    pdf_num(sp.p5, c[1], 48);
    pdf_num(sp.median, c[2], 48);
    pdf_num(sp.p95, c[3], 48);
    pdf_num(sp.max, c[4], 48);
    const char *cells[6] = {label, c[0], c[1], c[2], c[3], c[4]};
    pdf_table_row(d, t, cells, shade);
}

/* Nodes at one end of a ranking, each with its reason. */
void report_outlier_table(pdf_doc *d, const char *title, const pm_node_rank *r, size_t n)
{
    static const double w[2] = {92, CONTENT_W - 92};
    static const int right[2] = {0, 0};
    const char *head[2] = {"Node", title};
    pdf_table t = {2, w, right, head, 7.5};
    pdf_table_head(d, &t);
    for (size_t i = 0; i < n; i++) {
        const char *cells[2] = {d->a->in.hosts[r[i].host].name, r[i].reason};
        pdf_table_row(d, &t, cells, (int)(i % 2));
    }
}

/* Many nodes: the distribution of each data-quality column and the nodes
 * with something wrong; the full table is in the attached JSON. */
static void quality_spread(pdf_doc *d)
{
    const pm_analysis *a = d->a;
    size_t n = a->in.nhosts;
    double *col = pm_alloc_array(10 * n, sizeof *col);
    if (!col) {
        d->oom = 1;
        return;
    }
    double span = pm_quality_span(a);
    for (size_t h = 0; h < n; h++) {
        pm_quality_row q;
        pm_quality_row_of(a, h, span, &q);
        const double v[10] = {q.samples,     q.lost,  q.interval_s,     q.dropped,
                              q.repaired,    q.gaps,  q.clock_offset_s, q.sampler_cpu_pct,
                              q.sampler_mib, q.missed};
        for (int k = 0; k < 10; k++)
            col[(size_t)k * n + h] = v[k];
    }
    static const char *const label[10] = {"Samples",          "Samples lost",
                                          "Interval s",       "Dropped (time not increasing)",
                                          "Values repaired",  "Missing values",
                                          "Clock offset s",   "Sampler CPU %",
                                          "Sampler peak MiB", "Samples missed by the sampler"};
    pdf_table t = {6, spread_w, spread_right, spread_head, 7.5};
    pdf_table_head(d, &t);
    for (int k = 0; k < 10; k++)
        spread_row(d, &t, label[k], col + (size_t)k * n, n, k % 2);
    free(col);
    d->y += 8;
    pm_node_rank worst[PM_SPREAD_OUTLIERS];
    size_t nbad = 0;
    size_t nw = pm_quality_worst(a, worst, PM_SPREAD_OUTLIERS, &nbad);
    char buf[400];
    if (nw) {
        report_outlier_table(d, "Worst nodes: what their profile lacks or had mended", worst, nw);
        d->y += 4;
        char which[64] = "";
        if (nw < nbad)
            snprintf(which, sizeof which, " (the %zu worst above)", nw);
        snprintf(buf, sizeof buf,
                 "%zu of %zu nodes %s something to report%s; the other %zu "
                 "%s every sample, no correction and a clock within a second.",
                 nbad, n, nbad == 1 ? "has" : "have", which, n - nbad,
                 n - nbad == 1 ? "has" : "have");
        pdf_paragraph(d, buf, 8.5);
    } else {
        quality_clean_line(d);
    }
    pdf_paragraph(d,
                  "Every node's row is in the attached perfmon-stats.json and in perfmon-analyze "
                  "--stats.",
                  8.5);
}

void report_quality_page(pdf_doc *d)
{
    const pm_analysis *a = d->a;
    pdf_new_page(d);
    pdf_heading(d, "Data quality", 1);
    if (a->in.nhosts > PM_SPREAD_MIN_NODES) {
        char buf[400];
        snprintf(buf, sizeof buf,
                 "Over the %zu nodes: samples analysed, samples the job's span "
                 "should hold but a node lacks, samples dropped, values repaired, missing values, "
                 "the offset of each node's clock against the others, and what the sampler itself "
                 "cost; then the nodes with something wrong.",
                 a->in.nhosts);
        pdf_paragraph(d, buf, 8.5);
        d->y += 4;
        quality_spread(d);
    } else {
        pdf_paragraph(
            d,
            "Per node: samples analysed, samples dropped for a non-increasing timestamp, "
            "values repaired (counter resets), missing values, the estimated offset of the "
            "node's clock against the others, and what the sampler itself cost.",
            8.5);
        d->y += 4;
        quality_table(d);
        d->y += 4;
        quality_table_verdict(d);
    }
    d->y += 10;
    int any = 0;
    for (size_t m = 0; m < a->nmetrics; m++) {
        const pm_metric_result *r = &a->metrics[m];
        if (r->repaired || r->wraps || r->qc.n[PM_Q_DROPPED])
            any = 1;
    }
    pdf_subheading(d, "Metrics with corrected values");
    if (!any) {
        pdf_paragraph(d, "No counter wrapped or reset: every plotted value is as recorded.", 8.5);
    } else {
        static const double w2[5] = {191, 80, 80, 80, 80};
        static const int r2[5] = {0, 1, 1, 1, 1};
        static const char *const h2[5] = {"Metric", "Repaired", "Wraps", "Dropped", "Interpolated"};
        pdf_table t2 = {5, w2, r2, h2, 8};
        pdf_table_head(d, &t2);
        size_t row = 0;
        for (size_t m = 0; m < a->nmetrics; m++) {
            const pm_metric_result *r = &a->metrics[m];
            if (!(r->repaired || r->wraps || r->qc.n[PM_Q_DROPPED]))
                continue;
            char c[5][64];
            snprintf(c[0], 64, "%s", r->def->name);
            snprintf(c[1], 64, "%zu", r->repaired);
            snprintf(c[2], 64, "%zu", r->wraps);
            snprintf(c[3], 64, "%llu", (unsigned long long)r->qc.n[PM_Q_DROPPED]);
            snprintf(c[4], 64, "%zu", r->agg.interpolated);
            const char *cells[5] = {c[0], c[1], c[2], c[3], c[4]};
            pdf_table_row(d, &t2, cells, (int)(row++ % 2));
        }
    }
    if (a->in.nwarnings) {
        d->y += 8;
        pdf_subheading(d, "Input problems");
        for (size_t i = 0; i < a->in.nwarnings && i < 60; i++)
            pdf_paragraph(d, a->in.warnings[i], 7.5);
        if (a->in.nwarnings > 60) {
            char buf[64];
            snprintf(buf, sizeof buf, "... and %zu more.", a->in.nwarnings - 60);
            pdf_paragraph(d, buf, 7.5);
        }
    }
}

/* One line of hardware description per host, folded when identical. */
void report_hardware_page(pdf_doc *d)
{
    const pm_analysis *a = d->a;
    /* Below the data-quality table when it leaves room (it does up to
     * some 40 nodes): a page less to turn. */
    if (d->y + 140 > PAGE_H - BOTTOM)
        pdf_new_page(d);
    else
        d->y += 14;
    pdf_heading(d, "Hardware", 1);
    static const double w[6] = {150, 66, 56, 88, 118, 33};
    static const int right[6] = {0, 0, 1, 0, 0, 1};
    static const char *const head[6] = {"CPU",    "Sockets x cores",          "Memory GiB",
                                        "Kernel", "OS / interconnect / RAPL", "Nodes"};
    pdf_table t = {6, w, right, head, 7.5};
    pdf_table_head(d, &t);
    typedef char hw_row[6][160]; /* one configuration: its six cells */
    hw_row *rows = calloc(a->in.nhosts ? a->in.nhosts : 1, sizeof *rows);
    size_t *count = calloc(a->in.nhosts ? a->in.nhosts : 1, sizeof *count);
    char **first = calloc(a->in.nhosts ? a->in.nhosts : 1, sizeof *first);
    size_t nrows = 0;
    if (!rows || !count || !first) {
        d->oom = 1;
        free(rows);
        free(count);
        free(first);
        return;
    }
    for (size_t h = 0; h < a->in.nhosts; h++) {
        char r[6][160];
        memset(r, 0, sizeof r);
        const pm_profile *p = a->in.hosts[h].prof;
        cJSON *j = p && p->meta_json ? cJSON_Parse(p->meta_json) : NULL;
        const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(j, "cpu");
        const cJSON *x;
        snprintf(r[0], 160, "%s", "unknown");
        if ((x = cJSON_GetObjectItemCaseSensitive(cpu, "model_name")) && cJSON_IsString(x))
            snprintf(r[0], 160, "%s", x->valuestring);
        const cJSON *so = cJSON_GetObjectItemCaseSensitive(cpu, "sockets");
        const cJSON *co = cJSON_GetObjectItemCaseSensitive(cpu, "cores");
        const cJSON *th = cJSON_GetObjectItemCaseSensitive(cpu, "threads");
        if (cJSON_IsNumber(so) && cJSON_IsNumber(co))
            snprintf(r[1], 160, "%d x %d (%d thr)", so->valueint,
                     so->valueint ? co->valueint / so->valueint : co->valueint,
                     cJSON_IsNumber(th) ? th->valueint : 0);
        else
            snprintf(r[1], 160, "-");
        pdf_num(a->in.hosts[h].mem_total / 1073741824.0, r[2], 160);
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "kernel")) && cJSON_IsString(x))
            snprintf(r[3], 160, "%s", x->valuestring);
        const cJSON *os = cJSON_GetObjectItemCaseSensitive(j, "os");
        const cJSON *ib = cJSON_GetObjectItemCaseSensitive(j, "infiniband_ports");
        const cJSON *rapl = cJSON_GetObjectItemCaseSensitive(j, "rapl_domains");
        snprintf(r[4], 160, "%s; IB ports %d; RAPL %d", cJSON_IsString(os) ? os->valuestring : "-",
                 cJSON_IsArray(ib) ? cJSON_GetArraySize(ib) : 0,
                 cJSON_IsArray(rapl) ? cJSON_GetArraySize(rapl) : 0);
        if (!j)
            snprintf(r[4], 160, "no metadata (%s input)", a->in.hosts[h].format);
        cJSON_Delete(j);
        size_t k;
        for (k = 0; k < nrows; k++)
            if (memcmp(rows[k], r, sizeof r) == 0)
                break;
        if (k == nrows) {
            memcpy(rows[nrows], r, sizeof r);
            first[nrows] = a->in.hosts[h].name;
            nrows++;
        }
        count[k]++;
    }
    /* The commonest configurations first, at most HW_MAX_ROWS of them: a
     * job on many nodes gets a few lines, not one per node. */
    size_t shown = 0, rest = 0;
    for (size_t r = 0; r < nrows; r++) {
        size_t k = 0;
        for (size_t j = 1; j < nrows; j++)
            if (count[j] > count[k])
                k = j;
        if (r < HW_MAX_ROWS) {
            char n[32];
            snprintf(n, sizeof n, "%zu", count[k]);
            const char *cells[6] = {rows[k][0], rows[k][1], rows[k][2], rows[k][3], rows[k][4], n};
            pdf_table_row(d, &t, cells, (int)(r % 2));
            shown++;
        } else {
            rest += count[k];
        }
        count[k] = 0;
    }
    d->y += 6;
    char buf[256];
    if (shown < nrows)
        snprintf(buf, sizeof buf,
                 "%zu distinct configurations over %zu nodes; the %zu above "
                 "cover %zu nodes, %zu more configurations the other %zu.",
                 nrows, a->in.nhosts, shown, a->in.nhosts - rest, nrows - shown, rest);
    else
        snprintf(buf, sizeof buf, "%zu distinct configuration%s over %zu node%s.", nrows,
                 nrows == 1 ? "" : "s", a->in.nhosts, a->in.nhosts == 1 ? "" : "s");
    pdf_paragraph(d, buf, 8.5);
    free(rows);
    free(count);
    free(first);
}
