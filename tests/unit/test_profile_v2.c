/* Binary profile versions 2 and 3 (docs/format.md, "Version 2 samples",
 * "Version 3 samples"): every value read back equals the one written, bit
 * for bit, and equals what version 1 gives; torn tails, a damaged key
 * sample, a corrupted or malformed delta sample, and the index (footer,
 * rebuilt, seeking by time).  The tests that write a file run once per
 * version (FMT). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfmon/crc32c.h"
#include "perfmon/endian.h"
#include "perfmon/fileio.h"
#include "perfmon/profile.h"
#include "perfmon/writer.h"
#include "testutil.h"

/* The awkward columns: one per row of docs/format.md's coding table. */
enum {
    C_RESET,  /* u64 counter: grows, restarts from 0 (a reset) */
    C_WRAP32, /* u64 counter wrapping at 2^32 */
    C_HUGE,   /* u64 counter with changes of 2^63 and 2^64 - 1 */
    C_TICKS,  /* f64 counter: ticks / 100 (scaled integer) */
    C_NS,     /* f64 gauge: ns / 1e9 (scale 9) */
    C_FLOAT,  /* f64 gauge: true floats, -0.0, infinities, NaN payloads, denormals */
    C_BIGINT, /* f64 gauge: integers beyond 2^53 */
    C_GAPS,   /* f64 gauge: missing in runs, also at key samples */
    C_U64MAX, /* u64 gauge near 2^64 */
    C_CONST,  /* f64 gauge: constant */
    /* Steady counters (code 1 in long runs, which the decoder turns into
     * values a run at a time), with gaps inside the runs: */
    C_STEADY_U, /* u64, crossing 2^63 */
    C_STEADY_S, /* f64 in scale 2 (ticks / 100) */
    C_STEADY_I, /* f64 in scale 0 */
    NC
};
static const pm_column cols[NC] = {
    {.name = "a.reset", .unit = "B", .group = "t", .kind = PM_COUNTER, .type = PM_U64},
    {.name = "a.wrap32",
     .unit = "1",
     .group = "t",
     .kind = PM_COUNTER,
     .type = PM_U64,
     .wrap = 1ull << 32},
    {.name = "a.huge", .unit = "1", .group = "t", .kind = PM_COUNTER, .type = PM_U64},
    {.name = "a.ticks", .unit = "s", .group = "t", .kind = PM_COUNTER, .type = PM_F64},
    {.name = "a.ns", .unit = "s", .group = "t", .kind = PM_GAUGE, .type = PM_F64},
    {.name = "a.float", .unit = "%", .group = "t", .kind = PM_GAUGE, .type = PM_F64},
    {.name = "a.bigint", .unit = "B", .group = "t", .kind = PM_GAUGE, .type = PM_F64},
    {.name = "a.gaps", .unit = "%", .group = "t", .kind = PM_GAUGE, .type = PM_F64},
    {.name = "a.u64max", .unit = "1", .group = "t", .kind = PM_GAUGE, .type = PM_U64},
    {.name = "a.const", .unit = "1", .group = "t", .kind = PM_GAUGE, .type = PM_F64},
    {.name = "a.steady_u", .unit = "B", .group = "t", .kind = PM_COUNTER, .type = PM_U64},
    {.name = "a.steady_s", .unit = "s", .group = "t", .kind = PM_COUNTER, .type = PM_F64},
    {.name = "a.steady_i", .unit = "1", .group = "t", .kind = PM_COUNTER, .type = PM_F64},
};

static double bits_f(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static uint64_t f_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* Sample i: the values, which are present, and the clocks. */
static void sample_at(size_t i, pm_value *v, uint8_t *present, int64_t *mono, int64_t *wall)
{
    static const uint64_t huge[] = {0, 1ull << 63, UINT64_MAX, 0, 5, 1ull << 63};
    static const uint64_t odd_floats[] = {
        0x8000000000000000ull, /* -0.0 */
        0x7ff0000000000000ull, /* +inf */
        0xfff0000000000000ull, /* -inf */
        0x7ff8000000000123ull, /* a quiet NaN with a payload */
        0x0000000000000001ull, /* the smallest denormal */
        0x3fb999999999999aull, /* 0.1 */
    };
    memset(present, 0, (NC + 7) / 8);
    v[C_RESET].u = i < 150 ? 4096 * i + i * i : 17 * (i - 150);
    v[C_WRAP32].u = (uint64_t)(4294967296.0 - 5e5 + 7919.0 * (double)i) % 4294967296ull;
    v[C_HUGE].u = huge[i % 6] + (i / 6);
    v[C_TICKS].f = (double)(100 * i + i % 7) / 100.0;
    v[C_NS].f = (double)(123456789 + 1000 * (int64_t)(i % 13)) / 1e9;
    v[C_FLOAT].f = i % 17 < 6 ? bits_f(odd_floats[i % 17]) : 50 + 20 * sin((double)i / 7);
    v[C_BIGINT].f = 9007199254740992.0 * 4 + 8.0 * (double)i;
    v[C_GAPS].f = (double)i / 3;
    v[C_U64MAX].u = UINT64_MAX - i % 3;
    v[C_CONST].f = 64;
    v[C_STEADY_U].u = (1ull << 63) - 150 * 1000003ull + 1000003ull * i;
    v[C_STEADY_S].f = (double)(12345 + 7 * (int64_t)i) / 100.0;
    v[C_STEADY_I].f = 1e12 + 4096.0 * (double)i;
    for (int c = 0; c < NC; c++) {
        int missing = c == C_GAPS && (i % 64 == 0 || (i >= 200 && i < 230) || i % 5 == 1);
        missing |= c == C_FLOAT && i == 1;
        missing |= c >= C_STEADY_U && (i == 90 || i == 91 || i == 170);
        if (!missing)
            present[c / 8] |= (uint8_t)(1u << (c % 8));
    }
    /* Jitter on the sampling clock, and the wall clock stepped back at 100. */
    *mono = 5000000000LL + (int64_t)i * 1000000000LL + (int64_t)((i * 7919) % 50000);
    *wall = 1700000000000000000LL + *mono - (i >= 100 ? 3000000000LL : 0);
}

static void write_file(const char *path, int format, size_t n, int with_end)
{
    pm_profile_info in;
    memset(&in, 0, sizeof in);
    strcpy(in.host, "n01");
    strcpy(in.job_id, "7");
    strcpy(in.scheduler, "local");
    in.interval_ns = 1000000000LL;
    pm_writer *w;
    pm_error err;
    assert_int_equal(pm_writer_open(&w, path, format, &in, cols, NC, "{\"x\":1}", &err), 0);
    for (size_t i = 0; i < n; i++) {
        pm_value v[NC];
        uint8_t present[(NC + 7) / 8];
        int64_t mono, wall;
        sample_at(i, v, present, &mono, &wall);
        assert_int_equal(pm_writer_sample(w, mono, wall, v, present, &err), 0);
        if (i == 77)
            assert_int_equal(pm_writer_note(w, "a note among the samples", &err), 0);
    }
    if (with_end) {
        pm_profile_end e;
        memset(&e, 0, sizeof e);
        e.samples = n;
        strcpy(e.reason, "command exited");
        assert_int_equal(pm_writer_end(w, &e, &err), 0);
    }
    assert_int_equal(pm_writer_close(w, &err), 0);
}

/* Row r of p is sample i as written (sample_at, not another reader). */
static void expect_sample(const pm_profile *p, size_t r, size_t i)
{
    pm_value v[NC];
    uint8_t present[(NC + 7) / 8];
    int64_t mono, wall;
    sample_at(i, v, present, &mono, &wall);
    if (p->t_mono_ns[r] != mono || p->t_wall_ns[r] != wall)
        fail_msg("row %zu (sample %zu): times %lld %lld, wrote %lld %lld", r, i,
                 (long long)p->t_mono_ns[r], (long long)p->t_wall_ns[r], (long long)mono,
                 (long long)wall);
    for (int c = 0; c < NC; c++) {
        double got = p->values[c][r];
        if (!(present[c / 8] >> (c % 8) & 1)) {
            if (!isnan(got))
                fail_msg("sample %zu %s: %g where nothing was recorded", i, cols[c].name, got);
            continue;
        }
        double want = cols[c].type == PM_U64 ? (double)v[c].u : v[c].f;
        if (f_bits(got) != f_bits(want))
            fail_msg("sample %zu %s: %.17g (%016llx), wrote %.17g (%016llx)", i, cols[c].name, got,
                     (unsigned long long)f_bits(got), want, (unsigned long long)f_bits(want));
    }
}

static char *dir;
/* The version the writer-based tests write: PM_FMT_BIN2 (version 2), then
 * PM_FMT_BIN (version 3, the default). */
static int FMT = PM_FMT_BIN2;
static unsigned VER = 2;

static int setup(void **state)
{
    (void)state;
    dir = strdup(pm_test_tmpdir());
    return dir ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    pm_test_rmrf(dir);
    free(dir);
    return 0;
}

static void read_ok(const char *path, pm_profile **p)
{
    pm_error err;
    if (pm_profile_read(path, p, &err) != 0)
        fail_msg("%s", err.msg);
}

static void load(const char *path, unsigned char **buf, size_t *len)
{
    pm_error err;
    char *b;
    assert_int_equal(pm_read_whole(path, 1 << 24, &b, len, &err), 0);
    *buf = (unsigned char *)b;
}

static void store(const char *path, const unsigned char *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(pm_write_all(fd, buf, len), 0);
    close(fd);
}

/* The records of an undamaged file, walked by their lengths (not by the
 * reader): offsets and types; returns the count. */
static size_t records(const unsigned char *buf, size_t len, size_t *off, unsigned *type, size_t cap)
{
    size_t n = 0;
    for (size_t at = 16; at + 12 <= len && n < cap; n++) {
        off[n] = at;
        type[n] = buf[at + 4];
        at += 12 + pm_get_u32(buf + at);
    }
    return n;
}

/* The offset of sample record number s (key or delta). */
static size_t sample_offset(const unsigned char *buf, size_t len, size_t s, unsigned *type)
{
    size_t off[2048];
    unsigned ty[2048];
    size_t n = records(buf, len, off, ty, 2048);
    for (size_t k = 0, i = 0; k < n; k++)
        if (ty[k] == 6 || ty[k] == 7) {
            if (i++ == s) {
                *type = ty[k];
                return off[k];
            }
        }
    fail_msg("no sample %zu", s);
    return 0;
}

/* Read the version 1 file p1 and the version ver file p2, whose bytes are
 * left in *buf. */
static void read_pair(const char *p1, const char *p2, unsigned ver, pm_profile **a, pm_profile **b,
                      unsigned char **buf, size_t *len)
{
    read_ok(p1, a);
    read_ok(p2, b);
    load(p2, buf, len);
    assert_int_equal(pm_get_u32(*buf + 8), ver);
}

static void test_lossless(void **state)
{
    (void)state;
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s/v1.pmp", dir);
    snprintf(p2, sizeof p2, "%s/v2.pmp", dir);
    write_file(p1, PM_FMT_BIN1, 300, 1);
    write_file(p2, FMT, 300, 1);
    pm_profile *a, *b;
    unsigned char *buf;
    size_t len;
    read_pair(p1, p2, VER, &a, &b, &buf, &len);
    free(buf);
    assert_int_equal(b->n, 300);
    assert_int_equal(b->nwarnings, 0);
    for (size_t i = 0; i < 300; i++)
        expect_sample(b, i, i);
    /* And the same bits as version 1 gives. */
    assert_int_equal(a->n, b->n);
    assert_memory_equal(a->t_mono_ns, b->t_mono_ns, 300 * sizeof(int64_t));
    assert_memory_equal(a->t_wall_ns, b->t_wall_ns, 300 * sizeof(int64_t));
    for (int c = 0; c < NC; c++)
        assert_memory_equal(a->values[c], b->values[c], 300 * sizeof(double));
    assert_int_equal(b->nnotes, 1);
    assert_true(b->has_end);
    assert_string_equal(b->end.reason, "command exited");
    assert_string_equal(b->meta_json, "{\"x\":1}");
    pm_profile_free(a);
    pm_profile_free(b);
}

/* Cut after every byte of the last two sample records: every complete
 * sample before the cut is kept, and the rest is named a torn tail. */
static void test_torn_tail(void **state)
{
    (void)state;
    char path[512], cut[512];
    snprintf(path, sizeof path, "%s/torn.pmp", dir);
    snprintf(cut, sizeof cut, "%s/cut.pmp", dir);
    write_file(path, FMT, 130, 0);
    unsigned char *buf;
    size_t len;
    load(path, &buf, &len);
    unsigned type;
    size_t s128 = sample_offset(buf, len, 128, &type);
    assert_int_equal(type, 6); /* sample 128 is a key sample (every 64) */
    size_t s129 = sample_offset(buf, len, 129, &type);
    size_t end = s129 + 12 + pm_get_u32(buf + s129);
    for (size_t at = s128; at < end; at++) {
        store(cut, buf, at);
        pm_profile *p;
        read_ok(cut, &p);
        size_t want = at < s129 ? 128 : 129;
        assert_int_equal(p->n, want);
        for (size_t i = 0; i < p->n; i++)
            expect_sample(p, i, i);
        if (at != s128 && at != s129) {
            assert_int_equal(p->nwarnings, 1);
            assert_non_null(strstr(p->warnings[0], "torn tail"));
        } else {
            assert_int_equal(p->nwarnings, 0);
        }
        pm_profile_free(p);
        unlink(cut);
    }
    free(buf);
}

/* A key sample whose record lost its end (a torn write in the middle of
 * the file, the next record appended after it): the 64 samples that build
 * on it are lost and named; the next key sample resynchronises. */
static void test_truncated_key(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/key.pmp", dir);
    write_file(path, FMT, 300, 1);
    unsigned char *buf;
    size_t len;
    load(path, &buf, &len);
    unsigned type;
    size_t k64 = sample_offset(buf, len, 64, &type), d65 = sample_offset(buf, len, 65, &type);
    assert_int_equal(sample_offset(buf, len, 64, &type), k64);
    assert_int_equal(type, 6);
    /* Drop the key record's last 7 bytes. */
    memmove(buf + d65 - 7, buf + d65, len - d65);
    store(path, buf, len - 7);
    pm_profile *p;
    read_ok(path, &p);
    assert_int_equal(p->n, 300 - 64);
    for (size_t i = 0; i < 64; i++)
        expect_sample(p, i, i);
    for (size_t i = 128; i < 300; i++)
        expect_sample(p, i - 64, i);
    char want[64];
    snprintf(want, sizeof want, "offset %zu: %zu damaged bytes", k64, d65 - 7 - k64);
    assert_true(p->nwarnings >= 2);
    if (!strstr(p->warnings[0], want))
        fail_msg("'%s' lacks '%s'", p->warnings[0], want);
    snprintf(want, sizeof want, "offset %zu: 63 delta samples skipped", d65 - 7);
    if (!strstr(p->warnings[1], want) || !strstr(p->warnings[1], "resynchronises"))
        fail_msg("'%s' lacks '%s'", p->warnings[1], want);
    assert_int_equal(p->bad_records, 1 + 63);
    pm_profile_free(p);
    free(buf);
}

/* A flipped bit in delta sample 70: its CRC fails, it is skipped and named
 * by offset, samples 71..127 need it and are skipped too, and key sample
 * 128 resynchronises. */
static void test_corrupt_delta(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/delta.pmp", dir);
    write_file(path, FMT, 300, 1);
    unsigned char *buf;
    size_t len;
    load(path, &buf, &len);
    unsigned type;
    size_t d70 = sample_offset(buf, len, 70, &type), d71 = sample_offset(buf, len, 71, &type);
    assert_int_equal(sample_offset(buf, len, 70, &type), d70);
    assert_int_equal(type, 7);
    buf[d70 + 10] ^= 0x10;
    store(path, buf, len);
    pm_profile *p;
    read_ok(path, &p);
    assert_int_equal(p->n, 300 - 58);
    for (size_t i = 0; i < 70; i++)
        expect_sample(p, i, i);
    for (size_t i = 128; i < 300; i++)
        expect_sample(p, i - 58, i);
    char want[96];
    snprintf(want, sizeof want, "offset %zu: %zu damaged bytes skipped", d70, d71 - d70);
    if (p->nwarnings < 2 || !strstr(p->warnings[0], want))
        fail_msg("'%s' lacks '%s'", p->nwarnings ? p->warnings[0] : "", want);
    snprintf(want, sizeof want, "offset %zu: 57 delta samples skipped", d71);
    if (!strstr(p->warnings[1], want))
        fail_msg("'%s' lacks '%s'", p->warnings[1], want);
    assert_true(p->has_end);
    pm_profile_free(p);
    free(buf);
}

/* A delta record with a valid CRC but a payload that does not decode (a
 * buggy or hostile writer): named, and the chain restarts at the next key. */
static void test_malformed_delta(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/bad.pmp", dir);
    write_file(path, FMT, 100, 1);
    unsigned char *buf;
    size_t len;
    load(path, &buf, &len);
    unsigned type;
    size_t d10 = sample_offset(buf, len, 10, &type);
    size_t plen = pm_get_u32(buf + d10);
    /* Every code 3 (escape), with escape bytes that name no form. */
    memset(buf + d10 + 8 + 2, 0xff, plen - 2);
    pm_put_u32(buf + d10 + 8 + plen, pm_crc32c(0, buf + d10, 8 + plen));
    store(path, buf, len);
    pm_profile *p;
    read_ok(path, &p);
    assert_int_equal(p->n, 100 - 54);
    for (size_t i = 0; i < 10; i++)
        expect_sample(p, i, i);
    for (size_t i = 64; i < 100; i++)
        expect_sample(p, i - 54, i);
    char want[64];
    snprintf(want, sizeof want, "offset %zu: malformed sample record", d10);
    if (!strstr(p->warnings[0], want))
        fail_msg("'%s' lacks '%s'", p->warnings[0], want);
    pm_profile_free(p);
    free(buf);
}

/* A sample record refused after some of its numbers were taken leaves
 * nothing behind for the rows after it.  Column g counts 0, 1, 2, ...
 * (code 2 in nearly every sample) but stays at 68 in sample 69; column f
 * turns from an integer to a true float at sample 5 (code 3, the raw
 * form), whose form byte is made one that names no form: g's number of
 * sample 5 is read before that is found (version 2: its varint comes
 * first; version 3: the numbers come before the form bytes are checked).
 * Sample 5 is row 5 of its batch of 64, as sample 69 is of the next one,
 * where g's code is 1: were sample 5's number of g left there, g would
 * read 69 in sample 69. */
static double stale_g(size_t i)
{
    return i == 69 ? 68 : (double)i;
}

static double stale_f(size_t i)
{
    return i < 5 ? 7 : (double)i + 1.0 / 3;
}

static void test_refused_after_numbers(void **state)
{
    (void)state;
    static const pm_column two[2] = {
        {.name = "g", .unit = "1", .group = "t", .kind = PM_GAUGE, .type = PM_F64},
        {.name = "f", .unit = "1", .group = "t", .kind = PM_GAUGE, .type = PM_F64},
    };
    char path[512];
    snprintf(path, sizeof path, "%s/stale.pmp", dir);
    unlink(path);
    pm_profile_info in;
    memset(&in, 0, sizeof in);
    strcpy(in.host, "n01");
    in.interval_ns = 1000000000LL;
    pm_writer *w;
    pm_error err;
    assert_int_equal(pm_writer_open(&w, path, FMT, &in, two, 2, "{}", &err), 0);
    for (size_t i = 0; i < 100; i++) {
        pm_value v[2] = {{.f = stale_g(i)}, {.f = stale_f(i)}};
        uint8_t present = 3;
        int64_t mono = 1000000000LL * (int64_t)(i + 1);
        assert_int_equal(pm_writer_sample(w, mono, mono + 7, v, &present, &err), 0);
    }
    assert_int_equal(pm_writer_close(w, &err), 0);
    unsigned char *buf;
    size_t len;
    load(path, &buf, &len);
    unsigned type;
    size_t at = sample_offset(buf, len, 5, &type), plen = pm_get_u32(buf + at);
    assert_int_equal(type, 7);
    assert_int_equal(sample_offset(buf, len, 64, &type) != 0 && type == 6, 1);
    unsigned char *pl = buf + at + 8;
    size_t k = 0;
    for (int t = 0; t < 2; t++)
        while (pl[k++] & 0x80)
            ;
    assert_int_equal(pl[k], 2 | 3 << 2); /* g: code 2, f: code 3 */
    /* The form byte: version 3's first after the codes; version 2's after
     * g's varint (2, one byte: the change 1 zig-zagged). */
    size_t fb = VER == 3 ? k + 1 : k + 2;
    if (VER == 2)
        assert_int_equal(pl[k + 1], 2);
    assert_int_equal(pl[fb], 0x80);
    pl[fb] = 10;
    pm_put_u32(pl + plen, pm_crc32c(0, buf + at, 8 + plen));
    store(path, buf, len);
    pm_profile *p;
    read_ok(path, &p);
    assert_int_equal(p->n, 100 - (64 - 5));
    for (size_t r = 0; r < p->n; r++) {
        size_t i = r < 5 ? r : r + 64 - 5;
        if (f_bits(p->values[0][r]) != f_bits(stale_g(i)) ||
            f_bits(p->values[1][r]) != f_bits(stale_f(i)))
            fail_msg("sample %zu: g %.17g f %.17g, wrote %.17g %.17g", i, p->values[0][r],
                     p->values[1][r], stale_g(i), stale_f(i));
    }
    pm_profile_free(p);
    free(buf);
}

/* Profiles that the encoder of c016f7d wrote stay readable, value for
 * value: a real sampler run (81 samples, 55 columns, two key samples) in
 * fixtures/v2/, against its version 1 copy written by tests/support/pmp.py
 * (a reader written from docs/format.md alone) and read by the version 1
 * reader.  Also column by column (projection) and a span of time. */
static int want_some(const char *column, void *ctx)
{
    (void)ctx;
    return strncmp(column, "cpu.", 4) == 0 || strncmp(column, "net.", 4) == 0;
}

static void same_rows(const pm_profile *a, size_t a0, const pm_profile *b, size_t n)
{
    assert_memory_equal(a->t_mono_ns + a0, b->t_mono_ns, n * sizeof(int64_t));
    assert_memory_equal(a->t_wall_ns + a0, b->t_wall_ns, n * sizeof(int64_t));
    for (size_t c = 0; c < b->ncols; c++) {
        if (!b->values[c])
            continue;
        for (size_t r = 0; r < n; r++)
            if (f_bits(a->values[c][a0 + r]) != f_bits(b->values[c][r]))
                fail_msg("%s row %zu: %.17g, version 1 %.17g", b->cols[c].name, r, b->values[c][r],
                         a->values[c][a0 + r]);
    }
}

static void test_old_encoder(void **state)
{
    (void)state;
    char p1[4200], p2[4200];
    snprintf(p2, sizeof p2, "%s/v2/sampler-c016f7d.pmp", pm_test_fixtures());
    snprintf(p1, sizeof p1, "%s/v2/sampler-c016f7d.v1.pmp", pm_test_fixtures());
    pm_profile *a, *b;
    unsigned char *buf;
    size_t len;
    read_pair(p1, p2, 2, &a, &b, &buf, &len);
    assert_int_equal(b->nwarnings, 0);
    assert_int_equal(a->n, 81);
    assert_int_equal(b->n, a->n);
    assert_int_equal(b->ncols, 55);
    same_rows(a, 0, b, b->n);
    pm_profile_free(b);

    pm_read_hint h = {.want = want_some};
    pm_error err;
    if (pm_profile_read_hinted(p2, &h, NULL, &b, &err) != 0)
        fail_msg("%s", err.msg);
    size_t read = 0;
    for (size_t c = 0; c < b->ncols; c++) {
        assert_int_equal(b->values[c] != NULL, want_some(b->cols[c].name, NULL));
        read += b->values[c] != NULL;
    }
    assert_true(read > 10 && read < b->ncols);
    same_rows(a, 0, b, b->n);
    pm_profile_free(b);

    /* Samples 10 to 69: decoding starts at the key sample 0 and the span
     * ends past the second one. */
    if (pm_profile_decode_bin_range(p2, buf, len, a->t_wall_ns[10], a->t_wall_ns[70], &b, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(b->n, 60);
    same_rows(a, 10, b, 60);
    pm_profile_free(b);
    free(buf);
    pm_profile_free(a);
}

/* Column projection on the awkward columns: the columns decoded hold the
 * values written, bit for bit, whatever is skipped around them. */
static int want_odd(const char *column, void *ctx)
{
    (void)ctx;
    for (int c = 0; c < NC; c++)
        if (strcmp(column, cols[c].name) == 0)
            return c % 2;
    return 0;
}

static void test_projection(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/proj.pmp", dir);
    write_file(path, FMT, 300, 1);
    pm_read_hint h = {.want = want_odd};
    pm_profile *p;
    pm_error err;
    if (pm_profile_read_hinted(path, &h, NULL, &p, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(p->n, 300);
    for (size_t i = 0; i < 300; i++) {
        pm_value v[NC];
        uint8_t present[(NC + 7) / 8];
        int64_t mono, wall;
        sample_at(i, v, present, &mono, &wall);
        assert_true(p->t_mono_ns[i] == mono && p->t_wall_ns[i] == wall);
        for (int c = 0; c < NC; c++) {
            if (c % 2 == 0) {
                assert_null(p->values[c]);
                continue;
            }
            double want = cols[c].type == PM_U64 ? (double)v[c].u : v[c].f;
            if (!(present[c / 8] >> (c % 8) & 1)) {
                assert_true(isnan(p->values[c][i]));
                continue;
            }
            if (f_bits(p->values[c][i]) != f_bits(want))
                fail_msg("sample %zu %s: %.17g, wrote %.17g", i, cols[c].name, p->values[c][i],
                         want);
        }
    }
    pm_profile_free(p);
}

static void check_keys(const pm_bin_index *idx, const unsigned char *buf, size_t len, size_t n)
{
    assert_int_equal(idx->n, (n + 63) / 64);
    for (size_t k = 0; k < idx->n; k++) {
        unsigned type;
        assert_int_equal(idx->keys[k].offset, sample_offset(buf, len, 64 * k, &type));
        assert_int_equal(type, 6);
        assert_int_equal(idx->keys[k].sample, 64 * k);
        pm_value v[NC];
        uint8_t present[(NC + 7) / 8];
        int64_t mono, wall;
        sample_at(64 * k, v, present, &mono, &wall);
        assert_true(idx->keys[k].mono_ns == mono && idx->keys[k].wall_ns == wall);
    }
}

/* Decode [from, to) through the index: the samples of that span, as
 * written. */
static void check_range(const unsigned char *buf, size_t len, size_t i0, size_t i1, size_t n)
{
    pm_value v[NC];
    uint8_t present[(NC + 7) / 8];
    int64_t mono, from, to;
    sample_at(i0, v, present, &mono, &from);
    sample_at(i1, v, present, &mono, &to);
    pm_profile *p;
    pm_error err;
    if (pm_profile_decode_bin_range("r.pmp", buf, len, from, to, &p, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(p->n, i1 > n ? n - i0 : i1 - i0);
    for (size_t r = 0; r < p->n; r++)
        expect_sample(p, r, i0 + r);
    assert_non_null(p->meta_json);
    pm_profile_free(p);
}

static void test_index_seek(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/idx.pmp", dir);
    size_t n = 1500; /* 24 key samples: a checkpoint index after 16, the footer */
    write_file(path, FMT, n, 1);
    unsigned char *buf;
    size_t len;
    load(path, &buf, &len);
    pm_bin_index idx;
    pm_error err;
    assert_int_equal(pm_bin_index_load("idx.pmp", buf, len, &idx, &err), 0);
    assert_int_equal(idx.from_footer, 1);
    check_keys(&idx, buf, len, n);
    pm_bin_index_free(&idx);
    /* The wall clock steps back at sample 100: seek after it. */
    check_range(buf, len, 300, 450, n);
    check_range(buf, len, 1024, 1025, n);
    check_range(buf, len, 1400, 1500, n);
    /* Killed before the footer: the last record is a sample, the index is
     * rebuilt by scanning and says the same. */
    unsigned type;
    size_t last = sample_offset(buf, len, n - 1, &type);
    size_t end = last + 12 + pm_get_u32(buf + last);
    assert_int_equal(pm_bin_index_load("idx.pmp", buf, end, &idx, &err), 0);
    assert_int_equal(idx.from_footer, 0);
    check_keys(&idx, buf, end, n);
    pm_bin_index_free(&idx);
    check_range(buf, end, 700, 900, n);
    /* A footer whose entry no longer matches its key sample: rebuilt. */
    buf[len - 4 - 4 - 32 + 8] ^= 1; /* the last entry's mono */
    size_t plen = pm_get_u32(buf + len - 8);
    pm_put_u32(buf + len - 4, pm_crc32c(0, buf + len - 4 - plen - 8, 8 + plen));
    assert_int_equal(pm_bin_index_load("idx.pmp", buf, len, &idx, &err), 0);
    assert_int_equal(idx.from_footer, 0);
    check_keys(&idx, buf, len, n);
    pm_bin_index_free(&idx);
    /* Version 1 has no index. */
    char p1[512];
    snprintf(p1, sizeof p1, "%s/idx1.pmp", dir);
    write_file(p1, PM_FMT_BIN1, 10, 1);
    free(buf);
    load(p1, &buf, &len);
    assert_int_not_equal(pm_bin_index_load("idx1.pmp", buf, len, &idx, &err), 0);
    assert_non_null(strstr(err.msg, "no index"));
    free(buf);
}

/* PM_FMT_BIN writes version 3; PERFMON_PROFILE_VERSION=1 or 2 makes it
 * write version 1 or 2; each reads back as written. */
static void test_env_version(void **state)
{
    (void)state;
    for (int v = 1; v <= 3; v++) {
        char path[512], env[2] = {(char)('0' + v), 0};
        snprintf(path, sizeof path, "%s/env%d.pmp", dir, v);
        if (v < 3)
            setenv("PERFMON_PROFILE_VERSION", env, 1);
        write_file(path, PM_FMT_BIN, 70, 1);
        unsetenv("PERFMON_PROFILE_VERSION");
        unsigned char *buf;
        size_t len;
        load(path, &buf, &len);
        assert_int_equal(pm_get_u32(buf + 8), v);
        free(buf);
        pm_profile *p;
        read_ok(path, &p);
        assert_int_equal(p->n, 70);
        for (size_t i = 0; i < 70; i++)
            expect_sample(p, i, i);
        pm_profile_free(p);
    }
}

/* Where the parts of a version 3 sample payload are, found from the
 * format's description (docs/format.md), not by the reader. */
typedef struct v3_parts {
    size_t forms, lens, nums; /* offsets in the payload */
    size_t nf, nn;            /* form bytes, numbers */
} v3_parts;

static void v3_split(const unsigned char *pl, v3_parts *q)
{
    size_t at = 0;
    for (int t = 0; t < 2; t++)
        while (pl[at++] & 0x80)
            ;
    q->nf = q->nn = 0;
    for (int c = 0; c < NC; c++) {
        unsigned code = pl[at + c / 4] >> (2 * (c % 4)) & 3;
        q->nf += code == 3;
        q->nn += code >= 2;
    }
    q->forms = at + (NC + 3) / 4;
    q->lens = q->forms + q->nf;
    q->nums = q->lens + (q->nn + 1) / 2;
}

static unsigned nib(const unsigned char *pl, const v3_parts *q, size_t i)
{
    return pl[q->lens + i / 2] >> (4 * (i % 2)) & 15;
}

static void set_nib(unsigned char *pl, const v3_parts *q, size_t i, unsigned v)
{
    unsigned char *b = pl + q->lens + i / 2;
    *b = (unsigned char)((*b & (i % 2 ? 0x0f : 0xf0)) | v << (4 * (i % 2)));
}

/* Sample record s of a 100-sample version 3 file changed by how (its CRC
 * made valid again): it is named malformed, and the samples from it to the
 * next key sample (64) or the end are lost, the others kept. */
enum { BAD_NIBBLE, BAD_PADDING, BAD_TOTAL, BAD_FORM };

static void malformed_case(int how)
{
    char path[512];
    snprintf(path, sizeof path, "%s/v3bad%d.pmp", dir, how);
    unlink(path);
    write_file(path, PM_FMT_BIN, 100, 1);
    unsigned char *buf;
    size_t len;
    load(path, &buf, &len);
    assert_int_equal(pm_get_u32(buf + 8), 3);
    unsigned type;
    size_t s = 0, at = 0;
    unsigned char *pl = NULL;
    v3_parts q;
    int done = 0;
    for (s = how == BAD_FORM ? 64 : 1; s < 64 && !done; s++) {
        at = sample_offset(buf, len, s, &type);
        pl = buf + at + 8;
        v3_split(pl, &q);
        if (how == BAD_NIBBLE) {
            /* A length of 9 and another shortened so that the lengths still
             * add up to the bytes there are: only the 9 is wrong. */
            for (size_t i = 0; i < q.nn && !done; i++)
                for (size_t j = 0; j < q.nn && !done; j++)
                    if (i != j && nib(pl, &q, i) < 9 && nib(pl, &q, j) >= 9 - nib(pl, &q, i)) {
                        set_nib(pl, &q, j, nib(pl, &q, j) - (9 - nib(pl, &q, i)));
                        set_nib(pl, &q, i, 9);
                        done = 1;
                    }
        } else if (how == BAD_PADDING && q.nn % 2 == 1) {
            /* The padding nibble 1 and a length 1 shorter: the sum holds. */
            for (size_t i = 0; i < q.nn && !done; i++)
                if (nib(pl, &q, i) > 0) {
                    set_nib(pl, &q, i, nib(pl, &q, i) - 1);
                    set_nib(pl, &q, q.nn, 1);
                    done = 1;
                }
        } else if (how == BAD_TOTAL && q.nn) {
            set_nib(pl, &q, 0, nib(pl, &q, 0) ^ 1); /* a byte left over or missing */
            done = 1;
        }
    }
    if (how == BAD_FORM) {
        /* Key sample 64: column 0 (u64) has code 3; the raw form is not
         * one of a u64 column's. */
        s = 64;
        at = sample_offset(buf, len, s, &type);
        assert_int_equal(type, 6);
        pl = buf + at + 8;
        v3_split(pl, &q);
        assert_int_equal(pl[q.forms - (NC + 3) / 4] & 3, 3);
        assert_int_equal(pl[q.forms], 0);
        pl[q.forms] = 0x80;
        s++;
        done = 1;
    }
    if (!done)
        fail_msg("case %d: no sample record to change", how);
    s--;
    size_t plen = pm_get_u32(buf + at);
    pm_put_u32(buf + at + 8 + plen, pm_crc32c(0, buf + at, 8 + plen));
    store(path, buf, len);
    pm_profile *p;
    read_ok(path, &p);
    size_t lost = s < 64 ? 64 - s : 100 - s;
    if (p->n != 100 - lost)
        fail_msg("case %d, sample %zu: %zu samples read, want %zu", how, s, p->n, 100 - lost);
    for (size_t r = 0; r < p->n; r++)
        expect_sample(p, r, r < s ? r : r + lost);
    char want[64];
    snprintf(want, sizeof want, "offset %zu: malformed sample record", at);
    if (p->nwarnings < 1 || !strstr(p->warnings[0], want))
        fail_msg("case %d: '%s' lacks '%s'", how, p->nwarnings ? p->warnings[0] : "", want);
    pm_profile_free(p);
    free(buf);
}

static void test_v3_malformed(void **state)
{
    (void)state;
    malformed_case(BAD_NIBBLE);
    malformed_case(BAD_PADDING);
    malformed_case(BAD_TOTAL);
    malformed_case(BAD_FORM);
}

static int use_v3(void **state)
{
    FMT = PM_FMT_BIN;
    VER = 3;
    return setup(state);
}

int main(void)
{
    const struct CMUnitTest each[] = {
        cmocka_unit_test(test_lossless),        cmocka_unit_test(test_torn_tail),
        cmocka_unit_test(test_truncated_key),   cmocka_unit_test(test_corrupt_delta),
        cmocka_unit_test(test_malformed_delta), cmocka_unit_test(test_index_seek),
        cmocka_unit_test(test_projection),      cmocka_unit_test(test_refused_after_numbers),
    };
    const struct CMUnitTest v3[] = {
        cmocka_unit_test(test_v3_malformed),
    };
    int bad = cmocka_run_group_tests_name("version 2", each, setup, teardown);
    bad |= cmocka_run_group_tests_name("version 3", each, use_v3, teardown);
    bad |= cmocka_run_group_tests_name("version 3 only", v3, setup, teardown);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_version),
        cmocka_unit_test(test_old_encoder),
    };
    return bad | cmocka_run_group_tests(tests, setup, teardown);
}
