/* budget.h - perfmon-analyze's choice between the in-memory analysis and
 * --stream (docs/analysis.md, "Analysis in bounded memory", "When it is
 * chosen"): an estimate of the in-memory analysis's peak memory from what
 * is cheap to read of the input files, and the memory this process may
 * use (MemAvailable, the cgroup's limit).  Nothing here allocates what the
 * caller must free. */
#ifndef PERFMON_BUDGET_H
#define PERFMON_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/error.h"

/* The in-memory analysis's peak, per decoded value (a sample's column on
 * one host): the value (8 bytes) plus what the derived metrics, the time
 * grid and the pooled statistics add, measured on generated jobs; and
 * the program's own footprint. */
#define PM_EST_BYTES_PER_VALUE 10
#define PM_EST_BASE_BYTES ((uint64_t)8 << 20)

typedef struct pm_mem_estimate {
    uint64_t bytes;  /* the estimated peak */
    uint64_t values; /* samples x columns, summed over the files counted */
    size_t files;    /* profiles counted */
} pm_mem_estimate;

/* Estimate the in-memory analysis's peak for the inputs paths (files, or
 * directories whose regular files are read, as the analysis does): per
 * profile, its columns from the header (binary) or the header line (JSON
 * Lines), its samples from the record size (binary version 1), the footer
 * index (versions 2 and 3; without one, about 1.5 bytes per column and 16
 * per sample), or the mean length of the first sample lines (JSON Lines);
 * any other file (SKA, events, Scanner), and a JSON Lines file whose
 * header line is longer than 64 KiB, at one value per 16 bytes of text.
 * Where one directory holds two forms of one run (same name but for the
 * extension), the larger counts.  Only the head and the tail of each file
 * are read.  --start/--end are not counted: the in-memory analysis reads
 * every sample before it applies the window.  Returns 0 (unreadable files
 * count as nothing). */
int pm_mem_estimate_inputs(const char *const *paths, size_t npaths, pm_mem_estimate *out);

typedef struct pm_mem_budget {
    uint64_t bytes;     /* what the analysis may use: the least of the below;
                         * UINT64_MAX when none is known */
    uint64_t available; /* MemAvailable (bytes), UINT64_MAX if unknown */
    uint64_t cgroup;    /* the cgroup's limit less its use, at the tightest
                         * level of the hierarchy; UINT64_MAX if none */
} pm_mem_budget;

/* Read the budget under root ("" for the running system; a test's
 * directory holding proc/meminfo, proc/self/cgroup and sys/fs/cgroup/...):
 * MemAvailable of proc/meminfo; the cgroup v2 memory.max less
 * memory.current of the process's cgroup (proc/self/cgroup's "0::" line)
 * and of each parent, or the cgroup v1 memory.limit_in_bytes less
 * memory.usage_in_bytes (its "memory" controller line).  Every byte is
 * treated as hostile: a malformed or absent figure counts as unknown. */
void pm_mem_budget_read(const char *root, pm_mem_budget *out);

/* Parse a size: a whole or decimal number of bytes with an optional
 * binary suffix K, M, G or T (KiB ... TiB; "iB" or "B" may follow), e.g.
 * 8G, 500M, 1.5GiB, 1048576.  Returns 0, or -1 when malformed, zero, or
 * above 2^62. */
int pm_parse_size(const char *s, uint64_t *out);

#endif
