/* Unit tests of the sampler's one-pread readers (src/sampler/sread.c):
 * whatever the file's length, they return what pm_pread_grow returns,
 * never a file cut short; on the running kernel's record files the same
 * lines. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfmon/fileio.h"
#include "../../src/sampler/sread.h"

typedef ssize_t (*reader)(int *, int, const char *, char **, size_t *, size_t);

/* A regular file of len bytes of numbered lines, read by r through a kept
 * descriptor twice (the second read reuses the descriptor and buffer):
 * the whole file each time. */
static void check_len(reader r, size_t len)
{
    char dir[] = "/tmp/pm_sread_XXXXXX";
    assert_non_null(mkdtemp(dir));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(dfd >= 0);
    char *want = malloc(len + 1);
    assert_non_null(want);
    for (size_t i = 0; i < len; i++)
        want[i] = (char)(i % 50 == 49 ? '\n' : '0' + (int)(i % 10));
    want[len] = '\0';
    int wfd = openat(dfd, "f", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(wfd >= 0);
    assert_int_equal(pm_write_all(wfd, want, len), 0);
    assert_int_equal(close(wfd), 0);
    int fd = -1;
    char *buf = NULL;
    size_t cap = 0;
    for (int pass = 0; pass < 2; pass++) {
        ssize_t n = r(&fd, dfd, "f", &buf, &cap, 1 << 20);
        assert_int_equal(n, (ssize_t)len);
        assert_memory_equal(buf, want, len + 1);
    }
    pm_close_kept(&fd);
    free(buf);
    free(want);
    assert_int_equal(unlinkat(dfd, "f", 0), 0);
    close(dfd);
    assert_int_equal(rmdir(dir), 0);
}

static void test_whole_any_length(void **state)
{
    (void)state;
    static const size_t lens[] = {0, 1, 100, 3583, 3584, 3585, 4094, 4095, 4096, 4097, 9000, 70000};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        check_len(pm_sread_whole, lens[i]);
}

static void test_records_any_length(void **state)
{
    (void)state;
    static const size_t lens[] = {0, 1, 100, 3583, 3584, 3585, 4094, 4095, 4096, 4097, 9000, 70000};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        check_len(pm_sread_records, lens[i]);
}

/* Over max: -EFBIG, as pm_pread_grow says; a missing file: -ENOENT. */
static void test_limits(void **state)
{
    (void)state;
    int fd = -1;
    char *buf = NULL;
    size_t cap = 0;
    assert_int_equal(pm_sread_records(&fd, AT_FDCWD, "/nonexistent-perfmon/x", &buf, &cap, 1 << 16),
                     -ENOENT);
    assert_int_equal(fd, -1);
    char dir[] = "/tmp/pm_sread_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/big", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 2000; i++)
        fprintf(f, "line %d\n", i);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(pm_sread_whole(&fd, AT_FDCWD, path, &buf, &cap, 8192), -EFBIG);
    pm_close_kept(&fd);
    assert_int_equal(pm_sread_records(&fd, AT_FDCWD, path, &buf, &cap, 8192), -EFBIG);
    pm_close_kept(&fd);
    free(buf);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* The running kernel's files: the same lines (by their first word) as
 * pm_pread_grow reads; skipped where a file is absent. */
static void same_lines(reader r, const char *path)
{
    int fd1 = -1, fd2 = -1;
    char *a = NULL, *b = NULL;
    size_t ca = 0, cb = 0;
    ssize_t na = r(&fd1, AT_FDCWD, path, &a, &ca, 1 << 22);
    ssize_t nb = pm_pread_grow(&fd2, AT_FDCWD, path, &b, &cb, 1 << 22);
    if (nb < 0) {
        free(a);
        free(b);
        return;
    }
    assert_true(na > 0);
    int la = 0, lb = 0;
    for (ssize_t i = 0; i < na; i++)
        la += a[i] == '\n';
    for (ssize_t i = 0; i < nb; i++)
        lb += b[i] == '\n';
    assert_int_equal(la, lb);
    assert_true(na > 0 && a[na - 1] == '\n');
    pm_close_kept(&fd1);
    pm_close_kept(&fd2);
    free(a);
    free(b);
}

static void test_kernel_files(void **state)
{
    (void)state;
    same_lines(pm_sread_whole, "/proc/stat");
    same_lines(pm_sread_whole, "/proc/meminfo");
    same_lines(pm_sread_records, "/proc/diskstats");
    same_lines(pm_sread_records, "/proc/net/dev");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_any_length),
        cmocka_unit_test(test_records_any_length),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_kernel_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
