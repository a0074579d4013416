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

/* (d, h) was not put */
#define SPILL_NONE UINT64_MAX

int pm_spill_open(pm_spill *sp, const pm_analysis *a, pm_error *err)
{
    memset(sp, 0, sizeof *sp);
    sp->fd = -1;
    sp->off = 1;
    sp->nm = a->catalog->n;
    sp->nhosts = a->in.nhosts;
    sp->max = a->opts.spill_max;
    pthread_mutex_init(&sp->lock, NULL);
    size_t nat = 0;
    if (pm_mul_size(sp->nm ? sp->nm : 1, a->in.nhosts ? a->in.nhosts : 1, &nat))
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    sp->at = pm_alloc_array(nat, sizeof *sp->at);
    sp->host_n = calloc(a->in.nhosts ? a->in.nhosts : 1, sizeof *sp->host_n);
    sp->taken = calloc(sp->nm ? sp->nm : 1, 1);
    if (!sp->at || !sp->host_n || !sp->taken)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    for (size_t i = 0; i < nat; i++)
        sp->at[i] = SPILL_NONE;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        sp->host_n[h] = a->in.hosts[h].n;
        if (a->in.hosts[h].n > (UINT64_MAX / 4 - sp->per) / sizeof(double))
            return 0; /* (no file could hold it: read again) */
        sp->per += (uint64_t)a->in.hosts[h].n * sizeof(double);
    }
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
    free(sp->at);
    free(sp->host_n);
    free(sp->taken);
    sp->at = NULL;
    sp->host_n = NULL;
    sp->taken = NULL;
    pthread_mutex_destroy(&sp->lock);
}

/* Under sp->lock: whether metric d is taken; at its first series, it is
 * when its reservation stays within the bound and the file system has
 * room for every reservation not yet written, and the margin. */
static int take(pm_spill *sp, size_t d)
{
    if (sp->taken[d])
        return sp->taken[d] == 1;
    sp->taken[d] = 2;
    if (sp->max && (sp->per > sp->max || sp->reserved > sp->max - sp->per))
        return 0;
    struct statvfs vs;
    if (fstatvfs(sp->fd, &vs) != 0)
        return 0;
    uint64_t avail = (uint64_t)vs.f_bavail * vs.f_frsize;
    uint64_t margin = (uint64_t)vs.f_blocks * vs.f_frsize / 10;
    if (margin < SPILL_MARGIN)
        margin = SPILL_MARGIN;
    uint64_t want = sp->reserved + sp->per - sp->end;
    if (avail < margin || avail - margin < want)
        return 0;
    sp->reserved += sp->per;
    sp->taken[d] = 1;
    return 1;
}

int pm_spill_holds(const pm_spill *sp, size_t d)
{
    PM_ASSERT(d < sp->nm);
    return !sp->off && sp->taken[d] != 2; /* (0: every series constant, or none) */
}

void pm_spill_put(pm_spill *sp, size_t d, size_t h, const double *v, size_t n)
{
    PM_ASSERT(d < sp->nm && h < sp->nhosts && n <= sp->host_n[h]);
    PM_ASSERT(sp->at[d * sp->nhosts + h] == SPILL_NONE); /* each (d, h) once */
    pthread_mutex_lock(&sp->lock);
    uint64_t at0 = SPILL_NONE;
    if (!sp->off && take(sp, d)) {
        /* (within the reservation: n is at most the survey's count) */
        at0 = sp->end;
        sp->end += (uint64_t)n * sizeof *v;
    }
    pthread_mutex_unlock(&sp->lock);
    if (at0 == SPILL_NONE)
        return;
    const unsigned char *p = (const unsigned char *)v;
    size_t want = n * sizeof *v;
    off_t at = (off_t)at0;
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
    /* (its own slot: read only after the pass, when every thread is done) */
    sp->at[d * sp->nhosts + h] = at0;
}

int pm_spill_get(const pm_spill *sp, size_t d, size_t h, size_t i0, double *v, size_t n,
                 pm_error *err)
{
    PM_ASSERT(d < sp->nm && h < sp->nhosts && sp->at[d * sp->nhosts + h] != SPILL_NONE);
    PM_ASSERT(i0 <= sp->host_n[h] && n <= sp->host_n[h] - i0);
    unsigned char *p = (unsigned char *)v;
    size_t want = n * sizeof *v;
    off_t at = (off_t)(sp->at[d * sp->nhosts + h] + i0 * sizeof *v);
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
