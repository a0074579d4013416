/* bin_codec.h - the sample encoding of binary profile versions 2 and 3
 * (docs/format.md, "Version 2 samples", "Version 3 samples": version 3
 * lays the numbers out with their byte lengths ahead of them instead of
 * as varints).  Private to src/profile.
 *
 * A key sample stores every value whole; a delta sample stores each value
 * as its change from the previous sample of the same column (counters:
 * the change of the change), as zig-zag varints.  Floats that are exact
 * decimals (m / 10^k, k <= 9, as ticks / 100 or ns / 1e9 are) are coded
 * as the integer m; the others as the XOR of their bits with the previous
 * value's.  Every value round-trips bit for bit. */
#ifndef PERFMON_BIN_CODEC_H
#define PERFMON_BIN_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/profile.h"

/* Record types added by version 2 (version 1 files never hold them). */
#define PM_REC_KEY 6   /* key sample: decodable alone */
#define PM_REC_DELTA 7 /* delta sample: needs the samples since the last key */
#define PM_REC_INDEX 8 /* index of key samples (checkpoints and exit) */

/* A key sample at least this often (samples), and at least every
 * PM_KEY_EVERY_NS of monotonic time. */
#define PM_KEY_EVERY 64
#define PM_KEY_EVERY_NS (900LL * 1000000000LL)
/* An index record once this many key samples are not yet indexed. */
#define PM_INDEX_EVERY 16
/* Index record: u64 previous index offset, u32 count, u32 zero, count
 * entries of PM_INDEX_ENTRY bytes, u32 payload length. */
#define PM_INDEX_FIXED 20
#define PM_INDEX_ENTRY 32

/* Value forms: 0..9 an integer m meaning m / 10^form (u64 columns: the
 * value itself, form 0); PM_FORM_RAW the IEEE 754 bits; PM_FORM_NONE
 * nothing yet (after a key sample started). */
#define PM_FORM_MAXSCALE 9
#define PM_FORM_RAW 0x80
#define PM_FORM_NONE 0xff

typedef struct pm_codec_col {
    uint64_t m;  /* integer forms: the integer; raw: the bits */
    uint64_t d;  /* counters in integer form: the last change (the decoder
                  * keeps 0 for gauges and the raw form) */
    double last; /* decoder: the last value, as a double */
    uint8_t form;
    uint8_t counter;
    uint8_t u64;
    uint8_t hint;  /* encoder: the integer scale this column last had */
    uint64_t bits; /* encoder: the last value's bits (f64 columns) */
} pm_codec_col;

/* Rows the decoder parses before it turns them into values
 * (pm_codec_parse, pm_codec_flush). */
#define PM_CODEC_BATCH 64 /* at most 64: a row is a bit of a uint64_t */

typedef struct pm_codec {
    size_t ncols;
    int nib; /* version 3: the numbers of codes 2 and 3 as byte strings whose
              * lengths are 4-bit fields ahead of them (docs/format.md,
              * "Version 3 samples"); 0: version 2's LEB128 varints */
    /* Encoder, version 3: the numbers of one record and their form bytes. */
    uint64_t *num;
    uint8_t *nform;
    pm_codec_col *col;
    int64_t mono, mono_d, off; /* last mono, its last change, last wall - mono */
    /* Decoder, a batch at a time: pass 1 (pm_codec_parse) walks each
     * record's bytes and keeps, per column, a bit per row for each code
     * that is not 1 and what codes 2 and 3 carried; pass 2
     * (pm_codec_flush) runs down each column with the column's state in
     * registers. */
    size_t nw;           /* code words per record: ceil(ncols / 32) */
    size_t nb;           /* rows parsed, not yet flushed */
    uint64_t *cw;        /* [nw] the codes of the record being parsed */
    uint64_t *x;         /* [ncols][PM_CODEC_BATCH] code 2: the number; code 3:
                          * the new m; 0 in every other row (pass 2 clears
                          * what it takes, so that a run of codes 1 and 2
                          * decodes without a branch on the code) */
    uint8_t *fm;         /* [ncols][PM_CODEC_BATCH] code 3: the new form */
    uint64_t *none;      /* [nw] 1 in the low bit of each column whose form is none */
    uint64_t *rn;        /* [3][ncols] bit r: row r's code was 2 or 3; was 3; was 0 */
    unsigned char *tail; /* version 3: a record's lengths and numbers and 16
                          * bytes more, when the file ends too soon after them */
} pm_codec;

/* Set up for cols (kinds and types are copied), with the decoder's batch
 * when decoder != 0, for file format version (2 or 3); 0 or PM_ENOMEM. */
int pm_codec_init(pm_codec *c, const pm_column *cols, size_t ncols, int decoder, int version);
void pm_codec_free(pm_codec *c);
/* Forget all previous values (a key sample follows). */
void pm_codec_reset(pm_codec *c);

/* Largest payload pm_codec_encode writes for ncols columns, in either
 * version (and 8 bytes to spare, which version 3's writer stores into). */
size_t pm_codec_max_payload(size_t ncols);

/* Encode one sample as a key (key != 0: the state is reset first) or delta
 * payload into out (pm_codec_max_payload bytes); returns its length. */
size_t pm_codec_encode(pm_codec *c, int key, int64_t mono, int64_t wall, const pm_value *vals,
                       const uint8_t *present, unsigned char *out);

/* Parse one payload (key != 0: a key sample, the state is reset first)
 * as the batch's next row (avail >= n: the bytes that may be read from p,
 * which lets a varint be read with one load near the payload's end): its times are returned, its values come out of
 * the next pm_codec_flush.  The caller flushes before the batch holds
 * PM_CODEC_BATCH rows, and before a key sample when it holds any.  0, or -1 when the payload is malformed (the row
 * is not added; the codec's state is then undefined until the next key). */
int pm_codec_parse(pm_codec *c, int key, const unsigned char *p, size_t n, size_t avail,
                   int64_t *mono, int64_t *wall);

/* The values of the batch's rows: column c's go to dst[c][0 .. c->nb - 1]
 * (NaN when absent), or nowhere when dst[c] is NULL (a column not wanted:
 * its state is then left behind, so a caller does not switch a column
 * from NULL to not NULL between two key samples).  The batch is then
 * empty. */
void pm_codec_flush(pm_codec *c, double *const *dst);

/* The times of a key payload without decoding its values; 0 or -1. */
int pm_codec_key_times(const unsigned char *p, size_t n, int64_t *mono, int64_t *wall);

#endif
