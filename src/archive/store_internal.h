/* store_internal.h - the contract between store.c and its backends
 * (store_sqlite.c, store_pg.c): one const ops table per backend. */
#ifndef PERFMON_ARCHIVE_STORE_INTERNAL_H
#define PERFMON_ARCHIVE_STORE_INTERNAL_H

#include "perfmon/archive_store.h"
#include "store_rows.h"

typedef struct pm_store_ops {
    const char *name;
    int (*put)(pm_store *s, const pm_arch_run *run, const char *source, int *result, pm_error *err);
    int (*tests)(pm_store *s, pm_store_test **out, size_t *n, pm_error *err);
    int (*history)(pm_store *s, const char *test, const char *entry, int64_t since_us,
                   pm_store_point **out, size_t *n, pm_error *err);
    int (*entries)(pm_store *s, const char *test, char ***names, size_t *n, pm_error *err);
    void (*close)(pm_store *s);
} pm_store_ops;

struct pm_store {
    const pm_store_ops *ops;
    void *impl;
};

int pm_store_sqlite_open(const char *path, pm_store **out, pm_error *err);
int pm_store_pg_open(const char *url, pm_store **out, pm_error *err);

#endif
