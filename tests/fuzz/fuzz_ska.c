/* libFuzzer target: the SKA perfmon JSON importer (top-level scanner,
 * host objects, number lists).  Seeds: fixtures/fuzz/ska/.  The
 * mutation test in tests/unit/test_robust.c covers it in `make check`
 * too. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "perfmon/ska.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pm_profile **ps = NULL;
    size_t n = 0;
    pm_error err;
    if (pm_ska_decode("fuzz.json", (const char *)data, size, &ps, &n, &err) == 0) {
        for (size_t i = 0; i < n; i++)
            pm_profile_free(ps[i]);
        free(ps);
    }
    return 0;
}
