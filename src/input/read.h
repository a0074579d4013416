/* read.h - the lowest floor of the input stage (read.c): what reading one
 * input file produced, the files read on worker threads, one host's files
 * read again, and a host's profiles merged.  Used by the input stage
 * (input.c) and the ranks' exchange (split.c, split_stream.c); it calls
 * neither.  Private to src/input. */
#ifndef PM_INPUT_READ_H
#define PM_INPUT_READ_H

#include <stdint.h>
#include <sys/types.h>

#include "perfmon/input.h"
#include "perfmon/phase.h"
#include "perfmon/profile.h"

/* Filled by a worker thread, merged in file order by the main thread so
 * results do not depend on timing. */
typedef struct slot {
    const char *path;
    pm_profile **got; /* profiles read (SKA files hold several) */
    size_t ngot;
    pm_clock *clocks;     /* [ngot] */
    char *ignored;        /* why the file is not a profile, or NULL */
    off_t size;           /* the file's size when it was read */
    size_t *nfull;        /* [ngot] samples before the stream survey's shrink, or NULL */
    pm_event_list events; /* an events file's phase marks */
    pm_phase_set phases;  /* a Scanner profile's intervals and totals */
    int survey;           /* the stream mode's first read: keep few samples (read.c) */
    int rc;
    pm_error err;
} slot;

/* Read one file into sl (read.c), with rb kept from one file to the next. */
void pm_input_read_slot(slot *sl, const pm_read_hint *hint, pm_read_buf *rb);
/* Read slots[0..n) on worker threads (read.c). */
void pm_input_read_slots(slot *slots, size_t n, const pm_input_opts *opts,
                         const pm_read_hint *hint);

/* The hint the first read (the survey, or the whole read in memory) uses:
 * in->read_first (set by the analysis: analysis/project.c). */
void pm_input_survey_hint(const pm_inputs *in, pm_read_hint *hint);
/* The hint that pm_input_host_load reads with: in->read_values (the same
 * columns as the first read in memory), or in->read_times. */
void pm_input_host_hint(const pm_inputs *in, int values, pm_read_hint *hint);
/* Merge ps[0..np) (one host, in order of first time) into one new *out;
 * the parts are left to the caller.  0 or a PM_E* code. */
int pm_input_merge(pm_profile **ps, size_t np, pm_profile **out) PM_WUR;
/* p's first wall time (ns), INT64_MAX when it has no sample. */
int64_t pm_input_first_time(const pm_profile *p);
/* Move src's events to the end of dst (src is left empty); 0 or
 * PM_ENOMEM. */
int pm_input_events_take(pm_event_list *dst, pm_event_list *src) PM_WUR;

#endif
