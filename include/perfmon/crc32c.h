/* crc32c.h - CRC-32C (Castagnoli), the checksum of every profile record. */
#ifndef PERFMON_CRC32C_H
#define PERFMON_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC: start with crc = 0. */
uint32_t pm_crc32c(uint32_t crc, const void *buf, size_t len);

/* The portable table-driven version (what pm_crc32c uses without SSE4.2). */
uint32_t pm_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* Whether pm_crc32c uses the CPU's crc32 instruction. */
int pm_crc32c_hw_available(void);

#endif
