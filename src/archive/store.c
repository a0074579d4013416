/* The store abstraction: picks the backend from the --db value and
 * forwards to its ops table (see archive_store.h). */
#include <stdlib.h>
#include <string.h>

#include "perfmon/mem.h"
#include "store_internal.h"

static int is_pg_url(const char *db)
{
    return strncmp(db, "postgresql://", 13) == 0 || strncmp(db, "postgres://", 11) == 0;
}

int pm_store_open(const char *db, pm_store **out, pm_error *err)
{
    *out = NULL;
    if (!db || !*db)
        return pm_error_set(err, PM_EUSAGE, "no database given (--db)");
    if (is_pg_url(db))
        return pm_store_pg_open(db, out, err);
    if (strstr(db, "://"))
        return pm_error_set(err, PM_EUSAGE,
                            "--db: not a postgresql:// URL nor an SQLite file path: %.200s", db);
    return pm_store_sqlite_open(db, out, err);
}

void pm_store_close(pm_store *s)
{
    if (s)
        s->ops->close(s);
}

const char *pm_store_backend(const pm_store *s)
{
    return s->ops->name;
}

int pm_store_put(pm_store *s, const pm_arch_run *run, const char *source, int *result,
                 pm_error *err)
{
    *result = PM_PUT_STORED;
    return s->ops->put(s, run, source, result, err);
}

int pm_store_tests(pm_store *s, pm_store_test **out, size_t *n, pm_error *err)
{
    *out = NULL;
    *n = 0;
    return s->ops->tests(s, out, n, err);
}

int pm_store_history(pm_store *s, const char *test, const char *entry, int64_t since_us,
                     pm_store_point **out, size_t *n, pm_error *err)
{
    *out = NULL;
    *n = 0;
    return s->ops->history(s, test, entry, since_us, out, n, err);
}

int pm_store_entries(pm_store *s, const char *test, char ***names, size_t *n, pm_error *err)
{
    *names = NULL;
    *n = 0;
    return s->ops->entries(s, test, names, n, err);
}

void pm_store_tests_free(pm_store_test *t, size_t n)
{
    for (size_t i = 0; t && i < n; i++)
        free(t[i].test);
    free(t);
}

void pm_store_points_free(pm_store_point *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++)
        free(p[i].entry);
    free(p);
}

void pm_store_names_free(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}
