/* Unit tests of the bounded file readers (src/common/fileio.c), on which
 * every /proc and /sys reader of the sampler rests: NUL termination, the
 * "buffer full" flag, kept descriptors re-read in place, size limits. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfmon/fileio.h"

#include "../support/testutil.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char dir[256];

static int setup(void **state)
{
    (void)state;
    char *t = pm_test_tmpdir();
    if (!t)
        return -1;
    snprintf(dir, sizeof dir, "%s", t);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pm_test_rmrf(dir);
    return 0;
}

/* Write n bytes of a repeating pattern to dir/name (truncating in place). */
static void put(const char *name, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = 0; i < n; i++)
        fputc('a' + (int)(i % 26), f);
    assert_int_equal(fclose(f), 0);
}

static void test_read_small(void **state)
{
    (void)state;
    static const struct {
        size_t size; /* file size */
        size_t cap;
        ssize_t ret;
        int full;
    } rows[] = {
        {0, 16, 0, 0},   {10, 16, 10, 0},
        {15, 16, 15, 1}, /* exactly cap-1: cannot tell, says full */
        {16, 16, 15, 1}, {100000, 16, 15, 1},
        {1, 2, 1, 1},    {5, 1, 0, 1}, /* room for the NUL only */
    };
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    for (size_t i = 0; i < N(rows); i++) {
        put("f", rows[i].size);
        char buf[32];
        memset(buf, 'Z', sizeof buf);
        int full = -1;
        ssize_t r = pm_read_small(dfd, "f", buf, rows[i].cap, &full);
        if (r != rows[i].ret || full != rows[i].full)
            fail_msg("row %zu: size %zu cap %zu: got %zd full %d, expected %zd full %d", i,
                     rows[i].size, rows[i].cap, r, full, rows[i].ret, rows[i].full);
        assert_int_equal(buf[r], '\0');
        assert_int_equal(buf[rows[i].cap], 'Z'); /* nothing past cap */
        assert_int_equal(strlen(buf), (size_t)r);
    }
    char buf[8];
    assert_int_equal(pm_read_small(dfd, "absent", buf, sizeof buf, NULL), -ENOENT);
    assert_int_equal(buf[0], '\0');
    assert_int_equal(pm_read_small(AT_FDCWD, "/nonexistent/x", buf, sizeof buf, NULL), -ENOENT);
    char sub[300];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(pm_read_small(dfd, "sub", buf, sizeof buf, NULL), -EISDIR);
    close(dfd);
}

static void test_pread_kept(void **state)
{
    (void)state;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    char path[512];
    snprintf(path, sizeof path, "%s/k", dir);
    int fd = -1;
    char buf[64];
    int full;

    /* Absent: error, descriptor stays closed. */
    assert_int_equal(pm_pread_kept(&fd, dfd, "k", buf, sizeof buf, &full), -ENOENT);
    assert_int_equal(fd, -1);

    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("first\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(pm_pread_kept(&fd, dfd, "k", buf, sizeof buf, &full), 6);
    assert_true(fd >= 0);
    int kept = fd;
    assert_string_equal(buf, "first\n");
    assert_int_equal(full, 0);

    /* Rewritten in place: the same descriptor reads the new, shorter text
     * from offset 0 (no stale tail). */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("2nd\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(pm_pread_kept(&fd, dfd, "k", buf, sizeof buf, &full), 4);
    assert_int_equal(fd, kept);
    assert_string_equal(buf, "2nd\n");

    /* Full buffer is flagged. */
    assert_int_equal(pm_pread_kept(&fd, dfd, "k", buf, 3, &full), 2);
    assert_int_equal(full, 1);
    assert_string_equal(buf, "2n");

    pm_close_kept(&fd);
    assert_int_equal(fd, -1);
    pm_close_kept(&fd); /* twice is fine */
    assert_int_equal(fd, -1);

    /* A read error (a directory) closes and resets the descriptor. */
    char sub[600];
    snprintf(sub, sizeof sub, "%s/d", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(pm_pread_kept(&fd, dfd, "d", buf, sizeof buf, NULL), -EISDIR);
    assert_int_equal(fd, -1);

    assert_int_equal(pm_pread_kept(&fd, dfd, "k", buf, 0, NULL), -EINVAL);
    close(dfd);
}

static void test_pread_grow(void **state)
{
    (void)state;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    char path[600];
    snprintf(path, sizeof path, "%s/g", dir);
    static const struct {
        size_t size, max;
        ssize_t rc; /* the size, or -errno */
    } rows[] = {
        {0, 100, 0},
        {99, 100, 99},          /* exactly fits with its NUL */
        {100, 100, -EFBIG},     /* never cut short */
        {5000, 1u << 20, 5000}, /* beyond the first 4 KiB */
        {300000, 1u << 20, 300000},
        {300000, 200000, -EFBIG},
    };
    for (size_t i = 0; i < N(rows); i++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        for (size_t k = 0; k < rows[i].size; k++)
            fputc('a' + (int)(k % 26), f);
        assert_int_equal(fclose(f), 0);
        int fd = -1;
        char *buf = NULL;
        size_t cap = 0;
        for (int again = 0; again < 2; again++) { /* kept descriptor and buffer */
            ssize_t n = pm_pread_grow(&fd, dfd, "g", &buf, &cap, rows[i].max);
            if (n != rows[i].rc)
                fail_msg("%zu bytes, max %zu: %zd, expected %zd", rows[i].size, rows[i].max, n,
                         rows[i].rc);
            assert_true(fd >= 0);
            assert_true(cap <= rows[i].max);
            if (n >= 0) {
                assert_int_equal(strlen(buf), rows[i].size);
                for (size_t k = 0; k < rows[i].size; k++)
                    if (buf[k] != 'a' + (int)(k % 26))
                        fail_msg("%zu bytes: byte %zu differs", rows[i].size, k);
            }
        }
        pm_close_kept(&fd);
        free(buf);
    }
    /* Absent file, bad limit. */
    int fd = -1;
    char *buf = NULL;
    size_t cap = 0;
    assert_int_equal(pm_pread_grow(&fd, dfd, "absent", &buf, &cap, 100), -ENOENT);
    assert_int_equal(fd, -1);
    assert_int_equal(pm_pread_grow(&fd, dfd, "g", &buf, &cap, 1), -EINVAL);
    assert_null(buf);
    close(dfd);
}

/* A seq_file (/proc/self/maps with a few hundred mappings, as
 * /proc/diskstats and /proc/net/dev on big hosts) returns about a page per
 * read whatever the buffer: pm_pread_grow still gets all of it. */
static void test_pread_grow_seq_file(void **state)
{
    (void)state;
    enum { NMAP = 400 };
    static void *maps[NMAP];
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < NMAP; i++) {
        /* Alternating protections keep neighbours from merging. */
        maps[i] = mmap(NULL, (size_t)page, i % 2 ? PROT_READ : PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(maps[i] != MAP_FAILED);
    }
    /* Both buffers exist before reading, so reading maps no new memory. */
    size_t big = 1u << 20;
    char *ref = malloc(big);
    char *buf = malloc(big);
    assert_non_null(ref);
    assert_non_null(buf);
    int rfd = open("/proc/self/maps", O_RDONLY);
    assert_true(rfd >= 0);
    ssize_t rn = pm_read_fd(rfd, ref, big, NULL); /* read() until EOF */
    close(rfd);
    assert_true(rn > 4 * page);
    int fd = -1;
    size_t cap = big;
    ssize_t n = pm_pread_grow(&fd, AT_FDCWD, "/proc/self/maps", &buf, &cap, big);
    assert_int_equal(n, rn);
    assert_string_equal(buf, ref);
    /* Again through the kept descriptor. */
    n = pm_pread_grow(&fd, AT_FDCWD, "/proc/self/maps", &buf, &cap, big);
    assert_int_equal(n, rn);
    assert_string_equal(buf, ref);
    pm_close_kept(&fd);
    free(buf);
    free(ref);
    for (int i = 0; i < NMAP; i++)
        munmap(maps[i], (size_t)page);
}

static void test_read_whole(void **state)
{
    (void)state;
    static const struct {
        size_t size, max;
        int rc;
    } rows[] = {
        {0, 100, 0},           {100, 100, 0}, /* exactly the limit */
        {101, 100, PM_ELIMIT}, {200000, 1u << 20, 0}, {200000, 100000, PM_ELIMIT},
    };
    for (size_t i = 0; i < N(rows); i++) {
        put("w", rows[i].size);
        char path[512];
        snprintf(path, sizeof path, "%s/w", dir);
        char *out = (char *)1;
        size_t len = 7;
        pm_error err;
        pm_error_clear(&err);
        int rc = pm_read_whole(path, rows[i].max, &out, &len, &err);
        if (rc != rows[i].rc)
            fail_msg("row %zu: rc %d, expected %d (%s)", i, rc, rows[i].rc, err.msg);
        if (rc == 0) {
            assert_int_equal(len, rows[i].size);
            assert_int_equal(out[len], '\0');
            assert_int_equal(strlen(out), len);
            free(out);
        } else {
            assert_null(out);
            assert_non_null(strstr(err.msg, path));
        }
    }
    char *out;
    size_t len;
    pm_error err;
    assert_int_equal(pm_read_whole("/nonexistent/x", 10, &out, &len, &err), PM_EIO);
    assert_int_equal(err.sys, ENOENT);
    assert_int_equal(pm_read_whole(dir, 10, &out, &len, &err), PM_EIO); /* a directory */
    /* /proc files say size 0: read by growing. */
    assert_int_equal(pm_read_whole("/proc/self/status", 1u << 20, &out, &len, &err), 0);
    assert_true(len > 0);
    assert_non_null(strstr(out, "Name:"));
    free(out);
}

static void test_read_whole_pipe_limit(void **state)
{
    (void)state;
    /* A FIFO (or any non-regular file, e.g. PBS_NODEFILE=<(...)) longer
     * than max is refused like a regular file: the header promises "at
     * most max bytes". */
    static const struct {
        size_t size; /* bytes written into the FIFO */
        int rc;
    } rows[] = {{1000, PM_ELIMIT}, {101, PM_ELIMIT}, {100, 0}, {99, 0}, {0, 0}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char fifo[512];
        snprintf(fifo, sizeof fifo, "%s/fifo%zu", dir, i);
        assert_int_equal(mkfifo(fifo, 0600), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            int fd = open(fifo, O_WRONLY);
            char data[1000];
            memset(data, 'x', sizeof data);
            ssize_t n = fd >= 0 ? write(fd, data, rows[i].size) : -1;
            _exit(n == (ssize_t)rows[i].size ? 0 : 1);
        }
        char *out = NULL;
        size_t len = 0;
        pm_error err;
        pm_error_clear(&err);
        int rc = pm_read_whole(fifo, 100, &out, &len, &err);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        if (rc != rows[i].rc)
            fail_msg("%zu bytes, max 100: rc %d, expected %d", rows[i].size, rc, rows[i].rc);
        if (rc == 0) {
            assert_int_equal(len, rows[i].size);
            assert_int_equal(strlen(out), rows[i].size);
            free(out);
        } else {
            assert_null(out);
            assert_non_null(strstr(err.msg, "100"));
        }
    }
}

static void test_write_all(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/out", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    static char big[1 << 20];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)('a' + i % 26);
    assert_int_equal(pm_write_all(fd, big, sizeof big), 0);
    assert_int_equal(pm_write_all(fd, big, 0), 0);
    close(fd);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, sizeof big);
    /* A closed descriptor is an error, reported as -errno. */
    assert_int_equal(pm_write_all(fd, "x", 1), -EBADF);
    /* A full device: ENOSPC comes back. */
    int full = open("/dev/full", O_WRONLY);
    if (full >= 0) {
        assert_int_equal(pm_write_all(full, "x", 1), -ENOSPC);
        close(full);
    }
}

static void test_path_join(void **state)
{
    (void)state;
    static const struct {
        const char *dir, *name;
        size_t cap;
        int rc;
        const char *out;
    } rows[] = {
        {"/a", "b", 64, 0, "/a/b"},
        {"/a/", "b", 64, 0, "/a/b"},
        {"/", "b", 64, 0, "/b"},
        {"", "b", 64, 0, "b"},
        {NULL, "b", 64, 0, "b"},
        {"/a", "b", 5, 0, "/a/b"}, /* exactly fits */
        {"/a", "bc", 5, -ENAMETOOLONG, NULL},
        {"/a", "", 64, 0, "/a/"},
    };
    for (size_t i = 0; i < N(rows); i++) {
        char out[64];
        int rc = pm_path_join(out, rows[i].cap, rows[i].dir, rows[i].name);
        assert_int_equal(rc, rows[i].rc);
        if (rc == 0)
            assert_string_equal(out, rows[i].out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_read_small, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pread_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pread_grow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pread_grow_seq_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_whole_pipe_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_path_join, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
