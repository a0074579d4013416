/* parse.h - strict number parsing and a tokenizer for /proc text.
 *
 * Nothing here trusts its input: every conversion checks for an end
 * pointer, overflow (ERANGE) and trailing garbage.  Token functions never
 * read past the NUL that the bounded readers in fileio.h guarantee.
 */
#ifndef PERFMON_PARSE_H
#define PERFMON_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parse the whole of s as an unsigned decimal integer (no sign, no
 * spaces).  Returns 0 or -1. */
int pm_parse_u64(const char *s, uint64_t *out);
int pm_parse_i64(const char *s, int64_t *out);
/* Parse the whole of s as a finite double. */
int pm_parse_double(const char *s, double *out);

/* Parse an unsigned decimal at *p, skipping leading blanks, and advance *p
 * past it.  Returns 0 or -1 (nothing consumed on failure). */
int pm_scan_u64(const char **p, uint64_t *out);
/* Same for a signed decimal: an optional '-' directly followed by digits. */
int pm_scan_i64(const char **p, int64_t *out);

/* Skip blanks (space, tab) at *p. */
void pm_skip_blanks(const char **p);

/* Split line into at most max whitespace-separated fields, in place
 * (writes NULs into line).  Returns the number of fields. */
size_t pm_split_fields(char *line, char **fields, size_t max);

/* Return the next line of text starting at *cursor (NUL-terminated in
 * place, newline removed) and advance *cursor; NULL at the end. */
char *pm_next_line(char **cursor);

/* Find "key" at the start of a line of a "key: value" file (meminfo,
 * status, smaps_rollup) and parse the first number after it.  Returns 0 or
 * -1 when the key is absent or malformed. */
int pm_kv_u64(const char *text, const char *key, uint64_t *out);

/* Parse a duration such as "0.2", "30", "5s", "2m", "1h" into nanoseconds.
 * Returns 0 or -1. */
int pm_parse_duration_ns(const char *s, int64_t *out);

/* Parse a --start/--end value: "+DURATION" (relative), a plain number
 * (seconds since the epoch if >= 1e9, else relative seconds), or
 * "YYYY-MM-DDTHH:MM:SS[Z]" (UTC).  Returns 0 or -1. */
int pm_parse_time_bound(const char *s, double *value, int *relative);

#endif
