/* exchange.h - the input stage on several processes: the survey's
 * exchange of the files read (split.c) and, under --stream, the hosts'
 * exchange at each pass (split_stream.c); split.h says how.  Both read
 * through read.h and are called by the input stage (input.c) and the
 * pipeline (analysis.c).  Private to src/analysis. */
#ifndef PM_ANALYSIS_EXCHANGE_H
#define PM_ANALYSIS_EXCHANGE_H

#include "read.h"
#include "perfmon/analysis.h"
#include "perfmon/split.h"

/* Under a split (split.h): read this rank's share of slots[0..n); rank 0
 * then receives the others' results into their slots, a rank > 0 sends
 * them (and leaves its slots empty).  0 or a PM_E* code (err says which
 * file or rank); rank 0's slots are always left fit to merge and free. */
int pm_split_read(pm_split *sp, slot *slots, size_t n, const pm_analyze_opts *opts,
                  const pm_read_hint *hint, pm_error *err) PM_WUR;
/* Every rank, once, when its input stage ends with rc: a rank > 0 that
 * sent nothing yet says it failed; rank 0 waits for what the others still
 * send; then rank 0's status goes to all.  Returns rank 0's status (on
 * rank 0: rc). */
int pm_split_finish(pm_split *sp, int rc, pm_error *err);
/* The same without the status: the survey's exchange ends there, and
 * (--stream) the hosts' exchange follows (split_stream.c).  Returns rc. */
int pm_split_survey_end(pm_split *sp, int rc, pm_error *err);

/* --stream under a split (split_stream.c; split.h says how).  Rank 0,
 * after the survey: send the hosts (a->hosts) to every rank and serve
 * a->remote; then a->hosts' profiles come from the other ranks
 * (pm_input_host_load). */
int pm_remote_begin(pm_analysis *a, pm_split *sp, pm_error *err) PM_WUR;
/* Rank 0, once, whether or not pm_remote_begin ran or succeeded: end the
 * passes, tell every rank, and give them rank 0's status rc. */
int pm_remote_end(pm_analysis *a, pm_split *sp, int rc, pm_error *err);
/* A rank > 0, after the survey (rc: how its share went): read and send
 * its hosts at each pass rank 0 asks for, until rank 0 ends; returns
 * rank 0's status. */
int pm_remote_serve(pm_analysis *a, pm_split *sp, int rc, pm_error *err);
/* Rank 0's workers: host h from its rank (pm_input_host_load), or taken
 * and dropped (pm_input_host_drop). */
int pm_remote_fetch(const pm_analysis *a, size_t h, int values, pm_profile **out,
                    pm_error *err) PM_WUR;
void pm_remote_drop(const pm_analysis *a, size_t h);

#endif
