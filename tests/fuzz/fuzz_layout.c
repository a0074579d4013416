/* libFuzzer target: the report layout template (templates/report.json).
 * pm_layout_load reads a path, so each input goes through an anonymous
 * memory file named by /proc/self/fd.  Seeds: fixtures/fuzz/layout/. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz-layout", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (pm_write_all(fd, data, size) == 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        pm_layout *l = NULL;
        pm_error err;
        if (pm_layout_load(path, &l, &err) == 0)
            pm_layout_free(l);
    }
    close(fd);
    return 0;
}
