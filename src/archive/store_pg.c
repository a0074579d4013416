/* The PostgreSQL backend of the archive store (libpq), for archives that
 * many CI runners share.  Same schema and behaviour as store_sqlite.c
 * (docs/archive.md, "Schema"); every statement that carries input is a
 * server-side prepared statement with parameters.
 *
 * Concurrency: schema migration runs under a transaction-level advisory
 * lock, so archivers that start together migrate once.  A run is stored
 * with INSERT ... ON CONFLICT (test, start) DO NOTHING: of two archivers
 * storing the same run, the second waits for the first to commit and then
 * finds it stored.  Messages never repeat the URL (it may hold a
 * password). */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/mem.h"
#include "store_internal.h"

/* pg_advisory_xact_lock key for migrations: "pmarch" in ASCII. */
#define MIGRATE_LOCK "112109097114099104"

static const char *const migrations[PM_STORE_SCHEMA] = {
    "CREATE TABLE test ("
    "  id BIGSERIAL PRIMARY KEY,"
    "  test TEXT NOT NULL,"
    "  start BIGINT NOT NULL,"
    "  info TEXT NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  digest TEXT NOT NULL,"
    "  source TEXT NOT NULL,"
    "  added BIGINT NOT NULL);"
    "CREATE UNIQUE INDEX test_test_start ON test(test, start);"
    "CREATE TABLE entry ("
    "  test_id BIGINT NOT NULL REFERENCES test(id) ON DELETE CASCADE,"
    "  test TEXT NOT NULL,"
    "  entry TEXT NOT NULL,"
    "  start BIGINT NOT NULL,"
    "  timing DOUBLE PRECISION NOT NULL,"
    "  info TEXT NOT NULL,"
    "  PRIMARY KEY (test_id, entry));"
    "CREATE INDEX entry_test_entry_start_timing ON entry(test, entry, start, timing);",
};

enum { Q_INSERT, Q_FIND, Q_ENTRY, Q_TESTS, Q_HISTORY, Q_ENTRIES, Q_N };

static const struct {
    const char *name, *sql;
    int nparams;
} queries[Q_N] = {
    [Q_INSERT] = {"pm_insert",
                  "INSERT INTO test (test, start, info, kind, digest, source, added)"
                  " VALUES ($1, $2, $3, $4, $5, $6, $7)"
                  " ON CONFLICT (test, start) DO NOTHING RETURNING id",
                  7},
    [Q_FIND] = {"pm_find", "SELECT digest FROM test WHERE test = $1 AND start = $2", 2},
    [Q_ENTRY] = {"pm_entry",
                 "INSERT INTO entry (test_id, test, entry, start, timing, info)"
                 " VALUES ($1, $2, $3, $4, $5, $6)",
                 6},
    [Q_TESTS] = {"pm_tests",
                 "SELECT t.test, count(*), min(t.start), max(t.start),"
                 " (SELECT count(DISTINCT e.entry) FROM entry e WHERE e.test = t.test)"
                 " FROM test t GROUP BY t.test ORDER BY t.test COLLATE \"C\"",
                 0},
    [Q_HISTORY] = {"pm_history",
                   "SELECT start, timing, entry FROM entry"
                   " WHERE test = $1 AND ($2::text IS NULL OR entry = $2) AND start >= $3"
                   " ORDER BY start, entry COLLATE \"C\"",
                   3},
    [Q_ENTRIES] = {"pm_entries",
                   "SELECT DISTINCT entry COLLATE \"C\" FROM entry WHERE test = $1 ORDER BY 1", 1},
};

typedef struct pg {
    PGconn *conn;
} pg;

/* libpq's messages end in a newline; keep the first line. */
static int pg_error(pm_error *err, PGconn *conn, const char *what)
{
    char msg[600];
    snprintf(msg, sizeof msg, "%s", conn ? PQerrorMessage(conn) : "out of memory");
    msg[strcspn(msg, "\n")] = 0;
    return pm_error_set(err, PM_EIO, "PostgreSQL: %s: %s", what, msg);
}

static void quiet_notices(void *arg, const char *message)
{
    (void)arg;
    (void)message; /* "relation ... already exists, skipping" and the like */
}

/* Run constant SQL that returns no rows of interest. */
static int exec_const(PGconn *c, const char *sql, pm_error *err)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    PQclear(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        return pg_error(err, c, "statement failed");
    return 0;
}

static PGresult *exec_q(pg *p, int q, const char *const *values)
{
    return PQexecPrepared(p->conn, queries[q].name, queries[q].nparams, values, NULL, NULL, 0);
}

static int migrate(PGconn *c, pm_error *err)
{
    int rc = exec_const(c,
                        "BEGIN;"
                        "SELECT pg_advisory_xact_lock(" MIGRATE_LOCK ");"
                        "CREATE TABLE IF NOT EXISTS perfmon_schema (version INTEGER NOT NULL);",
                        err);
    if (rc) {
        exec_const(c, "ROLLBACK", NULL);
        return rc;
    }
    PGresult *r = PQexec(c, "SELECT coalesce(max(version), 0) FROM perfmon_schema");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        PQclear(r);
        rc = pg_error(err, c, "reading the schema version");
        exec_const(c, "ROLLBACK", NULL);
        return rc;
    }
    long version = strtol(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    if (version > PM_STORE_SCHEMA || version < 0) {
        exec_const(c, "ROLLBACK", NULL);
        return pm_error_set(
            err, PM_EFORMAT,
            "PostgreSQL: schema version %ld is newer than this perfmon-archive (%d)", version,
            PM_STORE_SCHEMA);
    }
    for (long v = version; v < PM_STORE_SCHEMA; v++)
        if ((rc = exec_const(c, migrations[v], err)) != 0) {
            exec_const(c, "ROLLBACK", NULL);
            pm_error_prefix(err, "migrating to schema %ld: ", v + 1);
            return rc;
        }
    if (version < PM_STORE_SCHEMA) {
        char vs[16];
        snprintf(vs, sizeof vs, "%d", PM_STORE_SCHEMA);
        const char *vals[1] = {vs};
        if ((rc = exec_const(c, "DELETE FROM perfmon_schema", err)) != 0) {
            exec_const(c, "ROLLBACK", NULL);
            return rc;
        }
        r = PQexecParams(c, "INSERT INTO perfmon_schema (version) VALUES ($1)", 1, NULL, vals, NULL,
                         NULL, 0);
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (!ok) {
            rc = pg_error(err, c, "writing the schema version");
            exec_const(c, "ROLLBACK", NULL);
            return rc;
        }
    }
    if ((rc = exec_const(c, "COMMIT", err)) != 0)
        exec_const(c, "ROLLBACK", NULL);
    return rc;
}

static void pg_close(pm_store *s)
{
    pg *p = s->impl;
    PQfinish(p->conn);
    free(p);
    free(s);
}

static int pg_put(pm_store *s, const pm_arch_run *run, const char *source, int *result,
                  pm_error *err)
{
    pg *p = s->impl;
    char start[32], added[32], id[32], timing[40];
    snprintf(start, sizeof start, "%lld", (long long)run->start_us);
    snprintf(added, sizeof added, "%lld", (long long)pm_store_now_us());
    int rc = exec_const(p->conn, "BEGIN", err);
    if (rc)
        return rc;
    const char *tv[7] = {run->test,   start,  run->info, pm_arch_kind_name(run->kind),
                         run->digest, source, added};
    PGresult *r = exec_q(p, Q_INSERT, tv);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        PQclear(r);
        rc = pg_error(err, p->conn, "storing the test");
        exec_const(p->conn, "ROLLBACK", NULL);
        return rc;
    }
    if (PQntuples(r) == 0) { /* (test, start) is taken */
        PQclear(r);
        exec_const(p->conn, "ROLLBACK", NULL);
        const char *fv[2] = {run->test, start};
        r = exec_q(p, Q_FIND, fv);
        if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
            PQclear(r);
            return pg_error(err, p->conn, "looking up the run");
        }
        int same = strcmp(PQgetvalue(r, 0, 0), run->digest) == 0;
        PQclear(r);
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
    snprintf(id, sizeof id, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    for (size_t i = 0; i < run->nentries; i++) {
        const pm_arch_entry *e = &run->entries[i];
        snprintf(timing, sizeof timing, "%.17g", e->timing);
        const char *ev[6] = {id, run->test, e->name, start, timing, e->info};
        r = exec_q(p, Q_ENTRY, ev);
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (!ok) {
            rc = pg_error(err, p->conn, "storing an entry");
            exec_const(p->conn, "ROLLBACK", NULL);
            return rc;
        }
    }
    if ((rc = exec_const(p->conn, "COMMIT", err)) != 0) {
        exec_const(p->conn, "ROLLBACK", NULL);
        return rc;
    }
    *result = PM_PUT_STORED;
    return 0;
}

static long long col_i64(const PGresult *r, int row, int col)
{
    return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static int pg_tests(pm_store *s, pm_store_test **out, size_t *n, pm_error *err)
{
    pg *p = s->impl;
    PGresult *r = exec_q(p, Q_TESTS, NULL);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        PQclear(r);
        return pg_error(err, p->conn, "listing tests");
    }
    size_t cap = 0;
    for (int i = 0; i < PQntuples(r); i++) {
        pm_store_test row = {
            .runs = (size_t)col_i64(r, i, 1),
            .first_us = col_i64(r, i, 2),
            .last_us = col_i64(r, i, 3),
            .entries = (size_t)col_i64(r, i, 4),
        };
        if (pm_store_push_test(out, n, &cap, PQgetvalue(r, i, 0), &row) != 0) {
            PQclear(r);
            return pm_error_set(err, PM_ENOMEM, "PostgreSQL: out of memory");
        }
    }
    PQclear(r);
    return 0;
}

static int pg_history(pm_store *s, const char *test, const char *entry, int64_t since_us,
                      pm_store_point **out, size_t *n, pm_error *err)
{
    pg *p = s->impl;
    char since[32];
    snprintf(since, sizeof since, "%lld", (long long)since_us);
    const char *v[3] = {test, entry, since};
    PGresult *r = exec_q(p, Q_HISTORY, v);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        PQclear(r);
        return pg_error(err, p->conn, "reading the history");
    }
    size_t cap = 0;
    for (int i = 0; i < PQntuples(r); i++)
        if (pm_store_push_point(out, n, &cap, col_i64(r, i, 0), strtod(PQgetvalue(r, i, 1), NULL),
                                PQgetvalue(r, i, 2)) != 0) {
            PQclear(r);
            return pm_error_set(err, PM_ENOMEM, "PostgreSQL: out of memory");
        }
    PQclear(r);
    return 0;
}

static int pg_entries(pm_store *s, const char *test, char ***names, size_t *n, pm_error *err)
{
    pg *p = s->impl;
    const char *v[1] = {test};
    PGresult *r = exec_q(p, Q_ENTRIES, v);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        PQclear(r);
        return pg_error(err, p->conn, "listing entries");
    }
    size_t cap = 0;
    for (int i = 0; i < PQntuples(r); i++)
        if (pm_store_push_name(names, n, &cap, PQgetvalue(r, i, 0)) != 0) {
            PQclear(r);
            return pm_error_set(err, PM_ENOMEM, "PostgreSQL: out of memory");
        }
    PQclear(r);
    return 0;
}

static const pm_store_ops pg_ops = {
    .name = "postgresql",
    .put = pg_put,
    .tests = pg_tests,
    .history = pg_history,
    .entries = pg_entries,
    .close = pg_close,
};

int pm_store_pg_open(const char *url, pm_store **out, pm_error *err)
{
    *out = NULL;
    pm_store *s = calloc(1, sizeof *s);
    pg *p = calloc(1, sizeof *p);
    if (!s || !p) {
        free(s);
        free(p);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    s->ops = &pg_ops;
    s->impl = p;
    p->conn = PQconnectdb(url);
    int rc = 0;
    if (!p->conn || PQstatus(p->conn) != CONNECTION_OK) {
        rc = pg_error(err, p->conn, "cannot connect");
        pg_close(s);
        return rc;
    }
    PQsetNoticeProcessor(p->conn, quiet_notices, NULL);
    if (PQsetClientEncoding(p->conn, "UTF8") != 0) {
        rc = pg_error(err, p->conn, "cannot use UTF-8");
        pg_close(s);
        return rc;
    }
    if ((rc = migrate(p->conn, err)) != 0) {
        pg_close(s);
        return rc;
    }
    for (int i = 0; i < Q_N; i++) {
        PGresult *r = PQprepare(p->conn, queries[i].name, queries[i].sql, queries[i].nparams, NULL);
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (!ok) {
            rc = pg_error(err, p->conn, "prepare");
            pg_close(s);
            return rc;
        }
    }
    *out = s;
    return 0;
}
