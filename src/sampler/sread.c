/* Reading the kernel's text files in one pread where that provably holds
 * the whole file (sread.h), else through pm_pread_grow. */
#include "sread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "perfmon/fileio.h"

/* One pread from offset 0 into *buf (at least 4096 bytes, grown once at
 * first use); its length, or -errno (the descriptor closed). */
static ssize_t one_pread(int *fd, int dirfd, const char *path, char **buf, size_t *cap, size_t max)
{
    if (*cap < 4096 && max >= 4096) {
        char *nb = realloc(*buf, 4096);
        if (!nb)
            return -ENOMEM;
        *buf = nb;
        *cap = 4096;
    }
    if (*cap < 2)
        return -EINVAL;
    if (*fd < 0) {
        *fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (*fd < 0)
            return -errno;
    }
    ssize_t n;
    do
        n = pread(*fd, *buf, *cap - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        int e = errno;
        pm_close_kept(fd);
        return -e;
    }
    (*buf)[n] = '\0';
    return n;
}

ssize_t pm_sread_whole(int *fd, int dirfd, const char *path, char **buf, size_t *cap, size_t max)
{
    ssize_t n = one_pread(fd, dirfd, path, buf, cap, max);
    if (n < 0 || (size_t)n + 1 < *cap)
        return n;
    return pm_pread_grow(fd, dirfd, path, buf, cap, max);
}

ssize_t pm_sread_records(int *fd, int dirfd, const char *path, char **buf, size_t *cap, size_t max)
{
    ssize_t n = one_pread(fd, dirfd, path, buf, cap, max);
    long page = sysconf(_SC_PAGESIZE);
    if (page < 4096)
        page = 4096;
    if (n < 0 || ((size_t)n + 1 < *cap && n <= page - PM_SREAD_RECORD))
        return n;
    return pm_pread_grow(fd, dirfd, path, buf, cap, max);
}
