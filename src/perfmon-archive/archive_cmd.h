/* archive_cmd.h - what perfmon-archive's commands share (cmd_common.c):
 * the options common to them, their parsing, the archive opened, the exit
 * codes, a test's history and the check options of an entry; one file per
 * command (cmd_add.c, cmd_list.c, cmd_history.c, cmd_check.c,
 * cmd_plot.c), called by the dispatch (cli.c).  Private to
 * src/perfmon-archive. */
#ifndef PM_ARCHIVE_CMD_H
#define PM_ARCHIVE_CMD_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "perfmon/archive_check.h"
#include "perfmon/archive_store.h"
#include "perfmon/cli.h"
#include "perfmon/compare.h"

#include <cJSON.h>

enum {
    EXIT_OK = PM_EXIT_OK,
    EXIT_FOUND = PM_EXIT_FAIL,
    EXIT_USAGE = PM_EXIT_USAGE,
    EXIT_DB = PM_EXIT_OUTPUT,
    EXIT_SUSPECT = PM_EXIT_SUSPECT
};

#define PROG "perfmon-archive"
#define DB_ENV "PERFMON_ARCHIVE_DB"

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

/* The options of check that plot takes too, for both --help texts. */
#define CHECK_OPTS                                                                         \
    "  --window N        previous runs compared with (default 10)\n"                       \
    "  --threshold K     robust z-score beyond which it is worse (default 3)\n"            \
    "  --min-change PCT  smallest change that counts, in percent (default: the table's,\n" \
    "                    5 for TensorFlow timings)\n"                                      \
    "  --min-history N   fewer previous runs: baseline, no verdict (default 4: the\n"      \
    "                    5th run archived is the first judged)\n"                          \
    "  --templates DIR   where compare.json, the table of figure semantics, is\n"

/* The exit codes, for each --help text. */
extern const char arc_exit_text[];

/* Parse argv with getopt_long (shortopts, lo): the common options into c,
 * the others to extra (user); -h prints help.  -1 when the command goes
 * on, else the exit code to return (--help: EXIT_OK). */
int arc_parse_opts(int argc, char **argv, const char *shortopts, const struct option *lo, common *c,
                   void (*help)(FILE *), int (*extra)(int, const char *, void *), void *user);
/* Flush standard output; a failure (a full disk) is an error said once. */
int arc_flush_out(void);
/* Open the store; must_exist (every command but add): an SQLite file that
 * does not exist is a usage error, and nothing is created. */
int arc_open_store(const common *c, pm_store **s, int must_exist);
/* Print a JSON document (consumed) and a newline; 0 or EXIT_DB. */
int arc_print_json(cJSON *root);

/* History (cmd_common.c): */
/* The history of test (of entry, when not NULL); allow_empty: an unknown
 * test is no error (check: a new pipeline's baseline). */
int arc_load_history(const common *c, const char *test, const char *entry, int allow_empty,
                     pm_store_point **p, size_t *n);
/* The indexes of p[0..n) grouped by entry; NULL when out of memory. */
size_t *arc_group_by_entry(const pm_store_point *p, size_t n);
/* qsort_r's order of indexes by their first[] (user). */
int arc_by_first(const void *a, const void *b, void *user);

/* The check options (cmd_common.c), shared by check, history and plot: */
extern const struct option arc_check_lo[];
/* The table of figure semantics (templates/compare.json); NULL after
 * saying why. */
pm_compare_cfg *arc_load_table(const common *c);
/* The check options of one entry (the table's, --min-change wins); *gated
 * its gating. */
void arc_entry_opts(const common *c, const pm_compare_cfg *cfg, const char *entry, pm_check_opts *o,
                    int *gated);

/* The commands: argv[0] is the command's name. */
int arc_cmd_add(int argc, char **argv, common *c);
int arc_cmd_list(int argc, char **argv, common *c);
int arc_cmd_history(int argc, char **argv, common *c);
int arc_cmd_check(int argc, char **argv, common *c);
int arc_cmd_plot(int argc, char **argv, common *c);

#endif
