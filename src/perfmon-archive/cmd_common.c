/* What perfmon-archive's commands share (archive_cmd.h), below them and
 * the dispatch (cli.c): the options common to the commands and their
 * parsing, the archive opened, standard output flushed and JSON printed;
 * a test's history loaded, its entries grouped, the table of figure
 * semantics and an entry's check options (history, check and plot). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfmon/parse.h"
#include "perfmon/templates.h"
#include "archive_cmd.h"

const char arc_exit_text[] =
    "exit status: 0 ok, 1 a file could not be archived (add) or a regression was\n"
    "found (check), 2 usage error or unknown test or entry, 3 database or output error,\n"
    "6 suspect (check): worse but not confirmed, rerun the benchmark and check again\n";

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
int arc_parse_opts(int argc, char **argv, const char *shortopts, const struct option *lo, common *c,
                   void (*help)(FILE *), int (*extra)(int, const char *, void *), void *user)
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
int arc_flush_out(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return EXIT_OK;
    fprintf(stderr, PROG ": standard output: write failed: %s\n", strerror(errno));
    return EXIT_DB;
}

/* Open the store; must_exist (every command but add): an SQLite file that
 * does not exist is a usage error, and nothing is created (a mistyped
 * --db must not leave an empty archive behind). */
int arc_open_store(const common *c, pm_store **s, int must_exist)
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

/* Print a JSON document (consumed) and a newline; 0 or EXIT_DB. */
int arc_print_json(cJSON *root)
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
    return arc_flush_out();
}

int arc_by_first(const void *a, const void *b, void *user)
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
size_t *arc_group_by_entry(const pm_store_point *p, size_t n)
{
    size_t *ord = malloc((n ? n : 1) * sizeof *ord);
    if (!ord)
        return NULL;
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    qsort_r(ord, n, sizeof *ord, by_entry, (void *)(uintptr_t)p);
    return ord;
}

/* The history of test (of entry, when not NULL); allow_empty: an unknown
 * test is no error (check: a new pipeline's baseline). */
int arc_load_history(const common *c, const char *test, const char *entry, int allow_empty,
                     pm_store_point **p, size_t *n)
{
    int64_t since = INT64_MIN;
    if (c->since && pm_arch_parse_date(c->since, &since) != 0) {
        fprintf(stderr, PROG ": --since %s: not a date (YYYY-MM-DD[THH:MM:SS]) or epoch seconds\n",
                c->since);
        return EXIT_USAGE;
    }
    pm_store *s = NULL;
    int rc = arc_open_store(c, &s, 1);
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

const struct option arc_check_lo[] = {{"db", required_argument, NULL, O_DB},
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
pm_compare_cfg *arc_load_table(const common *c)
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
void arc_entry_opts(const common *c, const pm_compare_cfg *cfg, const char *entry, pm_check_opts *o,
                    int *gated)
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
