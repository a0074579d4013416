/* memfile.h - for fuzz targets whose reader takes a path: the input goes
 * into an anonymous memory file (memfd_create), named by /proc/self/fd. */
#ifndef PERFMON_FUZZ_MEMFILE_H
#define PERFMON_FUZZ_MEMFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfmon/fileio.h"

/* Returns the descriptor (close it after use) with its path in path, or -1. */
static inline int fuzz_memfile(const uint8_t *data, size_t size, char *path, size_t cap)
{
    int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (pm_write_all(fd, data, size) != 0) {
        close(fd);
        return -1;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
