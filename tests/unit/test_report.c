/* Plots and the PDF report: page plan, header fields, host names and
 * statistics in the text of the PDF, the attached statistics, reproducible
 * bytes, PNG sizes and names, a golden image, a 200-host job, and errors.
 *
 * The PDF is read back with poppler-utils (pdfinfo, pdftotext, pdfdetach),
 * which `make deps` installs; without them those checks are skipped. */
#include <cairo.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "perfmon/analysis.h"
#include "perfmon/export.h"
#include "perfmon/fileio.h"
#include "perfmon/profile.h"
#include "perfmon/report.h"
#include "perfmon/spread.h"
#include "synth.h"
#include "testutil.h"

static char g_cat[4096], g_rules[4096], g_layout[4096];

static int have(const char *tool)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

/* Output of a shell command (at most cap - 1 bytes). */
static char *capture(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 20, n = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    size_t r;
    while ((r = fread(out + n, 1, cap - 1 - n, p)) > 0) {
        n += r;
        if (n == cap - 1) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
    }
    out[n] = 0;
    pclose(p);
    return out;
}

static void templates(void)
{
    snprintf(g_cat, sizeof g_cat, "%s/../templates/metrics.json", pm_test_fixtures());
    snprintf(g_rules, sizeof g_rules, "%s/../templates/rules.json", pm_test_fixtures());
    snprintf(g_layout, sizeof g_layout, "%s/../templates/report.json", pm_test_fixtures());
}

/* A job of n hosts; host k runs at 20 + (k * 7) % 60 % CPU with a wave,
 * host `hot` (if < n) at 97 %. */
static void make_job(const char *dir, size_t n, size_t samples, size_t hot, const char *name0)
{
    for (size_t k = 0; k < n; k++) {
        char host[64], path[4200];
        if (k == 0 && name0)
            snprintf(host, sizeof host, "%s", name0);
        else
            snprintf(host, sizeof host, "node-%03zu", k);
        snprintf(path, sizeof path, "%s/%s.pmp", dir, host);
        pm_synth s;
        pm_synth_init(&s, host);
        s.n = samples;
        s.interval_s = 10;
        s.cpu_pct = k == hot ? 90 : 20 + (double)((k * 7) % 60);
        s.cpu_wave = k == hot ? 5 : 10;
        s.wave_period_s = 600;
        s.wave_phase = (double)k * 0.3;
        s.net_rate = 1048576.0 * (1 + (double)(k % 4));
        pm_error err;
        assert_int_equal(pm_synth_write(path, &s, &err), 0);
    }
}

static pm_analysis *analyse(const char *dir)
{
    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    o.catalog_path = g_cat;
    o.rules_path = g_rules;
    pm_analysis *a = NULL;
    pm_error err;
    const char *paths[1] = {dir};
    int rc = pm_analysis_run(paths, 1, &o, &a, &err);
    if (rc)
        fprintf(stderr, "analysis: %s\n", err.msg);
    assert_int_equal(rc, 0);
    return a;
}

static void write_pdf(const pm_analysis *a, const char *path)
{
    pm_report_opts r;
    pm_report_opts_init(&r);
    r.pdf_path = path;
    r.layout_path = g_layout;
    r.creation_time = 1700000000;
    char *js = pm_stats_json_string(a);
    assert_non_null(js);
    r.stats_json = js;
    pm_error err;
    int rc = pm_report_write(a, &r, &err);
    if (rc)
        fprintf(stderr, "report: %s\n", err.msg);
    assert_int_equal(rc, 0);
    free(js);
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* The report's number format for values in [1, 100): two decimals. */
static void two_decimals(double v, char *out, size_t cap)
{
    if (v == floor(v))
        snprintf(out, cap, "%.0f", v);
    else
        snprintf(out, cap, "%.2f", v);
}

static void test_report_small_job(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char job[4200], pdf[4200], pdf2[4200];
    snprintf(job, sizeof job, "%s/job", dir);
    mkdir(job, 0755);
    make_job(job, 3, 360, 99, "nœud-ü1");
    pm_analysis *a = analyse(job);
    snprintf(pdf, sizeof pdf, "%s/report.pdf", dir);
    snprintf(pdf2, sizeof pdf2, "%s/again.pdf", dir);
    write_pdf(a, pdf);
    write_pdf(a, pdf2);

    /* Reproducible: the same input and creation time, the same bytes. */
    size_t n1, n2;
    char *b1 = NULL, *b2 = NULL;
    pm_error err;
    assert_int_equal(pm_read_whole(pdf, 64 << 20, &b1, &n1, &err), 0);
    assert_int_equal(pm_read_whole(pdf2, 64 << 20, &b2, &n2, &err), 0);
    assert_true(n1 > 10000);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1);
    assert_memory_equal(b1, "%PDF-", 5);
    free(b1);
    free(b2);

    if (!have("pdftotext") || !have("pdfinfo") || !have("pdfdetach")) {
        fprintf(stderr, "SKIP PDF contents: poppler-utils not installed\n");
    } else {
        char cmd[9000];
        snprintf(cmd, sizeof cmd, "pdfinfo '%s' 2>/dev/null", pdf);
        char *info = capture(cmd);
        int pages = 0;
        const char *pp = strstr(info, "Pages:");
        assert_non_null(pp);
        pages = atoi(pp + 6);
        assert_non_null(strstr(info, "Page size:       595.276 x 841.89 pts (A4)"));
        assert_non_null(strstr(info, "Title:           perfmon job report synthetic"));
        assert_non_null(strstr(info, "CreationDate:    Tue Nov 14 22:13:20 2023 UTC"));
        free(info);

        snprintf(cmd, sizeof cmd, "pdftotext -layout '%s' - 2>/dev/null", pdf);
        char *text = capture(cmd);
        /* Every page: the header and "Page N of M". */
        assert_int_equal(count_of(text, "Job synthetic"), pages);
        char last[64];
        snprintf(last, sizeof last, "Page %d of %d", pages, pages);
        assert_non_null(strstr(text, last));
        assert_non_null(strstr(text, "3 nodes"));
        /* Summary fields, the sections, hosts (UTF-8 included). */
        assert_non_null(strstr(text, "Job performance report"));
        assert_non_null(strstr(text, "Key figures"));
        assert_non_null(strstr(text, "Data quality"));
        assert_non_null(strstr(text, "Hardware"));
        assert_non_null(strstr(text, "CPU and memory: all nodes"));
        /* The synthetic power is constant (100 W per package): a row of
         * the constant table, not two pages of flat lines. */
        assert_null(strstr(text, "Energy: per node"));
        assert_non_null(strstr(text, "Constant over the job"));
        assert_non_null(strstr(text, "Package Power"));
        /* Sections without data: listed on one line, not as pages. */
        const char *nd = strstr(text, "No data on this job for:");
        assert_non_null(nd);
        const char *eol = strchr(nd, '\n');
        const char *gpu = strstr(nd, "GPU");
        assert_true(gpu && eol && gpu < eol);
        assert_non_null(strstr(text, "Statistics per node"));
        assert_non_null(strstr(text, "nœud-ü1"));
        assert_non_null(strstr(text, "node-002"));
        /* No group without data: this job has no GPU. */
        assert_null(strstr(text, "GPU: all nodes"));
        /* The statistics appendix shows --stats' numbers. */
        const pm_figure *f = pm_figure_find("cpu_avg_utilization_pct");
        assert_non_null(f);
        for (size_t h = 0; h < a->in.nhosts; h++) {
            char v[64];
            two_decimals(pm_figure_value(&a->nodes[h], f), v, sizeof v);
            assert_non_null(strstr(text, v));
        }
        const pm_figure *e = pm_figure_find("energy_j");
        char ev[64];
        snprintf(ev, sizeof ev, "%.0f", pm_figure_value(&a->job, e));
        assert_non_null(strstr(text, ev));
        free(text);

        /* The attached statistics are --stats --json. */
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && pdfdetach -saveall '%s' 2>&1 && cat perfmon-stats.json", dir, pdf);
        char *att = capture(cmd);
        char *js = pm_stats_json_string(a);
        assert_non_null(strstr(att, js));
        free(js);
        free(att);
    }
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

/* Pages of a PDF, from pdfinfo; -1 without poppler. */
static int pdf_pages(const char *pdf)
{
    if (!have("pdfinfo"))
        return -1;
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "pdfinfo '%s' 2>/dev/null", pdf);
    char *info = capture(cmd);
    const char *pp = strstr(info, "Pages:");
    assert_non_null(pp);
    int pages = atoi(pp + 6);
    free(info);
    return pages;
}

/* The node rows of the statistics attached to a PDF (pdfdetach), parsed
 * back; -1 without poppler.  *idle_over20 receives the figure
 * cpu_avg_utilization_over20_pct of host `host` (NaN if absent). */
static int attached_nodes(const char *pdf, const char *host, double *idle_over20)
{
    *idle_over20 = NAN;
    if (!have("pdfdetach"))
        return -1;
    char dir[4200], cmd[9000];
    snprintf(dir, sizeof dir, "%s.att", pdf);
    mkdir(dir, 0755);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && pdfdetach -saveall '%s' >/dev/null 2>&1 && cat perfmon-stats.json", dir,
             pdf);
    char *js = capture(cmd);
    cJSON *root = cJSON_Parse(js);
    free(js);
    assert_non_null(root);
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
    assert_true(cJSON_IsArray(nodes));
    int n = cJSON_GetArraySize(nodes);
    const cJSON *x;
    cJSON_ArrayForEach(x, nodes) {
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(x, "host");
        if (!cJSON_IsString(h) || strcmp(h->valuestring, host) != 0)
            continue;
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(x, "figures");
        const cJSON *o =
            cJSON_GetObjectItemCaseSensitive(f ? f : x, "cpu_avg_utilization_over20_pct");
        if (cJSON_IsNumber(o))
            *idle_over20 = o->valuedouble;
    }
    cJSON_Delete(root);
    return n;
}

/* Only pages with something to see (issue 15): a 1-minute job on one node
 * in at most 8 pages, with no all-node copy of its per-node plots; a
 * 1-hour job on 16 nodes in at most 20.  (Before: 22 and 24.) */
static void test_page_counts(void **state)
{
    (void)state;
    if (!have("pdfinfo") || !have("pdftotext")) {
        fprintf(stderr, "SKIP page counts: poppler-utils not installed\n");
        return;
    }
    char *dir = strdup(pm_test_tmpdir());
    char job[4200], pdf[4200], path[4300], cmd[9000];
    snprintf(job, sizeof job, "%s/one", dir);
    mkdir(job, 0755);
    pm_synth s;
    pm_synth_init(&s, "n01");
    s.n = 60; /* 1 minute at 1 s */
    s.cpu_pct = 60;
    s.cpu_wave = 30;
    s.wave_period_s = 20;
    snprintf(path, sizeof path, "%s/n01.pmp", job);
    pm_error err;
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    pm_analysis *a = analyse(job);
    snprintf(pdf, sizeof pdf, "%s/one.pdf", dir);
    write_pdf(a, pdf);
    int pages = pdf_pages(pdf);
    fprintf(stderr, "1 node, 1 minute: %d pages\n", pages);
    assert_true(pages >= 3 && pages <= 8);
    snprintf(cmd, sizeof cmd, "pdftotext -layout '%s' - 2>/dev/null", pdf);
    char *text = capture(cmd);
    assert_non_null(strstr(text, "CPU and memory: per node"));
    assert_null(strstr(text, ": all nodes"));
    assert_non_null(strstr(text, "Constant over the job"));
    free(text);
    pm_analysis_free(a);

    snprintf(job, sizeof job, "%s/sixteen", dir);
    mkdir(job, 0755);
    make_job(job, 16, 360, 3, NULL); /* 1 hour at 10 s */
    a = analyse(job);
    snprintf(pdf, sizeof pdf, "%s/sixteen.pdf", dir);
    write_pdf(a, pdf);
    pages = pdf_pages(pdf);
    fprintf(stderr, "16 nodes, 1 hour: %d pages\n", pages);
    assert_true(pages >= 3 && pages <= 20);
    snprintf(cmd, sizeof cmd, "pdftotext -layout '%s' - 2>/dev/null", pdf);
    text = capture(cmd);
    assert_non_null(strstr(text, "CPU and memory: all nodes"));
    assert_non_null(strstr(text, "CPU and memory: per node"));
    free(text);
    pm_analysis_free(a);

    /* SKA perfmon's cpu_metrics.json of 16 hosts, every field it records
     * varying at random (nothing constant): at most 20 pages too (was 24). */
    snprintf(job, sizeof job, "%s/ska", dir);
    mkdir(job, 0755);
    snprintf(path, sizeof path, "%s/cpu_metrics.json", job);
    assert_int_equal(pm_synth_write_ska(path, 16, 360), 0);
    a = analyse(path);
    snprintf(pdf, sizeof pdf, "%s/ska.pdf", dir);
    write_pdf(a, pdf);
    pages = pdf_pages(pdf);
    fprintf(stderr, "SKA input, 16 hosts: %d pages\n", pages);
    assert_true(pages >= 3 && pages <= 20);
    pm_analysis_free(a);

    /* 512 nodes in at most 24 pages, and 2048 nodes in no more: the tables
     * above 16 nodes are distributions and outliers, the per-node plots
     * bands, the maps one image each (before: 512 nodes 77 pages, of them
     * 8 of data quality and 59 of statistics per node). */
    if (pm_test_wrapped()) {
        printf("SKIP  512- and 2048-node page counts under PM_WRAP (minutes under memcheck)\n");
        pm_test_rmrf(dir);
        free(dir);
        return;
    }
    int big[2];
    const size_t sizes[2] = {512, 2048};
    for (int i = 0; i < 2; i++) {
        snprintf(job, sizeof job, "%s/n%zu", dir, sizes[i]);
        mkdir(job, 0755);
        make_job(job, sizes[i], 30, 5, NULL); /* 5 minutes at 10 s */
        a = analyse(job);
        assert_int_equal(a->in.nhosts, sizes[i]);
        snprintf(pdf, sizeof pdf, "%s/n%zu.pdf", dir, sizes[i]);
        write_pdf(a, pdf);
        big[i] = pdf_pages(pdf);
        fprintf(stderr, "%zu nodes: %d pages\n", sizes[i], big[i]);
        double over20;
        int nn = attached_nodes(pdf, "node-005", &over20);
        if (nn >= 0) /* every node stays in the attached statistics */
            assert_int_equal(nn, (int)sizes[i]);
        pm_analysis_free(a);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", job);
        assert_int_equal(system(cmd), 0);
    }
    assert_true(big[0] >= 3 && big[0] <= 24);
    assert_true(big[1] <= big[0]);
    pm_test_rmrf(dir);
    free(dir);
}

static int png_size(const char *path, uint32_t *w, uint32_t *h)
{
    unsigned char b[24];
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t n = fread(b, 1, sizeof b, f);
    fclose(f);
    if (n != sizeof b || memcmp(b, "\x89PNG\r\n\x1a\n", 8) != 0 || memcmp(b + 12, "IHDR", 4) != 0)
        return -1;
    *w = (uint32_t)b[16] << 24 | (uint32_t)b[17] << 16 | (uint32_t)b[18] << 8 | b[19];
    *h = (uint32_t)b[20] << 24 | (uint32_t)b[21] << 16 | (uint32_t)b[22] << 8 | b[23];
    return 0;
}

static void test_plots_png(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char job[4200], plots[4200], path[4400];
    snprintf(job, sizeof job, "%s/job", dir);
    snprintf(plots, sizeof plots, "%s/plots/sub", dir);
    mkdir(job, 0755);
    make_job(job, 2, 60, 99, NULL);
    pm_analysis *a = analyse(job);
    pm_report_opts r;
    pm_report_opts_init(&r);
    r.plots_dir = plots;
    r.layout_path = g_layout;
    pm_error err;
    int prc = pm_plots_write(a, &r, &err);
    if (prc)
        fail_msg("pm_plots_write: %s", err.msg);
    /* 18 cm at 200 dpi: 1417 pixels wide; names from the metric. */
    static const char *const names[] = {"CPU_Usage_per_node.png", "Average_CPU_Usage_all_nodes.png",
                                        "Total_Output_Traffic_all_nodes.png",
                                        "Output_Traffic_per_node.png"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", plots, names[i]);
        uint32_t w = 0, h = 0;
        if (png_size(path, &w, &h) != 0)
            fail_msg("%s: missing or not a PNG", path);
        assert_int_equal(w, 1417);
        assert_true(h > 500 && h < 1000);
    }
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

/* A fixed plot: two waves with a gap, a repaired span and a nodes line. */
static void golden_plot(pm_plot *p, pm_plot_series *s, double *t, double *v, size_t n,
                        pm_plot_span *sp, double *nt, double *nn)
{
    for (size_t i = 0; i < n; i++) {
        t[i] = 1700000000.0 + (double)i * 5;
        v[i] = 40 + 30 * sin((double)i / 40.0) + (i % 97 == 0 ? 25 : 0);
        v[n + i] = i > 300 && i < 340 ? NAN : 55 + 20 * cos((double)i / 25.0);
    }
    s[0] = (pm_plot_series){"node-a", t, v, n};
    s[1] = (pm_plot_series){"node-b", t, v + n, n};
    sp[0] = (pm_plot_span){t[100], t[130], 0, NULL, 0};
    nt[0] = t[0];
    nt[1] = t[300];
    nt[2] = t[340];
    nn[0] = 2;
    nn[1] = 1;
    nn[2] = 2;
    memset(p, 0, sizeof *p);
    p->title = "Average CPU Usage/Node: 47.5 %, Max CPU Usage/Node: 95 %";
    p->ylabel = "CPU Usage (%)";
    p->series = s;
    p->nseries = 2;
    p->legend = 1;
    p->spans = sp;
    p->nspans = 1;
    p->nodes_t = nt;
    p->nodes_n = nn;
    p->nodes_len = 3;
    p->nodes_total = 2;
    p->time_axis = PM_AXIS_ELAPSED;
    p->t_origin = t[0];
}

static void test_golden_image(void **state)
{
    (void)state;
    enum { N = 600 };
    static double t[N], v[2 * N];
    pm_plot_series s[2];
    pm_plot_span sp[1];
    double nt[3], nn[3];
    pm_plot p;
    golden_plot(&p, s, t, v, N, sp, nt, nn);
    char *dir = strdup(pm_test_tmpdir());
    char out[4200], golden[4200];
    snprintf(out, sizeof out, "%s/plot.png", dir);
    snprintf(golden, sizeof golden, "%s/golden/plot-lines.png", pm_test_fixtures());
    pm_error err;
    assert_int_equal(pm_plot_png(out, &p, 18, 0.5, 100, &err), 0);
    if (getenv("PM_UPDATE_GOLDEN")) {
        assert_int_equal(pm_plot_png(golden, &p, 18, 0.5, 100, &err), 0);
        fprintf(stderr, "updated %s\n", golden);
    }
    cairo_surface_t *a = cairo_image_surface_create_from_png(out);
    cairo_surface_t *b = cairo_image_surface_create_from_png(golden);
    assert_int_equal(cairo_surface_status(a), CAIRO_STATUS_SUCCESS);
    if (cairo_surface_status(b) != CAIRO_STATUS_SUCCESS)
        fail_msg("%s: cannot read the golden image", golden);
    int w = cairo_image_surface_get_width(a), h = cairo_image_surface_get_height(a);
    assert_int_equal(w, cairo_image_surface_get_width(b));
    assert_int_equal(h, cairo_image_surface_get_height(b));
    cairo_surface_flush(a);
    cairo_surface_flush(b);
    const unsigned char *pa = cairo_image_surface_get_data(a),
                        *pb = cairo_image_surface_get_data(b);
    int sa = cairo_image_surface_get_stride(a), sb = cairo_image_surface_get_stride(b);
    /* Tolerance: anti-aliasing and font versions may move a few pixels;
     * a changed line, colour, axis or label moves thousands. */
    size_t differ = 0;
    double sum = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) {
                int d = abs((int)pa[y * sa + x * 4 + c] - (int)pb[y * sb + x * 4 + c]);
                sum += d;
                if (d > 64) {
                    differ++;
                    break;
                }
            }
    double frac = (double)differ / ((double)w * h);
    double mean = sum / ((double)w * h * 3);
    if (frac > 0.002 || mean > 0.5)
        fail_msg("plot differs from %s: %.3f%% pixels, mean difference %.3f (PM_UPDATE_GOLDEN=1 "
                 "rewrites it after a deliberate change)",
                 golden, frac * 100, mean);
    cairo_surface_destroy(a);
    cairo_surface_destroy(b);

    /* And the golden image is not blank: the test can fail. */
    golden_plot(&p, s, t, v, N, sp, nt, nn);
    for (size_t i = 0; i < N; i++)
        v[i] = 5;
    assert_int_equal(pm_plot_png(out, &p, 18, 0.5, 100, &err), 0);
    a = cairo_image_surface_create_from_png(out);
    pa = cairo_image_surface_get_data(a);
    b = cairo_image_surface_create_from_png(golden);
    pb = cairo_image_surface_get_data(b);
    differ = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            differ += memcmp(pa + y * sa + x * 4, pb + y * sb + x * 4, 3) != 0;
    assert_true(differ > 1000);
    cairo_surface_destroy(a);
    cairo_surface_destroy(b);
    pm_test_rmrf(dir);
    free(dir);
}

static void test_200_hosts(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char job[4200], pdf[4200];
    snprintf(job, sizeof job, "%s/job", dir);
    mkdir(job, 0755);
    make_job(job, 200, 60, 137, NULL);
    pm_analysis *a = analyse(job);
    assert_int_equal(a->in.nhosts, 200);
    int m = pm_analysis_metric(a, "cpu_usage");
    assert_true(m >= 0);
    pm_chart c;
    pm_error err;
    assert_int_equal(pm_chart_build(a, (size_t)m, 0, 0, &c, &err), 0);
    /* A band and a few named hosts, not 200 lines; the hot node named. */
    assert_non_null(c.plot.band);
    assert_true(c.plot.nseries >= 1 && c.plot.nseries <= 6);
    int named = 0;
    for (size_t i = 0; i < c.plot.nseries; i++)
        if (strstr(c.plot.series[i].label, "node-137"))
            named = 1;
    assert_true(named);
    /* The inner band: 5th and 95th percentile across the 200 nodes, by hand
     * from the generator's formula at elapsed 300 s (make_job), ranked and
     * interpolated between order statistics (rank 0.05 * 199 = 9.95). */
    assert_non_null(c.band.p5);
    assert_non_null(c.band.p95);
    size_t g = 0;
    while (g < c.band.n && fabs(c.band.t[g] - (a->t_start + 300)) > 1e-6)
        g++;
    assert_true(g < c.band.n);
    double x[200];
    for (size_t k = 0; k < 200; k++) {
        double pct = k == 137 ? 90 : 20 + (double)((k * 7) % 60);
        double wave = k == 137 ? 5 : 10;
        x[k] = pct + wave * sin(2 * M_PI * 300 / 600 + (double)k * 0.3);
    }
    for (size_t i = 1; i < 200; i++) /* insertion sort */
        for (size_t j = i; j > 0 && x[j - 1] > x[j]; j--) {
            double t = x[j];
            x[j] = x[j - 1];
            x[j - 1] = t;
        }
    double p5 = x[9] + 0.95 * (x[10] - x[9]), p95 = x[189] + 0.05 * (x[190] - x[189]);
    assert_true(fabs(c.band.p5[g] - p5) < 1e-6 * fabs(p5) + 1e-9);
    assert_true(fabs(c.band.p95[g] - p95) < 1e-6 * fabs(p95) + 1e-9);
    assert_true(c.band.lo[g] <= c.band.p5[g] && c.band.p95[g] <= c.band.hi[g]);
    pm_chart_free(&c);

    /* The colour map's rows: groups of similar nodes, each group's rows
     * consecutive, groups by mean and nodes in a group by mean, highest
     * first: the hot node (90 %, its own shape) on top. */
    pm_heatmap_data hd;
    assert_int_equal(pm_heatmap_build(a, (size_t)m, 0, 400, &hd, &err), 0);
    assert_int_equal(hd.hm.nrows, 200);
    assert_string_equal(hd.hm.rows[0], "node-137");
    double gmean_prev = INFINITY, gsum = 0;
    size_t gn = 0;
    for (size_t r = 0; r < hd.hm.nrows; r++) {
        int h1 = -1;
        for (size_t h = 0; h < a->in.nhosts; h++)
            if (strcmp(a->in.hosts[h].name, hd.hm.rows[r]) == 0)
                h1 = (int)h;
        assert_true(h1 >= 0);
        double mean = a->metrics[m].host[h1]->st.mean;
        if (r > 0 && hd.group[r] == hd.group[r - 1]) {
            assert_true(hd.group[r] < hd.ngroups);
            int h0 = -1;
            for (size_t h = 0; h < a->in.nhosts; h++)
                if (strcmp(a->in.hosts[h].name, hd.hm.rows[r - 1]) == 0)
                    h0 = (int)h;
            assert_true(a->metrics[m].host[h0]->st.mean >= mean);
        } else if (r > 0) {
            assert_int_equal(hd.group[r], hd.group[r - 1] + 1); /* numbered in row order */
            assert_true(gsum / (double)gn <= gmean_prev);
            gmean_prev = gsum / (double)gn;
            gsum = 0;
            gn = 0;
        }
        gsum += mean;
        gn++;
    }
    pm_heatmap_data_free(&hd);

    snprintf(pdf, sizeof pdf, "%s/big.pdf", dir);
    write_pdf(a, pdf);
    if (have("pdftotext")) {
        char cmd[4400];
        snprintf(cmd, sizeof cmd, "pdftotext -layout '%s' - 2>/dev/null", pdf);
        char *text = capture(cmd);
        assert_non_null(strstr(text, "200 nodes"));
        assert_non_null(strstr(text, "Imbalance: time x node"));
        assert_non_null(strstr(text, "Nodes that stand out"));
        assert_non_null(strstr(text, "node-137"));
        free(text);
        /* The statistics appendix gives the distribution; every host stays
         * in the attached statistics. */
        double over20;
        int nn = attached_nodes(pdf, "node-199", &over20);
        if (nn >= 0) {
            assert_int_equal(nn, 200);
            assert_true(isfinite(over20));
        }
    }
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

/* An idle node among 20 busy ones barely moves the maximum over the mean
 * (80 / 76 %): page 1 must still name it, in the verdict and among the
 * nodes that stand out, in its direction. */
static void test_idle_node_on_page1(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char job[4200], pdf[4400];
    snprintf(job, sizeof job, "%s/job", dir);
    assert_int_equal(mkdir(job, 0755), 0);
    for (size_t k = 0; k < 20; k++) {
        char host[64], path[4400];
        snprintf(host, sizeof host, k == 7 ? "node-idle" : "node-%02zu", k);
        snprintf(path, sizeof path, "%s/%s.pmp", job, host);
        pm_synth s;
        pm_synth_init(&s, host);
        s.n = 30; /* a 29-s job */
        s.interval_s = 1;
        s.cpu_pct = k == 7 ? 2 : 80;
        s.cpu_wave = 0;
        s.ncpus = 8;
        pm_error err;
        assert_int_equal(pm_synth_write(path, &s, &err), 0);
    }
    pm_analysis *a = analyse(job);
    snprintf(pdf, sizeof pdf, "%s/idle.pdf", dir);
    write_pdf(a, pdf);
    if (have("pdftotext")) {
        char cmd[4600];
        snprintf(cmd, sizeof cmd, "pdftotext -f 1 -l 1 '%s' - 2>/dev/null | tr '\\n' ' '", pdf);
        char *text = capture(cmd);
        if (!strstr(
                text,
                "node-idle was nearly idle: its CPU averaged 2 % against 80 % on the other nodes."))
            fail_msg("no idle node in the verdict: %s", text);
        if (!strstr(text, "node-idle only 2 %."))
            fail_msg("idle node not among the nodes that stand out: %s", text);
        /* the short job's rules fired, coloured notes instead of "No rule fired" */
        assert_null(strstr(text, "No rule fired"));
        assert_non_null(strstr(text, "node-idle: CPU utilisation averaged 2%"));
        free(text);
    }
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

/* A column across nodes: percentiles at rank p (n - 1) between order
 * statistics, NaN left out; by hand for 1..20 (in any order, with a NaN):
 * p5 at rank 0.95 = 1.95, median 10.5, p95 at rank 18.05 = 19.05. */
static void test_spread(void **state)
{
    (void)state;
    double v[21];
    for (int i = 0; i < 20; i++)
        v[i] = (double)((i * 7) % 20 + 1); /* 1..20 shuffled */
    v[20] = NAN;
    static const struct {
        size_t n;
        double min, p5, median, p95, max;
    } rows[] = {
        {21, 1, 1.95, 10.5, 19.05, 20}, /* 1..20 and a NaN */
        {1, 1, 1, 1, 1, 1},             /* one value (v[0] = 1) */
        {0, NAN, NAN, NAN, NAN, NAN},   /* empty */
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        pm_spread sp;
        assert_int_equal(pm_spread_of(v, rows[r].n, &sp), 0);
        const double got[5] = {sp.min, sp.p5, sp.median, sp.p95, sp.max};
        const double want[5] = {rows[r].min, rows[r].p5, rows[r].median, rows[r].p95, rows[r].max};
        for (int k = 0; k < 5; k++) {
            if (isnan(want[k]))
                assert_true(isnan(got[k]));
            else
                assert_true(fabs(got[k] - want[k]) < 1e-12);
        }
        assert_int_equal(sp.n, rows[r].n == 21 ? 20 : rows[r].n);
    }
    pm_spread sp;
    const double nan1[1] = {NAN};
    assert_int_equal(pm_spread_of(nan1, 1, &sp), 0);
    assert_int_equal(sp.n, 0);
}

/* The line of text holding both a and b, or NULL. */
static const char *line_with(const char *text, const char *a, const char *b)
{
    for (const char *p = text; (p = strstr(p, a)) != NULL; p += strlen(a)) {
        const char *s = p, *e = strchr(p, '\n');
        while (s > text && s[-1] != '\n')
            s--;
        if (!e)
            e = p + strlen(p);
        const char *q = strstr(s, b);
        if (q && q < e)
            return s;
    }
    return NULL;
}

/* Above 16 nodes the tables are a distribution and the nodes at the ends,
 * each with its reason.  A 40-node hour where the generator makes
 * node-idle idle (2 % CPU) from sample 72 of 360 on: by hand 288 of 360
 * samples below 20 %, "idle 80 % of the job", the first of the least busy
 * nodes; node-short stops 12 samples early (348 of the 360 the hour holds
 * at 10 s): "12 samples lost" among the data-quality outliers, and
 * node-late, started 3 s after the others, "clock offset 3 s".  The full
 * per-node data stays in the attached --stats --json (40 nodes, node-idle
 * above 20 % for 20 % of its samples). */
static void test_big_job_outliers(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char job[4200], pdf[4400];
    snprintf(job, sizeof job, "%s/job", dir);
    assert_int_equal(mkdir(job, 0755), 0);
    for (size_t k = 0; k < 40; k++) {
        char host[64], path[4400];
        snprintf(host, sizeof host,
                 k == 23   ? "node-idle"
                 : k == 31 ? "node-short"
                 : k == 5  ? "node-late"
                           : "node-%02zu",
                 k);
        snprintf(path, sizeof path, "%s/%s.pmp", job, host);
        pm_synth s;
        pm_synth_init(&s, host);
        s.n = k == 31 ? 348 : 360;
        s.interval_s = 10;
        s.cpu_pct = 45 + (double)((k * 7) % 30);
        s.cpu_wave = 10;
        s.wave_period_s = 600;
        s.wave_phase = (double)k * 0.3;
        if (k == 5)
            s.start_s += 3; /* its first sample 3 s after every other node's */
        if (k == 23) {
            s.idle_from = 72;
            s.idle_pct = 2;
        }
        pm_error err;
        assert_int_equal(pm_synth_write(path, &s, &err), 0);
    }
    pm_analysis *a = analyse(job);
    assert_int_equal(a->in.nhosts, 40);
    snprintf(pdf, sizeof pdf, "%s/big.pdf", dir);
    write_pdf(a, pdf);
    if (have("pdftotext") && have("pdfdetach")) {
        char cmd[4600];
        snprintf(cmd, sizeof cmd, "pdftotext -layout '%s' - 2>/dev/null", pdf);
        char *text = capture(cmd);
        const char *least = strstr(text, "least busy nodes");
        assert_non_null(least);
        /* node-idle heads the least busy nodes, with its idle share. */
        const char *row = strchr(least, '\n');
        assert_non_null(row);
        if (!line_with(row + 1, "node-idle", "idle 80 % of the job") ||
            strncmp(row + 1 + strspn(row + 1, " "), "node-idle", 9) != 0)
            fail_msg("node-idle not first with 'idle 80 %% of the job': %.300s", least);
        if (!line_with(text, "node-short", "12 samples lost"))
            fail_msg("node-short's 12 lost samples not among the data-quality outliers");
        if (!line_with(text, "node-late", "clock offset 3 s"))
            fail_msg("node-late's clock offset of 3 s not among the data-quality outliers");
        /* The distribution, not one row per node. */
        assert_non_null(strstr(text, "95th pct"));
        assert_null(line_with(text, "node-17", "cpu"));
        free(text);
        double over20;
        assert_int_equal(attached_nodes(pdf, "node-idle", &over20), 40);
        assert_true(fabs(over20 - 20.0) < 1e-9);
    }
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

/* The report at many nodes (issue 18): 2,000 nodes in three groups spread
 * over the host names (pm_synth_write_groups: 4 in 10 busy early, 4 in 10
 * busy late with the same mean, 2 in 10 steady at 30 %), with idle nodes,
 * nodes that lost samples and late nodes.  The CPU colour map puts each
 * group's nodes in one run of rows (ordered by mean alone, the two groups
 * of equal mean interleave) and the idle nodes at the bottom; the report
 * keeps the 7 pages of a plain job, lists no node per row, and names the
 * nodes with data-quality problems, only those. */
static void test_many_nodes_groups(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char job[4200], pdf[4400];
    snprintf(job, sizeof job, "%s/job", dir);
    assert_int_equal(mkdir(job, 0755), 0);
    const size_t nh = 2000;
    pm_error err;
    assert_int_equal(pm_synth_write_groups(job, nh, 40, &err), 0);
    pm_analysis *a = analyse(job);
    assert_int_equal(a->in.nhosts, nh);
    int m = pm_analysis_metric(a, "cpu_usage");
    assert_true(m >= 0);
    pm_heatmap_data hd;
    assert_int_equal(pm_heatmap_build(a, (size_t)m, 0, 1200, &hd, &err), 0);
    assert_int_equal(hd.hm.nrows, nh);
    /* Per input group: the first and last row holding one of its nodes,
     * and how many of its nodes; a group is contiguous when last - first
     * + 1 = its count less the special nodes sorted in between. */
    size_t first[6], last[6], count[6] = {0}, nidle = 0;
    for (int g = 0; g < 6; g++)
        first[g] = SIZE_MAX, last[g] = 0;
    int *gof = calloc(nh, sizeof *gof);
    assert_non_null(gof);
    for (size_t r = 0; r < nh; r++) {
        size_t k = strtoul(hd.hm.rows[r] + 3, NULL, 10); /* "nid00042" */
        int g = pm_synth_group_of(k);
        gof[r] = g;
        if (first[g] == SIZE_MAX)
            first[g] = r;
        last[g] = r;
        count[g]++;
        if (g == PM_SYNTH_IDLE)
            nidle++;
    }
    for (int g = 0; g < 3; g++) {
        size_t others = 0; /* nodes of another main group inside g's run */
        for (size_t r = first[g]; r <= last[g]; r++)
            if (gof[r] < 3 && gof[r] != g)
                others++;
        if (others)
            fail_msg("group %d: rows %zu..%zu hold %zu nodes of other groups", g, first[g], last[g],
                     others);
        /* One colour-map group for all of them. */
        for (size_t r = first[g]; r <= last[g]; r++)
            if (gof[r] == g && hd.group[r] != hd.group[first[g]])
                fail_msg("group %d split over map groups %u and %u", g, hd.group[first[g]],
                         hd.group[r]);
    }
    /* The idle nodes (2 % from a fifth of the job on) are the last rows. */
    assert_true(nidle > 0);
    assert_int_equal(first[PM_SYNTH_IDLE], nh - nidle);
    free(gof);
    pm_heatmap_data_free(&hd);

    if (pm_test_wrapped()) {
        printf("SKIP  the 2000-node report's pages under PM_WRAP (minutes under memcheck)\n");
        pm_analysis_free(a);
        pm_test_rmrf(dir);
        free(dir);
        return;
    }
    snprintf(pdf, sizeof pdf, "%s/many.pdf", dir);
    write_pdf(a, pdf);
    int pages = pdf_pages(pdf);
    if (pages >= 0) {
        fprintf(stderr, "2000 nodes: %d pages\n", pages);
        assert_int_equal(pages, 7);
    }
    if (have("pdftotext")) {
        char cmd[4600];
        snprintf(cmd, sizeof cmd, "pdftotext -layout '%s' - 2>/dev/null", pdf);
        char *text = capture(cmd);
        /* Not a row per node: a handful of names (outliers, notes, the
         * least and most busy), not thousands. */
        size_t names = 0;
        for (const char *p = text; (p = strstr(p, "nid0")) != NULL; p += 4)
            names++;
        if (names > 120)
            fail_msg("%zu node names on paper", names);
        /* Data quality: the 5 nodes that lost their last tenth (4 of 40
         * samples) and the 2 started 3 s late, not every node "3 samples
         * lost" because 2 late nodes stretch the job's span. */
        if (!strstr(text, "7 of 2000 nodes have something to report"))
            fail_msg("not 7 of 2000 nodes with data-quality problems: %.400s",
                     strstr(text, "Worst nodes") ? strstr(text, "Worst nodes") : text);
        assert_non_null(line_with(text, "nid00433", "4 samples lost"));
        assert_non_null(line_with(text, "nid01101", "clock offset 3 s"));
        free(text);
    }
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

/* A colour map with more nodes than pixel rows merges consecutive rows
 * into one pixel row (their mean): 2,000 rows alternating 0 and 1 drawn
 * 326 pixels high come out nearly one colour, the middle of the scale (a
 * pixel row holds 6 or 7 rows: a mean of 3/6, 3/7 or 4/7, within 0.072 of
 * 0.5, about 14 of 255 in a channel where the colour map is steepest),
 * not stripes of the scale's two ends (about 200 apart) as picking one
 * row per pixel gives. */
static void test_heatmap_rows_merged(void **state)
{
    (void)state;
    const size_t nr = 2000, nc = 10;
    double *v = malloc(nr * nc * sizeof *v);
    const char **rows = malloc(nr * sizeof *rows);
    double t[10];
    assert_non_null(v);
    assert_non_null(rows);
    for (size_t c = 0; c < nc; c++)
        t[c] = 1.7e9 + (double)c;
    for (size_t r = 0; r < nr; r++) {
        rows[r] = r % 2 ? "odd" : "even";
        for (size_t c = 0; c < nc; c++)
            v[r * nc + c] = (double)(r % 2);
    }
    pm_heatmap hm = {"alternating", "1", PM_AXIS_CLOCK, t[0], rows, nr, t, nc, v, NULL, 0};
    const int W = 600, H = 400;
    cairo_surface_t *sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
    cairo_t *cr = cairo_create(sf);
    pm_heatmap_draw(cr, 0, 0, W, H, 8.0, &hm);
    cairo_destroy(cr);
    cairo_surface_flush(sf);
    const unsigned char *px = cairo_image_surface_get_data(sf);
    int stride = cairo_image_surface_get_stride(sf);
    /* The map spans y = 19.2 .. 345.2 (title above, time average below);
     * its middle column x = 300.  Every pixel row inside: the same colour
     * within 40 of 255 in each channel. */
    uint32_t first;
    memcpy(&first, px + (size_t)30 * (size_t)stride + 300 * 4, 4);
    int worst = 0;
    for (int y = 30; y < 335; y++) {
        uint32_t p;
        memcpy(&p, px + (size_t)y * (size_t)stride + 300 * 4, 4);
        for (int k = 0; k < 3; k++) {
            int d = abs((int)((p >> (8 * k)) & 255) - (int)((first >> (8 * k)) & 255));
            if (d > worst)
                worst = d;
        }
    }
    cairo_surface_destroy(sf);
    free(v);
    free(rows);
    if (worst > 40)
        fail_msg("map rows differ by %d of 255 in a channel: stripes, not merged rows", worst);
}

/* What the library tells a progress callback (pm_progress), against the
 * inputs themselves: the files and their bytes (stat by the test), the
 * hosts written, every metric derived, and the report's pages (pdfinfo)
 * and plots; each stage's counts never go down and never pass their
 * totals. */
typedef struct prog_log {
    pm_progress last[3];
    size_t calls[3];
    int bad; /* a count went down or past its total */
    pthread_mutex_t lock;
    int inside; /* set while a call runs: two at once is a bug */
} prog_log;

static void prog_cb(const pm_progress *p, void *user)
{
    prog_log *l = user;
    if (pthread_mutex_trylock(&l->lock) != 0 || l->inside) {
        l->bad = 1; /* another call was running */
        return;
    }
    l->inside = 1;
    assert_true(p->stage >= 0 && p->stage <= 2);
    const pm_progress *o = &l->last[p->stage];
    if (l->calls[p->stage] &&
        (p->files_done < o->files_done || p->bytes_done < o->bytes_done ||
         p->metrics_done < o->metrics_done || p->series_done < o->series_done ||
         p->plots_done < o->plots_done || p->pages_done < o->pages_done))
        l->bad = 1;
    if (p->files_done > p->files_total || p->bytes_done > p->bytes_total ||
        p->metrics_done > p->metrics_total || p->series_done > p->series_total ||
        p->hosts_done > p->hosts_total || p->plots_done > p->plots_total)
        l->bad = 1;
    l->last[p->stage] = *p;
    l->calls[p->stage]++;
    l->inside = 0;
    pthread_mutex_unlock(&l->lock);
}

static void test_progress_counts(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char job[4200], pdf[4400];
    snprintf(job, sizeof job, "%s/job", dir);
    assert_int_equal(mkdir(job, 0755), 0);
    const size_t nh = 40;
    pm_error err;
    assert_int_equal(pm_synth_write_groups(job, nh, 30, &err), 0);
    uint64_t bytes = 0;
    for (size_t k = 0; k < nh; k++) {
        char path[4300];
        struct stat st;
        snprintf(path, sizeof path, "%s/nid%05zu.pmp", job, k);
        assert_int_equal(stat(path, &st), 0);
        bytes += (uint64_t)st.st_size;
    }
    prog_log l;
    memset(&l, 0, sizeof l);
    pthread_mutex_init(&l.lock, NULL);
    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    o.catalog_path = g_cat;
    o.rules_path = g_rules;
    o.progress = prog_cb;
    o.progress_user = &l;
    pm_analysis *a = NULL;
    const char *paths[1] = {job};
    assert_int_equal(pm_analysis_run(paths, 1, &o, &a, &err), 0);
    const pm_progress *r = &l.last[PM_STAGE_READ], *d = &l.last[PM_STAGE_DERIVE];
    assert_int_equal(l.calls[PM_STAGE_READ], nh); /* one per file */
    assert_int_equal(r->files_done, nh);
    assert_int_equal(r->files_total, nh);
    assert_int_equal(r->bytes_done, bytes);
    assert_int_equal(r->bytes_total, bytes);
    assert_int_equal(d->hosts_total, nh);
    assert_int_equal(d->hosts_done, nh);
    assert_true(d->metrics_total >= a->nmetrics); /* catalog entries, some without data */
    assert_int_equal(d->metrics_done, d->metrics_total);
    assert_int_equal(d->series_done, d->metrics_total * nh);

    pm_report_opts ro;
    pm_report_opts_init(&ro);
    snprintf(pdf, sizeof pdf, "%s/p.pdf", dir);
    ro.pdf_path = pdf;
    ro.layout_path = g_layout;
    ro.creation_time = 1700000000;
    ro.progress = prog_cb;
    ro.progress_user = &l;
    assert_int_equal(pm_report_write(a, &ro, &err), 0);
    const pm_progress *w = &l.last[PM_STAGE_REPORT];
    assert_true(w->plots_total > 0);
    assert_int_equal(w->plots_done, w->plots_total);
    int pages = pdf_pages(pdf);
    if (pages >= 0)
        assert_int_equal(w->pages_done, (size_t)pages);
    assert_false(l.bad);
    pthread_mutex_destroy(&l.lock);
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

/* --stream's passes over the hosts (pm_progress.pass, passes): every
 * call of a pass counts the hosts folded so far, 0, 1, ... up to all of
 * them, one more each call (the fold is in host order); the passes go up
 * one at a time and never past the count known; the last state is that
 * of the in-memory run (every host and catalog metric). */
typedef struct pass_log {
    size_t pass, passes, hosts, calls, passes_seen, metrics, first_passes;
    int bad;
} pass_log;

static void pass_cb(const pm_progress *p, void *user)
{
    pass_log *l = user;
    if (p->stage != PM_STAGE_DERIVE)
        return;
    if (l->calls++ == 0)
        l->first_passes = p->passes;
    if (p->pass < 1 || p->pass > p->passes || p->passes < l->passes || p->pass < l->pass ||
        p->pass > l->pass + 1 || p->hosts_done > p->hosts_total)
        l->bad = 1;
    if (p->pass != l->pass) {
        /* a pass begins at 0 hosts, after the last one ended at all */
        if ((l->pass && l->hosts != p->hosts_total) || p->hosts_done != 0)
            l->bad = 1;
        l->passes_seen++;
    } else if (p->hosts_done != l->hosts + 1 && !(p->metrics_done && p->hosts_done == l->hosts)) {
        l->bad = 1; /* (the last state repeats all hosts, with the metrics) */
    }
    l->pass = p->pass;
    l->passes = p->passes;
    l->hosts = p->hosts_done;
    l->metrics = p->metrics_done;
}

static void test_progress_stream(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char job[4200];
    snprintf(job, sizeof job, "%s/job", dir);
    assert_int_equal(mkdir(job, 0755), 0);
    const size_t nh = 24;
    pm_error err;
    assert_int_equal(pm_synth_write_groups(job, nh, 30, &err), 0);
    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    o.catalog_path = g_cat;
    o.rules_path = g_rules;
    o.stream = 1;
    pass_log l;
    memset(&l, 0, sizeof l);
    o.progress = pass_cb;
    o.progress_user = &l;
    pm_analysis *a = NULL;
    const char *paths[1] = {job};
    assert_int_equal(pm_analysis_run(paths, 1, &o, &a, &err), 0);
    assert_false(l.bad);
    /* the times and the fold: the refine passes read the fold's spill,
     * not the hosts */
    assert_int_equal(l.passes_seen, 2);
    assert_int_equal(l.first_passes, 2);
    assert_int_equal(l.pass, l.passes);
    assert_int_equal(l.passes, l.passes_seen);
    assert_int_equal(l.hosts, nh);
    /* each pass: one call as it begins, one per host, and the last state */
    assert_int_equal(l.calls, l.passes_seen * (nh + 1) + 1);
    /* the in-memory run's last state: as many metrics */
    prog_log m;
    memset(&m, 0, sizeof m);
    pthread_mutex_init(&m.lock, NULL);
    pm_analysis *b = NULL;
    o.stream = 0;
    o.progress = prog_cb;
    o.progress_user = &m;
    assert_int_equal(pm_analysis_run(paths, 1, &o, &b, &err), 0);
    assert_int_equal(b->nmetrics, a->nmetrics);
    assert_int_equal(l.metrics, m.last[PM_STAGE_DERIVE].metrics_done);
    assert_int_equal(m.last[PM_STAGE_DERIVE].hosts_done, nh);
    assert_false(m.bad);
    pthread_mutex_destroy(&m.lock);
    pm_analysis_free(b);
    pm_analysis_free(a);
    /* --start: a second pass over the times (the window), known from the
     * first pass on */
    memset(&l, 0, sizeof l);
    o.stream = 1;
    o.progress = pass_cb;
    o.progress_user = &l;
    o.has_start = o.start_rel = 1;
    o.start = 5;
    assert_int_equal(pm_analysis_run(paths, 1, &o, &a, &err), 0);
    assert_false(l.bad);
    assert_int_equal(l.passes_seen, 3);
    assert_int_equal(l.first_passes, 3);
    assert_int_equal(l.passes, l.passes_seen);
    assert_int_equal(l.calls, l.passes_seen * (nh + 1) + 1);
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

static void test_report_errors(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char job[4200], pdf[4200], bad[4200];
    snprintf(job, sizeof job, "%s/job", dir);
    mkdir(job, 0755);
    make_job(job, 1, 30, 99, NULL);
    pm_analysis *a = analyse(job);
    pm_report_opts r;
    pm_report_opts_init(&r);
    r.layout_path = g_layout;
    pm_error err;

    /* Unwritable destination: the error names it; nothing is left behind. */
    snprintf(pdf, sizeof pdf, "%s/no/such/dir/r.pdf", dir);
    r.pdf_path = pdf;
    assert_int_not_equal(pm_report_write(a, &r, &err), 0);
    assert_non_null(strstr(err.msg, pdf));

    /* A layout that is not JSON, and a missing font. */
    snprintf(bad, sizeof bad, "%s/layout.json", dir);
    FILE *f = fopen(bad, "w");
    fputs("{\"plots_per_page\": 3,", f);
    fclose(f);
    snprintf(pdf, sizeof pdf, "%s/r.pdf", dir);
    r.pdf_path = pdf;
    r.layout_path = bad;
    assert_int_not_equal(pm_report_write(a, &r, &err), 0);
    assert_non_null(strstr(err.msg, bad));
    r.layout_path = g_layout;
    r.font_path = "/nonexistent/font.ttf";
    assert_int_not_equal(pm_report_write(a, &r, &err), 0);
    assert_non_null(strstr(err.msg, "/nonexistent/font.ttf"));
    assert_int_equal(access(pdf, F_OK), -1);
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp", pdf);
    assert_int_equal(access(tmp, F_OK), -1);
    pm_analysis_free(a);
    pm_test_rmrf(dir);
    free(dir);
}

/* Degenerate data never hangs or crashes the renderer. */
static void test_degenerate_plots(void **state)
{
    (void)state;
    alarm(20);
    double t[4] = {1, 2, 3, 4}, z[4] = {0, 0, 0, 0}, nan4[4] = {NAN, NAN, NAN, NAN};
    double big[4] = {1e-300, 1e300, -1e308, 5}, same_t[4] = {7, 7, 7, 7};
    struct {
        const double *t, *v;
        int logy;
    } cases[] = {{t, z, 1},   {t, z, 0},   {t, nan4, 1},     {t, nan4, 0},
                 {t, big, 1}, {t, big, 0}, {same_t, big, 0}, {same_t, z, 1}};
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 400, 200);
    cairo_t *cr = cairo_create(s);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pm_plot_series ser = {"x", cases[i].t, cases[i].v, 4};
        pm_plot p;
        memset(&p, 0, sizeof p);
        p.title = "t";
        p.ylabel = "y";
        p.series = &ser;
        p.nseries = 1;
        p.logy = cases[i].logy;
        pm_plot_draw(cr, 0, 0, 400, 200, 8, &p);
        p.nseries = 0;
        pm_plot_draw(cr, 0, 0, 400, 200, 8, &p);
    }
    assert_int_equal(cairo_status(cr), CAIRO_STATUS_SUCCESS);
    cairo_destroy(cr);
    cairo_surface_destroy(s);
    alarm(0);
}

/* Pixels of a clearly coloured (not grey) tone: the series lines. */
static size_t coloured_pixels(const char *png)
{
    cairo_surface_t *a = cairo_image_surface_create_from_png(png);
    assert_int_equal(cairo_surface_status(a), CAIRO_STATUS_SUCCESS);
    cairo_surface_flush(a);
    const unsigned char *d = cairo_image_surface_get_data(a);
    int w = cairo_image_surface_get_width(a), h = cairo_image_surface_get_height(a);
    int st = cairo_image_surface_get_stride(a);
    size_t n = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const unsigned char *px = d + y * st + x * 4;
            int mx = px[0] > px[1] ? px[0] : px[1], mn = px[0] < px[1] ? px[0] : px[1];
            mx = px[2] > mx ? px[2] : mx;
            mn = px[2] < mn ? px[2] : mn;
            n += mx - mn > 60;
        }
    cairo_surface_destroy(a);
    return n;
}

/* A line exactly on an end of the range (CPU at 100 %, traffic at 0) is
 * drawn inside the frame, not hidden by it; zeros on a log axis fall back
 * to a linear axis instead of "no data". */
static void test_edge_lines_visible(void **state)
{
    (void)state;
    enum { N = 200 };
    static double t[N], v[N];
    char dir[4096], out[4200];
    snprintf(dir, sizeof dir, "%s", pm_test_tmpdir());
    snprintf(out, sizeof out, "%s/edge.png", dir);
    pm_plot_series s = {"node-a", t, v, N};
    pm_plot p;
    memset(&p, 0, sizeof p);
    p.title = "edge";
    p.ylabel = "CPU Usage (%)";
    p.series = &s;
    p.nseries = 1;
    pm_error err;
    const double level[3] = {100, 0, 0};
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < N; i++) {
            t[i] = 1700000000.0 + (double)i;
            v[i] = level[k];
        }
        p.logy = k == 2;
        assert_int_equal(pm_plot_png(out, &p, 18, 0.5, 100, &err), 0);
        /* a line across the frame: hundreds of coloured pixels */
        assert_true(coloured_pixels(out) > 300);
    }
    for (size_t i = 0; i < N; i++)
        v[i] = NAN;
    assert_int_equal(pm_plot_png(out, &p, 18, 0.5, 100, &err), 0);
    assert_true(coloured_pixels(out) < 50); /* and the check can fail */
    pm_test_rmrf(dir);
}

/* Top and bottom rows of coloured (series) pixels in a surface; -1 if none. */
static void coloured_rows(cairo_surface_t *a, int *top, int *bottom)
{
    cairo_surface_flush(a);
    const unsigned char *d = cairo_image_surface_get_data(a);
    int w = cairo_image_surface_get_width(a), h = cairo_image_surface_get_height(a);
    int st = cairo_image_surface_get_stride(a);
    *top = *bottom = -1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const unsigned char *px = d + y * st + x * 4;
            int mx = px[0] > px[1] ? px[0] : px[1], mn = px[0] < px[1] ? px[0] : px[1];
            mx = px[2] > mx ? px[2] : mx;
            mn = px[2] < mn ? px[2] : mn;
            if (mx - mn > 60) {
                if (*top < 0)
                    *top = y;
                *bottom = y;
            }
        }
}

/* Decimation keeps every extreme: one sample of 86,400 (a 1 s burst in a
 * day) reaches the top of the plot, on a linear axis and on a log axis,
 * over an idle level of 0 (zero-heavy I/O) or of 1.  The plot is 600 px
 * wide: 144 samples to a pixel column. */
static void test_spike_visible(void **state)
{
    (void)state;
    enum { N = 86400, W = 600, H = 300 };
    double *t = malloc(N * sizeof *t), *v = malloc(N * sizeof *v);
    assert_non_null(t);
    assert_non_null(v);
    const struct {
        double base;
        int logy;
        size_t at;
    } cases[] = {{0, 0, 43210}, {0, 1, 43210}, {1, 1, 777}, {1, 0, N - 2}, {0, 1, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        for (size_t i = 0; i < N; i++) {
            t[i] = 1700000000.0 + (double)i;
            v[i] = cases[c].base;
        }
        int top[2], bottom[2];
        for (int spike = 0; spike < 2; spike++) {
            /* 0: a burst of 20 samples (6 s before, 14 after), drawn by any
             * method; 1: the same burst, 1 sample long. */
            size_t at = cases[c].at;
            for (size_t i = at > 6 ? at - 6 : 0; i < at + 14 && i < N; i++)
                v[i] = spike ? cases[c].base : 200;
            v[at] = 200; /* the burst the title's maximum names */
            pm_plot_series ser = {"node-a", t, v, N};
            pm_plot p;
            memset(&p, 0, sizeof p);
            p.title = "Max Disk Write 200 MiB/s";
            p.ylabel = "Disk Write (MiB/s)";
            p.series = &ser;
            p.nseries = 1;
            p.logy = cases[c].logy;
            p.step = PM_STEP_BEFORE;
            cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
            cairo_t *cr = cairo_create(s);
            cairo_set_source_rgb(cr, 1, 1, 1);
            cairo_paint(cr);
            pm_plot_draw(cr, 0, 0, W, H, 10, &p);
            cairo_destroy(cr);
            coloured_rows(s, &top[spike], &bottom[spike]);
            cairo_surface_destroy(s);
        }
        /* The 1-sample burst reaches as high as the 20-sample one, and
         * both climb from the idle level by a quarter of the image at least. */
        if (!(top[0] >= 0 && top[1] >= 0 && abs(top[1] - top[0]) <= 2 &&
              abs(bottom[1] - bottom[0]) <= 2 && bottom[1] - top[1] > H / 4))
            fail_msg(
                "case %zu (base %g, log %d, at %zu): series rows %d-%d, with a 20-sample burst %d-%d",
                c, cases[c].base, cases[c].logy, cases[c].at, top[1], bottom[1], top[0], bottom[0]);
    }
    free(t);
    free(v);
}

int main(void)
{
    templates();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_degenerate_plots),    cmocka_unit_test(test_golden_image),
        cmocka_unit_test(test_edge_lines_visible),  cmocka_unit_test(test_page_counts),
        cmocka_unit_test(test_big_job_outliers),    cmocka_unit_test(test_many_nodes_groups),
        cmocka_unit_test(test_heatmap_rows_merged), cmocka_unit_test(test_progress_counts),
        cmocka_unit_test(test_progress_stream),     cmocka_unit_test(test_spread),
        cmocka_unit_test(test_spike_visible),       cmocka_unit_test(test_plots_png),
        cmocka_unit_test(test_report_small_job),    cmocka_unit_test(test_report_errors),
        cmocka_unit_test(test_200_hosts),           cmocka_unit_test(test_idle_node_on_page1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
