#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pm_test_fixtures(void)
{
    static char path[4096];
    const char *root = getenv("PM_ROOT");
    snprintf(path, sizeof path, "%s/fixtures", root && *root ? root : ".");
    return path;
}

char *pm_test_tmpdir(void)
{
    static char path[256];
    const char *base = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/pmtest.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(path))
        return NULL;
    return path;
}

void pm_test_rmrf(const char *path)
{
    char cmd[4200];
    if (!path || !*path || strcmp(path, "/") == 0)
        return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup of %s failed\n", path);
}
