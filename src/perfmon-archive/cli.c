/* perfmon-archive's command line (the program's main only calls
 * pm_archive_main).  Exit codes: docs/man/perfmon-archive.1. */
#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfmon/archive.h"
#include "perfmon/archive_add.h"
#include "perfmon/archive_changepoint.h"
#include "perfmon/archive_check.h"
#include "perfmon/archive_gate.h"
#include "perfmon/archive_plot.h"
#include "perfmon/archive_store.h"
#include "perfmon/cli.h"
#include "perfmon/compare.h"
#include "perfmon/parse.h"
#include "perfmon/templates.h"
#include "archive_cli.h"

#ifndef PM_VERSION
#define PM_VERSION "0"
#endif

enum {
    EXIT_OK = PM_EXIT_OK,
    EXIT_FOUND = PM_EXIT_FAIL,
    EXIT_USAGE = PM_EXIT_USAGE,
    EXIT_DB = PM_EXIT_OUTPUT,
    EXIT_SUSPECT = PM_EXIT_SUSPECT
};

#define PROG "perfmon-archive"
#define DB_ENV "PERFMON_ARCHIVE_DB"

static const char exit_text[] =
    "exit status: 0 ok, 1 a file could not be archived (add) or a regression was\n"
    "found (check), 2 usage error or unknown test or entry, 3 database or output error,\n"
    "6 suspect (check): worse but not confirmed, rerun the benchmark and check again\n";

static void usage_main(FILE *f)
{
    fprintf(f,
            "usage: " PROG " COMMAND [options]\n"
            "  add      --db DB --datadir DIR --archivedir DIR [--test NAME]\n"
            "           file result files into the database and move them\n"
            "  list     --db DB [TEST] [--json]      the archived tests, or a test's entries\n"
            "  history  --db DB TEST [ENTRY] [--since DATE] [--json]\n"
            "  check    --db DB TEST [ENTRY...] [--window N] [--threshold K] [--min-change PCT]\n"
            "           [--gate NAME[,NAME]] [--no-gate NAME[,NAME]] [--json]\n"
            "           exit 1 when the latest run of a gated entry is worse than its history,\n"
            "           6 when it is suspect (rerun the benchmark and check again)\n"
            "  plot     --db DB TEST ENTRY -o FILE.png|FILE.pdf|FILE.svg\n"
            "DB is an SQLite file or a postgresql:// URL (default $" DB_ENV ").\n"
            "'" PROG " COMMAND --help' describes each command; " PROG
            " -V (--version) the version.\n"
            "%s"
            "examples:\n"
            "  " PROG " add --db runs.sqlite --datadir results --archivedir done\n"
            "  " PROG " check --db runs.sqlite nightly\n",
            exit_text);
}

typedef struct common {
    const char *db;
    int json;
    int verbose;
    pm_check_opts check;
    const char *out;
    const char *since;
    int min_change_set;    /* --min-change given: overrides the table */
    const char *templates; /* --templates DIR */
    char gbuf[2][4096];    /* --gate / --no-gate names */
    const char *glist[2][64];
    size_t ngl[2];
} common;

enum {
    O_DB = 256,
    O_JSON,
    O_SINCE,
    O_WINDOW,
    O_THRESHOLD,
    O_MINCHANGE,
    O_MINHIST,
    O_DATADIR,
    O_ARCHIVEDIR,
    O_TEST,
    O_KEEPFAILED,
    O_VERSION,
    O_GATE,
    O_NOGATE,
    O_TEMPLATES
};

static int parse_size(const char *s, size_t lo, size_t hi, size_t *out)
{
    uint64_t v;
    if (pm_parse_u64(s, &v) != 0 || v < lo || v > hi)
        return -1;
    *out = (size_t)v;
    return 0;
}

/* Options shared by the commands; returns -1 when opt is not one of them,
 * EXIT_USAGE on a bad value, 0 when taken. */
static int common_opt(int opt, const char *arg, common *c)
{
    double d;
    switch (opt) {
    case O_DB: c->db = arg; return 0;
    case O_JSON: c->json = 1; return 0;
    case 'v': c->verbose = 1; return 0;
    case 'o': c->out = arg; return 0;
    case O_SINCE: c->since = arg; return 0;
    case O_WINDOW:
        if (parse_size(arg, 1, 4096, &c->check.window) == 0)
            return 0;
        fprintf(stderr, PROG ": --window %s: not a whole number from 1 to 4096\n", arg);
        return EXIT_USAGE;
    case O_MINHIST:
        if (parse_size(arg, 1, 4096, &c->check.min_history) == 0)
            return 0;
        fprintf(stderr, PROG ": --min-history %s: not a whole number from 1 to 4096\n", arg);
        return EXIT_USAGE;
    case O_THRESHOLD:
        if (pm_parse_double(arg, &d) == 0 && d >= 0) {
            c->check.threshold = d;
            return 0;
        }
        fprintf(stderr, PROG ": --threshold %s: not a number >= 0\n", arg);
        return EXIT_USAGE;
    case O_MINCHANGE: {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", arg);
        size_t l = strlen(buf);
        if (l && buf[l - 1] == '%')
            buf[l - 1] = 0;
        if (pm_parse_double(buf, &d) == 0 && d >= 0) {
            c->check.min_change = d / 100;
            c->min_change_set = 1;
            return 0;
        }
        fprintf(stderr, PROG ": --min-change %s: not a percentage >= 0\n", arg);
        return EXIT_USAGE;
    }
    case O_TEMPLATES: c->templates = arg; return 0;
    case O_GATE:
    case O_NOGATE: {
        int on = opt == O_GATE;
        size_t used = 0;
        for (size_t i = 0; i < c->ngl[!on]; i++)
            used += strlen(c->glist[!on][i]) + 1;
        int n = pm_gate_parse_list(arg, on, c->gbuf[!on] + used, sizeof c->gbuf[0] - used,
                                   c->glist[!on], c->ngl[!on], 64);
        if (n >= 0) {
            c->ngl[!on] = (size_t)n;
            return 0;
        }
        char why[256];
        pm_gate_list_why(arg, on, c->ngl[!on], 64, why, sizeof why);
        fprintf(stderr, PROG ": --%s %s: %s\n", on ? "gate" : "no-gate", arg, why);
        return EXIT_USAGE;
    }
    default: return -1;
    }
}

/* Parse argv of one command with its long options; positional arguments
 * are left in argv[optind..].  Returns -1 to go on, or an exit status. */
static int parse_opts(int argc, char **argv, const char *shortopts, const struct option *lo,
                      common *c, void (*help)(FILE *), int (*extra)(int, const char *, void *),
                      void *user)
{
    optind = 0; /* glibc: a full reset (1 could resume inside a stale cluster) */
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
        if (opt == 'h') {
            help(stdout);
            return EXIT_OK;
        }
        if (opt == '?' || opt == ':') {
            pm_error err;
            pm_error_clear(&err);
            (void)pm_cli_refused(opt, argv, shortopts, lo, &err);
            fprintf(stderr, PROG " %s: %s\n", argv[0], err.msg);
            return EXIT_USAGE;
        }
        int rc = common_opt(opt, optarg, c);
        if (rc == -1 && extra)
            rc = extra(opt, optarg, user);
        if (rc > 0)
            return rc;
    }
    if (!c->db)
        c->db = getenv(DB_ENV);
    if (!c->db || !*c->db) {
        fprintf(stderr, PROG " %s: no database: give --db DB or set " DB_ENV "\n", argv[0]);
        return EXIT_USAGE;
    }
    return -1;
}

/* Flush standard output; a failure (a full disk) is an error said once. */
static int flush_out(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return EXIT_OK;
    fprintf(stderr, PROG ": standard output: write failed: %s\n", strerror(errno));
    return EXIT_DB;
}

/* Open the store; must_exist (every command but add): an SQLite file that
 * does not exist is a usage error, and nothing is created (a mistyped
 * --db must not leave an empty archive behind). */
static int open_store(const common *c, pm_store **s, int must_exist)
{
    pm_error err;
    pm_error_clear(&err);
    struct stat st;
    if (must_exist && !strstr(c->db, "://") && stat(c->db, &st) != 0) {
        fprintf(stderr, PROG ": %s: no such archive (%s); 'add' creates one\n", c->db,
                strerror(errno));
        return EXIT_USAGE;
    }
    if (pm_store_open(c->db, s, &err) != 0) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return err.code == PM_EUSAGE ? EXIT_USAGE : EXIT_DB;
    }
    return 0;
}

/* ---- add ------------------------------------------------------------------ */

static void help_add(FILE *f)
{
    fprintf(f,
            "usage: " PROG " add --db DB --datadir DIR --archivedir DIR [--test NAME]\n"
            "Stores every result file of DIR (TensorFlow TestResults JSON or\n"
            "perfmon-analyze --stats --json output), oldest first, one transaction per\n"
            "file, and moves it into the archive directory.  Files locked by another\n"
            "archiver are skipped.  A file that cannot be read, parsed or stored is\n"
            "reported (\"cannot process FILE: reason\"); one whose content is at fault\n"
            "goes to ARCHIVEDIR/failed/, one that met a database error stays for the\n"
            "next run.\n"
            "  --db DB            SQLite file or postgresql:// URL (default $" DB_ENV ")\n"
            "  --datadir DIR      where result files land\n"
            "  --archivedir DIR   where processed files go (must exist)\n"
            "  --test NAME        test name for perfmon statistics (default: the job id)\n"
            "  --keep-failed      leave bad files in DIR instead of ARCHIVEDIR/failed/\n"
            "  -v, --verbose      one line per file archived or skipped\n"
            "  -h, --help         this text\n"
            "%s%s",
            exit_text,
            "example:\n  " PROG " add --db runs.sqlite --datadir results --archivedir done\n");
}

typedef struct add_args {
    pm_arch_add_opts o;
} add_args;

static int add_extra(int opt, const char *arg, void *user)
{
    add_args *a = user;
    switch (opt) {
    case O_DATADIR: a->o.datadir = arg; return 0;
    case O_ARCHIVEDIR: a->o.archivedir = arg; return 0;
    case O_TEST:
        if (pm_arch_name_ok(arg) != 0) {
            fprintf(stderr, PROG " add: --test: the name is empty or longer than %d bytes\n",
                    PM_ARCH_NAME_MAX);
            return EXIT_USAGE;
        }
        a->o.test = arg;
        return 0;
    case O_KEEPFAILED: a->o.keep_failed = 1; return 0;
    default: return -1;
    }
}

static void add_notice(int kind, const char *path, const char *msg, void *user)
{
    const common *c = user;
    (void)path;
    if (kind == PM_NOTICE_FAILED)
        fprintf(stderr, PROG ": %s\n", msg);
    else if (c->verbose && kind == PM_NOTICE_SKIPPED)
        fprintf(stderr, PROG ": skipped %s: %s\n", path, msg);
    else if (c->verbose)
        fprintf(stderr, PROG ": %s\n", msg);
}

static int cmd_add(int argc, char **argv, common *c)
{
    static const struct option lo[] = {{"db", required_argument, NULL, O_DB},
                                       {"datadir", required_argument, NULL, O_DATADIR},
                                       {"archivedir", required_argument, NULL, O_ARCHIVEDIR},
                                       {"test", required_argument, NULL, O_TEST},
                                       {"keep-failed", no_argument, NULL, O_KEEPFAILED},
                                       {"verbose", no_argument, NULL, 'v'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    add_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_opts(argc, argv, ":vh", lo, c, help_add, add_extra, &a);
    if (rc >= 0)
        return rc;
    if (!a.o.datadir || !a.o.archivedir || optind != argc) {
        fprintf(stderr, PROG " add: %s\n",
                optind != argc ? "unexpected argument" : "--datadir and --archivedir are required");
        help_add(stderr);
        return EXIT_USAGE;
    }
    pm_store *s = NULL;
    if ((rc = open_store(c, &s, 0)) != 0)
        return rc;
    pm_arch_add_report rep;
    pm_error err;
    pm_error_clear(&err);
    rc = pm_arch_add(s, &a.o, &rep, add_notice, c, &err);
    pm_store_close(s);
    if (rc) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return rc == PM_EUSAGE ? EXIT_USAGE : EXIT_DB;
    }
    printf("archived %zu files (%zu entries), %zu already stored, %zu skipped, %zu failed\n",
           rep.stored, rep.entries, rep.already, rep.skipped, rep.failed);
    if ((rc = flush_out()) != 0)
        return rc;
    return rep.failed ? EXIT_FOUND : EXIT_OK;
}

/* ---- list ----------------------------------------------------------------- */

static void help_list(FILE *f)
{
    fprintf(f,
            "usage: " PROG " list --db DB [TEST] [--json]\n"
            "Every archived test: runs, distinct entries, first and latest start;\n"
            "with TEST, the names of its entries.\n"
            "%s%s",
            exit_text, "example:\n  " PROG " list --db runs.sqlite nightly\n");
}

/* Print a JSON document (consumed) and a newline; 0 or EXIT_DB. */
static int print_json(cJSON *root)
{
    char *s = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!s) {
        fprintf(stderr, PROG ": out of memory\n");
        return EXIT_DB;
    }
    fputs(s, stdout);
    putchar('\n');
    free(s);
    return flush_out();
}

/* list TEST: the entry names of one test (closes s). */
static int list_entries(const common *c, pm_store *s, const char *test)
{
    char **names = NULL;
    size_t n = 0;
    pm_error err;
    pm_error_clear(&err);
    int rc = pm_store_entries(s, test, &names, &n, &err);
    pm_store_close(s);
    if (rc) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return EXIT_DB;
    }
    if (n == 0) {
        fprintf(stderr, PROG ": no entries of test \"%s\" in the archive\n", test);
        return EXIT_USAGE;
    }
    if (c->json) {
        cJSON *root = cJSON_CreateArray();
        for (size_t i = 0; root && i < n; i++)
            cJSON_AddItemToArray(root, cJSON_CreateString(names[i]));
        pm_store_names_free(names, n);
        return print_json(root);
    }
    for (size_t i = 0; i < n; i++)
        printf("%s\n", names[i]);
    pm_store_names_free(names, n);
    return flush_out();
}

static int cmd_list(int argc, char **argv, common *c)
{
    static const struct option lo[] = {{"db", required_argument, NULL, O_DB},
                                       {"json", no_argument, NULL, O_JSON},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    int rc = parse_opts(argc, argv, ":h", lo, c, help_list, NULL, NULL);
    if (rc >= 0)
        return rc;
    if (argc - optind > 1) {
        fprintf(stderr, PROG " list: unexpected argument %s\n", argv[optind + 1]);
        return EXIT_USAGE;
    }
    pm_store *s = NULL;
    if ((rc = open_store(c, &s, 1)) != 0)
        return rc;
    if (optind < argc)
        return list_entries(c, s, argv[optind]);
    pm_store_test *t = NULL;
    size_t n = 0;
    pm_error err;
    pm_error_clear(&err);
    rc = pm_store_tests(s, &t, &n, &err);
    pm_store_close(s);
    if (rc) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return EXIT_DB;
    }
    char a[40], b[40];
    if (c->json) {
        cJSON *root = cJSON_CreateArray();
        for (size_t i = 0; root && i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddItemToArray(root, o);
            pm_arch_format_time(t[i].first_us, a, sizeof a);
            pm_arch_format_time(t[i].last_us, b, sizeof b);
            cJSON_AddStringToObject(o, "test", t[i].test);
            cJSON_AddNumberToObject(o, "runs", (double)t[i].runs);
            cJSON_AddNumberToObject(o, "entries", (double)t[i].entries);
            cJSON_AddStringToObject(o, "first", a);
            cJSON_AddStringToObject(o, "latest", b);
        }
        pm_store_tests_free(t, n);
        return print_json(root);
    }
    printf("%-40s %6s %7s  %-20s  %s\n", "test", "runs", "entries", "first", "latest");
    for (size_t i = 0; i < n; i++) {
        pm_arch_format_time(t[i].first_us, a, sizeof a);
        pm_arch_format_time(t[i].last_us, b, sizeof b);
        printf("%-40s %6zu %7zu  %-20s  %s\n", t[i].test, t[i].runs, t[i].entries, a, b);
    }
    pm_store_tests_free(t, n);
    return flush_out();
}

/* ---- history -------------------------------------------------------------- */

static void help_history(FILE *f)
{
    fprintf(f,
            "usage: " PROG " history --db DB TEST [ENTRY] [--since DATE] [--json]\n"
            "The timings of TEST (of one ENTRY), oldest first: start, entry, timing;\n"
            "then a 'change point' line where an entry's level changed (a windowed rank\n"
            "test: the step, the medians and the runs on each side).\n"
            "  --since DATE   from DATE: seconds since the epoch, YYYY-MM-DD or\n"
            "                 YYYY-MM-DDTHH:MM:SS[Z] (UTC)\n"
            "  --json         an array of {start, start_us, entry, timing[, change_point:\n"
            "                 {step, median_before, median_after, runs_before, runs_after, z}]}\n"
            "%s%s",
            exit_text,
            "example:\n  " PROG
            " history --db runs.sqlite nightly wall_time_s --since 2026-01-01\n");
}

static void entry_opts(const common *c, const pm_compare_cfg *cfg, const char *entry,
                       pm_check_opts *o, int *gated);

static int by_first(const void *a, const void *b, void *user)
{
    const size_t *first = user;
    size_t i = first[*(const size_t *)a], j = first[*(const size_t *)b];
    return (i > j) - (i < j);
}

static int by_entry(const void *a, const void *b, void *user)
{
    const pm_store_point *p = user;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = strcmp(p[i].entry, p[j].entry);
    return c ? c : (i > j) - (i < j);
}

/* The indexes of p[0..n) grouped by entry (by name, each entry's points in
 * their start order): one sort, so that a test of many entries and runs
 * costs n log n, not entries x n.  NULL when out of memory. */
static size_t *group_by_entry(const pm_store_point *p, size_t n)
{
    size_t *ord = malloc((n ? n : 1) * sizeof *ord);
    if (!ord)
        return NULL;
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    qsort_r(ord, n, sizeof *ord, by_entry, (void *)(uintptr_t)p);
    return ord;
}

/* The table of figure semantics, or NULL without a word (history: the
 * change points' smallest step then stays 5 %). */
static pm_compare_cfg *load_table_quiet(const common *c)
{
    char dir[4096], path[4200];
    pm_find_template_dir(c->templates, "compare.json", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/compare.json", dir);
    pm_compare_cfg *cfg = NULL;
    pm_error err;
    pm_error_clear(&err);
    return pm_compare_cfg_load(path, &cfg, &err) == 0 ? cfg : NULL;
}

/* The history of test (of entry, when not NULL); allow_empty: an unknown
 * test is no error (check: a new pipeline's baseline). */
static int load_history(const common *c, const char *test, const char *entry, int allow_empty,
                        pm_store_point **p, size_t *n)
{
    int64_t since = INT64_MIN;
    if (c->since && pm_arch_parse_date(c->since, &since) != 0) {
        fprintf(stderr, PROG ": --since %s: not a date (YYYY-MM-DD[THH:MM:SS]) or epoch seconds\n",
                c->since);
        return EXIT_USAGE;
    }
    pm_store *s = NULL;
    int rc = open_store(c, &s, 1);
    if (rc)
        return rc;
    pm_error err;
    pm_error_clear(&err);
    rc = pm_store_history(s, test, entry, since, p, n, &err);
    pm_store_close(s);
    if (rc) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return EXIT_DB;
    }
    if (*n == 0 && !c->since && !allow_empty) {
        if (entry)
            fprintf(stderr, PROG ": no timings of entry \"%s\" of test \"%s\"\n", entry, test);
        else
            fprintf(stderr, PROG ": no test \"%s\" in the archive\n", test);
        return EXIT_USAGE;
    }
    return 0;
}

static int cmd_history(int argc, char **argv, common *c)
{
    static const struct option lo[] = {{"db", required_argument, NULL, O_DB},
                                       {"json", no_argument, NULL, O_JSON},
                                       {"since", required_argument, NULL, O_SINCE},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    int rc = parse_opts(argc, argv, ":h", lo, c, help_history, NULL, NULL);
    if (rc >= 0)
        return rc;
    int npos = argc - optind;
    if (npos < 1 || npos > 2) {
        fprintf(stderr, PROG " history: give TEST and optionally ENTRY\n");
        return EXIT_USAGE;
    }
    const char *test = argv[optind], *entry = npos == 2 ? argv[optind + 1] : NULL;
    pm_store_point *p = NULL;
    size_t n = 0;
    if ((rc = load_history(c, test, entry, 0, &p, &n)) != 0)
        return rc;
    /* Change points, per entry: cp[i] is set on the point that starts a
     * new level. */
    const pm_cp **cpat = calloc(n ? n : 1, sizeof *cpat);
    double *v = malloc((n ? n : 1) * sizeof *v);
    size_t *idx = malloc((n ? n : 1) * sizeof *idx), *ord = group_by_entry(p, n);
    pm_cp *all = NULL;
    size_t nall = 0;
    pm_compare_cfg *cfg = load_table_quiet(c);
    int bad = !cpat || !v || !idx || !ord;
    for (size_t g = 0; !bad && g < n;) {
        const char *name = p[ord[g]].entry;
        size_t m = 0;
        for (; g < n && strcmp(p[ord[g]].entry, name) == 0; g++) {
            v[m] = p[ord[g]].timing;
            idx[m++] = ord[g];
        }
        pm_cp_opts co;
        pm_cp_opts_init(&co);
        pm_check_opts o;
        int gated;
        if (cfg) {
            entry_opts(c, cfg, name, &o, &gated);
            if (o.min_change > 0)
                co.min_step = o.min_change;
        }
        pm_cp *cp = NULL;
        size_t ncp = 0;
        pm_error err;
        pm_error_clear(&err);
        if (pm_cp_find(v, m, &co, &cp, &ncp, &err) != 0)
            continue; /* a non-finite timing: no change points for it */
        pm_cp *grown = ncp ? realloc(all, (nall + ncp) * sizeof *all) : all;
        if (ncp && !grown) {
            free(cp);
            bad = 1;
            break;
        }
        all = grown;
        for (size_t k = 0; k < ncp; k++) {
            all[nall] = cp[k];
            all[nall].at = idx[cp[k].at]; /* the index into p */
            nall++;
        }
        free(cp);
    }
    free(ord);
    pm_compare_cfg_free(cfg);
    free(v);
    free(idx);
    if (bad) {
        free(cpat);
        free(all);
        pm_store_points_free(p, n);
        fprintf(stderr, PROG ": out of memory\n");
        return EXIT_DB;
    }
    for (size_t k = 0; k < nall; k++)
        cpat[all[k].at] = &all[k];
    char when[40];
    if (c->json) {
        cJSON *root = cJSON_CreateArray();
        for (size_t i = 0; root && i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddItemToArray(root, o);
            pm_arch_format_time(p[i].start_us, when, sizeof when);
            cJSON_AddStringToObject(o, "start", when);
            cJSON_AddNumberToObject(o, "start_us", (double)p[i].start_us);
            cJSON_AddStringToObject(o, "entry", p[i].entry);
            cJSON_AddNumberToObject(o, "timing", p[i].timing);
            if (cpat[i]) {
                cJSON *cp = cJSON_AddObjectToObject(o, "change_point");
                if (cp) {
                    cJSON_AddNumberToObject(cp, "step", cpat[i]->step);
                    cJSON_AddNumberToObject(cp, "median_before", cpat[i]->median_before);
                    cJSON_AddNumberToObject(cp, "median_after", cpat[i]->median_after);
                    cJSON_AddNumberToObject(cp, "runs_before", (double)cpat[i]->before);
                    cJSON_AddNumberToObject(cp, "runs_after", (double)cpat[i]->after);
                    cJSON_AddNumberToObject(cp, "z", cpat[i]->z);
                }
            }
        }
        free(cpat);
        free(all);
        pm_store_points_free(p, n);
        return print_json(root);
    }
    for (size_t i = 0; i < n; i++) {
        pm_arch_format_time(p[i].start_us, when, sizeof when);
        printf("%s  %s  %.9g\n", when, p[i].entry, p[i].timing);
    }
    /* The change points after the points, so that a script reading the
     * three columns can stop at the first line that is not one. */
    for (size_t i = 0; i < n; i++) {
        if (!cpat[i])
            continue;
        pm_arch_format_time(p[i].start_us, when, sizeof when);
        printf("change point %s  %s: %+.1f%%, median %.6g -> %.6g (%zu runs before, %zu from "
               "it on; rank z %.1f)\n",
               when, p[i].entry, cpat[i]->step * 100, cpat[i]->median_before, cpat[i]->median_after,
               cpat[i]->before, cpat[i]->after, cpat[i]->z);
    }
    free(cpat);
    free(all);
    pm_store_points_free(p, n);
    return flush_out();
}

/* ---- check ---------------------------------------------------------------- */

#define CHECK_OPTS                                                                         \
    "  --window N        previous runs compared with (default 10)\n"                       \
    "  --threshold K     robust z-score beyond which it is worse (default 3)\n"            \
    "  --min-change PCT  smallest change that counts, in percent (default: the table's,\n" \
    "                    5 for TensorFlow timings)\n"                                      \
    "  --min-history N   fewer previous runs: baseline, no verdict (default 4: the\n"      \
    "                    5th run archived is the first judged)\n"                          \
    "  --templates DIR   where compare.json, the table of figure semantics, is\n"

static void help_check(FILE *f)
{
    fprintf(f,
            "usage: " PROG " check --db DB TEST [ENTRY...] [options]\n"
            "Compares each entry of the latest run of TEST (or the ENTRYs named) with\n"
            "its previous N runs: the latest value x, their median m and median\n"
            "absolute deviation MAD.  Beyond its noise is a change in the entry's worse\n"
            "direction with |x - m| / (1.4826 MAD) above the threshold, |x - m| / |m|\n"
            "at least the minimum change and |x - m| above the table's absolute minimum.\n"
            "Directions and gating come from TEMPLATES/compare.json (shared with\n"
            "perfmon-analyze --compare): TensorFlow timings (lower is better) are gated,\n"
            "perfmon job figures are informational unless the table says gate, the\n"
            "sampler's own figures never gate.\n"
            "The entries are weighed together: the lower median of their changes (the\n"
            "whole test) beyond its own noise and its 20 or more earlier ones fails at once.\n"
            "One entry beyond its noise while the test is flat is SUSPECT (exit 6) unless\n"
            "it is beyond anything in the test's history; the next run (or a rerun of the\n"
            "benchmark, archived) confirms it: an entry's last three runs beyond 0.27\n"
            "of the threshold, or its last two beyond it where hits are rare (the whole\n"
            "test's: half of it), fail.  An entry beyond 0.27 of it and 60 %% of the\n"
            "minimum change is SUSPECT too.\n" CHECK_OPTS
            "  --gate NAME[,NAME]     gate these entries too\n"
            "  --no-gate NAME[,NAME]  never gate these entries\n"
            "  --json            the verdicts as JSON: {test, checked, regressions, suspects,\n"
            "                    baseline, whole_test, entries: [{entry, verdict, gated,\n"
            "                    better, previous_runs, latest, median, mad, z, change, why,\n"
            "                    previous_beyond}]}\n"
            "%s%s",
            exit_text, "example:\n  " PROG " check --db runs.sqlite nightly --window 10 --json\n");
}

static const struct option check_lo[] = {{"db", required_argument, NULL, O_DB},
                                         {"json", no_argument, NULL, O_JSON},
                                         {"window", required_argument, NULL, O_WINDOW},
                                         {"threshold", required_argument, NULL, O_THRESHOLD},
                                         {"min-change", required_argument, NULL, O_MINCHANGE},
                                         {"min-history", required_argument, NULL, O_MINHIST},
                                         {"gate", required_argument, NULL, O_GATE},
                                         {"no-gate", required_argument, NULL, O_NOGATE},
                                         {"templates", required_argument, NULL, O_TEMPLATES},
                                         {"output", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};

/* The table of figure semantics (templates/compare.json); NULL after
 * saying why. */
static pm_compare_cfg *load_table(const common *c)
{
    char dir[4096], path[4200];
    pm_find_template_dir(c->templates, "compare.json", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/compare.json", dir);
    pm_compare_cfg *cfg = NULL;
    pm_error err;
    pm_error_clear(&err);
    if (pm_compare_cfg_load(path, &cfg, &err) != 0) {
        fprintf(stderr, PROG ": the table of figure semantics: %s\n", err.msg);
        return NULL;
    }
    return cfg;
}

/* The check options of one entry: its direction and minimum effect from
 * the table (the command line's --min-change wins); *gated its gating. */
static void entry_opts(const common *c, const pm_compare_cfg *cfg, const char *entry,
                       pm_check_opts *o, int *gated)
{
    pm_compare_rule rule;
    pm_compare_cfg_entry(cfg, entry, &rule);
    *o = c->check;
    o->better = rule.better;
    o->min_abs = rule.min_abs;
    if (!c->min_change_set && isfinite(rule.threshold_pct))
        o->min_change = rule.threshold_pct / 100;
    pm_gate_names g = {c->glist[0], c->ngl[0], c->glist[1], c->ngl[1]};
    *gated = pm_gate_decide(&g, entry, rule.better, rule.gate);
}

static int is_named(const char *entry, char **names, int nnames)
{
    if (nnames == 0)
        return 1;
    for (int i = 0; i < nnames; i++)
        if (strcmp(names[i], entry) == 0)
            return 1;
    return 0;
}

static void fmt_z(double z, char *buf, size_t size)
{
    if (isinf(z))
        snprintf(buf, size, "%s", z > 0 ? "inf" : "-inf");
    else
        snprintf(buf, size, "%.1f", z);
}

static void print_verdict(const pm_gate_entry *x, const char *entry, const pm_gate_test *t)
{
    const pm_check_result *r = &x->r;
    const pm_check_opts *o = &x->o;
    if (r->verdict == PM_CHECK_SHORT) {
        /* runs archived, the latest included, of the runs a verdict needs */
        printf("baseline    %s: %zu of %zu runs, no verdict yet\n", entry, r->n + 1,
               o->min_history + 1);
        return;
    }
    char z[32];
    fmt_z(r->z, z, sizeof z);
    const char *v = !x->gated                          ? "info"
                    : x->verdict == PM_GATE_REGRESSION ? "REGRESSION"
                    : x->verdict == PM_GATE_SUSPECT    ? "SUSPECT"
                                                       : "ok";
    printf("%-10s  %s: latest %.6g vs median %.6g of %zu runs (%+.1f%%, %s robust sd, %s is "
           "better)",
           v, entry, r->latest, r->median, r->n, r->change * 100, z, pm_better_name(o->better));
    if (x->gated && x->why != PM_GATE_WHY_NONE) {
        printf("; %s", pm_gate_why_text(x->why));
        if (x->why == PM_GATE_WHY_WITHIN || x->why == PM_GATE_WHY_TAIL)
            printf(" (largest earlier change %+.1f%% in %zu entry runs)", t->entry_tail * 100,
                   t->entry_tail_n);
        if (x->verdict == PM_GATE_SUSPECT)
            printf(": rerun to confirm");
    }
    printf("\n");
}

/* The whole-test line: when two or more gated entries were weighed. */
static void print_test(const char *test, const pm_gate_test *t)
{
    if (t->verdict == PM_GATE_SHORT)
        return;
    char z[32];
    fmt_z(t->z, z, sizeof z);
    const char *v = t->verdict == PM_GATE_REGRESSION ? "REGRESSION"
                    : t->verdict == PM_GATE_SUSPECT  ? "SUSPECT"
                                                     : "ok";
    printf("%-10s  %s (whole test): lower median of %zu entries' changes %+.1f%% vs %+.1f%% "
           "over %zu runs (%s robust sd",
           v, test, t->entries, t->change * 100, t->median * 100 - 100, t->n, z);
    if (isfinite(t->tail))
        printf(", largest earlier %+.1f%%", t->tail * 100);
    printf(")");
    if (t->why != PM_GATE_WHY_NONE)
        printf("; %s%s", pm_gate_why_text(t->why),
               t->verdict == PM_GATE_SUSPECT ? ": rerun to confirm" : "");
    printf("\n");
}

static void add_num(cJSON *obj, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(obj, key, v);
    else
        cJSON_AddNullToObject(obj, key);
}

/* One entry's verdict as a JSON object appended to arr (unknown figures
 * and infinite z-scores are null). */
static void verdict_json(cJSON *arr, const char *entry, const pm_gate_entry *x)
{
    const pm_check_result *r = &x->r;
    cJSON *obj = cJSON_CreateObject();
    if (!obj)
        return;
    cJSON_AddItemToArray(arr, obj);
    cJSON_AddStringToObject(obj, "entry", entry);
    cJSON_AddStringToObject(obj, "verdict",
                            !x->gated && r->verdict != PM_CHECK_SHORT
                                ? "informational"
                                : pm_gate_verdict_name(x->gated ? x->verdict : PM_GATE_SHORT));
    cJSON_AddBoolToObject(obj, "gated", x->gated);
    cJSON_AddStringToObject(obj, "better", pm_better_name(x->o.better));
    cJSON_AddNumberToObject(obj, "previous_runs", (double)r->n);
    add_num(obj, "latest", r->latest);
    add_num(obj, "median", r->median);
    add_num(obj, "mad", r->mad);
    add_num(obj, "z", r->z);
    add_num(obj, "change", r->change);
    if (x->gated && x->why != PM_GATE_WHY_NONE)
        cJSON_AddStringToObject(obj, "why", pm_gate_why_text(x->why));
    else
        cJSON_AddNullToObject(obj, "why");
    cJSON_AddBoolToObject(obj, "previous_beyond", x->prev_beyond);
}

static cJSON *test_json(const pm_gate_test *t)
{
    cJSON *obj = cJSON_CreateObject();
    if (!obj)
        return NULL;
    cJSON_AddStringToObject(obj, "verdict", pm_gate_verdict_name(t->verdict));
    cJSON_AddNumberToObject(obj, "entries", (double)t->entries);
    cJSON_AddNumberToObject(obj, "previous_runs", (double)t->n);
    add_num(obj, "change", t->change);
    add_num(obj, "median", isfinite(t->median) ? t->median - 1 : NAN);
    add_num(obj, "mad", t->mad);
    add_num(obj, "z", t->z);
    add_num(obj, "tail", t->tail);
    add_num(obj, "entry_tail", t->entry_tail);
    cJSON_AddNumberToObject(obj, "entry_tail_runs", (double)t->entry_tail_n);
    if (t->why != PM_GATE_WHY_NONE)
        cJSON_AddStringToObject(obj, "why", pm_gate_why_text(t->why));
    else
        cJSON_AddNullToObject(obj, "why");
    return obj;
}

static int cmd_check(int argc, char **argv, common *c)
{
    int rc = parse_opts(argc, argv, ":h", check_lo, c, help_check, NULL, NULL);
    if (rc >= 0)
        return rc;
    if (argc - optind < 1) {
        fprintf(stderr, PROG " check: give TEST\n");
        return EXIT_USAGE;
    }
    const char *test = argv[optind];
    char **named = argv + optind + 1;
    int nnamed = argc - optind - 1;
    pm_compare_cfg *cfg = load_table(c);
    if (!cfg)
        return EXIT_USAGE;
    pm_store_point *p = NULL;
    size_t n = 0;
    if ((rc = load_history(c, test, NULL, 1, &p, &n)) != 0) {
        pm_compare_cfg_free(cfg);
        return rc;
    }
    if (n == 0 && nnamed == 0) {
        /* A new pipeline: nothing archived yet is a baseline, not a failure. */
        pm_compare_cfg_free(cfg);
        if (c->json) {
            cJSON *root = cJSON_CreateObject();
            if (root) {
                cJSON_AddStringToObject(root, "test", test);
                cJSON_AddNumberToObject(root, "checked", 0);
                cJSON_AddNumberToObject(root, "regressions", 0);
                cJSON_AddBoolToObject(root, "baseline", 1);
                cJSON_AddItemToObject(root, "entries", cJSON_CreateArray());
            }
            return print_json(root);
        }
        printf("%s: baseline: 0 of %zu runs, no verdict yet\n", test, c->check.min_history + 1);
        return flush_out();
    }
    /* Runs are the distinct start times (the history is in start order);
     * each entry's values are one slice of v, their runs the same slice of
     * run. */
    double *v = malloc((n ? n : 1) * sizeof *v);
    size_t *run = malloc((n ? n : 1) * sizeof *run), *runof = malloc((n ? n : 1) * sizeof *runof);
    pm_gate_entry *ge = calloc(n ? n : 1, sizeof *ge);
    const char **seen = malloc((n ? n : 1) * sizeof *seen);
    if (!v || !run || !runof || !ge || !seen) {
        free(v);
        free(run);
        free(runof);
        free(ge);
        free(seen);
        pm_store_points_free(p, n);
        pm_compare_cfg_free(cfg);
        fprintf(stderr, PROG ": out of memory\n");
        return EXIT_DB;
    }
    size_t nruns = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || p[i].start_us != p[i - 1].start_us)
            nruns++;
        runof[i] = nruns - 1;
    }
    size_t nseen = 0, used = 0, checked = 0, regressions = 0, suspects = 0, info = 0;
    size_t shortest = SIZE_MAX, *ord = group_by_entry(p, n),
           *first = malloc((n ? n : 1) * sizeof *first);
    for (size_t g = 0; ord && first && g < n;) {
        const char *entry = p[ord[g]].entry;
        if (!is_named(entry, named, nnamed)) {
            while (g < n && strcmp(p[ord[g]].entry, entry) == 0)
                g++;
            continue;
        }
        pm_gate_entry *x = &ge[nseen];
        first[nseen] = ord[g]; /* its first point: the output's order */
        seen[nseen++] = entry;
        x->v = v + used;
        x->run = run + used;
        for (; g < n && strcmp(p[ord[g]].entry, entry) == 0; g++) {
            v[used] = p[ord[g]].timing;
            run[used++] = runof[ord[g]];
            x->n++;
        }
        entry_opts(c, cfg, entry, &x->o, &x->gated);
        if (x->run[x->n - 1] != nruns - 1 && nnamed == 0)
            x->gated = -1; /* not in the latest run: retired, not checked */
    }
    free(ord);
    if (!first || (n && !ord)) {
        free(first);
        free(v);
        free(run);
        free(runof);
        free(ge);
        free(seen);
        pm_store_points_free(p, n);
        pm_compare_cfg_free(cfg);
        fprintf(stderr, PROG ": out of memory\n");
        return EXIT_DB;
    }
    pm_compare_cfg_free(cfg);
    for (size_t i = 0; i < nseen; i++)
        if (ge[i].gated < 0)
            ge[i].gated = 0, ge[i].n = 0; /* weighed by nothing, shown nowhere */
    pm_gate_opts go;
    pm_gate_opts_init(&go);
    pm_gate_test t;
    pm_error err;
    pm_error_clear(&err);
    if (pm_gate_judge(ge, nseen, nruns, &go, &t, &err) != 0) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        rc = EXIT_DB;
    }
    cJSON *json = c->json ? cJSON_CreateArray() : NULL;
    /* Each entry once, in the order of its first run (then by name). */
    size_t *tmpo = malloc((nseen ? nseen : 1) * sizeof *tmpo);
    if (!tmpo) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = EXIT_DB;
    }
    for (size_t i = 0; tmpo && i < nseen; i++)
        tmpo[i] = i;
    if (tmpo)
        qsort_r(tmpo, nseen, sizeof *tmpo, by_first, first);
    for (size_t oi = 0; rc == 0 && oi < nseen; oi++) {
        size_t i = tmpo[oi];
        pm_gate_entry *x = &ge[i];
        if (x->n == 0)
            continue; /* retired */
        if (x->gated && x->r.verdict == PM_CHECK_SHORT && x->r.n < shortest)
            shortest = x->r.n;
        if (!x->gated) {
            info++;
            if (json)
                verdict_json(json, seen[i], x);
            else if (nnamed)
                print_verdict(x, seen[i], &t); /* asked for by name */
            continue;                          /* informational: in the JSON, counted in the text */
        }
        if (json)
            verdict_json(json, seen[i], x);
        else
            print_verdict(x, seen[i], &t);
        checked++;
        regressions += x->verdict == PM_GATE_REGRESSION;
        suspects += x->verdict == PM_GATE_SUSPECT;
    }
    int test_regressed = t.verdict == PM_GATE_REGRESSION,
        test_suspect = t.verdict == PM_GATE_SUSPECT;
    for (int i = 0; rc == 0 && i < nnamed; i++) {
        int found = 0;
        for (size_t k = 0; k < nseen && !found; k++)
            found = strcmp(seen[k], named[i]) == 0;
        if (!found) {
            fprintf(stderr, PROG ": no entry \"%s\" in test \"%s\"\n", named[i], test);
            rc = EXIT_USAGE;
        }
    }
    free(first);
    free(tmpo);
    free(v);
    free(run);
    free(runof);
    free(ge);
    free(seen);
    if (rc != 0) {
        pm_store_points_free(p, n);
        cJSON_Delete(json);
        return rc;
    }
    if (json) {
        cJSON *root = cJSON_CreateObject();
        if (root) {
            cJSON_AddStringToObject(root, "test", test);
            cJSON_AddNumberToObject(root, "checked", (double)checked);
            cJSON_AddNumberToObject(root, "regressions", (double)regressions);
            cJSON_AddNumberToObject(root, "suspects", (double)suspects);
            cJSON_AddBoolToObject(root, "baseline", shortest != SIZE_MAX);
            if (t.verdict != PM_GATE_SHORT)
                cJSON_AddItemToObject(root, "whole_test", test_json(&t));
            else
                cJSON_AddNullToObject(root, "whole_test");
            cJSON_AddItemToObject(root, "entries", json);
        } else {
            cJSON_Delete(json);
        }
        pm_store_points_free(p, n);
        if ((rc = print_json(root)) != 0)
            return rc;
    } else {
        print_test(test, &t);
        pm_store_points_free(p, n);
        if (shortest != SIZE_MAX)
            printf("%s: baseline: %zu of %zu runs, no verdict yet\n", test, shortest + 1,
                   c->check.min_history + 1);
        printf("%s: %zu entries checked, %zu regressions", test, checked, regressions);
        if (suspects)
            printf(", %zu suspect", suspects);
        if (info)
            printf(" (%zu informational entries not gated)", info);
        printf("\n");
    }
    if ((rc = flush_out()) != 0)
        return rc;
    return regressions || test_regressed ? EXIT_FOUND
           : suspects || test_suspect    ? EXIT_SUSPECT
                                         : EXIT_OK;
}

/* ---- plot ----------------------------------------------------------------- */

static void help_plot(FILE *f)
{
    fprintf(f,
            "usage: " PROG " plot --db DB TEST ENTRY -o FILE.png|FILE.pdf|FILE.svg [options]\n"
            "The history of ENTRY, each run a point; the runs beyond their noise (each\n"
            "judged alone against the runs before it) are ringed in red; the change\n"
            "points that history lists are drawn as a level line with a shaded band at\n"
            "each step, labelled with its size.\n"
            "  -o, --output FILE  PNG, or PDF when FILE ends in .pdf\n" CHECK_OPTS "%s%s",
            exit_text,
            "example:\n  " PROG " plot --db runs.sqlite nightly wall_time_s -o wall.png\n");
}

static int cmd_plot(int argc, char **argv, common *c)
{
    int rc = parse_opts(argc, argv, ":ho:", check_lo, c, help_plot, NULL, NULL);
    if (rc >= 0)
        return rc;
    if (argc - optind != 2 || !c->out) {
        fprintf(stderr, PROG " plot: give TEST, ENTRY and -o FILE\n");
        return EXIT_USAGE;
    }
    if (!pm_arch_plot_kind(c->out)) {
        fprintf(stderr, PROG " plot: -o %s: give a file name ending in .png, .pdf or .svg\n",
                c->out);
        return EXIT_USAGE;
    }
    const char *test = argv[optind], *entry = argv[optind + 1];
    pm_store_point *p = NULL;
    size_t n = 0;
    if ((rc = load_history(c, test, entry, 0, &p, &n)) != 0)
        return rc;
    pm_compare_cfg *cfg = load_table(c);
    if (!cfg) {
        pm_store_points_free(p, n);
        return EXIT_USAGE;
    }
    pm_check_opts o;
    int gated;
    entry_opts(c, cfg, entry, &o, &gated);
    const pm_figure *fig = pm_figure_find(entry);
    pm_compare_cfg_free(cfg);
    pm_error err;
    pm_error_clear(&err);
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        pm_store_points_free(p, n);
        fprintf(stderr, PROG ": out of memory\n");
        return EXIT_DB;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = p[i].timing;
    pm_cp_opts co;
    pm_cp_opts_init(&co);
    if (o.min_change > 0)
        co.min_step = o.min_change;
    pm_cp *cp = NULL;
    size_t ncp = 0;
    if (pm_cp_find(v, n, &co, &cp, &ncp, &err) != 0 && err.code == PM_ENOMEM) {
        free(v);
        pm_store_points_free(p, n);
        fprintf(stderr, PROG ": %s\n", err.msg);
        return EXIT_DB;
    }
    free(v);
    pm_error_clear(&err);
    size_t nreg = 0;
    rc = pm_arch_plot(c->out, test, entry,
                      fig                           ? fig->unit
                      : strncmp(entry, "phase:", 6) ? "s/iteration"
                                                    : "s",
                      p, n, &o, gated, cp, ncp, &nreg, &err);
    free(cp);
    pm_store_points_free(p, n);
    if (rc) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return EXIT_DB;
    }
    return EXIT_OK;
}

int pm_archive_main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **, common *);
    } cmds[] = {{"add", cmd_add},
                {"list", cmd_list},
                {"history", cmd_history},
                {"check", cmd_check},
                {"plot", cmd_plot}};
    if (argc < 2) {
        usage_main(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage_main(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
        return pm_cli_version(PROG);
    common c;
    memset(&c, 0, sizeof c);
    pm_check_opts_init(&c.check);
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
        if (strcmp(argv[1], cmds[i].name) == 0)
            return cmds[i].fn(argc - 1, argv + 1, &c);
    fprintf(stderr, PROG ": unknown command \"%s\"\n", argv[1]);
    usage_main(stderr);
    return EXIT_USAGE;
}
