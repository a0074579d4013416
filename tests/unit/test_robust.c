/* Hostile bytes: deterministic mutations of the SKA and perfmon fixtures
 * (bit flips, truncations, byte insertions) must never crash a reader or
 * the analysis; they may only fail cleanly with a message.  Run under
 * SAN=1 this is a small, reproducible fuzz pass over every parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../support/testutil.h"
#include "perfmon/analysis.h"
#include "perfmon/catalog.h"
#include "perfmon/fileio.h"
#include "perfmon/ska.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static char *load(const char *rel, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", pm_test_fixtures(), rel);
    char *buf = NULL;
    pm_error err;
    if (pm_read_whole(path, 1 << 22, &buf, len, &err) != 0)
        fail_msg("%s", err.msg);
    return buf;
}

/* Apply one random mutation to a copy of src; returns the new length. */
static size_t mutate(const char *src, size_t len, char *dst)
{
    memcpy(dst, src, len);
    size_t at = len ? (size_t)(next() % len) : 0;
    switch (next() % 5) {
    case 0: /* bit flip */ dst[at] = (char)(dst[at] ^ (1 << (next() % 8))); return len;
    case 1: /* truncate */ return at;
    case 2: { /* a JSON-significant byte */
        static const char sig[] = "{}[]\",:0-.eE\\\n ";
        dst[at] = sig[next() % (sizeof sig - 1)];
        return len;
    }
    case 3: /* duplicate a span */
        if (at + 16 < len) {
            memmove(dst + at + 16, dst + at, len - at);
            return len + 16 > len * 2 ? len : len + 16;
        }
        return len;
    default: /* zero a run */ memset(dst + at, 0, len - at < 8 ? len - at : 8); return len;
    }
}

static void test_ska_mutations(void **state)
{
    (void)state;
    size_t len = 0;
    char *src = load("ska/cpu_metrics.json", &len);
    char *buf = malloc(len + 64);
    size_t ok = 0, failed = 0;
    for (int i = 0; i < 3000; i++) {
        size_t n = mutate(src, len, buf);
        pm_profile **ps = NULL;
        size_t np = 0;
        pm_error err;
        pm_error_clear(&err);
        if (pm_ska_decode("m.json", buf, n, &ps, &np, &err) == 0) {
            ok++;
            for (size_t k = 0; k < np; k++)
                pm_profile_free(ps[k]);
            free(ps);
        } else {
            failed++;
            assert_true(strncmp(err.msg, "m.json", 6) == 0);
        }
    }
    assert_true(ok > 0 && failed > 0);
    free(buf);
    free(src);
}

static void test_profile_mutations(void **state)
{
    (void)state;
    static const char *const files[] = {"perfmon/node-a.pmp", "perfmon/node-c.jsonl"};
    for (size_t f = 0; f < 2; f++) {
        size_t len = 0;
        char *src = load(files[f], &len);
        char *buf = malloc(len + 64);
        for (int i = 0; i < 1500; i++) {
            size_t n = mutate(src, len, buf);
            buf[n] = 0;
            pm_profile *p = NULL;
            pm_error err;
            int rc = f == 0 ? pm_profile_decode_bin("m.pmp", (unsigned char *)buf, n, &p, &err)
                            : pm_profile_decode_jsonl("m.jsonl", buf, n, &p, &err);
            if (rc == 0)
                pm_profile_free(p);
        }
        free(buf);
        free(src);
    }
}

/* Mutated catalogs load or fail cleanly. */
static void test_catalog_mutations(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/../templates/metrics.json", pm_test_fixtures());
    char *src = NULL;
    size_t len = 0;
    pm_error err;
    assert_int_equal(pm_read_whole(path, 1 << 22, &src, &len, &err), 0);
    char *buf = malloc(len + 64);
    for (int i = 0; i < 500; i++) {
        size_t n = mutate(src, len, buf);
        buf[n] = 0;
        pm_catalog *c = NULL;
        if (pm_catalog_parse("c.json", buf, &c, &err) == 0)
            pm_catalog_free(c);
    }
    free(buf);
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ska_mutations),
        cmocka_unit_test(test_profile_mutations),
        cmocka_unit_test(test_catalog_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
