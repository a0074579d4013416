/* strs.h - small string helpers every layer may use.
 * Ownership: a list built by pm_strs_add() belongs to the caller, who frees
 * it with pm_strs_free(); pm_sanitize_name() writes into the caller's buffer. */
#ifndef PERFMON_STRS_H
#define PERFMON_STRS_H

#include <stddef.h>

#include "perfmon/error.h"

/* Append a formatted string to a list; 0 or PM_ENOMEM. */
int pm_strs_add(char ***arr, size_t *n, const char *fmt, ...) PM_PRINTF(3, 4);
void pm_strs_free(char **a, size_t n);

/* Turn s into a file-name-safe token of at most cap-1 bytes: only
 * [A-Za-z0-9._-], never starting with '.', never empty. */
void pm_sanitize_name(const char *s, char *out, size_t cap);

#endif
