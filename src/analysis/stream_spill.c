/* The stream mode's spill: each host's derived values of each metric,
 * written by the fold's workers at fixed places of an unlinked file, so
 * that the passes over every value (the pooled sd, the order statistics)
 * read them back in host order instead of reading and deriving every host
 * again.  The file's pages are page cache, not the process's memory.
 * docs/analysis.md, "Analysis in bounded memory". */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "stream_spill.h"
#include "perfmon/invariant.h"
#include "perfmon/mem.h"

/* Room the spill leaves on its file system: a tenth of it, at least this. */
#define SPILL_MARGIN ((uint64_t)1 << 30)

int pm_spill_wanted(const pm_analysis *a)
{
    const char *e = getenv("PM_STREAM_SPILL");
    return !a->opts.host_out && !(e && !strcmp(e, "0"));
}

int pm_spill_open(pm_spill *sp, const pm_analysis *a, pm_error *err)
{
    memset(sp, 0, sizeof *sp);
    sp->fd = -1;
    sp->off = 1;
    sp->nm = a->catalog->n;
    sp->nhosts = a->nhosts;
    sp->max = a->opts.spill_max;
    pthread_mutex_init(&sp->lock, NULL);
    sp->host_off = calloc(a->nhosts ? a->nhosts : 1, sizeof *sp->host_off);
    sp->host_n = calloc(a->nhosts ? a->nhosts : 1, sizeof *sp->host_n);
    sp->slot = pm_alloc_array(sp->nm ? sp->nm : 1, sizeof *sp->slot);
    if (!sp->host_off || !sp->host_n || !sp->slot)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    for (size_t d = 0; d < sp->nm; d++)
        sp->slot[d] = -1;
    size_t total = 0;
    for (size_t h = 0; h < a->nhosts; h++) {
        sp->host_off[h] = total;
        sp->host_n[h] = a->hosts[h].n;
        if (a->hosts[h].n > SIZE_MAX / sizeof(double) / (sp->nm + 1) - total)
            return 0; /* (no file could hold it: read again) */
        total += a->hosts[h].n;
    }
    sp->total = total;
    const char *dir = getenv("TMPDIR");
    const char *d = dir && *dir ? dir : "/tmp";
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/perfmon-spill-XXXXXX", d);
    if (n < 0 || (size_t)n >= sizeof path)
        return 0;
    sp->fd = mkstemp(path);
    if (sp->fd < 0)
        return 0;
    unlink(path);
    sp->off = 0;
    return 0;
}

void pm_spill_close(pm_spill *sp)
{
    if (sp->fd >= 0)
        close(sp->fd);
    sp->fd = -1;
    free(sp->host_off);
    free(sp->host_n);
    free(sp->slot);
    sp->host_off = sp->host_n = NULL;
    sp->slot = NULL;
    pthread_mutex_destroy(&sp->lock);
}

/* Under sp->lock: a slot for metric d, when the file system has room for
 * what the slots given so far still need, and the margin. */
static long slot_for(pm_spill *sp, size_t d)
{
    if (sp->slot[d] >= 0 || sp->off)
        return sp->off ? -1 : sp->slot[d];
    struct statvfs vs;
    uint64_t per = (uint64_t)sp->total * sizeof(double);
    uint64_t want = per * (sp->nslots + 1) - sp->written;
    if ((sp->max && per * (sp->nslots + 1) > sp->max) || fstatvfs(sp->fd, &vs) != 0) {
        sp->off = 1;
        return -1;
    }
    uint64_t avail = (uint64_t)vs.f_bavail * vs.f_frsize;
    uint64_t margin = (uint64_t)vs.f_blocks * vs.f_frsize / 10;
    if (margin < SPILL_MARGIN)
        margin = SPILL_MARGIN;
    if (avail < margin || avail - margin < want) {
        sp->off = 1;
        return -1;
    }
    sp->slot[d] = (long)sp->nslots++;
    return sp->slot[d];
}

static off_t place(const pm_spill *sp, long slot, size_t h, size_t i)
{
    return (off_t)(((size_t)slot * sp->total + sp->host_off[h] + i) * sizeof(double));
}

void pm_spill_put(pm_spill *sp, size_t d, size_t h, const double *v, size_t n)
{
    PM_ASSERT(d < sp->nm && h < sp->nhosts && n <= sp->host_n[h]);
    pthread_mutex_lock(&sp->lock);
    long slot = slot_for(sp, d);
    pthread_mutex_unlock(&sp->lock);
    if (slot < 0)
        return;
    const unsigned char *p = (const unsigned char *)v;
    size_t want = n * sizeof *v;
    off_t at = place(sp, slot, h, 0);
    while (want) {
        ssize_t got = pwrite(sp->fd, p, want, at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            pthread_mutex_lock(&sp->lock);
            sp->off = 1;
            pthread_mutex_unlock(&sp->lock);
            return;
        }
        p += got;
        at += got;
        want -= (size_t)got;
    }
    pthread_mutex_lock(&sp->lock);
    sp->written += n * sizeof *v;
    pthread_mutex_unlock(&sp->lock);
}

int pm_spill_get(const pm_spill *sp, size_t d, size_t h, size_t i0, double *v, size_t n,
                 pm_error *err)
{
    PM_ASSERT(d < sp->nm && h < sp->nhosts && sp->slot[d] >= 0);
    PM_ASSERT(i0 <= sp->host_n[h] && n <= sp->host_n[h] - i0);
    unsigned char *p = (unsigned char *)v;
    size_t want = n * sizeof *v;
    off_t at = place(sp, sp->slot[d], h, i0);
    while (want) {
        ssize_t got = pread(sp->fd, p, want, at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return pm_error_set(err, PM_EIO, "--stream: reading the spilled values: %s",
                                got < 0 ? strerror(errno) : "short file");
        p += got;
        at += got;
        want -= (size_t)got;
    }
    return 0;
}
