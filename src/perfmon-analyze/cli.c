/* perfmon-analyze's command line (the program's main only calls
 * pm_analyze_main).  Exit codes: docs/man/perfmon-analyze.1.
 *
 * pm_analyze_main_split reads as its steps: parse_args (the table OPTS,
 * one row and one handler per option), check_args (what goes together),
 * choose_mode (in memory or --stream), find_templates, then run_compare
 * or run_analysis, which runs the analysis, prints its notes
 * (print_notes) and writes every output (write_outputs; write_series
 * chooses --stream's files or the in-memory exports once).  The progress
 * line is progress.c's. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze_cli.h"
#include "perfmon/analysis.h"
#include "budget.h"
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
#include "progress.h"

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
    for (size_t h = 0; h < a->in.nhosts && !*job; h++)
        if (a->in.hosts[h].prof)
            job = a->in.hosts[h].prof->info.job_id;
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
        pm_progress_end(pl);
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

/* --- the command line: parse -> check -> run -> write -------------------- */

/* handlers return CLI_GO to go on, or the exit status to return at once */
#define CLI_GO (-1)
#define GATE_NAMES 64

/* Everything the command line says, and what follows from it (the
 * templates' paths); one per call, on its stack, so that the driver keeps
 * no state from one call to the next. */
typedef struct cli {
    pm_analyze_opts o;
    pm_report_opts ro;
    int want_stats, want_json, want_pdf, want_html, quiet, no_rules, compare, no_stream;
    int digits;      /* --digits: 0 = each output's default */
    uint64_t memory; /* --memory: 0 = not given */
    double threshold;
    const char *html_path, *data_dir, *csv, *hdf5, *tdir, *catalog, *rules, *layout, *trace;
    const char *mpi;                  /* how MPI is built in (--version) */
    char gbuf[2][4096];               /* --gate / --no-gate names (--compare), */
    const char *glist[2][GATE_NAMES]; /* pointers into gbuf */
    size_t ngl[2];
    char tbuf[PATH_MAX], cbuf[PATH_MAX + 16], rbuf[PATH_MAX + 16], lbuf[PATH_MAX + 16];
} cli;

typedef struct cli_opt cli_opt;
/* An option's handler: arg is its argument (NULL: none); an optional
 * argument may take the next word of argv at *next. */
typedef int (*cli_set)(cli *c, const cli_opt *op, const char *arg, int argc, char **argv,
                       int *next);
struct cli_opt {
    const char *name; /* the long option; NULL ends the table */
    int has_arg;      /* no_argument, required_argument, optional_argument */
    int short_name;   /* its one-letter form, or 0 */
    cli_set set;
    size_t field; /* where set_flag and set_str write: offsetof(cli, ...) */
};

static int set_flag(cli *c, const cli_opt *op, const char *arg, int argc, char **argv, int *next)
{
    (void)arg, (void)argc, (void)argv, (void)next;
    *(int *)(void *)((char *)c + op->field) = 1;
    return CLI_GO;
}

static int set_str(cli *c, const cli_opt *op, const char *arg, int argc, char **argv, int *next)
{
    (void)argc, (void)argv, (void)next;
    *(const char **)(void *)((char *)c + op->field) = arg;
    return CLI_GO;
}

static int usage_error(const char *fmt, const char *opt, const char *arg)
{
    fprintf(stderr, "perfmon-analyze: ");
    fprintf(stderr, fmt, opt, arg);
    fprintf(stderr, "\n");
    return EXIT_USAGE;
}

static int set_digits(cli *c, const cli_opt *op, const char *arg, int argc, char **argv, int *next)
{
    (void)op, (void)argc, (void)argv, (void)next;
    long d = 0;
    char *end = NULL;
    if (strcmp(arg, "full") == 0)
        d = PM_FMT_MAX_DIGITS;
    else
        d = strtol(arg, &end, 10);
    if ((end && (end == arg || *end)) || d < 1 || d > PM_FMT_MAX_DIGITS) {
        fprintf(stderr, "perfmon-analyze: --digits: \"%s\" is not 1 to %d or full\n", arg,
                PM_FMT_MAX_DIGITS);
        return EXIT_USAGE;
    }
    c->digits = (int)d;
    return CLI_GO;
}

static int set_repair(cli *c, const cli_opt *op, const char *arg, int argc, char **argv, int *next)
{
    (void)op, (void)argc, (void)argv, (void)next;
    if ((c->o.repair = pm_repair_parse(arg)) < 0)
        return usage_error("--%s: \"%s\" is not hold, interp, zero or drop", "repair", arg);
    return CLI_GO;
}

static int set_align(cli *c, const cli_opt *op, const char *arg, int argc, char **argv, int *next)
{
    (void)op, (void)argc, (void)argv, (void)next;
    if (strcmp(arg, "time") == 0)
        c->o.align = PM_ALIGN_TIME;
    else if (strcmp(arg, "index") == 0)
        c->o.align = PM_ALIGN_INDEX;
    else
        return usage_error("--%s: \"%s\" is not time or index", "align", arg);
    return CLI_GO;
}

static int set_compat(cli *c, const cli_opt *op, const char *arg, int argc, char **argv, int *next)
{
    (void)op, (void)argc, (void)argv, (void)next;
    if (strcmp(arg, "ska") == 0)
        c->o.compat_ska = 1;
    else if (strcmp(arg, "none") != 0)
        return usage_error("--%s: \"%s\" is not ska or none", "compat", arg);
    return CLI_GO;
}

/* --start and --end */
static int set_bound(cli *c, const cli_opt *op, const char *arg, int argc, char **argv, int *next)
{
    (void)argc, (void)argv, (void)next;
    double v;
    int rel;
    if (pm_parse_time_bound(arg, &v, &rel) != 0)
        return usage_error("--%s: \"%s\" is not a time (epoch seconds, YYYY-MM-DDTHH:MM:SSZ or "
                           "+DURATION)",
                           op->name, arg);
    if (strcmp(op->name, "start") == 0) {
        c->o.has_start = 1;
        c->o.start = v;
        c->o.start_rel = rel;
    } else {
        c->o.has_end = 1;
        c->o.end = v;
        c->o.end_rel = rel;
    }
    return CLI_GO;
}

static int set_memory(cli *c, const cli_opt *op, const char *arg, int argc, char **argv, int *next)
{
    (void)op, (void)argc, (void)argv, (void)next;
    if (pm_parse_size(arg, &c->memory) != 0)
        return usage_error("--%s: \"%s\" is not a size (e.g. 8G, 500M)", "memory", arg);
    return CLI_GO;
}

/* --pdf [FILE] and --html [FILE]: the next word names the report unless it
 * is an option or an input. */
static int set_report(cli *c, const cli_opt *op, const char *arg, int argc, char **argv, int *next)
{
    int pdf = strcmp(op->name, "pdf") == 0;
    if (!arg && *next < argc && is_report_name(argv[*next], pdf ? ".pdf" : ".html"))
        arg = argv[(*next)++];
    if (pdf) {
        c->want_pdf = 1;
        c->ro.pdf_path = arg;
    } else {
        c->want_html = 1;
        c->html_path = arg;
    }
    return CLI_GO;
}

static int set_by_phase(cli *c, const cli_opt *op, const char *arg, int argc, char **argv,
                        int *next)
{
    (void)op, (void)arg, (void)argc, (void)argv, (void)next;
    c->o.by_phase = 1;
    c->want_stats = 1;
    return CLI_GO;
}

static int set_threshold(cli *c, const cli_opt *op, const char *arg, int argc, char **argv,
                         int *next)
{
    (void)op, (void)argc, (void)argv, (void)next;
    if (pm_parse_double(arg, &c->threshold) != 0 || !(c->threshold >= 0 && c->threshold < 1e9))
        return usage_error("--%s: \"%s\" is not a percentage >= 0", "threshold", arg);
    return CLI_GO;
}

/* --gate and --no-gate: the names go after those already given. */
static int set_gate(cli *c, const cli_opt *op, const char *arg, int argc, char **argv, int *next)
{
    (void)argc, (void)argv, (void)next;
    int on = strcmp(op->name, "gate") == 0, k = !on;
    size_t used = 0;
    for (size_t i = 0; i < c->ngl[k]; i++)
        used += strlen(c->glist[k][i]) + 1;
    int n = pm_gate_parse_list(arg, on, c->gbuf[k] + used, sizeof c->gbuf[k] - used, c->glist[k],
                               c->ngl[k], GATE_NAMES);
    if (n < 0) {
        char why[256];
        pm_gate_list_why(arg, on, c->ngl[k], GATE_NAMES, why, sizeof why);
        fprintf(stderr, "perfmon-analyze: --%s %s: %s\n", op->name, arg, why);
        return EXIT_USAGE;
    }
    c->ngl[k] = (size_t)n;
    return CLI_GO;
}

static int show_help(cli *c, const cli_opt *op, const char *arg, int argc, char **argv, int *next)
{
    (void)c, (void)op, (void)arg, (void)argc, (void)argv, (void)next;
    usage(stdout);
    return EXIT_OK;
}

static int show_version(cli *c, const cli_opt *op, const char *arg, int argc, char **argv,
                        int *next)
{
    (void)op, (void)arg, (void)argc, (void)argv, (void)next;
    int v = pm_cli_version("perfmon-analyze");
    printf("MPI: %s\n", c->mpi ? c->mpi : "not built in (make finds no mpicc, or MPI=0)");
    return fflush(stdout) == 0 && !ferror(stdout) ? v : EXIT_OUTPUT;
}

#define FLAG(f) set_flag, offsetof(cli, f)
#define STR(f) set_str, offsetof(cli, f)

/* The options (usage above says what each does); getopt_long lists them
 * in this order where a prefix is ambiguous. */
static const cli_opt OPTS[] = {{"stats", no_argument, 0, FLAG(want_stats)},
                               {"json", no_argument, 0, FLAG(want_json)},
                               {"data", required_argument, 0, STR(data_dir)},
                               {"csv", required_argument, 0, STR(csv)},
                               {"hdf5", required_argument, 0, STR(hdf5)},
                               {"repair", required_argument, 0, set_repair, 0},
                               {"align", required_argument, 0, set_align, 0},
                               {"compat", required_argument, 0, set_compat, 0},
                               {"start", required_argument, 0, set_bound, 0},
                               {"end", required_argument, 0, set_bound, 0},
                               {"strict", no_argument, 0, FLAG(o.strict)},
                               {"templates", required_argument, 0, STR(tdir)},
                               {"catalog", required_argument, 0, STR(catalog)},
                               {"rules", required_argument, 0, STR(rules)},
                               {"no-rules", no_argument, 0, FLAG(no_rules)},
                               {"verbose", no_argument, 'v', FLAG(o.verbose)},
                               {"quiet", no_argument, 'q', FLAG(quiet)},
                               {"help", no_argument, 'h', show_help, 0},
                               {"version", no_argument, 'V', show_version, 0},
                               {"pdf", optional_argument, 0, set_report, 0},
                               {"html", optional_argument, 0, set_report, 0},
                               {"plots", required_argument, 0, STR(ro.plots_dir)},
                               {"elapsed", no_argument, 0, FLAG(ro.elapsed)},
                               {"layout", required_argument, 0, STR(layout)},
                               {"font", required_argument, 0, STR(ro.font_path)},
                               {"bold-font", required_argument, 0, STR(ro.font_bold_path)},
                               {"by-phase", no_argument, 0, set_by_phase, 0},
                               {"trace", required_argument, 0, STR(trace)},
                               {"compare", no_argument, 0, FLAG(compare)},
                               {"threshold", required_argument, 0, set_threshold, 0},
                               {"gate", required_argument, 0, set_gate, 0},
                               {"no-gate", required_argument, 0, set_gate, 0},
                               {"stream", no_argument, 0, FLAG(o.stream)},
                               {"no-stream", no_argument, 0, FLAG(no_stream)},
                               {"memory", required_argument, 0, set_memory, 0},
                               {"digits", required_argument, 0, set_digits, 0},
                               {"job", required_argument, 0, STR(o.job)},
                               {"run", required_argument, 0, STR(o.run)},
                               {NULL, 0, 0, NULL, 0}};
#define NOPTS (sizeof OPTS / sizeof OPTS[0])

/* getopt_long's view of OPTS: option i returns 256 + i (its short form
 * returns its letter). */
static void getopt_table(struct option *lo, char *shorts, size_t cap)
{
    size_t ns = 0;
    shorts[ns++] = ':';
    for (size_t i = 0; i < NOPTS; i++) {
        lo[i] =
            (struct option){OPTS[i].name, OPTS[i].has_arg, NULL, OPTS[i].name ? 256 + (int)i : 0};
        if (OPTS[i].short_name && ns + 1 < cap)
            shorts[ns++] = (char)OPTS[i].short_name;
    }
    shorts[ns] = 0;
}

static const cli_opt *find_opt(int val)
{
    if (val >= 256 && (size_t)(val - 256) < NOPTS - 1)
        return &OPTS[val - 256];
    for (size_t i = 0; i + 1 < NOPTS; i++)
        if (OPTS[i].short_name && OPTS[i].short_name == val)
            return &OPTS[i];
    return NULL;
}

/* argv -> c; returns CLI_GO, or the exit status (--help, --version, a
 * refused option or argument). */
static int parse_args(cli *c, int argc, char **argv)
{
    struct option lo[NOPTS];
    char shorts[16];
    getopt_table(lo, shorts, sizeof shorts);
    optind = 0; /* glibc: a full reset, also of a half-parsed option cluster */
    opterr = 0;
    int v;
    while ((v = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        const cli_opt *op = find_opt(v);
        if (!op) {
            pm_error err;
            pm_error_clear(&err);
            (void)pm_cli_refused(v, argv, shorts, lo, &err);
            fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
            return EXIT_USAGE;
        }
        int rc = op->set(c, op, optarg, argc, argv, &optind);
        if (rc != CLI_GO)
            return rc;
    }
    return CLI_GO;
}

/* The options that go together, and the default output; CLI_GO or
 * EXIT_USAGE. */
static int check_args(cli *c, int ninputs)
{
    if (ninputs < 1) {
        fprintf(stderr, "perfmon-analyze: no input: give a directory of profiles or files\n");
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!c->compare && (!isnan(c->threshold) || c->ngl[0] || c->ngl[1])) {
        fprintf(stderr, "perfmon-analyze: --threshold, --gate and --no-gate need --compare\n");
        return EXIT_USAGE;
    }
    if (c->compare && ninputs != 2) {
        fprintf(stderr, "perfmon-analyze: --compare takes two inputs, DIR_A and DIR_B (%d given)\n",
                ninputs);
        return EXIT_USAGE;
    }
    if (c->compare) {
        /* Name the option refused, not only the ones allowed. */
        const char *no = c->o.by_phase     ? "--by-phase"
                         : c->data_dir     ? "--data"
                         : c->csv          ? "--csv"
                         : c->hdf5         ? "--hdf5"
                         : c->trace        ? "--trace"
                         : c->ro.plots_dir ? "--plots"
                         : c->o.stream     ? "--stream"
                                           : NULL;
        if (no) {
            fprintf(stderr,
                    "perfmon-analyze: %s does not go with --compare, which writes --stats, "
                    "--json, --pdf and --html only%s\n",
                    no, strcmp(no, "--stream") == 0 ? " (it reads both jobs whole)" : "");
            return EXIT_USAGE;
        }
    }
    if (c->o.stream && c->no_stream) {
        fprintf(stderr, "perfmon-analyze: --stream and --no-stream: give one\n");
        return EXIT_USAGE;
    }
    if (c->want_json)
        c->want_stats = 1;
    if (!c->want_stats && !c->data_dir && !c->csv && !c->hdf5 && !c->want_pdf && !c->want_html &&
        !c->ro.plots_dir && !c->trace)
        c->want_stats = 1;
    return CLI_GO;
}

/* The templates directory, and from it the catalog's, the rules' and the
 * layout's paths where not given; the layout (and the HTML report's
 * templates) checked before the analysis.  CLI_GO or EXIT_USAGE. */
static int find_templates(cli *c)
{
    pm_find_template_dir(c->tdir, "metrics.json", c->tbuf, sizeof c->tbuf);
    if (!c->catalog) {
        snprintf(c->cbuf, sizeof c->cbuf, "%s/metrics.json", c->tbuf);
        c->catalog = c->cbuf;
    }
    if (!c->rules && !c->no_rules) {
        snprintf(c->rbuf, sizeof c->rbuf, "%s/rules.json", c->tbuf);
        c->rules = c->rbuf;
    }
    if (!c->layout) {
        snprintf(c->lbuf, sizeof c->lbuf, "%s/report.json", c->tbuf);
        c->layout = c->lbuf;
    }
    c->ro.layout_path = c->layout;
    if (!c->tdir && !getenv("PERFMON_TEMPLATES") && access(c->cbuf, R_OK) != 0 &&
        c->catalog == c->cbuf) {
        fprintf(stderr,
                "perfmon-analyze: no templates directory found (%s/metrics.json: %s): give "
                "--templates DIR or set PERFMON_TEMPLATES to the directory that holds "
                "metrics.json, rules.json and report.json\n",
                c->tbuf, strerror(errno));
        return EXIT_USAGE;
    }
    if (c->want_pdf || c->want_html || c->ro.plots_dir) {
        /* The layout is an input like the catalog and the rules: a bad one
         * is said (exit 2) before the analysis, not after it. */
        pm_layout *lay = NULL;
        pm_error lerr;
        pm_error_clear(&lerr);
        if (pm_layout_load(c->layout, &lay, &lerr) != 0) {
            fprintf(stderr, "perfmon-analyze: %s\n", lerr.msg);
            return EXIT_USAGE;
        }
        pm_layout_free(lay);
        if (c->want_html && pm_html_check_templates(c->tbuf, &lerr) != 0) {
            fprintf(stderr, "perfmon-analyze: %s\n", lerr.msg);
            return EXIT_USAGE;
        }
    }
    c->o.catalog_path = c->catalog;
    c->o.rules_path = c->no_rules ? NULL : c->rules;
    return CLI_GO;
}

/* --compare: both jobs analysed, compared and written (compare_cli.c). */
static int run_compare(cli *c, char **inputs)
{
    char cmpbuf[PATH_MAX + 16];
    snprintf(cmpbuf, sizeof cmpbuf, "%s/compare.json", c->tbuf);
    pm_compare_cli cl = {inputs[0],
                         inputs[1],
                         &c->o,
                         &c->ro,
                         cmpbuf,
                         c->threshold,
                         c->want_stats,
                         c->want_json,
                         c->want_pdf,
                         c->quiet,
                         {c->glist[0], c->ngl[0], c->glist[1], c->ngl[1]},
                         c->want_html,
                         c->html_path,
                         c->tbuf};
    return pm_compare_main(&cl);
}

/* The exit status of an analysis that failed with rc. */
static int failed_status(const cli *c, int rc)
{
    if (rc == PM_EEMPTY)
        return EXIT_PARTIAL;
    return c->o.strict && rc != PM_ENOENT && rc != PM_EUSAGE ? EXIT_PARTIAL : EXIT_USAGE;
}

/* The warnings, and with -v the files not read and the ranks' figures. */
static void print_notes(const cli *c, const pm_analysis *a, const pm_split *split)
{
    if (c->quiet)
        return;
    for (size_t i = 0; i < a->in.nwarnings; i++)
        fprintf(stderr, "perfmon-analyze: warning: %s\n", a->in.warnings[i]);
    if (!c->o.verbose)
        return;
    for (size_t i = 0; i < a->in.nignored; i++)
        fprintf(stderr, "perfmon-analyze: note: %s\n", a->in.ignored[i]);
    if (c->o.split)
        fprintf(stderr,
                "perfmon-analyze: note: mpi: %d ranks; rank 0 read %zu files and received "
                "%zu (%llu bytes) from the others; reading took %.2f s, then receiving "
                "%.2f s\n",
                split->size, split->files_read, split->files_received,
                (unsigned long long)split->bytes_received, split->read_s, split->gather_s);
    if (c->o.split && split->passes)
        fprintf(stderr,
                "perfmon-analyze: note: mpi: --stream: %zu passes over the hosts; rank 0 "
                "received %zu hosts' profiles (%llu bytes) from the others, and its workers "
                "waited %.2f s for them\n",
                split->passes, split->hosts_received, (unsigned long long)split->host_bytes,
                split->wait_s);
    struct rusage ru;
    if (c->o.split && getrusage(RUSAGE_SELF, &ru) == 0)
        fprintf(stderr,
                "perfmon-analyze: note: mpi: rank 0's CPU time through the analysis: %.2f s "
                "user, %.2f s system\n",
                (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6,
                (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6);
}

static int output_failed(const pm_error *err)
{
    fprintf(stderr, "perfmon-analyze: %s\n", err->msg);
    return EXIT_OUTPUT;
}

/* --data, --csv, --hdf5 and --trace: --stream wrote the hosts' parts during
 * the analysis (so), and ends them here; else from the series in memory.
 * Returns EXIT_OK or EXIT_OUTPUT (each failure said). */
static int write_series(const cli *c, const pm_analysis *a, pm_stream_out *so)
{
    pm_error err;
    pm_error_clear(&err);
    int status = EXIT_OK;
    if (c->o.host_out) {
        if (c->data_dir && pm_stream_out_data(so, a, &err))
            status = output_failed(&err);
        if (c->csv && pm_stream_out_csv(so, &err))
            status = output_failed(&err);
        if (c->hdf5 && pm_stream_out_hdf5(so, a, &err))
            status = output_failed(&err);
        if (c->trace && pm_stream_out_trace(so, a, &err))
            status = output_failed(&err);
        return status;
    }
    if (c->data_dir &&
        pm_export_gnuplot_digits(a, c->data_dir, c->digits ? c->digits : PM_DATA_DIGITS, &err))
        status = output_failed(&err);
    if (c->csv && pm_export_csv_digits(a, c->csv, c->digits ? c->digits : PM_CSV_DIGITS, &err))
        status = output_failed(&err);
    if (c->hdf5 && pm_export_hdf5(a, c->hdf5, &err))
        status = output_failed(&err);
    if (c->trace && pm_export_trace(a, c->trace, &err))
        status = output_failed(&err);
    return status;
}

/* Every output asked for, in order: the statistics, the series' files,
 * the report and the plots, the HTML report.  Returns the exit status. */
static int write_outputs(cli *c, const pm_analysis *a, pm_stream_out *so, progress_line *pl)
{
    int status = EXIT_OK;
    if (c->want_stats) {
        pm_error err;
        pm_error_clear(&err);
        if (c->want_json ? pm_stats_json(a, stdout, &err) : pm_stats_text(a, stdout, &err))
            status = output_failed(&err);
    }
    if (write_series(c, a, so) != EXIT_OK)
        status = EXIT_OUTPUT;
    if (c->want_pdf || c->ro.plots_dir) {
        pm_progress_begin(pl);
        int wr = write_report(a, &c->ro, c->want_pdf, c->quiet, pl);
        if (wr != 0 && status != EXIT_USAGE)
            status = wr == PM_EUSAGE ? EXIT_USAGE : EXIT_OUTPUT; /* a font named wrong */
    }
    if (c->want_html &&
        write_html(a, c->html_path, c->layout, c->tbuf, c->ro.elapsed, c->quiet, c->o.verbose) !=
            0 &&
        status != EXIT_USAGE)
        status = EXIT_OUTPUT;
    return status;
}

/* The analysis of inputs[0..n) and its outputs; under mpirun a rank > 0
 * only reads its share (rank 0 reports). */
static int run_analysis(cli *c, char **inputs, size_t n, pm_split *split, int rank)
{
    progress_line pl;
    pm_progress_begin(&pl);
    if (!c->quiet && isatty(STDERR_FILENO)) {
        c->o.progress = pm_progress_update;
        c->o.progress_user = &pl;
        c->ro.progress = pm_progress_update;
        c->ro.progress_user = &pl;
    }
    msg_ctx mc = {c->o.verbose, c->quiet, NULL, 0};
    c->o.input_msg = input_msg;
    c->o.input_msg_user = &mc;
    if (split && split->size > 1)
        c->o.split = split;
    /* --stream writes --csv, --hdf5, --data and --trace host by host
     * during the analysis (--data's files and --trace's counter tracks
     * from spill files after it) */
    pm_stream_out so = {.csv_path = c->csv,
                        .csv_digits = c->digits ? c->digits : PM_CSV_DIGITS,
                        .hdf5_path = c->hdf5,
                        .data_dir = c->data_dir,
                        .data_digits = c->digits ? c->digits : PM_DATA_DIGITS,
                        .trace_path = c->trace};
    if (c->o.stream && (c->csv || c->hdf5 || c->data_dir || c->trace)) {
        c->o.host_out = pm_stream_out_host;
        c->o.host_out_user = &so;
    }
    /* --stream's spill of the fold's values stays in the page cache, and
     * below the kernel's limit of dirty pages (docs/analysis.md) */
    if (c->o.stream) {
        pm_mem_budget b = {UINT64_MAX, UINT64_MAX, UINT64_MAX};
        const char *env = getenv("PERFMON_MEMORY");
        if (c->memory)
            b.bytes = c->memory;
        else if (!env || !*env || pm_parse_size(env, &b.bytes) != 0)
            pm_mem_budget_read("", &b);
        if (b.bytes != UINT64_MAX)
            c->o.spill_max = b.bytes / 8 ? b.bytes / 8 : 1;
    }
    pm_error err;
    pm_error_clear(&err);
    pm_analysis *a = NULL;
    int rc = pm_analysis_run((const char *const *)inputs, n, &c->o, &a, &err);
    pm_progress_end(&pl);
    if (rank || rc) { /* a rank > 0: its share is with rank 0, which reports */
        pm_stream_out_free(&so);
        if (rank)
            pm_strs_free(mc.lines, mc.n);
        if (!rc)
            return EXIT_OK;
        if (!rank) {
            fprintf(stderr, "perfmon-analyze: %s\n", err.msg);
            print_input_msgs(&mc);
        }
        return failed_status(c, rc);
    }
    print_notes(c, a, split);
    int status = write_outputs(c, a, &so, &pl);
    pm_stream_out_free(&so);
    pm_strs_free(mc.lines, mc.n);
    pm_analysis_free(a);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "perfmon-analyze: stdout: write failed: %s\n", strerror(errno));
        status = EXIT_OUTPUT;
    }
    return status;
}

int pm_analyze_main_split(int argc, char **argv, pm_split *split, const char *mpi)
{
    cli c;
    memset(&c, 0, sizeof c);
    pm_analyze_opts_init(&c.o);
    pm_report_opts_init(&c.ro);
    c.threshold = NAN;
    c.mpi = mpi;
    int rc = parse_args(&c, argc, argv);
    if (rc == CLI_GO)
        rc = check_args(&c, argc - optind);
    if (rc != CLI_GO)
        return rc;
    char **inputs = argv + optind;
    size_t n = (size_t)(argc - optind);
    int rank = split && split->size > 1 ? split->rank : 0;
    /* The in-memory analysis or --stream (docs/analysis.md, "When it is
     * chosen"); not under mpirun, where each rank would judge its own
     * node's memory and the ranks must agree: --stream is given there. */
    if (!c.o.stream && !c.no_stream && !c.compare && !(split && split->size > 1) &&
        (rc = choose_mode((const char *const *)inputs, n, c.memory, c.o.compat_ska, c.quiet,
                          c.o.verbose, &c.o.stream)) != EXIT_OK)
        return rc;
    /* (--stream keeps what the report and the plots read of the series;
     * --html draws the PDF's charts: it keeps what the PDF keeps, and the
     * series of each node of a job of up to PM_REPORT_SERIES_HOSTS) */
    c.o.report = (c.want_pdf || c.want_html ? PM_REPORT_DOC : 0) |
                 (c.want_html ? PM_REPORT_HTML : 0) | (c.ro.plots_dir ? PM_REPORT_PLOTS : 0);
    if ((rc = find_templates(&c)) != CLI_GO)
        return rc;
    if (c.compare) /* under mpirun, on rank 0 alone */
        return rank ? EXIT_OK : run_compare(&c, inputs);
    return run_analysis(&c, inputs, n, split, rank);
}
