/* proctree.h - the monitored process tree, for sources other than the
 * process-tree source itself.
 *
 * Ownership: the caller frees the returned array.
 */
#ifndef PERFMON_PROCTREE_H
#define PERFMON_PROCTREE_H

#include <stddef.h>
#include <sys/types.h>

#include "perfmon/source.h"

/* ctx's root pids and all their current descendants, whoever owns them,
 * from one listing of ctx's /proc (parents from /proc/<pid>/stat field 4).
 * At most max pids.  Returns 0 with *out malloc'd (*n entries, roots
 * first), or PM_ENOMEM / PM_EIO. */
int pm_proctree_members(const pm_sctx *ctx, size_t max, pid_t **out, size_t *n) PM_WUR;

/* Is pid a member of the tree that the process-tree source (state: its
 * open() state, or NULL) followed at its last sample?  1 or 0. */
int pm_proctree_follows(const void *state, int pid);

/* The directory of the cgroup the cgroup source (state: its open() state,
 * or NULL) made for -- CMD, once CMD is in it; -1 otherwise (no cgroup,
 * one perfmon did not make, CMD not moved).  Every process CMD starts is
 * born in it, so its cgroup.procs lists the tree's new members (unless
 * they moved out).  *live is 1 when that file may be re-read through a
 * descriptor kept open (cgroup v2, preferred where a hybrid system has
 * it), 0 when it must be opened afresh (v1 serves an open file the list it
 * made at its first read).  Borrowed: valid until the cgroup source
 * closes. */
int pm_cgroup_job_dir(const void *state, int *live);

#endif
