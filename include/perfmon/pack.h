/* pack.h - a profile as one bounded byte string, to move it between
 * processes (perfmon-analyze under mpirun: docs/analysis.md, "MPI").
 *
 * The times and values travel as they lie in memory (8 bytes each, only
 * the decoded columns), so every value, time and NaN comes back bit for bit;
 * the rest (info, columns, end record, notes, warnings, which columns were
 * not decoded) is stored field by field.  The form is private to one run
 * of one build: it carries a version byte, not a promise.
 *
 * Ownership: pm_profile_pack appends to the caller's buffer;
 * pm_profile_unpack returns a profile the caller frees with
 * pm_profile_free().
 */
#ifndef PERFMON_PACK_H
#define PERFMON_PACK_H

#include <stddef.h>

#include "perfmon/buf.h"
#include "perfmon/error.h"
#include "perfmon/profile.h"

/* Append p to b; 0, or PM_ENOMEM (b->oom is then set too). */
int pm_profile_pack(const pm_profile *p, pm_buf *b) PM_WUR;

/* Read one packed profile from buf[*pos, len) and advance *pos past it.
 * Every count and length is checked against what remains (a damaged or
 * short buffer is PM_EFORMAT naming what and the offset, never a read past
 * the end).  With hint, the columns are laid out as the readers lay them
 * out (pm_profile_reserve_block). */
int pm_profile_unpack(const char *what, const unsigned char *buf, size_t len, size_t *pos,
                      const pm_read_hint *hint, pm_profile **out, pm_error *err) PM_WUR;

/* Little-endian and varint helpers for the packers built on this one
 * (src/input/split.c): each put adds to b, each get checks the bound
 * and returns 0, or -1 when buf ends first. */
void pm_pack_u8(pm_buf *b, unsigned v);
void pm_pack_varint(pm_buf *b, uint64_t v);
void pm_pack_str(pm_buf *b, const char *s);
int pm_unpack_u8(const unsigned char *buf, size_t len, size_t *pos, unsigned *v) PM_WUR;
int pm_unpack_varint(const unsigned char *buf, size_t len, size_t *pos, uint64_t *v) PM_WUR;
/* A double as the varint of its bits (pm_f64_bits): every value, NaN's
 * payload too, comes back bit for bit. */
void pm_pack_f64(pm_buf *b, double v);
int pm_unpack_f64(const unsigned char *buf, size_t len, size_t *pos, double *v) PM_WUR;
/* A string of at most max bytes (NUL not counted), returned malloc'd. */
int pm_unpack_str(const unsigned char *buf, size_t len, size_t *pos, size_t max, char **s) PM_WUR;

#endif
