/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, RFC 3720 B.4):
 * the SSE4.2 crc32 instruction where the CPU has it (chosen once at run
 * time, about 8 bytes per cycle), else table-driven slicing by 8.  Both
 * give the same values; tests check each against known vectors. */
#include "perfmon/crc32c.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

uint32_t pm_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&table_once, build_table);
    const unsigned char *p = buf;
    crc = ~crc;
    while (len >= 8) {
        uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                             (uint32_t)p[3] << 24);
        crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
              table[4][lo >> 24] ^ table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^
              table[0][p[7]];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
    return ~crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PM_HAVE_HW_CRC 1
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const void *buf,
                                                            size_t len)
{
    const unsigned char *p = buf;
    uint64_t c = ~crc;
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        len -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (len--)
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    return ~c32;
}
#endif

static uint32_t (*crc_impl)(uint32_t, const void *, size_t);
static pthread_once_t impl_once = PTHREAD_ONCE_INIT;

static void choose_impl(void)
{
    crc_impl = pm_crc32c_sw;
#ifdef PM_HAVE_HW_CRC
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2"))
        crc_impl = crc32c_hw;
#endif
}

int pm_crc32c_hw_available(void)
{
    pthread_once(&impl_once, choose_impl);
    return crc_impl != pm_crc32c_sw;
}

uint32_t pm_crc32c(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&impl_once, choose_impl);
    return crc_impl(crc, buf, len);
}
