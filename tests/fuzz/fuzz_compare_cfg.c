/* libFuzzer target for the compare.json parser (src/analysis/compare_cfg.c),
 * linked against libperfmon.a with cJSON.  Seeds: fixtures/fuzz/compare_cfg/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    pm_compare_cfg *c = NULL;
    pm_error err;
    if (pm_compare_cfg_parse("fuzz.json", text, &c, &err) == 0)
        pm_compare_cfg_free(c);
    free(text);
    return 0;
}
