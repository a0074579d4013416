/* --data's phase timeline: phases.dat (one index block per phase kind,
 * one line per phase: node row, start and end in s after the job start)
 * and phases.gp, which draws every node's phases as bars on a time axis
 * (a lane per kind in each node's row),
 * the gnuplot counterpart of the report's "Phases per node"
 * (docs/analysis.md, "Phases"). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/export.h"
#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/phase_stats.h"

size_t pm_phase_rows(const pm_analysis *a, const char **rows, size_t *row, double *t0, double *t1)
{
    const pm_phase_set *ps = &a->in.phases;
    size_t nrows = 0;
    for (size_t h = 0; h < a->in.nhosts; h++)
        for (size_t i = 0; i < ps->n; i++)
            if (strcmp(ps->v[i].host, a->in.hosts[h].name) == 0) {
                rows[nrows++] = a->in.hosts[h].name;
                break;
            }
    *t0 = a->t_start;
    *t1 = a->t_end;
    for (size_t i = 0; i < ps->n; i++) {
        const pm_phase *p = &ps->v[i];
        size_t r;
        for (r = 0; r < nrows; r++)
            if (strcmp(rows[r], p->host) == 0)
                break;
        if (r == nrows)
            rows[nrows++] = p->host;
        row[i] = r;
        *t0 = fmin(*t0, p->t0);
        *t1 = fmax(*t1, p->t1);
    }
    return nrows;
}

int pm_export_phase_timeline(const pm_analysis *a, const char *dir, pm_error *err)
{
    const pm_phase_stats *st = a->phase_stats;
    const pm_phase_set *ps = &a->in.phases;
    if (!st || ps->n == 0 || st->nkinds == 0)
        return 0;
    const char **rows = pm_alloc_array(ps->n + a->in.nhosts, sizeof *rows);
    size_t *row = pm_alloc_array(ps->n, sizeof *row);
    if (!rows || !row) {
        free(rows);
        free(row);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    double t0, t1;
    size_t nrows = pm_phase_rows(a, rows, row, &t0, &t1);
    char path[4200];
    int rc = 0;
    if (pm_path_join(path, sizeof path, dir, "phases.dat") != 0)
        rc = pm_error_set(err, PM_EUSAGE, "%s: path too long", dir);
    FILE *f = rc ? NULL : fopen(path, "w");
    if (!rc && !f)
        rc = pm_error_sys(err, PM_EIO, errno, "%s: cannot create", path);
    if (f) {
        fprintf(f, "# perfmon phase timeline: one block per phase kind (gnuplot index), one line\n"
                   "# per phase: node row (phases.gp's y tics), start and end in s after the job "
                   "start\n");
        for (size_t k = 0; k < st->nkinds; k++) {
            fprintf(f, "%s# ", k ? "\n\n" : "");
            pm_gp_quote(f, st->kinds[k].name, 0);
            fputc('\n', f);
            for (size_t i = 0; i < ps->n; i++)
                if (strcmp(ps->v[i].name, st->kinds[k].name) == 0)
                    fprintf(f, "%zu %.6f %.6f\n", row[i], ps->v[i].t0 - a->t_start,
                            ps->v[i].t1 - a->t_start);
        }
        rc = pm_close_checked(f, path, err);
    }
    if (!rc && pm_path_join(path, sizeof path, dir, "phases.gp") != 0)
        rc = pm_error_set(err, PM_EUSAGE, "%s: path too long", dir);
    f = rc ? NULL : fopen(path, "w");
    if (!rc && !f)
        rc = pm_error_sys(err, PM_EIO, errno, "%s: cannot create", path);
    if (f) {
        double lo = t0 - a->t_start, hi = t1 - a->t_start;
        if (!(hi > lo))
            hi = lo + 1;
        fprintf(f,
                "# Phases per node on a time axis (run: gnuplot phases.gp)\n"
                "set terminal pngcairo size 1400,%d font \"DejaVu Sans,10\"\n"
                "set output \"phases.png\"\n"
                "set title \"Phases per node\"\n"
                "set xlabel \"seconds since the job start\"\n"
                "set xrange [%.6f:%.6f]\n"
                "set yrange [%zu.4:-0.6]\n" /* the first node on top */
                "set grid xtics\nset key outside right\n"
                "set style fill solid 0.75 border -1\n",
                (int)(300 + 14 * (nrows > 200 ? 200 : nrows)), lo, hi, nrows - 1);
        fprintf(f, "set ytics (");
        for (size_t r = 0; r < nrows; r++) {
            fprintf(f, "%s", r ? ", " : "");
            pm_gp_quote(f, rows[r], 40);
            fprintf(f, " %zu", r);
        }
        fprintf(f, ") font \",%d\"\n", nrows > 64 ? 6 : 8);
        /* Each kind a lane of its own in the node's row, so that phases
         * that overlap (a checkpoint inside a compute phase) stay apart. */
        double lane = 0.8 / (double)st->nkinds;
        fprintf(f, "plot ");
        for (size_t k = 0; k < st->nkinds; k++) {
            fprintf(f,
                    "%s\"phases.dat\" index %zu using (($2+$3)/2):($1%+.6f):(($3-$2)/2):(%.6f) "
                    "with boxxyerror lc %zu title ",
                    k ? ", \\\n     " : "", k, -0.4 + lane * ((double)k + 0.5), lane * 0.42, k + 1);
            pm_gp_quote(f, st->kinds[k].name, 40);
        }
        fprintf(f, "\n");
        rc = pm_close_checked(f, path, err);
    }
    free(rows);
    free(row);
    return rc;
}
