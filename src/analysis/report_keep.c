/* What the PDF report and the plots read of the hosts' series, computed by
 * the same functions in memory and in the stream mode, so that the report
 * is the same bit for bit (docs/analysis.md, "Analysis in bounded memory").
 *
 * In memory every series is whole and these read it.  The stream mode
 * frees a host's values after its fold, so it keeps, per (metric, host),
 * the series placed on each report grid (the band plot's and the colour
 * maps', written by pwrite to an unlinked file: the file's pages are page
 * cache, not the process's memory), the least and largest finite value
 * and whether the first point is a gap (in the series), per metric the
 * times of every reset and dropped point in host order (in memory), and
 * for the HTML report of a job of 13 to 16 hosts each host's own series
 * as float32 (in the file, after the rows). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report_keep.h"
#include "perfmon/invariant.h"
#include "perfmon/mem.h"
#include "perfmon/vec.h"
#include "perfmon/order.h"

size_t pm_report_grid(const pm_analysis *a, size_t max_cols, double *t0, double *step)
{
    double span = a->t_end - a->t_start;
    if (!(span > 0))
        return 0;
    double st = a->grid_step > 0 ? a->grid_step : span / 1000;
    size_t n = (size_t)floor(span / st) + 1;
    if (n > max_cols) {
        st = span / (double)(max_cols - 1);
        n = max_cols;
    }
    *t0 = a->t_start;
    *step = st;
    return n;
}

static void range_of(const double *v, size_t n, double *lo, double *hi)
{
    double mn = INFINITY, mx = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double x = v[i];
        if (!isfinite(x))
            continue;
        if (x < mn)
            mn = x;
        if (x > mx)
            mx = x;
    }
    *lo = mn;
    *hi = mx;
}

void pm_series_range(const pm_series *s, double *lo, double *hi)
{
    if (s->v)
        range_of(s->v, s->n, lo, hi);
    else {
        *lo = s->vlo;
        *hi = s->vhi;
    }
}

int pm_series_first_gap(const pm_series *s)
{
    if (!s->q)
        return s->first_gap;
    return s->n && s->q[0] == PM_Q_GAP;
}

int pm_series_last_gap(const pm_series *s)
{
    if (!s->q)
        return s->last_gap;
    return s->n && s->q[s->n - 1] == PM_Q_GAP;
}

/* Append the (start, end) of each reset or dropped point of s. */
static int repairs_of(const pm_series *s, double **p, size_t *n, size_t *cap)
{
    if (!s || !s->q)
        return 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->q[i] != PM_Q_RESET && s->q[i] != PM_Q_DROPPED)
            continue;
        if (PM_VEC_RESERVE(*p, *cap, 2 * (*n + 1), 128) != 0)
            return PM_ENOMEM;
        (*p)[2 * *n] = i > 0 ? s->t[i - 1] : s->t[i];
        (*p)[2 * *n + 1] = s->t[i];
        (*n)++;
    }
    return 0;
}

static size_t metric_index(const pm_analysis *a, const pm_metric_result *r)
{
    return (size_t)(r->def - a->catalog->m);
}

int pm_report_repairs(const pm_analysis *a, const pm_metric_result *r, double **pairs, size_t *n)
{
    double *p = NULL;
    size_t np = 0, cap = 0;
    const pm_report_keep *k = a->keep;
    if (k) {
        size_t d = metric_index(a, r);
        np = k->nrep[d];
        p = pm_alloc_array(np ? 2 * np : 1, sizeof *p);
        if (!p)
            return PM_ENOMEM;
        if (np)
            memcpy(p, k->rep[d], 2 * np * sizeof *p);
    } else {
        for (size_t h = 0; h < a->in.nhosts; h++)
            if (repairs_of(r->host[h], &p, &np, &cap)) {
                free(p);
                return PM_ENOMEM;
            }
    }
    *pairs = p;
    *n = np;
    return 0;
}

size_t pm_report_outliers(const pm_analysis *a, const pm_metric_result *r, size_t *out)
{
    double *means = pm_alloc_array(a->in.nhosts ? a->in.nhosts : 1, sizeof *means);
    if (!means)
        return SIZE_MAX;
    size_t k = 0;
    for (size_t h = 0; h < a->in.nhosts; h++)
        if (r->host[h] && isfinite(r->host[h]->st.mean))
            means[k++] = r->host[h]->st.mean;
    qsort(means, k, sizeof *means, pm_cmp_double);
    double med = k ? pm_median_sorted(means, k) : NAN;
    free(means);
    size_t o;
    for (o = 0; o < PM_REPORT_OUTLIERS; o++) {
        double best = -1;
        size_t bh = SIZE_MAX;
        for (size_t h = 0; h < a->in.nhosts; h++) {
            if (!r->host[h] || !isfinite(r->host[h]->st.mean))
                continue;
            int dup = 0;
            for (size_t q = 0; q < o; q++)
                dup |= out[q] == h;
            double dist = fabs(r->host[h]->st.mean - med);
            if (!dup && dist > best) {
                best = dist;
                bh = h;
            }
        }
        if (bh == SIZE_MAX || !(best > 0))
            break;
        out[o] = bh;
    }
    return o;
}

/* The stream mode's rows: grid j of catalog metric d, host h. */
static off_t row_offset(const pm_report_keep *k, size_t d, size_t j, size_t h)
{
    PM_ASSERT(d < k->nm && j < k->ngrids && h < k->nhosts);
    size_t off = d * k->per_metric;
    for (size_t i = 0; i < j; i++)
        off += k->nhosts * k->ng[i];
    off += h * k->ng[j];
    /* the row lies inside metric d's block */
    PM_ASSERT(off + k->ng[j] <= (d + 1) * k->per_metric);
    return (off_t)(off * sizeof(double));
}

/* len bytes at byte offset at of the rows' file: written (put) or read. */
static int file_io(int fd, void *buf, size_t len, off_t at, int put, pm_error *err)
{
    unsigned char *p = buf;
    size_t want = len;
    while (want) {
        ssize_t got = put ? pwrite(fd, p, want, at) : pread(fd, p, want, at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return pm_error_set(err, PM_EIO, "--stream: %s the report's rows: %s",
                                put ? "writing" : "reading",
                                got < 0 ? strerror(errno) : "short file");
        p += got;
        at += got;
        want -= (size_t)got;
    }
    return 0;
}

/* n doubles at byte offset at of the rows' file: written (put) or read. */
static int row_io(int fd, double *v, size_t n, off_t at, int put, pm_error *err)
{
    return file_io(fd, v, n * sizeof *v, at, put, err);
}

float pm_report_f32(double x)
{
    return isfinite(x) ? (float)x : NAN;
}

int pm_report_series(const pm_analysis *a, const pm_metric_result *r, size_t h, float **t,
                     float **v, size_t *n, pm_error *err)
{
    const pm_series *s = r->host[h];
    const pm_report_keep *k = a->keep;
    *t = *v = NULL;
    *n = 0;
    if (!s || !s->n)
        return 0;
    size_t at = 0;
    if (!(s->t && s->v)) {
        /* --stream: the values went after the fold */
        if (!k || !k->series)
            return pm_error_set(err, PM_EUSAGE, "--stream: %s's series of %s not kept",
                                a->in.hosts[h].name, r->def->id);
        size_t d = metric_index(a, r);
        at = k->ser_at[d * k->nhosts + h];
        if (k->ser_n[d * k->nhosts + h] != s->n)
            return pm_error_set(err, PM_EIO,
                                "--stream: %s's series of %s kept with %zu points, not %zu",
                                a->in.hosts[h].name, r->def->id, k->ser_n[d * k->nhosts + h], s->n);
    }
    float *tt = pm_alloc_array(s->n, sizeof *tt), *vv = pm_alloc_array(s->n, sizeof *vv);
    int rc = tt && vv ? 0 : pm_error_set(err, PM_ENOMEM, "out of memory");
    if (!rc && s->t && s->v)
        for (size_t i = 0; i < s->n; i++) {
            tt[i] = pm_report_f32(s->t[i] - a->t_start);
            vv[i] = pm_report_f32(s->v[i]);
        }
    else if (!rc) {
        rc = file_io(k->fd, tt, s->n * sizeof *tt, (off_t)at, 0, err);
        if (!rc)
            rc = file_io(k->fd, vv, s->n * sizeof *vv, (off_t)(at + s->n * sizeof *tt), 0, err);
    }
    if (rc) {
        free(tt);
        free(vv);
        return rc;
    }
    *t = tt;
    *v = vv;
    *n = s->n;
    return 0;
}

int pm_report_row(const pm_analysis *a, const pm_metric_result *r, size_t h, size_t max_cols,
                  size_t g0, size_t g1, double *out, pm_error *err)
{
    PM_ASSERT(g0 <= g1); /* the stretch of the row asked for */
    const pm_series *s = r->host[h];
    if (!s) {
        for (size_t g = g0; g < g1; g++)
            out[g - g0] = NAN;
        return 0;
    }
    const pm_report_keep *k = a->keep;
    if (k) {
        size_t j;
        for (j = 0; j < k->ngrids && k->cols[j] != max_cols; j++)
            ;
        if (j == k->ngrids || g1 > k->ng[j])
            return pm_error_set(err, PM_EUSAGE, "--stream: no grid of %zu points kept", max_cols);
        off_t at = row_offset(k, metric_index(a, r), j, h) + (off_t)(g0 * sizeof *out);
        return row_io(k->fd, out, g1 - g0, at, 0, err);
    }
    double t0 = 0, step = 1;
    size_t ng = pm_report_grid(a, max_cols, &t0, &step);
    if (g0 == 0 && g1 == ng) {
        pm_grid_interp(s->t, s->v, s->n, t0, step, ng, out);
        return 0;
    }
    double *row = pm_alloc_array(ng ? ng : 1, sizeof *row);
    if (!row)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    pm_grid_interp(s->t, s->v, s->n, t0, step, ng, row);
    memcpy(out, row + g0, (g1 - g0) * sizeof *out);
    free(row);
    return 0;
}

int pm_report_keep_open(pm_analysis *a, pm_error *err)
{
    if (!a->opts.stream || !a->opts.report)
        return 0;
    pm_report_keep *k = calloc(1, sizeof *k);
    size_t nm = a->catalog->n;
    if (!k)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    k->fd = -1;
    a->keep = k;
    k->nhosts = a->in.nhosts;
    k->nm = nm;
    k->rep = calloc(nm ? nm : 1, sizeof *k->rep);
    k->nrep = calloc(nm ? nm : 1, sizeof *k->nrep);
    k->caprep = calloc(nm ? nm : 1, sizeof *k->caprep);
    if (!k->rep || !k->nrep || !k->caprep)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    /* The band plot's grid (above PM_LEGEND_MAX_HOSTS hosts; below, the
     * series are kept whole) and the colour maps' (above
     * PM_HEATMAP_MIN_HOSTS hosts). */
    if (a->in.nhosts > PM_LEGEND_MAX_HOSTS)
        k->cols[k->ngrids++] = PM_REPORT_BAND_COLS;
    if (a->in.nhosts > PM_HEATMAP_MIN_HOSTS && (a->opts.report & PM_REPORT_DOC))
        k->cols[k->ngrids++] = PM_REPORT_HEAT_PDF;
    if (a->in.nhosts > PM_HEATMAP_MIN_HOSTS && (a->opts.report & PM_REPORT_PLOTS))
        k->cols[k->ngrids++] = PM_REPORT_HEAT_PNG;
    for (size_t j = 0; j < k->ngrids; j++) {
        double t0, step;
        k->ng[j] = pm_report_grid(a, k->cols[j], &t0, &step);
        if (k->ng[j] > k->maxng)
            k->maxng = k->ng[j];
        k->per_metric += k->nhosts * k->ng[j];
    }
    /* The HTML's per-node lines of a job of more hosts than the fold keeps
     * whole (docs/report.md, "What is exact at which zoom"). */
    if ((a->opts.report & PM_REPORT_HTML) && a->in.nhosts > PM_LEGEND_MAX_HOSTS &&
        a->in.nhosts <= PM_REPORT_SERIES_HOSTS) {
        k->series = 1;
        k->tail = nm * k->per_metric * sizeof(double);
        k->ser_at = calloc(nm * a->in.nhosts, sizeof *k->ser_at);
        k->ser_n = calloc(nm * a->in.nhosts, sizeof *k->ser_n);
        if (!k->ser_at || !k->ser_n)
            return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    if (!k->per_metric && !k->series)
        return 0;
    const char *dir = getenv("TMPDIR");
    char path[4096];
    const char *d = dir && *dir ? dir : "/tmp";
    int n = snprintf(path, sizeof path, "%s/perfmon-stream-XXXXXX", d);
    if (n < 0 || (size_t)n >= sizeof path)
        return pm_error_set(err, PM_ELIMIT,
                            "TMPDIR %.200s...: name too long for the report's rows file", d);
    k->fd = mkstemp(path);
    if (k->fd < 0)
        return pm_error_set(err, PM_EIO, "%s: cannot create the report's rows file: %s", path,
                            strerror(errno));
    unlink(path);
    return 0;
}

void pm_report_keep_free(pm_report_keep *k)
{
    if (!k)
        return;
    if (k->fd >= 0)
        close(k->fd);
    for (size_t d = 0; k->rep && d < k->nm; d++)
        free(k->rep[d]);
    free(k->rep);
    free(k->nrep);
    free(k->caprep);
    free(k->ser_at);
    free(k->ser_n);
    free(k);
}

/* Host h's series s of metric d, as pm_report_series gives it, appended
 * to the file (its place taken atomically: the workers write at once). */
static int keep_series(const pm_analysis *a, pm_report_keep *k, size_t d, size_t h,
                       const pm_series *s, pm_error *err)
{
    if (!s->n)
        return 0;
    if (s->n > SIZE_MAX / (2 * sizeof(float)))
        return pm_error_set(err, PM_ELIMIT, "--stream: a series of %zu points", s->n);
    size_t len = 2 * s->n * sizeof(float);
    float *buf = pm_alloc_array(2 * s->n, sizeof *buf);
    if (!buf)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->n; i++) {
        buf[i] = pm_report_f32(s->t[i] - a->t_start);
        buf[s->n + i] = pm_report_f32(s->v[i]);
    }
    size_t at = __atomic_fetch_add(&k->tail, len, __ATOMIC_RELAXED);
    int rc = at > (size_t)INT64_MAX - len
                 ? pm_error_set(err, PM_ELIMIT, "--stream: the report's rows file is too large")
                 : file_io(k->fd, buf, len, (off_t)at, 1, err);
    free(buf);
    if (!rc) {
        k->ser_at[d * k->nhosts + h] = at;
        k->ser_n[d * k->nhosts + h] = s->n;
    }
    return rc;
}

int pm_report_keep_host(const pm_analysis *a, size_t d, size_t h, pm_series *s, double *buf,
                        pm_error *err)
{
    pm_report_keep *k = a->keep;
    range_of(s->v, s->n, &s->vlo, &s->vhi);
    s->first_gap = s->q && s->n && s->q[0] == PM_Q_GAP;
    s->last_gap = s->q && s->n && s->q[s->n - 1] == PM_Q_GAP;
    for (size_t j = 0; j < k->ngrids; j++) {
        double t0, step;
        size_t ng = pm_report_grid(a, k->cols[j], &t0, &step);
        pm_grid_interp(s->t, s->v, s->n, t0, step, ng, buf);
        int rc = row_io(k->fd, buf, ng, row_offset(k, d, j, h), 1, err);
        if (rc)
            return rc;
    }
    return k->series ? keep_series(a, k, d, h, s, err) : 0;
}

int pm_report_keep_repairs(pm_analysis *a, size_t d, const pm_series *s)
{
    pm_report_keep *k = a->keep;
    return repairs_of(s, &k->rep[d], &k->nrep[d], &k->caprep[d]);
}
