/* perfmon-archive's command line (the program's main only calls
 * pm_archive_main).  Exit codes: docs/man/perfmon-archive.1. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfmon/parse.h"
#include "archive_cli.h"
#include "archive_cmd.h"

#ifndef PM_VERSION
#define PM_VERSION "0"
#endif

const char arc_exit_text[] =
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
            arc_exit_text);
}

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

int pm_archive_main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **, common *);
    } cmds[] = {{"add", arc_cmd_add},
                {"list", arc_cmd_list},
                {"history", arc_cmd_history},
                {"check", arc_cmd_check},
                {"plot", arc_cmd_plot}};
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
