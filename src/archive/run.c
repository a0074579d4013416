/* The run model: a test run and its entries (see archive.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfmon/archive.h"
#include "perfmon/mem.h"
#include "perfmon/vec.h"
#include "run_internal.h"

/* Entries per run: far above any real benchmark suite, and a bound on
 * what one file can make the archiver allocate. */
#define ENTRIES_MAX 100000

const char *pm_arch_kind_name(int kind)
{
    switch (kind) {
    case PM_ARCH_TENSORFLOW: return "tensorflow";
    case PM_ARCH_PERFMON_STATS: return "perfmon-stats";
    default: return "unknown";
    }
}

pm_arch_run *pm_arch_run_new(void)
{
    return calloc(1, sizeof(pm_arch_run));
}

void pm_arch_run_free(pm_arch_run *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nentries; i++) {
        free(r->entries[i].name);
        free(r->entries[i].info);
    }
    free(r->entries);
    free(r->test);
    free(r->info);
    free(r);
}

int pm_arch_name_ok(const char *s)
{
    return s && *s && strlen(s) <= PM_ARCH_NAME_MAX ? 0 : -1;
}

int pm_arch_run_add(pm_arch_run *r, const char *name, double timing, const char *info,
                    pm_error *err)
{
    if (pm_arch_name_ok(name) != 0)
        return pm_error_set(err, PM_EFORMAT, "entry %zu: the name is empty or longer than %d bytes",
                            r->nentries + 1, PM_ARCH_NAME_MAX);
    if (!isfinite(timing))
        return pm_error_set(err, PM_EFORMAT, "entry \"%.200s\": the timing is not a finite number",
                            name);
    if (r->nentries >= ENTRIES_MAX)
        return pm_error_set(err, PM_ELIMIT, "more than %d entries", ENTRIES_MAX);
    if (PM_VEC_RESERVE(r->entries, r->cap, r->nentries + 1, 16) != 0)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    pm_arch_entry *e = &r->entries[r->nentries];
    e->name = pm_strdup(name);
    e->info = pm_strdup(info ? info : "{}");
    e->timing = timing;
    if (!e->name || !e->info) {
        free(e->name);
        free(e->info);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    r->nentries++;
    return 0;
}

static int cmp_entry_name(const void *a, const void *b)
{
    const pm_arch_entry *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

int pm_arch_run_finish(pm_arch_run *r, const char *text, size_t len, pm_error *err)
{
    if (pm_arch_name_ok(r->test) != 0)
        return pm_error_set(err, PM_EFORMAT, "the test name is empty or longer than %d bytes",
                            PM_ARCH_NAME_MAX);
    if (r->nentries > 1) {
        pm_arch_entry **v = pm_alloc_array(r->nentries, sizeof *v);
        if (!v)
            return pm_error_set(err, PM_ENOMEM, "out of memory");
        for (size_t i = 0; i < r->nentries; i++)
            v[i] = &r->entries[i];
        qsort(v, r->nentries, sizeof *v, cmp_entry_name);
        for (size_t i = 1; i < r->nentries; i++)
            if (strcmp(v[i - 1]->name, v[i]->name) == 0) {
                int rc =
                    pm_error_set(err, PM_EFORMAT, "entry \"%.200s\" appears twice", v[i]->name);
                free(v);
                return rc;
            }
        free(v);
    }
    r->info = malloc(len + 1);
    if (!r->info)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    memcpy(r->info, text, len);
    r->info[len] = 0;
    snprintf(r->digest, sizeof r->digest, "%08x:%zu", pm_crc32c(0, text, len), len);
    return 0;
}
