/* stream_spill.h - every host's derived values, kept on disk by the stream
 * mode's fold for the passes that need every value again (stream_spill.c).
 * Private to src/analysis. */
#ifndef PM_ANALYSIS_STREAM_SPILL_H
#define PM_ANALYSIS_STREAM_SPILL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "perfmon/analysis.h"

/* An unlinked file in $TMPDIR (else /tmp): host h's values of catalog
 * metric d at at[d * nhosts + h], appended as the fold's workers hand
 * them in (each writes its own place, reserved under the lock, so no
 * thread waits for another's write).  The caller leaves out the series
 * it can replay without them (a constant series).  A metric's first
 * series reserves room for all of its hosts (every host's samples): the
 * metric is taken while the reservations stay within opts.spill_max and
 * the file system has room for them (with a margin: a tenth of the file
 * system, at least 1 GiB), else refused, and the stream reads the hosts
 * again for the metrics refused; when a write fails the spill is off as
 * a whole. */
typedef struct pm_spill {
    int fd;
    int off;              /* no room, or a write failed: the values are read again */
    size_t nm;            /* catalog metrics */
    size_t nhosts;        /* hosts */
    uint64_t *at;         /* [nm * nhosts] the byte offset of (d, h)'s values */
    size_t *host_n;       /* [nhosts] samples room */
    unsigned char *taken; /* [nm] 0: no series yet, 1: taken, 2: refused */
    uint64_t per;         /* bytes a metric reserves: every host's samples */
    uint64_t reserved;    /* bytes the metrics taken reserve */
    uint64_t end;         /* bytes given */
    uint64_t max;         /* opts.spill_max */
    pthread_mutex_t lock;
} pm_spill;

/* Whether the stream mode spills: not when an output written host by host
 * reads every host again anyway (opts.host_out), nor with the environment
 * variable PM_STREAM_SPILL=0 (the tests: every host is read again). */
int pm_spill_wanted(const pm_analysis *a);
/* Set sp up for a's hosts (after the survey), its file in $TMPDIR.
 * Returns 0 with sp->off set when no file could be made (the stream then
 * reads the hosts again); an error only when out of memory. */
int pm_spill_open(pm_spill *sp, const pm_analysis *a, pm_error *err) PM_WUR;
void pm_spill_close(pm_spill *sp);
/* Host h's n values of catalog metric d (n at most the survey's count);
 * any thread, each (d, h) at most once.  Sets sp->off when there is no
 * room or the write fails (then nothing of the spill is read). */
void pm_spill_put(pm_spill *sp, size_t d, size_t h, const double *v, size_t n);
/* Whether every series of metric d that was put is in the spill (asked
 * after the fold): not when the metric was refused or a write failed. */
int pm_spill_holds(const pm_spill *sp, size_t d);
/* n values of host h's series of metric d from its value i0 on (put
 * before). */
int pm_spill_get(const pm_spill *sp, size_t d, size_t h, size_t i0, double *v, size_t n,
                 pm_error *err) PM_WUR;

#endif
