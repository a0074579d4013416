/* sread.h - reading the kernel's text files in the fewest system calls,
 * for the sampler's sources.  Private to the sampler.
 *
 * pm_pread_grow (fileio.h) reads until a pread returns 0: for a file that
 * fits its buffer, two preads, the second only to see the end.  These
 * return after one pread when that one read provably holds the whole file,
 * and otherwise fall back to pm_pread_grow.  Same contract as
 * pm_pread_grow: *buf (malloc'd, *cap bytes, NULL and 0 at first) grows up
 * to max bytes; the NUL-terminated length, or -errno; never cut short.
 */
#ifndef PERFMON_SREAD_H
#define PERFMON_SREAD_H

#include <stddef.h>
#include <sys/types.h>

/* A file the kernel writes in one piece (single_open: /proc/stat,
 * /proc/meminfo) or a regular file (a captured tree): a pread that does
 * not fill the buffer returned all of it. */
ssize_t pm_sread_whole(int *fd, int dirfd, const char *path, char **buf, size_t *cap, size_t max);

/* A file the kernel lists one record at a time into a page-sized buffer
 * (seq_file: /proc/diskstats, /proc/net/dev, cgroup.procs), whose records
 * are shorter than PM_SREAD_RECORD bytes: a pread stops short of the
 * caller's count at the end, or when the next record would overflow the
 * kernel's buffer of at least a page (fs/seq_file.c, seq_read_iter), so a
 * read of at most a page less PM_SREAD_RECORD bytes that did not fill the
 * buffer returned all of it. */
#define PM_SREAD_RECORD 512
ssize_t pm_sread_records(int *fd, int dirfd, const char *path, char **buf, size_t *cap, size_t max);

#endif
