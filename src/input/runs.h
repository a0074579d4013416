/* runs.h - which profiles form the run analysed (runs.c): the profiles
 * read, as entries, grouped by job and run, one run kept.  Private to
 * src/input. */
#ifndef PM_INPUT_RUNS_H
#define PM_INPUT_RUNS_H

#include <sys/types.h>

#include "perfmon/input.h"
#include "perfmon/profile.h"

/* One profile on its way to a host. */
typedef struct ent {
    pm_profile *p;
    pm_clock clock;
    off_t size;    /* the file's size when read, -1 unknown */
    size_t nfull;  /* its samples (the survey keeps few of them) */
    double t0, t1; /* first and last sample (s); the start time if none */
    size_t run;    /* its run (index into the runs) */
    int drop;      /* a copy of another file's run, or not selected */
} ent;

/* p's first and last sample times (s), its start time when it has none. */
void pm_input_span(const pm_profile *p, double *t0, double *t1);
/* Why e's profile may be unfinished (its sampler still running, or no end
 * record), or NULL. */
const char *pm_input_incomplete_reason(const ent *e);
/* Drop the copies of a run (the JSON Lines file of -f both), group the
 * rest by job id and by run, keep the run o->job and o->run select, and
 * refuse several runs, or one host sampled twice at once (details: the
 * lines explaining a refusal).  0 or a PM_E* code. */
int pm_input_select_run(pm_inputs *in, const pm_input_opts *o, ent *es, size_t ne, char ***details,
                        size_t *ndetails, pm_error *err) PM_WUR;

#endif
