/* The archive store: a write-then-read round trip (runs, entries, names
 * with quotes and SQL in them, --since), a rerun of the same file, a
 * conflicting run, a run that fails half-way leaving nothing, the schema
 * version (kept on reopen, a newer one refused), and moving files without
 * replacing others.
 *
 * The round trip runs on SQLite in a temporary directory; with
 * PM_ARCHIVE_TEST_DB set (tests/cli/archive_pg.sh sets a postgresql://
 * URL of an empty database) the same checks run on that store. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfmon/archive.h"
#include "perfmon/archive_add.h"
#include "perfmon/archive_store.h"
#include "testutil.h"

static char g_dir[256], g_db[512];

static int setup(void **state)
{
    (void)state;
    const char *d = pm_test_tmpdir();
    if (!d)
        return -1;
    snprintf(g_dir, sizeof g_dir, "%s", d);
    const char *env = getenv("PM_ARCHIVE_TEST_DB");
    if (env && *env)
        snprintf(g_db, sizeof g_db, "%s", env);
    else
        snprintf(g_db, sizeof g_db, "%s/archive.sqlite", g_dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pm_test_rmrf(g_dir);
    return 0;
}

static pm_arch_run *parse(const char *doc)
{
    pm_arch_run *r = NULL;
    pm_error err;
    if (pm_arch_parse("t.json", doc, strlen(doc), NULL, &r, &err) != 0)
        fail_msg("%s", err.msg);
    return r;
}

static pm_store *open_store(void)
{
    pm_store *s = NULL;
    pm_error err;
    pm_error_clear(&err);
    if (pm_store_open(g_db, &s, &err) != 0)
        fail_msg("%s", err.msg);
    return s;
}

#define HOSTILE "x'); DROP TABLE test; --"
#define HOSTILE_ENTRY "\\\"q\\\" 'a'; DELETE FROM entry; %s"
#define HOSTILE_ENTRY_C "\"q\" 'a'; DELETE FROM entry; %s"

static void put(pm_store *s, const char *doc, int want)
{
    pm_arch_run *r = parse(doc);
    pm_error err;
    pm_error_clear(&err);
    int result = -1;
    int rc = pm_store_put(s, r, "t.json", &result, &err);
    pm_arch_run_free(r);
    if (rc != 0 || result != want)
        fail_msg("put: rc %d result %d (%s)", rc, result, err.msg);
}

static void test_round_trip(void **state)
{
    (void)state;
    pm_store *s = open_store();
    static const char run1[] =
        "{\"name\":\"" HOSTILE "\",\"startTime\":\"1700000000\",\"entries\":{\"entry\":["
        "{\"name\":\"b\",\"wallTime\":2.5},{\"name\":\"" HOSTILE_ENTRY "\",\"wallTime\":1e300},"
        "{\"name\":\"a\",\"wallTime\":0.125}]}}";
    static const char run2[] =
        "{\"name\":\"" HOSTILE "\",\"startTime\":\"1700086400\",\"entries\":{\"entry\":["
        "{\"name\":\"a\",\"wallTime\":0.25},{\"name\":\"c\",\"wallTime\":-3.75e-7}]}}";
    static const char other[] = "{\"name\":\"other\",\"startTime\":5}";
    put(s, run1, PM_PUT_STORED);
    put(s, run2, PM_PUT_STORED);
    put(s, other, PM_PUT_STORED);
    put(s, run1, PM_PUT_ALREADY); /* the same file again: stored once */

    /* the same test and start from different content is refused */
    static const char clash[] =
        "{\"name\":\"" HOSTILE "\",\"startTime\":\"1700000000\",\"entries\":{\"entry\":["
        "{\"name\":\"b\",\"wallTime\":9}]}}";
    pm_arch_run *r = parse(clash);
    pm_error err;
    pm_error_clear(&err);
    int result = -1;
    assert_int_equal(pm_store_put(s, r, "c.json", &result, &err), PM_EFORMAT);
    assert_non_null(strstr(err.msg, "already archived from other content"));
    pm_arch_run_free(r);

    pm_store_test *t = NULL;
    size_t n = 0;
    assert_int_equal(pm_store_tests(s, &t, &n, &err), 0);
    assert_int_equal(n, 2);
    size_t h = strcmp(t[0].test, HOSTILE) == 0 ? 0 : 1;
    assert_string_equal(t[h].test, HOSTILE);
    assert_int_equal(t[h].runs, 2);
    assert_int_equal(t[h].entries, 4);
    assert_true(t[h].first_us == 1700000000LL * 1000000);
    assert_true(t[h].last_us == 1700086400LL * 1000000);
    assert_string_equal(t[1 - h].test, "other");
    assert_int_equal(t[1 - h].entries, 0);
    pm_store_tests_free(t, n);

    pm_store_point *p = NULL;
    assert_int_equal(pm_store_history(s, HOSTILE, NULL, INT64_MIN, &p, &n, &err), 0);
    assert_int_equal(n, 5);
    /* ordered by start, then entry name */
    static const struct {
        int64_t start;
        const char *entry;
        double timing;
    } want[] = {{1700000000, "\"q\" 'a'; DELETE FROM entry; %s", 1e300},
                {1700000000, "a", 0.125},
                {1700000000, "b", 2.5},
                {1700086400, "a", 0.25},
                {1700086400, "c", -3.75e-7}};
    for (size_t i = 0; i < 5; i++) {
        if (p[i].start_us != want[i].start * 1000000 || strcmp(p[i].entry, want[i].entry) != 0 ||
            p[i].timing != want[i].timing)
            fail_msg("point %zu: %lld %s %.17g", i, (long long)p[i].start_us, p[i].entry,
                     p[i].timing);
    }
    pm_store_points_free(p, n);

    assert_int_equal(pm_store_history(s, HOSTILE, "a", INT64_MIN, &p, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_true(p[0].timing == 0.125 && p[1].timing == 0.25);
    pm_store_points_free(p, n);
    assert_int_equal(pm_store_history(s, HOSTILE, "a", 1700000001LL * 1000000, &p, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_true(p[0].timing == 0.25);
    pm_store_points_free(p, n);
    assert_int_equal(pm_store_history(s, "no such test", NULL, INT64_MIN, &p, &n, &err), 0);
    assert_int_equal(n, 0);
    pm_store_points_free(p, n);

    char **names = NULL;
    assert_int_equal(pm_store_entries(s, HOSTILE, &names, &n, &err), 0);
    assert_int_equal(n, 4);
    assert_string_equal(names[0], HOSTILE_ENTRY_C);
    assert_string_equal(names[1], "a");
    assert_string_equal(names[3], "c");
    pm_store_names_free(names, n);
    pm_store_close(s);

    /* Reopening keeps everything (and migrates nothing). */
    s = open_store();
    assert_int_equal(pm_store_history(s, HOSTILE, NULL, INT64_MIN, &p, &n, &err), 0);
    assert_int_equal(n, 5);
    pm_store_points_free(p, n);
    pm_store_close(s);
}

/* A run whose entries cannot all be stored leaves no trace: the Test row
 * and the entries before the failing one are rolled back. */
static void test_all_or_nothing(void **state)
{
    (void)state;
    pm_store *s = open_store();
    pm_arch_run *r = parse("{\"name\":\"atomic\",\"startTime\":1,\"entries\":{\"entry\":["
                           "{\"name\":\"x\",\"wallTime\":1},{\"name\":\"y\",\"wallTime\":2}]}}");
    /* Bypass the reader's check: the second entry now repeats the first,
     * which the entry table's primary key refuses. */
    free(r->entries[1].name);
    r->entries[1].name = strdup("x");
    pm_error err;
    pm_error_clear(&err);
    int result;
    assert_int_not_equal(pm_store_put(s, r, "a.json", &result, &err), 0);
    assert_true(err.msg[0] != 0);
    pm_arch_run_free(r);
    pm_store_test *t = NULL;
    size_t n = 0;
    assert_int_equal(pm_store_tests(s, &t, &n, &err), 0);
    for (size_t i = 0; i < n; i++)
        assert_string_not_equal(t[i].test, "atomic");
    pm_store_tests_free(t, n);
    pm_store_point *p = NULL;
    assert_int_equal(pm_store_history(s, "atomic", NULL, INT64_MIN, &p, &n, &err), 0);
    assert_int_equal(n, 0);
    pm_store_points_free(p, n);
    /* and the store still works */
    put(s,
        "{\"name\":\"atomic\",\"startTime\":1,\"entries\":{\"entry\":[{\"name\":\"x\","
        "\"wallTime\":1}]}}",
        PM_PUT_STORED);
    pm_store_close(s);
}

static void test_schema_version(void **state)
{
    (void)state;
    if (getenv("PM_ARCHIVE_TEST_DB") && *getenv("PM_ARCHIVE_TEST_DB")) {
        printf("schema version test: SQLite only\n");
        return;
    }
    char path[600];
    snprintf(path, sizeof path, "%s/version.sqlite", g_dir);
    pm_store *s = NULL;
    pm_error err;
    pm_error_clear(&err);
    assert_int_equal(pm_store_open(path, &s, &err), 0);
    assert_string_equal(pm_store_backend(s), "sqlite");
    pm_store_close(s);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT version FROM perfmon_schema", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), PM_STORE_SCHEMA);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE); /* one row */
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    /* the two indexes the history queries use */
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                                        "AND name IN ('test_test_start', "
                                        "'entry_test_entry_start_timing')",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 2);
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(db, "UPDATE perfmon_schema SET version = 99", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(pm_store_open(path, &s, &err), PM_EFORMAT);
    assert_null(s);
    assert_non_null(strstr(err.msg, "schema version 99 is newer"));

    /* not a database at all */
    snprintf(path, sizeof path, "%s/junk.sqlite", g_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("this is not an SQLite database, but it is long enough to have a header page\n", f);
    fclose(f);
    assert_int_not_equal(pm_store_open(path, &s, &err), 0);
    assert_non_null(strstr(err.msg, path));
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void expect_file(const char *path, const char *text)
{
    char buf[256] = {0};
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("%s: missing", path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    assert_string_equal(buf, text);
}

static void test_move(void **state)
{
    (void)state;
    char src[600], dst[600], out[700];
    snprintf(dst, sizeof dst, "%s/moved", g_dir);
    assert_int_equal(mkdir(dst, 0755), 0);
    pm_error err;
    for (int i = 0; i < 3; i++) {
        snprintf(src, sizeof src, "%s/r.json", g_dir);
        char text[16];
        snprintf(text, sizeof text, "run %d", i);
        write_file(src, text);
        int fd = open(src, O_RDONLY);
        assert_int_equal(pm_arch_move(fd, src, dst, "r.json", out, sizeof out, &err), 0);
        close(fd);
        assert_int_equal(access(src, F_OK), -1);
    }
    /* nothing replaced: the later ones got numbered names */
    snprintf(out, sizeof out, "%s/r.json", dst);
    expect_file(out, "run 0");
    snprintf(out, sizeof out, "%s/r.json.1", dst);
    expect_file(out, "run 1");
    snprintf(out, sizeof out, "%s/r.json.2", dst);
    expect_file(out, "run 2");

    /* Across file systems (where /dev/shm is one of its own): a copy. */
    struct stat a, b;
    if (stat("/dev/shm", &a) != 0 || stat(g_dir, &b) != 0 || a.st_dev == b.st_dev ||
        access("/dev/shm", W_OK) != 0) {
        printf("SKIP  no second file system to move across\n");
        return;
    }
    snprintf(src, sizeof src, "/dev/shm/pm-move-%d.json", (int)getpid());
    write_file(src, "across");
    int fd = open(src, O_RDONLY);
    assert_int_equal(pm_arch_move(fd, src, dst, "x.json", out, sizeof out, &err), 0);
    close(fd);
    assert_int_equal(access(src, F_OK), -1);
    expect_file(out, "across");
    char partial[700];
    snprintf(partial, sizeof partial, "%s/.x.json.partial", dst);
    assert_int_equal(access(partial, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_all_or_nothing),
        cmocka_unit_test(test_schema_version),
        cmocka_unit_test(test_move),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
