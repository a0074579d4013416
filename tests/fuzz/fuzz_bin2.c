/* libFuzzer target: the binary profile version 2 and 3 decoder (key and delta
 * samples, resynchronisation after damage, malformed payloads), the index
 * (footer chain, rebuilt by scanning), decoding a span of time through
 * it, and column projection (every other column decoded, the others only
 * parsed).  Seeds: fixtures/fuzz/bin2/ (docs/testing.md, "Fuzzing"). */
#include <stddef.h>
#include <stdint.h>

#include "memfile.h"
#include "perfmon/profile.h"

/* Column names of odd length: a projection that depends on the input. */
static int want_odd(const char *column, void *ctx)
{
    (void)ctx;
    size_t n = 0;
    while (column[n])
        n++;
    return (int)(n % 2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pm_profile *p = NULL;
    pm_error err;
    int64_t from = 0, to = INT64_MAX;
    if (pm_profile_decode_bin("fuzz.pmp", data, size, &p, &err) == 0) {
        if (p->n) {
            from = p->t_wall_ns[p->n / 3];
            to = p->t_wall_ns[2 * p->n / 3];
        }
        pm_profile_free(p);
    }
    pm_bin_index idx;
    if (pm_bin_index_load("fuzz.pmp", data, size, &idx, &err) == 0)
        pm_bin_index_free(&idx);
    if (pm_profile_decode_bin_range("fuzz.pmp", data, size, from, to, &p, &err) == 0)
        pm_profile_free(p);
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd >= 0) {
        pm_read_hint hint = {.want = want_odd};
        if (pm_profile_read_hinted(path, &hint, NULL, &p, &err) == 0)
            pm_profile_free(p);
        close(fd);
    }
    return 0;
}
