/* The unit tests' helpers (testutil.h): where the fixtures are, temporary
 * directories made and removed, files compared, and whether the test runs
 * under a wrapper (valgrind). */
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

int pm_test_same_file(const char *got, const char *want, char *why, size_t cap)
{
    FILE *f[2] = {fopen(got, "rb"), fopen(want, "rb")};
    int rc = 0;
    if (!f[0] || !f[1]) {
        snprintf(why, cap, "%s: cannot open", f[0] ? want : got);
        rc = -1;
    }
    for (long off = 0; rc == 0; off++) {
        int a = fgetc(f[0]), b = fgetc(f[1]);
        if (a != b) {
            snprintf(why, cap, "%s and %s differ at byte %ld", got, want, off);
            rc = -1;
        }
        if (a == EOF || b == EOF)
            break;
    }
    for (int i = 0; i < 2; i++)
        if (f[i])
            fclose(f[i]);
    return rc;
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

int pm_test_wrapped(void)
{
    const char *w = getenv("PM_WRAP");
    return w && *w;
}
