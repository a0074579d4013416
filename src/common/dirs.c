/* mkdir -p (see perfmon/dirs.h): each prefix of the path that ends at a
 * '/' is made in turn, an existing one skipped, then the whole path is
 * checked to be a directory. */
#include "perfmon/dirs.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

int pm_mkdir_p(const char *dir, pm_error *err)
{
    char p[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof p)
        return pm_error_set(err, PM_EUSAGE, "%s: not a usable directory name", dir);
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != 0)
            continue;
        char c = p[i];
        p[i] = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return pm_error_sys(err, PM_EIO, errno, "%s: cannot create directory", p);
        p[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return pm_error_set(err, PM_EIO, "%s: not a directory", dir);
    return 0;
}
