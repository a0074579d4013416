/* The history plot of one entry (see archive_plot.h). */
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "perfmon/archive_plot.h"
#include "perfmon/compare.h"
#include "perfmon/mem.h"
#include "perfmon/plot.h"

#define WIDTH_CM 18.0
#define ASPECT 0.5
#define DPI 150

/* A vector file of the plot: PDF, or SVG when svg is set. */
static int write_vector(const char *path, int svg, const pm_plot *p, pm_error *err)
{
    double w = WIDTH_CM / 2.54 * 72, h = w * ASPECT;
    cairo_surface_t *s =
        svg ? cairo_svg_surface_create(path, w, h) : cairo_pdf_surface_create(path, w, h);
    cairo_t *cr = cairo_create(s);
    pm_plot_draw(cr, 0, 0, w, h, 9.0, p);
    cairo_destroy(cr);
    cairo_surface_finish(s);
    cairo_status_t st = cairo_surface_status(s);
    cairo_surface_destroy(s);
    if (st != CAIRO_STATUS_SUCCESS)
        return pm_error_set(err, PM_EIO, "%s: cannot write %s: %s", path, svg ? "SVG" : "PDF",
                            cairo_status_to_string(st));
    return 0;
}

int pm_arch_plot_kind(const char *path)
{
    size_t len = strlen(path);
    const char *ext = len > 4 ? path + len - 4 : "";
    return strcasecmp(ext, ".png") == 0   ? 'p'
           : strcasecmp(ext, ".pdf") == 0 ? 'd'
           : strcasecmp(ext, ".svg") == 0 ? 's'
                                          : 0;
}

int pm_arch_plot(const char *path, const char *test, const char *entry, const char *unit,
                 const pm_store_point *pts, size_t n, const pm_check_opts *o, int gated,
                 const pm_cp *cps, size_t ncp, size_t *nregressions, pm_error *err)
{
    /* Two extra points without a value, one before the first run and one
     * after the last, widen the time axis so that a ring drawn around the
     * first or last run stays inside the frame. */
    size_t np = n + 2;
    double *t = pm_alloc_array(np, sizeof *t), *v = pm_alloc_array(np, sizeof *v);
    double *mt = pm_alloc_array(n ? n : 1, sizeof *mt), *mv = pm_alloc_array(n ? n : 1, sizeof *mv);
    double *lv = pm_alloc_array(np, sizeof *lv); /* the level between change points */
    pm_plot_span *sp = pm_alloc_array(ncp ? ncp : 1, sizeof *sp);
    char(*spl)[32] = pm_alloc_array(ncp ? ncp : 1, sizeof *spl);
    if (!t || !v || !mt || !mv || !lv || !sp || !spl) {
        free(t);
        free(v);
        free(mt);
        free(mv);
        free(lv);
        free(sp);
        free(spl);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    }
    size_t nm = 0;
    for (size_t i = 0; i < n; i++) {
        t[i + 1] = (double)pts[i].start_us * 1e-6;
        v[i + 1] = pts[i].timing;
        pm_check_result r;
        pm_check_series(v + 1, i + 1, o, &r);
        if (gated && r.verdict == PM_CHECK_REGRESSION) {
            mt[nm] = t[i + 1];
            mv[nm++] = v[i + 1];
        }
    }
    double span = n ? t[n] - t[1] : 0, pad = span > 0 ? span * 0.04 : 3600;
    t[0] = n ? t[1] - pad : 0;
    t[n + 1] = n ? t[n] + pad : 1;
    v[0] = v[n + 1] = NAN;
    /* Each run's level: the median of its side of the change points
     * around it; a shaded band from the last run before each change to
     * the first after it, labelled with the step. */
    size_t nsp = 0;
    lv[0] = lv[n + 1] = NAN;
    for (size_t i = 0, k = 0; i < n; i++) {
        while (k < ncp && cps[k].at <= i)
            k++;
        lv[i + 1] = ncp == 0 ? NAN : k < ncp ? cps[k].median_before : cps[ncp - 1].median_after;
    }
    for (size_t k = 0; k < ncp; k++) {
        if (cps[k].at == 0 || cps[k].at >= n)
            continue;
        snprintf(spl[nsp], sizeof spl[nsp], "%+.1f%%", cps[k].step * 100);
        sp[nsp].t0 = t[cps[k].at];
        sp[nsp].t1 = t[cps[k].at + 1];
        sp[nsp].kind = 1;
        sp[nsp].label = spl[nsp];
        sp[nsp].color = 1;
        nsp++;
    }
    char title[600], label[400], ylabel[400];
    snprintf(title, sizeof title, "%.280s: %.280s", test, entry);
    snprintf(ylabel, sizeof ylabel, "%.300s (%.60s)", entry, unit && *unit ? unit : "1");
    snprintf(label, sizeof label, "%.300s, %s is better (%zu runs, %zu beyond their noise%s)",
             entry, pm_better_name(o->better), n, nm, gated ? "" : "; informational, not gated");
    char llabel[96];
    snprintf(llabel, sizeof llabel, "level between %zu change point%s (rank test)", ncp,
             ncp == 1 ? "" : "s");
    pm_plot_series ser[2] = {{.label = label, .t = t, .v = v, .n = np},
                             {.label = llabel, .t = t, .v = lv, .n = np}};
    pm_plot p;
    memset(&p, 0, sizeof p);
    p.title = title;
    p.ylabel = ylabel;
    p.time_axis = PM_AXIS_CLOCK;
    p.series = ser;
    p.nseries = ncp ? 2 : 1;
    p.spans = sp;
    p.nspans = nsp;
    p.legend = 1;
    p.points = 1;
    p.mark_t = mt;
    p.mark_v = mv;
    p.nmarks = nm;
    int kind = pm_arch_plot_kind(path), rc;
    if (kind == 'p')
        rc = pm_plot_png(path, &p, WIDTH_CM, ASPECT, DPI, err);
    else if (kind == 'd' || kind == 's')
        rc = write_vector(path, kind == 's', &p, err);
    else
        rc =
            pm_error_set(err, PM_EUSAGE, "%s: give a file name ending in .png, .pdf or .svg", path);
    free(t);
    free(v);
    free(mt);
    free(mv);
    free(lv);
    free(sp);
    free(spl);
    if (rc == 0 && nregressions)
        *nregressions = nm;
    return rc;
}
