/* Moving an archived file without ever replacing another (see
 * archive_add.h, pm_arch_move). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmon/archive_add.h"
#include "perfmon/fileio.h"

#define MAX_SUFFIX 10000

/* rename(2) that fails with EEXIST instead of replacing; where the file
 * system lacks RENAME_NOREPLACE, link + unlink does the same. */
static int rename_noreplace(const char *from, const char *to)
{
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    if (link(from, to) != 0)
        return -1;
    if (unlink(from) != 0) {
        int e = errno;
        unlink(to);
        errno = e;
        return -1;
    }
    return 0;
}

static int fsync_dir(const char *dir)
{
    int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0)
        return -1;
    int rc = fsync(d);
    int e = errno;
    close(d);
    errno = e;
    return rc;
}

/* Copy fd (from offset 0) into a new file tmp, fsync'd. */
static int copy_to(int fd, const char *tmp, pm_error *err)
{
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (out < 0)
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot create", tmp);
    char buf[1 << 16];
    off_t off = 0;
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof buf, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(out);
            unlink(tmp);
            return pm_error_sys(err, PM_EIO, e, "%s: read failed while copying", tmp);
        }
        if (n == 0)
            break;
        int w = pm_write_all(out, buf, (size_t)n);
        if (w != 0) {
            close(out);
            unlink(tmp);
            return pm_error_sys(err, PM_EIO, -w, "%s: write failed", tmp);
        }
        off += n;
    }
    if (fsync(out) != 0 || close(out) != 0) {
        int e = errno;
        unlink(tmp);
        return pm_error_sys(err, PM_EIO, e, "%s: cannot sync", tmp);
    }
    return 0;
}

int pm_arch_move(int fd, const char *src, const char *dir, const char *name, char *out, size_t cap,
                 pm_error *err)
{
    char dst[PATH_MAX], tmp[PATH_MAX];
    int copied = 0;
    for (int k = 0; k < MAX_SUFFIX; k++) {
        int n = k ? snprintf(dst, sizeof dst, "%s/%s.%d", dir, name, k)
                  : snprintf(dst, sizeof dst, "%s/%s", dir, name);
        if (n < 0 || (size_t)n >= sizeof dst)
            return pm_error_set(err, PM_EUSAGE, "%s/%s: path too long", dir, name);
        if (!copied) {
            if (rename_noreplace(src, dst) == 0)
                goto done;
            if (errno == EEXIST)
                continue;
            if (errno != EXDEV)
                return pm_error_sys(err, PM_EIO, errno, "cannot move %s to %s", src, dst);
            /* Another file system: a hidden copy first, so that no
             * half-written file ever carries the final name.  A copy
             * left by a killed archiver is overwritten by the rerun. */
            n = snprintf(tmp, sizeof tmp, "%s/.%s.partial", dir, name);
            if (n < 0 || (size_t)n >= sizeof tmp)
                return pm_error_set(err, PM_EUSAGE, "%s/%s: path too long", dir, name);
            int rc = copy_to(fd, tmp, err);
            if (rc)
                return rc;
            copied = 1;
        }
        if (link(tmp, dst) == 0) {
            unlink(tmp);
            if (fsync_dir(dir) != 0)
                return pm_error_sys(err, PM_EIO, errno, "%s: cannot sync", dir);
            if (unlink(src) != 0)
                return pm_error_sys(err, PM_EIO, errno, "%s: copied to %s but cannot remove", src,
                                    dst);
            goto done;
        }
        if (errno != EEXIST) {
            int e = errno;
            unlink(tmp);
            return pm_error_sys(err, PM_EIO, e, "cannot move %s to %s", src, dst);
        }
    }
    if (copied)
        unlink(tmp);
    return pm_error_set(err, PM_ELIMIT, "cannot move %s: %s/%s and %d numbered names are taken",
                        src, dir, name, MAX_SUFFIX - 1);
done:
    if (out)
        snprintf(out, cap, "%s", dst);
    return 0;
}
