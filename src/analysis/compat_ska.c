/* --compat=ska: the input as SKA perfmon's DataFrame holds it (seed 003,
 * CreateDataFrame.create_dataframe and check_non_default_metrics).
 *
 * SKA builds one table over all hosts of cpu_metrics.json: a field that
 * any host has is a column for every host, NaN where a host lacks it, and
 * its replace_neg_values (mask(<0).ffill().fillna(0)) turns such a column
 * into zeros.  So a host without rapl_powercap is a host at 0 W.  Within
 * a group of fields (rapl_powercap), SKA reads a host's keys in the order
 * package-0..7, dram-0..7, core-0..7, uncore-0..7 (those present on any
 * host); the first key the host lacks raises KeyError, which leaves the
 * rest of the group unread for that host: they are NaN, hence zeros too.
 *
 * Here: over the SKA hosts (nodes), every column any of them has is given
 * to all, filled with zeros where missing or never valid, and RAPL columns
 * after a host's first missing key are zeroed.  Semantics:
 * docs/analysis.md, "--compat=ska". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat_ska.h"
#include "perfmon/mem.h"
#include "perfmon/ska.h"

static const char *const RAPL_DOMAINS[] = {"package", "dram", "core", "uncore"};
#define SKA_RAPL_SOCKETS 8

static int is_ska_node(const pm_host *ho)
{
    return !ho->gpu && ho->prof && ho->prof->format == PM_FMT_SKA && !ho->prof->block;
}

/* Append a column of zeros named like proto to p. */
static int add_zero_column(pm_profile *p, const pm_column *proto)
{
    pm_column *nc = pm_realloc_array(p->cols, p->ncols + 1, sizeof *nc);
    if (!nc)
        return PM_ENOMEM;
    p->cols = nc;
    double **nv = pm_realloc_array(p->values, p->ncols + 1, sizeof *nv);
    if (!nv)
        return PM_ENOMEM;
    p->values = nv;
    double *v = calloc(p->n ? p->n : 1, sizeof *v);
    if (!v)
        return PM_ENOMEM;
    p->cols[p->ncols] = *proto;
    p->values[p->ncols++] = v;
    return 0;
}

static void zero_column(pm_profile *p, int c)
{
    if (c >= 0 && p->values[c])
        memset(p->values[c], 0, p->n * sizeof *p->values[c]);
}

/* SKA's RAPL keys in its reading order, present on any SKA host. */
static size_t rapl_keys(const pm_analysis *a, char keys[][32])
{
    size_t n = 0;
    for (size_t d = 0; d < sizeof RAPL_DOMAINS / sizeof *RAPL_DOMAINS; d++)
        for (int s = 0; s < SKA_RAPL_SOCKETS; s++) {
            char name[32];
            snprintf(name, sizeof name, "rapl.%s-%d", RAPL_DOMAINS[d], s);
            for (size_t h = 0; h < a->in.nhosts; h++)
                if (is_ska_node(&a->in.hosts[h]) &&
                    pm_profile_column(a->in.hosts[h].prof, name) >= 0) {
                    memcpy(keys[n++], name, sizeof name);
                    break;
                }
        }
    return n;
}

int pm_compat_ska_prepare(pm_analysis *a, pm_error *err)
{
    char keys[4 * SKA_RAPL_SOCKETS][32];
    size_t nkeys = rapl_keys(a, keys);
    size_t *first_missing = calloc(a->in.nhosts ? a->in.nhosts : 1, sizeof *first_missing);
    if (!first_missing)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    for (size_t h = 0; h < a->in.nhosts; h++) {
        if (!is_ska_node(&a->in.hosts[h]))
            continue;
        pm_profile *p = a->in.hosts[h].prof;
        size_t k = 0;
        while (k < nkeys && pm_profile_column(p, keys[k]) >= 0)
            k++;
        first_missing[h] = k;
        /* A column never valid on this host is all NaN in SKA's table. */
        for (size_t c = 0; c < p->ncols; c++) {
            size_t i = 0;
            while (i < p->n && isnan(p->values[c][i]))
                i++;
            if (i == p->n)
                zero_column(p, (int)c);
        }
    }
    int rc = 0;
    for (size_t h = 0; h < a->in.nhosts && !rc; h++) {
        if (!is_ska_node(&a->in.hosts[h]))
            continue;
        pm_profile *p = a->in.hosts[h].prof;
        /* Every column another SKA host has. */
        for (size_t o = 0; o < a->in.nhosts && !rc; o++) {
            if (o == h || !is_ska_node(&a->in.hosts[o]))
                continue;
            const pm_profile *q = a->in.hosts[o].prof;
            for (size_t c = 0; c < q->ncols && !rc; c++)
                if (pm_profile_column(p, q->cols[c].name) < 0 && add_zero_column(p, &q->cols[c]))
                    rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        }
        /* The RAPL group read up to the first key this host lacked. */
        for (size_t k = first_missing[h]; k < nkeys && !rc; k++)
            zero_column(p, pm_profile_column(p, keys[k]));
    }
    free(first_missing);
    return rc;
}
