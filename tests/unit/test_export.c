/* Outputs: number formatting, gnuplot quoting of hostile host names, CSV,
 * HDF5 read back, and write failures (ENOSPC via /dev/full). */
#include <hdf5.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <sys/stat.h>

#include "../support/testutil.h"
#include "perfmon/analysis.h"
#include "perfmon/export.h"
#include "perfmon/fileio.h"
#include "synth.h"

static void test_fmt_double(void **state)
{
    (void)state;
    static const struct {
        double v;
        int digits;
        const char *want;
    } rows[] = {
        {0, 6, "0"},
        {1.5, 6, "1.5"},
        {-2.25, 6, "-2.25"},
        {0.1 + 0.2, 6, "0.3"},
        {123456789, 6, "1.23457e+08"},
        {1700000000.25, 13, "1700000000.25"},
        {0.000123, 6, "0.000123"},
        {1e-7, 6, "1e-07"},
        {1e20, 6, "1e+20"},
        {NAN, 6, "NaN"},
        {INFINITY, 6, "inf"},
        {99.99996, 6, "100"},
        {2.5e-4, 3, "0.00025"},
        {-0.5, 1, "-0.5"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        char buf[48];
        size_t n = pm_fmt_double(buf, rows[r].v, rows[r].digits);
        if (strcmp(buf, rows[r].want) != 0 || n != strlen(buf))
            fail_msg("row %zu: got \"%s\", want \"%s\"", r, buf, rows[r].want);
        /* and it reads back */
        if (isfinite(rows[r].v))
            assert_true(fabs(strtod(buf, NULL) - rows[r].v) <= 5e-6 * fabs(rows[r].v) + 1e-12);
    }
}

static char g_dir[256];

static pm_analysis *job(const char *host2)
{
    char *tmp = pm_test_tmpdir();
    assert_non_null(tmp);
    snprintf(g_dir, sizeof g_dir, "%s", tmp);
    char path[512], cat[4096];
    pm_synth s;
    pm_error err;
    pm_synth_init(&s, "node-a");
    s.n = 10;
    snprintf(path, sizeof path, "%s/a.pmp", g_dir);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    pm_synth_init(&s, host2);
    s.n = 8;
    s.groups = PM_SYNTH_PROC;
    snprintf(path, sizeof path, "%s/b.pmp", g_dir);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    snprintf(cat, sizeof cat, "%s/../templates/metrics.json", pm_test_fixtures());
    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    o.catalog_path = cat;
    const char *paths[] = {g_dir};
    pm_analysis *a = NULL;
    if (pm_analysis_run(paths, 1, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    return a;
}

static void test_gnuplot_quoting(void **state)
{
    (void)state;
    const char *evil = "x'; system 'touch PWNED\n";
    pm_analysis *a = job(evil);
    char out[512], gp[600];
    snprintf(out, sizeof out, "%s/data", g_dir);
    pm_error err;
    assert_int_equal(pm_export_gnuplot(a, out, &err), 0);
    snprintf(gp, sizeof gp, "%s/cpu_usage.gp", out);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(pm_read_whole(gp, 1 << 20, &text, &len, &err), 0);
    /* the name stays inside one double-quoted string on one line, its
     * quotes and newline as octal escapes (gnuplot reads the same bytes) */
    assert_non_null(strstr(text, "title \"x\\047; system \\047touch PWNED\\012\""));
    assert_null(strstr(text, "\nsystem"));
    free(text);
    snprintf(gp, sizeof gp, "%s/cpu_usage_per_node.dat", out);
    assert_int_equal(pm_read_whole(gp, 1 << 20, &text, &len, &err), 0);
    assert_non_null(strstr(text, "# column 3: \"x'; system 'touch PWNED?\" [%]"));
    /* 10 grid rows after the comment lines, 3 columns each */
    size_t rows = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (line[0] != '#') {
            rows++;
            double t, v1, v2;
            char extra[8];
            assert_int_equal(sscanf(line, "%lf %lf %lf %7s", &t, &v1, &v2, extra), 3);
        }
    assert_int_equal(rows, 10);
    free(text);
    /* the text table shows the name on one line, without control bytes */
    char st[600];
    snprintf(st, sizeof st, "%s/stats.txt", g_dir);
    FILE *f = fopen(st, "w");
    assert_non_null(f);
    assert_int_equal(pm_stats_text(a, f, &err), 0);
    assert_int_equal(pm_close_checked(f, st, &err), 0);
    assert_int_equal(pm_read_whole(st, 1 << 20, &text, &len, &err), 0);
    assert_non_null(strstr(text, "x'; system 'touch PWNED?"));
    assert_null(strstr(text, "PWNED\n"));
    free(text);
    pm_analysis_free(a);
    pm_test_rmrf(g_dir);
}

static void test_csv_and_hdf5(void **state)
{
    (void)state;
    pm_analysis *a = job("node,b");
    char csv[512], h5[512];
    snprintf(csv, sizeof csv, "%s/out.csv", g_dir);
    snprintf(h5, sizeof h5, "%s/out.h5", g_dir);
    pm_error err;
    assert_int_equal(pm_export_csv(a, csv, &err), 0);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(pm_read_whole(csv, 1 << 20, &text, &len, &err), 0);
    assert_true(strncmp(text, "host,time [s],cpu_usage [%],", 28) == 0);
    size_t lines = 0, quoted = 0;
    for (char *p = text; *p; p++)
        if (*p == '\n') {
            lines++;
            quoted += strncmp(p + 1, "\"node,b\",", 9) == 0;
        }
    assert_int_equal(lines, 1 + 10 + 8);
    assert_int_equal(quoted, 8);
    free(text);

    assert_int_equal(pm_export_hdf5(a, h5, &err), 0);
    hid_t f = H5Fopen(h5, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t ds = H5Dopen2(f, "/hosts/node-a/net_out", H5P_DEFAULT);
    assert_true(ds >= 0);
    hid_t sp = H5Dget_space(ds);
    hsize_t dims[1];
    H5Sget_simple_extent_dims(sp, dims, NULL);
    assert_int_equal(dims[0], 10);
    double v[10];
    assert_true(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    assert_true(isnan(v[0]));
    assert_true(fabs(v[5] - 1.0) < 1e-12);
    hid_t at = H5Aopen(ds, "units", H5P_DEFAULT);
    hid_t ty = H5Aget_type(at);
    char unit[32] = {0};
    assert_true(H5Tget_size(ty) < sizeof unit);
    assert_true(H5Aread(at, ty, unit) >= 0);
    assert_string_equal(unit, "MiB/s");
    H5Tclose(ty);
    H5Aclose(at);
    H5Sclose(sp);
    H5Dclose(ds);
    ds = H5Dopen2(f, "/aggregates/proc_rss/nodes", H5P_DEFAULT);
    assert_true(ds >= 0);
    H5Dclose(ds);
    ds = H5Dopen2(f, "/hosts/node,b/proc_rss.quality", H5P_DEFAULT);
    assert_true(ds >= 0);
    H5Dclose(ds);
    H5Fclose(f);
    pm_analysis_free(a);
    pm_test_rmrf(g_dir);
}

static void test_write_failures(void **state)
{
    (void)state;
    pm_analysis *a = job("node-b");
    pm_error err;
    pm_error_clear(&err);
    assert_int_equal(pm_export_csv(a, "/dev/full", &err), PM_EIO);
    assert_non_null(strstr(err.msg, "/dev/full: write failed"));
    FILE *f = fopen("/dev/full", "w");
    assert_non_null(f);
    assert_int_equal(pm_stats_json(a, f, &err), PM_EIO);
    fclose(f);
    f = fopen("/dev/full", "w");
    assert_int_equal(pm_stats_text(a, f, &err), PM_EIO);
    fclose(f);
    assert_int_equal(pm_export_gnuplot(a, "/nonexistent/dir", &err), PM_EIO);
    assert_int_equal(pm_export_hdf5(a, "/nonexistent/x.h5", &err), PM_EIO);
    pm_analysis_free(a);
    pm_test_rmrf(g_dir);
}

/* Every script --data writes runs under gnuplot and leaves non-empty PNGs,
 * on a job whose network is idle (all-zero rates on the catalog's log
 * axes: gnuplot used to stop at "all points y value undefined" and leave
 * 0-byte PNGs) and where one host lacks most metrics. */
static void test_gnuplot_scripts_run(void **state)
{
    (void)state;
    if (system("gnuplot --version >/dev/null 2>&1") != 0)
        skip();
    char *tmp = pm_test_tmpdir();
    assert_non_null(tmp);
    char dir[256], path[512], cat[4096], out[512];
    snprintf(dir, sizeof dir, "%s", tmp);
    pm_synth s;
    pm_error err;
    pm_synth_init(&s, "idle-net");
    s.net_rate = 0; /* net.ext.bytes_sent constant: every network rate is 0 */
    snprintf(path, sizeof path, "%s/a.pmp", dir);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    pm_synth_init(&s, "proc-only");
    s.groups = PM_SYNTH_PROC;
    s.net_rate = 0;
    snprintf(path, sizeof path, "%s/b.pmp", dir);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    snprintf(cat, sizeof cat, "%s/../templates/metrics.json", pm_test_fixtures());
    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    o.catalog_path = cat;
    const char *paths[] = {dir};
    pm_analysis *a = NULL;
    if (pm_analysis_run(paths, 1, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    snprintf(out, sizeof out, "%s/data", dir);
    assert_int_equal(pm_export_gnuplot(a, out, &err), 0);
    pm_analysis_free(a);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && for f in *.gp; do gnuplot \"$f\" 2>>gp.err || echo \"$f\" >>failed; done",
             out);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/failed", out);
    char *text = NULL;
    size_t len = 0;
    if (pm_read_whole(path, 1 << 16, &text, &len, &err) == 0)
        fail_msg("gnuplot failed on: %s", text);
    DIR *dp = opendir(out);
    assert_non_null(dp);
    size_t scripts = 0, pngs = 0, net_zero = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        size_t n = strlen(de->d_name);
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", out, de->d_name);
        if (n > 3 && strcmp(de->d_name + n - 3, ".gp") == 0)
            scripts++;
        if (n > 4 && strcmp(de->d_name + n - 4, ".png") == 0) {
            pngs++;
            assert_int_equal(stat(path, &st), 0);
            if (st.st_size == 0)
                fail_msg("%s is empty", de->d_name);
        }
        if (strcmp(de->d_name, "net_out_per_node.dat") == 0)
            net_zero = 1;
    }
    closedir(dp);
    assert_true(scripts > 20);
    assert_int_equal(pngs, 2 * scripts); /* per node and all nodes, for every script */
    assert_true(net_zero);
    /* the idle network is drawn, on a linear axis: its rates are 0 */
    snprintf(path, sizeof path, "%s/net_out.gp", out);
    assert_int_equal(pm_read_whole(path, 1 << 20, &text, &len, &err), 0);
    assert_null(strstr(text, "\nset logscale"));
    free(text);
    pm_test_rmrf(dir);
}

/* The per-node data file's columns are each host's placement on the grid
 * (pm_place, as the all-node series places it), whichever way the writer
 * fills them: node-a on consecutive grid points with a sample missing
 * (copied, its gap NaN), node-b every other point (interpolated between
 * its samples), node-c on consecutive points from its fifth on (copied,
 * NaN before). */
static void test_per_node_placement(void **state)
{
    (void)state;
    char *tmp = pm_test_tmpdir();
    assert_non_null(tmp);
    char dir[512], path[600], cat[4096];
    snprintf(dir, sizeof dir, "%s", tmp);
    pm_error err;
    static const struct {
        const char *host;
        size_t n;
        double start, interval;
        size_t gap_at;
    } hosts[] = {{"node-a", 40, 1.7e9, 1, 10},
                 {"node-b", 20, 1.7e9, 2, 0},
                 {"node-c", 30, 1.7e9 + 4.3, 1, 0}};
    for (size_t h = 0; h < 3; h++) {
        pm_synth s;
        pm_synth_init(&s, hosts[h].host);
        s.n = hosts[h].n;
        s.start_s = hosts[h].start;
        s.interval_s = hosts[h].interval;
        s.gap_at = hosts[h].gap_at;
        s.cpu_wave = 20;
        s.wave_period_s = 13;
        snprintf(path, sizeof path, "%s/%s.pmp", dir, hosts[h].host);
        assert_int_equal(pm_synth_write(path, &s, &err), 0);
    }
    snprintf(cat, sizeof cat, "%s/../templates/metrics.json", pm_test_fixtures());
    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    o.catalog_path = cat;
    const char *paths[] = {dir};
    pm_analysis *a = NULL;
    if (pm_analysis_run(paths, 1, &o, &a, &err) != 0)
        fail_msg("%s", err.msg);
    assert_true(a->grid_step == 1.0);
    char out[600];
    snprintf(out, sizeof out, "%s/data", dir);
    assert_int_equal(pm_export_gnuplot(a, out, &err), 0);
    const pm_metric_result *r = NULL;
    for (size_t m = 0; m < a->nmetrics; m++)
        if (strcmp(a->metrics[m].def->id, "cpu_usage") == 0)
            r = &a->metrics[m];
    assert_non_null(r);
    assert_int_equal(r->nhosts_with_data, 3);
    size_t n = r->agg.n, nh = a->in.nhosts;
    assert_int_equal(nh, 3);
    double *want = calloc(nh * n, sizeof *want);
    assert_non_null(want);
    for (size_t h = 0; h < nh; h++) {
        pm_place it;
        pm_place_init(&it, r->host[h]->t, r->host[h]->v, r->host[h]->n, a->t_start, a->grid_step,
                      n);
        (void)pm_place_next(&it, 0, n, want + h * n);
    }
    snprintf(path, sizeof path, "%s/cpu_usage_per_node.dat", out);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(pm_read_whole(path, 1 << 20, &text, &len, &err), 0);
    size_t row = 0, nan_a = 0, interp_b = 0, nan_c = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        assert_true(row < n);
        char expect[400], num[48];
        size_t k = pm_fmt_double(expect, r->agg.t[row], 13);
        for (size_t h = 0; h < nh; h++) {
            pm_fmt_double(num, want[h * n + row], 6);
            k += (size_t)snprintf(expect + k, sizeof expect - k, " %s", num);
        }
        if (strcmp(line, expect) != 0)
            fail_msg("row %zu: \"%s\", want \"%s\"", row, line, expect);
        /* the cases the file must hold */
        const pm_series *sa = r->host[0], *sb = r->host[1], *sc = r->host[2];
        double t = a->t_start + (double)row * a->grid_step;
        nan_a += isnan(want[row]) && row < sa->n;
        int b_sample = 0;
        for (size_t i = 0; i < sb->n; i++)
            b_sample |= fabs(sb->t[i] - t) < 0.5;
        interp_b += !b_sample && !isnan(want[n + row]);
        nan_c += isnan(want[2 * n + row]) && t < sc->t[0];
        row++;
    }
    assert_int_equal(row, n);
    assert_true(nan_a >= 1);
    assert_true(interp_b >= 5);
    assert_int_equal(nan_c, 4);
    free(text);
    free(want);
    pm_analysis_free(a);
    pm_test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmt_double),          cmocka_unit_test(test_gnuplot_quoting),
        cmocka_unit_test(test_csv_and_hdf5),        cmocka_unit_test(test_write_failures),
        cmocka_unit_test(test_gnuplot_scripts_run), cmocka_unit_test(test_per_node_placement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
