/* archive_add.h - `perfmon-archive add`: file result files from a data
 * directory into a store, and move them into an archive directory.
 *
 * Files are taken oldest modification time first; each is opened, locked
 * with a non-blocking exclusive flock (one locked by another archiver is
 * skipped, so several archivers can share a directory), read, stored in
 * one transaction and then moved (docs/archive.md, "Adding files").
 *
 * Ownership: everything passed in is borrowed.  The library does not
 * print: per-file outcomes go to the notice callback.
 */
#ifndef PERFMON_ARCHIVE_ADD_H
#define PERFMON_ARCHIVE_ADD_H

#include <stddef.h>

#include "perfmon/archive_store.h"
#include "perfmon/error.h"

typedef struct pm_arch_add_opts {
    const char *datadir;    /* where result files land */
    const char *archivedir; /* where processed files go (must exist) */
    const char *test;       /* test name for perfmon statistics files, or NULL */
    int keep_failed;        /* leave bad files in datadir (default: archivedir/failed/) */
} pm_arch_add_opts;

typedef struct pm_arch_add_report {
    size_t stored;  /* runs stored and their files moved */
    size_t already; /* files whose run was stored before (moved only) */
    size_t skipped; /* locked by another archiver, or gone meanwhile */
    size_t failed;  /* could not be read, parsed, stored or moved */
    size_t entries; /* entries stored */
} pm_arch_add_report;

enum pm_arch_notice_kind {
    PM_NOTICE_STORED,
    PM_NOTICE_ALREADY,
    PM_NOTICE_SKIPPED,
    PM_NOTICE_FAILED
};

/* Called once per file: kind, the file's path, and a message (for
 * PM_NOTICE_FAILED: "cannot process PATH: reason"). */
typedef void (*pm_arch_notice_fn)(int kind, const char *path, const char *msg, void *user);

/* Archive every file in o->datadir.  Returns 0 when the directories could
 * be used (failed files are counted in rep, not an error), or a PM_E*
 * code when the data or archive directory cannot be used. */
int pm_arch_add(pm_store *s, const pm_arch_add_opts *o, pm_arch_add_report *rep,
                pm_arch_notice_fn notice, void *user, pm_error *err) PM_WUR;

/* Move the file at src (open as fd, which is read when a copy is needed)
 * into dir under its name, never replacing a file there: when the name is
 * taken, NAME.1, NAME.2, ... are tried.  Same file system: rename.
 * Across file systems: copy into a hidden temporary in dir, fsync, link
 * it under the final name, fsync dir, then remove src.  The final path
 * is written to out (cap bytes, may be NULL). */
int pm_arch_move(int fd, const char *src, const char *dir, const char *name, char *out, size_t cap,
                 pm_error *err) PM_WUR;

#endif
