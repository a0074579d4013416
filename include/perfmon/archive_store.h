/* archive_store.h - where perfmon-archive keeps runs: SQLite (a file
 * path) or PostgreSQL (a postgresql:// URL), the same schema and
 * behaviour in both (docs/archive.md, "Schema").
 *
 * Every statement is prepared with parameters; no SQL text is ever built
 * from input.  The schema is versioned and migrated when a store is
 * opened.  A run is stored in one transaction: its Test row and all its
 * Entry rows, or nothing.
 *
 * Ownership: pm_store_open returns a store the caller closes with
 * pm_store_close (NULL is a no-op).  Arrays returned by the queries are
 * owned by the caller and released with the matching *_free function.
 */
#ifndef PERFMON_ARCHIVE_STORE_H
#define PERFMON_ARCHIVE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/archive.h"
#include "perfmon/error.h"

/* The schema version this build writes and reads. */
#define PM_STORE_SCHEMA 1

typedef struct pm_store pm_store;

/* Open (creating and migrating as needed) the store named by db: a
 * postgresql:// or postgres:// URL, otherwise an SQLite file path.
 * A store whose schema is newer than PM_STORE_SCHEMA is refused. */
int pm_store_open(const char *db, pm_store **out, pm_error *err) PM_WUR;
void pm_store_close(pm_store *s);

/* "sqlite" or "postgresql". */
const char *pm_store_backend(const pm_store *s);

/* pm_store_put results. */
enum pm_store_put { PM_PUT_STORED = 0, PM_PUT_ALREADY = 1 };

/* Store run and its entries in one transaction; source is the file's
 * name (kept for reference).  *result is PM_PUT_STORED, or PM_PUT_ALREADY
 * when the same content was stored before (a rerun after a crash between
 * storing and moving the file).  The same test and start with different
 * content is PM_EFORMAT ("already archived from other content"). */
int pm_store_put(pm_store *s, const pm_arch_run *run, const char *source, int *result,
                 pm_error *err) PM_WUR;

typedef struct pm_store_test {
    char *test;
    size_t runs, entries;      /* runs stored, distinct entry names */
    int64_t first_us, last_us; /* earliest and latest start */
} pm_store_test;

/* All tests, by name. */
int pm_store_tests(pm_store *s, pm_store_test **out, size_t *n, pm_error *err) PM_WUR;
void pm_store_tests_free(pm_store_test *t, size_t n);

typedef struct pm_store_point {
    int64_t start_us;
    double timing;
    char *entry;
} pm_store_point;

/* Timings of test since since_us (INT64_MIN: all), ordered by start then
 * entry; entry NULL means every entry of the test. */
int pm_store_history(pm_store *s, const char *test, const char *entry, int64_t since_us,
                     pm_store_point **out, size_t *n, pm_error *err) PM_WUR;
void pm_store_points_free(pm_store_point *p, size_t n);

/* Distinct entry names of test, sorted. */
int pm_store_entries(pm_store *s, const char *test, char ***names, size_t *n, pm_error *err) PM_WUR;
void pm_store_names_free(char **names, size_t n);

#endif
