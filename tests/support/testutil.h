/* testutil.h - helpers shared by the cmocka unit tests. */
#ifndef PERFMON_TESTUTIL_H
#define PERFMON_TESTUTIL_H

#include <stddef.h>

/* Directory of the source tree's fixtures/ (from $PM_ROOT, or ".").  */
const char *pm_test_fixtures(void);
/* Make a fresh temporary directory; returns a static path buffer owned by
 * the caller until the next call (copy it). */
char *pm_test_tmpdir(void);
/* rm -rf path (test cleanup). */
void pm_test_rmrf(const char *path);
/* 0 when the files at got and want hold the same bytes; otherwise -1 with
 * the reason in why (cap bytes). */
int pm_test_same_file(const char *got, const char *want, char *why, size_t cap);
/* Whether the test runs under a checker that slows it tenfold or more
 * (make valgrind sets PM_WRAP): the largest inputs are then left out
 * (make check and make check SAN=1 still run them). */
int pm_test_wrapped(void);

#endif
