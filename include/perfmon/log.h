/* log.h - optional diagnostics.
 *
 * The library itself never prints.  Modules that run for a long time (the
 * sampler's sources) may report notes through pm_log(); a program installs
 * a sink with pm_log_set_sink().  Without a sink, notes are dropped.
 */
#ifndef PERFMON_LOG_H
#define PERFMON_LOG_H

#include "perfmon/error.h"

enum pm_log_level { PM_LOG_ERROR = 0, PM_LOG_WARN = 1, PM_LOG_INFO = 2, PM_LOG_DEBUG = 3 };

typedef void (*pm_log_sink)(int level, const char *msg, void *user);

void pm_log_set_sink(pm_log_sink sink, void *user, int max_level);
int pm_log_enabled(int level);
void pm_log(int level, const char *fmt, ...) PM_PRINTF(2, 3);

#endif
