/* archive.h - benchmark runs for perfmon-archive: the run model and the
 * readers of the two accepted inputs.
 *
 * A run is one result file: a test name, the run's start time, the file's
 * JSON kept verbatim, and one entry (a named timing) per benchmark.  Two
 * inputs are read (docs/archive.md, "Inputs"): TensorFlow's TestResults
 * JSON and perfmon's own `perfmon-analyze --stats --json` output.
 *
 * Ownership: a pm_arch_run and every string it points to belong to the
 * run; pm_arch_run_free releases them all.  Parsers never keep the input
 * text they are given.
 */
#ifndef PERFMON_ARCHIVE_H
#define PERFMON_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/error.h"

/* Longest test or entry name accepted (bytes). */
#define PM_ARCH_NAME_MAX 1024
/* Largest input file read (bytes); bigger ones are rejected unread. */
#define PM_ARCH_FILE_MAX ((size_t)64 << 20)

enum pm_arch_kind { PM_ARCH_TENSORFLOW = 1, PM_ARCH_PERFMON_STATS = 2 };

typedef struct pm_arch_entry {
    char *name;    /* unique within the run */
    double timing; /* finite; TensorFlow: wall time per iteration (s) */
    char *info;    /* the entry's JSON (iterations, extras, ...) */
} pm_arch_entry;

typedef struct pm_arch_run {
    char *test;
    int64_t start_us; /* run start, microseconds since the epoch */
    int kind;         /* enum pm_arch_kind */
    char *info;       /* the input text, verbatim */
    char digest[32];  /* content id of the input bytes (crc32c:length) */
    pm_arch_entry *entries;
    size_t nentries, cap;
} pm_arch_run;

/* Name of a kind ("tensorflow", "perfmon-stats"). */
const char *pm_arch_kind_name(int kind);

/* A new empty run (NULL when out of memory). */
pm_arch_run *pm_arch_run_new(void);
void pm_arch_run_free(pm_arch_run *r);

/* Append an entry (name and info are copied).  Returns 0, PM_ENOMEM, or
 * PM_EFORMAT when the name is empty, too long or already present, or the
 * timing is not finite. */
int pm_arch_run_add(pm_arch_run *r, const char *name, double timing, const char *info,
                    pm_error *err) PM_WUR;

/* Validate a test or entry name: non-empty, at most PM_ARCH_NAME_MAX
 * bytes, no NUL.  Returns 0 or -1. */
int pm_arch_name_ok(const char *s);

/* Read TensorFlow TestResults JSON (text of len bytes, NUL-terminated;
 * file names the input in messages).  On success *out is a new run. */
int pm_arch_parse_tf(const char *file, const char *text, size_t len, pm_arch_run **out,
                     pm_error *err) PM_WUR;

/* Read `perfmon-analyze --stats --json` output.  test names the run (NULL:
 * the document's job id, an error when it has none).  Entries are the job
 * figures and, per phase kind, "phase:<name>" with its total seconds. */
int pm_arch_parse_stats(const char *file, const char *text, size_t len, const char *test,
                        pm_arch_run **out, pm_error *err) PM_WUR;

/* Tell the kind from the content and call the matching reader; test is
 * passed to the perfmon statistics reader only. */
int pm_arch_parse(const char *file, const char *text, size_t len, const char *test,
                  pm_arch_run **out, pm_error *err) PM_WUR;

/* Parse a --since value: seconds since the epoch, YYYY-MM-DD, or
 * YYYY-MM-DDTHH:MM:SS[Z] (UTC).  Returns 0 or -1. */
int pm_arch_parse_date(const char *s, int64_t *us);

/* Format microseconds since the epoch as ISO 8601 UTC (seconds, and
 * microseconds when not whole) into out (>= 32 bytes). */
void pm_arch_format_time(int64_t us, char *out, size_t cap);

#endif
