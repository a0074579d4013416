/* The log sink (log.h): the library's diagnostics go to the one sink the
 * program installs, below the level it asks for; none installed, none
 * written. */
#include "perfmon/log.h"

#include <stdarg.h>
#include <stdio.h>

static pm_log_sink g_sink;
static void *g_user;
static int g_max = -1;

void pm_log_set_sink(pm_log_sink sink, void *user, int max_level)
{
    g_sink = sink;
    g_user = user;
    g_max = sink ? max_level : -1;
}

int pm_log_enabled(int level)
{
    return g_sink && level <= g_max;
}

void pm_log(int level, const char *fmt, ...)
{
    if (!pm_log_enabled(level))
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    g_sink(level, msg, g_user);
}
