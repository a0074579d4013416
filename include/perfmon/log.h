/* log.h - what a long-running module reports while it runs.
 *
 * The library itself never prints.  Modules that run for a long time (the
 * sampler's loop and sources) report through pm_log(); a program installs
 * a sink with pm_log_set_sink().  Without a sink, reports are dropped.
 * PM_LOG_ERROR and PM_LOG_NOTICE are for the user at any verbosity (a
 * failure; a warning the program always shows, such as lost samples);
 * PM_LOG_WARN, PM_LOG_INFO and PM_LOG_DEBUG are diagnostics a program shows
 * on request (the sampler's -v).
 */
#ifndef PERFMON_LOG_H
#define PERFMON_LOG_H

#include "perfmon/error.h"

enum pm_log_level {
    PM_LOG_ERROR = 0,
    PM_LOG_NOTICE = 1,
    PM_LOG_WARN = 2,
    PM_LOG_INFO = 3,
    PM_LOG_DEBUG = 4
};

typedef void (*pm_log_sink)(int level, const char *msg, void *user);

void pm_log_set_sink(pm_log_sink sink, void *user, int max_level);
int pm_log_enabled(int level);
void pm_log(int level, const char *fmt, ...) PM_PRINTF(2, 3);

#endif
