/* `perfmon-archive add`: the directory archiver (see archive_add.h).
 *
 * Several archivers may run on one data directory at once.  Each file is
 * opened once and locked through that descriptor with a non-blocking
 * exclusive flock(2); the lock is held until the file has been stored
 * and moved, then released by closing the descriptor.  An archiver that
 * gets the lock checks that the name still refers to the inode it opened:
 * if another archiver moved the file in between, it is skipped.  flock
 * locks are local to a host: the data directory must not be shared over
 * NFS by archivers on several hosts. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmon/archive.h"
#include "perfmon/archive_add.h"
#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/vec.h"

/* Names listed per run: beyond this the rest waits for the next run. */
#define FILES_MAX 1000000

typedef struct cand {
    char *name;
    struct timespec mtime;
} cand;

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void free_cands(cand *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(c[i].name);
    free(c);
}

/* Regular files of dir (no symbolic links, directories, pipes; no hidden
 * names, so writers can create ".x.tmp" and rename it into place), oldest
 * modification time first. */
static int list_files(const char *dir, cand **out, size_t *n, pm_error *err)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot open the data directory", dir);
    size_t cap = 0;
    cand *c = NULL;
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d)) != NULL && *n < FILES_MAX) {
        struct stat st;
        if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode)) {
            errno = 0;
            continue;
        }
        if (PM_VEC_RESERVE(c, cap, *n + 1, 64) != 0)
            goto oom;
        if (!(c[*n].name = pm_strdup(de->d_name)))
            goto oom;
        c[(*n)++].mtime = st.st_mtim;
        errno = 0;
    }
    if (errno != 0) {
        int e = errno;
        closedir(d);
        free_cands(c, *n);
        *n = 0;
        return pm_error_sys(err, PM_EIO, e, "%s: cannot list", dir);
    }
    closedir(d);
    if (*n)
        qsort(c, *n, sizeof *c, cmp_cand);
    *out = c;
    return 0;
oom:
    closedir(d);
    free_cands(c, *n);
    *n = 0;
    return pm_error_set(err, PM_ENOMEM, "%s: out of memory listing files", dir);
}

/* Read the whole locked file (bounded by PM_ARCH_FILE_MAX). */
static int read_locked(int fd, const struct stat *st, const char *path, char **text, size_t *len,
                       pm_error *err)
{
    if ((unsigned long long)st->st_size > PM_ARCH_FILE_MAX)
        return pm_error_set(err, PM_ELIMIT, "%s: the file is %lld bytes, the limit is %zu", path,
                            (long long)st->st_size, PM_ARCH_FILE_MAX);
    size_t cap = (size_t)st->st_size + 2;
    char *buf = malloc(cap);
    if (!buf)
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    int full = 0;
    ssize_t n = pm_read_fd(fd, buf, cap, &full);
    if (n < 0) {
        free(buf);
        return pm_error_sys(err, PM_EIO, (int)-n, "%s: read failed", path);
    }
    if (full || (size_t)n != (size_t)st->st_size) {
        free(buf);
        return pm_error_set(err, PM_EFORMAT, "%s: the file changed while being read", path);
    }
    *text = buf;
    *len = (size_t)n;
    return 0;
}

typedef struct ctx {
    pm_store *store;
    const pm_arch_add_opts *o;
    pm_arch_add_report *rep;
    pm_arch_notice_fn notice;
    void *user;
    char faildir[PATH_MAX];
} ctx;

static void say(ctx *c, int kind, const char *path, const char *msg)
{
    if (c->notice)
        c->notice(kind, path, msg, c->user);
}

/* Report a failed file; a file whose content is at fault goes to the
 * failed/ directory (unless --keep-failed), one that met a database or
 * system error stays for the next run. */
static void failed(ctx *c, int fd, const char *path, const char *name, const pm_error *why,
                   int content)
{
    char msg[1400];
    size_t pl = strlen(path);
    if (strncmp(why->msg, path, pl) == 0 && why->msg[pl] == ':')
        snprintf(msg, sizeof msg, "cannot process %s", why->msg);
    else
        snprintf(msg, sizeof msg, "cannot process %s: %s", path, why->msg);
    c->rep->failed++;
    if (content && !c->o->keep_failed) {
        pm_error e2;
        pm_error_clear(&e2);
        char dst[PATH_MAX];
        if ((mkdir(c->faildir, 0755) != 0 && errno != EEXIST) ||
            pm_arch_move(fd, path, c->faildir, name, dst, sizeof dst, &e2) != 0) {
            size_t ml = strlen(msg);
            snprintf(msg + ml, sizeof msg - ml, " (left in place: %s)",
                     e2.msg[0] ? e2.msg : "cannot create the failed/ directory");
        } else {
            size_t ml = strlen(msg);
            snprintf(msg + ml, sizeof msg - ml, " (moved to %s)", dst);
        }
    }
    say(c, PM_NOTICE_FAILED, path, msg);
}

/* Store and move one locked file. */
static void process(ctx *c, int fd, const struct stat *st, const char *path, const char *name)
{
    pm_error err;
    pm_error_clear(&err);
    char *text = NULL;
    size_t len = 0;
    pm_arch_run *run = NULL;
    int rc = read_locked(fd, st, path, &text, &len, &err);
    if (rc) {
        failed(c, fd, path, name, &err, rc != PM_EIO && rc != PM_ENOMEM);
        return;
    }
    rc = pm_arch_parse(path, text, len, c->o->test, &run, &err);
    free(text);
    if (rc) {
        failed(c, fd, path, name, &err, rc != PM_ENOMEM);
        return;
    }
    int result = 0;
    rc = pm_store_put(c->store, run, name, &result, &err);
    if (rc) {
        pm_arch_run_free(run);
        /* A conflicting run is the content's fault; anything else is the
         * database's, and the file is tried again next time. */
        failed(c, fd, path, name, &err, rc == PM_EFORMAT);
        return;
    }
    char dst[PATH_MAX], msg[1400];
    rc = pm_arch_move(fd, path, c->o->archivedir, name, dst, sizeof dst, &err);
    if (rc) {
        /* Stored: a rerun finds it stored and only moves the file. */
        pm_arch_run_free(run);
        failed(c, fd, path, name, &err, 0);
        return;
    }
    char when[40];
    pm_arch_format_time(run->start_us, when, sizeof when);
    if (result == PM_PUT_ALREADY) {
        c->rep->already++;
        snprintf(msg, sizeof msg, "%s: %.300s %s was already archived; moved to %s", path,
                 run->test, when, dst);
        say(c, PM_NOTICE_ALREADY, path, msg);
    } else {
        c->rep->stored++;
        c->rep->entries += run->nentries;
        snprintf(msg, sizeof msg, "%s: %.300s %s, %zu entries; moved to %s", path, run->test, when,
                 run->nentries, dst);
        say(c, PM_NOTICE_STORED, path, msg);
    }
    pm_arch_run_free(run);
}

static void take_one(ctx *c, const char *name)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", c->o->datadir, name) >= (int)sizeof path)
        return;
    /* O_NONBLOCK: a FIFO put in the file's place must not hang us. */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (errno != ENOENT) { /* ENOENT: another archiver took it */
            pm_error err;
            pm_error_sys(&err, PM_EIO, errno, "cannot open");
            c->rep->failed++;
            char msg[1200];
            snprintf(msg, sizeof msg, "cannot process %s: %s", path, err.msg);
            say(c, PM_NOTICE_FAILED, path, msg);
        } else {
            c->rep->skipped++;
            say(c, PM_NOTICE_SKIPPED, path, "gone (taken by another archiver)");
        }
        return;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        c->rep->skipped++;
        say(c, PM_NOTICE_SKIPPED, path, "locked by another archiver");
        close(fd);
        return;
    }
    /* Locked: is the name still this file?  Another archiver may have
     * moved it (and released its lock) since we opened it. */
    struct stat st, now;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        fstatat(AT_FDCWD, path, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != st.st_ino ||
        now.st_dev != st.st_dev) {
        c->rep->skipped++;
        say(c, PM_NOTICE_SKIPPED, path, "gone (taken by another archiver)");
        close(fd);
        return;
    }
    process(c, fd, &st, path, name);
    close(fd); /* releases the lock, after the move */
}

int pm_arch_add(pm_store *s, const pm_arch_add_opts *o, pm_arch_add_report *rep,
                pm_arch_notice_fn notice, void *user, pm_error *err)
{
    memset(rep, 0, sizeof *rep);
    struct stat st;
    if (stat(o->archivedir, &st) != 0)
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot use the archive directory",
                            o->archivedir);
    if (!S_ISDIR(st.st_mode))
        return pm_error_set(err, PM_EUSAGE, "%s: the archive directory is not a directory",
                            o->archivedir);
    struct stat dst;
    if (stat(o->datadir, &dst) == 0 && dst.st_dev == st.st_dev && dst.st_ino == st.st_ino)
        return pm_error_set(err, PM_EUSAGE, "%s: the archive directory is the data directory",
                            o->archivedir);
    ctx c = {.store = s, .o = o, .rep = rep, .notice = notice, .user = user};
    if (snprintf(c.faildir, sizeof c.faildir, "%s/failed", o->archivedir) >= (int)sizeof c.faildir)
        return pm_error_set(err, PM_EUSAGE, "%s: path too long", o->archivedir);
    cand *files = NULL;
    size_t n = 0;
    int rc = list_files(o->datadir, &files, &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        take_one(&c, files[i].name);
    free_cands(files, n);
    return 0;
}
