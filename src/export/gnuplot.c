/* --data DIR: gnuplot data files and scripts (per metric: per-node and
 * all-node .dat, and a .gp that renders both with pngcairo). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmon/export.h"
#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/catalog.h"
#include "perfmon/threads.h"

/* The one quoting rule for every string perfmon writes for gnuplot (scripts
 * and data files): a double-quoted string in which every byte outside
 * letters, digits, space and inert punctuation is a three-digit octal
 * escape.  gnuplot decodes \ooo in double-quoted strings of scripts and
 * data files alike, so any name (quotes, backslashes, newlines, a
 * backquote, which gnuplot would run as a command outside single quotes,
 * '@' macros, UTF-8) is read back as the same bytes.  A name longer than
 * max bytes (0: no limit) is shown as its start and "..." (display only). */
void pm_gp_quote(FILE *f, const char *s, size_t max)
{
    static const char inert[] = " -_.,:;/+=()[]{}%#&*!?~^<>|";
    size_t len = strlen(s), keep = len;
    if (max >= 4 && len > max) {
        keep = max - 3;
        while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
            keep--; /* not inside a UTF-8 character */
    }
    fputc('"', f);
    for (size_t i = 0; i < keep; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            (c && strchr(inert, c)))
            fputc(c, f);
        else
            fprintf(f, "\\%03o", c);
    }
    if (keep < len)
        fputs("...", f);
    fputc('"', f);
}

/* Key titles: a name is shortened for display beyond this (bytes). */
#define GP_TITLE_MAX 120

/* Names in the header comments: no newline may end the comment. */
static void comment_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        fputc(c < 0x20 || c == 0x7f || c == '"' ? '?' : c, f);
    }
    fputc('"', f);
}

static FILE *open_out(const char *dir, const char *name, char *path, size_t cap, pm_error *err)
{
    if (pm_path_join(path, cap, dir, name) != 0) {
        pm_error_set(err, PM_EUSAGE, "%s/%s: path too long", dir, name);
        return NULL;
    }
    FILE *f = fopen(path, "w");
    if (!f)
        pm_error_sys(err, PM_EIO, errno, "%s: cannot create", path);
    else
        setvbuf(f, NULL, _IOFBF, 1 << 16);
    return f;
}

static int use_grid(const pm_analysis *a)
{
    return !(a->opts.compat_ska || a->opts.align == PM_ALIGN_INDEX);
}

/* Grid rows placed side by side at a time: every host's stretch of the
 * grid fits in cache, whatever the job's length. */
#define ROWS_AT_ONCE 2048

static int tdigits(int digits)
{
    return digits > PM_TIME_DIGITS ? digits : PM_TIME_DIGITS;
}

static int write_per_node(const pm_analysis *a, const pm_metric_result *r, const char *dir,
                          int digits, pm_error *err)
{
    char name[128], path[4096];
    snprintf(name, sizeof name, "%s_per_node.dat", r->def->id);
    FILE *f = open_out(dir, name, path, sizeof path, err);
    if (!f)
        return PM_EIO;
    /* Rows: the all-node series' times; on the grid each host is
     * interpolated there, but a metric of one host is that host's own
     * samples (as its all-node series is). */
    size_t n = r->agg.n;
    size_t nh = a->nhosts;
    int grid = use_grid(a) && r->nhosts_with_data > 1;
    pm_place *it = calloc(nh ? nh : 1, sizeof *it);
    double *cols = pm_alloc_array((nh ? nh : 1) * ROWS_AT_ONCE, sizeof *cols);
    /* One row is built in memory and written at once: per-value stdio
     * calls (each taking the stream lock) cost more than the formatting. */
    size_t rowcap = 40 * (nh + 1) + 2;
    char *row = malloc(rowcap);
    if (!it || !cols || !row) {
        free(it);
        free(cols);
        free(row);
        fclose(f);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    for (size_t h = 0; h < nh; h++) {
        const pm_series *s = r->host[h];
        if (s && grid)
            pm_place_init(&it[h], s->t, s->v, s->n, a->t_start, a->grid_step, n);
    }
    fprintf(f, "# perfmon-analyze: %s [%s], per node; NaN = no data\n", r->def->name, r->def->unit);
    fprintf(
        f, "# %s\n",
        grid
            ? "rows: common time grid, each sample at its nearest grid point, linear between samples"
        : use_grid(a) ? "rows: the samples of the only host with data"
                      : "rows: sample index, time = mean of the hosts' times");
    fprintf(f, "# column 1: time [s since the epoch]");
    for (size_t h = 0; h < nh; h++) {
        fprintf(f, "\n# column %zu: ", h + 2);
        comment_str(f, a->hosts[h].name);
        fprintf(f, " [%s]", r->def->unit);
    }
    fputc('\n', f);
    for (size_t k0 = 0; k0 < n; k0 += ROWS_AT_ONCE) {
        size_t k1 = n - k0 < ROWS_AT_ONCE ? n : k0 + ROWS_AT_ONCE;
        for (size_t h = 0; h < nh; h++) {
            double *c = cols + h * ROWS_AT_ONCE;
            const pm_series *s = r->host[h];
            if (!s) {
                for (size_t k = k0; k < k1; k++)
                    c[k - k0] = NAN;
            } else if (grid) {
                (void)pm_place_next(&it[h], k0, k1, c);
            } else {
                for (size_t k = k0; k < k1; k++)
                    c[k - k0] = k < s->n ? s->v[k] : NAN;
            }
        }
        for (size_t k = k0; k < k1; k++) {
            size_t len = pm_fmt_double(row, r->agg.t[k], tdigits(digits));
            for (size_t h = 0; h < nh; h++) {
                row[len++] = ' ';
                len += pm_fmt_double(row + len, cols[h * ROWS_AT_ONCE + k - k0], digits);
            }
            row[len++] = '\n';
            fwrite(row, 1, len, f);
        }
    }
    free(it);
    free(cols);
    free(row);
    return pm_close_checked(f, path, err);
}

static int write_all_nodes(const pm_metric_result *r, const char *dir, int digits, pm_error *err)
{
    char name[128], path[4096], num[3 * 40];
    snprintf(name, sizeof name, "%s_all_nodes.dat", r->def->id);
    FILE *f = open_out(dir, name, path, sizeof path, err);
    if (!f)
        return PM_EIO;
    const char *comb = r->def->comb == PM_COMB_TOTAL ? "Total" : "Average";
    fprintf(f, "# perfmon-analyze: %s %s [%s], all nodes; NaN = no data\n", comb, r->def->name,
            r->def->unit);
    fprintf(f,
            "# column 1: time [s since the epoch]\n# column 2: %s [%s]\n"
            "# column 3: nodes contributing\n",
            comb, r->def->unit);
    for (size_t i = 0; i < r->agg.n; i++) {
        size_t len = pm_fmt_double(num, r->agg.t[i], tdigits(digits));
        num[len++] = ' ';
        len += pm_fmt_double(num + len, r->agg.v[i], digits);
        num[len++] = ' ';
        len += pm_fmt_double(num + len, (double)r->agg.count[i], 10);
        num[len++] = '\n';
        fwrite(num, 1, len, f);
    }
    return pm_close_checked(f, path, err);
}

static void title(FILE *f, const pm_metric_result *r, int all_nodes)
{
    char t[512];
    (void)pm_metric_title(r, all_nodes, t, sizeof t);
    fputs("set title ", f);
    pm_gp_quote(f, t, 0);
    fputs(" noenhanced\n", f);
}

/* What a plot's values hold: any finite one; the smallest and largest
 * above zero. */
typedef struct vscan {
    int finite;
    double lo, hi;
} vscan;

static void scan_values(const double *v, size_t n, vscan *sc)
{
    for (size_t i = 0; i < n; i++) {
        if (isfinite(v[i])) {
            sc->finite = 1;
            if (v[i] > 0) {
                sc->lo = v[i] < sc->lo ? v[i] : sc->lo;
                sc->hi = v[i] > sc->hi ? v[i] : sc->hi;
            }
        }
    }
}

/* The axis settings before one plot command.  gnuplot stops a script at a
 * plot with no point it can draw ("all points y value undefined"): a log
 * axis over values that are all zero (idle network), or a series with no
 * value at all.  So a log axis is asked for only where the values above
 * zero span two decades (as the PDF decides), and a plot with no value
 * gets fixed ranges and says "no data". */
static void axis_for(FILE *f, const pm_analysis *a, const pm_metric_result *r, const vscan *sc,
                     int *fixed)
{
    int finite = sc->finite, positive = sc->hi >= sc->lo && sc->hi >= PM_LOG_MIN_SPAN * sc->lo;
    if (*fixed) {
        fputs("unset label 1\nset autoscale\n", f);
        *fixed = 0;
    }
    fputs(r->def->log_scale && positive ? "set logscale y 10\n" : "unset logscale y\n", f);
    if (!finite) {
        double t0 = r->agg.n ? r->agg.t[0] : a->t_start,
               t1 = r->agg.n ? r->agg.t[r->agg.n - 1] : a->t_end;
        if (!(t1 > t0) || !isfinite(t0) || !isfinite(t1)) {
            t0 = isfinite(t0) ? t0 : 0;
            t1 = t0 + 1;
        }
        fprintf(f,
                "set xrange [\"%.3f\":\"%.3f\"]\nset yrange [0:1]\n"
                "set label 1 \"no data\" at graph 0.5, graph 0.5 center\n",
                t0, t1);
        *fixed = 1;
    }
}

static int write_script(const pm_analysis *a, const pm_metric_result *r, const char *dir,
                        pm_error *err)
{
    char name[128], path[4096], ylabel[200];
    snprintf(name, sizeof name, "%s.gp", r->def->id);
    FILE *f = open_out(dir, name, path, sizeof path, err);
    if (!f)
        return PM_EIO;
    double h_cm = r->def->size_cm;
    fprintf(f, "# perfmon-analyze: %s; run with: gnuplot %s (in this directory)\n", r->def->name,
            name);
    fprintf(f, "set terminal pngcairo size 1417,%d font 'DejaVu Sans,9' noenhanced\n",
            (int)(h_cm / 18.0 * 1417.0));
    fputs("set datafile missing 'NaN'\nset xdata time\nset timefmt '%s'\n"
          "set format x \"%m/%d\\n%H:%M:%S\"\nset xlabel 'Time'\nset grid\n"
          "set key outside right top noenhanced\n",
          f);
    snprintf(ylabel, sizeof ylabel, "%s [%s]", r->def->name, r->def->unit);
    fputs("set ylabel ", f);
    pm_gp_quote(f, ylabel, 0);
    fputc('\n', f);
    int fixed = 0;
    vscan sc = {0, INFINITY, -INFINITY};
    for (size_t h = 0; h < a->nhosts; h++)
        if (r->host[h])
            scan_values(r->host[h]->v, r->host[h]->n, &sc);
    axis_for(f, a, r, &sc, &fixed);
    char fname[128];
    snprintf(fname, sizeof fname, "%s_per_node.png", r->def->id);
    fputs("set output ", f);
    pm_gp_quote(f, fname, 0);
    fputc('\n', f);
    title(f, r, 0);
    snprintf(fname, sizeof fname, "%s_per_node.dat", r->def->id);
    int first = 1;
    for (size_t h = 0; h < a->nhosts; h++) {
        if (!r->host[h])
            continue;
        fputs(first ? "plot " : ", \\\n     ", f);
        pm_gp_quote(f, fname, 0);
        fprintf(f, " using 1:%zu with linespoints pt 7 ps 0.3 title ", h + 2);
        pm_gp_quote(f, a->hosts[h].name, GP_TITLE_MAX);
        first = 0;
    }
    if (first)
        fputs("plot NaN notitle", f); /* no host has the metric: an empty frame, not no PNG */
    fputc('\n', f);
    snprintf(fname, sizeof fname, "%s_all_nodes.png", r->def->id);
    fputs("set output ", f);
    pm_gp_quote(f, fname, 0);
    fputc('\n', f);
    sc = (vscan){0, INFINITY, -INFINITY};
    scan_values(r->agg.v, r->agg.n, &sc);
    axis_for(f, a, r, &sc, &fixed);
    title(f, r, 1);
    snprintf(fname, sizeof fname, "%s_all_nodes.dat", r->def->id);
    fputs("plot ", f);
    pm_gp_quote(f, fname, 0);
    fputs(" using 1:2 with linespoints pt 7 ps 0.3 title ", f);
    pm_gp_quote(f, r->def->comb == PM_COMB_TOTAL ? "Total" : "Average", 0);
    fputc('\n', f);
    return pm_close_checked(f, path, err);
}

typedef struct gp_job {
    const pm_analysis *a;
    const char *dir;
    int digits;
    int *rcs;
    pm_error *errs;
} gp_job;

static void *gp_worker(void *arg)
{
    pm_pool *pool = arg;
    gp_job *j = pool->ctx;
    for (size_t m; (m = pm_pool_next(pool)) < pool->n;) {
        const pm_metric_result *r = &j->a->metrics[m];
        pm_error *e = &j->errs[m];
        pm_error_clear(e);
        int rc;
        if ((rc = write_per_node(j->a, r, j->dir, j->digits, e)) ||
            (rc = write_all_nodes(r, j->dir, j->digits, e)) ||
            (rc = write_script(j->a, r, j->dir, e)))
            j->rcs[m] = rc;
    }
    return NULL;
}

int pm_export_gnuplot(const pm_analysis *a, const char *dir, pm_error *err)
{
    return pm_export_gnuplot_digits(a, dir, PM_DATA_DIGITS, err);
}

int pm_export_gnuplot_digits(const pm_analysis *a, const char *dir, int digits, pm_error *err)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot create directory", dir);
    size_t nm = a->nmetrics ? a->nmetrics : 1;
    gp_job j = {.a = a,
                .dir = dir,
                .digits = digits,
                .rcs = calloc(nm, sizeof(int)),
                .errs = calloc(nm, sizeof(pm_error))};
    if (!j.rcs || !j.errs) {
        free(j.rcs);
        free(j.errs);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    /* Metrics are independent files: one writer per CPU. */
    pm_pool pool = {.n = a->nmetrics, .ctx = &j};
    pthread_mutex_init(&pool.lock, NULL);
    pm_pool_run(&pool, gp_worker, a->nmetrics);
    pthread_mutex_destroy(&pool.lock);
    int rc = 0;
    for (size_t m = 0; m < a->nmetrics && !rc; m++)
        if (j.rcs[m]) {
            rc = j.rcs[m];
            *err = j.errs[m];
        }
    free(j.rcs);
    free(j.errs);
    if (!rc)
        rc = pm_export_timings(a, dir, err);
    if (!rc)
        rc = pm_export_phase_timeline(a, dir, err);
    return rc;
}
