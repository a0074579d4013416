/* endian.h - explicit little-endian encoding; never cast pointers into
 * input buffers.  Each access is one (unaligned-safe) memcpy, which the
 * compiler turns into a single load or store, byte-swapped only on
 * big-endian machines: a byte-at-a-time loop here was half the cost of
 * decoding a binary profile. */
#ifndef PERFMON_ENDIAN_H
#define PERFMON_ENDIAN_H

#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define PM_LE16(x) __builtin_bswap16(x)
#define PM_LE32(x) __builtin_bswap32(x)
#define PM_LE64(x) __builtin_bswap64(x)
#else
#define PM_LE16(x) (x)
#define PM_LE32(x) (x)
#define PM_LE64(x) (x)
#endif

static inline void pm_put_u16(unsigned char *p, uint16_t v)
{
    v = PM_LE16(v);
    memcpy(p, &v, sizeof v);
}
static inline void pm_put_u32(unsigned char *p, uint32_t v)
{
    v = PM_LE32(v);
    memcpy(p, &v, sizeof v);
}
static inline void pm_put_u64(unsigned char *p, uint64_t v)
{
    v = PM_LE64(v);
    memcpy(p, &v, sizeof v);
}
static inline uint16_t pm_get_u16(const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return PM_LE16(v);
}
static inline uint32_t pm_get_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return PM_LE32(v);
}
static inline uint64_t pm_get_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return PM_LE64(v);
}
static inline uint64_t pm_f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}
static inline double pm_bits_f64(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

#endif
