/* libFuzzer target: the report layout template (templates/report.json),
 * read through a memory file (memfile.h).  Seeds: fixtures/fuzz/layout/. */
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "memfile.h"
#include "perfmon/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    pm_layout *l = NULL;
    pm_error err;
    if (pm_layout_load(path, &l, &err) == 0)
        pm_layout_free(l);
    close(fd);
    return 0;
}
