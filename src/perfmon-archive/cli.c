/* perfmon-archive's command line (the program's main only calls
 * pm_archive_main): the usage and the dispatch to the commands
 * (cmd_*.c).  Exit codes: docs/man/perfmon-archive.1. */
#include <string.h>

#include "archive_cli.h"
#include "archive_cmd.h"

#ifndef PM_VERSION
#define PM_VERSION "0"
#endif

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
