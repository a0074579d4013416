/* catalog.h - the metric catalog: which profile columns make which plotted
 * metric, in which unit, aggregated how.
 *
 * The catalog is data (templates/metrics.json, format in docs/analysis.md);
 * adding a metric needs no C change.  Column patterns use shell globbing
 * (fnmatch), so "rapl.package-*" picks up every socket.
 *
 * Ownership: pm_catalog_load*() return a catalog the caller frees with
 * pm_catalog_free(); the definitions inside belong to the catalog and stay
 * valid until then.
 */
#ifndef PERFMON_CATALOG_H
#define PERFMON_CATALOG_H

#include <stddef.h>

#include "perfmon/error.h"

/* A log axis only where the values above zero span this ratio (two
 * decades): the report and the --data scripts decide alike. */
#define PM_LOG_MIN_SPAN 100.0

#define PM_CAT_MAX_PATTERNS 16

enum pm_comb { PM_COMB_AVERAGE = 0, PM_COMB_TOTAL = 1 };
/* How a metric is formed from its columns: their sum, or the sum of
 * "columns" over the sum of "per" at each point ("derive": "ratio"). */
enum pm_derive { PM_DERIVE_SUM = 0, PM_DERIVE_RATIO = 1 };
/* Which part of a metric a column is (pm_metric_role). */
enum pm_role { PM_ROLE_NONE = 0, PM_ROLE_VALUE = 1, PM_ROLE_PER = 2 };

typedef struct pm_metric_def {
    char id[64];       /* file-name safe, e.g. "net_out" */
    char name[96];     /* display name, e.g. "Output Traffic" */
    char unit[32];     /* display unit after conversion, e.g. "MiB/s" */
    char category[32]; /* "CPU", "Memory", "Network", "Interconnect", "Energy", ... */
    char page[32];     /* report page group */
    char *patterns[PM_CAT_MAX_PATTERNS]; /* column name globs; matches are summed */
    size_t npatterns;
    int derive;                     /* enum pm_derive */
    char *per[PM_CAT_MAX_PATTERNS]; /* ratio: denominator column globs, summed */
    size_t nper;
    double conversion; /* displayed = raw / conversion (after the rate) */
    int rate;          /* counter: differentiate over time */
    int log_scale;     /* applied only where PM_LOG_MIN_SPAN holds */
    int comb;          /* enum pm_comb: all-node Total or Average */
    /* SKA perfmon's choices where they differ ("ska_comb", "ska_columns"),
     * put in place of comb and patterns by pm_catalog_use_ska(). */
    int ska_comb; /* enum pm_comb, or -1: as comb */
    char *ska_patterns[PM_CAT_MAX_PATTERNS];
    size_t nska_patterns;
    double size_cm; /* plot height hint for the report */
} pm_metric_def;

typedef struct pm_catalog {
    char *path;
    size_t n;
    pm_metric_def *m; /* [n] in file order (= report order) */
} pm_catalog;

/* Parse catalog JSON text; path is used in messages (file:line:col on a
 * syntax error, file: metrics[i].field on a bad entry). */
int pm_catalog_parse(const char *path, const char *text, pm_catalog **out, pm_error *err) PM_WUR;
/* Read and parse a catalog file (at most 4 MiB). */
int pm_catalog_load(const char *path, pm_catalog **out, pm_error *err) PM_WUR;
void pm_catalog_free(pm_catalog *c);
/* --compat=ska: every entry with "ska_comb" or "ska_columns" takes them
 * as its comb and column patterns (docs/analysis.md, "--compat=ska"). */
void pm_catalog_use_ska(pm_catalog *c);

/* 1 when column name matches one of def's patterns ("columns" or "per"). */
int pm_metric_matches(const pm_metric_def *def, const char *column);
/* enum pm_role: PM_ROLE_VALUE for a "columns" match (checked first),
 * PM_ROLE_PER for a "per" match, PM_ROLE_NONE otherwise. */
int pm_metric_role(const pm_metric_def *def, const char *column);
/* Index of the definition with this id, or -1. */
int pm_catalog_find(const pm_catalog *c, const char *id);

#endif
