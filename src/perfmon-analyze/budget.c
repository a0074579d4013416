/* The in-memory analysis's estimated peak and the memory available
 * (budget.h; docs/analysis.md, "When it is chosen"). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budget.h"
#include "perfmon/endian.h"
#include "perfmon/fileio.h"
#include "perfmon/parse.h"
#include "perfmon/profile.h"
#include "perfmon/strs.h"

#define HEAD_BYTES ((size_t)64 << 10)
#define HEADER_MAX ((size_t)16 << 20) /* a binary header or footer read whole */
#define REC_HEAD 8                    /* u32 length, u8 type, 3 zero */
#define REC_CRC 4
#define PREAMBLE 16
#define TEXT_BYTES_PER_VALUE 16

static ssize_t pread_full(int fd, unsigned char *buf, size_t len, off_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, buf + got, len - got, off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* The columns (header field tag 12) of a binary profile's header record at
 * offset 16; 0 when it cannot be read. */
static size_t bin_columns(int fd, uint64_t size, uint64_t *body)
{
    unsigned char h[REC_HEAD];
    if (size < PREAMBLE + REC_HEAD + REC_CRC || pread_full(fd, h, REC_HEAD, PREAMBLE) != REC_HEAD)
        return 0;
    uint32_t len = pm_get_u32(h);
    if (h[4] != 1 || len > HEADER_MAX || len > size - PREAMBLE - REC_HEAD - REC_CRC)
        return 0;
    unsigned char *p = malloc(len ? len : 1);
    if (!p)
        return 0;
    size_t n = 0;
    if (pread_full(fd, p, len, PREAMBLE + REC_HEAD) == (ssize_t)len) {
        /* fields: u16 tag, u16 zero, u32 length, bytes */
        for (size_t i = 0; len - i >= 8;) {
            uint32_t fl = pm_get_u32(p + i + 4);
            if (fl > len - i - 8)
                break;
            n += pm_get_u16(p + i) == 12;
            i += 8 + (size_t)fl;
        }
    }
    free(p);
    *body = PREAMBLE + REC_HEAD + (uint64_t)len + REC_CRC;
    return n;
}

/* Samples of a version 2 or 3 file from its footer (docs/format.md,
 * "Index"): the last key sample's number scaled by the bytes after it;
 * 0 when there is no valid footer. */
static double bin_footer_samples(int fd, uint64_t size, uint64_t body)
{
    unsigned char t[4];
    if (size < body + REC_HEAD + 4 + REC_CRC ||
        pread_full(fd, t, 4, (off_t)(size - REC_CRC - 4)) != 4)
        return 0;
    uint32_t plen = pm_get_u32(t);
    if (plen < 16 + 4 || plen > HEADER_MAX || plen > size - body - REC_HEAD - REC_CRC)
        return 0;
    uint64_t at = size - REC_CRC - plen - REC_HEAD;
    unsigned char *p = malloc((size_t)plen + REC_HEAD);
    if (!p)
        return 0;
    double samples = 0;
    if (pread_full(fd, p, (size_t)plen + REC_HEAD, (off_t)at) == (ssize_t)plen + REC_HEAD &&
        pm_get_u32(p) == plen && p[4] == 8) {
        uint32_t cnt = pm_get_u32(p + REC_HEAD + 8);
        if (cnt > 0 && (uint64_t)cnt * 32 + 16 + 4 == plen) {
            const unsigned char *e = p + REC_HEAD + 16 + (size_t)(cnt - 1) * 32;
            uint64_t off = pm_get_u64(e + 16), num = pm_get_u64(e + 24);
            if (off > body && off < size && num < ((uint64_t)1 << 48))
                samples = (double)num * (double)(size - body) / (double)(off - body) + 1;
        }
    }
    free(p);
    return samples;
}

static double bin_values(int fd, uint64_t size, const unsigned char *head)
{
    uint32_t version = pm_get_u32(head + 8);
    uint64_t body = 0;
    size_t ncols = bin_columns(fd, size, &body);
    if (!ncols || body >= size)
        return 0;
    double samples;
    if (version == 1) {
        /* mono, wall, the presence bitmap and the values: a fixed size */
        double rec = REC_HEAD + 16 + (double)((ncols + 7) / 8) + 8.0 * (double)ncols + REC_CRC;
        samples = floor((double)(size - body) / rec);
    } else {
        samples = bin_footer_samples(fd, size, body);
        if (samples <= 0) /* no footer (kill -9): the typical size */
            samples = (double)(size - body) / (1.5 * (double)ncols + 16);
    }
    return samples * (double)ncols;
}

/* JSON Lines: the header line's columns, the samples from the mean length
 * of the sample lines that follow it in head. */
static double jsonl_values(const char *head, size_t len, uint64_t size)
{
    const char *nl = memchr(head, '\n', len);
    if (!nl) /* a header line longer than head: as any other text */
        return (double)size / TEXT_BYTES_PER_VALUE;
    cJSON *h = cJSON_ParseWithLength(head, (size_t)(nl - head));
    double ncols = (double)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(h, "columns"));
    cJSON_Delete(h);
    if (ncols <= 0)
        return (double)size / TEXT_BYTES_PER_VALUE;
    const char *first = nl + 1, *p = first, *end = head + len, *last = first;
    size_t lines = 0;
    while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
        lines++;
        p = last = nl + 1;
    }
    if (!lines || last == first)
        return ncols; /* one sample at most */
    double mean = (double)(last - first) / (double)lines;
    return ncols * (double)(size - (uint64_t)(first - head)) / mean;
}

/* One file's values: 0 when unreadable. */
static double file_values(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return 0;
    struct stat st;
    double v = 0;
    unsigned char *head = malloc(HEAD_BYTES);
    if (head && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        uint64_t size = (uint64_t)st.st_size;
        ssize_t n = pread_full(fd, head, HEAD_BYTES, 0);
        if (n >= PREAMBLE) {
            switch (pm_profile_sniff(head, (size_t)n)) {
            case PM_FMT_BIN: v = bin_values(fd, size, head); break;
            case PM_FMT_JSONL: v = jsonl_values((const char *)head, (size_t)n, size); break;
            default: v = (double)size / TEXT_BYTES_PER_VALUE; break;
            }
        }
    }
    free(head);
    close(fd);
    return v;
}

/* The length of name without its last extension. */
static size_t stem_len(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return (size_t)((dot && dot != base ? dot : base + strlen(base)) - path);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sum a directory's regular files, the larger of each run's two forms. */
static void estimate_dir(const char *dir, pm_mem_estimate *out, double *values)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 100000) {
        char path[4096];
        if (e->d_name[0] == '.' || pm_path_join(path, sizeof path, dir, e->d_name) != 0)
            continue;
        if (pm_strs_add(&names, &n, "%s", path))
            break;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n;) {
        size_t sl = stem_len(names[i]), j = i;
        double best = 0;
        for (; j < n && stem_len(names[j]) == sl && strncmp(names[i], names[j], sl) == 0; j++) {
            double v = file_values(names[j]);
            best = v > best ? v : best;
        }
        out->files += best > 0;
        *values += best;
        i = j;
    }
    pm_strs_free(names, n);
}

int pm_mem_estimate_inputs(const char *const *paths, size_t npaths, pm_mem_estimate *out)
{
    memset(out, 0, sizeof *out);
    double values = 0;
    for (size_t i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            estimate_dir(paths[i], out, &values);
        } else {
            double v = file_values(paths[i]);
            out->files += v > 0;
            values += v;
        }
    }
    double bytes = values * PM_EST_BYTES_PER_VALUE + (double)PM_EST_BASE_BYTES;
    out->values = values < 1.8e19 ? (uint64_t)values : UINT64_MAX;
    out->bytes = bytes < 1.8e19 ? (uint64_t)bytes : UINT64_MAX;
    return 0;
}

/* --- the budget ------------------------------------------------------- */

/* A decimal file (memory.max, memory.current, memory.limit_in_bytes): the
 * number, or UINT64_MAX for "max", absent or malformed. */
static uint64_t read_number(const char *root, const char *dir, const char *name)
{
    char path[4096], buf[64];
    if (snprintf(path, sizeof path, "%s%s/%s", root, dir, name) >= (int)sizeof path)
        return UINT64_MAX;
    int full = 0;
    ssize_t n = pm_read_small(AT_FDCWD, path, buf, sizeof buf, &full);
    if (n <= 0 || full)
        return UINT64_MAX;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    uint64_t v;
    return pm_parse_u64(buf, &v) == 0 ? v : UINT64_MAX;
}

/* The headroom (limit less use) of the cgroup at base + rel and each of
 * its parents: the least; UINT64_MAX when no level has a limit. */
static uint64_t cgroup_headroom(const char *root, const char *base, const char *rel,
                                const char *limit_name, const char *use_name)
{
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s%s", base, rel) >= (int)sizeof dir)
        return UINT64_MAX;
    size_t blen = strlen(base);
    uint64_t least = UINT64_MAX;
    for (;;) {
        uint64_t lim = read_number(root, dir, limit_name);
        /* cgroup v1 says "no limit" with a huge number (PAGE_COUNTER_MAX pages) */
        if (lim != UINT64_MAX && lim < ((uint64_t)1 << 62)) {
            uint64_t use = read_number(root, dir, use_name);
            uint64_t room = use == UINT64_MAX ? lim : use >= lim ? 0 : lim - use;
            least = room < least ? room : least;
        }
        char *slash = strrchr(dir + blen, '/');
        if (!slash)
            break;
        *slash = '\0';
    }
    return least;
}

/* A cgroup path from proc/self/cgroup must be absolute, without "..",
 * and printable. */
static int path_ok(const char *p)
{
    if (p[0] != '/' || strstr(p, "/../") || (strlen(p) >= 3 && !strcmp(p + strlen(p) - 3, "/..")))
        return 0;
    for (; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return 0;
    return 1;
}

void pm_mem_budget_read(const char *root, pm_mem_budget *out)
{
    out->available = out->cgroup = out->bytes = UINT64_MAX;
    char path[4096], buf[8192];
    int full = 0;
    uint64_t kb;
    snprintf(path, sizeof path, "%s/proc/meminfo", root);
    if (pm_read_small(AT_FDCWD, path, buf, sizeof buf, &full) > 0 &&
        pm_kv_u64(buf, "MemAvailable", &kb) == 0 && kb < ((uint64_t)1 << 52))
        out->available = kb * 1024;
    snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
    if (pm_read_small(AT_FDCWD, path, buf, sizeof buf, &full) > 0) {
        /* proc/self/cgroup (cgroups(7)): "hierarchy-ID:controllers:path" */
        char *cur = buf, *line;
        while ((line = pm_next_line(&cur))) {
            char *c1 = strchr(line, ':');
            char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
            if (!c2 || !path_ok(c2 + 1))
                continue;
            *c1 = *c2 = '\0';
            const char *ctl = c1 + 1, *rel = c2 + 1;
            if (strcmp(rel, "/") == 0)
                rel = "";
            uint64_t room = UINT64_MAX;
            if (strcmp(line, "0") == 0 && *ctl == '\0') {
                room = cgroup_headroom(root, "/sys/fs/cgroup", rel, "memory.max", "memory.current");
            } else {
                char ctls[256];
                snprintf(ctls, sizeof ctls, ",%s,", ctl);
                if (strstr(ctls, ",memory,"))
                    room = cgroup_headroom(root, "/sys/fs/cgroup/memory", rel,
                                           "memory.limit_in_bytes", "memory.usage_in_bytes");
            }
            out->cgroup = room < out->cgroup ? room : out->cgroup;
        }
    }
    out->bytes = out->available < out->cgroup ? out->available : out->cgroup;
}

int pm_parse_size(const char *s, uint64_t *out)
{
    if (!s)
        return -1;
    char buf[64];
    size_t len = strlen(s);
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len + 1);
    double mult = 1;
    char *unit = buf;
    while (*unit && (*unit == '.' || (*unit >= '0' && *unit <= '9')))
        unit++;
    if (*unit) {
        static const char sfx[] = "KMGT";
        const char *k = strchr(sfx, *unit >= 'a' ? *unit - 32 : *unit);
        if (!k || !*k)
            return -1;
        mult = ldexp(1, 10 * (int)(k - sfx + 1));
        if (strcmp(unit + 1, "") && strcmp(unit + 1, "B") && strcmp(unit + 1, "iB"))
            return -1;
        *unit = '\0';
    }
    double v;
    if (unit == buf || pm_parse_double(buf, &v) != 0 || !(v > 0))
        return -1;
    v *= mult;
    if (!(v >= 1 && v <= ldexp(1, 62)))
        return -1;
    *out = (uint64_t)v;
    return 0;
}
