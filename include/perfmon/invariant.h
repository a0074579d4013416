/* invariant.h - PM_ASSERT: an invariant stated in the code, checked in
 * debug builds (make DEBUG=1, -DPM_DEBUG), sanitizer builds (make SAN=1)
 * and the fuzz targets, compiled out of release builds.
 *
 * For what the code itself guarantees (a cursor inside its buffer, a count
 * within its capacity, kept times strictly increasing), never for what an
 * input may hold: hostile bytes are errors (pm_error), not assertions.
 * The condition must have no side effects: a release build does not run
 * it (it is only type-checked there). */
#ifndef PERFMON_INVARIANT_H
#define PERFMON_INVARIANT_H

#if !defined(PM_DEBUG) && defined(__SANITIZE_ADDRESS__)
#define PM_DEBUG 1
#endif
#if !defined(PM_DEBUG) && defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PM_DEBUG 1
#endif
#endif

/* Print "perfmon: FILE:LINE: FUNC: invariant failed: EXPR" on stderr and
 * abort (the one place the library writes: the process is about to end). */
_Noreturn void pm_assert_fail(const char *file, int line, const char *func, const char *expr);

#ifdef PM_DEBUG
#define PM_ASSERTS_ON 1
#define PM_ASSERT(cond) ((cond) ? (void)0 : pm_assert_fail(__FILE__, __LINE__, __func__, #cond))
#else
#define PM_ASSERTS_ON 0
#define PM_ASSERT(cond) ((void)sizeof(!(cond)))
#endif

#endif
