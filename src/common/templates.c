/* Locating the templates directory (see templates.h). */
#include "perfmon/templates.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PM_TEMPLATE_DIR
#define PM_TEMPLATE_DIR "/usr/local/share/perfmon/templates"
#endif

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void pm_find_template_dir(const char *given, const char *probe, char *out, size_t cap)
{
    char path[PATH_MAX + 64];
    if (given) {
        snprintf(out, cap, "%s", given);
        return;
    }
    const char *env = getenv("PERFMON_TEMPLATES");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return;
    }
    snprintf(path, sizeof path, "%s/%s", PM_TEMPLATE_DIR, probe);
    if (exists(path)) {
        snprintf(out, cap, "%s", PM_TEMPLATE_DIR);
        return;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            static const char *const rel[] = {"/../../../templates", "/../share/perfmon/templates",
                                              "/../../templates"};
            for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
                snprintf(path, sizeof path, "%s%s/%s", exe, rel[i], probe);
                if (exists(path)) {
                    snprintf(out, cap, "%s%s", exe, rel[i]);
                    return;
                }
            }
        }
    }
    snprintf(out, cap, "templates");
}
