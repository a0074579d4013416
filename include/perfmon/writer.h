/* writer.h - append-only profile writers (binary and JSON Lines).
 *
 * A writer owns one open file.  Every sample goes out as one complete
 * record in one write(2), so a crash loses at most the sample being
 * written, and a reader detects that torn record by its length and CRC.
 * pm_writer_sync() makes everything written so far durable (fdatasync).
 * A record whose write fails part way is cut off again (ftruncate), so the
 * file always ends with a complete record and writing may resume later.
 */
#ifndef PERFMON_WRITER_H
#define PERFMON_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/error.h"
#include "perfmon/profile.h"

typedef struct pm_writer pm_writer;

/* Create path (must not exist: O_EXCL) and write the header and, when
 * meta_json is not NULL, the metadata record.  cols is copied.  format:
 * PM_FMT_BIN writes binary version 3 (samples as changes from the one
 * before, a key sample every 64, index records at checkpoints and after
 * the end record), or version 1 or 2 when the environment has
 * PERFMON_PROFILE_VERSION=1 or 2; PM_FMT_BIN1 and PM_FMT_BIN2 always write
 * version 1 and 2;
 * PM_FMT_JSONL writes JSON Lines (docs/format.md). */
int pm_writer_open(pm_writer **out, const char *path, int format, const pm_profile_info *info,
                   const pm_column *cols, size_t ncols, const char *meta_json,
                   pm_error *err) PM_WUR;

/* Append one sample.  vals[ncols] are stored according to each column's
 * type; present[] is a bitmap (bit c set = column c has a value). */
int pm_writer_sample(pm_writer *w, int64_t mono_ns, int64_t wall_ns, const pm_value *vals,
                     const uint8_t *present, pm_error *err) PM_WUR;

int pm_writer_note(pm_writer *w, const char *text, pm_error *err) PM_WUR;
int pm_writer_end(pm_writer *w, const pm_profile_end *end, pm_error *err) PM_WUR;
int pm_writer_sync(pm_writer *w, pm_error *err) PM_WUR;
const char *pm_writer_path(const pm_writer *w);

/* 0 while the file still has a directory entry; PM_EIO (with a message)
 * once it was removed or renamed away, so that writing on would lose
 * everything. */
int pm_writer_check_linked(pm_writer *w, pm_error *err) PM_WUR;

/* After pm_writer_check_linked() failed: create the file again at its
 * path (the directory must exist; O_EXCL) with everything written so far,
 * read back from the open unlinked file, and go on writing there.  On
 * failure the writer is unchanged and no partial file is left. */
int pm_writer_restore(pm_writer *w, pm_error *err) PM_WUR;

/* Sync and close; frees w even on error.  NULL is a no-op. */
int pm_writer_close(pm_writer *w, pm_error *err);

/* Encoded size of one binary version 1 sample record for ncols columns. */
size_t pm_bin_sample_size(size_t ncols);

#endif
