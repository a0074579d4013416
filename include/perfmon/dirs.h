/* dirs.h - directories: mkdir -p. */
#ifndef PERFMON_DIRS_H
#define PERFMON_DIRS_H

#include "perfmon/error.h"

/* Create dir and every missing directory above it (mode 0755, as
 * `mkdir -p`); an existing directory is fine.  Errors: PM_EUSAGE for an
 * empty name or one of 4096 bytes or more, PM_EIO with the system's
 * reason naming the component that could not be made, or "not a
 * directory" when dir exists as something else. */
int pm_mkdir_p(const char *dir, pm_error *err) PM_WUR;

#endif
