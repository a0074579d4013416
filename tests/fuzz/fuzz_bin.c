/* libFuzzer target: the perfmon binary profile reader (records, CRCs,
 * header fields, resynchronisation after damage).  Seeds:
 * fixtures/fuzz/bin/ (docs/testing.md, "Fuzzing"). */
#include <stddef.h>
#include <stdint.h>

#include "perfmon/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pm_profile *p = NULL;
    pm_error err;
    if (pm_profile_decode_bin("fuzz.pmp", data, size, &p, &err) == 0)
        pm_profile_free(p);
    return 0;
}
