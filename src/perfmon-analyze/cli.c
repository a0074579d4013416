/* perfmon-analyze's command line (the program's main only calls
 * pm_analyze_main).  Exit codes: docs/man/perfmon-analyze.1. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze_cli.h"
#include "perfmon/analysis.h"
#include "perfmon/budget.h"
#include "perfmon/cli.h"
#include "perfmon/compare.h"
#include "perfmon/export.h"
#include "perfmon/stream_out.h"
#include "perfmon/fileio.h"
#include "perfmon/html.h"
#include "perfmon/parse.h"
#include "perfmon/report.h"
#include "perfmon/split.h"
#include "perfmon/strs.h"
#include "perfmon/templates.h"

#ifndef PM_VERSION
#define PM_VERSION "0"
#endif
#ifndef PM_TEMPLATE_DIR
#define PM_TEMPLATE_DIR "/usr/local/share/perfmon/templates"
#endif

enum {
    EXIT_OK = PM_EXIT_OK,
    EXIT_PARTIAL = PM_EXIT_FAIL,
    EXIT_USAGE = PM_EXIT_USAGE,
    EXIT_OUTPUT = PM_EXIT_OUTPUT,
    EXIT_MEMORY = PM_EXIT_MEMORY
};

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: perfmon-analyze [options] DIR|FILE...\n"
        "       perfmon-analyze --compare [--json] [--pdf [FILE]] [--html [FILE]] [--threshold PCT]\n"
        "                       DIR_A DIR_B\n"
        "  --stats            job statistics as a text table (default output): with\n"
        "                     resource use per phase and requested vs used\n"
        "  --json             with --stats: the statistics as JSON\n"
        "  --data DIR         gnuplot data files and scripts, per metric\n"
        "  --csv FILE         one row per host and timestamp\n"
        "  --digits N|full    significant digits of the values in --data (default 6)\n"
        "                     and --csv (default 10); full = 17, round-trip exact\n"
        "  --hdf5 FILE        a group per host, a dataset per metric, aggregates\n"
        "  --by-phase         with --stats: resource use during each job phase\n"
        "  --trace FILE       Chrome trace (phases and main series; .gz compressed)\n"
        "  --pdf [FILE]       the PDF job report (default job-report-JOBID-START.pdf)\n"
        "  --html [FILE]      the job report as one self-contained, interactive HTML\n"
        "                     file (default job-report-JOBID-START.html)\n"
        "  --plots DIR        every plot as a PNG file (200 dpi, 18 cm wide), with\n"
        "                     the phase timeline where the job has phases\n"
        "  --elapsed          time axes in elapsed time, not UTC clock time\n"
        "  --layout FILE      report layout (default TEMPLATES/report.json)\n"
        "  --font FILE        TrueType font for the report (and --bold-font FILE)\n"
        "  --repair=MODE      negative rates: hold (default), interp, zero, drop\n"
        "  --align=MODE       time (common grid, default) or index (as SKA perfmon)\n"
        "  --compat=ska       reproduce SKA perfmon's numbers (docs/analysis.md)\n"
        "  --start TIME       analyse from TIME (epoch s, ISO 8601 UTC, or +DURATION)\n"
        "  --end TIME         analyse up to TIME\n"
        "  --job ID           analyse the profiles of job ID only\n"
        "  --run N|RUNID|last analyse run N of the listing (or the run with that run id,\n"
        "                     or the latest) when the inputs hold several runs\n"
        "  --strict           an unreadable input file is fatal\n"
        "  --stream           the same results in bounded memory: hosts are read\n"
        "                     again one at a time (--stats, --json, --pdf, --html, --plots,\n"
        "                     --csv, --data, --hdf5 and --trace; the report's rows\n"
        "                     go to a file in TMPDIR);\n"
        "                     chosen by itself when the in-memory analysis would need\n"
        "                     more than the memory available (--memory)\n"
        "  --no-stream        the in-memory analysis, whatever it needs\n"
        "  --memory SIZE      the memory the analysis may use (e.g. 8G, 500M; default\n"
        "                     PERFMON_MEMORY, else MemAvailable and the cgroup's limit)\n"
        "  --templates DIR    where metrics.json and rules.json are\n"
        "  --catalog FILE     the metric catalog (default DIR/metrics.json)\n"
        "  --rules FILE       efficiency rules (default DIR/rules.json)\n"
        "  --no-rules         no efficiency notes\n"
        "  --compare          job B (second input) against job A (first): exit 1 if worse\n"
        "                     on a gated figure (TEMPLATES/compare.json says which)\n"
        "  --threshold PCT    with --compare: a difference counts beyond PCT %% of the\n"
        "                     smaller of A and B (default: TEMPLATES/compare.json, 10 %%)\n"
        "  --gate NAME[,NAME] with --compare: gate these figures, metrics or phase:KIND\n"
        "  --no-gate NAME[,NAME]  with --compare: never gate these\n"
        "  -v, --verbose      also list the files not read, and why\n"
        "  -q, --quiet        no warnings and no progress line on stderr (the progress\n"
        "                     line is shown only when stderr is a terminal)\n"
        "  -h, --help         this text\n"
        "  -V, --version      the version\n"
        "exit status: 0 ok, 1 input problem promoted by --strict, or nothing to\n"
        "analyse (phase marks only, no sample in --start/--end), 2 usage or no usable\n"
        "input (also several runs or jobs, or one host sampled twice at once), 3 an\n"
        "output could not be written, 5 the outputs asked for need more memory than\n"
        "available (see --memory); with --compare: 0 B not worse, 1 B worse beyond\n"
        "the thresholds, 2 usage or unusable input, 3 output, 4 mixed: B worse on\n"
        "some gated figures and better on others\n"
        "mpirun -n N perfmon-analyze ... (when built with MPI, see --version): the ranks\n"
        "read and decode the input files, rank 0 writes the same outputs as one process;\n"
        "with --stream (given: not chosen by itself under mpirun), rank 0 analyses in\n"
        "bounded memory and the other ranks read and decode the hosts for it\n"
        "examples:\n"
        "  perfmon-analyze prof --stats --pdf report.pdf\n"
        "  perfmon-analyze --compare prof-before prof-after\n");
}

static void fmt_bytes(uint64_t b, char *buf, size_t cap)
{
    if (b >= (uint64_t)1 << 30)
        snprintf(buf, cap, "%.1f GiB", (double)b / (double)((uint64_t)1 << 30));
    else
        snprintf(buf, cap, "%.1f MiB", (double)b / (double)((uint64_t)1 << 20));
}

/* Compare the in-memory analysis's estimated peak with the budget
 * (--memory, else PERFMON_MEMORY, else what the system says): beyond it,
 * switch to --stream when it makes every output asked for (whole: some
 * output needs every series), else refuse with EXIT_MEMORY. */
static int choose_mode(const char *const *paths, size_t npaths, uint64_t memory, int whole,
                       int quiet, int verbose, int *stream)
{
    pm_mem_budget b = {UINT64_MAX, UINT64_MAX, UINT64_MAX};
    const char *env = getenv("PERFMON_MEMORY");
    if (memory)
        b.bytes = memory;
    else if (env && *env) {
        if (pm_parse_size(env, &b.bytes) != 0) {
            fprintf(stderr, "perfmon-analyze: PERFMON_MEMORY: \"%s\" is not a size (e.g. 8G)\n",
                    env);
            return EXIT_USAGE;
        }
    } else
        pm_mem_budget_read("", &b);
    if (b.bytes == UINT64_MAX && !verbose)
        return EXIT_OK;
    pm_mem_estimate est;
    (void)pm_mem_estimate_inputs(paths, npaths, &est);
    char need[32], have[32];
    fmt_bytes(est.bytes, need, sizeof need);
    if (b.bytes == UINT64_MAX)
        snprintf(have, sizeof have, "no limit known");
    else
        fmt_bytes(b.bytes, have, sizeof have);
    if (verbose)
        fprintf(stderr,
                "perfmon-analyze: note: memory: the in-memory analysis would need about %s "
                "(%llu bytes: %llu values in %zu profiles), %s%s\n",
                need, (unsigned long long)est.bytes, (unsigned long long)est.values, est.files,
                have, b.bytes == UINT64_MAX ? "" : " available");
    if (est.bytes <= b.bytes)
        return EXIT_OK;
    if (!whole) {
        *stream = 1;
        if (!quiet)
            fprintf(stderr,
                    "perfmon-analyze: the in-memory analysis would need about %s, %s "
                    "available: analysing in bounded memory (--stream); --no-stream to "
                    "override\n",
                    need, have);
        return EXIT_OK;
    }
    fprintf(stderr,
            "perfmon-analyze: the in-memory analysis would need about %s, %s available, and "
            "--compat=ska needs every host's series in memory (SKA's merge gives each host "
            "the columns of all), so --stream cannot take over: leave out --compat=ska to "
            "analyse in bounded memory, or use a machine with more memory, or give "
            "--no-stream to try anyway (--start/--end do not lower the need: every sample "
            "is read before the window is applied)\n",
            need, have);
    return EXIT_MEMORY;
}

/* The progress line: on stderr when it is a terminal and -q is not given,
 * one line rewritten in place (at most PROGRESS_HZ times a second and at
 * each change of stage, or of --stream's pass) from the library's counts (pm_progress): files
 * and MB read, hosts, metrics derived, the report's plots and pages, the
 * rate and the time left of the stage; ended with a newline by
 * progress_end once the analysis, then the report, is done. */
#define PROGRESS_HZ 10

typedef struct progress_line {
    int shown; /* a line is on the terminal, not yet ended */
    int stage; /* of the last update, -1 = none */
    double t0; /* when the analysis or the report began */
    double t_stage, t_print;
    pm_progress last[3]; /* the latest counts of each stage */
} progress_line;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress_begin(progress_line *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->stage = -1;
    pl->t0 = mono_s();
}

static void progress_print(progress_line *pl, int final)
{
    double now = mono_s(), el = now - pl->t_stage;
    const pm_progress *r = &pl->last[PM_STAGE_READ], *d = &pl->last[PM_STAGE_DERIVE],
                      *w = &pl->last[PM_STAGE_REPORT];
    char line[400], rate[96] = "";
    const double mb = 1e6;
    /* The rate and time left of the stage, once it has run a tenth of a
     * second: of MB read, hosts derived (as many as the series derived
     * make whole hosts) or plots placed. */
    double done = 0, total = 0;
    const char *unit = "";
    size_t hd = d->hosts_done;
    if (d->metrics_total && d->series_done / d->metrics_total > hd)
        hd = d->series_done / d->metrics_total;
    if (pl->stage == PM_STAGE_READ) {
        done = (double)r->bytes_done / mb;
        total = (double)r->bytes_total / mb;
        unit = "MB/s";
    } else if (pl->stage == PM_STAGE_DERIVE) {
        done = (double)hd;
        total = (double)d->hosts_total;
        unit = "hosts/s";
        if (d->passes && d->pass) {
            /* --stream: the hosts of every pass known so far */
            done += (double)(d->pass - 1) * (double)d->hosts_total;
            total *= (double)d->passes;
        }
    } else {
        done = (double)w->plots_done;
        total = (double)w->plots_total;
        unit = "plots/s";
    }
    if (!final && el >= 1.0 / PROGRESS_HZ && done > 0) {
        double v = done / el;
        int n = snprintf(rate, sizeof rate, ", %.*f %s", v < 100 ? 1 : 0, v, unit);
        if (total > done) {
            double left = (total - done) / v;
            snprintf(rate + n, sizeof rate - (size_t)n,
                     left < 60 ? ", %.0f s left" : ", %.0f min left",
                     left < 60 ? ceil(left) : ceil(left / 60));
        }
    }
    if (final && pl->stage == PM_STAGE_REPORT)
        snprintf(line, sizeof line, "report: %zu plots, %zu pages in %.1f s", w->plots_done,
                 w->pages_done, now - pl->t0);
    else if (final)
        snprintf(line, sizeof line, "%zu files (%.3g MB), %zu hosts, %zu metrics in %.1f s",
                 r->files_done, (double)r->bytes_done / mb, d->hosts_total, d->metrics_done,
                 now - pl->t0);
    else if (pl->stage == PM_STAGE_READ)
        snprintf(line, sizeof line, "reading %zu/%zu files (%.3g/%.3g MB)%s", r->files_done,
                 r->files_total, (double)r->bytes_done / mb, (double)r->bytes_total / mb, rate);
    else if (pl->stage == PM_STAGE_DERIVE && d->passes)
        snprintf(line, sizeof line, "pass %zu/%zu over the hosts: %zu/%zu hosts%s", d->pass,
                 d->passes, hd, d->hosts_total, rate);
    else if (pl->stage == PM_STAGE_DERIVE)
        snprintf(line, sizeof line, "%zu/%zu hosts, %zu/%zu metrics%s", hd, d->hosts_total,
                 d->metrics_done, d->metrics_total, rate);
    else if (w->plots_total)
        snprintf(line, sizeof line, "report: %zu/%zu plots, page %zu%s", w->plots_done,
                 w->plots_total, w->pages_done, rate);
    else
        snprintf(line, sizeof line, "report: page %zu", w->pages_done);
    /* One terminal line: cut to its width, the rest of it cleared. */
    size_t cols = 80;
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
        cols = ws.ws_col;
    fprintf(stderr, "\rperfmon-analyze: %.*s\033[K%s", (int)(cols - 18), line, final ? "\n" : "");
    fflush(stderr);
    pl->t_print = now;
    pl->shown = !final;
}

/* pm_analyze_opts.progress and pm_report_opts.progress. */
static void progress(const pm_progress *p, void *user)
{
    progress_line *pl = user;
    if (p->stage < PM_STAGE_READ || p->stage > PM_STAGE_REPORT)
        return;
    double now = mono_s();
    /* (--stream: a new pass over the hosts is a change too) */
    int changed = p->stage != pl->stage ||
                  (p->stage == PM_STAGE_DERIVE && p->pass != pl->last[PM_STAGE_DERIVE].pass);
    if (p->stage != pl->stage) {
        pl->stage = p->stage;
        pl->t_stage = now;
    }
    pl->last[p->stage] = *p;
    if (changed || now - pl->t_print >= 1.0 / PROGRESS_HZ)
        progress_print(pl, 0);
}

/* The final state of the line, and its newline. */
static void progress_end(progress_line *pl)
{
    if (pl->stage >= 0)
        progress_print(pl, 1);
    pl->stage = -1;
    pl->shown = 0;
}

typedef struct msg_ctx {
    int verbose, quiet;
    char **lines; /* "<kind><message>", printed after the error */
    size_t n;
} msg_ctx;

/* What was found when the inputs could not be analysed
 * (pm_analyze_opts.input_msg): kept, and printed after the error. */
static void input_msg(int kind, const char *msg, void *user)
{
    msg_ctx *m = user;
    (void)pm_strs_add(&m->lines, &m->n, "%c%s", '0' + kind, msg);
}

/* The lines that explain the error always, the warnings unless -q, the
 * files not read with -v. */
static void print_input_msgs(msg_ctx *m)
{
    for (size_t i = 0; i < m->n; i++) {
        int kind = m->lines[i][0] - '0';
        const char *msg = m->lines[i] + 1;
        if (kind == PM_MSG_DETAIL)
            fprintf(stderr, "perfmon-analyze:   %s\n", msg);
        else if (kind == PM_MSG_WARNING && !m->quiet)
            fprintf(stderr, "perfmon-analyze: warning: %s\n", msg);
        else if (kind == PM_MSG_IGNORED && m->verbose && !m->quiet)
            fprintf(stderr, "perfmon-analyze: note: %s\n", msg);
    }
    pm_strs_free(m->lines, m->n);
    m->lines = NULL;
    m->n = 0;
}

/* "--pdf WORD" ("--html WORD"): WORD names the report unless it is an
 * option or an input (an existing directory, or an existing file not
 * named .pdf, .html). */
static int is_report_name(const char *s, const char *ext)
{
    size_t n = strlen(s), e = strlen(ext);
    if (s[0] == '-' || n == 0)
        return 0;
    if (n > e && strcasecmp(s + n - e, ext) == 0)
        return 1;
    struct stat st;
    return stat(s, &st) != 0 && errno == ENOENT;
}

/* job-report-<job id>-<start, UTC><ext> (ext ".pdf" or ".html"), the job
 * id made safe for a file name: two local runs (job id "local") do not
 * overwrite each other. */
static void default_report_name(const pm_analysis *a, const char *ext, char *out, size_t cap)
{
    const char *job = "";
    for (size_t h = 0; h < a->nhosts && !*job; h++)
        if (a->hosts[h].prof)
            job = a->hosts[h].prof->info.job_id;
    char safe[128];
    size_t n = 0;
    for (const char *p = job; *p && n + 1 < sizeof safe; p++) {
        unsigned char ch = (unsigned char)*p;
        int ok = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                 ch == '-' || ch == '_' || ch == '.' || ch == '+';
        safe[n++] = ok ? (char)ch : '_';
    }
    safe[n] = 0;
    char when[32] = "";
    struct tm tm;
    time_t t0 = (time_t)floor(a->t_start);
    if (isfinite(a->t_start) && a->t_start >= 0 && a->t_start < 253402300800.0 &&
        gmtime_r(&t0, &tm))
        strftime(when, sizeof when, "-%Y%m%dT%H%M%SZ", &tm);
    if (n == 0 || strcmp(safe, ".") == 0 || strcmp(safe, "..") == 0)
        snprintf(out, cap, "job-report%s%s", when, ext);
    else
        snprintf(out, cap, "job-report-%s%s%s", safe, when, ext);
}

static int write_report(const pm_analysis *a, const pm_report_opts *opts, int want_pdf, int quiet,
                        progress_line *pl)
{
    pm_error err;
    pm_error_clear(&err);
    pm_report_opts r = *opts, *ro = &r;
    char name[200];
    if (want_pdf && !ro->pdf_path) {
        default_report_name(a, ".pdf", name, sizeof name);
        ro->pdf_path = name;
    }
    if (!want_pdf)
        ro->pdf_path = NULL;
    int rc = 0;
    if (ro->plots_dir && (rc = pm_plots_write(a, ro, &err)) != 0) {
        fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
        return rc;
    }
    if (ro->pdf_path) {
        char *js = pm_stats_json_string(a);
        if (!js) {
            fprintf(stderr, "perfmon-analyze: out of memory for the statistics\n");
            return PM_ENOMEM;
        }
        ro->stats_json = js;
        rc = pm_report_write(a, ro, &err);
        progress_end(pl);
        free(js);
        if (rc) {
            fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
            return rc;
        }
        if (!quiet && isatty(STDERR_FILENO))
            fprintf(stderr, "perfmon-analyze: wrote %s\n", ro->pdf_path);
    }
    return 0;
}

/* --html: the report as one HTML file (html.h); times it under -v. */
static int write_html(const pm_analysis *a, const char *path, const char *layout, const char *tdir,
                      int elapsed, int quiet, int verbose)
{
    pm_error err;
    pm_error_clear(&err);
    char name[200];
    if (!path) {
        default_report_name(a, ".html", name, sizeof name);
        path = name;
    }
    pm_html_opts ho;
    pm_html_opts_init(&ho);
    ho.path = path;
    ho.layout_path = layout;
    ho.template_dir = tdir;
    ho.elapsed = elapsed;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = pm_html_write(a, &ho, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc) {
        fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
        return rc;
    }
    if (verbose && !quiet)
        fprintf(stderr, "perfmon-analyze: note: wrote %s in %.3f s\n", path,
                (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    else if (!quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "perfmon-analyze: wrote %s\n", path);
    return 0;
}

int pm_analyze_main(int argc, char **argv)
{
    return pm_analyze_main_split(argc, argv, NULL, NULL);
}

int pm_analyze_main_split(int argc, char **argv, pm_split *split, const char *mpi)
{
    enum {
        O_STATS = 256,
        O_JSON,
        O_DATA,
        O_CSV,
        O_HDF5,
        O_REPAIR,
        O_ALIGN,
        O_COMPAT,
        O_START,
        O_END,
        O_STRICT,
        O_TEMPLATES,
        O_CATALOG,
        O_RULES,
        O_NORULES,
        O_VERSION,
        O_PDF,
        O_PLOTS,
        O_ELAPSED,
        O_LAYOUT,
        O_FONT,
        O_BOLD,
        O_BYPHASE,
        O_TRACE,
        O_COMPARE,
        O_THRESHOLD,
        O_DIGITS,
        O_JOB,
        O_RUN,
        O_GATE,
        O_NOGATE,
        O_STREAM,
        O_NOSTREAM,
        O_MEMORY,
        O_HTML
    };
    static const struct option longopts[] = {{"stats", no_argument, NULL, O_STATS},
                                             {"json", no_argument, NULL, O_JSON},
                                             {"data", required_argument, NULL, O_DATA},
                                             {"csv", required_argument, NULL, O_CSV},
                                             {"hdf5", required_argument, NULL, O_HDF5},
                                             {"repair", required_argument, NULL, O_REPAIR},
                                             {"align", required_argument, NULL, O_ALIGN},
                                             {"compat", required_argument, NULL, O_COMPAT},
                                             {"start", required_argument, NULL, O_START},
                                             {"end", required_argument, NULL, O_END},
                                             {"strict", no_argument, NULL, O_STRICT},
                                             {"templates", required_argument, NULL, O_TEMPLATES},
                                             {"catalog", required_argument, NULL, O_CATALOG},
                                             {"rules", required_argument, NULL, O_RULES},
                                             {"no-rules", no_argument, NULL, O_NORULES},
                                             {"verbose", no_argument, NULL, 'v'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, O_VERSION},
                                             {"pdf", optional_argument, NULL, O_PDF},
                                             {"html", optional_argument, NULL, O_HTML},
                                             {"plots", required_argument, NULL, O_PLOTS},
                                             {"elapsed", no_argument, NULL, O_ELAPSED},
                                             {"layout", required_argument, NULL, O_LAYOUT},
                                             {"font", required_argument, NULL, O_FONT},
                                             {"bold-font", required_argument, NULL, O_BOLD},
                                             {"by-phase", no_argument, NULL, O_BYPHASE},
                                             {"trace", required_argument, NULL, O_TRACE},
                                             {"compare", no_argument, NULL, O_COMPARE},
                                             {"threshold", required_argument, NULL, O_THRESHOLD},
                                             {"gate", required_argument, NULL, O_GATE},
                                             {"no-gate", required_argument, NULL, O_NOGATE},
                                             {"stream", no_argument, NULL, O_STREAM},
                                             {"no-stream", no_argument, NULL, O_NOSTREAM},
                                             {"memory", required_argument, NULL, O_MEMORY},
                                             {"digits", required_argument, NULL, O_DIGITS},
                                             {"job", required_argument, NULL, O_JOB},
                                             {"run", required_argument, NULL, O_RUN},
                                             {NULL, 0, NULL, 0}};
    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    int want_stats = 0, want_json = 0, quiet = 0, no_rules = 0, want_pdf = 0, compare = 0;
    int no_stream = 0, want_html = 0;
    const char *html_path = NULL;
    uint64_t memory = 0; /* --memory: 0 = not given */
    double threshold = NAN;
    /* --gate / --no-gate names (--compare): pointers into gbuf */
    static char gbuf[2][4096];
    static const char *glist[2][64];
    size_t ngl[2] = {0, 0};
    int digits = 0; /* --digits: 0 = each output's default */
    const char *data_dir = NULL, *csv = NULL, *hdf5 = NULL, *tdir = NULL, *catalog = NULL,
               *rules = NULL, *layout = NULL, *trace = NULL;
    pm_report_opts ro;
    pm_report_opts_init(&ro);
    int c;
    optind = 0; /* glibc: a full reset, also of a half-parsed option cluster */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":vqhV", longopts, NULL)) != -1) {
        switch (c) {
        case O_STATS: want_stats = 1; break;
        case O_JSON: want_json = 1; break;
        case O_DATA: data_dir = optarg; break;
        case O_CSV: csv = optarg; break;
        case O_DIGITS: {
            long d = 0;
            char *end = NULL;
            if (strcmp(optarg, "full") == 0)
                d = PM_FMT_MAX_DIGITS;
            else
                d = strtol(optarg, &end, 10);
            if ((end && (end == optarg || *end)) || d < 1 || d > PM_FMT_MAX_DIGITS) {
                fprintf(stderr, "perfmon-analyze: --digits: \"%s\" is not 1 to %d or full\n",
                        optarg, PM_FMT_MAX_DIGITS);
                return EXIT_USAGE;
            }
            digits = (int)d;
            break;
        }
        case O_HDF5: hdf5 = optarg; break;
        case O_REPAIR:
            if ((o.repair = pm_repair_parse(optarg)) < 0) {
                fprintf(stderr,
                        "perfmon-analyze: --repair: \"%s\" is not hold, interp, zero or drop\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case O_ALIGN:
            if (strcmp(optarg, "time") == 0)
                o.align = PM_ALIGN_TIME;
            else if (strcmp(optarg, "index") == 0)
                o.align = PM_ALIGN_INDEX;
            else {
                fprintf(stderr, "perfmon-analyze: --align: \"%s\" is not time or index\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case O_COMPAT:
            if (strcmp(optarg, "ska") == 0)
                o.compat_ska = 1;
            else if (strcmp(optarg, "none") != 0) {
                fprintf(stderr, "perfmon-analyze: --compat: \"%s\" is not ska or none\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case O_START:
        case O_END: {
            double v;
            int rel;
            if (pm_parse_time_bound(optarg, &v, &rel) != 0) {
                fprintf(
                    stderr,
                    "perfmon-analyze: --%s: \"%s\" is not a time (epoch seconds, YYYY-MM-DDTHH:MM:SSZ or +DURATION)\n",
                    c == O_START ? "start" : "end", optarg);
                return EXIT_USAGE;
            }
            if (c == O_START) {
                o.has_start = 1;
                o.start = v;
                o.start_rel = rel;
            } else {
                o.has_end = 1;
                o.end = v;
                o.end_rel = rel;
            }
            break;
        }
        case O_STRICT: o.strict = 1; break;
        case O_JOB: o.job = optarg; break;
        case O_RUN: o.run = optarg; break;
        case O_STREAM: o.stream = 1; break;
        case O_NOSTREAM: no_stream = 1; break;
        case O_MEMORY:
            if (pm_parse_size(optarg, &memory) != 0) {
                fprintf(stderr, "perfmon-analyze: --memory: \"%s\" is not a size (e.g. 8G, 500M)\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case O_TEMPLATES: tdir = optarg; break;
        case O_CATALOG: catalog = optarg; break;
        case O_RULES: rules = optarg; break;
        case O_NORULES: no_rules = 1; break;
        case O_PDF:
            want_pdf = 1;
            ro.pdf_path = optarg;
            /* "--pdf FILE": the next word, unless it is an option or an input. */
            if (!optarg && optind < argc && is_report_name(argv[optind], ".pdf"))
                ro.pdf_path = argv[optind++];
            break;
        case O_HTML:
            want_html = 1;
            html_path = optarg;
            if (!optarg && optind < argc && is_report_name(argv[optind], ".html"))
                html_path = argv[optind++];
            break;
        case O_PLOTS: ro.plots_dir = optarg; break;
        case O_ELAPSED: ro.elapsed = 1; break;
        case O_BYPHASE:
            o.by_phase = 1;
            want_stats = 1;
            break;
        case O_TRACE: trace = optarg; break;
        case O_COMPARE: compare = 1; break;
        case O_THRESHOLD:
            if (pm_parse_double(optarg, &threshold) != 0 || !(threshold >= 0 && threshold < 1e9)) {
                fprintf(stderr, "perfmon-analyze: --threshold: \"%s\" is not a percentage >= 0\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case O_GATE:
        case O_NOGATE: {
            int on = c == O_GATE;
            size_t used = 0;
            for (size_t i = 0; i < ngl[!on]; i++)
                used += strlen(glist[!on][i]) + 1;
            int n = pm_gate_parse_list(optarg, on, gbuf[!on] + used, sizeof gbuf[0] - used,
                                       glist[!on], ngl[!on], 64);
            if (n < 0) {
                char why[256];
                pm_gate_list_why(optarg, on, ngl[!on], 64, why, sizeof why);
                fprintf(stderr, "perfmon-analyze: --%s %s: %s\n", on ? "gate" : "no-gate", optarg,
                        why);
                return EXIT_USAGE;
            }
            ngl[!on] = (size_t)n;
            break;
        }
        case O_LAYOUT: layout = optarg; break;
        case O_FONT: ro.font_path = optarg; break;
        case O_BOLD: ro.font_bold_path = optarg; break;
        case 'v': o.verbose = 1; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return EXIT_OK;
        case 'V':
        case O_VERSION: {
            int v = pm_cli_version("perfmon-analyze");
            printf("MPI: %s\n", mpi ? mpi : "not built in (make finds no mpicc, or MPI=0)");
            return fflush(stdout) == 0 && !ferror(stdout) ? v : EXIT_OUTPUT;
        }
        default: {
            pm_error err;
            pm_error_clear(&err);
            (void)pm_cli_refused(c, argv, ":vqhV", longopts, &err);
            fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
            return EXIT_USAGE;
        }
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "perfmon-analyze: no input: give a directory of profiles or files\n");
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!compare && (!isnan(threshold) || ngl[0] || ngl[1])) {
        fprintf(stderr, "perfmon-analyze: --threshold, --gate and --no-gate need --compare\n");
        return EXIT_USAGE;
    }
    if (compare && argc - optind != 2) {
        fprintf(stderr, "perfmon-analyze: --compare takes two inputs, DIR_A and DIR_B (%d given)\n",
                argc - optind);
        return EXIT_USAGE;
    }
    if (compare) {
        /* Name the option refused, not only the ones allowed. */
        const char *no = o.by_phase     ? "--by-phase"
                         : data_dir     ? "--data"
                         : csv          ? "--csv"
                         : hdf5         ? "--hdf5"
                         : trace        ? "--trace"
                         : ro.plots_dir ? "--plots"
                         : o.stream     ? "--stream"
                                        : NULL;
        if (no) {
            fprintf(stderr,
                    "perfmon-analyze: %s does not go with --compare, which writes --stats, "
                    "--json, --pdf and --html only%s\n",
                    no, strcmp(no, "--stream") == 0 ? " (it reads both jobs whole)" : "");
            return EXIT_USAGE;
        }
    }
    if (o.stream && no_stream) {
        fprintf(stderr, "perfmon-analyze: --stream and --no-stream: give one\n");
        return EXIT_USAGE;
    }
    if (want_json)
        want_stats = 1;
    if (!want_stats && !data_dir && !csv && !hdf5 && !want_pdf && !want_html && !ro.plots_dir &&
        !trace)
        want_stats = 1;
    /* The in-memory analysis or --stream (docs/analysis.md, "When it is
     * chosen"); not under mpirun, where each rank would judge its own
     * node's memory and the ranks must agree: --stream is given there. */
    if (!o.stream && !no_stream && !compare && !(split && split->size > 1)) {
        int whole = o.compat_ska;
        int rc = choose_mode((const char *const *)argv + optind, (size_t)(argc - optind), memory,
                             whole, quiet, o.verbose, &o.stream);
        if (rc != EXIT_OK)
            return rc;
    }
    /* (--stream keeps what the report and the plots read of the series) */
    /* (--html draws the PDF's charts: it keeps what the PDF keeps) */
    o.report = (want_pdf || want_html ? 1 : 0) | (ro.plots_dir ? 2 : 0);
    char tbuf[PATH_MAX], cbuf[PATH_MAX + 16], rbuf[PATH_MAX + 16], lbuf[PATH_MAX + 16];
    pm_find_template_dir(tdir, "metrics.json", tbuf, sizeof tbuf);
    if (!catalog) {
        snprintf(cbuf, sizeof cbuf, "%s/metrics.json", tbuf);
        catalog = cbuf;
    }
    if (!rules && !no_rules) {
        snprintf(rbuf, sizeof rbuf, "%s/rules.json", tbuf);
        rules = rbuf;
    }
    if (!layout) {
        snprintf(lbuf, sizeof lbuf, "%s/report.json", tbuf);
        layout = lbuf;
    }
    ro.layout_path = layout;
    if (!tdir && !getenv("PERFMON_TEMPLATES") && access(cbuf, R_OK) != 0 && catalog == cbuf) {
        fprintf(stderr,
                "perfmon-analyze: no templates directory found (%s/metrics.json: %s): give "
                "--templates DIR or set PERFMON_TEMPLATES to the directory that holds "
                "metrics.json, rules.json and report.json\n",
                tbuf, strerror(errno));
        return EXIT_USAGE;
    }
    if (want_pdf || want_html || ro.plots_dir) {
        /* The layout is an input like the catalog and the rules: a bad one
         * is said (exit 2) before the analysis, not after it. */
        pm_layout *lay = NULL;
        pm_error lerr;
        pm_error_clear(&lerr);
        if (pm_layout_load(layout, &lay, &lerr) != 0) {
            fprintf(stderr, "perfmon-analyze: %s\n", lerr.msg);
            return EXIT_USAGE;
        }
        pm_layout_free(lay);
        if (want_html && pm_html_check_templates(tbuf, &lerr) != 0) {
            fprintf(stderr, "perfmon-analyze: %s\n", lerr.msg);
            return EXIT_USAGE;
        }
    }
    o.catalog_path = catalog;
    o.rules_path = no_rules ? NULL : rules;
    /* Under mpirun, --compare runs on rank 0 alone. */
    int rank = split && split->size > 1 ? split->rank : 0;
    if (compare && rank)
        return EXIT_OK;
    if (compare) {
        char cmpbuf[PATH_MAX + 16];
        snprintf(cmpbuf, sizeof cmpbuf, "%s/compare.json", tbuf);
        pm_compare_cli cl = {argv[optind],
                             argv[optind + 1],
                             &o,
                             &ro,
                             cmpbuf,
                             threshold,
                             want_stats,
                             want_json,
                             want_pdf,
                             quiet,
                             {glist[0], ngl[0], glist[1], ngl[1]},
                             want_html,
                             html_path,
                             tbuf};
        return pm_compare_main(&cl);
    }
    progress_line pl;
    progress_begin(&pl);
    if (!quiet && isatty(STDERR_FILENO)) {
        o.progress = progress;
        o.progress_user = &pl;
        ro.progress = progress;
        ro.progress_user = &pl;
    }
    pm_error err;
    pm_error_clear(&err);
    pm_analysis *a = NULL;
    msg_ctx mc = {o.verbose, quiet, NULL, 0};
    o.input_msg = input_msg;
    o.input_msg_user = &mc;
    if (split && split->size > 1)
        o.split = split;
    /* --stream writes --csv, --hdf5, --data and --trace host by host
     * during the analysis (--data's files and --trace's counter tracks
     * from spill files after it) */
    pm_stream_out so = {.csv_path = csv,
                        .csv_digits = digits ? digits : PM_CSV_DIGITS,
                        .hdf5_path = hdf5,
                        .data_dir = data_dir,
                        .data_digits = digits ? digits : PM_DATA_DIGITS,
                        .trace_path = trace};
    if (o.stream && (csv || hdf5 || data_dir || trace)) {
        o.host_out = pm_stream_out_host;
        o.host_out_user = &so;
    }
    int rc =
        pm_analysis_run((const char *const *)argv + optind, (size_t)(argc - optind), &o, &a, &err);
    progress_end(&pl);
    if (rank) { /* its share is with rank 0, which reports */
        pm_stream_out_free(&so);
        pm_strs_free(mc.lines, mc.n);
        if (!rc)
            return EXIT_OK;
        return rc == PM_EEMPTY                                  ? EXIT_PARTIAL
               : o.strict && rc != PM_ENOENT && rc != PM_EUSAGE ? EXIT_PARTIAL
                                                                : EXIT_USAGE;
    }
    if (rc) {
        pm_stream_out_free(&so);
        fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
        print_input_msgs(&mc);
        if (rc == PM_EEMPTY)
            return EXIT_PARTIAL;
        return o.strict && rc != PM_ENOENT && rc != PM_EUSAGE ? EXIT_PARTIAL : EXIT_USAGE;
    }
    if (!quiet) {
        for (size_t i = 0; i < a->nwarnings; i++)
            fprintf(stderr, "perfmon-analyze: warning: %s\n", a->warnings[i]);
        if (o.verbose)
            for (size_t i = 0; i < a->nignored; i++)
                fprintf(stderr, "perfmon-analyze: note: %s\n", a->ignored[i]);
        if (o.verbose && o.split)
            fprintf(stderr,
                    "perfmon-analyze: note: mpi: %d ranks; rank 0 read %zu files and received "
                    "%zu (%llu bytes) from the others; reading took %.2f s, then receiving "
                    "%.2f s\n",
                    split->size, split->files_read, split->files_received,
                    (unsigned long long)split->bytes_received, split->read_s, split->gather_s);
        if (o.verbose && o.split && split->passes)
            fprintf(stderr,
                    "perfmon-analyze: note: mpi: --stream: %zu passes over the hosts; rank 0 "
                    "received %zu hosts' profiles (%llu bytes) from the others, and its workers "
                    "waited %.2f s for them\n",
                    split->passes, split->hosts_received, (unsigned long long)split->host_bytes,
                    split->wait_s);
    }
    int status = EXIT_OK;
    if (want_stats) {
        rc = want_json ? pm_stats_json(a, stdout, &err) : pm_stats_text(a, stdout, &err);
        if (rc) {
            fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
            status = EXIT_OUTPUT;
        }
    }
    if (data_dir && (o.host_out ? pm_stream_out_data(&so, a, &err)
                                : pm_export_gnuplot_digits(
                                      a, data_dir, digits ? digits : PM_DATA_DIGITS, &err))) {
        fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
        status = EXIT_OUTPUT;
    }
    if (csv && (o.host_out ? pm_stream_out_csv(&so, &err)
                           : pm_export_csv_digits(a, csv, digits ? digits : PM_CSV_DIGITS, &err))) {
        fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
        status = EXIT_OUTPUT;
    }
    if (hdf5 && (o.host_out ? pm_stream_out_hdf5(&so, a, &err) : pm_export_hdf5(a, hdf5, &err))) {
        fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
        status = EXIT_OUTPUT;
    }
    if (trace &&
        (o.host_out ? pm_stream_out_trace(&so, a, &err) : pm_export_trace(a, trace, &err))) {
        fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
        status = EXIT_OUTPUT;
    }
    if (want_pdf || ro.plots_dir) {
        progress_begin(&pl);
        int wr = write_report(a, &ro, want_pdf, quiet, &pl);
        if (wr != 0 && status != EXIT_USAGE)
            status = wr == PM_EUSAGE ? EXIT_USAGE : EXIT_OUTPUT; /* a font named wrong */
    }
    if (want_html && write_html(a, html_path, layout, tbuf, ro.elapsed, quiet, o.verbose) != 0 &&
        status != EXIT_USAGE)
        status = EXIT_OUTPUT;
    pm_stream_out_free(&so);
    pm_analysis_free(a);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "perfmon-analyze: stdout: write failed: %s\n", strerror(errno));
        status = EXIT_OUTPUT;
    }
    return status;
}
