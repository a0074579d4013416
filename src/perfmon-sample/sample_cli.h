/* perfmon-sample's driver: the command line (cli.c) and the mark
 * subcommand (mark.c).  The program's main() calls only these; the
 * engine (src/sampler) never does. */
#ifndef PM_SAMPLE_CLI_H
#define PM_SAMPLE_CLI_H

#include "perfmon/error.h"
#include "perfmon/sampler.h"

/* Parse the command line into opts.  Returns 0, 1 when --help/--version
 * was printed (exit 0), or PM_EUSAGE with err filled (exit 2). */
int pm_sampler_parse_args(int argc, char **argv, pm_sampler_opts *opts, pm_error *err);

/* perfmon-sample mark ...: record a phase mark (mark.c). */
int pm_mark_main(int argc, char **argv);

/* main() of perfmon-sample. */
int pm_sample_main(int argc, char **argv);

#endif
