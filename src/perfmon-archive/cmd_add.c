/* perfmon-archive add: result files filed into the archive and moved (archive_add.h). */
#include <string.h>

#include "perfmon/archive_add.h"
#include "archive_cmd.h"

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
            arc_exit_text,
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

int arc_cmd_add(int argc, char **argv, common *c)
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
    int rc = arc_parse_opts(argc, argv, ":vh", lo, c, help_add, add_extra, &a);
    if (rc >= 0)
        return rc;
    if (!a.o.datadir || !a.o.archivedir || optind != argc) {
        fprintf(stderr, PROG " add: %s\n",
                optind != argc ? "unexpected argument" : "--datadir and --archivedir are required");
        help_add(stderr);
        return EXIT_USAGE;
    }
    pm_store *s = NULL;
    if ((rc = arc_open_store(c, &s, 0)) != 0)
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
    if ((rc = arc_flush_out()) != 0)
        return rc;
    return rep.failed ? EXIT_FOUND : EXIT_OK;
}
