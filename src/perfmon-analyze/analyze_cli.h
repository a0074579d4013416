/* perfmon-analyze's driver: the command line (cli.c) and --compare
 * (compare_cli.c).  The program, not the engine: it calls analysis,
 * export and render, and nothing in the library calls it.  The program's
 * main() calls only pm_analyze_main(); the tests may call both. */
#ifndef PM_ANALYZE_CLI_H
#define PM_ANALYZE_CLI_H

#include "perfmon/analysis.h"
#include "perfmon/compare.h"
#include "perfmon/report.h"

/* The program: perfmon-analyze's command line (cli.c).  Returns the exit
 * status (enum pm_exit: 0 ok, 1 warnings with --strict or partial output,
 * 2 usage or unusable input, 3 output failed). */
int pm_analyze_main(int argc, char **argv);

/* perfmon-analyze --compare (compare_cli.c): analyse both inputs with the
 * same options, compare, write the outputs; returns the exit status: 0 B
 * is not worse, 1 B is worse beyond the thresholds, 2 usage or unusable
 * input (either job, or compare.json), 3 an output could not be written. */
typedef struct pm_compare_cli {
    const char *path_a, *path_b; /* job A (reference) and job B */
    const pm_analyze_opts *analyze;
    const pm_report_opts *report; /* for --pdf; pdf_path NULL: job-compare.pdf */
    const char *cfg_path;         /* templates/compare.json */
    double threshold_pct;         /* --threshold, NaN: from the configuration */
    int want_text, want_json, want_pdf, quiet;
    pm_gate_names gate; /* --gate / --no-gate */
} pm_compare_cli;

int pm_compare_main(const pm_compare_cli *cl);

#endif
