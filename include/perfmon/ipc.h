/* ipc.h - the sampler's --ipc stop file.
 *
 * A batch script tells samplers to stop by writing FINISHED into a file
 * (`echo FINISHED > $OUT/ipc`).  The sampler watches the file's directory
 * with inotify, so a change made on this node is seen at once, and also
 * reads the file at least once a second, because shared filesystems (NFS,
 * Lustre, GPFS) do not deliver inotify events for changes made on another
 * node, and a writer that keeps the file open only sends IN_MODIFY, which
 * is not watched (the sampler's own profile in the same directory would
 * wake it at every sample).
 *
 * Ownership: pm_ipc is caller-owned; pm_ipc_close releases its descriptor.
 */
#ifndef PERFMON_IPC_H
#define PERFMON_IPC_H

#include <stdint.h>

#include "perfmon/error.h"

/* The longest wait between two reads of the file, whatever the interval. */
#define PM_IPC_POLL_NS 1000000000LL

typedef struct pm_ipc {
    const char *path;  /* borrowed */
    char dir[4096];    /* directory watched ("." for a bare name) */
    char name[256];    /* the file's name in it ("" when not watchable) */
    int ifd;           /* inotify descriptor, -1 without inotify */
    int wd;            /* watch on dir, -1 while it does not exist */
    int64_t next_poll; /* CLOCK_MONOTONIC ns of the next read */
} pm_ipc;

/* Does the file at path say FINISHED now?  A missing, unreadable or
 * non-regular file does not. */
int pm_ipc_says_finished(const char *path);

/* Start watching path.  A file that already says FINISHED (left by an
 * earlier run, e.g. a requeued job) is an error (PM_EUSAGE, the message
 * names the file and says what to do) unless reset is set: then it is
 * emptied (PM_EIO when that fails).  Without inotify the file is only
 * polled.  Returns 0 or a negative PM_E* code; w is usable (and must be
 * closed) in every case. */
int pm_ipc_open(pm_ipc *w, const char *path, int reset, int64_t now_ns, pm_error *err) PM_WUR;

/* The descriptor to poll for POLLIN, or -1. */
int pm_ipc_fd(const pm_ipc *w);

/* When the next read of the file is due (CLOCK_MONOTONIC ns). */
int64_t pm_ipc_deadline(const pm_ipc *w);

/* Call when pm_ipc_fd is readable or the read deadline has come: drains
 * the inotify events and reads the file when one concerns it, or when the
 * poll is due (re-adding a lost watch then).  Returns 1 when the file says
 * FINISHED. */
int pm_ipc_check(pm_ipc *w, int64_t now_ns);

void pm_ipc_close(pm_ipc *w);

#endif
