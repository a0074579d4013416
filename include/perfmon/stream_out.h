/* stream_out.h - the outputs --stream writes host by host (--csv, --hdf5,
 * --data, --trace)
 * with the same pieces as the in-memory writers (export.h), so that both
 * write the same bytes (HDF5: the same content).
 *
 * Set the paths and digits, pass pm_stream_out_host and the struct as
 * pm_analyze_opts.host_out and host_out_user, run the analysis, then
 * finish each output (pm_stream_out_csv, _hdf5, _data, _trace: the all-node
 * series come from the finished analysis) and pm_stream_out_free.  A
 * failure while writing is kept and returned by the finishing call, so a
 * program reports it where the in-memory writer's would be.
 */
#ifndef PERFMON_STREAM_OUT_H
#define PERFMON_STREAM_OUT_H

#include "perfmon/analysis.h"
#include "perfmon/error.h"
#include "perfmon/export.h"

typedef struct pm_stream_out {
    const char *csv_path; /* NULL: no CSV */
    int csv_digits;
    const char *hdf5_path; /* NULL: no HDF5 */
    const char *data_dir;  /* NULL: no --data */
    int data_digits;
    const char *trace_path; /* NULL: no --trace */
    /* private */
    pm_csv_out *csv;
    pm_hdf5_out *hdf5;
    pm_gp_out *gp;
    pm_trace_out *trace;
    int csv_failed, hdf5_failed, gp_failed, trace_failed, rc;
    pm_error csv_err, hdf5_err, gp_err, trace_err, err;
    const pm_metric_def **defs;
    const pm_metric_result **res;
    const pm_series **s;
} pm_stream_out;

/* pm_analyze_opts.host_out (user: the pm_stream_out). */
void pm_stream_out_host(void *user, const pm_analysis *a, const pm_metric_result *res, size_t nres,
                        size_t h, const pm_host *host, const pm_series *const *ser);
/* Close the CSV (0, or its error); the HDF5 file after writing the
 * aggregates of a. */
int pm_stream_out_csv(pm_stream_out *so, pm_error *err) PM_WUR;
int pm_stream_out_hdf5(pm_stream_out *so, const pm_analysis *a, pm_error *err) PM_WUR;
/* The --data files (every file is written here, from the spill). */
int pm_stream_out_data(pm_stream_out *so, const pm_analysis *a, pm_error *err) PM_WUR;
/* The --trace file (its counter tracks from the spills, the rest from a). */
int pm_stream_out_trace(pm_stream_out *so, const pm_analysis *a, pm_error *err) PM_WUR;
/* Release what is left (an output not finished is closed as it is). */
void pm_stream_out_free(pm_stream_out *so);

#endif
