/* Writing events files: one locked append per phase mark, so concurrent
 * markers on a node never interleave (docs/format.md, "Events").  Kept
 * apart from the reader so that perfmon-sample links only libc. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "events_internal.h"
#include "perfmon/buf.h"
#include "perfmon/fileio.h"
#include "perfmon/phase.h"
#include "perfmon/strs.h"

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= PM_EVENT_NAME_MAX)
        return 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 0;
    return 1;
}

int pm_event_append(const char *dir, const char *host, const char *name, int edge, double diff_s,
                    const char *const *attrs, size_t nattrs, pm_error *err)
{
    if (!valid_name(name))
        return pm_error_set(err, PM_EUSAGE, "phase name must be 1 to %d printable bytes",
                            PM_EVENT_NAME_MAX - 1);
    if (edge < PM_EDGE_START || edge > PM_EDGE_ONESHOT)
        return pm_error_set(err, PM_EUSAGE, "edge must be start, end or once");
    if (edge == PM_EDGE_ONESHOT && !(isfinite(diff_s) && diff_s >= 0))
        return pm_error_set(err, PM_EUSAGE, "a one-shot phase needs diff=SECONDS (>= 0)");
    if (nattrs > PM_EVENT_ATTRS_MAX)
        return pm_error_set(err, PM_EUSAGE, "at most %d attributes", PM_EVENT_ATTRS_MAX);
    /* Clocks first: the event's time is when it was asked for. */
    int64_t wall = clock_ns(CLOCK_REALTIME), mono = clock_ns(CLOCK_MONOTONIC);

    pm_buf b;
    pm_buf_init(&b);
    pm_buf_printf(&b, "%s1,\"host\":", PM_EVENT_MAGIC);
    pm_buf_json_str(&b, host);
    pm_buf_printf(&b,
                  ",\"pid\":%d,\"wall_ns\":\"%lld\",\"mono_ns\":\"%lld\",\"name\":", (int)getpid(),
                  (long long)wall, (long long)mono);
    pm_buf_json_str(&b, name);
    pm_buf_printf(&b, ",\"edge\":\"%s\"", PM_EDGE_NAMES[edge]);
    if (edge == PM_EDGE_ONESHOT)
        pm_buf_printf(&b, ",\"diff_s\":%.9g", diff_s);
    pm_buf_puts(&b, ",\"attrs\":{");
    for (size_t i = 0; i < nattrs; i++) {
        const char *eq = strchr(attrs[i], '=');
        if (!eq || eq == attrs[i]) {
            pm_buf_free(&b);
            return pm_error_set(err, PM_EUSAGE, "attribute \"%s\" is not KEY=VALUE", attrs[i]);
        }
        char key[PM_EVENT_NAME_MAX];
        size_t kl = (size_t)(eq - attrs[i]);
        if (kl >= sizeof key) {
            pm_buf_free(&b);
            return pm_error_set(err, PM_EUSAGE, "attribute name too long in \"%s\"", attrs[i]);
        }
        memcpy(key, attrs[i], kl);
        key[kl] = 0;
        if (i)
            pm_buf_puts(&b, ",");
        pm_buf_json_str(&b, key);
        pm_buf_puts(&b, ":");
        pm_buf_json_str(&b, eq + 1);
    }
    pm_buf_puts(&b, "}}\n");
    if (b.oom) {
        pm_buf_free(&b);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    if (b.len > PM_EVENT_LINE_MAX) {
        pm_buf_free(&b);
        return pm_error_set(err, PM_EUSAGE,
                            "event too long (%d bytes at most): shorten the "
                            "attributes",
                            PM_EVENT_LINE_MAX);
    }

    char safe[256], file[300], path[4400];
    pm_sanitize_name(host, safe, sizeof safe);
    snprintf(file, sizeof file, "%s.events", safe);
    if (pm_path_join(path, sizeof path, dir, file) != 0) {
        pm_buf_free(&b);
        return pm_error_set(err, PM_EUSAGE, "%s: path too long", dir);
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        int e = errno;
        pm_buf_free(&b);
        return pm_error_sys(err, PM_EIO, e, "%s: cannot open", path);
    }
    /* O_APPEND makes each write land whole at the end on a local file
     * system; the record lock does the same over NFS, where appends are
     * not atomic between clients. */
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    int rc = 0;
    while (fcntl(fd, F_SETLKW, &lk) != 0) {
        if (errno == EINTR)
            continue;
        if (errno == ENOLCK || errno == EOPNOTSUPP)
            break; /* no locks here: O_APPEND alone */
        rc = pm_error_sys(err, PM_EIO, errno, "%s: cannot lock", path);
        break;
    }
    if (rc == 0) {
        ssize_t w;
        do
            w = write(fd, b.data, b.len);
        while (w < 0 && errno == EINTR);
        if (w < 0)
            rc = pm_error_sys(err, PM_EIO, errno, "%s: write failed", path);
        else if ((size_t)w != b.len)
            rc = pm_error_set(err, PM_EIO, "%s: short write (%zd of %zu bytes): disk full?", path,
                              w, b.len);
        else if (fdatasync(fd) != 0 && errno != EINVAL)
            rc = pm_error_sys(err, PM_EIO, errno, "%s: cannot sync", path);
    }
    if (close(fd) != 0 && rc == 0)
        rc = pm_error_sys(err, PM_EIO, errno, "%s: close failed", path);
    pm_buf_free(&b);
    return rc;
}
