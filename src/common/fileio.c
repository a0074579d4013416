/* Bounded file reading and checked writing (fileio.h): whole small files
 * and /proc files read into fixed buffers (retrying EINTR, always
 * NUL-terminated, telling when the buffer was full), files grown up to a
 * cap, paths joined without overflow, and every close and rename checked. */
#include "perfmon/fileio.h"
#include "perfmon/invariant.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

ssize_t pm_read_fd(int fd, char *buf, size_t cap, int *full)
{
    if (full)
        *full = 0;
    if (cap == 0)
        return -EINVAL;
    size_t got = 0;
    while (got < cap - 1) { /* reserve one byte for the NUL */
        ssize_t n = read(fd, buf + got, cap - 1 - got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            buf[got] = '\0';
            return -e;
        }
        if (n == 0)
            break;
        got += (size_t)n;
        PM_ASSERT(got <= cap - 1); /* read never passes the room it was given */
    }
    buf[got] = '\0';
    if (full && got == cap - 1)
        *full = 1;
    return (ssize_t)got;
}

ssize_t pm_read_small(int dirfd, const char *path, char *buf, size_t cap, int *full)
{
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (cap)
            buf[0] = '\0';
        return -errno;
    }
    ssize_t n = pm_read_fd(fd, buf, cap, full);
    close(fd);
    return n;
}

ssize_t pm_pread_kept(int *fd, int dirfd, const char *path, char *buf, size_t cap, int *full)
{
    if (full)
        *full = 0;
    if (cap == 0)
        return -EINVAL;
    buf[0] = '\0';
    if (*fd < 0) {
        *fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (*fd < 0)
            return -errno;
    }
    ssize_t n;
    do
        n = pread(*fd, buf, cap - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        int e = errno;
        pm_close_kept(fd);
        return -e;
    }
    buf[n] = '\0';
    if (full && (size_t)n == cap - 1)
        *full = 1;
    return n;
}

ssize_t pm_pread_grow(int *fd, int dirfd, const char *path, char **buf, size_t *cap, size_t max)
{
    if (max < 2)
        return -EINVAL;
    if (*fd < 0) {
        *fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (*fd < 0)
            return -errno;
    }
    size_t got = 0;
    for (;;) {
        if (got + 1 >= *cap) {
            if (*cap >= max) {
                /* Probe for one more byte to tell "exactly fits" from "more". */
                char extra;
                ssize_t n;
                do
                    n = pread(*fd, &extra, 1, (off_t)got);
                while (n < 0 && errno == EINTR);
                if (n == 0)
                    break;
                int e = errno;
                (*buf)[got] = '\0';
                if (n > 0)
                    return -EFBIG;
                pm_close_kept(fd);
                return -e;
            }
            size_t ncap = *cap < 4096 ? 4096 : *cap > max / 2 ? max : *cap * 2;
            if (ncap > max)
                ncap = max;
            char *nb = realloc(*buf, ncap);
            if (!nb) {
                if (*buf)
                    (*buf)[got] = '\0';
                return -ENOMEM;
            }
            *buf = nb;
            *cap = ncap;
        }
        /* Successive offsets: a seq_file continues where it stopped. */
        ssize_t n = pread(*fd, *buf + got, *cap - 1 - got, (off_t)got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            (*buf)[got] = '\0';
            pm_close_kept(fd);
            return -e;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    (*buf)[got] = '\0';
    return (ssize_t)got;
}

void pm_close_kept(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

int pm_read_whole(const char *path, size_t max, char **out, size_t *len, pm_error *err)
{
    *out = NULL;
    if (len)
        *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot open", path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return pm_error_sys(err, PM_EIO, e, "%s: cannot stat", path);
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return pm_error_set(err, PM_EIO, "%s: is a directory", path);
    }
    /* Regular files: size known up front.  Others (pipes, /proc): grow.
     * The buffer never holds more than max bytes, so the limit is checked
     * whenever it fills, whatever kind of file this is. */
    size_t cap = max < 65535 ? max + 1 : 65536;
    if (S_ISREG(st.st_mode)) {
        if ((unsigned long long)st.st_size > max) {
            close(fd);
            return pm_error_set(err, PM_ELIMIT, "%s: file is %lld bytes, limit is %zu", path,
                                (long long)st.st_size, max);
        }
        cap = (size_t)st.st_size + 1;
    }
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    }
    size_t got = 0;
    for (;;) {
        if (got == cap - 1) {
            if (cap - 1 >= max) {
                /* Probe for one more byte to tell "exactly max" from "more". */
                char extra;
                ssize_t n;
                do
                    n = read(fd, &extra, 1);
                while (n < 0 && errno == EINTR);
                if (n == 0)
                    break;
                int e = errno;
                free(buf);
                close(fd);
                if (n < 0)
                    return pm_error_sys(err, PM_EIO, e, "%s: read failed", path);
                return pm_error_set(err, PM_ELIMIT, "%s: larger than the limit of %zu bytes", path,
                                    max);
            }
            size_t ncap = cap > max / 2 ? max + 1 : cap * 2;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                close(fd);
                return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t n = read(fd, buf + got, cap - 1 - got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            close(fd);
            return pm_error_sys(err, PM_EIO, e, "%s: read failed", path);
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    *out = buf;
    if (len)
        *len = got;
    return 0;
}

int pm_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int pm_path_join(char *out, size_t cap, const char *dir, const char *name)
{
    int n;
    if (!dir || !*dir)
        n = snprintf(out, cap, "%s", name);
    else
        n = snprintf(out, cap, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
    if (n < 0 || (size_t)n >= cap)
        return -ENAMETOOLONG;
    return 0;
}

int pm_close_checked(FILE *f, const char *path, pm_error *err)
{
    int bad = ferror(f);
    int e = errno;
    if (fclose(f) != 0 || bad)
        return pm_error_sys(err, PM_EIO, bad ? e : errno, "%s: write failed", path);
    return 0;
}

int pm_out_begin(const char *path, char *tmp, size_t cap, pm_error *err)
{
    struct stat st;
    int direct = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
    int n = direct ? snprintf(tmp, cap, "%s", path) : snprintf(tmp, cap, "%s.tmp", path);
    if (n < 0 || (size_t)n >= cap)
        return pm_error_set(err, PM_ELIMIT, "%s: name too long", path);
    return 0;
}

int pm_out_end(const char *tmp, const char *path, int rc, pm_error *err)
{
    if (strcmp(tmp, path) == 0)
        return rc;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = pm_error_sys(err, PM_EIO, errno, "%s: cannot rename into place", path);
    if (rc)
        (void)unlink(tmp);
    return rc;
}
