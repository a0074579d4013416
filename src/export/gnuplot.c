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

/* Start host h's placement of series s on the grid of n points: its
 * samples' grid points are the host's (computed once by the analysis) when
 * s is on the host's time axis.  Returns whether they are consecutive
 * (pm_place_consecutive). */
static int place_start(const pm_analysis *a, size_t h, const pm_series *s, size_t n, pm_place *it)
{
    const uint32_t *gk = s->t == a->in.hosts[h].t ? a->in.hosts[h].grid_k : NULL;
    pm_place_init_k(it, s->t, gk, s->v, s->n, a->t_start, a->grid_step, n);
    return pm_place_consecutive(gk, s->n, n);
}

/* Host h's values of metric r on rows k0 <= k < k1 of its per-node file
 * (the one per-host piece of the file, which both the in-memory writer and
 * --stream call): on the grid, its series placed there (it: its iterator,
 * rows asked in increasing order; direct: its grid points it->k are
 * consecutive, its samples are copied); otherwise its own samples, NaN
 * after them.  s NULL: no data, NaN. */
static void col_fill(const pm_series *s, int grid, pm_place *it, int direct, size_t k0, size_t k1,
                     double *c)
{
    if (!s) {
        for (size_t k = k0; k < k1; k++)
            c[k - k0] = NAN;
    } else if (grid && direct) {
        size_t first = it->k[0], last = first + it->n; /* rows [first, last) */
        for (size_t k = k0; k < k1; k++)
            c[k - k0] = k >= first && k < last ? it->v[k - first] : NAN;
    } else if (grid) {
        (void)pm_place_next(it, k0, k1, c);
    } else {
        for (size_t k = k0; k < k1; k++)
            c[k - k0] = k < s->n ? s->v[k] : NAN;
    }
}

/* Where write_per_node finds the hosts' columns: placed from the series
 * (it, in memory), or read back from --stream's spill file, where host h's
 * column of the metric is rows doubles at base + h * rows. */
typedef struct gp_src {
    pm_place *it;
    unsigned char *direct; /* [nhosts] place_start's answer, with it */
    int fd;                /* -1: in memory */
    uint64_t base;
} gp_src;

static int src_fill(const gp_src *src, const pm_metric_result *r, int grid, size_t h, size_t k0,
                    size_t k1, double *c)
{
    const pm_series *s = r->host[h];
    if (src->fd < 0 || !s) {
        col_fill(s, grid, src->it ? &src->it[h] : NULL, src->it ? src->direct[h] : 0, k0, k1, c);
        return 0;
    }
    size_t want = (k1 - k0) * sizeof *c, got = 0;
    off_t at = (off_t)((src->base + (uint64_t)h * r->agg.n + k0) * sizeof *c);
    while (got < want) {
        ssize_t n = pread(src->fd, (char *)c + got, want - got, at + (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        got += (size_t)n;
    }
    return 0;
}

/* The common grid's times as text, formatted once for every metric's
 * files instead of twice per metric: entry k holds t (its bits compared
 * with a metric's own k-th time, which may differ: a metric of one host
 * has that host's times) and its text (len 0: not kept, formatted). */
typedef struct gp_tstr {
    double t;
    unsigned char len;
    char s[23];
} gp_tstr;

typedef struct gp_times {
    size_t n;
    gp_tstr *e; /* [n], NULL: none */
} gp_times;

/* At most this many rows kept (32 bytes each): 4 MiB. */
#define GP_TIMES_MAX ((size_t)1 << 17)

/* The times of the first metric on the grid (NULL e where none, or too
 * long, or out of memory: each row is then formatted, the same bytes). */
static gp_times times_text(const pm_analysis *a, int digits)
{
    gp_times tt = {0, NULL};
    const pm_metric_result *g = NULL;
    for (size_t m = 0; m < a->nmetrics && !g; m++)
        if (use_grid(a) && a->metrics[m].nhosts_with_data > 1)
            g = &a->metrics[m];
    if (!g || g->agg.n == 0 || g->agg.n > GP_TIMES_MAX)
        return tt;
    tt.e = pm_alloc_array(g->agg.n, sizeof *tt.e);
    if (!tt.e)
        return tt;
    tt.n = g->agg.n;
    for (size_t k = 0; k < tt.n; k++) {
        char buf[32] = {0};
        size_t len = pm_fmt_double(buf, g->agg.t[k], digits);
        tt.e[k].t = g->agg.t[k];
        tt.e[k].len = (unsigned char)(len <= sizeof tt.e[k].s ? len : 0);
        memcpy(tt.e[k].s, buf, sizeof tt.e[k].s);
    }
    return tt;
}

/* Time t of row k as text at p (32 bytes there): from tt where it holds
 * the same double, else formatted.  Returns the length. */
static inline size_t time_text(const gp_times *tt, size_t k, double t, int digits, char *p)
{
    if (k < tt->n && tt->e[k].len && memcmp(&tt->e[k].t, &t, sizeof t) == 0) {
        memcpy(p, tt->e[k].s, sizeof tt->e[k].s);
        return tt->e[k].len;
    }
    return pm_fmt_double(p, t, digits);
}

static int write_per_node(const pm_analysis *a, const pm_metric_result *r, const char *dir,
                          int digits, gp_src *src, const gp_times *tt, size_t rows_at_once,
                          pm_error *err)
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
    size_t nh = a->in.nhosts;
    int grid = use_grid(a) && r->nhosts_with_data > 1;
    double *cols = pm_alloc_array((nh ? nh : 1) * rows_at_once, sizeof *cols);
    /* One row is built in memory and written at once: per-value stdio
     * calls (each taking the stream lock) cost more than the formatting. */
    size_t rowcap = 40 * (nh + 1) + 2;
    char *row = malloc(rowcap);
    if (!cols || !row) {
        free(cols);
        free(row);
        fclose(f);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    for (size_t h = 0; h < nh && src->it; h++) {
        const pm_series *s = r->host[h];
        if (s && grid)
            src->direct[h] = (unsigned char)place_start(a, h, s, n, &src->it[h]);
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
        comment_str(f, a->in.hosts[h].name);
        fprintf(f, " [%s]", r->def->unit);
    }
    fputc('\n', f);
    int rc = 0;
    for (size_t k0 = 0; k0 < n && !rc; k0 += rows_at_once) {
        size_t k1 = n - k0 < rows_at_once ? n : k0 + rows_at_once;
        for (size_t h = 0; h < nh && !rc; h++)
            rc = src_fill(src, r, grid, h, k0, k1, cols + h * rows_at_once);
        for (size_t k = k0; k < k1 && !rc; k++) {
            size_t len = time_text(tt, k, r->agg.t[k], tdigits(digits), row);
            for (size_t h = 0; h < nh; h++) {
                row[len++] = ' ';
                len += pm_fmt_double(row + len, cols[h * rows_at_once + k - k0], digits);
            }
            row[len++] = '\n';
            fwrite(row, 1, len, f);
        }
    }
    free(cols);
    free(row);
    if (rc) {
        fclose(f);
        return pm_error_sys(err, PM_EIO, -rc, "%s: reading the spill file back failed", path);
    }
    return pm_close_checked(f, path, err);
}

static int write_all_nodes(const pm_metric_result *r, const char *dir, int digits,
                           const gp_times *tt, pm_error *err)
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
        size_t len = time_text(tt, i, r->agg.t[i], tdigits(digits), num);
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
    double min, max; /* over every finite value */
} vscan;

#define VSCAN_INIT ((vscan){0, INFINITY, -INFINITY, INFINITY, -INFINITY})

static void scan_values(const double *v, size_t n, vscan *sc)
{
    for (size_t i = 0; i < n; i++) {
        if (isfinite(v[i])) {
            sc->finite = 1;
            sc->min = v[i] < sc->min ? v[i] : sc->min;
            sc->max = v[i] > sc->max ? v[i] : sc->max;
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
 * gets fixed ranges and says "no data".  A constant series (to the data
 * files' digits) gets a y range around its value, from 0 (gnuplot would warn "empty y range" and pick
 * a range of its own). */
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
    } else if (sc->max - sc->min <= 1e-5 * fmax(fabs(sc->min), fabs(sc->max))) {
        /* constant to the data files' 6 digits, which is what gnuplot sees */
        double v = sc->min;
        if (v > 0)
            fprintf(f, "set yrange [0:%.17g]\n", 2 * v);
        else if (v < 0)
            fprintf(f, "set yrange [%.17g:0]\n", 2 * v);
        else
            fputs("set yrange [0:1]\n", f);
        *fixed = 1;
    }
}

/* The time axis's tick step for a job of span seconds: whole seconds and
 * clock-friendly steps, at most 8 ticks (gnuplot's own choice for a job
 * of a few seconds is half a second, and the labels, to the second, then
 * repeat). */
static double tick_step(double span)
{
    static const double steps[] = {1,     2,     5,     10,    15,     30,    60,
                                   120,   300,   600,   900,   1800,   3600,  7200,
                                   10800, 21600, 43200, 86400, 172800, 604800};
    size_t n = sizeof steps / sizeof *steps;
    for (size_t i = 0; i < n; i++)
        if (!(span / steps[i] > 8))
            return steps[i];
    return ceil(span / 8 / 86400) * 86400;
}

static int write_script(const pm_analysis *a, const pm_metric_result *r, const char *dir,
                        const vscan *hosts_sc, pm_error *err)
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
    fprintf(f, "set xtics %g\n", tick_step(a->t_end - a->t_start));
    snprintf(ylabel, sizeof ylabel, "%s [%s]", r->def->name, r->def->unit);
    fputs("set ylabel ", f);
    pm_gp_quote(f, ylabel, 0);
    fputc('\n', f);
    int fixed = 0;
    axis_for(f, a, r, hosts_sc, &fixed);
    char fname[128];
    snprintf(fname, sizeof fname, "%s_per_node.png", r->def->id);
    fputs("set output ", f);
    pm_gp_quote(f, fname, 0);
    fputc('\n', f);
    title(f, r, 0);
    snprintf(fname, sizeof fname, "%s_per_node.dat", r->def->id);
    int first = 1;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        if (!r->host[h])
            continue;
        fputs(first ? "plot " : ", \\\n     ", f);
        pm_gp_quote(f, fname, 0);
        fprintf(f, " using 1:%zu with linespoints pt 7 ps 0.3 title ", h + 2);
        pm_gp_quote(f, a->in.hosts[h].name, GP_TITLE_MAX);
        first = 0;
    }
    if (first)
        fputs("plot NaN notitle", f); /* no host has the metric: an empty frame, not no PNG */
    fputc('\n', f);
    snprintf(fname, sizeof fname, "%s_all_nodes.png", r->def->id);
    fputs("set output ", f);
    pm_gp_quote(f, fname, 0);
    fputc('\n', f);
    vscan sc = VSCAN_INIT;
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
    /* --stream: the spill file, each metric's first double in it and the
     * scan of its hosts' values; -1 and NULL in memory */
    int fd;
    const uint64_t *base;
    const vscan *sc;
    size_t rows_at_once;
    gp_times times; /* the grid's times as text */
} gp_job;

static void *gp_worker(void *arg)
{
    pm_pool *pool = arg;
    gp_job *j = pool->ctx;
    size_t nh = j->a->in.nhosts ? j->a->in.nhosts : 1;
    pm_place *it = j->fd < 0 ? calloc(nh, sizeof *it) : NULL;
    unsigned char *direct = j->fd < 0 ? calloc(nh, 1) : NULL;
    for (size_t m; (m = pm_pool_next(pool)) < pool->n;) {
        const pm_metric_result *r = &j->a->metrics[m];
        pm_error *e = &j->errs[m];
        pm_error_clear(e);
        if (j->fd < 0 && (!it || !direct)) {
            j->rcs[m] = pm_error_set(e, PM_ENOMEM, "out of memory");
            continue;
        }
        gp_src src = {.it = it, .direct = direct, .fd = j->fd, .base = j->base ? j->base[m] : 0};
        vscan sc = VSCAN_INIT;
        if (j->sc)
            sc = j->sc[m];
        else
            for (size_t h = 0; h < j->a->in.nhosts; h++)
                if (r->host[h])
                    scan_values(r->host[h]->v, r->host[h]->n, &sc);
        int rc;
        if ((rc =
                 write_per_node(j->a, r, j->dir, j->digits, &src, &j->times, j->rows_at_once, e)) ||
            (rc = write_all_nodes(r, j->dir, j->digits, &j->times, e)) ||
            (rc = write_script(j->a, r, j->dir, &sc, e)))
            j->rcs[m] = rc;
    }
    free(it);
    free(direct);
    return NULL;
}

/* Every metric's files (one writer per CPU: they are independent), then
 * the phases' timings and timeline. */
static int gp_run(gp_job *j, pm_error *err)
{
    const pm_analysis *a = j->a;
    size_t nm = a->nmetrics ? a->nmetrics : 1;
    j->rcs = calloc(nm, sizeof(int));
    j->errs = calloc(nm, sizeof(pm_error));
    if (!j->rcs || !j->errs) {
        free(j->rcs);
        free(j->errs);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    j->times = times_text(a, tdigits(j->digits));
    pm_pool pool = {.n = a->nmetrics, .ctx = j};
    pthread_mutex_init(&pool.lock, NULL);
    pm_pool_run(&pool, gp_worker, a->nmetrics);
    pthread_mutex_destroy(&pool.lock);
    free(j->times.e);
    int rc = 0;
    for (size_t m = 0; m < a->nmetrics && !rc; m++)
        if (j->rcs[m]) {
            rc = j->rcs[m];
            *err = j->errs[m];
        }
    free(j->rcs);
    free(j->errs);
    if (!rc)
        rc = pm_export_timings(a, j->dir, err);
    if (!rc)
        rc = pm_export_phase_timeline(a, j->dir, err);
    return rc;
}

int pm_export_gnuplot(const pm_analysis *a, const char *dir, pm_error *err)
{
    return pm_export_gnuplot_digits(a, dir, PM_DATA_DIGITS, err);
}

int pm_export_gnuplot_digits(const pm_analysis *a, const char *dir, int digits, pm_error *err)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot create directory", dir);
    gp_job j = {.a = a, .dir = dir, .digits = digits, .fd = -1, .rows_at_once = ROWS_AT_ONCE};
    return gp_run(&j, err);
}

/* --stream: each host's columns go to a spill file in the output directory
 * (unlinked at once, so nothing is left behind) as the host is derived,
 * and are read back a block of rows at a time when the files are written:
 * the per-node files are row-major (a column per host), the hosts come one
 * at a time. */
struct pm_gp_out {
    char *dir;
    int digits;
    int fd;
    size_t nm, nh;
    uint64_t *base; /* [nm] */
    vscan *sc;      /* [nm] */
    double *buf;    /* the longest column */
    int rc;
    pm_error err;
};

/* The columns of the block of rows read back at once: at most this many
 * bytes of them per writer thread, whatever the number of hosts (the
 * bytes written do not depend on it). */
#define SPILL_BLOCK_BYTES ((size_t)32 << 20)

pm_gp_out *pm_gp_open(const char *dir, int digits, pm_error *err)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        pm_error_sys(err, PM_EIO, errno, "%s: cannot create directory", dir);
        return NULL;
    }
    pm_gp_out *w = calloc(1, sizeof *w);
    char *d = strdup(dir);
    char path[4096];
    if (!w || !d) {
        free(w);
        free(d);
        pm_error_set(err, PM_ENOMEM, "out of memory");
        return NULL;
    }
    if (pm_path_join(path, sizeof path, dir, ".perfmon-spill-XXXXXX") != 0) {
        pm_error_set(err, PM_EUSAGE, "%s: path too long", dir);
        free(w);
        free(d);
        return NULL;
    }
    w->fd = mkstemp(path);
    if (w->fd < 0) {
        pm_error_sys(err, PM_EIO, errno, "%s: cannot create", path);
        free(w);
        free(d);
        return NULL;
    }
    (void)unlink(path);
    w->dir = d;
    w->digits = digits;
    return w;
}

void pm_gp_host(pm_gp_out *w, const pm_analysis *a, const pm_metric_result *const *res, size_t nm,
                size_t h, const pm_series *const *s)
{
    if (w->rc)
        return;
    if (!w->base) {
        /* the first host: the metrics and their rows are known */
        w->nm = nm;
        w->nh = a->in.nhosts;
        w->base = calloc(nm ? nm : 1, sizeof *w->base);
        w->sc = calloc(nm ? nm : 1, sizeof *w->sc);
        size_t maxn = 1;
        uint64_t at = 0;
        for (size_t m = 0; m < nm; m++) {
            w->base[m] = at;
            at += (uint64_t)res[m]->agg.n * w->nh;
            maxn = res[m]->agg.n > maxn ? res[m]->agg.n : maxn;
            if (w->sc)
                w->sc[m] = VSCAN_INIT;
        }
        w->buf = pm_alloc_array(maxn, sizeof *w->buf);
        if (!w->base || !w->sc || !w->buf) {
            w->rc = pm_error_set(&w->err, PM_ENOMEM, "out of memory");
            return;
        }
    }
    for (size_t m = 0; m < nm && !w->rc; m++) {
        const pm_metric_result *r = res[m];
        if (!s[m])
            continue;
        scan_values(s[m]->v, s[m]->n, &w->sc[m]);
        size_t n = r->agg.n;
        int grid = use_grid(a) && r->nhosts_with_data > 1;
        pm_place it;
        if (grid)
            pm_place_init(&it, s[m]->t, s[m]->v, s[m]->n, a->t_start, a->grid_step, n);
        col_fill(s[m], grid, &it, 0, 0, n, w->buf);
        size_t want = n * sizeof *w->buf, done = 0;
        off_t at = (off_t)((w->base[m] + (uint64_t)h * n) * sizeof *w->buf);
        while (done < want) {
            ssize_t k = pwrite(w->fd, (const char *)w->buf + done, want - done, at + (off_t)done);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                w->rc = pm_error_sys(&w->err, PM_EIO, k < 0 ? errno : ENOSPC,
                                     "%s: writing the spill file failed", w->dir);
                break;
            }
            done += (size_t)k;
        }
    }
}

int pm_gp_close(pm_gp_out *w, const pm_analysis *a, pm_error *err)
{
    if (!w)
        return 0;
    int rc = w->rc;
    if (rc)
        *err = w->err;
    else if (a && a->nmetrics != w->nm)
        rc = pm_error_set(err, PM_EIO, "%s: %zu metrics written, %zu in the analysis", w->dir,
                          w->nm, a->nmetrics);
    if (!rc && a) {
        size_t nh = a->in.nhosts ? a->in.nhosts : 1;
        size_t rows = SPILL_BLOCK_BYTES / sizeof(double) / nh;
        gp_job j = {.a = a,
                    .dir = w->dir,
                    .digits = w->digits,
                    .fd = w->fd,
                    .base = w->base,
                    .sc = w->sc,
                    .rows_at_once = rows < 1              ? 1
                                    : rows > ROWS_AT_ONCE ? ROWS_AT_ONCE
                                                          : rows};
        rc = gp_run(&j, err);
    }
    close(w->fd);
    free(w->dir);
    free(w->base);
    free(w->sc);
    free(w->buf);
    free(w);
    return rc;
}
