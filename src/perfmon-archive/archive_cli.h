/* perfmon-archive's driver (cli.c): the program's main() calls only this;
 * the engine (src/archive) never does. */
#ifndef PM_ARCHIVE_CLI_H
#define PM_ARCHIVE_CLI_H

/* perfmon-archive's command line.  Exit codes: docs/man/perfmon-archive.1. */
int pm_archive_main(int argc, char **argv);

#endif
