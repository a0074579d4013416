/* progress.h - perfmon-analyze's progress line (progress.c): on stderr
 * when it is a terminal and -q is not given, one line rewritten in place
 * (at most 10 times a second and at each change of stage, or of
 * --stream's pass) from the library's counts (pm_progress): files and MB
 * read, hosts, metrics derived, the report's plots and pages, the rate and
 * the time left of the stage. */
#ifndef PM_ANALYZE_PROGRESS_H
#define PM_ANALYZE_PROGRESS_H

#include "perfmon/analysis.h"

typedef struct progress_line {
    int shown; /* a line is on the terminal, not yet ended */
    int stage; /* of the last update, -1 = none */
    double t0; /* when the analysis or the report began */
    double t_stage, t_print;
    pm_progress last[3]; /* the latest counts of each stage */
} progress_line;

/* A new line: the analysis, or the report, begins. */
void pm_progress_begin(progress_line *pl);
/* pm_analyze_opts.progress and pm_report_opts.progress (user: the line). */
void pm_progress_update(const pm_progress *p, void *user);
/* The final state of the line, and its newline. */
void pm_progress_end(progress_line *pl);

#endif
