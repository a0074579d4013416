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

#endif
