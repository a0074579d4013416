/* The programs' one front end (cli.h): the wording of a refused option,
 * --version.  Used by the drivers in src/perfmon-<program>/ only. */
#include <stdio.h>
#include <string.h>

#include "perfmon/cli.h"

int pm_cli_refused(int c, char *const *argv, const char *shortopts, const struct option *longopts,
                   pm_error *err)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "";
    if (!arg)
        arg = "";
    int is_long = optopt == 0 || optopt >= 256 || strncmp(arg, "--", 2) == 0;
    if (c == ':') { /* the option's value was to be the next argument: optind moved */
        if (is_long) {
            size_t nl = strcspn(arg, "=");
            return pm_error_set(err, PM_EUSAGE, "option %.*s needs a value (see --help)", (int)nl,
                                arg);
        }
        return pm_error_set(err, PM_EUSAGE, "option -%c needs a value (see --help)", optopt);
    }
    int known = optopt >= 256 ||
                (optopt > 0 && optopt != ':' && optopt != '+' && strchr(shortopts, optopt));
    for (const struct option *l = longopts; l && l->name && optopt > 0 && !known; l++)
        known = !l->flag && l->val == optopt && is_long;
    if (optopt && !known)
        return pm_error_set(err, PM_EUSAGE, "unknown option -%c (see --help)",
                            optopt > ' ' && optopt < 127 ? optopt : '?');
    size_t nl = strcspn(arg, "=");
    if (known) /* a long option that takes no value was given one */
        return pm_error_set(err, PM_EUSAGE, "option %.*s takes no value (see --help)", (int)nl,
                            arg);
    int matches = 0;
    for (const struct option *l = longopts; l && l->name && nl > 2; l++)
        matches += strncmp(l->name, arg + 2, nl - 2) == 0;
    return pm_error_set(err, PM_EUSAGE, "%s option %s (see --help)",
                        matches > 1 ? "ambiguous" : "unknown", arg);
}

int pm_cli_version(const char *program)
{
    printf("%s %s\n", program, PM_VERSION);
    return fflush(stdout) == 0 && !ferror(stdout) ? PM_EXIT_OK : PM_EXIT_OUTPUT;
}
