/* libFuzzer target for perfmon-archive's input readers: TensorFlow
 * TestResults JSON and perfmon-analyze --stats --json documents, told
 * apart by content (pm_arch_parse).  Seeds: fixtures/fuzz/testresults/.
 * Links against libperfmon.a and cJSON. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/archive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The readers take NUL-terminated text (as the archiver reads it). */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    pm_arch_run *run = NULL;
    pm_error err;
    if (pm_arch_parse("fuzz.json", text, size, (size & 1) ? "fuzz" : NULL, &run, &err) == 0)
        pm_arch_run_free(run);
    free(text);
    return 0;
}
