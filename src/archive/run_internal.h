/* run_internal.h - shared by the archive's input readers. */
#ifndef PERFMON_ARCHIVE_RUN_INTERNAL_H
#define PERFMON_ARCHIVE_RUN_INTERNAL_H

#include "perfmon/archive.h"
#include "perfmon/crc32c.h"

struct cJSON;

/* Last step of every reader: check the test name and that entry names are
 * unique, keep text (len bytes) verbatim as the run's info and compute
 * its digest. */
int pm_arch_run_finish(pm_arch_run *r, const char *text, size_t len, pm_error *err);

/* Parse text (len bytes, NUL-terminated) as one JSON document after
 * checking that it is UTF-8 without NUL bytes.  On failure err holds
 * "file:line:col: ..." and NULL is returned. */
struct cJSON *pm_arch_json_parse(const char *file, const char *text, size_t len, pm_error *err);

/* The readers proper: fill r (already allocated) from the document root.
 * test is the --test name (statistics only).  Messages name file. */
typedef int (*pm_arch_reader)(const char *file, const struct cJSON *root, const char *test,
                              pm_arch_run *r, pm_error *err);
int pm_arch_read_tf(const char *file, const struct cJSON *root, const char *test, pm_arch_run *r,
                    pm_error *err);
int pm_arch_read_stats(const char *file, const struct cJSON *root, const char *test, pm_arch_run *r,
                       pm_error *err);

/* A JSON number, or a string holding a decimal number (protobuf's JSON
 * mapping writes 64-bit integers and NaN as strings), as a double.
 * Returns 0, or -1 when item is neither. */
int pm_arch_json_double(const struct cJSON *item, double *out);

#endif
