/* export.h - outputs of an analysis: the --stats text table and JSON
 * summary, gnuplot data files and scripts, CSV and HDF5.
 *
 * Every function only reads the analysis.  Write failures (a full disk)
 * are errors: each output is flushed and closed and checked.
 * Formats and keys: docs/analysis.md, "Outputs".
 */
#ifndef PERFMON_EXPORT_H
#define PERFMON_EXPORT_H

#include <stdio.h>

#include "perfmon/analysis.h"
#include "perfmon/error.h"

/* Schema version of the --stats --json document (bumped on any key change). */
#define PM_STATS_JSON_SCHEMA 1

/* Write the aligned text tables to f (not closed). */
int pm_stats_text(const pm_analysis *a, FILE *f, pm_error *err) PM_WUR;

/* The --stats --json document as a NUL-terminated string the caller frees
 * (also what the PDF report embeds).  NULL when out of memory. */
char *pm_stats_json_string(const pm_analysis *a);
int pm_stats_json(const pm_analysis *a, FILE *f, pm_error *err) PM_WUR;

/* Significant digits of the values in the data files (%.6g) and the CSV
 * (%.10g) unless --digits says otherwise; times keep 13 digits (a
 * millisecond at today's dates), all 17 when digits is 17. */
#define PM_DATA_DIGITS 6
#define PM_CSV_DIGITS 10
#define PM_TIME_DIGITS 13

/* Write s as a gnuplot double-quoted string that gnuplot reads back as the
 * same bytes (scripts and data files; every byte outside letters, digits,
 * space and inert punctuation as an octal escape); longer than max bytes
 * (0: no limit), its start and "..." for display. */
void pm_gp_quote(FILE *f, const char *s, size_t max);

/* phases.dat and phases.gp in dir (phase_timeline.c): every node's phases
 * as bars on a time axis, one colour and key entry per kind; nothing when
 * the job has no phases.  Returns 0 or PM_EIO/PM_ENOMEM/PM_EUSAGE. */
int pm_export_phase_timeline(const pm_analysis *a, const char *dir, pm_error *err) PM_WUR;

/* Per metric: <id>_per_node.dat, <id>_all_nodes.dat, <id>.gp in dir
 * (created if absent).  Values with PM_DATA_DIGITS significant digits;
 * the _digits form takes their number (1 to 17; 17 is round-trip exact). */
int pm_export_gnuplot(const pm_analysis *a, const char *dir, pm_error *err) PM_WUR;
int pm_export_gnuplot_digits(const pm_analysis *a, const char *dir, int digits,
                             pm_error *err) PM_WUR;

/* The same host by host (--stream, stream_out.c): pm_gp_open creates dir
 * and an unlinked spill file in it; pm_gp_host places host h's series of
 * each metric (res[nm], s[nm] as for pm_csv_host; the all-node series'
 * rows known) and writes them to the spill; pm_gp_close writes every file
 * from the spill and a (NULL: none, after a failure), closes and frees. */
typedef struct pm_gp_out pm_gp_out;
pm_gp_out *pm_gp_open(const char *dir, int digits, pm_error *err);
void pm_gp_host(pm_gp_out *w, const pm_analysis *a, const pm_metric_result *const *res, size_t nm,
                size_t h, const pm_series *const *s);
int pm_gp_close(pm_gp_out *w, const pm_analysis *a, pm_error *err) PM_WUR;

/* One row per host and timestamp; one column per metric with its unit.
 * Values with PM_CSV_DIGITS significant digits, or digits (1 to 17). */
int pm_export_csv(const pm_analysis *a, const char *path, pm_error *err) PM_WUR;
int pm_export_csv_digits(const pm_analysis *a, const char *path, int digits, pm_error *err) PM_WUR;

/* /hosts/<host>/<metric> datasets (time, value, quality), /aggregates/... */
int pm_export_hdf5(const pm_analysis *a, const char *path, pm_error *err) PM_WUR;

/* The same outputs host by host, in host order, for the in-memory writers
 * above (which loop over the hosts) and --stream (which calls them as each
 * host is derived, stream_out.c), so that both write the same bytes.
 * defs[nm]: the metrics (a->metrics' order); s[nm]: one host's series of
 * each, NULL where it has none; host: its name, n and t.
 *
 * The CSV: pm_csv_open creates path and writes the header (NULL and err
 * set on failure); pm_csv_close flushes, closes, frees and says whether
 * every write went through. */
typedef struct pm_csv_out pm_csv_out;
pm_csv_out *pm_csv_open(const char *path, int digits, const pm_metric_def *const *defs, size_t nm,
                        pm_error *err);
void pm_csv_host(pm_csv_out *w, const pm_host *host, const pm_series *const *s);
int pm_csv_close(pm_csv_out *w, pm_error *err) PM_WUR;
/* Close and free w, leaving no file behind (an older one stays). */
void pm_csv_discard(pm_csv_out *w);

/* The HDF5 file: pm_hdf5_open creates it with its two groups;
 * pm_hdf5_host adds /hosts/<host> (h: the host's index, for a name too
 * long); pm_hdf5_close writes /aggregates from a (every metric's all-node
 * series; a NULL: none, after a failure), closes and frees; its error
 * names the file when anything failed since the open. */
typedef struct pm_hdf5_out pm_hdf5_out;
pm_hdf5_out *pm_hdf5_open(const char *path, pm_error *err);
void pm_hdf5_host(pm_hdf5_out *w, size_t h, const pm_host *host, const pm_metric_def *const *defs,
                  size_t nm, const pm_series *const *s);
int pm_hdf5_close(pm_hdf5_out *w, const pm_analysis *a, pm_error *err) PM_WUR;
/* Close and free w, leaving no file behind (an older one stays). */
void pm_hdf5_discard(pm_hdf5_out *w);

/* Job phases: the --stats text section (with --by-phase the resource use
 * per phase) and the "phases" object of the JSON document. */
void pm_phases_text(const pm_analysis *a, FILE *f);
struct cJSON;
void pm_phases_json(const pm_analysis *a, struct cJSON *root);
/* Requested vs used (request_out.c): the --stats section (nothing when
 * no request was recorded), the JSON object "request", and the lines both
 * the text and the report's page 1 show (at most 3 of 160 bytes, *n). */
void pm_request_use_text(const pm_analysis *a, FILE *f);
void pm_request_use_json(const pm_analysis *a, struct cJSON *root);
void pm_request_use_lines(const pm_analysis *a, char lines[3][160], size_t *n);

/* timings.dat (one row per node, a column per phase kind) and timings.gp
 * (stacked boxes) in dir; nothing when the job has no phases. */
int pm_export_timings(const pm_analysis *a, const char *dir, pm_error *err) PM_WUR;

/* Chrome trace event JSON (chrome://tracing, Perfetto): a process per
 * host, a track per phase kind, counter tracks for the main series;
 * gzip-compressed when path ends in ".gz". */
int pm_export_trace(const pm_analysis *a, const char *path, pm_error *err) PM_WUR;

/* The same trace written host by host (--stream): pm_trace_open makes the
 * spill files (next to path, unlinked at once; NULL and err on failure),
 * pm_trace_host takes host h's series of the metrics defs (nm of them, in
 * any order), in host order, and pm_trace_close writes path from the
 * finished analysis a and the spills, and frees w; the bytes are those of
 * pm_export_trace.  pm_trace_discard(w) frees w unwritten (NULL: no-op). */
typedef struct pm_trace_out pm_trace_out;
pm_trace_out *pm_trace_open(const char *path, pm_error *err);
void pm_trace_host(pm_trace_out *w, const pm_analysis *a, size_t h,
                   const pm_metric_def *const *defs, const pm_series *const *ser, size_t nm);
int pm_trace_close(pm_trace_out *w, const pm_analysis *a, pm_error *err) PM_WUR;
void pm_trace_discard(pm_trace_out *w);

/* Format v into buf (cap >= 32) quickly, exactly as printf("%.*g",
 * digits, v) does (ties to even on the exact binary value), except that
 * NaN gives "NaN" (what the data files and gnuplot use).  digits is
 * clamped to 1..PM_FMT_MAX_DIGITS; 17 is round-trip exact.  Returns the
 * length written (without the NUL). */
#define PM_FMT_MAX_DIGITS 17
size_t pm_fmt_double(char *buf, double v, int digits);

/* perfmon-analyze --compare (compare.h): the aligned text table and the
 * JSON document (keys in docs/analysis.md, "Comparing two jobs"; a key
 * change bumps PM_COMPARE_JSON_SCHEMA).  The string is the caller's. */
#define PM_COMPARE_JSON_SCHEMA 1
struct pm_comparison;
int pm_compare_text(const struct pm_comparison *c, FILE *f, pm_error *err) PM_WUR;
char *pm_compare_json_string(const struct pm_comparison *c);
int pm_compare_json(const struct pm_comparison *c, FILE *f, pm_error *err) PM_WUR;

/* Resource use per phase kind, as the report's table and --stats show it
 * (src/export/phase_table.c): the kind's name, its time (the longest per-node total,
 * pm_fmt_duration), CPU time used (core-seconds, pm_fmt_duration) and its
 * share of the allocated CPU, the memory peak, disk read and written,
 * network sent and received (pm_fmt_bytes); "-" where not measured. */
#define PM_PHASE_USE_COLS 9
extern const char *const PM_PHASE_USE_HEAD[PM_PHASE_USE_COLS];
struct pm_phase_kind_stats;
void pm_phase_use_cells(const struct pm_phase_kind_stats *ks, char cells[PM_PHASE_USE_COLS][48]);

/* Energy per phase kind, as the report's tables and --stats show it
 * (phase_table.c): the kind's name, the CPUs' energy (RAPL) and the GPUs'
 * (pm_fmt_energy, "-" where not measured), and where the GPUs' came from
 * (pm_phase_energy_from).  pm_phase_energy_any: whether any kind of st
 * has an energy (the table is left out otherwise). */
#define PM_PHASE_ENERGY_COLS 4
extern const char *const PM_PHASE_ENERGY_HEAD[PM_PHASE_ENERGY_COLS];
void pm_phase_energy_cells(const struct pm_phase_kind_stats *ks,
                           char cells[PM_PHASE_ENERGY_COLS][48]);
struct pm_phase_stats;
int pm_phase_energy_any(const struct pm_phase_stats *st);
/* "energy counter", "power integrated (no energy counter)", "energy
 * counter, power integrated where none", or NULL: the words for a kind's
 * gpu_energy_from (PM_ENERGY_FROM_* bits). */
const char *pm_phase_energy_from(int from);

/* The rows of the phase timeline as the report, --plots and --data show
 * it (phase_timeline.c): the analysis's nodes that have phases, in host
 * order, then the hosts only phases name (Scanner nodes).  rows must hold
 * a->in.phases.n + a->in.nhosts names and row a->in.phases.n indices: row[i] is
 * phase i's row.  *t0 and *t1 are the job's span widened to every phase.
 * Returns the number of rows. */
size_t pm_phase_rows(const pm_analysis *a, const char **rows, size_t *row, double *t0, double *t1);

#endif
