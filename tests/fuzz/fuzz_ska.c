/* libFuzzer target for the SKA perfmon JSON importer (not built by the
 * Makefile; the mutation test in tests/unit/test_robust.c runs in `make
 * test`).  Build and run:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude \
 *     -I/usr/include/cjson tests/fuzz/fuzz_ska.c src/profile/ska_reader.c \
 *     src/profile/profile_model.c src/profile/profile_read.c src/profile/bin_reader.c \
 *     src/profile/jsonl_reader.c src/profile/writer.c src/common/[a-z]*.c -lcjson -lm \
 *     -o build/fuzz_ska
 *   build/fuzz_ska fixtures/ska
 */
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
