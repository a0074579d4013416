/* The --ipc stop file: inotify on its directory, and a read at least once a
 * second for what inotify cannot see (see ipc.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/ipc.h"

/* Not IN_MODIFY: the sampler's own profile may live in the same directory
 * and would wake it at every write.  `echo FINISHED > FILE`, an editor's
 * save and `mv tmp FILE` all end in one of these. */
#define WATCH_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF)

int pm_ipc_says_finished(const char *path)
{
    if (!path)
        return 0;
    /* O_NONBLOCK: a FIFO given by mistake must not hang the sampler. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    char buf[256];
    int finished = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pm_read_fd(fd, buf, sizeof buf, NULL) > 0)
        finished = strstr(buf, "FINISHED") != NULL;
    close(fd);
    return finished;
}

static void add_watch(pm_ipc *w)
{
    if (w->ifd >= 0 && w->wd < 0 && w->name[0])
        w->wd = inotify_add_watch(w->ifd, w->dir, WATCH_MASK | IN_ONLYDIR);
}

int pm_ipc_open(pm_ipc *w, const char *path, int reset, int64_t now_ns, pm_error *err)
{
    memset(w, 0, sizeof *w);
    w->path = path;
    w->ifd = w->wd = -1;
    w->next_poll = now_ns + PM_IPC_POLL_NS;
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    size_t dlen = slash ? (size_t)(slash - path) : 0;
    if (slash && dlen == 0)
        dlen = 1; /* "/FILE" */
    if (!slash)
        snprintf(w->dir, sizeof w->dir, ".");
    else if (dlen < sizeof w->dir)
        snprintf(w->dir, sizeof w->dir, "%.*s", (int)dlen, path);
    /* A name that cannot be watched is still read every second. */
    if (w->dir[0] && *name && strlen(name) < sizeof w->name)
        snprintf(w->name, sizeof w->name, "%s", name);
    if (w->name[0]) {
        w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        add_watch(w);
    }

    if (!pm_ipc_says_finished(path))
        return 0;
    if (!reset)
        return pm_error_set(err, PM_EUSAGE,
                            "--ipc %s already says FINISHED (left by an earlier "
                            "run, e.g. a requeued job): remove the file or add --ipc-reset, "
                            "then start again",
                            path);
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return pm_error_sys(err, PM_EIO, errno, "--ipc-reset: %s: cannot empty it", path);
    close(fd);
    return 0;
}

int pm_ipc_fd(const pm_ipc *w)
{
    return w->ifd;
}

int64_t pm_ipc_deadline(const pm_ipc *w)
{
    return w->next_poll;
}

/* Read the queued events; returns 1 when one may concern the file. */
static int drain(pm_ipc *w)
{
    alignas(struct inotify_event) char buf[4096];
    int look = 0;
    for (;;) {
        ssize_t n = read(w->ifd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return look;
        size_t off = 0;
        while (off + sizeof(struct inotify_event) <= (size_t)n) {
            struct inotify_event ev;
            memcpy(&ev, buf + off, sizeof ev);
            size_t next = off + sizeof ev + ev.len;
            if (next > (size_t)n)
                break;
            if (ev.mask & IN_Q_OVERFLOW)
                look = 1;
            if (ev.wd == w->wd && (ev.mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF))) {
                /* The directory went away or moved: watch the path again
                 * at the next poll. */
                if (!(ev.mask & IN_IGNORED))
                    inotify_rm_watch(w->ifd, w->wd);
                w->wd = -1;
                look = 1;
            }
            if (ev.len) {
                const char *nm = buf + off + sizeof ev;
                size_t l = strnlen(nm, ev.len);
                if (l < ev.len && strcmp(nm, w->name) == 0)
                    look = 1;
            }
            off = next;
        }
    }
}

int pm_ipc_check(pm_ipc *w, int64_t now_ns)
{
    int look = w->ifd >= 0 && drain(w);
    if (now_ns >= w->next_poll) {
        look = 1;
        w->next_poll = now_ns + PM_IPC_POLL_NS;
        add_watch(w);
    }
    return look && pm_ipc_says_finished(w->path);
}

void pm_ipc_close(pm_ipc *w)
{
    if (w->ifd >= 0)
        close(w->ifd);
    w->ifd = w->wd = -1;
}
