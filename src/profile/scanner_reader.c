/* Scanner profile reader (layout in perfmon/scanner.h and docs/format.md,
 * after scannerpy's profiler reader and write_profiler_to_file).  Every
 * field is taken through one cursor that checks the bytes left first;
 * every count is checked against what the remaining bytes could hold
 * before it drives a loop, so no count from the file sizes anything. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/endian.h"
#include "perfmon/fileio.h"
#include "perfmon/scanner.h"

typedef struct cursor {
    const char *path;
    const unsigned char *p;
    size_t len, off;
    pm_error *err;
} cursor;

/* Smallest encodings, for the count checks: a worker with empty strings
 * and no keys, intervals or counters; a dictionary entry; an interval; a
 * counter. */
#define MIN_WORKER (8 + 1 + 1 + 8 + 8 + 8 + 8)
#define MIN_KEY 2
#define MIN_INTERVAL 17
#define MIN_COUNTER 9

static int truncated(cursor *c, const char *what, size_t need)
{
    return pm_error_set(c->err, PM_ETRUNC,
                        "%s: offset %zu: truncated: %s needs %zu bytes, %zu left", c->path, c->off,
                        what, need, c->len - c->off);
}

static int get_i64(cursor *c, const char *what, int64_t *v)
{
    if (c->len - c->off < 8)
        return truncated(c, what, 8);
    *v = (int64_t)pm_get_u64(c->p + c->off);
    c->off += 8;
    return 0;
}

static int get_u8(cursor *c, const char *what, unsigned *v)
{
    if (c->len - c->off < 1)
        return truncated(c, what, 1);
    *v = c->p[c->off++];
    return 0;
}

/* A NUL-terminated string of printable ASCII, copied into out. */
static int get_str(cursor *c, const char *what, char *out)
{
    size_t left = c->len - c->off;
    size_t lim = left < PM_SCANNER_STR_MAX + 1 ? left : PM_SCANNER_STR_MAX + 1;
    const unsigned char *s = c->p + c->off;
    const unsigned char *z = memchr(s, 0, lim);
    if (!z) {
        if (lim == left)
            return pm_error_set(c->err, PM_ETRUNC,
                                "%s: offset %zu: %s has no terminating NUL before the end of the "
                                "file",
                                c->path, c->off, what);
        return pm_error_set(c->err, PM_EFORMAT, "%s: offset %zu: %s longer than %d bytes (no NUL)",
                            c->path, c->off, what, PM_SCANNER_STR_MAX);
    }
    size_t n = (size_t)(z - s);
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x20 || s[i] > 0x7e)
            return pm_error_set(c->err, PM_EFORMAT,
                                "%s: offset %zu: %s has a byte 0x%02x that is not printable "
                                "ASCII",
                                c->path, c->off + i, what, s[i]);
    memcpy(out, s, n);
    out[n] = '\0';
    c->off += n + 1;
    return 0;
}

/* A count: non-negative, at most max, and no more than the bytes left
 * could hold at min_each bytes per item. */
static int get_count(cursor *c, const char *what, int64_t max, size_t min_each, size_t *n)
{
    size_t at = c->off;
    int64_t v = 0;
    int rc = get_i64(c, what, &v);
    if (rc)
        return rc;
    size_t left = c->len - c->off;
    if (v < 0 || v > max)
        return pm_error_set(c->err, PM_EFORMAT,
                            "%s: offset %zu: %s %" PRId64 " is corrupt (allowed 0 to %" PRId64 ")",
                            c->path, at, what, v, max);
    if ((uint64_t)v > left / min_each)
        return pm_error_set(c->err, PM_ETRUNC,
                            "%s: offset %zu: %s %" PRId64 " needs at least %" PRIu64
                            " bytes, %zu left (file truncated or count corrupt)",
                            c->path, at, what, v, (uint64_t)v * min_each, left);
    *n = (size_t)v;
    return 0;
}

typedef struct file_ctx {
    double t0_s;       /* the file's start, s since the epoch */
    size_t nintervals; /* so far, against PM_SCANNER_INTERVALS_MAX */
    int master;
} file_ctx;

/* One worker's profile (the seed's _parse_profiler_output). */
static int read_worker(cursor *c, file_ctx *f, pm_phase_set *out)
{
    char type[PM_SCANNER_STR_MAX + 1], tag[PM_SCANNER_STR_MAX + 1], name[PM_SCANNER_STR_MAX + 1];
    int64_t node, number;
    int rc;
    size_t at = c->off;
    if ((rc = get_i64(c, "worker node", &node)) || (rc = get_str(c, "worker type", type)) ||
        (rc = get_str(c, "worker tag", tag)) || (rc = get_i64(c, "worker number", &number)))
        return rc;
    if (node < 0)
        return pm_error_set(c->err, PM_EFORMAT, "%s: offset %zu: negative node %" PRId64, c->path,
                            at, node);
    if (!type[0])
        return pm_error_set(c->err, PM_EFORMAT, "%s: offset %zu: empty worker type", c->path,
                            at + 8);
    char host[48], track[2 * PM_SCANNER_STR_MAX + 48];
    if (f->master)
        snprintf(host, sizeof host, "master");
    else
        snprintf(host, sizeof host, "node %" PRId64, node);
    snprintf(track, sizeof track, "%s[%" PRId64 "]%s%s", type, number, tag[0] ? "/" : "", tag);

    /* Key dictionary: index byte -> name.  The names live in one block
     * (256 * 1025 bytes at most), allocated once the count is known. */
    size_t nkeys;
    if ((rc = get_count(c, "key count", PM_SCANNER_KEYS_MAX, MIN_KEY, &nkeys)))
        return rc;
    char *names = nkeys ? malloc(nkeys * (PM_SCANNER_STR_MAX + 1)) : NULL;
    int slot[PM_SCANNER_KEYS_MAX];
    for (size_t i = 0; i < PM_SCANNER_KEYS_MAX; i++)
        slot[i] = -1;
    if (nkeys && !names)
        return pm_error_set(c->err, PM_ENOMEM, "%s: out of memory", c->path);
    for (size_t k = 0; k < nkeys; k++) {
        char *kn = names + k * (PM_SCANNER_STR_MAX + 1);
        unsigned idx;
        if ((rc = get_str(c, "key name", kn)))
            goto out;
        at = c->off;
        if ((rc = get_u8(c, "key index", &idx)))
            goto out;
        if (slot[idx] >= 0) {
            rc = pm_error_set(c->err, PM_EFORMAT, "%s: offset %zu: key index %u given twice",
                              c->path, at, idx);
            goto out;
        }
        slot[idx] = (int)k;
    }

    size_t niv;
    if ((rc = get_count(c, "interval count", PM_SCANNER_INTERVALS_MAX, MIN_INTERVAL, &niv)))
        goto out;
    if (niv > PM_SCANNER_INTERVALS_MAX - f->nintervals) {
        rc = pm_error_set(c->err, PM_ELIMIT, "%s: offset %zu: more than %d intervals in the file",
                          c->path, c->off - 8, PM_SCANNER_INTERVALS_MAX);
        goto out;
    }
    f->nintervals += niv;
    for (size_t i = 0; i < niv; i++) {
        unsigned idx;
        int64_t s, e;
        at = c->off;
        if ((rc = get_u8(c, "interval key index", &idx)) ||
            (rc = get_i64(c, "interval start", &s)) || (rc = get_i64(c, "interval end", &e)))
            goto out;
        if (slot[idx] < 0) {
            rc = pm_error_set(c->err, PM_EFORMAT,
                              "%s: offset %zu: interval key index %u is not in the dictionary",
                              c->path, at, idx);
            goto out;
        }
        if (e < s) {
            rc = pm_error_set(c->err, PM_EFORMAT,
                              "%s: offset %zu: interval ends (%" PRId64
                              " ns) before it starts (%" PRId64 " ns)",
                              c->path, at, e, s);
            goto out;
        }
        const char *key = names + (size_t)slot[idx] * (PM_SCANNER_STR_MAX + 1);
        /* Differences in int64 could overflow on hostile values; doubles
         * keep microseconds for any real run. */
        double d = (double)e - (double)s;
        int64_t dns = d >= 9.2e18 ? INT64_MAX : e - s;
        if (pm_phase_add(out, host, key, "", track, f->t0_s + (double)s / 1e9,
                         f->t0_s + (double)e / 1e9, "{}") ||
            pm_phase_counter_add(out, type, key, 1, dns)) {
            rc = pm_error_set(c->err, PM_ENOMEM, "%s: out of memory", c->path);
            goto out;
        }
    }

    size_t ncounters;
    if ((rc = get_count(c, "counter count", PM_SCANNER_COUNTERS_MAX, MIN_COUNTER, &ncounters)))
        goto out;
    for (size_t i = 0; i < ncounters; i++) {
        int64_t v;
        if ((rc = get_str(c, "counter name", name)) || (rc = get_i64(c, "counter value", &v)))
            goto out;
        if (pm_phase_counter_add(out, type, name, 0, v)) {
            rc = pm_error_set(c->err, PM_ENOMEM, "%s: out of memory", c->path);
            goto out;
        }
    }
out:
    free(names);
    return rc;
}

/* Read one worker into a scratch set and move it to out only when whole,
 * so a damaged worker leaves nothing half-read behind. */
static int worker_into(cursor *c, file_ctx *f, pm_phase_set *out)
{
    pm_phase_set w = {0};
    int rc = read_worker(c, f, &w);
    if (!rc && pm_phase_set_take(out, &w))
        rc = pm_error_set(c->err, PM_ENOMEM, "%s: out of memory", c->path);
    pm_phase_set_free(&w);
    return rc;
}

int pm_scanner_sniff(const void *head, size_t len)
{
    const unsigned char *h = head;
    if (len < 8 + 8 + 8 + 2)
        return 0;
    int64_t start = (int64_t)pm_get_u64(h), end = (int64_t)pm_get_u64(h + 8);
    int64_t node = (int64_t)pm_get_u64(h + 16);
    /* Times since the epoch, up to the year 2200; fewer than 2^20 nodes. */
    if (start < 0 || end < start || end > (int64_t)7258118400 * 1000000000 || node < 0 ||
        node >= 1 << 20)
        return 0;
    size_t i = 24, n = 0;
    for (; i < len && h[i]; i++, n++)
        if (h[i] < 0x20 || h[i] > 0x7e || n >= 64)
            return 0;
    return i < len && n > 0;
}

int pm_scanner_decode(const char *path, const unsigned char *buf, size_t len, pm_phase_set *out,
                      size_t *nworkers, pm_error *err)
{
    cursor c = {path, buf, len, 0, err};
    file_ctx f = {0};
    size_t nw = 0;
    int64_t start = 0, end = 0;
    int rc;
    if (nworkers)
        *nworkers = 0;
    if ((rc = get_i64(&c, "start time", &start)) || (rc = get_i64(&c, "end time", &end)))
        return rc;
    if (start < 0 || end < start)
        return pm_error_set(err, PM_EFORMAT,
                            "%s: offset 0: start %" PRId64 " ns and end %" PRId64
                            " ns are not a time span",
                            path, start, end);
    f.t0_s = (double)start / 1e9;
    /* A master file is one worker and nothing after it, which is known
     * only once the first worker is read: a dry run over it decides.  A
     * node's file cut right after its process_job worker is truncated. */
    pm_phase_set dry = {0};
    rc = read_worker(&c, &f, &dry);
    pm_phase_set_free(&dry);
    if (rc)
        return rc;
    static const char job[] = "process_job"; /* the first worker of a node's file */
    f.master = c.off == len && !(len - 24 >= sizeof job && memcmp(buf + 24, job, sizeof job) == 0);
    c.off = 16;
    f.nintervals = 0;
    if ((rc = worker_into(&c, &f, out)))
        return rc;
    nw = 1;
    if (!f.master) {
        /* Groups: load workers, eval workers (per_chain each), save workers. */
        unsigned nload, neval, per_chain, nsave;
        if ((rc = get_u8(&c, "load worker count", &nload)))
            goto done;
        for (unsigned i = 0; i < nload; i++, nw++)
            if ((rc = worker_into(&c, &f, out)))
                goto done;
        if ((rc = get_u8(&c, "eval worker count", &neval)) ||
            (rc = get_u8(&c, "eval groups per chain", &per_chain)))
            goto done;
        for (unsigned i = 0; i < neval * per_chain; i++, nw++)
            if ((rc = worker_into(&c, &f, out)))
                goto done;
        if ((rc = get_u8(&c, "save worker count", &nsave)))
            goto done;
        for (unsigned i = 0; i < nsave; i++, nw++)
            if ((rc = worker_into(&c, &f, out)))
                goto done;
        if (c.off != len) {
            rc = pm_error_set(err, PM_EFORMAT, "%s: offset %zu: %zu bytes after the last worker",
                              path, c.off, len - c.off);
            goto done;
        }
    }
done:
    /* The span counts even when a later worker is damaged: the workers
     * before it are kept. */
    if (!out->scanner_files || start < out->scanner_start_ns)
        out->scanner_start_ns = start;
    if (!out->scanner_files || end > out->scanner_end_ns)
        out->scanner_end_ns = end;
    out->scanner_files++;
    /* 0 <= start <= end: the difference cannot overflow. */
    out->scanner_total_s = (double)(out->scanner_end_ns - out->scanner_start_ns) / 1e9;
    if (nworkers)
        *nworkers = nw;
    return rc;
}

int pm_scanner_read(const char *path, pm_phase_set *out, size_t *nworkers, pm_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    if (nworkers)
        *nworkers = 0;
    int rc = pm_read_whole(path, PM_SCANNER_FILE_MAX, &buf, &len, err);
    if (rc)
        return rc;
    rc = pm_scanner_decode(path, (const unsigned char *)buf, len, out, nworkers, err);
    free(buf);
    return rc;
}
