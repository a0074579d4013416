/* test_canvas: plots recorded as vectors (the report's PDF path).
 *
 * The y axis is read back from the record itself: each tick label is a
 * text op drawn right after its grid line (a horizontal stroke), so the
 * pairs (label value, grid y) give the axis the reader sees.  Through it
 * the series' highest point must read the data's maximum, computed here
 * by hand from the input, however many samples share its column. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "perfmon/canvas.h"
#include "perfmon/plot.h"

enum { N = 86400, W = 515, H = 250 };

typedef struct axis {
    double v[64], y[64];
    size_t n;
} axis;

/* Tick values and grid y from the record (see the header comment). */
static void read_axis(const pm_canvas *cv, axis *ax)
{
    ax->n = 0;
    for (size_t i = 1; i < pm_canvas_count(cv) && ax->n < 64; i++) {
        pm_canvas_op t, g;
        pm_canvas_get(cv, i, &t);
        pm_canvas_get(cv, i - 1, &g);
        if (t.kind != PM_CV_TEXT || g.kind != PM_CV_STROKE || g.npoints != 2 || g.ymin != g.ymax)
            continue;
        char *end;
        double v = strtod(t.text, &end);
        if (end == t.text || *end != '\0')
            continue;
        ax->v[ax->n] = v;
        ax->y[ax->n] = g.ymin;
        ax->n++;
    }
}

/* The value at page y, by the first and last ticks (log10 on a log axis). */
static double value_at(const axis *ax, double y, int logy)
{
    double v0 = logy ? log10(ax->v[0]) : ax->v[0];
    double v1 = logy ? log10(ax->v[ax->n - 1]) : ax->v[ax->n - 1];
    double v = v0 + (y - ax->y[0]) * (v1 - v0) / (ax->y[ax->n - 1] - ax->y[0]);
    return logy ? pow(10, v) : v;
}

/* The series: the stroke in series 0's colour and line width (fs * 0.09).
 * Cairo merges collinear segments, so an idle run is one segment. */
static size_t series_op(const pm_canvas *cv, double fs)
{
    double rgb[3];
    int dash;
    pm_plot_style(0, rgb, &dash);
    for (size_t i = 0; i < pm_canvas_count(cv); i++) {
        pm_canvas_op o;
        pm_canvas_get(cv, i, &o);
        if (o.kind == PM_CV_STROKE && o.npoints >= 2 && fabs(o.line_width - fs * 0.09) < 1e-4 &&
            fabs(o.rgba[0] - rgb[0]) < 1e-4 && fabs(o.rgba[1] - rgb[1]) < 1e-4 &&
            fabs(o.rgba[2] - rgb[2]) < 1e-4)
            return i;
    }
    fail_msg("no series path in the record");
    return 0;
}

/* One sample of 86,400 at 200 (a 1 s burst in a day of idle, 0, or of
 * 1.5) among 168 samples to a point column: the path's top reads 200 on
 * the drawn axis, its bottom the idle level, and the path has at most
 * 4 points a column (its size is the plot's width, not the samples'). */
static void test_burst_reads_its_value(void **state)
{
    (void)state;
    double *t = malloc(N * sizeof *t), *v = malloc(N * sizeof *v);
    assert_non_null(t);
    assert_non_null(v);
    const struct {
        double base;
        int logy;
        size_t at;
    } cases[] = {{0, 0, 43210}, {1.5, 0, 777}, {1.5, 1, 43210}, {0.01, 1, N - 2}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        for (size_t i = 0; i < N; i++) {
            t[i] = 1700000000.0 + (double)i;
            v[i] = cases[c].base;
        }
        v[cases[c].at] = 200;
        double hand_max = 200, hand_min = cases[c].base;
        pm_plot_series ser = {"node-a", t, v, N};
        pm_plot p;
        memset(&p, 0, sizeof p);
        p.title = "Max Disk Write 200 MiB/s";
        p.ylabel = "Disk Write (MiB/s)";
        p.series = &ser;
        p.nseries = 1;
        p.logy = cases[c].logy;
        p.step = PM_STEP_BEFORE;
        pm_canvas *cv = pm_canvas_new(W, H, 72);
        assert_non_null(cv);
        pm_plot_draw(pm_canvas_cairo(cv), 0, 0, W, H, 8, &p);
        assert_int_equal(pm_canvas_status(cv), 0);
        axis ax;
        read_axis(cv, &ax);
        if (ax.n < 2)
            fail_msg("case %zu: %zu y ticks read from the record", c, ax.n);
        pm_canvas_op s;
        pm_canvas_get(cv, series_op(cv, 8), &s);
        double top = value_at(&ax, s.ymin, cases[c].logy);
        double bottom = value_at(&ax, s.ymax, cases[c].logy);
        /* within a thousandth of the axis (float coordinates) */
        double tol = 1e-3 * (cases[c].logy ? hand_max : ax.v[ax.n - 1] - ax.v[0]);
        if (fabs(top - hand_max) > tol ||
            fabs(bottom - hand_min) > tol * (cases[c].logy ? 0.01 : 1))
            fail_msg("case %zu (base %g, log %d, at %zu): path reads %g..%g, the data %g..%g", c,
                     cases[c].base, cases[c].logy, cases[c].at, bottom, top, hand_min, hand_max);
        if (s.npoints > 4 * (size_t)W)
            fail_msg("case %zu: %zu points for %d columns", c, s.npoints, W);
        pm_canvas_free(cv);
    }
    free(t);
    free(v);
}

/* A sample alone between gaps (NaN on both sides) is a dot: a segment of
 * length zero, which round caps draw as a disc, in PNG files and in the
 * PDF alike.  A move alone would draw nothing. */
static void test_lone_sample_is_a_dot(void **state)
{
    (void)state;
    double t[100], v[100];
    for (size_t i = 0; i < 100; i++) {
        t[i] = (double)i;
        v[i] = NAN;
    }
    v[20] = 1;
    v[50] = 5;
    v[80] = 3;
    pm_plot_series ser = {"node-a", t, v, 100};
    pm_plot p;
    memset(&p, 0, sizeof p);
    p.title = "lone samples";
    p.series = &ser;
    p.nseries = 1;
    pm_canvas *cv = pm_canvas_new(400, 200, 72);
    assert_non_null(cv);
    pm_plot_draw(pm_canvas_cairo(cv), 0, 0, 400, 200, 8, &p);
    pm_canvas_op s;
    size_t i = series_op(cv, 8);
    pm_canvas_get(cv, i, &s);
    double x[16], y[16];
    assert_int_equal(s.npoints, 6);
    pm_canvas_points(cv, i, x, y, 16);
    for (size_t k = 0; k < 6; k += 2) {
        assert_true(x[k] == x[k + 1]);
        assert_true(y[k] == y[k + 1]);
    }
    pm_canvas_free(cv);
}

/* Titles and axis labels are text in the record (pdftotext reads them in
 * the report), not pixels. */
static void test_text_is_recorded(void **state)
{
    (void)state;
    double t[3] = {0, 60, 120}, v[3] = {1, 3, 2};
    pm_plot_series ser = {"node-a", t, v, 3};
    pm_plot p;
    memset(&p, 0, sizeof p);
    p.title = "Average CPU Usage/Node: 2 %";
    p.ylabel = "CPU Usage (%)";
    p.series = &ser;
    p.nseries = 1;
    p.legend = 1;
    pm_canvas *cv = pm_canvas_new(400, 200, 72);
    assert_non_null(cv);
    pm_plot_draw(pm_canvas_cairo(cv), 0, 0, 400, 200, 8, &p);
    int title = 0, ylabel = 0, legend = 0, images = 0;
    for (size_t i = 0; i < pm_canvas_count(cv); i++) {
        pm_canvas_op o;
        pm_canvas_get(cv, i, &o);
        if (o.kind == PM_CV_IMAGE)
            images++;
        if (o.kind != PM_CV_TEXT)
            continue;
        title += strcmp(o.text, p.title) == 0 && fabs(o.size - 8 * 1.05) < 1e-3;
        ylabel += strcmp(o.text, p.ylabel) == 0;
        legend += strcmp(o.text, "node-a") == 0;
    }
    assert_int_equal(title, 1);
    assert_int_equal(ylabel, 1);
    assert_int_equal(legend, 1);
    assert_int_equal(images, 0);
    pm_canvas_free(cv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_reads_its_value),
        cmocka_unit_test(test_lone_sample_is_a_dot),
        cmocka_unit_test(test_text_is_recorded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
