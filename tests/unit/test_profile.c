/* Profile format: write-then-read round trips in both forms, torn tails,
 * damaged records, and hostile headers. */
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
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmon/crc32c.h"
#include "perfmon/endian.h"
#include "perfmon/fileio.h"
#include "perfmon/profile.h"
#include "synth.h"
#include "perfmon/writer.h"
#include "testutil.h"

static const pm_column cols[] = {
    {.name = "cpu.percent", .unit = "%", .group = "cpu", .kind = PM_GAUGE, .type = PM_F64},
    {.name = "net.ext.bytes_sent", .unit = "B", .group = "net", .kind = PM_COUNTER, .type = PM_U64},
    {.name = "rapl.package-0",
     .unit = "uJ",
     .group = "rapl",
     .kind = PM_COUNTER,
     .type = PM_U64,
     .wrap = 262143328850ull + 1},
};
#define NCOLS (sizeof cols / sizeof cols[0])

static void fill_info(pm_profile_info *in)
{
    memset(in, 0, sizeof *in);
    strcpy(in->host, "node-\xc3\xa9\"01");
    strcpy(in->job_id, "12345");
    strcpy(in->scheduler, "slurm");
    strcpy(in->node_rank, "3");
    strcpy(in->user, "alice");
    strcpy(in->command, "./solver --in \"a b\"");
    strcpy(in->sampler, "test");
    in->start_wall_ns = 1700000000123456000LL;
    in->start_mono_ns = 5000000000LL;
    in->interval_ns = 200000000LL;
    in->sampler_pid = 42;
}

/* Write n samples; sample i has cpu = i/2, bytes = 1000*i, energy = i*10^9
 * (u64 above 2^32), and column 0 missing on every third sample. */
static void write_profile(const char *path, int format, size_t n, int with_end)
{
    pm_profile_info in;
    fill_info(&in);
    pm_writer *w;
    pm_error err;
    assert_int_equal(
        pm_writer_open(&w, path, format, &in, cols, NCOLS, "{\"cpu\":{\"threads\":8}}", &err), 0);
    for (size_t i = 0; i < n; i++) {
        pm_value v[NCOLS];
        uint8_t present[1] = {0x7};
        v[0].f = (double)i / 2.0;
        v[1].u = 1000 * i;
        v[2].u = (uint64_t)i * 1000000000ull;
        if (i % 3 == 0)
            present[0] &= (uint8_t)~1u;
        assert_int_equal(pm_writer_sample(w, in.start_mono_ns + (int64_t)i * in.interval_ns,
                                          in.start_wall_ns + (int64_t)i * in.interval_ns, v,
                                          present, &err),
                         0);
    }
    assert_int_equal(pm_writer_note(w, "source rapl absent: test", &err), 0);
    if (with_end) {
        pm_profile_end e;
        memset(&e, 0, sizeof e);
        e.samples = n;
        e.late = 1;
        e.missed = 2;
        e.self_cpu_ns = 123456789;
        e.self_maxrss_kb = 2048;
        e.exit_status = 3;
        strcpy(e.reason, "command exited");
        assert_int_equal(pm_writer_end(w, &e, &err), 0);
    }
    assert_int_equal(pm_writer_close(w, &err), 0);
}

static void check_profile(const pm_profile *p, size_t n)
{
    assert_string_equal(p->info.host, "node-\xc3\xa9\"01");
    assert_string_equal(p->info.job_id, "12345");
    assert_string_equal(p->info.scheduler, "slurm");
    assert_string_equal(p->info.command, "./solver --in \"a b\"");
    assert_true(p->info.start_wall_ns / 1000 == 1700000000123456LL);
    assert_int_equal(p->info.interval_ns, 200000000LL);
    assert_int_equal(p->ncols, NCOLS);
    for (size_t c = 0; c < NCOLS; c++) {
        assert_string_equal(p->cols[c].name, cols[c].name);
        assert_string_equal(p->cols[c].unit, cols[c].unit);
        assert_string_equal(p->cols[c].group, cols[c].group);
        assert_int_equal(p->cols[c].kind, cols[c].kind);
        assert_int_equal(p->cols[c].wrap, cols[c].wrap);
    }
    assert_int_equal(p->n, n);
    for (size_t i = 0; i < n; i++) {
        if (i % 3 == 0)
            assert_true(isnan(p->values[0][i]));
        else
            assert_true(p->values[0][i] == (double)i / 2.0);
        assert_true(p->values[1][i] == 1000.0 * (double)i);
        assert_true(p->values[2][i] == (double)i * 1e9);
        assert_true(p->t_wall_ns[i] / 1000 ==
                    (1700000000123456000LL + (int64_t)i * 200000000LL) / 1000);
    }
    assert_non_null(p->meta_json);
    assert_non_null(strstr(p->meta_json, "\"threads\""));
    assert_int_equal(p->nnotes, 1);
    assert_string_equal(p->notes[0], "source rapl absent: test");
}

static void roundtrip(int format)
{
    char *dir = strdup(pm_test_tmpdir());
    char path[512];
    snprintf(path, sizeof path, "%s/p.pmp", dir);
    write_profile(path, format, 50, 1);
    pm_profile *p;
    pm_error err;
    assert_int_equal(pm_profile_read(path, &p, &err), 0);
    assert_int_equal(p->format, format);
    check_profile(p, 50);
    assert_true(p->has_end);
    assert_int_equal(p->end.samples, 50);
    assert_int_equal(p->end.missed, 2);
    assert_int_equal(p->end.exit_status, 3);
    assert_string_equal(p->end.reason, "command exited");
    assert_int_equal(p->nwarnings, 0);
    pm_profile_free(p);
    pm_test_rmrf(dir);
    free(dir);
}

static void test_roundtrip_bin(void **state)
{
    (void)state;
    roundtrip(PM_FMT_BIN);
}

static void test_roundtrip_jsonl(void **state)
{
    (void)state;
    roundtrip(PM_FMT_JSONL);
}

/* Cut the file at every length after the header: the reader must keep
 * every complete sample before the cut and report the torn tail. */
static void torn(int format)
{
    char *dir = strdup(pm_test_tmpdir());
    char path[512], cut[512];
    snprintf(path, sizeof path, "%s/p.pmp", dir);
    snprintf(cut, sizeof cut, "%s/cut.pmp", dir);
    write_profile(path, format, 20, 0);
    char *buf;
    size_t len;
    pm_error err;
    assert_int_equal(pm_read_whole(path, 1 << 20, &buf, &len, &err), 0);
    size_t prev_n = 0;
    for (size_t l = len; l > len / 2; l -= 7) {
        int fd = open(cut, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(pm_write_all(fd, buf, l), 0);
        close(fd);
        pm_profile *p;
        assert_int_equal(pm_profile_read(cut, &p, &err), 0);
        assert_true(p->n <= 20);
        if (prev_n)
            assert_true(p->n <= prev_n);
        prev_n = p->n;
        /* Every kept sample is intact. */
        for (size_t i = 0; i < p->n; i++)
            assert_true(p->values[1][i] == 1000.0 * (double)i);
        pm_profile_free(p);
    }
    free(buf);
    pm_test_rmrf(dir);
    free(dir);
}

static void sample_i(pm_writer *w, size_t i, int *rc)
{
    pm_value v[NCOLS];
    uint8_t present[1] = {0x7};
    pm_error err;
    v[0].f = (double)i / 2.0;
    v[1].u = 1000 * i;
    v[2].u = (uint64_t)i * 1000000000ull;
    if (i % 3 == 0)
        present[0] &= (uint8_t)~1u;
    *rc = pm_writer_sample(w, 5000000000LL + (int64_t)i * 200000000LL,
                           1700000000123456000LL + (int64_t)i * 200000000LL, v, present, &err);
}

/* The output file is removed while it is written: restore creates it again
 * with everything written so far, and writing goes on there. */
static void removed(int format)
{
    char *dir = strdup(pm_test_tmpdir());
    char path[512];
    snprintf(path, sizeof path, "%s/p.pmp", dir);
    pm_profile_info in;
    fill_info(&in);
    pm_writer *w;
    pm_error err;
    int rc;
    assert_int_equal(
        pm_writer_open(&w, path, format, &in, cols, NCOLS, "{\"cpu\":{\"threads\":8}}", &err), 0);
    for (size_t i = 0; i < 20; i++) {
        sample_i(w, i, &rc);
        assert_int_equal(rc, 0);
    }
    assert_int_equal(pm_writer_check_linked(w, &err), 0);
    assert_int_equal(unlink(path), 0);
    assert_int_not_equal(pm_writer_check_linked(w, &err), 0);
    assert_non_null(strstr(err.msg, "removed"));
    /* A file of the same name in the way: refused, nothing changed. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    close(fd);
    assert_int_not_equal(pm_writer_restore(w, &err), 0);
    assert_non_null(strstr(err.msg, path));
    assert_int_equal(unlink(path), 0);
    assert_int_equal(pm_writer_restore(w, &err), 0);
    assert_int_equal(pm_writer_check_linked(w, &err), 0);
    for (size_t i = 20; i < 30; i++) {
        sample_i(w, i, &rc);
        assert_int_equal(rc, 0);
    }
    assert_int_equal(pm_writer_note(w, "source rapl absent: test", &err), 0);
    assert_int_equal(pm_writer_close(w, &err), 0);
    pm_profile *p;
    assert_int_equal(pm_profile_read(path, &p, &err), 0);
    check_profile(p, 30);
    assert_int_equal(p->nwarnings, 0);
    pm_profile_free(p);
    pm_test_rmrf(dir);
    free(dir);
}

static void test_removed_bin(void **state)
{
    (void)state;
    removed(PM_FMT_BIN);
}

static void test_removed_jsonl(void **state)
{
    (void)state;
    removed(PM_FMT_JSONL);
}

/* A write that fails part way (here the file size limit, as a full disk
 * would) leaves no torn record: the file ends with the last complete one,
 * and writing resumes cleanly once there is room again. */
static void partial_write(int format)
{
    char *dir = strdup(pm_test_tmpdir());
    char path[512];
    snprintf(path, sizeof path, "%s/p.pmp", dir);
    pm_profile_info in;
    fill_info(&in);
    pm_writer *w;
    pm_error err;
    int rc = 0;
    assert_int_equal(
        pm_writer_open(&w, path, format, &in, cols, NCOLS, "{\"cpu\":{\"threads\":8}}", &err), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = (rlim_t)st.st_size + 300; /* not a whole number of records */
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    size_t i = 0;
    for (; i < 1000; i++) {
        sample_i(w, i, &rc);
        if (rc != 0)
            break;
    }
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, prev);
    assert_int_not_equal(rc, 0);
    assert_true(i > 0 && i < 1000);
    pm_profile *p;
    assert_int_equal(pm_profile_read(path, &p, &err), 0);
    assert_int_equal(p->n, i);
    assert_int_equal(p->nwarnings, 0);
    pm_profile_free(p);
    /* Room again: the failed sample and the rest follow. */
    for (; i < 40; i++) {
        sample_i(w, i, &rc);
        assert_int_equal(rc, 0);
    }
    assert_int_equal(pm_writer_note(w, "source rapl absent: test", &err), 0);
    assert_int_equal(pm_writer_close(w, &err), 0);
    assert_int_equal(pm_profile_read(path, &p, &err), 0);
    check_profile(p, 40);
    assert_int_equal(p->nwarnings, 0);
    pm_profile_free(p);
    pm_test_rmrf(dir);
    free(dir);
}

static void test_partial_write_bin(void **state)
{
    (void)state;
    partial_write(PM_FMT_BIN);
}

static void test_partial_write_jsonl(void **state)
{
    (void)state;
    partial_write(PM_FMT_JSONL);
}

static void test_torn_bin(void **state)
{
    (void)state;
    torn(PM_FMT_BIN);
}

static void test_torn_jsonl(void **state)
{
    (void)state;
    torn(PM_FMT_JSONL);
}

/* A damaged record in the middle costs that record only. */
static void test_damaged_middle_bin(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char path[512];
    snprintf(path, sizeof path, "%s/p.pmp", dir);
    write_profile(path, PM_FMT_BIN1, 30, 1); /* version 1: samples of fixed size */
    char *buf;
    size_t len;
    pm_error err;
    assert_int_equal(pm_read_whole(path, 1 << 20, &buf, &len, &err), 0);
    size_t rec = pm_bin_sample_size(NCOLS);
    /* Flip a byte inside sample 10 (the samples end before the note and
     * end records, 30 samples back from them). */
    size_t tail = len - (size_t)(strlen("source rapl absent: test") + 12) - (64 + 14 + 12);
    size_t s0 = tail - 30 * rec;
    buf[s0 + 10 * rec + 20] ^= 0x55;
    int fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(pm_write_all(fd, buf, len), 0);
    close(fd);
    free(buf);
    pm_profile *p;
    assert_int_equal(pm_profile_read(path, &p, &err), 0);
    assert_int_equal(p->n, 29);
    assert_int_equal(p->bad_records, 1);
    assert_true(p->has_end);
    assert_true(p->nwarnings >= 1);
    assert_non_null(strstr(p->warnings[0], "offset"));
    pm_profile_free(p);
    pm_test_rmrf(dir);
    free(dir);
}

static void expect_error(const char *content, size_t len, const char *needle)
{
    char *dir = strdup(pm_test_tmpdir());
    char path[512];
    snprintf(path, sizeof path, "%s/bad", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(pm_write_all(fd, content, len), 0);
    close(fd);
    pm_profile *p = NULL;
    pm_error err;
    pm_error_clear(&err);
    int rc = pm_profile_read(path, &p, &err);
    if (rc == 0)
        fail_msg("expected an error for %s", needle);
    assert_null(p);
    assert_non_null(strstr(err.msg, path));
    if (!strstr(err.msg, needle))
        fail_msg("message '%s' lacks '%s'", err.msg, needle);
    pm_test_rmrf(dir);
    free(dir);
}

#define EXPECT_ERROR(lit, needle) expect_error((lit), sizeof(lit) - 1, (needle))

static void test_bad_headers(void **state)
{
    (void)state;
    EXPECT_ERROR("", "empty");
    EXPECT_ERROR("hello world\n", "not a perfmon profile");
    EXPECT_ERROR("\x89PMPROF\n\x04\0\0\0\0\0\0\0", "version 4");
    EXPECT_ERROR("\x89PMPROF\n\x01\0\0\0\0\0\0\0\x10", "before the header");
    /* A header record claiming 4 GB. */
    EXPECT_ERROR("\x89PMPROF\n\x01\0\0\0\0\0\0\0\xff\xff\xff\xff\x01\0\0\0\0\0\0\0",
                 "header record is damaged");
    EXPECT_ERROR("{\"format\":\"perfmon-profile\",\"version\":1,\"columns\":3}\n", "columns");
    EXPECT_ERROR("{\"format\":\"perfmon-profile\",\"version\":1,\"columns\":[{\"name\":\"a\"},"
                 "{\"name\":\"a\"}]}\n",
                 "twice");
    EXPECT_ERROR("{\"format\":\"perfmon-profile\", \"version\":1, \n", ":1:");
}

/* A header field whose length runs past the record, built by hand with a
 * valid checksum so only the field check can catch it. */
static void test_bad_field_length(void **state)
{
    (void)state;
    unsigned char f[64];
    memcpy(f, "\x89PMPROF\n\x01\0\0\0\0\0\0\0", 16);
    unsigned char *r = f + 16;
    pm_put_u32(r, 12);
    r[4] = PM_REC_HEADER;
    r[5] = r[6] = r[7] = 0;
    pm_put_u16(r + 8, 1);
    pm_put_u16(r + 10, 0);
    pm_put_u32(r + 12, 1000); /* host claims 1000 bytes */
    memcpy(r + 16, "abcd", 4);
    pm_put_u32(r + 20, pm_crc32c(0, r, 20));
    expect_error((const char *)f, 16 + 24, "claims 1000 bytes");
}

/* Write a 60,000-sample profile big.pmp into a fresh directory: 1 Hz from
 * 1.7e9, process RSS 1e6 bytes growing 10 per second. */
static void write_big(char *dir, size_t dcap, char *path, size_t pcap)
{
    snprintf(dir, dcap, "%s", pm_test_tmpdir());
    snprintf(path, pcap, "%s/big.pmp", dir);
    pm_synth s;
    pm_synth_init(&s, "big");
    s.n = 60000;
    s.start_s = 1.7e9;
    s.interval_s = 1;
    s.rss0 = 1e6;
    s.rss_growth = 10;
    pm_error err;
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
}

/* A profile big enough for block storage (> 8 MiB of values) reads the
 * same values as the synthesizer wrote, and its columns can be released
 * one at a time. */
static void test_big_profile_block(void **state)
{
    (void)state;
    char dir[4096], path[4200];
    write_big(dir, sizeof dir, path, sizeof path);
    pm_error err;
    pm_profile *p = NULL;
    assert_int_equal(pm_profile_read(path, &p, &err), 0);
    assert_non_null(p->block);
    assert_int_equal(p->n, 60000);
    int rss = pm_profile_column(p, "proc.rss");
    assert_true(rss >= 0);
    for (size_t i = 0; i < p->n; i += 997) {
        double el = (double)(p->t_wall_ns[i] - p->t_wall_ns[0]) / 1e9;
        assert_true(fabs(p->values[rss][i] - (1e6 + 10 * el)) < 1e-3);
    }
    double last = p->values[rss][p->n - 1];
    for (size_t c = 0; c < p->ncols; c++)
        if ((int)c != rss)
            pm_profile_release_column(p, c);
    assert_null(p->values[0 == rss ? 1 : 0]);
    assert_true(p->values[rss][p->n - 1] == last); /* neighbours' release spared it */
    pm_profile_release_column(p, (size_t)rss);
    assert_null(p->values[rss]);
    pm_profile_free(p);
    pm_test_rmrf(dir);
}

static int late_not_rss(const char *column, void *ctx)
{
    (void)ctx;
    return strcmp(column, "proc.rss") != 0 && strcmp(column, "cpu.percent") != 0;
}

/* With a hint, the late columns follow the others in the block; the values
 * are those of a plain read, and releasing every late column (whole huge
 * pages, then the block's small-page tail) leaves the others intact. */
static void test_hinted_block(void **state)
{
    (void)state;
    char dir[4096], path[4200];
    write_big(dir, sizeof dir, path, sizeof path);
    pm_error err;
    pm_profile *p = NULL, *q = NULL;
    pm_read_hint hint = {.late = late_not_rss};
    pm_read_buf rb = {0};
    assert_int_equal(pm_profile_read_hinted(path, &hint, &rb, &p, &err), 0);
    assert_true(rb.cap > 60000 * 8);
    pm_read_buf_free(&rb);
    assert_int_equal(pm_profile_read(path, &q, &err), 0);
    assert_non_null(p->block);
    int rss = pm_profile_column(p, "proc.rss"), cpu = pm_profile_column(p, "cpu.percent");
    assert_true(rss >= 0 && cpu >= 0);
    /* the two kept columns come first, right after the two time slots */
    char *base = p->block;
    size_t per = p->block_slot;
    assert_true((char *)p->values[cpu] == base + 2 * per ||
                (char *)p->values[cpu] == base + 3 * per);
    assert_true((char *)p->values[rss] == base + 2 * per ||
                (char *)p->values[rss] == base + 3 * per);
    for (size_t c = 0; c < p->ncols; c++)
        assert_memory_equal(p->values[c], q->values[c], p->n * sizeof(double));
    for (size_t c = 0; c < p->ncols; c++)
        if ((int)c != rss && (int)c != cpu)
            pm_profile_release_column(p, c);
    assert_memory_equal(p->values[rss], q->values[rss], p->n * sizeof(double));
    assert_memory_equal(p->values[cpu], q->values[cpu], p->n * sizeof(double));
    assert_memory_equal(p->t_wall_ns, q->t_wall_ns, p->n * sizeof(int64_t));
    pm_profile_free(p);
    pm_profile_free(q);
    pm_test_rmrf(dir);
}

static int want_listed(const char *column, void *ctx)
{
    for (const char *const *w = ctx; *w; w++)
        if (strcmp(*w, column) == 0)
            return 1;
    return 0;
}

/* A projected read (pm_read_hint.want) of path against a full read of the
 * same file: the same columns with the same metadata, values only for the
 * listed columns, bit for bit those of the full read, the same times,
 * samples and warnings. */
static int want_unlisted(const char *column, void *ctx)
{
    return !want_listed(column, ctx);
}

static void check_projection(const char *path, int (*pick)(const char *, void *),
                             const char *const *list, size_t nwant)
{
    pm_error err;
    pm_profile *full = NULL, *p = NULL;
    pm_read_hint hint = {.want = pick, .ctx = (void *)(uintptr_t)list};
    pm_read_buf rb = {0};
    assert_int_equal(pm_profile_read(path, &full, &err), 0);
    assert_int_equal(pm_profile_read_hinted(path, &hint, &rb, &p, &err), 0);
    pm_read_buf_free(&rb);
    assert_int_equal(p->ncols, full->ncols);
    assert_int_equal(p->n, full->n);
    assert_true(p->n > 0);
    assert_memory_equal(p->t_wall_ns, full->t_wall_ns, p->n * sizeof(int64_t));
    assert_memory_equal(p->t_mono_ns, full->t_mono_ns, p->n * sizeof(int64_t));
    size_t decoded = 0;
    for (size_t c = 0; c < p->ncols; c++) {
        assert_memory_equal(&p->cols[c], &full->cols[c], sizeof(pm_column));
        assert_non_null(full->values[c]);
        if (pick(p->cols[c].name, (void *)(uintptr_t)list)) {
            assert_non_null(p->values[c]);
            assert_memory_equal(p->values[c], full->values[c], p->n * sizeof(double));
            decoded++;
        } else {
            assert_null(p->values[c]);
            assert_non_null(p->unread);
            assert_true(p->unread[c]);
        }
    }
    assert_int_equal(decoded, nwant);
    assert_int_equal(p->nwarnings, full->nwarnings);
    for (size_t i = 0; i < p->nwarnings; i++)
        assert_string_equal(p->warnings[i], full->warnings[i]);
    assert_int_equal(p->bad_records, full->bad_records);
    assert_int_equal(p->nnotes, full->nnotes);
    /* releasing a column never decoded is a no-op */
    for (size_t c = 0; c < p->ncols; c++)
        pm_profile_release_column(p, c);
    pm_profile_free(p);
    pm_profile_free(full);
}

/* Column projection in every form: binary versions 1 and 2 and JSON Lines,
 * whole and with a torn tail, and a profile big enough for block storage. */
static void test_projected_read(void **state)
{
    (void)state;
    static const char *const want[] = {"cpu.percent", "rapl.package-0", NULL};
    static const int formats[] = {PM_FMT_BIN, PM_FMT_BIN1, PM_FMT_JSONL};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", pm_test_tmpdir());
    for (size_t k = 0; k < sizeof formats / sizeof *formats; k++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/proj%zu", dir, k);
        write_profile(path, formats[k], 500, 1);
        check_projection(path, want_listed, want, 2);
        /* torn: the last 7 bytes gone */
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(truncate(path, st.st_size - 7), 0);
        check_projection(path, want_listed, want, 2);
    }
    char bdir[4096], big[4200];
    write_big(bdir, sizeof bdir, big, sizeof big);
    /* all but three columns: still big enough for block storage */
    static const char *const skip[] = {"mem.used", "proc.rss", "sampler.lateness", NULL};
    pm_profile *p = NULL;
    pm_read_hint hint = {.want = want_unlisted, .ctx = (void *)(uintptr_t)skip};
    pm_error err;
    assert_int_equal(pm_profile_read_hinted(big, &hint, NULL, &p, &err), 0);
    assert_true(p->ncols > 16);
    check_projection(big, want_unlisted, skip, p->ncols - 3);
    assert_non_null(p->block);
    /* the block holds the times and the decoded columns, no more */
    assert_int_equal(p->block_bytes, (p->ncols - 3 + 2) * p->block_slot);
    pm_profile_free(p);
    pm_test_rmrf(bdir);
    pm_test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hinted_block),       cmocka_unit_test(test_projected_read),
        cmocka_unit_test(test_roundtrip_bin),      cmocka_unit_test(test_roundtrip_jsonl),
        cmocka_unit_test(test_torn_bin),           cmocka_unit_test(test_torn_jsonl),
        cmocka_unit_test(test_damaged_middle_bin), cmocka_unit_test(test_bad_headers),
        cmocka_unit_test(test_bad_field_length),   cmocka_unit_test(test_big_profile_block),
        cmocka_unit_test(test_removed_bin),        cmocka_unit_test(test_removed_jsonl),
        cmocka_unit_test(test_partial_write_bin),  cmocka_unit_test(test_partial_write_jsonl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
