/* Open a profile file and decode it by content. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bin_format.h"
#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/profile.h"

static int json_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Does h[k..span) hold "format" : "perfmon-profile" (JSON whitespace
 * allowed around the colon, as any JSON tool may rewrite it)? */
static int format_key_at(const char *h, size_t k, size_t span)
{
    static const char key[] = "\"format\"", val[] = "\"perfmon-profile\"";
    if (span - k < sizeof key - 1 || memcmp(h + k, key, sizeof key - 1) != 0)
        return 0;
    k += sizeof key - 1;
    while (k < span && json_ws(h[k]))
        k++;
    if (k >= span || h[k++] != ':')
        return 0;
    while (k < span && json_ws(h[k]))
        k++;
    return span - k >= sizeof val - 1 && memcmp(h + k, val, sizeof val - 1) == 0;
}

int pm_profile_sniff(const void *head, size_t len)
{
    const char *h = head;
    if (len >= PM_BIN_MAGIC_LEN && memcmp(h, PM_BIN_MAGIC, PM_BIN_MAGIC_LEN) == 0)
        return PM_FMT_BIN;
    size_t i = 0;
    while (i < len && json_ws(h[i]))
        i++;
    if (i < len && h[i] == '{') {
        /* The writer puts the format key first; accept it anywhere within
         * the first line's first 4 KiB. */
        size_t lim = len < 4096 ? len : 4096;
        const char *nl = memchr(h + i, '\n', lim - i);
        size_t span = nl ? (size_t)(nl - h) : lim;
        for (size_t k = i; k < span; k++)
            if (h[k] == '"' && format_key_at(h, k, span))
                return PM_FMT_JSONL;
    }
    return PM_FMT_UNKNOWN;
}

int pm_profile_read(const char *path, pm_profile **out, pm_error *err)
{
    return pm_profile_read_hinted(path, NULL, NULL, out, err);
}

void pm_read_buf_free(pm_read_buf *b)
{
    if (b->in_block)
        pm_block_free(b->p, b->cap);
    else
        free(b->p);
    memset(b, 0, sizeof *b);
}

/* Room for n bytes (the old contents are not kept). */
static int buf_room(pm_read_buf *b, size_t n)
{
    if (n <= b->cap)
        return 0;
    size_t cap = b->cap * 2 > n ? b->cap * 2 : n;
    pm_read_buf_free(b);
    b->p = pm_block_alloc(cap);
    b->in_block = b->p != NULL;
    if (!b->p)
        b->p = malloc(cap);
    if (!b->p)
        return PM_ENOMEM;
    b->cap = cap;
    return 0;
}

static int decode(const char *path, const unsigned char *buf, size_t len, const pm_read_hint *hint,
                  pm_profile **out, pm_error *err)
{
    switch (pm_profile_sniff(buf, len)) {
    case PM_FMT_BIN: return pm_profile_decode_bin_hinted(path, buf, len, hint, out, err);
    case PM_FMT_JSONL:
        return pm_profile_decode_jsonl_hinted(path, (const char *)buf, len, hint, out, err);
    default: return pm_error_set(err, PM_EFORMAT, "%s: not a perfmon profile", path);
    }
}

int pm_profile_read_hinted(const char *path, const pm_read_hint *hint, pm_read_buf *rb,
                           pm_profile **out, pm_error *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot open", path);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return pm_error_set(err, PM_EIO, "%s: not a regular file", path);
    }
    size_t len = (size_t)st.st_size;
    if (len == 0) {
        close(fd);
        return pm_error_set(err, PM_EFORMAT, "%s: empty file", path);
    }
    if (rb && len <= PM_READ_BUF_MAX) {
        /* Copied into the caller's buffer (one NUL after the text): the
         * kernel copies from its page cache faster than this process can
         * walk a fresh mapping of it 4 KiB at a time. */
        if (len > SIZE_MAX - 1 || buf_room(rb, len + 1)) {
            close(fd);
            return pm_error_set(err, PM_ENOMEM, "%s: out of memory for %zu bytes", path, len);
        }
        int full = 0;
        ssize_t got = pm_read_fd(fd, (char *)rb->p, len + 1, &full);
        int rerr = got < 0 ? (int)-got : 0;
        close(fd);
        if (got < 0)
            return pm_error_sys(err, PM_EIO, rerr, "%s: cannot read", path);
        if (got == 0)
            return pm_error_set(err, PM_EFORMAT, "%s: empty file", path);
        rb->p[got] = 0;
        return decode(path, rb->p, (size_t)got, hint, out, err);
    }
    /* MAP_POPULATE maps every page in one call: faulting them in one by
     * one (16 at a time) costs more than decoding them on a VM. */
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    int merr = errno;
    close(fd);
    if (map == MAP_FAILED)
        return pm_error_sys(err, PM_EIO, merr, "%s: cannot map", path);
    madvise(map, len, MADV_SEQUENTIAL);
    int rc = decode(path, map, len, hint, out, err);
    munmap(map, len);
    return rc;
}
