/* Append-only profile writers.  Binary layout: docs/format.md. */
#include "perfmon/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bin_codec.h"
#include "bin_format.h"
#include "perfmon/buf.h"
#include "perfmon/crc32c.h"
#include "perfmon/endian.h"
#include "perfmon/fileio.h"
#include "perfmon/mem.h"

struct pm_writer {
    int fd; /* read-write, so that pm_writer_restore can copy it */
    int format;
    int version; /* binary: 1, 2 or 3 */
    char *path;
    off_t size; /* bytes of complete records written */
    size_t ncols;
    pm_column *cols;
    unsigned char *rec; /* binary sample record scratch */
    size_t rec_size;
    pm_buf line; /* JSON line scratch */
    /* Version 2 (bin_codec.h): the encoder, when the next key sample is
     * due, and the key samples not yet in an index record. */
    pm_codec codec;
    size_t since_key; /* samples since the last key sample */
    int64_t key_mono;
    int force_key; /* the last sample did not reach the file */
    uint64_t nsamples;
    off_t last_index; /* offset of the last index record, 0 = none */
    size_t npending;
    unsigned char pending[2 * PM_INDEX_EVERY][PM_INDEX_ENTRY];
};

size_t pm_bin_sample_size(size_t ncols)
{
    return PM_REC_HEAD + 16 + (ncols + 7) / 8 + 8 * ncols + PM_REC_TAIL;
}

/* A record goes out whole or not at all: when a write fails part way (a
 * full disk takes what fits), the file is cut back to its last complete
 * record, so it stays well-formed and a later record follows cleanly. */
static int write_checked(pm_writer *w, const void *buf, size_t len, pm_error *err)
{
    int rc = pm_write_all(w->fd, buf, len);
    if (rc != 0) {
        if (ftruncate(w->fd, w->size) != 0)
            return pm_error_sys(err, PM_EIO, -rc, "%s: write failed, and a torn record is left",
                                w->path);
        return pm_error_sys(err, PM_EIO, -rc, "%s: write failed", w->path);
    }
    w->size += (off_t)len;
    return 0;
}

/* Frame payload as a record (head + payload + CRC) and write it at once. */
static int write_record(pm_writer *w, int type, const unsigned char *payload, size_t plen,
                        pm_error *err)
{
    if (plen > PM_MAX_RECORD_BYTES)
        return pm_error_set(err, PM_ELIMIT, "%s: record of %zu bytes exceeds the limit", w->path,
                            plen);
    size_t total = PM_REC_HEAD + plen + PM_REC_TAIL;
    unsigned char *r = malloc(total);
    if (!r)
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", w->path);
    pm_put_u32(r, (uint32_t)plen);
    r[4] = (unsigned char)type;
    r[5] = r[6] = r[7] = 0;
    if (plen)
        memcpy(r + PM_REC_HEAD, payload, plen);
    pm_put_u32(r + PM_REC_HEAD + plen, pm_crc32c(0, r, PM_REC_HEAD + plen));
    int rc = write_checked(w, r, total, err);
    free(r);
    return rc;
}

static void tlv_bytes(pm_buf *b, int tag, const void *data, size_t len)
{
    unsigned char h[8];
    pm_put_u16(h, (uint16_t)tag);
    pm_put_u16(h + 2, 0);
    pm_put_u32(h + 4, (uint32_t)len);
    pm_buf_add(b, h, sizeof h);
    pm_buf_add(b, data, len);
}

#define tlv_str(b, tag, field) tlv_bytes((b), (tag), (field), strnlen((field), sizeof(field)))

static void tlv_i64(pm_buf *b, int tag, int64_t v)
{
    unsigned char d[8];
    pm_put_u64(d, (uint64_t)v);
    tlv_bytes(b, tag, d, 8);
}

static int write_bin_header(pm_writer *w, const pm_profile_info *info, const char *meta,
                            pm_error *err)
{
    unsigned char pre[PM_BIN_PREAMBLE];
    memcpy(pre, PM_BIN_MAGIC, PM_BIN_MAGIC_LEN);
    pm_put_u32(pre + 8, (uint32_t)w->version);
    pm_put_u32(pre + 12, 0);
    int rc = write_checked(w, pre, sizeof pre, err);
    if (rc)
        return rc;

    pm_buf b;
    pm_buf_init(&b);
    tlv_str(&b, PM_TAG_HOST, info->host);
    tlv_str(&b, PM_TAG_JOB_ID, info->job_id);
    tlv_str(&b, PM_TAG_SCHEDULER, info->scheduler);
    tlv_str(&b, PM_TAG_NODE_RANK, info->node_rank);
    tlv_str(&b, PM_TAG_USER, info->user);
    tlv_str(&b, PM_TAG_COMMAND, info->command);
    tlv_str(&b, PM_TAG_SAMPLER, info->sampler);
    tlv_i64(&b, PM_TAG_START_WALL, info->start_wall_ns);
    tlv_i64(&b, PM_TAG_START_MONO, info->start_mono_ns);
    tlv_i64(&b, PM_TAG_INTERVAL, info->interval_ns);
    tlv_i64(&b, PM_TAG_PID, info->sampler_pid);
    if (info->run_id[0])
        tlv_str(&b, PM_TAG_RUN_ID, info->run_id);
    for (size_t c = 0; c < w->ncols; c++) {
        const pm_column *col = &w->cols[c];
        size_t nl = strnlen(col->name, sizeof col->name);
        size_t ul = strnlen(col->unit, sizeof col->unit);
        size_t gl = strnlen(col->group, sizeof col->group);
        unsigned char f[PM_COLUMN_FIXED];
        f[0] = col->kind;
        f[1] = col->type;
        pm_put_u16(f + 2, (uint16_t)nl);
        pm_put_u16(f + 4, (uint16_t)ul);
        pm_put_u16(f + 6, (uint16_t)gl);
        pm_put_u64(f + 8, col->wrap);
        pm_buf tmp;
        pm_buf_init(&tmp);
        pm_buf_add(&tmp, f, sizeof f);
        pm_buf_add(&tmp, col->name, nl);
        pm_buf_add(&tmp, col->unit, ul);
        pm_buf_add(&tmp, col->group, gl);
        if (!tmp.oom)
            tlv_bytes(&b, PM_TAG_COLUMN, tmp.data, tmp.len);
        else
            b.oom = 1;
        pm_buf_free(&tmp);
    }
    if (b.oom) {
        pm_buf_free(&b);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", w->path);
    }
    rc = write_record(w, PM_REC_HEADER, (const unsigned char *)b.data, b.len, err);
    pm_buf_free(&b);
    if (rc == 0 && meta)
        rc = write_record(w, PM_REC_META, (const unsigned char *)meta, strlen(meta), err);
    return rc;
}

static int write_line(pm_writer *w, pm_error *err)
{
    pm_buf_add(&w->line, "\n", 1);
    if (w->line.oom) {
        pm_buf_free(&w->line);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", w->path);
    }
    int rc = write_checked(w, w->line.data, w->line.len, err);
    pm_buf_reset(&w->line);
    return rc;
}

static void json_ns_seconds(pm_buf *b, int64_t ns)
{
    /* Exact decimal seconds with microseconds: no rounding through double. */
    int neg = ns < 0;
    uint64_t a = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    uint64_t us = a / 1000;
    pm_buf_printf(b, "%s%" PRIu64 ".%06" PRIu64, neg ? "-" : "", us / 1000000, us % 1000000);
}

static int write_jsonl_header(pm_writer *w, const pm_profile_info *info, const char *meta,
                              pm_error *err)
{
    pm_buf *b = &w->line;
    pm_buf_printf(b, "{\"format\":\"perfmon-profile\",\"version\":%d", PM_PROFILE_JSONL_VERSION);
    pm_buf_puts(b, ",\"host\":");
    pm_buf_json_str(b, info->host);
    pm_buf_puts(b, ",\"job_id\":");
    pm_buf_json_str(b, info->job_id);
    pm_buf_puts(b, ",\"scheduler\":");
    pm_buf_json_str(b, info->scheduler);
    pm_buf_puts(b, ",\"node_rank\":");
    pm_buf_json_str(b, info->node_rank);
    pm_buf_puts(b, ",\"user\":");
    pm_buf_json_str(b, info->user);
    pm_buf_puts(b, ",\"command\":");
    pm_buf_json_str(b, info->command);
    pm_buf_puts(b, ",\"sampler\":");
    pm_buf_json_str(b, info->sampler);
    pm_buf_puts(b, ",\"start\":");
    json_ns_seconds(b, info->start_wall_ns);
    pm_buf_puts(b, ",\"start_mono\":");
    json_ns_seconds(b, info->start_mono_ns);
    pm_buf_puts(b, ",\"interval\":");
    json_ns_seconds(b, info->interval_ns);
    pm_buf_printf(b, ",\"pid\":%lld", (long long)info->sampler_pid);
    if (info->run_id[0]) {
        pm_buf_puts(b, ",\"run_id\":");
        pm_buf_json_str(b, info->run_id);
    }
    pm_buf_puts(b, ",\"columns\":[");
    for (size_t c = 0; c < w->ncols; c++) {
        const pm_column *col = &w->cols[c];
        pm_buf_puts(b, c ? ",{\"name\":" : "{\"name\":");
        pm_buf_json_str(b, col->name);
        pm_buf_puts(b, ",\"unit\":");
        pm_buf_json_str(b, col->unit);
        pm_buf_puts(b, ",\"group\":");
        pm_buf_json_str(b, col->group);
        pm_buf_printf(b, ",\"kind\":\"%s\",\"type\":\"%s\"", pm_kind_name(col->kind),
                      pm_vtype_name(col->type));
        if (col->wrap)
            pm_buf_printf(b, ",\"wrap\":%" PRIu64, col->wrap);
        pm_buf_puts(b, "}");
    }
    pm_buf_puts(b, "]}");
    int rc = write_line(w, err);
    if (rc == 0 && meta) {
        pm_buf_puts(b, "{\"metadata\":");
        pm_buf_puts(b, meta);
        pm_buf_puts(b, "}");
        rc = write_line(w, err);
    }
    return rc;
}

int pm_writer_open(pm_writer **out, const char *path, int format, const pm_profile_info *info,
                   const pm_column *cols, size_t ncols, const char *meta_json, pm_error *err)
{
    *out = NULL;
    if (format != PM_FMT_BIN && format != PM_FMT_JSONL && format != PM_FMT_BIN1 &&
        format != PM_FMT_BIN2)
        return pm_error_set(err, PM_EUSAGE, "%s: unknown profile format %d", path, format);
    int version = PM_PROFILE_VERSION;
    const char *env = getenv("PERFMON_PROFILE_VERSION");
    if (format == PM_FMT_BIN && env && (strcmp(env, "1") == 0 || strcmp(env, "2") == 0))
        version = env[0] - '0';
    if (format == PM_FMT_BIN1 || format == PM_FMT_BIN2) {
        version = format == PM_FMT_BIN1 ? 1 : 2;
        format = PM_FMT_BIN;
    }
    if (ncols > PM_MAX_COLUMNS)
        return pm_error_set(err, PM_ELIMIT, "%s: %zu columns exceed the limit", path, ncols);
    pm_writer *w = calloc(1, sizeof *w);
    if (!w)
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    w->fd = -1;
    w->format = format;
    w->version = version;
    w->ncols = ncols;
    w->force_key = 1;
    w->path = pm_strdup(path);
    w->cols = pm_alloc_array(ncols, sizeof *cols);
    w->rec_size = version == 1 ? pm_bin_sample_size(ncols)
                               : PM_REC_HEAD + pm_codec_max_payload(ncols) + PM_REC_TAIL;
    w->rec = malloc(w->rec_size);
    pm_buf_init(&w->line);
    int crc = version == 1 ? 0 : pm_codec_init(&w->codec, cols, ncols, 0, version);
    if (!w->path || !w->cols || !w->rec || crc) {
        pm_writer_close(w, NULL);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    }
    if (ncols)
        memcpy(w->cols, cols, ncols * sizeof *cols);
    w->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        int e = errno;
        pm_writer_close(w, NULL);
        return pm_error_sys(err, PM_EIO, e, "%s: cannot create", path);
    }
    int rc = format == PM_FMT_BIN ? write_bin_header(w, info, meta_json, err)
                                  : write_jsonl_header(w, info, meta_json, err);
    if (rc != 0) {
        pm_writer_close(w, NULL);
        return rc;
    }
    *out = w;
    return 0;
}

static int sample_bin(pm_writer *w, int64_t mono, int64_t wall, const pm_value *vals,
                      const uint8_t *present, pm_error *err)
{
    unsigned char *r = w->rec;
    size_t plen = w->rec_size - PM_REC_HEAD - PM_REC_TAIL;
    size_t nbm = (w->ncols + 7) / 8;
    pm_put_u32(r, (uint32_t)plen);
    r[4] = PM_REC_SAMPLE;
    r[5] = r[6] = r[7] = 0;
    unsigned char *p = r + PM_REC_HEAD;
    pm_put_u64(p, (uint64_t)mono);
    pm_put_u64(p + 8, (uint64_t)wall);
    memcpy(p + 16, present, nbm);
    unsigned char *v = p + 16 + nbm;
    for (size_t c = 0; c < w->ncols; c++) {
        int has = present[c / 8] >> (c % 8) & 1;
        uint64_t bits = has ? vals[c].u : 0; /* union: same bits for f64 */
        pm_put_u64(v + 8 * c, bits);
    }
    pm_put_u32(r + PM_REC_HEAD + plen, pm_crc32c(0, r, PM_REC_HEAD + plen));
    return write_checked(w, r, w->rec_size, err);
}

/* An index record of the key samples since the last one (docs/format.md,
 * "Index"); it ends with its own payload length so that a reader finds
 * the last one from the end of the file. */
static int write_index(pm_writer *w, pm_error *err)
{
    size_t plen = PM_INDEX_FIXED + w->npending * PM_INDEX_ENTRY;
    unsigned char p[PM_INDEX_FIXED + sizeof w->pending];
    pm_put_u64(p, (uint64_t)w->last_index);
    pm_put_u32(p + 8, (uint32_t)w->npending);
    pm_put_u32(p + 12, 0);
    for (size_t i = 0; i < w->npending; i++)
        memcpy(p + 16 + i * PM_INDEX_ENTRY, w->pending[i], PM_INDEX_ENTRY);
    pm_put_u32(p + plen - 4, (uint32_t)plen);
    off_t at = w->size;
    int rc = write_record(w, PM_REC_INDEX, p, plen, err);
    if (rc == 0) {
        w->last_index = at;
        w->npending = 0;
    }
    return rc;
}

static int sample_v2(pm_writer *w, int64_t mono, int64_t wall, const pm_value *vals,
                     const uint8_t *present, pm_error *err)
{
    int key = w->force_key || w->since_key >= PM_KEY_EVERY || mono < w->key_mono ||
              (uint64_t)mono - (uint64_t)w->key_mono >= (uint64_t)PM_KEY_EVERY_NS;
    unsigned char *r = w->rec;
    size_t plen = pm_codec_encode(&w->codec, key, mono, wall, vals, present, r + PM_REC_HEAD);
    pm_put_u32(r, (uint32_t)plen);
    r[4] = key ? PM_REC_KEY : PM_REC_DELTA;
    r[5] = r[6] = r[7] = 0;
    pm_put_u32(r + PM_REC_HEAD + plen, pm_crc32c(0, r, PM_REC_HEAD + plen));
    off_t at = w->size;
    int rc = write_checked(w, r, PM_REC_HEAD + plen + PM_REC_TAIL, err);
    if (rc != 0) {
        /* The encoder moved on without this sample: start afresh. */
        w->force_key = 1;
        return rc;
    }
    if (key) {
        w->force_key = 0;
        w->since_key = 0;
        w->key_mono = mono;
        if (w->npending < sizeof w->pending / sizeof w->pending[0]) {
            unsigned char *e = w->pending[w->npending++];
            pm_put_u64(e, (uint64_t)wall);
            pm_put_u64(e + 8, (uint64_t)mono);
            pm_put_u64(e + 16, (uint64_t)at);
            pm_put_u64(e + 24, w->nsamples);
        }
    }
    w->since_key++;
    w->nsamples++;
    if (w->npending >= PM_INDEX_EVERY) {
        /* The index only speeds up seeking: when it cannot be written now
         * (a full disk), its entries wait for the next try, and the
         * sample above stays written. */
        pm_error ierr;
        if (write_index(w, &ierr) != 0)
            pm_error_clear(&ierr);
    }
    return 0;
}

static int sample_jsonl(pm_writer *w, int64_t mono, int64_t wall, const pm_value *vals,
                        const uint8_t *present, pm_error *err)
{
    pm_buf *b = &w->line;
    pm_buf_puts(b, "{\"t\":");
    json_ns_seconds(b, wall);
    pm_buf_puts(b, ",\"mono\":");
    json_ns_seconds(b, mono);
    pm_buf_puts(b, ",\"v\":[");
    for (size_t c = 0; c < w->ncols; c++) {
        if (c)
            pm_buf_add(b, ",", 1);
        if (!(present[c / 8] >> (c % 8) & 1))
            pm_buf_puts(b, "null");
        else if (w->cols[c].type == PM_U64)
            pm_buf_printf(b, "%" PRIu64, vals[c].u);
        else
            pm_buf_json_num(b, vals[c].f);
    }
    pm_buf_puts(b, "]}");
    return write_line(w, err);
}

int pm_writer_sample(pm_writer *w, int64_t mono_ns, int64_t wall_ns, const pm_value *vals,
                     const uint8_t *present, pm_error *err)
{
    if (w->format != PM_FMT_BIN)
        return sample_jsonl(w, mono_ns, wall_ns, vals, present, err);
    return w->version == 1 ? sample_bin(w, mono_ns, wall_ns, vals, present, err)
                           : sample_v2(w, mono_ns, wall_ns, vals, present, err);
}

int pm_writer_note(pm_writer *w, const char *text, pm_error *err)
{
    size_t n = strnlen(text, PM_MAX_STRING);
    if (w->format == PM_FMT_BIN)
        return write_record(w, PM_REC_NOTE, (const unsigned char *)text, n, err);
    pm_buf_puts(&w->line, "{\"note\":");
    pm_buf_json_str(&w->line, text);
    pm_buf_puts(&w->line, "}");
    return write_line(w, err);
}

int pm_writer_end(pm_writer *w, const pm_profile_end *e, pm_error *err)
{
    if (w->format == PM_FMT_BIN) {
        size_t rl = strnlen(e->reason, sizeof e->reason);
        unsigned char p[PM_END_FIXED + sizeof e->reason];
        pm_put_u64(p, (uint64_t)e->end_wall_ns);
        pm_put_u64(p + 8, (uint64_t)e->end_mono_ns);
        pm_put_u64(p + 16, e->samples);
        pm_put_u64(p + 24, e->late);
        pm_put_u64(p + 32, e->missed);
        pm_put_u64(p + 40, (uint64_t)e->self_cpu_ns);
        pm_put_u64(p + 48, e->self_maxrss_kb);
        pm_put_u32(p + 56, (uint32_t)e->exit_status);
        pm_put_u32(p + 60, (uint32_t)rl);
        memcpy(p + PM_END_FIXED, e->reason, rl);
        int rc = write_record(w, PM_REC_END, p, PM_END_FIXED + rl, err);
        /* Version 2: the footer, an index record as the file's last (when
         * it cannot be written, readers rebuild the index by scanning). */
        if (rc == 0 && w->version >= 2) {
            pm_error ierr;
            if (write_index(w, &ierr) != 0)
                pm_error_clear(&ierr);
        }
        return rc;
    }
    pm_buf *b = &w->line;
    pm_buf_puts(b, "{\"end\":{\"t\":");
    json_ns_seconds(b, e->end_wall_ns);
    pm_buf_puts(b, ",\"mono\":");
    json_ns_seconds(b, e->end_mono_ns);
    pm_buf_printf(
        b, ",\"samples\":%" PRIu64 ",\"late\":%" PRIu64 ",\"missed\":%" PRIu64 ",\"self_cpu\":",
        e->samples, e->late, e->missed);
    json_ns_seconds(b, e->self_cpu_ns);
    pm_buf_printf(b, ",\"self_maxrss_kb\":%" PRIu64 ",\"exit_status\":%d,\"reason\":",
                  e->self_maxrss_kb, (int)e->exit_status);
    pm_buf_json_str(b, e->reason);
    pm_buf_puts(b, "}}");
    return write_line(w, err);
}

int pm_writer_sync(pm_writer *w, pm_error *err)
{
    /* A checkpoint: the key samples so far get into the index first.  The
     * index only speeds up seeking (a reader rebuilds it by scanning), so
     * when it cannot be written (a full disk) its entries wait for the next
     * try, the file is cut back to its last record, and the samples are
     * made durable all the same. */
    if (w->format == PM_FMT_BIN && w->version >= 2 && w->npending) {
        pm_error ierr;
        if (write_index(w, &ierr) != 0)
            pm_error_clear(&ierr);
    }
    if (fdatasync(w->fd) != 0 && errno != EINVAL && errno != EROFS)
        return pm_error_sys(err, PM_EIO, errno, "%s: fdatasync failed", w->path);
    return 0;
}

const char *pm_writer_path(const pm_writer *w)
{
    return w->path;
}

int pm_writer_check_linked(pm_writer *w, pm_error *err)
{
    struct stat st;
    if (fstat(w->fd, &st) != 0)
        return pm_error_sys(err, PM_EIO, errno, "%s: fstat failed", w->path);
    if (st.st_nlink == 0)
        return pm_error_set(err, PM_EIO, "%s: the file was removed", w->path);
    return 0;
}

int pm_writer_restore(pm_writer *w, pm_error *err)
{
    int fd = open(w->path, O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot create it again", w->path);
    static const size_t chunk = 64 * 1024;
    unsigned char *buf = malloc(chunk);
    if (!buf) {
        unlink(w->path);
        close(fd);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", w->path);
    }
    int rc = 0;
    for (off_t at = 0; at < w->size && rc == 0;) {
        size_t want = (size_t)(w->size - at) < chunk ? (size_t)(w->size - at) : chunk;
        ssize_t n = pread(w->fd, buf, want, at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            rc = pm_error_sys(err, PM_EIO, n < 0 ? errno : EIO, "%s: cannot read back", w->path);
        else if ((rc = pm_write_all(fd, buf, (size_t)n)) != 0)
            rc = pm_error_sys(err, PM_EIO, -rc, "%s: write failed", w->path);
        else
            at += n;
    }
    free(buf);
    if (rc != 0) {
        /* A partial copy would look like a complete profile: remove it. */
        unlink(w->path);
        close(fd);
        return rc;
    }
    close(w->fd);
    w->fd = fd;
    return 0;
}

int pm_writer_close(pm_writer *w, pm_error *err)
{
    if (!w)
        return 0;
    int rc = 0;
    if (w->fd >= 0) {
        rc = pm_writer_sync(w, err);
        if (close(w->fd) != 0 && rc == 0)
            rc = pm_error_sys(err, PM_EIO, errno, "%s: close failed", w->path);
    }
    free(w->path);
    free(w->cols);
    free(w->rec);
    pm_buf_free(&w->line);
    pm_codec_free(&w->codec);
    free(w);
    return rc;
}
