/* GPUs as series of their own: the sampler records GPU n of a node as
 * columns gpu.<n>.<metric>; SKA perfmon names each GPU's data as a host of
 * its own, gpu-<n>.<node>.  Splitting a node's GPU columns into one
 * profile per GPU at input time makes every later stage (series, grid,
 * Total/Average over all GPUs, plots per host, data files, CSV, HDF5)
 * work on GPUs unchanged, with catalog patterns such as "gpu.util".
 * A MIG instance's columns gpu.<n>.mig<gi>.<metric> make a device
 * gpu-<n>.mig<gi>.<node> of their own.
 * Semantics: docs/analysis.md, "GPUs". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "perfmon/mem.h"

#define MAX_GPU_INDEX 9999
#define MIG_KEY 10000 /* > MAX_GPU_INDEX */

/* GPU index of a gpu.<n>.<metric> column and where <metric> starts; -1
 * when the name is not of that form. */
static long gpu_index(const char *name, const char **metric)
{
    if (strncmp(name, "gpu.", 4) != 0)
        return -1;
    const char *p = name + 4;
    long n = 0;
    size_t digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 5) {
        n = n * 10 + (*p++ - '0');
        digits++;
    }
    if (!digits || digits > 4 || *p != '.' || !p[1] || n > MAX_GPU_INDEX)
        return -1;
    /* A MIG instance, gpu.<n>.mig<gi>.<metric>: a device of its own,
     * keyed n + (gi + 1) * MIG_KEY (docs/format.md, "GPU"). */
    if (strncmp(p + 1, "mig", 3) == 0) {
        const char *q = p + 4;
        long gi = 0;
        while (*q >= '0' && *q <= '9' && q - (p + 4) < 3)
            gi = gi * 10 + (*q++ - '0');
        if (q > p + 4 && *q == '.' && q[1]) {
            *metric = q + 1;
            return n + (gi + 1) * MIG_KEY;
        }
    }
    *metric = p + 1;
    return n;
}

/* A profile for GPU n holding the given columns of p (values moved). */
static pm_profile *gpu_profile(pm_profile *p, long n, const size_t *cols, size_t ncols)
{
    pm_column *c = pm_alloc_array(ncols, sizeof *c);
    pm_profile *g = pm_profile_new(p->path, p->format);
    if (!c || !g) {
        free(c);
        pm_profile_free(g);
        return NULL;
    }
    for (size_t j = 0; j < ncols; j++) {
        const char *metric = NULL;
        c[j] = p->cols[cols[j]];
        (void)gpu_index(c[j].name, &metric);
        snprintf(c[j].name, sizeof c[j].name, "gpu.%s", metric);
    }
    int rc = pm_profile_set_columns(g, c, ncols);
    free(c);
    if (rc == 0) {
        for (size_t j = 0; j < ncols; j++) {
            g->values[j] = p->values[cols[j]];
            p->values[cols[j]] = NULL;
        }
        rc = pm_profile_reserve(g, p->n ? p->n : 1);
    }
    if (rc) {
        pm_profile_free(g);
        return NULL;
    }
    if (p->n) {
        memcpy(g->t_wall_ns, p->t_wall_ns, p->n * sizeof *g->t_wall_ns);
        memcpy(g->t_mono_ns, p->t_mono_ns, p->n * sizeof *g->t_mono_ns);
    }
    g->n = p->n;
    g->info = p->info;
    char host[sizeof g->info.host];
    if (n >= MIG_KEY) /* MIG instance gi of GPU n: gpu-<n>.mig<gi>.<node> */
        snprintf(host, sizeof host, "gpu-%ld.mig%ld.%s", n % MIG_KEY, n / MIG_KEY - 1,
                 p->info.host);
    else
        snprintf(host, sizeof host, "gpu-%ld.%s", n, p->info.host);
    memcpy(g->info.host, host, sizeof host);
    return g;
}

int pm_gpu_split(pm_profile *p, pm_profile ***out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    size_t *cols = pm_alloc_array(p->ncols ? p->ncols : 1, sizeof *cols);
    uint8_t *moved = calloc(p->ncols ? p->ncols : 1, 1);
    int rc = cols && moved ? 0 : PM_ENOMEM;
    /* One GPU at a time, in order of its first column. */
    for (size_t first = 0; first < p->ncols && !rc; first++) {
        const char *metric;
        long n = moved[first] ? -1 : gpu_index(p->cols[first].name, &metric);
        if (n < 0)
            continue;
        size_t k = 0;
        for (size_t c = first; c < p->ncols; c++)
            if (!moved[c] && gpu_index(p->cols[c].name, &metric) == n)
                cols[k++] = c;
        pm_profile **grown = pm_realloc_array(*out, *nout + 1, sizeof *grown);
        pm_profile *g = grown ? gpu_profile(p, n, cols, k) : NULL;
        if (grown)
            *out = grown;
        if (!g) {
            rc = PM_ENOMEM;
            break;
        }
        (*out)[(*nout)++] = g;
        for (size_t j = 0; j < k; j++)
            moved[cols[j]] = 1;
    }
    /* The node keeps its other columns, in their order. */
    size_t keep = 0;
    for (size_t c = 0; moved && c < p->ncols; c++) {
        if (moved[c]) {
            free(p->values[c]); /* NULL unless moving failed half-way */
            continue;
        }
        p->cols[keep] = p->cols[c];
        if (p->unread)
            p->unread[keep] = p->unread[c];
        p->values[keep++] = p->values[c];
    }
    if (moved)
        p->ncols = keep;
    free(cols);
    free(moved);
    if (rc) {
        for (size_t i = 0; i < *nout; i++)
            pm_profile_free((*out)[i]);
        free(*out);
        *out = NULL;
        *nout = 0;
    }
    return rc;
}
