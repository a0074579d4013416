/* Binary profile reader.  Every length is checked against what remains;
 * a bad record is skipped by scanning for the next valid one, so a torn
 * tail or a damaged block never costs the samples around it. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bin_codec.h"
#include "bin_format.h"
#include "perfmon/crc32c.h"
#include "perfmon/endian.h"
#include "perfmon/mem.h"
#include "perfmon/profile.h"
#include "perfmon/writer.h"
#include "perfmon/vec.h"

typedef struct cursor {
    const unsigned char *p;
    size_t len;
    size_t off;
} cursor;

static void copy_str(char *dst, size_t cap, const unsigned char *src, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    /* Embedded NULs would silently shorten the string; make them visible. */
    for (size_t i = 0; i < n; i++)
        if (dst[i] == '\0')
            dst[i] = '?';
}

static int parse_column(const char *path, size_t off, const unsigned char *d, size_t n,
                        pm_column *col, pm_error *err)
{
    if (n < PM_COLUMN_FIXED)
        return pm_error_set(err, PM_EFORMAT, "%s: offset %zu: column field too short (%zu bytes)",
                            path, off, n);
    memset(col, 0, sizeof *col);
    col->kind = d[0];
    col->type = d[1];
    size_t nl = pm_get_u16(d + 2), ul = pm_get_u16(d + 4), gl = pm_get_u16(d + 6);
    col->wrap = pm_get_u64(d + 8);
    if (col->kind > PM_COUNTER || col->type > PM_U64)
        return pm_error_set(err, PM_EFORMAT, "%s: offset %zu: column has kind %u type %u", path,
                            off, d[0], d[1]);
    if (PM_COLUMN_FIXED + nl + ul + gl != n)
        return pm_error_set(err, PM_EFORMAT,
                            "%s: offset %zu: column string lengths %zu+%zu+%zu do not fit its "
                            "%zu bytes",
                            path, off, nl, ul, gl, n);
    if (nl == 0 || nl >= sizeof col->name || ul >= sizeof col->unit || gl >= sizeof col->group)
        return pm_error_set(err, PM_EFORMAT,
                            "%s: offset %zu: column name/unit/group length out "
                            "of range",
                            path, off);
    copy_str(col->name, sizeof col->name, d + PM_COLUMN_FIXED, nl);
    copy_str(col->unit, sizeof col->unit, d + PM_COLUMN_FIXED + nl, ul);
    copy_str(col->group, sizeof col->group, d + PM_COLUMN_FIXED + nl + ul, gl);
    return 0;
}

static int parse_header(pm_profile *p, const unsigned char *d, size_t n, size_t base, pm_error *err)
{
    const char *path = p->path;
    pm_column *cols = NULL;
    size_t ncols = 0, cap = 0;
    size_t off = 0;
    int rc = 0;
    while (off < n) {
        if (n - off < 8) {
            rc = pm_error_set(err, PM_EFORMAT, "%s: offset %zu: truncated header field", path,
                              base + off);
            goto out;
        }
        unsigned tag = pm_get_u16(d + off);
        size_t len = pm_get_u32(d + off + 4);
        size_t at = base + off;
        off += 8;
        if (len > n - off) {
            rc = pm_error_set(err, PM_EFORMAT,
                              "%s: offset %zu: header field %u claims %zu bytes, %zu remain", path,
                              at, tag, len, n - off);
            goto out;
        }
        const unsigned char *v = d + off;
        pm_profile_info *in = &p->info;
        switch (tag) {
        case PM_TAG_HOST: copy_str(in->host, sizeof in->host, v, len); break;
        case PM_TAG_JOB_ID: copy_str(in->job_id, sizeof in->job_id, v, len); break;
        case PM_TAG_SCHEDULER: copy_str(in->scheduler, sizeof in->scheduler, v, len); break;
        case PM_TAG_NODE_RANK: copy_str(in->node_rank, sizeof in->node_rank, v, len); break;
        case PM_TAG_USER: copy_str(in->user, sizeof in->user, v, len); break;
        case PM_TAG_COMMAND: copy_str(in->command, sizeof in->command, v, len); break;
        case PM_TAG_SAMPLER: copy_str(in->sampler, sizeof in->sampler, v, len); break;
        case PM_TAG_RUN_ID: copy_str(in->run_id, sizeof in->run_id, v, len); break;
        case PM_TAG_START_WALL:
        case PM_TAG_START_MONO:
        case PM_TAG_INTERVAL:
        case PM_TAG_PID: {
            if (len != 8) {
                rc = pm_error_set(err, PM_EFORMAT,
                                  "%s: offset %zu: field %u has %zu bytes, "
                                  "expected 8",
                                  path, at, tag, len);
                goto out;
            }
            int64_t x = (int64_t)pm_get_u64(v);
            if (tag == PM_TAG_START_WALL)
                in->start_wall_ns = x;
            else if (tag == PM_TAG_START_MONO)
                in->start_mono_ns = x;
            else if (tag == PM_TAG_INTERVAL)
                in->interval_ns = x;
            else
                in->sampler_pid = x;
            break;
        }
        case PM_TAG_COLUMN:
            if (ncols >= PM_MAX_COLUMNS) {
                rc = pm_error_set(err, PM_ELIMIT, "%s: offset %zu: more than %u columns", path, at,
                                  PM_MAX_COLUMNS);
                goto out;
            }
            if (PM_VEC_RESERVE(cols, cap, ncols + 1, 64) != 0) {
                rc = pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
                goto out;
            }
            rc = parse_column(path, at, v, len, &cols[ncols], err);
            if (rc)
                goto out;
            for (size_t c = 0; c < ncols; c++)
                if (strcmp(cols[c].name, cols[ncols].name) == 0) {
                    rc = pm_error_set(err, PM_EFORMAT,
                                      "%s: offset %zu: column '%s' appears "
                                      "twice",
                                      path, at, cols[c].name);
                    goto out;
                }
            ncols++;
            break;
        default: break; /* unknown tags are skipped: newer writers may add fields */
        }
        off += len;
    }
    rc = pm_profile_set_columns(p, cols, ncols);
    if (rc)
        pm_error_set(err, rc, "%s: out of memory", path);
out:
    free(cols);
    return rc;
}

/* Is there a valid record at off?  Returns its payload length or -1.
 * maxtype: the last record type of the file's version. */
static long long record_at(const unsigned char *buf, size_t len, size_t off, unsigned maxtype)
{
    if (off > len || len - off < PM_REC_HEAD + PM_REC_TAIL)
        return -1;
    size_t plen = pm_get_u32(buf + off);
    unsigned type = buf[off + 4];
    if (type < PM_REC_HEADER || type > maxtype || buf[off + 5] || buf[off + 6] || buf[off + 7] ||
        plen > PM_MAX_RECORD_BYTES)
        return -1;
    if (plen > len - off - PM_REC_HEAD - PM_REC_TAIL)
        return -1;
    uint32_t want = pm_get_u32(buf + off + PM_REC_HEAD + plen);
    if (pm_crc32c(0, buf + off, PM_REC_HEAD + plen) != want)
        return -1;
    return (long long)plen;
}

/* Samples are decoded a batch at a time, column by column: each column
 * then gets a run of consecutive values (whole cache lines) instead of one
 * value per record, which scattered every record over all the columns. */
#define SAMPLE_BATCH 32

static void decode_samples(pm_profile *p, const unsigned char *const *batch, size_t nb,
                           size_t cap_n)
{
    size_t i0 = p->n;
    if (i0 >= cap_n)
        return;
    if (nb > cap_n - i0)
        nb = cap_n - i0;
    for (size_t r = 0; r < nb; r++) {
        p->t_mono_ns[i0 + r] = (int64_t)pm_get_u64(batch[r]);
        p->t_wall_ns[i0 + r] = (int64_t)pm_get_u64(batch[r] + 8);
    }
    size_t vals = 16 + (p->ncols + 7) / 8; /* the values follow the bitmap */
    for (size_t c = 0; c < p->ncols; c++) {
        if (!p->values[c])
            continue; /* not decoded (pm_read_hint.want) */
        double *dst = p->values[c] + i0;
        size_t byte = 16 + c / 8, off = vals + 8 * c;
        unsigned bit = (unsigned)(c % 8);
        int u64 = p->cols[c].type == PM_U64;
        for (size_t r = 0; r < nb; r++) {
            const unsigned char *d = batch[r];
            double x = NAN;
            if (d[byte] >> bit & 1) {
                uint64_t bits = pm_get_u64(d + off);
                x = u64 ? (double)bits : pm_bits_f64(bits);
            }
            dst[r] = x;
        }
    }
    p->n = i0 + nb;
}

static int decode_end(pm_profile *p, const unsigned char *d, size_t n)
{
    if (n < PM_END_FIXED)
        return -1;
    pm_profile_end *e = &p->end;
    e->end_wall_ns = (int64_t)pm_get_u64(d);
    e->end_mono_ns = (int64_t)pm_get_u64(d + 8);
    e->samples = pm_get_u64(d + 16);
    e->late = pm_get_u64(d + 24);
    e->missed = pm_get_u64(d + 32);
    e->self_cpu_ns = (int64_t)pm_get_u64(d + 40);
    e->self_maxrss_kb = pm_get_u64(d + 48);
    e->exit_status = (int32_t)pm_get_u32(d + 56);
    size_t rl = pm_get_u32(d + 60);
    if (rl > n - PM_END_FIXED)
        return -1;
    copy_str(e->reason, sizeof e->reason, d + PM_END_FIXED, rl);
    p->has_end = 1;
    return 0;
}

/* --- version 2 (docs/format.md, "Version 2") --------------------------- */

/* Walks the records of a file: each call gives the next valid one, and
 * the damaged bytes skipped to reach it. */
typedef struct scan {
    const unsigned char *buf;
    size_t len, off;
    size_t bad_start, bad_len; /* damage skipped before the record returned */
} scan;

/* The next valid record at or after s->off (its offset in *at, its payload
 * length returned), or -1 at the end; s->off moves past it. */
static inline long long scan_next(scan *s, size_t *at)
{
    s->bad_len = 0;
    while (s->off < s->len) {
        long long pl = record_at(s->buf, s->len, s->off, PM_REC_INDEX);
        if (pl >= 0) {
            *at = s->off;
            s->off += PM_REC_HEAD + (size_t)pl + PM_REC_TAIL;
            return pl;
        }
        if (s->bad_len++ == 0)
            s->bad_start = s->off;
        s->off++;
    }
    return -1;
}

static void other_record(pm_profile *p, unsigned type, const unsigned char *d, size_t pl, size_t at)
{
    switch (type) {
    case PM_REC_META:
        if (!p->meta_json) {
            p->meta_json = malloc(pl + 1);
            if (p->meta_json) {
                memcpy(p->meta_json, d, pl);
                p->meta_json[pl] = '\0';
            }
        }
        break;
    case PM_REC_NOTE: pm_profile_add_note(p, (const char *)d, pl); break;
    case PM_REC_END:
        if (decode_end(p, d, pl) != 0)
            pm_profile_add_warning(p, "%s: offset %zu: end record is malformed", p->path, at);
        break;
    case PM_REC_INDEX: break; /* for seeking (pm_bin_index_load) */
    default:
        pm_profile_add_warning(p, "%s: offset %zu: unexpected record type %u", p->path, at, type);
    }
}

/* The rows of the codec's batch into p (at p->n on): the values of the
 * columns decoded, the times, and with rg only the rows it keeps. */
static void flush_batch(pm_profile *p, pm_codec *codec, double **dst, const int64_t *tm,
                        const int64_t *tw, const unsigned char *keep, int some_out)
{
    size_t n = codec->nb;
    if (n == 0)
        return;
    for (size_t c = 0; c < p->ncols; c++)
        dst[c] = p->values[c] ? p->values[c] + p->n : NULL;
    pm_codec_flush(codec, dst);
    size_t k = 0;
    for (size_t r = 0; r < n; r++) {
        if (some_out && !keep[r])
            continue;
        p->t_mono_ns[p->n + k] = tm[r];
        p->t_wall_ns[p->n + k] = tw[r];
        if (some_out && k != r)
            for (size_t c = 0; c < p->ncols; c++)
                if (dst[c])
                    dst[c][k] = dst[c][r];
        k++;
    }
    p->n += k;
}

/* A range of wall times to keep, and where decoding stops. */
typedef struct v2_range {
    int64_t from, to;
} v2_range;

/* Decode the records from off on.  With rg, only samples whose wall time
 * is in [from, to) are kept, and decoding stops at the first key sample
 * at or after `to`. */
/* Pass 1's list of what the file holds, in order: the offset of each
 * valid record, and each damaged span as two entries (its offset with
 * DAMAGE set, then its length). */
#define DAMAGE ((size_t)1 << (sizeof(size_t) * 8 - 1))

typedef struct rec_list {
    size_t *v;
    size_t n, cap;
} rec_list;

static inline int rec_push(rec_list *l, size_t x)
{
    if (l->n == l->cap && PM_VEC_RESERVE(l->v, l->cap, l->n + 1, 1024) != 0)
        return -1;
    l->v[l->n++] = x;
    return 0;
}

static int decode_v2(pm_profile *p, uint32_t version, const unsigned char *buf, size_t len,
                     size_t off, const pm_read_hint *hint, const v2_range *rg, pm_error *err)
{
    const char *path = p->path;
    /* Pass 1: check every record once, list them, and count the samples
     * to size the arrays exactly. */
    size_t count = 0, at;
    long long pl;
    rec_list l = {NULL, 0, 0};
    int oom = 0;
    scan s = {buf, len, off, 0, 0};
    for (;;) {
        pl = scan_next(&s, &at);
        if (s.bad_len)
            oom |= rec_push(&l, s.bad_start | DAMAGE) | rec_push(&l, s.bad_len);
        if (pl < 0)
            break;
        unsigned type = buf[at + 4];
        if (type == PM_REC_KEY && rg && count) {
            int64_t mono, wall;
            if (pm_codec_key_times(buf + at + PM_REC_HEAD, (size_t)pl, &mono, &wall) == 0 &&
                wall >= rg->to)
                break;
        }
        count += type == PM_REC_KEY || type == PM_REC_DELTA;
        oom |= rec_push(&l, at);
    }
    /* Samples are parsed a batch at a time, then decoded column by
     * column straight into the profile's arrays (pm_codec_flush): every
     * row of the batch goes to p->n on, which pass 1's count leaves room
     * for, and with rg the rows outside it are then squeezed out.  A
     * column not decoded (pm_read_hint.want) is still parsed, for the
     * codec's checks, but never turned into values. */
    pm_codec codec = {0};
    double **dst = pm_alloc_array(p->ncols ? p->ncols : 1, sizeof *dst);
    int64_t tm[PM_CODEC_BATCH], tw[PM_CODEC_BATCH];
    unsigned char keep[PM_CODEC_BATCH] = {0};
    int some_out = 0;
    if (oom || !dst || pm_codec_init(&codec, p->cols, p->ncols, 1, (int)version) != 0 ||
        pm_profile_reserve_block(p, count + 1, hint) != 0) {
        free(l.v);
        free(dst);
        pm_codec_free(&codec);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory for %zu samples", path, count);
    }

    /* Pass 2.  A delta sample needs every sample since its key sample:
     * after damage (or a malformed sample) the chain is broken, and delta
     * samples are skipped until the next key sample. */
    int chain = 0;
    size_t lost = 0, lost_at = 0, decoded = 0;
    for (size_t k = 0; k < l.n; k++) {
        at = l.v[k];
        if (at & DAMAGE) {
            size_t bad_start = at & ~DAMAGE, bad_len = l.v[++k];
            p->bad_records++;
            p->skipped_bytes += bad_len;
            if (k + 1 == l.n && bad_start + bad_len == len)
                pm_profile_add_warning(p,
                                       "%s: offset %zu: torn tail of %zu bytes skipped "
                                       "(%zu complete samples kept)",
                                       path, bad_start, bad_len, p->n + codec.nb);
            else
                pm_profile_add_warning(p, "%s: offset %zu: %zu damaged bytes skipped", path,
                                       bad_start, bad_len);
            chain = 0;
            continue;
        }
        unsigned type = buf[at + 4];
        size_t plen = pm_get_u32(buf + at);
        const unsigned char *d = buf + at + PM_REC_HEAD;
        if (type != PM_REC_KEY && type != PM_REC_DELTA) {
            other_record(p, type, d, plen, at);
            continue;
        }
        int key = type == PM_REC_KEY;
        if (!key && !chain) {
            if (lost++ == 0)
                lost_at = at;
            continue;
        }
        if (key && lost) {
            p->bad_records += lost;
            pm_profile_add_warning(p,
                                   "%s: offset %zu: %zu delta samples skipped (the samples "
                                   "they build on are lost); the key sample at offset %zu "
                                   "resynchronises",
                                   path, lost_at, lost, at);
            lost = 0;
        }
        if (decoded >= count)
            break; /* cannot happen: pass 1 counted them */
        if (key && codec.nb) {
            flush_batch(p, &codec, dst, tm, tw, keep, some_out);
            some_out = 0;
        }
        size_t r = codec.nb;
        if (pm_codec_parse(&codec, key, d, plen, len - (at + PM_REC_HEAD), &tm[r], &tw[r]) != 0) {
            pm_profile_add_warning(p, "%s: offset %zu: malformed sample record", path, at);
            p->bad_records++;
            chain = 0;
            continue;
        }
        chain = 1;
        decoded++;
        keep[r] = !rg || (tw[r] >= rg->from && tw[r] < rg->to);
        some_out |= !keep[r];
        if (codec.nb == PM_CODEC_BATCH) {
            flush_batch(p, &codec, dst, tm, tw, keep, some_out);
            some_out = 0;
        }
    }
    flush_batch(p, &codec, dst, tm, tw, keep, some_out);
    free(l.v);
    free(dst);
    if (lost) {
        p->bad_records += lost;
        pm_profile_add_warning(p,
                               "%s: offset %zu: %zu delta samples skipped (the samples they "
                               "build on are lost; no key sample follows)",
                               path, lost_at, lost);
    }
    pm_codec_free(&codec);
    return 0;
}

int pm_profile_decode_bin(const char *path, const unsigned char *buf, size_t len, pm_profile **out,
                          pm_error *err)
{
    return pm_profile_decode_bin_hinted(path, buf, len, NULL, out, err);
}

/* Check the preamble and decode the header record: a new profile in *pp,
 * the version, and the offset after the header. */
static int open_bin(const char *path, const unsigned char *buf, size_t len, pm_profile **pp,
                    uint32_t *versionp, size_t *offp, pm_error *err)
{
    *pp = NULL;
    if (len < PM_BIN_PREAMBLE || memcmp(buf, PM_BIN_MAGIC, PM_BIN_MAGIC_LEN) != 0)
        return pm_error_set(err, PM_EFORMAT,
                            "%s: offset 0: not a perfmon binary profile "
                            "(bad magic)",
                            path);
    uint32_t version = pm_get_u32(buf + 8);
    if (version < 1 || version > 3)
        return pm_error_set(err, PM_EFORMAT,
                            "%s: offset 8: format version %" PRIu32
                            " is not supported (this reader knows 1, 2 and 3)",
                            path, version);
    size_t off = PM_BIN_PREAMBLE;
    long long hl = record_at(buf, len, off, PM_REC_END);
    if (hl < 0 || buf[off + 4] != PM_REC_HEADER) {
        if (len - off < PM_REC_HEAD)
            return pm_error_set(err, PM_ETRUNC,
                                "%s: offset %zu: file ends before the header "
                                "record",
                                path, off);
        return pm_error_set(err, PM_EFORMAT,
                            "%s: offset %zu: header record is damaged "
                            "(length %" PRIu32 ", bad type or checksum)",
                            path, off, pm_get_u32(buf + off));
    }
    pm_profile *p = pm_profile_new(path, PM_FMT_BIN);
    if (!p)
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    int rc = parse_header(p, buf + off + PM_REC_HEAD, (size_t)hl, off + PM_REC_HEAD, err);
    if (rc) {
        pm_profile_free(p);
        return rc;
    }
    *pp = p;
    *versionp = version;
    *offp = off + PM_REC_HEAD + (size_t)hl + PM_REC_TAIL;
    return 0;
}

int pm_profile_decode_bin_hinted(const char *path, const unsigned char *buf, size_t len,
                                 const pm_read_hint *hint, pm_profile **out, pm_error *err)
{
    *out = NULL;
    pm_profile *p;
    uint32_t version;
    size_t off;
    int rc = open_bin(path, buf, len, &p, &version, &off, err);
    if (rc)
        return rc;
    if (pm_profile_project(p, hint) != 0) {
        pm_profile_free(p);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    }
    if (version >= 2) {
        rc = decode_v2(p, version, buf, len, off, hint, NULL, err);
        if (rc) {
            pm_profile_free(p);
            return rc;
        }
        *out = p;
        return 0;
    }

    /* Size the arrays from the file size: an upper bound on the samples. */
    size_t srec = pm_bin_sample_size(p->ncols);
    size_t splen = srec - PM_REC_HEAD - PM_REC_TAIL;
    size_t cap_n = (len - off) / srec + 1;
    if (pm_profile_reserve_block(p, cap_n, hint) != 0) {
        pm_profile_free(p);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory for %zu samples", path, cap_n);
    }

    size_t bad_start = 0, bad_len = 0;
    const unsigned char *batch[SAMPLE_BATCH] = {0};
    size_t nb = 0;
    while (off < len) {
        long long pl = record_at(buf, len, off, PM_REC_END);
        if (pl >= 0 && buf[off + 4] == PM_REC_SAMPLE && (size_t)pl != splen)
            pl = -1; /* a sample of the wrong width is damage, not data */
        if (pl < 0) {
            if (bad_len == 0)
                bad_start = off;
            bad_len++;
            off++;
            continue;
        }
        if (bad_len) {
            p->bad_records++;
            p->skipped_bytes += bad_len;
            pm_profile_add_warning(p, "%s: offset %zu: %zu damaged bytes skipped", path, bad_start,
                                   bad_len);
            bad_len = 0;
        }
        const unsigned char *d = buf + off + PM_REC_HEAD;
        if (buf[off + 4] == PM_REC_SAMPLE) {
            batch[nb++] = d;
            if (nb == SAMPLE_BATCH) {
                decode_samples(p, batch, nb, cap_n);
                nb = 0;
            }
            off += PM_REC_HEAD + (size_t)pl + PM_REC_TAIL;
            continue;
        }
        /* Other records keep their place among the samples. */
        decode_samples(p, batch, nb, cap_n);
        nb = 0;
        switch (buf[off + 4]) {
        case PM_REC_META:
            if (!p->meta_json) {
                p->meta_json = malloc((size_t)pl + 1);
                if (p->meta_json) {
                    memcpy(p->meta_json, d, (size_t)pl);
                    p->meta_json[pl] = '\0';
                }
            }
            break;
        case PM_REC_NOTE: pm_profile_add_note(p, (const char *)d, (size_t)pl); break;
        case PM_REC_END:
            if (decode_end(p, d, (size_t)pl) != 0)
                pm_profile_add_warning(p, "%s: offset %zu: end record is malformed", path, off);
            break;
        default:
            pm_profile_add_warning(p, "%s: offset %zu: unexpected record type %u", path, off,
                                   buf[off + 4]);
        }
        off += PM_REC_HEAD + (size_t)pl + PM_REC_TAIL;
    }
    decode_samples(p, batch, nb, cap_n);
    if (bad_len) {
        p->bad_records++;
        p->skipped_bytes += bad_len;
        pm_profile_add_warning(p,
                               "%s: offset %zu: torn tail of %zu bytes skipped "
                               "(%zu complete samples kept)",
                               path, bad_start, bad_len, p->n);
    }
    *out = p;
    return 0;
}

/* --- the index of a version 2 file ------------------------------------ */

void pm_bin_index_free(pm_bin_index *idx)
{
    free(idx->keys);
    memset(idx, 0, sizeof *idx);
}

static int index_push(pm_bin_index *idx, size_t *cap, const pm_bin_key *k)
{
    if (PM_VEC_RESERVE(idx->keys, *cap, idx->n + 1, 64) != 0)
        return -1;
    idx->keys[idx->n++] = *k;
    return 0;
}

/* The footer's chain of index records, checked entry by entry against the
 * key samples it names; 0, or -1 when anything does not hold (then the
 * index is rebuilt by scanning). */
static int index_from_footer(const unsigned char *buf, size_t len, size_t body, pm_bin_index *idx)
{
    size_t cap = 0;
    if (len < body + PM_REC_HEAD + PM_INDEX_FIXED + PM_REC_TAIL)
        return -1;
    size_t plen = pm_get_u32(buf + len - PM_REC_TAIL - 4);
    if (plen < PM_INDEX_FIXED || plen > len - body - PM_REC_HEAD - PM_REC_TAIL)
        return -1;
    size_t at = len - PM_REC_TAIL - plen - PM_REC_HEAD;
    /* Walk back through the chain; the entries of each record are added
     * in reverse, and the whole list reversed at the end. */
    for (;;) {
        long long pl = record_at(buf, len, at, PM_REC_INDEX);
        if (pl < PM_INDEX_FIXED || buf[at + 4] != PM_REC_INDEX)
            return -1;
        const unsigned char *d = buf + at + PM_REC_HEAD;
        size_t count = pm_get_u32(d + 8);
        if ((size_t)pl != PM_INDEX_FIXED + count * PM_INDEX_ENTRY ||
            pm_get_u32(d + pl - 4) != (uint32_t)pl)
            return -1;
        for (size_t i = count; i-- > 0;) {
            const unsigned char *e = d + 16 + i * PM_INDEX_ENTRY;
            pm_bin_key k = {(int64_t)pm_get_u64(e), (int64_t)pm_get_u64(e + 8), pm_get_u64(e + 16),
                            pm_get_u64(e + 24)};
            if (index_push(idx, &cap, &k))
                return -1;
        }
        uint64_t prev = pm_get_u64(d);
        if (prev == 0)
            break;
        if (prev < body || prev >= at)
            return -1;
        at = (size_t)prev;
    }
    for (size_t i = 0, j = idx->n; i + 1 < j; i++, j--) {
        pm_bin_key t = idx->keys[i];
        idx->keys[i] = idx->keys[j - 1];
        idx->keys[j - 1] = t;
    }
    for (size_t i = 0; i < idx->n; i++) {
        const pm_bin_key *k = &idx->keys[i];
        if (k->offset < body || k->offset >= len || (i && k->offset <= idx->keys[i - 1].offset))
            return -1;
        long long pl = record_at(buf, len, (size_t)k->offset, PM_REC_INDEX);
        int64_t mono, wall;
        if (pl < 0 || buf[k->offset + 4] != PM_REC_KEY ||
            pm_codec_key_times(buf + k->offset + PM_REC_HEAD, (size_t)pl, &mono, &wall) ||
            mono != k->mono_ns || wall != k->wall_ns)
            return -1;
    }
    return 0;
}

int pm_bin_index_load(const char *path, const unsigned char *buf, size_t len, pm_bin_index *idx,
                      pm_error *err)
{
    memset(idx, 0, sizeof *idx);
    pm_profile *p;
    uint32_t version;
    size_t body;
    int rc = open_bin(path, buf, len, &p, &version, &body, err);
    if (rc)
        return rc;
    pm_profile_free(p);
    if (version < 2)
        return pm_error_set(err, PM_EFORMAT, "%s: offset 8: format version 1 has no index", path);
    if (index_from_footer(buf, len, body, idx) == 0) {
        idx->from_footer = 1;
        return 0;
    }
    /* No footer (killed), or a damaged one: every key sample, by scanning. */
    pm_bin_index_free(idx);
    size_t cap = 0, at;
    uint64_t sample = 0;
    long long pl;
    scan s = {buf, len, body, 0, 0};
    while ((pl = scan_next(&s, &at)) >= 0) {
        unsigned type = buf[at + 4];
        pm_bin_key k = {0, 0, at, sample};
        if (type == PM_REC_KEY &&
            pm_codec_key_times(buf + at + PM_REC_HEAD, (size_t)pl, &k.mono_ns, &k.wall_ns) == 0 &&
            index_push(idx, &cap, &k)) {
            pm_bin_index_free(idx);
            return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
        }
        sample += type == PM_REC_KEY || type == PM_REC_DELTA;
    }
    return 0;
}

int pm_profile_decode_bin_range(const char *path, const unsigned char *buf, size_t len,
                                int64_t from_wall_ns, int64_t to_wall_ns, pm_profile **out,
                                pm_error *err)
{
    *out = NULL;
    pm_bin_index idx;
    int rc = pm_bin_index_load(path, buf, len, &idx, err);
    if (rc)
        return rc;
    pm_profile *p;
    uint32_t version;
    size_t off;
    rc = open_bin(path, buf, len, &p, &version, &off, err);
    if (rc) {
        pm_bin_index_free(&idx);
        return rc;
    }
    /* The metadata record follows the header. */
    long long pl = record_at(buf, len, off, PM_REC_INDEX);
    if (pl >= 0 && buf[off + 4] == PM_REC_META)
        other_record(p, PM_REC_META, buf + off + PM_REC_HEAD, (size_t)pl, off);
    /* The last key sample at or before from (the first one when none). */
    size_t lo = 0, hi = idx.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (idx.keys[mid].wall_ns <= from_wall_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t start = idx.n == 0 ? off : (size_t)idx.keys[lo ? lo - 1 : 0].offset;
    pm_bin_index_free(&idx);
    v2_range rg = {from_wall_ns, to_wall_ns};
    rc = decode_v2(p, version, buf, len, start, NULL, &rg, err);
    if (rc) {
        pm_profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}
