/* The perfmon-format fixtures in fixtures/perfmon/ are written by this
 * generator (pm_synth + pm_writer).  The test regenerates them in a
 * temporary directory and checks that the committed files are identical;
 * PM_REGEN_FIXTURES=1 rewrites the committed files instead. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfmon/fileio.h"
#include "perfmon/profile.h"
#include "synth.h"
#include "../support/testutil.h"

/* Written in this order; "torn" is node-c cut inside its last record. */
static int gen_all(const char *dir)
{
    char path[4096];
    pm_error err;
    pm_synth s;
    struct {
        const char *file, *host;
        int format, groups;
        double skew;
        size_t reset_at, gap_at;
    } rows[] = {
        /* Binary version 1, as written before version 2: every test that
         * reads these fixtures reads version 1 (docs/format.md). */
        {"node-a.pmp", "node-a", PM_FMT_BIN1, PM_SYNTH_ALL, 0.0, 0, 0},
        {"node-b.pmp", "node-b", PM_FMT_BIN1, PM_SYNTH_ALL, 0.4, 20, 0},
        {"node-c.jsonl", "node-c", PM_FMT_JSONL, PM_SYNTH_PROC | PM_SYNTH_SAMPLER, -0.3, 0, 7},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        pm_synth_init(&s, rows[i].host);
        s.format = rows[i].format;
        s.groups = rows[i].groups;
        s.start_s = 1.7e9 + rows[i].skew;
        s.n = 40;
        s.rapl_wrap = 1000000000ull; /* wraps every 10 s at 100 W */
        s.reset_at = rows[i].reset_at;
        s.gap_at = rows[i].gap_at;
        snprintf(path, sizeof path, "%s/%s", dir, rows[i].file);
        unlink(path);
        if (pm_synth_write(path, &s, &err) != 0) {
            fprintf(stderr, "%s\n", err.msg);
            return -1;
        }
    }
    /* A torn copy of node-a under another host name. */
    pm_synth_init(&s, "node-torn");
    s.format = PM_FMT_BIN1;
    s.n = 20;
    s.with_end = 0;
    snprintf(path, sizeof path, "%s/torn.pmp", dir);
    unlink(path);
    if (pm_synth_write(path, &s, &err) != 0)
        return -1;
    char *buf = NULL;
    size_t len = 0;
    if (pm_read_whole(path, 1 << 20, &buf, &len, &err) != 0)
        return -1;
    FILE *f = fopen(path, "w");
    int rc = f && fwrite(buf, 1, len - 37, f) == len - 37 ? 0 : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    free(buf);
    return rc;
}

static void test_fixtures_match_generator(void **state)
{
    (void)state;
    char dir[4096];
    if (getenv("PM_REGEN_FIXTURES")) {
        snprintf(dir, sizeof dir, "%s/perfmon", pm_test_fixtures());
        assert_int_equal(gen_all(dir), 0);
        return;
    }
    char *tmp = pm_test_tmpdir();
    assert_non_null(tmp);
    snprintf(dir, sizeof dir, "%s", tmp);
    assert_int_equal(gen_all(dir), 0);
    static const char *const files[] = {"node-a.pmp", "node-b.pmp", "node-c.jsonl", "torn.pmp"};
    for (size_t i = 0; i < 4; i++) {
        char p1[4200], p2[4200];
        snprintf(p1, sizeof p1, "%s/%s", dir, files[i]);
        snprintf(p2, sizeof p2, "%s/perfmon/%s", pm_test_fixtures(), files[i]);
        char *a = NULL, *b = NULL;
        size_t la = 0, lb = 0;
        pm_error err;
        assert_int_equal(pm_read_whole(p1, 1 << 22, &a, &la, &err), 0);
        if (pm_read_whole(p2, 1 << 22, &b, &lb, &err) != 0)
            fail_msg("%s (run with PM_REGEN_FIXTURES=1 to create)", err.msg);
        assert_int_equal(la, lb);
        assert_memory_equal(a, b, la);
        free(a);
        free(b);
    }
    pm_test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures_match_generator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
