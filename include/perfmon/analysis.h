/* analysis.h - the perfmon-analyze engine: profiles in, series, aggregates,
 * statistics and efficiency notes out.
 *
 * pm_analysis_run() reads every input, groups profiles by host, derives one
 * series per (catalog metric, host), places them on a common time grid,
 * aggregates across hosts and computes statistics.  The result is a plain
 * in-memory structure that the text/JSON/data-file exports and the plots
 * and PDF report (issue 4) read; nothing in it refers back to the files.
 *
 * Ownership: the pm_analysis returned is owned by the caller and freed with
 * pm_analysis_free(); every pointer inside belongs to it.  Host arrays are
 * indexed by host number (hosts sorted by name); metric arrays by result
 * number (catalog order, metrics without data on every host left out).
 */
#ifndef PERFMON_ANALYSIS_H
#define PERFMON_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/arena.h"
#include "perfmon/catalog.h"
#include "perfmon/error.h"
#include "perfmon/input.h"
#include "perfmon/job_end.h"
#include "perfmon/phase.h"
#include "perfmon/profile.h"
#include "perfmon/series.h"
#include "perfmon/stats.h"
#include "perfmon/threads.h"

enum pm_align { PM_ALIGN_TIME = 0, PM_ALIGN_INDEX = 1 };

struct pm_analysis;
struct pm_metric_result;
struct pm_host;
struct pm_series;

typedef struct pm_analyze_opts {
    int repair;     /* enum pm_repair (default hold) */
    int align;      /* enum pm_align */
    int compat_ska; /* --compat=ska: reproduce SKA perfmon's numbers */
    int strict;     /* a bad input file is fatal */
    int verbose;    /* keep notes about ignored files */
    int by_phase;   /* --by-phase: resource use per phase in the text table */
    /* Window; a relative bound is seconds from the job start (the earliest
     * first sample over all hosts). */
    int has_start, has_end;
    int start_rel, end_rel;
    double start, end;
    const char *catalog_path; /* templates/metrics.json */
    const char *rules_path;   /* templates/rules.json, NULL = no notes */
    /* Called now and then with how far the run is (struct pm_progress
     * below), from any thread but never from two at once; may be NULL.
     * The library prints nothing: the program shows it (perfmon-analyze's
     * progress line on a terminal). */
    void (*progress)(const struct pm_progress *p, void *user);
    void *progress_user;
    /* Which job and run to analyse when the inputs hold several
     * (docs/analysis.md, "Jobs and runs"): a job id, and the run's number
     * in the listing or (a prefix of) a run id; NULL = the only one. */
    const char *job;
    const char *run;
    /* When pm_analysis_run fails while reading the inputs, called with
     * each line that says what was found (kind enum pm_input_msg) before it
     * returns, so that a program can show it; may be NULL. */
    void (*input_msg)(int kind, const char *msg, void *user);
    void *input_msg_user;
    /* Under mpirun (split.h): the inputs are read by all ranks and gathered
     * on rank 0 (with stream, the survey, then each host at each pass); on
     * a rank > 0, pm_analysis_run returns once its part is done, with *out
     * NULL.  NULL (the default): read here. */
    struct pm_split *split;
    /* --stream: the same results, bit for bit, holding only a few hosts'
     * samples at a time (docs/analysis.md, "Analysis in bounded memory");
     * the hosts' series keep their statistics but not their values (v, q
     * and t NULL), so only the statistics outputs, those written by
     * host_out, and with report the report (PM_REPORT_DOC: the PDF or
     * HTML report) and the plots (PM_REPORT_PLOTS: --plots) can be made:
     * what they read of the series is kept in the fold (report_keep.c). */
    int stream;
    int report; /* PM_REPORT_DOC | PM_REPORT_PLOTS */
    /* --stream: called for each host in host order, in the pass after the
     * fold, never two calls at once, with the catalog's metric results
     * (res[nres]: the all-node series and the statistics known; a metric
     * with nhosts_with_data 0 is left out of the analysis), host h (its
     * name, n and t as in memory) and its series of each catalog metric
     * (ser[nres], values and qualities, NULL where it has none).  The
     * outputs written host by host (src/export/stream_out.c); NULL: none. */
    void (*host_out)(void *user, const struct pm_analysis *a, const struct pm_metric_result *res,
                     size_t nres, size_t h, const struct pm_host *host,
                     const struct pm_series *const *ser);
    void *host_out_user;
    /* --stream: the most bytes that the fold's spill of every value
     * (src/analysis/stream_spill.c) may take, so that its pages stay in
     * the page cache; beyond it the refine passes read every host again.
     * 0: no bound but the room on its file system.  perfmon-analyze gives
     * an eighth of the memory it may use. */
    uint64_t spill_max;
} pm_analyze_opts;

void pm_analyze_opts_init(pm_analyze_opts *o);

/* One catalog metric on one host. */
typedef struct pm_series {
    size_t n;        /* = host n */
    const double *t; /* the host's times (borrowed from pm_host) */
    double *v;       /* [n] in display units; NaN = no value */
    uint8_t *q;      /* [n] enum pm_quality */
    pm_qcounts qc;
    size_t repaired; /* negative values repaired */
    size_t wraps;    /* counter wraps corrected */
    size_t ncolumns; /* profile columns summed into it */
    pm_stats st;
    /* Least-squares slope of v over t and its r^2 (pm_slope), kept by the
     * stream mode for the rules once v is gone; slope_ok 0 when none. */
    int slope_ok;
    double slope, slope_r2;
    int owns_v; /* v was taken from a malloc'd profile column and is
                            * freed with the series; otherwise v and q belong
                            * to the analysis (its arena or a profile block) */
    /* private (--stream with opts.report): the least and largest finite
     * value, whether the first point is a gap (what the report reads once
     * v and q are gone), and kept: v, q and t are the series' own, freed
     * with it (a series the report draws whole) */
    double vlo, vhi;
    int first_gap, kept;
    int last_gap; /* private (--stream with opts.report): the last point is a gap */
} pm_series;

/* The all-node series. */
typedef struct pm_aggregate {
    size_t n;
    double *t;       /* [n] grid (or averaged) times */
    double *v;       /* [n] Total or Average; NaN where no host has data */
    uint32_t *count; /* [n] hosts contributing to each point */
    pm_stats st;
    size_t interpolated; /* host points interpolated onto the grid */
    uint32_t min_count;  /* smallest count over points with data */
} pm_aggregate;

typedef struct pm_metric_result {
    const pm_metric_def *def; /* borrowed from the catalog */
    pm_series **host;         /* [nhosts]; NULL where the host has no data */
    size_t nhosts_with_data;
    pm_aggregate agg;
    pm_stats all;        /* over every host point: min/max carry host */
    double avg_per_node; /* mean of host means (SKA title "Average X/Node") */
    double max_per_node; /* max of host maxima ("Max X/Node") */
    double imbalance;    /* max host mean / mean of host means */
    pm_qcounts qc;       /* summed over hosts */
    size_t repaired, wraps;
} pm_metric_result;

/* What a per-host rule (templates/rules.json types "stopped", "memory",
 * "share"; docs/analysis.md "Efficiency rules") found on one host, computed
 * in the per-host step that the in-memory analysis and --stream share
 * (summary.c), so both give the same notes.  NaN where not measured. */
#define PM_NODE_SIGNS 12    /* per-host rules in a rules file, at most */
#define PM_NODE_GPU_SIGNS 8 /* gpu rules that walk the samples, at most */
typedef struct pm_node_sign {
    double value;  /* stopped: share of the host's span (%); memory: peak (%);
                    * share: share of the time (%) */
    double t;      /* onset (s since the epoch): the stretch's start, the first
                    * sample at or above the threshold, the first interval
                    * above it; NaN when none */
    double t_end;  /* stopped: the stretch's end */
    double before; /* stopped: the earlier level (%); memory: the limit (B) */
    double after;  /* stopped: the level in the stretch (%) */
    int what;      /* the source used: its index in the rule's sources
                    * (stopped: 0 cgroup, 1 process tree, 2 SKA/tree %, 3 node;
                    * memory: 0 node, 1 cgroup limit, 2 the job's share) */
    int to_end;    /* stopped: the stretch lasts to the host's last sample */
} pm_node_sign;

/* Per-node figures (seed 004's list and more); NaN when unknown. */
typedef struct pm_node_summary {
    double wall_time_s;
    double cpu_avg_utilization_pct;
    double cpu_avg_utilization_over20_pct, cpu_avg_utilization_over40_pct;
    double cpu_avg_utilization_over80_pct, cpu_avg_utilization_at100_pct;
    double max_t_cpu_pct_per_cpu_avg, max_t_cpu_pct_per_cpu_min, max_t_cpu_pct_per_cpu_max;
    double node_cpu_hours, node_unused_cpu_hours;
    double max_t_mem_percent, max_t_disk_usage_percent;
    double total_disk_io_read_mb, total_disk_io_write_mb;
    double total_net_io_lo_sent_mb, total_net_io_lo_recv_mb;
    double total_net_io_ext_sent_mb, total_net_io_ext_recv_mb;
    double energy_j, energy_kwh, avg_power_w;
    double proc_cpu_hours, proc_peak_rss_bytes;
    /* The job's cgroup (docs/format.md, "The job's cgroup"): its CPU time
     * and its memory's peak (memory.peak, else the largest memory.current
     * read); NaN where the sampler found no cgroup. */
    double cg_cpu_hours, cg_peak_mem_bytes;
    double sampler_cpu_pct; /* sampler CPU time / wall time */
    double sampler_peak_rss_bytes;
    double sampler_lateness_mean_s, sampler_lateness_max_s;
    double sampler_missed;
    double sampler_late; /* samples taken late (end record) */
    /* Counter totals over the node's samples (perf source); IPC is
     * instructions / cycles, FLOP all precisions. */
    double perf_instructions, perf_cycles, perf_ipc, perf_flop;
    double perf_l2_bytes, perf_l3_bytes, perf_mem_bytes;
    double perf_context_switches, perf_page_faults;
    double samples; /* samples analysed */
    /* GPU figures: set on GPU hosts (pm_host.gpu), NaN on nodes. */
    double gpu_count, gpu_hours, gpu_avg_utilization_pct, gpu_energy_j, gpu_avg_power_w;
    double gpu_peak_mem_bytes;
    size_t repaired, dropped; /* over all metrics of the node */
    /* The per-host rules' findings, in the rules file's order of those
     * rules (not figures: not in --stats' tables). */
    pm_node_sign sign[PM_NODE_SIGNS];
    /* The gpu rules' per-sample findings (held_idle, starved, memory_bound,
     * compute_bound: src/analysis/gpu_verdict.c), in the rules file's order
     * of those rules, computed in --stream's per-host step (the in-memory
     * analysis computes them from the kept series when the rules are
     * evaluated); value NaN where the rule finds nothing.  Set on GPU hosts
     * under --stream only. */
    pm_node_sign gpu_sign[PM_NODE_GPU_SIGNS];
    /* The interval that ends the host's last sample (s): a closing sample
     * taken right after the command ended holds no interval gauge. */
    double closing_interval_s;
} pm_node_summary;

/* The named figures of pm_node_summary, in output order.  The same keys
 * are used by --stats --json, the text table and the rules file. */
enum pm_figure_job { PM_JOB_SUM = 0, PM_JOB_MEAN = 1, PM_JOB_MAX = 2, PM_JOB_SPAN = 3 };
typedef struct pm_figure {
    const char *key;   /* stable JSON key, e.g. "cpu_avg_utilization_pct" */
    size_t offset;     /* offsetof(pm_node_summary, ...) (a double) */
    const char *unit;  /* "%", "h", "MiB", "J", ... */
    int job;           /* enum pm_figure_job: how the job figure is formed */
    const char *label; /* short column title for the text table */
    const char *title; /* what it is, in words (the PDF report) */
} pm_figure;

extern const pm_figure PM_FIGURES[];
extern const size_t PM_NFIGURES;
double pm_figure_value(const pm_node_summary *s, const pm_figure *f);
/* The figure with this key, or NULL. */
const pm_figure *pm_figure_find(const char *key);

enum pm_severity { PM_SEV_INFO = 0, PM_SEV_WARNING = 1, PM_SEV_CRITICAL = 2 };

typedef struct pm_note {
    char rule[64];
    char type[16]; /* the rule's type ("node", "stopped", "memory", ...) */
    int severity;  /* enum pm_severity */
    int host;      /* host index, -1 for the whole job */
    double value;  /* the figure that triggered the rule */
    double t;      /* when it began (s since the epoch), NaN when the rule has no onset */
    char *message;
} pm_note;

typedef struct pm_analysis {
    pm_analyze_opts opts;
    pm_catalog *catalog;
    /* What the input stage read (input.h): the hosts, warnings, ignored
     * files, phases and the reads' projection. */
    pm_inputs in;
    size_t nmetrics;
    pm_metric_result *metrics; /* [nmetrics] */
    pm_node_summary *nodes;    /* [nhosts] */
    pm_node_summary job;       /* totals (sums) or maxima over nodes */
    double t_start, t_end;     /* analysed span (s since the epoch) */
    double grid_step;          /* common grid interval (s) */
    size_t nnotes;
    pm_note *notes;
    struct pm_phase_stats *phase_stats; /* their statistics (phases.c), NULL if none */
    uint32_t **refs;                    /* private: [host][column] metrics still to derive */
    double win_lo, win_hi;              /* private: the --start/--end window (s) */
    pm_arena arena;                     /* private: the host times, series and aggregates */
    struct pm_report_keep *keep;        /* private: --stream's report digest (report_keep.c) */
    struct pm_rule_plan *rule_plan;     /* private: the per-host rules' parameters, read
                                         * before the node figures (rules.c) */
    /* How the job ended (job_end.h, docs/analysis.md "How the job ended") */
    pm_end *ends;         /* [nhosts] each host's end */
    pm_job_end end;       /* the job's: the worst host's state */
    pm_job_event *events; /* [nevents] by time, then host */
    size_t nevents;
    size_t events_dropped; /* beyond the bound per host */
    void *host_events;     /* private: the events per host while they are scanned */
} pm_analysis;

/* Analyse the given files and directories (a directory contributes every
 * regular file in it, sorted, not recursing).  A file that cannot be read
 * is a warning (fatal with opts->strict).  Returns PM_ENOENT (message set)
 * when no profile was found, PM_EUSAGE for a bad window or for inputs that
 * hold several jobs or runs, or one host sampled twice at once (the message
 * lists them; opts->job and opts->run pick one), PM_EEMPTY when there is
 * nothing to analyse (phase marks only, no sample in the window). */
int pm_analysis_run(const char *const *paths, size_t npaths, const pm_analyze_opts *opts,
                    pm_analysis **out, pm_error *err) PM_WUR;

void pm_analysis_free(pm_analysis *a);

/* Whether the job's profiles are unfinished (docs/analysis.md, "Unfinished
 * profiles"): the number of nodes whose profile may be, and in buf (cap
 * bytes) "" or "incomplete: <reason> (<hosts>)", the strongest reason
 * ("the sampler was still running" over "no end record"). */
size_t pm_analysis_incomplete(const pm_analysis *a, char *buf, size_t cap);

/* Index of the result for catalog id, or -1. */
int pm_analysis_metric(const pm_analysis *a, const char *id);
/* A text field of the hosts' pm_profile_info at byte offset off (e.g.
 * offsetof(pm_profile_info, job_id)): the first host's non-empty value,
 * or "" (borrowed from the analysis). */
const char *pm_analysis_info(const pm_analysis *a, size_t off);

/* The plot title, into buf (cap bytes, always NUL-terminated), the same
 * in the PDF, the PNG plots and the gnuplot scripts: per node SKA
 * perfmon's "Average <name>/Node: <avg> <unit>, Max <name>/Node: <max>
 * <unit>" from avg_per_node (the mean of the host means) and
 * max_per_node; with all_nodes "<Total|Average> <name> (all-node series):
 * mean <m> <unit>, max <x> <unit>", the aggregate's own time-weighted
 * mean and maximum.  Numbers with 4 significant digits
 * (pm_fmt_title_num).  Returns snprintf's count. */
int pm_metric_title(const pm_metric_result *r, int all_nodes, char *buf, size_t cap);
/* A number for a title: 4 significant digits, no exponent between 1e-3
 * and 1e9, "n/a" when not finite. */
void pm_fmt_title_num(double v, char *out, size_t cap);

/* Evaluate the rules file against a (fills a->notes). */
int pm_rules_eval(pm_analysis *a, const char *rules_path, pm_error *err) PM_WUR;

/* Fill a->nodes and a->job (summary.c). */
int pm_summary_compute(pm_analysis *a, pm_error *err) PM_WUR;

/* Place one host series on the grid t0 + k*step (k < n) by GSL linear
 * interpolation between consecutive valid points, never past the host's
 * first and last valid points: out gets NaN there.  Returns the number of
 * grid points filled. */
size_t pm_grid_interp(const double *t, const double *v, size_t n, double t0, double step,
                      size_t ngrid, double *out);

/* What the report reads of the series, in memory or --stream
 * (report_keep.c, docs/analysis.md "Analysis in bounded memory"): both
 * paths call these, so the report is the same bit for bit. */
#define PM_REPORT_OUTLIERS 3
/* Above this many hosts a per-node plot shows a band, not one line each
 * (and the stream mode keeps each host's series whole up to it). */
#define PM_LEGEND_MAX_HOSTS 12
/* Above this many hosts the report adds time x node colour maps. */
#define PM_HEATMAP_MIN_HOSTS 16
/* Up to this many hosts the HTML report's per-node charts draw every
 * host's own samples (the stream mode keeps them with PM_REPORT_HTML). */
#define PM_REPORT_SERIES_HOSTS 16
/* pm_analyze_opts.report: which reports the stream mode keeps rows for
 * (PM_REPORT_HTML: also each host's own series, pm_report_series). */
enum { PM_REPORT_DOC = 1, PM_REPORT_PLOTS = 2, PM_REPORT_HTML = 4 };
/* The report's grids: the band plots', the PDF's colour maps', --plots'. */
#define PM_REPORT_BAND_COLS 4000
#define PM_REPORT_HEAT_PDF 1200
#define PM_REPORT_HEAT_PNG 1500
/* The report's grid of at most max_cols points over the analysed span:
 * returns the number of points (0: no span), *t0 and *step. */
size_t pm_report_grid(const pm_analysis *a, size_t max_cols, double *t0, double *step);
/* Host h's series of metric r placed on the report grid of max_cols
 * (pm_grid_interp): out[g - g0] for g0 <= g < g1; NaN where the host has
 * no series.  --stream reads the row kept in the fold (a file). */
int pm_report_row(const pm_analysis *a, const pm_metric_result *r, size_t h, size_t max_cols,
                  size_t g0, size_t g1, double *out, pm_error *err) PM_WUR;
/* x as the HTML report embeds it: float32, NaN where x is not finite. */
float pm_report_f32(double x);
/* Host h's own series of metric r as the HTML report embeds it: *n points,
 * (*t)[i] = pm_report_f32(time - a->t_start), (*v)[i] = pm_report_f32(value)
 * (*t and *v malloc'd, the caller frees them; NULL and *n = 0 where the host
 * has no series).  In memory from the series; --stream reads what the
 * fold kept for a job of at most PM_REPORT_SERIES_HOSTS hosts when
 * opts.report has PM_REPORT_HTML (else PM_EUSAGE). */
int pm_report_series(const pm_analysis *a, const pm_metric_result *r, size_t h, float **t,
                     float **v, size_t *n, pm_error *err) PM_WUR;
/* The least and largest finite value of s (INFINITY and -INFINITY when
 * none). */
void pm_series_range(const pm_series *s, double *lo, double *hi);
/* Whether s's first point is a gap. */
int pm_series_first_gap(const pm_series *s);
/* Whether s's last point is a gap. */
int pm_series_last_gap(const pm_series *s);
/* The (start, end) times of every host's reset and dropped points of r,
 * in host order: *pairs (malloc'd, 2 x *n doubles). */
int pm_report_repairs(const pm_analysis *a, const pm_metric_result *r, double **pairs,
                      size_t *n) PM_WUR;
/* The hosts whose mean is furthest from the median of the hosts' means,
 * furthest first, at most PM_REPORT_OUTLIERS (out[]); returns how many,
 * or SIZE_MAX when out of memory. */
size_t pm_report_outliers(const pm_analysis *a, const pm_metric_result *r, size_t *out);

/* The same, a stretch of grid points at a time (so that many hosts can be
 * placed on the grid side by side in little memory): after
 * pm_interp_init, each pm_interp_next call fills out[k - k0] for the grid
 * points k0 <= k < k1, k0 no lower than the previous call's k1. */
typedef struct pm_interp {
    const double *t, *v;
    size_t n, ngrid;
    double t0, step;
    size_t i;       /* where the next run's search starts */
    size_t s, f, j; /* the current run: start, end of its verified points, walk */
    size_t r;       /* the current run's end: its first value not finite, or n */
    double a;       /* its first grid point */
    int ended;      /* its end is known (f) */
    int have;       /* a run is loaded */
} pm_interp;
void pm_interp_init(pm_interp *it, const double *t, const double *v, size_t n, double t0,
                    double step, size_t ngrid);
size_t pm_interp_next(pm_interp *it, size_t k0, size_t k1, double *out);

/* The all-node series' placement of one host series on the grid t0 +
 * k*step (k < ngrid), a stretch of grid points at a time: each valid
 * sample goes to its nearest grid point (several samples of one point:
 * their mean), the points between two consecutive valid samples get the
 * linear interpolation from the earlier point to the later sample, the
 * others NaN.  After pm_place_init, each pm_place_next fills out[k - k0]
 * for k0 <= k < k1 (k0 no lower than the previous call's k1) and returns
 * how many of them were interpolated. */
typedef struct pm_place {
    const double *t, *v;
    size_t n, ngrid;
    double t0, step;
    size_t i;              /* the next sample to read */
    int started;           /* a group was read */
    int have1, have2;      /* the current and the next group of samples */
    size_t k1, k2;         /* their grid points */
    double m1, m2, f1, f2; /* their means and first samples */
    int adj1, adj2;        /* no NaN between the group and the one before */
    const uint32_t *k;     /* [n] each sample's grid point (pm_place_points), or NULL */
} pm_place;
void pm_place_init(pm_place *it, const double *t, const double *v, size_t n, double t0, double step,
                   size_t ngrid);
/* The same with each sample's grid point given (k from pm_place_points on
 * the same t, t0, step and ngrid): the same results without computing
 * them again for each metric. */
void pm_place_init_k(pm_place *it, const double *t, const uint32_t *k, const double *v, size_t n,
                     double t0, double step, size_t ngrid);
/* k[i] = the grid point nearest t[i] (ties to even), clamped to the grid;
 * ngrid must be at least 1 and at most UINT32_MAX. */
void pm_place_points(const double *t, size_t n, double t0, double step, size_t ngrid, uint32_t *k);
/* Whether the n samples whose grid points are k (pm_place_points) lie on
 * consecutive points from k[0] on, within a grid of ngrid points: then
 * placing them gives each of those points its own sample's value (a NaN
 * sample's point lies between two groups with a NaN between them, so it
 * is not interpolated) and NaN to the others, with no interpolation. */
int pm_place_consecutive(const uint32_t *k, size_t n, size_t ngrid);
size_t pm_place_next(pm_place *it, size_t k0, size_t k1, double *out);

#endif
