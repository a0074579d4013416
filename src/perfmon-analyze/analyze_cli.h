/* perfmon-analyze's driver: the command line (cli.c) and --compare
 * (compare_cli.c).  The program, not the engine: it calls analysis,
 * export and render, and nothing in the library calls it.  The program's
 * main() calls only pm_analyze_main(); the tests may call both. */
#ifndef PM_ANALYZE_CLI_H
#define PM_ANALYZE_CLI_H

#include "perfmon/analysis.h"
#include "perfmon/compare.h"
#include "perfmon/report.h"
#include "perfmon/split.h"

/* The program: perfmon-analyze's command line (cli.c).  Returns the exit
 * status (enum pm_exit: 0 ok, 1 warnings with --strict or partial output,
 * 2 usage or unusable input, 3 output failed). */
int pm_analyze_main(int argc, char **argv);
/* The same as one rank of several (split, NULL: alone): a rank > 0 reads
 * its share of the inputs, sends it to rank 0 and returns, printing
 * nothing; mpi says how MPI is built in (--version), NULL: it is not. */
int pm_analyze_main_split(int argc, char **argv, pm_split *split, const char *mpi);
/* main(): pm_analyze_main, or under mpirun the same on each rank (mpi.c). */
int pm_analyze_mpi_main(int argc, char **argv);

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
    pm_gate_names gate;    /* --gate / --no-gate */
    int want_html;         /* --html: job B's report with the comparison */
    const char *html_path; /* NULL: job-compare.html */
    const char *templates; /* the templates directory (--html) */
} pm_compare_cli;

int pm_compare_main(const pm_compare_cli *cl);

#endif
