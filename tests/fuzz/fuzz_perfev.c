/* libFuzzer target for the counter event-table parser (perfev.c): any
 * bytes must give a table or a "file:line: ..." error, never a crash.
 * Seeds: fixtures/fuzz/perfev/ (the shipped tables and broken variants). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/perfev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > PM_PEV_MAX_BYTES)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    static pm_pev_table t;
    pm_error err;
    if (pm_pev_parse("fuzz.events", text, &t, &err) == 0) {
        double counts[PM_PEV_MAX_EVENTS] = {0};
        for (size_t i = 0; i < t.nd; i++)
            (void)pm_pev_derive(&t.d[i], counts);
        (void)pm_pev_matches(&t, "GenuineIntel", 6, 0x55);
    }
    free(text);
    return 0;
}
