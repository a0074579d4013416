/* libFuzzer target: the perfmon JSON Lines profile reader.  The reader
 * wants NUL-terminated text, so the input is copied with one added.
 * Seeds: fixtures/fuzz/jsonl/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    pm_profile *p = NULL;
    pm_error err;
    if (pm_profile_decode_jsonl("fuzz.jsonl", text, size, &p, &err) == 0)
        pm_profile_free(p);
    free(text);
    return 0;
}
