/* store_rows.h - what the store's backends (store_sqlite.c, store_pg.c)
 * share below them (store_rows.c). */
#ifndef PERFMON_ARCHIVE_STORE_ROWS_H
#define PERFMON_ARCHIVE_STORE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/archive_store.h"

/* Growing result arrays for the backends: append one element (copies
 * the strings; push_test takes the name from test, the rest from row).  Return 0 or
 * PM_ENOMEM. */
int pm_store_push_point(pm_store_point **p, size_t *n, size_t *cap, int64_t start_us, double timing,
                        const char *entry);
int pm_store_push_test(pm_store_test **t, size_t *n, size_t *cap, const char *test,
                       const pm_store_test *row);
int pm_store_push_name(char ***names, size_t *n, size_t *cap, const char *name);

/* Microseconds since the epoch, now (the `added` column). */
int64_t pm_store_now_us(void);

#endif
