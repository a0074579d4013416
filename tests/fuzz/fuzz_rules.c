/* libFuzzer target: the efficiency rules template (templates/rules.json),
 * evaluated against one real analysis (fixtures/perfmon/node-a.pmp with
 * the shipped catalog, built once; $PM_ROOT or the current directory is
 * the source tree), read through a memory file (memfile.h).  The notes
 * each input adds are dropped after it.  Seeds: fixtures/fuzz/rules/. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "memfile.h"
#include "perfmon/analysis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static pm_analysis *analysis(void)
{
    static pm_analysis *a;
    static char catalog[4200], profile[4200];
    if (a)
        return a;
    const char *root = getenv("PM_ROOT");
    root = root && *root ? root : ".";
    snprintf(catalog, sizeof catalog, "%s/templates/metrics.json", root);
    snprintf(profile, sizeof profile, "%s/fixtures/perfmon/node-a.pmp", root);
    pm_analyze_opts o = {0};
    o.catalog_path = catalog;
    const char *paths[] = {profile};
    pm_error err;
    if (pm_analysis_run(paths, 1, &o, &a, &err) != 0) {
        fprintf(stderr, "fuzz_rules: %s\n", err.msg);
        abort(); /* no analysis: the target would test nothing */
    }
    return a;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pm_analysis *a = analysis();
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    pm_error err;
    int rc = pm_rules_eval(a, path, &err);
    (void)rc;
    for (size_t i = 0; i < a->nnotes; i++)
        free(a->notes[i].message);
    a->nnotes = 0;
    close(fd);
    return 0;
}
