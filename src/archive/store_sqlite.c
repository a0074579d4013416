/* The SQLite backend of the archive store (docs/archive.md, "Schema").
 *
 * WAL journal (readers never block the writer), a busy timeout so that
 * concurrent archivers wait for each other instead of failing, and
 * synchronous=FULL: a committed run survives a power cut, which matters
 * because the source file is removed once its run is committed.  Writes
 * take the write lock up front (BEGIN IMMEDIATE): a deferred transaction
 * that upgrades from read to write can fail with SQLITE_BUSY without the
 * busy handler being called. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "perfmon/mem.h"
#include "store_internal.h"

#define BUSY_TIMEOUT_MS 60000

/* Schema steps: step i takes a store from version i to i + 1. */
static const char *const migrations[PM_STORE_SCHEMA] = {
    "CREATE TABLE test ("
    "  id INTEGER PRIMARY KEY,"
    "  test TEXT NOT NULL,"
    "  start INTEGER NOT NULL,"
    "  info TEXT NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  digest TEXT NOT NULL,"
    "  source TEXT NOT NULL,"
    "  added INTEGER NOT NULL);"
    "CREATE UNIQUE INDEX test_test_start ON test(test, start);"
    "CREATE TABLE entry ("
    "  test_id INTEGER NOT NULL REFERENCES test(id) ON DELETE CASCADE,"
    "  test TEXT NOT NULL,"
    "  entry TEXT NOT NULL,"
    "  start INTEGER NOT NULL,"
    "  timing REAL NOT NULL,"
    "  info TEXT NOT NULL,"
    "  PRIMARY KEY (test_id, entry));"
    "CREATE INDEX entry_test_entry_start_timing ON entry(test, entry, start, timing);",
};

enum { Q_FIND, Q_TEST, Q_ENTRY, Q_TESTS, Q_HISTORY, Q_ENTRIES, Q_N };

static const char *const queries[Q_N] = {
    [Q_FIND] = "SELECT digest FROM test WHERE test = ?1 AND start = ?2",
    [Q_TEST] = "INSERT INTO test (test, start, info, kind, digest, source, added)"
               " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [Q_ENTRY] = "INSERT INTO entry (test_id, test, entry, start, timing, info)"
                " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [Q_TESTS] = "SELECT t.test, count(*), min(t.start), max(t.start),"
                " (SELECT count(DISTINCT e.entry) FROM entry e WHERE e.test = t.test)"
                " FROM test t GROUP BY t.test ORDER BY t.test",
    [Q_HISTORY] = "SELECT start, timing, entry FROM entry"
                  " WHERE test = ?1 AND (?2 IS NULL OR entry = ?2) AND start >= ?3"
                  " ORDER BY start, entry",
    [Q_ENTRIES] = "SELECT DISTINCT entry FROM entry WHERE test = ?1 ORDER BY entry",
};

typedef struct lite {
    sqlite3 *db;
    char *path;
    sqlite3_stmt *q[Q_N];
} lite;

static int db_error(pm_error *err, lite *l, const char *what)
{
    return pm_error_set(err, PM_EIO, "%s: %s: %s", l->path, what, sqlite3_errmsg(l->db));
}

/* Run constant SQL (one or more statements), prepared one at a time. */
static int exec_const(lite *l, const char *sql, pm_error *err)
{
    const char *p = sql;
    while (p && *p) {
        sqlite3_stmt *st = NULL;
        const char *tail = NULL;
        if (sqlite3_prepare_v2(l->db, p, -1, &st, &tail) != SQLITE_OK)
            return db_error(err, l, "prepare");
        if (!st) /* only whitespace or a comment left */
            break;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            ;
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
            return db_error(err, l, "statement failed");
        p = tail;
    }
    return 0;
}

static void rollback(lite *l)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_get_autocommit(l->db))
        return;
    if (sqlite3_prepare_v2(l->db, "ROLLBACK", -1, &st, NULL) == SQLITE_OK)
        sqlite3_step(st);
    sqlite3_finalize(st);
}

static int migrate(lite *l, pm_error *err)
{
    int rc = exec_const(l,
                        "BEGIN IMMEDIATE;"
                        "CREATE TABLE IF NOT EXISTS perfmon_schema (version INTEGER NOT NULL);",
                        err);
    if (rc)
        return rc;
    sqlite3_stmt *st = NULL;
    long long version = 0;
    if (sqlite3_prepare_v2(l->db, "SELECT coalesce(max(version), 0) FROM perfmon_schema", -1, &st,
                           NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        rc = db_error(err, l, "reading the schema version");
        rollback(l);
        return rc;
    }
    version = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (version > PM_STORE_SCHEMA || version < 0) {
        rollback(l);
        return pm_error_set(err, PM_EFORMAT,
                            "%s: schema version %lld is newer than this perfmon-archive (%d)",
                            l->path, version, PM_STORE_SCHEMA);
    }
    for (long long v = version; v < PM_STORE_SCHEMA; v++)
        if ((rc = exec_const(l, migrations[v], err)) != 0) {
            rollback(l);
            pm_error_prefix(err, "migrating to schema %lld: ", v + 1);
            return rc;
        }
    if (version < PM_STORE_SCHEMA) {
        if (sqlite3_prepare_v2(l->db, "DELETE FROM perfmon_schema", -1, &st, NULL) != SQLITE_OK ||
            sqlite3_step(st) != SQLITE_DONE) {
            sqlite3_finalize(st);
            rc = db_error(err, l, "writing the schema version");
            rollback(l);
            return rc;
        }
        sqlite3_finalize(st);
        if (sqlite3_prepare_v2(l->db, "INSERT INTO perfmon_schema (version) VALUES (?1)", -1, &st,
                               NULL) != SQLITE_OK ||
            sqlite3_bind_int(st, 1, PM_STORE_SCHEMA) != SQLITE_OK ||
            sqlite3_step(st) != SQLITE_DONE) {
            sqlite3_finalize(st);
            rc = db_error(err, l, "writing the schema version");
            rollback(l);
            return rc;
        }
        sqlite3_finalize(st);
    }
    if ((rc = exec_const(l, "COMMIT", err)) != 0)
        rollback(l);
    return rc;
}

static void lite_close(pm_store *s)
{
    lite *l = s->impl;
    for (int i = 0; i < Q_N; i++)
        sqlite3_finalize(l->q[i]);
    sqlite3_close(l->db);
    free(l->path);
    free(l);
    free(s);
}

static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
    return sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) == SQLITE_OK ? 0 : -1;
}

/* Is (test, start) stored?  *same tells whether with the same digest. */
static int find_run(lite *l, const pm_arch_run *run, int *found, int *same, pm_error *err)
{
    sqlite3_stmt *st = l->q[Q_FIND];
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (bind_text(st, 1, run->test) || sqlite3_bind_int64(st, 2, run->start_us) != SQLITE_OK)
        return db_error(err, l, "bind");
    int rc = sqlite3_step(st);
    *found = rc == SQLITE_ROW;
    *same = 0;
    if (rc == SQLITE_ROW) {
        const unsigned char *d = sqlite3_column_text(st, 0);
        *same = d && strcmp((const char *)d, run->digest) == 0;
    } else if (rc != SQLITE_DONE) {
        return db_error(err, l, "looking up the run");
    }
    sqlite3_reset(st);
    return 0;
}

static int insert_run(lite *l, const pm_arch_run *run, const char *source, pm_error *err)
{
    sqlite3_stmt *st = l->q[Q_TEST];
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (bind_text(st, 1, run->test) || sqlite3_bind_int64(st, 2, run->start_us) != SQLITE_OK ||
        bind_text(st, 3, run->info) || bind_text(st, 4, pm_arch_kind_name(run->kind)) ||
        bind_text(st, 5, run->digest) || bind_text(st, 6, source) ||
        sqlite3_bind_int64(st, 7, pm_store_now_us()) != SQLITE_OK)
        return db_error(err, l, "bind");
    if (sqlite3_step(st) != SQLITE_DONE)
        return db_error(err, l, "storing the test");
    sqlite3_reset(st);
    sqlite3_int64 id = sqlite3_last_insert_rowid(l->db);
    st = l->q[Q_ENTRY];
    for (size_t i = 0; i < run->nentries; i++) {
        const pm_arch_entry *e = &run->entries[i];
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK || bind_text(st, 2, run->test) ||
            bind_text(st, 3, e->name) || sqlite3_bind_int64(st, 4, run->start_us) != SQLITE_OK ||
            sqlite3_bind_double(st, 5, e->timing) != SQLITE_OK || bind_text(st, 6, e->info))
            return db_error(err, l, "bind");
        if (sqlite3_step(st) != SQLITE_DONE)
            return db_error(err, l, "storing an entry");
    }
    sqlite3_reset(st);
    return 0;
}

static int lite_put(pm_store *s, const pm_arch_run *run, const char *source, int *result,
                    pm_error *err)
{
    lite *l = s->impl;
    int rc = exec_const(l, "BEGIN IMMEDIATE", err);
    if (rc)
        return rc;
    int found = 0, same = 0;
    if ((rc = find_run(l, run, &found, &same, err)) != 0) {
        rollback(l);
        return rc;
    }
    if (found) {
        rollback(l);
        if (same) {
            *result = PM_PUT_ALREADY;
            return 0;
        }
        char when[40];
        pm_arch_format_time(run->start_us, when, sizeof when);
        return pm_error_set(err, PM_EFORMAT,
                            "test \"%s\" started %s is already archived from other content",
                            run->test, when);
    }
    if ((rc = insert_run(l, run, source, err)) != 0 || (rc = exec_const(l, "COMMIT", err)) != 0) {
        rollback(l);
        return rc;
    }
    *result = PM_PUT_STORED;
    return 0;
}

static int lite_tests(pm_store *s, pm_store_test **out, size_t *n, pm_error *err)
{
    lite *l = s->impl;
    sqlite3_stmt *st = l->q[Q_TESTS];
    sqlite3_reset(st);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        pm_store_test row = {
            .runs = (size_t)sqlite3_column_int64(st, 1),
            .first_us = sqlite3_column_int64(st, 2),
            .last_us = sqlite3_column_int64(st, 3),
            .entries = (size_t)sqlite3_column_int64(st, 4),
        };
        if (pm_store_push_test(out, n, &cap, (const char *)sqlite3_column_text(st, 0), &row) != 0) {
            sqlite3_reset(st);
            return pm_error_set(err, PM_ENOMEM, "%s: out of memory", l->path);
        }
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : db_error(err, l, "listing tests");
}

static int lite_history(pm_store *s, const char *test, const char *entry, int64_t since_us,
                        pm_store_point **out, size_t *n, pm_error *err)
{
    lite *l = s->impl;
    sqlite3_stmt *st = l->q[Q_HISTORY];
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (bind_text(st, 1, test) || (entry && bind_text(st, 2, entry)) ||
        sqlite3_bind_int64(st, 3, since_us) != SQLITE_OK)
        return db_error(err, l, "bind");
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (pm_store_push_point(out, n, &cap, sqlite3_column_int64(st, 0),
                                sqlite3_column_double(st, 1),
                                (const char *)sqlite3_column_text(st, 2)) != 0) {
            sqlite3_reset(st);
            return pm_error_set(err, PM_ENOMEM, "%s: out of memory", l->path);
        }
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : db_error(err, l, "reading the history");
}

static int lite_entries(pm_store *s, const char *test, char ***names, size_t *n, pm_error *err)
{
    lite *l = s->impl;
    sqlite3_stmt *st = l->q[Q_ENTRIES];
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (bind_text(st, 1, test))
        return db_error(err, l, "bind");
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (pm_store_push_name(names, n, &cap, (const char *)sqlite3_column_text(st, 0)) != 0) {
            sqlite3_reset(st);
            return pm_error_set(err, PM_ENOMEM, "%s: out of memory", l->path);
        }
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : db_error(err, l, "listing entries");
}

static const pm_store_ops lite_ops = {
    .name = "sqlite",
    .put = lite_put,
    .tests = lite_tests,
    .history = lite_history,
    .entries = lite_entries,
    .close = lite_close,
};

/* journal_mode=WAL needs a moment alone with a new database: archivers
 * that start together may see SQLITE_BUSY here despite the timeout. */
static int set_wal(lite *l, pm_error *err)
{
    for (int tries = 0;; tries++) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(l->db, "PRAGMA journal_mode=WAL", -1, &st, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        const unsigned char *mode = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
        int wal = mode && strcmp((const char *)mode, "wal") == 0;
        sqlite3_finalize(st);
        if (wal)
            return 0;
        if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || tries >= 200)
            return db_error(err, l, "cannot switch to WAL mode");
        sqlite3_sleep(50);
    }
}

/* Archivers that start together on a database that does not exist yet all
 * create it, switch it to WAL and migrate its schema at once; under load
 * one of them was seen to read the new file as malformed ("cannot switch
 * to WAL mode: database disk image is malformed", 4 archivers under
 * valgrind).  That opening phase is therefore taken one archiver at a
 * time, under an exclusive flock(2) on the database's directory: a lock
 * on the directory creates no file, and, unlike a second descriptor of
 * the database itself, closing it cannot drop the POSIX locks SQLite
 * holds on the database.  Returns the locked descriptor, or -1 when the
 * directory cannot be opened or locked (the opening then goes on
 * unserialised, as before). */
static int lock_dir(const char *path)
{
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return -1;
    int fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc;
    while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR)
        ;
    if (rc != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void unlock_dir(int fd)
{
    if (fd >= 0)
        close(fd); /* releases the flock */
}

static int lite_open(const char *path, pm_store **out, pm_error *err);

int pm_store_sqlite_open(const char *path, pm_store **out, pm_error *err)
{
    int lk = lock_dir(path);
    int rc = lite_open(path, out, err);
    unlock_dir(lk);
    return rc;
}

static int lite_open(const char *path, pm_store **out, pm_error *err)
{
    *out = NULL;
    pm_store *s = calloc(1, sizeof *s);
    lite *l = calloc(1, sizeof *l);
    if (!s || !l || !(l->path = pm_strdup(path))) {
        free(s);
        free(l);
        return pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
    }
    s->ops = &lite_ops;
    s->impl = l;
    int rc;
    if (sqlite3_open_v2(path, &l->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW |
                            SQLITE_OPEN_FULLMUTEX,
                        NULL) != SQLITE_OK) {
        rc = l->db ? db_error(err, l, "cannot open")
                   : pm_error_set(err, PM_ENOMEM, "%s: out of memory", path);
        lite_close(s);
        return rc;
    }
    sqlite3_extended_result_codes(l->db, 1);
    sqlite3_busy_timeout(l->db, BUSY_TIMEOUT_MS);
    if ((rc = set_wal(l, err)) != 0 ||
        (rc = exec_const(l, "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;", err)) != 0 ||
        (rc = migrate(l, err)) != 0) {
        lite_close(s);
        return rc;
    }
    for (int i = 0; i < Q_N; i++)
        if (sqlite3_prepare_v3(l->db, queries[i], -1, SQLITE_PREPARE_PERSISTENT, &l->q[i], NULL) !=
            SQLITE_OK) {
            rc = db_error(err, l, "prepare");
            lite_close(s);
            return rc;
        }
    *out = s;
    return 0;
}
