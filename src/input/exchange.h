/* exchange.h - the input stage on several processes: the survey's
 * exchange of the files read (split.c) and, under --stream, the hosts'
 * exchange at each pass (split_stream.c); split.h says how.  Both read
 * through read.h and are called by the input stage (input.c) and, through
 * perfmon/input.h, by the analysis's pipeline.  Private to src/input. */
#ifndef PM_INPUT_EXCHANGE_H
#define PM_INPUT_EXCHANGE_H

#include "read.h"
#include "perfmon/input.h"
#include "perfmon/split.h"

/* Under a split (split.h): read this rank's share of slots[0..n); rank 0
 * then receives the others' results into their slots, a rank > 0 sends
 * them (and leaves its slots empty).  0 or a PM_E* code (err says which
 * file or rank); rank 0's slots are always left fit to merge and free. */
int pm_split_read(pm_split *sp, slot *slots, size_t n, const pm_input_opts *opts,
                  const pm_read_hint *hint, pm_error *err) PM_WUR;

/* Rank 0's workers: host h from its rank (pm_input_host_load), or taken
 * and dropped (pm_input_host_drop). */
int pm_remote_fetch(const pm_inputs *in, size_t h, int values, pm_profile **out,
                    pm_error *err) PM_WUR;
void pm_remote_drop(const pm_inputs *in, size_t h);

#endif
