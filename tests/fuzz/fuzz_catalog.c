/* libFuzzer target: the metric catalog parser (templates/metrics.json).
 * Seeds: fixtures/fuzz/catalog/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    pm_catalog *c = NULL;
    pm_error err;
    if (pm_catalog_parse("fuzz.json", text, &c, &err) == 0)
        pm_catalog_free(c);
    free(text);
    return 0;
}
