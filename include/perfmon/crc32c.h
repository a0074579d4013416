/* crc32c.h - CRC-32C (Castagnoli), the checksum of every profile record. */
#ifndef PERFMON_CRC32C_H
#define PERFMON_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC: start with crc = 0. */
uint32_t pm_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
