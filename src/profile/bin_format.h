/* bin_format.h - constants of the binary profile layout (docs/format.md).
 * Private to src/profile. */
#ifndef PERFMON_BIN_FORMAT_H
#define PERFMON_BIN_FORMAT_H

#include "perfmon/profile.h"

/* File preamble: 8 magic bytes, u32 version, u32 flags (0). */
#define PM_BIN_MAGIC "\x89PMPROF\n"
#define PM_BIN_MAGIC_LEN 8
#define PM_BIN_PREAMBLE 16

/* Record: u32 payload length, u8 type, 3 zero bytes, payload, u32 CRC-32C
 * of the 8-byte record head and the payload. */
#define PM_REC_HEAD 8
#define PM_REC_TAIL 4

/* Header record fields: u16 tag, u16 zero, u32 length, bytes. */
enum pm_tag {
    PM_TAG_HOST = 1,
    PM_TAG_JOB_ID = 2,
    PM_TAG_SCHEDULER = 3,
    PM_TAG_NODE_RANK = 4,
    PM_TAG_USER = 5,
    PM_TAG_COMMAND = 6,
    PM_TAG_SAMPLER = 7,
    PM_TAG_START_WALL = 8,
    PM_TAG_START_MONO = 9,
    PM_TAG_INTERVAL = 10,
    PM_TAG_PID = 11,
    PM_TAG_COLUMN = 12,
    PM_TAG_RUN_ID = 13,
};

/* Column field: u8 kind, u8 type, u16 name len, u16 unit len, u16 group
 * len, u64 wrap, then the three strings (no NULs). */
#define PM_COLUMN_FIXED 16

/* End record: i64 end_wall, i64 end_mono, u64 samples, u64 late,
 * u64 missed, i64 self_cpu_ns, u64 maxrss_kb, i32 exit_status, u32 reason
 * length, reason bytes. */
#define PM_END_FIXED 64

/* pm_profile_decode_bin with a hint for the layout of its block. */
int pm_profile_decode_bin_hinted(const char *path, const unsigned char *buf, size_t len,
                                 const pm_read_hint *hint, pm_profile **out, pm_error *err);

#endif
