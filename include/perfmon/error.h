/* error.h - error values shared by every perfmon module.
 *
 * Library functions return an int status (0 on success, a negative PM_E*
 * code on failure) and fill a caller-owned pm_error with a message that
 * already names the file and position.  The library never prints; programs
 * report the message once, at the edge.
 */
#ifndef PERFMON_ERROR_H
#define PERFMON_ERROR_H

#include <stddef.h>

#define PM_WUR __attribute__((warn_unused_result))
#define PM_PRINTF(f, a) __attribute__((format(printf, f, a)))

enum pm_status {
    PM_OK = 0,
    PM_EIO = -1,     /* read/write/open failed (errno in pm_error.sys) */
    PM_EFORMAT = -2, /* input bytes are not what they claim to be */
    PM_ENOMEM = -3,  /* allocation failed or a size would overflow */
    PM_EUSAGE = -4,  /* bad argument or option value */
    PM_ENOENT = -5,  /* optional thing absent (hardware, file) */
    PM_ELIMIT = -6,  /* input exceeds a documented bound */
    PM_ETRUNC = -7,  /* input ends early (torn tail) */
    PM_EEMPTY = -8,  /* input read, but nothing in it to work on */
};

typedef struct pm_error {
    int code;       /* last PM_E* code, 0 when none */
    int sys;        /* errno that caused it, 0 when none */
    char msg[1024]; /* "file: offset N: what is wrong" */
} pm_error;

/* Record an error; returns code so callers can `return pm_error_set(...)`.
 * err may be NULL (the message is then dropped). */
int pm_error_set(pm_error *err, int code, const char *fmt, ...) PM_PRINTF(3, 4);

/* Like pm_error_set, and appends ": strerror(sys)". */
int pm_error_sys(pm_error *err, int code, int sys, const char *fmt, ...) PM_PRINTF(4, 5);

/* Prefix an existing message with more context ("file: ..."). */
void pm_error_prefix(pm_error *err, const char *fmt, ...) PM_PRINTF(2, 3);

void pm_error_clear(pm_error *err);

#endif
