/* input.h - the input stage (src/input/): the files named on the command
 * line -> the job's hosts, each a merged raw profile, and a host read
 * again later (here, or from its rank under mpirun).
 *
 * It sits between the profile readers (profile.h) and the analysis
 * (analysis.h), which embeds its result (pm_inputs) and knows it as
 * a->in.  What reading needs of the catalog, the column projection, comes
 * in through the read hints (pm_read_hint) that the analysis sets in
 * pm_inputs before the load: the input stage calls nothing above it.
 * Semantics: docs/analysis.md, "Inputs", "Jobs and runs" and "MPI".
 *
 * Ownership: a pm_inputs is filled by pm_input_load and freed with
 * pm_inputs_free (the struct itself is the caller's, usually inside a
 * pm_analysis); every pointer inside belongs to it.
 */
#ifndef PERFMON_INPUT_H
#define PERFMON_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/error.h"
#include "perfmon/phase.h"
#include "perfmon/profile.h"

/* How far a run is (pm_analyze_opts.progress, pm_report_opts.progress):
 * the stage and its counts so far, of their totals (0 = not known).  The
 * counts of other stages than p->stage are 0. */
enum pm_stage {
    PM_STAGE_READ = 0,   /* reading the input files */
    PM_STAGE_DERIVE = 1, /* deriving the metrics' series, aggregates, statistics */
    PM_STAGE_REPORT = 2  /* drawing the plots and writing the report's pages */
};
typedef struct pm_progress {
    int stage; /* enum pm_stage */
    size_t files_done, files_total;
    uint64_t bytes_done, bytes_total; /* of the files */
    size_t hosts_done, hosts_total;   /* hosts whose series are all derived */
    size_t metrics_done, metrics_total;
    size_t series_done, series_total; /* (metric, host) series derived */
    size_t plots_done, plots_total;   /* the report's plots and colour maps */
    size_t pages_done;                /* report pages written so far */
    /* --stream (stage derive): the pass over the hosts (the survey's
     * times, one pass or two with --start/--end, then the fold, then the
     * refine passes) and the passes known so far, which grows when a
     * further refine pass is found needed; hosts_done counts the hosts
     * done in this pass.  0 and 0 in memory. */
    size_t pass, passes;
} pm_progress;

enum pm_input_msg {
    PM_MSG_DETAIL = 0,  /* a line of the error's explanation (a run, a file) */
    PM_MSG_WARNING = 1, /* a file read in part or not at all, and why */
    PM_MSG_IGNORED = 2, /* a file that is not a profile, or not selected (-v) */
};

/* Clock assessment of one host (docs/analysis.md, "Time axis and clocks"). */
typedef struct pm_clock {
    int method;        /* 0 = start spread only (SKA input), 1 = also monotonic/wall pairs */
    double offset_s;   /* first sample minus the median first sample over hosts */
    double drift_ppm;  /* change of (wall - monotonic), last sample vs first, per run time */
    double step_max_s; /* largest jump of (wall - monotonic) between samples */
} pm_clock;

/* One host of the job: its files merged into one raw profile by the input
 * stage; the time axis (n, t, idx, grid_k, ...) is the analysis's. */
typedef struct pm_host {
    char *name;
    char **files; /* [nfiles] profiles merged into this host */
    size_t nfiles;
    char format[16];       /* "binary", "jsonl", "ska", "mixed" */
    pm_profile *prof;      /* merged raw profile: columns, info, end record and
                            * metadata stay; the raw values (prof->values[c]) are
                            * released (NULL) once the node figures and every
                            * metric using them are computed, to bound memory */
    size_t n;              /* samples kept (increasing time, inside the window) */
    double *t;             /* [n] seconds since the epoch; NULL after --stream */
    uint32_t *idx;         /* [n] index of each kept sample in prof */
    uint32_t *grid_k;      /* [n] the common grid's point nearest each sample
                            * (time alignment), computed once for all metrics;
                            * NULL when not aligned by time */
    size_t dropped_time;   /* samples dropped for a non-increasing timestamp */
    size_t outside_window; /* samples outside --start/--end */
    double interval;       /* median sampling interval (s) */
    pm_clock clock;
    double t_first, t_last; /* private: the first and last kept sample, kept by
                             * the stream mode, where t is NULL */
    int gpu;                /* a GPU of a node: series gpu-<n>.<node> (docs/analysis.md, "GPUs") */
    double ncpus;           /* from cpu.ncpus or metadata, NaN when unknown */
    double mem_total;       /* bytes, NaN when unknown */
    /* Why the host's profile may be unfinished, "" when it ended cleanly:
     * "the sampler was still running" (its pid is alive on this host or
     * the file grew while read) or "no end record" (docs/analysis.md). */
    char incomplete[48];
} pm_host;

struct pm_split;

/* What the input stage needs of the analysis's options (pm_analyze_opts
 * says what each is). */
typedef struct pm_input_opts {
    int strict; /* a bad input file is fatal */
    int stream; /* --stream: the first read is a survey (few samples, no values) */
    const char *job, *run;
    struct pm_split *split; /* under mpirun (split.h), or NULL */
    void (*progress)(const pm_progress *p, void *user);
    void *progress_user;
    void (*input_msg)(int kind, const char *msg, void *user);
    void *input_msg_user;
} pm_input_opts;

/* What the input stage read: pm_input_load's result, held by the
 * analysis as a->in. */
typedef struct pm_inputs {
    size_t nhosts;
    pm_host *hosts; /* [nhosts] sorted by name */
    size_t nwarnings;
    char **warnings; /* input problems, one line each */
    size_t nignored; /* files that are not profiles */
    char **ignored;  /* their messages (verbose) */
    /* job phases (marks paired, Scanner intervals) */
    pm_phase_set phases;
    /* private: the column projection of the reads, set by the analysis
     * before pm_input_load (analysis/project.c): the first read (under
     * --stream the survey), a host read again with its values, or for
     * its times alone; no projection when read_first.want is NULL */
    pm_read_hint read_first, read_values, read_times;
    /* private: --stream's passes over the hosts begun (the analysis
     * counts them; a host read again belongs to the current one) */
    size_t stream_pass;
    /* private: --stream under mpirun: the hosts come from the other
     * ranks (split_stream.c) */
    struct pm_remote *remote;
} pm_inputs;

/* Collect the input files of paths (a directory: its regular files,
 * sorted, not recursing), read them (in parallel, or this rank's share
 * under o->split), select the run (o->job, o->run), and group the
 * profiles into in->hosts (sorted by name, several files per host
 * merged).  Warnings, ignored files and the phases go to in.  When it
 * fails, o->input_msg gets each line that says what was found.  Under a
 * split, a rank > 0 returns once its share is sent.  0 or a PM_E* code. */
int pm_input_load(pm_inputs *in, const pm_input_opts *o, const char *const *paths, size_t npaths,
                  pm_error *err) PM_WUR;
/* Host h's merged profile read again (here, or from its rank under
 * --stream and mpirun), with the column projection (values) or its times
 * alone: the same files, clock fix, GPU split and merge as pm_input_load.
 * *out is owned by the caller. */
int pm_input_host_load(const pm_inputs *in, size_t h, int values, pm_profile **out,
                       pm_error *err) PM_WUR;
/* The same, from its files on this process, even under mpirun. */
int pm_input_host_read(const pm_inputs *in, size_t h, int values, pm_profile **out,
                       pm_error *err) PM_WUR;
/* Host h will not be loaded in this pass (a worker that failed before):
 * under mpirun, its profile is taken from the other ranks and dropped. */
void pm_input_host_drop(const pm_inputs *in, size_t h);
/* Free what in holds (not in itself); in is left empty. */
void pm_inputs_free(pm_inputs *in);

/* The ranks' exchange (split.h) where the analysis drives it. */
/* Every rank, once, when its input stage ends with rc: a rank > 0 that
 * sent nothing yet says it failed; rank 0 waits for what the others still
 * send; then rank 0's status goes to all.  Returns rank 0's status (on
 * rank 0: rc). */
int pm_split_finish(struct pm_split *sp, int rc, pm_error *err);
/* The same without the status: the survey's exchange ends there, and
 * (--stream) the hosts' exchange follows.  Returns rc. */
int pm_split_survey_end(struct pm_split *sp, int rc, pm_error *err);
/* --stream under a split (split_stream.c; split.h says how).  Rank 0,
 * after the survey: send the hosts (in->hosts) to every rank and serve
 * in->remote; then the hosts' profiles come from the other ranks
 * (pm_input_host_load). */
int pm_remote_begin(pm_inputs *in, struct pm_split *sp, pm_error *err) PM_WUR;
/* Rank 0, once, whether or not pm_remote_begin ran or succeeded: end the
 * passes, tell every rank, and give them rank 0's status rc. */
int pm_remote_end(pm_inputs *in, struct pm_split *sp, int rc, pm_error *err);
/* A rank > 0, after the survey (rc: how its share went): read and send
 * its hosts at each pass rank 0 asks for, until rank 0 ends; returns
 * rank 0's status. */
int pm_remote_serve(pm_inputs *in, struct pm_split *sp, int rc, pm_error *err);

#endif
