/* --plots: every chart and colour map of an analysis as a PNG file, and
 * the phase timeline (pm_timeline_png, timeline_png.c).
 *
 * Interface (report.h): pm_plots_write(a, o, err) creates o->plots_dir
 * (mkdir -p), then writes per metric its all-node and per-node chart
 * (<name>_all_nodes.png, <name>_per_node.png; none where there is nothing
 * to draw) and, for jobs of more than PM_HEATMAP_MIN_HOSTS nodes, its
 * colour map (<name>_heatmap.png), at o->dpi.  The files are independent,
 * so they are drawn by a pm_pool of workers (threads.h), job k being
 * metric k / 2 (all-node when k is even) and the rest colour maps; the
 * first error stops the workers from taking more and is the result.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "perfmon/dirs.h"
#include "perfmon/fileio.h"
#include "perfmon/report.h"
#include "perfmon/threads.h"

/* One PNG: job k < 2 * nmetrics is metric k / 2, all-node when k is even;
 * the rest are colour maps. */
typedef struct plot_jobs {
    const pm_analysis *a;
    const pm_report_opts *o;
    int dpi;
    int rc; /* the first error, under the pool's lock */
    pm_error err;
} plot_jobs;

static int plot_job(plot_jobs *j, size_t k, pm_error *err)
{
    const pm_analysis *a = j->a;
    const pm_report_opts *o = j->o;
    char path[4096];
    int rc;
    if (k < 2 * a->nmetrics) {
        pm_chart c;
        rc = pm_chart_build(a, k / 2, k % 2 == 0, o->elapsed, &c, err);
        if (rc == PM_ENOENT)
            return 0;
        if (rc)
            return rc;
        double aspect = 0.5 + (c.plot.legend ? 0.035 * (double)((c.plot.nseries + 3) / 4) : 0);
        if (pm_path_join(path, sizeof path, o->plots_dir, c.file) != 0)
            rc = pm_error_set(err, PM_EUSAGE, "%s: path too long", o->plots_dir);
        else
            rc = pm_plot_png(path, &c.plot, 18.0, aspect, j->dpi, err);
        pm_chart_free(&c);
        return rc;
    }
    size_t m = k - 2 * a->nmetrics;
    pm_heatmap_data h;
    if (pm_heatmap_build(a, m, o->elapsed, PM_REPORT_HEAT_PNG, &h, err) != 0)
        return 0; /* nothing to map */
    char base[128], file[200];
    pm_chart_name(a->metrics[m].def->name, base, sizeof base);
    snprintf(file, sizeof file, "%s_heatmap.png", base);
    if (pm_path_join(path, sizeof path, o->plots_dir, file) != 0)
        rc = pm_error_set(err, PM_EUSAGE, "%s: path too long", o->plots_dir);
    else
        rc = pm_heatmap_png(path, &h.hm, 18.0, 0.62, j->dpi, err);
    pm_heatmap_data_free(&h);
    return rc;
}

static void *plot_worker(void *arg)
{
    pm_pool *pool = arg;
    plot_jobs *j = pool->ctx;
    for (size_t k; (k = pm_pool_next(pool)) < pool->n;) {
        pthread_mutex_lock(&pool->lock);
        int stop = j->rc != 0;
        pthread_mutex_unlock(&pool->lock);
        if (stop)
            return NULL;
        pm_error e;
        pm_error_clear(&e);
        int rc = plot_job(j, k, &e);
        if (rc) {
            pthread_mutex_lock(&pool->lock);
            if (!j->rc) {
                j->rc = rc;
                j->err = e;
            }
            pthread_mutex_unlock(&pool->lock);
        }
    }
    return NULL;
}

int pm_plots_write(const pm_analysis *a, const pm_report_opts *o, pm_error *err)
{
    int rc = pm_mkdir_p(o->plots_dir, err);
    if (rc)
        return rc;
    plot_jobs j;
    memset(&j, 0, sizeof j);
    j.a = a;
    j.o = o;
    j.dpi = o->dpi > 0 ? o->dpi : 200;
    size_t njobs = 2 * a->nmetrics + (a->in.nhosts > PM_HEATMAP_MIN_HOSTS ? a->nmetrics : 0);
    pm_pool pool = {.n = njobs, .ctx = &j};
    pthread_mutex_init(&pool.lock, NULL);
    /* PNG encoding dominates: one worker per core (PM_THREADS). */
    pm_pool_run(&pool, plot_worker, njobs);
    pthread_mutex_destroy(&pool.lock);
    if (j.rc)
        *err = j.err;
    if (!j.rc)
        j.rc = pm_timeline_png(a, o, err);
    return j.rc;
}
