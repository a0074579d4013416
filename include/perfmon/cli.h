/* cli.h - the one front end of the programs (perfmon-sample, its mark
 * subcommand, perfmon-analyze, perfmon-archive): the exit codes, the
 * words for a refused option, --version.  For the drivers in
 * src/perfmon-<program>/ only: the library below them never prints.
 *
 * Order of calls in a driver: getopt_long with opterr = 0 and an optstring
 * that starts with ':' (after a '+' where operands end the options); on
 * ':' or '?' pm_cli_refused() words the error, the driver prints it as
 * "PROGRAM: MESSAGE" and returns PM_EXIT_USAGE.  --version prints with
 * pm_cli_version(). */
#ifndef PERFMON_CLI_H
#define PERFMON_CLI_H

#include <getopt.h>

#include "perfmon/error.h"

/* The exit status of every program; each man page's EXIT STATUS says what
 * they mean for that program. */
enum pm_exit {
    PM_EXIT_OK = 0,      /* success */
    PM_EXIT_FAIL = 1,    /* done, but: an input problem promoted by --strict, samples not
                           * written, a file not archived, a regression, job B worse */
    PM_EXIT_USAGE = 2,   /* a bad option or value, or no usable input */
    PM_EXIT_OUTPUT = 3,  /* an output (or the archive's database) could not be written */
    PM_EXIT_MIXED = 4,   /* perfmon-analyze --compare: worse on some gated figures, better
                           * on others */
    PM_EXIT_MEMORY = 5,  /* perfmon-analyze: the outputs asked for need the in-memory
                           * analysis, which would need more memory than is available */
    PM_EXIT_SUSPECT = 6, /* perfmon-archive check: worse, but not yet confirmed (one entry
                          * within the tail of the test's history): rerun the benchmark once
                          * and check again */
    PM_EXIT_NOEXEC = 127 /* perfmon-sample -- CMD: CMD could not be run */
};

/* Word the option getopt_long refused (it returned c, ':' or '?') into err
 * (PM_EUSAGE), one wording for every program:
 *   unknown option -x (see --help)         unknown option --bogus (see --help)
 *   option --db needs a value (see --help) option -o needs a value (see --help)
 *   option --verbose takes no value (see --help)
 *   ambiguous option --p (see --help)
 * A short option is named by optopt (it may sit inside a cluster such as
 * "-vx", where optind has not moved past it); a long one by the word it
 * came in, argv[optind - 1].  shortopts and longopts: those given to
 * getopt_long.  Returns PM_EUSAGE. */
int pm_cli_refused(int c, char *const *argv, const char *shortopts, const struct option *longopts,
                   pm_error *err);

/* --version: "PROGRAM VERSION" on standard output.  Returns PM_EXIT_OK, or
 * PM_EXIT_OUTPUT when standard output cannot be written. */
int pm_cli_version(const char *program);

#endif
