/* The outputs that --stream writes host by host (--csv, --hdf5, --data,
 * --trace): the pieces of the in-memory writers (csv.c, hdf5.c, gnuplot.c,
 * phases_out.c), called for each host
 * in host order from the pass after the fold (pm_analyze_opts.host_out),
 * then finished with what only the whole analysis knows (the all-node
 * series).  docs/analysis.md, "Analysis in bounded memory". */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfmon/export.h"
#include "perfmon/stream_out.h"

/* The metrics the analysis keeps (those some host has), in its order, and
 * the host's series of each. */
static int pick(pm_stream_out *so, const pm_metric_result *res, size_t nres,
                const pm_series *const *ser, size_t *nm)
{
    if (!so->defs) {
        so->defs = calloc(nres ? nres : 1, sizeof *so->defs);
        so->s = calloc(nres ? nres : 1, sizeof *so->s);
        so->res = calloc(nres ? nres : 1, sizeof *so->res);
        if (!so->defs || !so->s || !so->res)
            return pm_error_set(&so->err, PM_ENOMEM, "out of memory");
    }
    size_t k = 0;
    for (size_t d = 0; d < nres; d++) {
        if (!res[d].nhosts_with_data)
            continue;
        so->defs[k] = res[d].def;
        so->res[k] = &res[d];
        so->s[k++] = ser[d];
    }
    *nm = k;
    return 0;
}

void pm_stream_out_host(void *user, const pm_analysis *a, const pm_metric_result *res, size_t nres,
                        size_t h, const pm_host *host, const pm_series *const *ser)
{
    pm_stream_out *so = user;
    size_t nm = 0;
    if (so->rc || (so->rc = pick(so, res, nres, ser, &nm)))
        return;
    if (so->csv_path && !so->csv && !so->csv_failed) {
        so->csv = pm_csv_open(so->csv_path, so->csv_digits, so->defs, nm, &so->csv_err);
        so->csv_failed = so->csv == NULL;
    }
    if (so->csv)
        pm_csv_host(so->csv, host, so->s);
    if (so->hdf5_path && !so->hdf5 && !so->hdf5_failed) {
        so->hdf5 = pm_hdf5_open(so->hdf5_path, &so->hdf5_err);
        so->hdf5_failed = so->hdf5 == NULL;
    }
    if (so->hdf5)
        pm_hdf5_host(so->hdf5, h, host, so->defs, nm, so->s);
    if (so->data_dir && !so->gp && !so->gp_failed) {
        so->gp = pm_gp_open(so->data_dir, so->data_digits, &so->gp_err);
        so->gp_failed = so->gp == NULL;
    }
    if (so->gp)
        pm_gp_host(so->gp, a, so->res, nm, h, so->s);
    if (so->trace_path && !so->trace && !so->trace_failed) {
        so->trace = pm_trace_open(so->trace_path, &so->trace_err);
        so->trace_failed = so->trace == NULL;
    }
    if (so->trace)
        pm_trace_host(so->trace, a, h, so->defs, so->s, nm);
}

/* The error kept for an output: the hook's own, or its opening's. */
static int kept(const pm_stream_out *so, int failed, const pm_error *open_err, pm_error *err)
{
    if (so->rc) {
        *err = so->err;
        return so->rc;
    }
    if (failed) {
        *err = *open_err;
        return open_err->code ? open_err->code : PM_EIO;
    }
    return 0;
}

int pm_stream_out_data(pm_stream_out *so, const pm_analysis *a, pm_error *err)
{
    int rc = kept(so, so->gp_failed, &so->gp_err, err);
    if (!rc) {
        rc = pm_gp_close(so->gp, a, err);
        so->gp = NULL;
    }
    return rc;
}

int pm_stream_out_csv(pm_stream_out *so, pm_error *err)
{
    int rc = kept(so, so->csv_failed, &so->csv_err, err);
    if (!rc) {
        rc = pm_csv_close(so->csv, err);
        so->csv = NULL;
    }
    return rc;
}

int pm_stream_out_hdf5(pm_stream_out *so, const pm_analysis *a, pm_error *err)
{
    int rc = kept(so, so->hdf5_failed, &so->hdf5_err, err);
    if (!rc) {
        rc = pm_hdf5_close(so->hdf5, a, err);
        so->hdf5 = NULL;
    }
    return rc;
}

int pm_stream_out_trace(pm_stream_out *so, const pm_analysis *a, pm_error *err)
{
    int rc = kept(so, so->trace_failed, &so->trace_err, err);
    if (!rc && !so->trace) /* (no host at all) */
        so->trace = pm_trace_open(so->trace_path, err);
    if (!rc && !so->trace)
        rc = err->code ? err->code : PM_EIO;
    if (!rc) {
        rc = pm_trace_close(so->trace, a, err);
        so->trace = NULL;
    }
    return rc;
}

void pm_stream_out_free(pm_stream_out *so)
{
    /* An output still open here is one whose analysis failed after it
     * was begun: its temporary file goes, and an older file of that name
     * stays, as with the in-memory path, which would not have begun it
     * (that failure is the error reported). */
    pm_error e;
    int ignored = 0;
    pm_csv_discard(so->csv);
    pm_hdf5_discard(so->hdf5);
    pm_trace_discard(so->trace);
    so->trace = NULL;
    if (so->gp) {
        ignored |= pm_gp_close(so->gp, NULL, &e);
        (void)rmdir(so->data_dir); /* (only when empty) */
    }
    (void)ignored;
    free(so->defs);
    free(so->s);
    free(so->res);
    so->res = NULL;
    so->gp = NULL;
    so->csv = NULL;
    so->hdf5 = NULL;
    so->defs = NULL;
    so->s = NULL;
}
