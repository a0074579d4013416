/* scanner.h - import of Scanner's binary profiles (profile_<n>.bin,
 * profile_master.bin) as job phases and counters.
 *
 * Layout (docs/format.md, "Scanner profiles"; every integer little-endian,
 * strings NUL-terminated):
 *
 *   file     := i64 start_ns, i64 end_ns, worker, [groups]
 *   groups   := u8 nload, nload*worker,
 *               u8 neval, u8 per_chain, (neval*per_chain)*worker,
 *               u8 nsave, nsave*worker
 *   worker   := i64 node, str type, str tag, i64 number,
 *               i64 nkeys, nkeys*(str key, u8 index),
 *               i64 nintervals, nintervals*(u8 index, i64 start, i64 end),
 *               i64 ncounters, ncounters*(str name, i64 value)
 *
 * A master file holds the first worker only (no groups); a node's file
 * starts with its "process_job" worker, so one cut right after that worker
 * is reported as truncated, not taken for a master file.  Interval times
 * are nanoseconds after start_ns, which is nanoseconds since the epoch.
 *
 * What the reader makes of it: every interval becomes a pm_phase (host
 * "node <node>", or "master" for a master file; name the interval key;
 * track the worker, "<type>[<number>]" or "<type>[<number>]/<tag>"); the
 * summed interval time and every counter go into the set's totals per
 * worker type and key, as Scanner's statistics() does.
 *
 * Every count is checked against its bound and the bytes that remain
 * before it drives anything, so a corrupted count (Scanner's own reader
 * guards against counter counts above a million) is an error "path:
 * offset N: ...", never a huge allocation; so are a truncated file and a
 * string without its NUL.
 *
 * Ownership: the phase set passed in is the caller's; the reader appends
 * to it (strings copied).
 */
#ifndef PERFMON_SCANNER_H
#define PERFMON_SCANNER_H

#include <stddef.h>

#include "perfmon/error.h"
#include "perfmon/phase.h"

#define PM_SCANNER_FILE_MAX ((size_t)1 << 30) /* bytes per file */
#define PM_SCANNER_STR_MAX 1024               /* bytes of one string, NUL excluded */
#define PM_SCANNER_KEYS_MAX 256               /* the key index is one byte */
#define PM_SCANNER_INTERVALS_MAX 20000000     /* intervals per file */
#define PM_SCANNER_COUNTERS_MAX 1000000       /* counters per worker */

/* 1 when the first len bytes of a file look like a Scanner profile: a
 * plausible start <= end in ns since the epoch, a small node number, and
 * a printable, NUL-terminated worker type. */
int pm_scanner_sniff(const void *head, size_t len);

/* Decode a Scanner profile of len bytes and append it to out.  On error
 * (PM_EFORMAT, PM_ETRUNC, PM_ELIMIT, PM_ENOMEM) err says "path: offset N:
 * what is wrong" and out keeps the workers read whole before the damage;
 * *nworkers (may be NULL) tells how many that is. */
int pm_scanner_decode(const char *path, const unsigned char *buf, size_t len, pm_phase_set *out,
                      size_t *nworkers, pm_error *err) PM_WUR;

/* Read the file at path (at most PM_SCANNER_FILE_MAX bytes) and decode it. */
int pm_scanner_read(const char *path, pm_phase_set *out, size_t *nworkers, pm_error *err) PM_WUR;

#endif
