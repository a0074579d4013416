/* libFuzzer target: the kernel log's records and the OOM killer's lines
 * (pm_oom_feed, pm_oom_flush; src/sampler/kmsg.c).  The input is a
 * sequence of /dev/kmsg records separated by NUL bytes (a record read from
 * the device is one read(), so the reader never sees the separator).
 * Seeds: fixtures/fuzz/kmsg/ (docs/testing.md, "Fuzzing"). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/kmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every string of a kill is NUL-terminated within its field. */
static void check(const pm_oom_kill *k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!memchr(k[i].comm, 0, sizeof k[i].comm) ||
            !memchr(k[i].constraint, 0, sizeof k[i].constraint) ||
            !memchr(k[i].memcg, 0, sizeof k[i].memcg) ||
            !memchr(k[i].task_memcg, 0, sizeof k[i].task_memcg) || k[i].pid <= 0)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pm_oom_parser *p = malloc(sizeof *p);
    if (!p)
        return 0;
    pm_oom_init(p);
    pm_oom_kill out[4];
    const char *s = (const char *)data, *end = s + size;
    while (s < end) {
        const char *z = memchr(s, 0, (size_t)(end - s));
        size_t len = (size_t)((z ? z : end) - s);
        check(out, pm_oom_feed(p, s, len, out, 4));
        s += len + 1;
    }
    check(out, pm_oom_flush(p, out, 4));
    free(p);
    return 0;
}
