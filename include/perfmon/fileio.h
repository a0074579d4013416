/* fileio.h - bounded reading and checked writing of files.
 *
 * Every byte read comes from one of these functions: they loop on short
 * reads, retry on EINTR, always NUL-terminate, and never write past the
 * buffer the caller owns.
 */
#ifndef PERFMON_FILEIO_H
#define PERFMON_FILEIO_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "perfmon/error.h"

/* Read at most cap-1 bytes of the file at path (relative to dirfd, or
 * AT_FDCWD) into buf and NUL-terminate it.  Returns the byte count, or
 * -errno.  *full (may be NULL) is set when the buffer filled, i.e. the file
 * may be longer. */
ssize_t pm_read_small(int dirfd, const char *path, char *buf, size_t cap, int *full);

/* Re-read a kernel-generated file (/proc, /sys) through a kept-open
 * descriptor: opens path relative to dirfd on first use (storing the fd in
 * *fd), then reads it from offset 0 with a single pread(2), which returns
 * the whole content when it fits for files the kernel writes in one piece
 * (sysfs attributes, single_open files such as /proc/stat, /proc/meminfo,
 * /proc/<pid>/stat).  Files listed one record at a time (/proc/diskstats,
 * /proc/net/dev) come back about a page per read: use pm_pread_grow.
 * Same return contract as pm_read_small.  On error the descriptor is
 * closed and *fd reset, so the next call reopens. */
ssize_t pm_pread_kept(int *fd, int dirfd, const char *path, char *buf, size_t cap, int *full);

/* Like pm_pread_kept, but reads until end of file, whatever the length:
 * *buf (malloc'd, *cap bytes; NULL and 0 at first, the caller frees it) is
 * grown by doubling up to max bytes (max >= 2).  Returns the length of the
 * NUL-terminated content, or -errno: -EFBIG when the file needs more than
 * max bytes, -ENOMEM; a file is never returned cut short. */
ssize_t pm_pread_grow(int *fd, int dirfd, const char *path, char **buf, size_t *cap, size_t max);

/* Close a kept descriptor (if open) and reset it to -1. */
void pm_close_kept(int *fd);

/* Read all of fd into buf (cap bytes incl. NUL).  Same contract. */
ssize_t pm_read_fd(int fd, char *buf, size_t cap, int *full);

/* Read a whole file into a freshly allocated, NUL-terminated buffer of at
 * most max bytes.  On success *out is owned by the caller (free()). */
int pm_read_whole(const char *path, size_t max, char **out, size_t *len, pm_error *err) PM_WUR;

/* Write all len bytes, retrying on EINTR and short writes.  Returns 0 or
 * -errno. */
int pm_write_all(int fd, const void *buf, size_t len);

/* Close f (which was written to path) and report any earlier write error
 * or a failing fclose.  Returns 0 or PM_EIO. */
int pm_close_checked(FILE *f, const char *path, pm_error *err) PM_WUR;

/* An output written whole or not at all.  pm_out_begin sets tmp (cap
 * bytes) to "PATH.tmp" when path names a regular file or nothing: the
 * output is written there and pm_out_end renames it into place, so a
 * failure never leaves a partial file under the real name nor removes an
 * older one.  Where path names anything else (a device or a pipe:
 * /dev/stdout, /dev/full), tmp is path itself.  Returns 0, or PM_ELIMIT
 * when the name is too long. */
int pm_out_begin(const char *path, char *tmp, size_t cap, pm_error *err) PM_WUR;

/* Finish an output begun by pm_out_begin: with rc 0, rename tmp to path
 * (0, or PM_EIO and the message); otherwise remove tmp (unless it is
 * path) and return rc. */
int pm_out_end(const char *tmp, const char *path, int rc, pm_error *err);

/* mkdir -p: pm_mkdir_p in perfmon/dirs.h. */

/* Join dir and name into out (cap bytes).  Returns 0 or -ENAMETOOLONG. */
int pm_path_join(char *out, size_t cap, const char *dir, const char *name);

#endif
