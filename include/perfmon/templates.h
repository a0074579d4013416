/* templates.h - where the data files of templates/ are.
 *
 * Both programs look for the same directory: the one given (--templates),
 * $PERFMON_TEMPLATES, the installed PM_TEMPLATE_DIR, the source tree or
 * installation next to the running program (build/<kind>/bin/../../../
 * templates, bin/../share/perfmon/templates), then ./templates.
 */
#ifndef PERFMON_TEMPLATES_H
#define PERFMON_TEMPLATES_H

#include <stddef.h>

/* Fill out (cap bytes) with the first candidate directory that holds the
 * entry probe (a file or directory name such as "metrics.json" or
 * "events"); given and $PERFMON_TEMPLATES are taken as they are, and
 * "templates" is the answer when nothing is found. */
void pm_find_template_dir(const char *given, const char *probe, char *out, size_t cap);

#endif
