/* The counter source (src/sampler/src_perf.c) against the running kernel:
 * software events are counted for real (page faults of a forked command,
 * nothing of the sampler's own before the exec); hardware events are
 * checked where the kernel has a PMU and reported as SKIP where it has not
 * (a VM); a re-rooted /proc disables the source with its reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfmon/proctree.h"
#include "perfmon/source.h"

#include "../support/testutil.h"

typedef struct h {
    pm_sctx ctx;
    pm_schema schema;
    void *st;
    pm_sample s;
    pid_t roots[1];
} h;

/* Open the source; 0, or PM_ENOENT with the reason printed as a SKIP. */
static int h_open(h *x, pid_t root, size_t nroots)
{
    pm_error err;
    memset(x, 0, sizeof *x);
    assert_int_equal(pm_sctx_open(&x->ctx, "/proc", "/sys", &err), 0);
    x->roots[0] = root;
    x->ctx.roots = x->roots;
    x->ctx.nroots = nroots;
    pm_schema_init(&x->schema);
    pm_error_clear(&err);
    int rc = pm_source_perf.open(&x->ctx, &x->schema, &x->st, &err);
    if (rc == PM_ENOENT) {
        printf("SKIP  no counters at all here: %s\n", err.msg);
        pm_schema_free(&x->schema);
        pm_sctx_close(&x->ctx);
        return rc;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(pm_sample_init(&x->s, x->schema.n), 0);
    return 0;
}

static void h_close(h *x)
{
    pm_source_perf.close(x->st);
    pm_sample_free(&x->s);
    pm_schema_free(&x->schema);
    pm_sctx_close(&x->ctx);
}

static int col(const h *x, const char *name)
{
    for (size_t i = 0; i < x->schema.n; i++)
        if (strcmp(x->schema.cols[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* Value of a column in a fresh sample; -1 when not recorded. */
static int64_t value(h *x, const char *name)
{
    pm_sample_clear(&x->s);
    assert_int_equal(pm_source_perf.read(x->st, &x->ctx, &x->s), 0);
    int c = col(x, name);
    if (c < 0 || !(x->s.present[c / 8] & (1u << (c % 8))))
        return -1;
    return (int64_t)x->s.v[c].u;
}

static char *describe(h *x)
{
    pm_buf b;
    pm_buf_init(&b);
    pm_source_perf.describe(x->st, &b);
    return pm_buf_take(&b);
}

static void touch_pages(size_t n)
{
    size_t len = n * 4096;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    for (size_t i = 0; i < len; i += 4096)
        m[i] = 1;
    munmap(m, len);
}

/* -- CMD: opened before the fork on the sampler itself; only what the
 * command does after its exec counts. */
static void test_command_mode(void **state)
{
    (void)state;
    h x;
    if (h_open(&x, 0, 1) != 0)
        return;
    char *d = describe(&x);
    assert_non_null(strstr(d, "\"mode\":\"command\""));
    if (col(&x, "perf.page_faults") < 0) {
        printf("SKIP  software counters refused here: %s\n", d);
        free(d);
        h_close(&x);
        return;
    }
    assert_true(col(&x, "perf.context_switches") >= 0 || strstr(d, "perf.context_switches"));
    assert_int_equal(x.schema.cols[col(&x, "perf.page_faults")].kind, PM_COUNTER);
    /* The sampler's own page faults before any exec are not counted. */
    touch_pages(512);
    assert_int_equal(value(&x, "perf.page_faults"), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* perl fills an 8 MB string in user space: >= 1953 faults, counted
         * also where only user space may be counted (not root, under
         * perf_event_paranoid 2), unlike dd's buffer, which the kernel's
         * read fills. */
        execl("/usr/bin/perl", "perl", "-e", "my $s = 'a' x 8e6;", (char *)NULL);
        _exit(127);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    int64_t faults = value(&x, "perf.page_faults");
    assert_true(faults >= 1000);
    /* Counters only grow, and the sampler's later faults stay out. */
    touch_pages(512);
    assert_int_equal(value(&x, "perf.page_faults"), faults);
    int cs = col(&x, "perf.context_switches");
    if (cs >= 0)
        assert_true(value(&x, "perf.context_switches") >= 0);
    if (col(&x, "perf.cycles") < 0)
        printf("SKIP  hardware events not counted here (%.160s)\n",
               strstr(d, "\"perf.cycles\":") ? strstr(d, "\"perf.cycles\":") : d);
    free(d);
    h_close(&x);
}

/* -p PID: opened on the process's threads, inherited by children started
 * later; hardware events counted where there is a PMU. */
static void test_pid_mode(void **state)
{
    (void)state;
    h x;
    if (h_open(&x, getpid(), 1) != 0)
        return;
    char *d = describe(&x);
    assert_non_null(strstr(d, "\"mode\":\"pids\""));
    if (col(&x, "perf.page_faults") < 0) {
        printf("SKIP  software counters refused here: %s\n", d);
        free(d);
        h_close(&x);
        return;
    }
    int64_t before = value(&x, "perf.page_faults");
    assert_true(before >= 0);
    touch_pages(2000);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        touch_pages(1000);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    int64_t after = value(&x, "perf.page_faults");
    assert_true(after - before >= 2900); /* ours and the child's */
    if (col(&x, "perf.instructions") >= 0 && col(&x, "perf.cycles") >= 0) {
        volatile double acc = 0;
        int64_t i0 = value(&x, "perf.instructions");
        for (int i = 0; i < 1000000; i++)
            acc += i * 0.5;
        int64_t i1 = value(&x, "perf.instructions");
        assert_true(i1 - i0 >= 1000000);
        assert_true(value(&x, "perf.cycles") > 0);
    } else {
        printf("SKIP  hardware events (cycles, instructions) not supported here: this kernel "
               "has no PMU for them (e.g. a VM); the metadata says: %.200s\n",
               strstr(d, "\"perf.cycles\":") ? strstr(d, "\"perf.cycles\":") : d);
        assert_non_null(strstr(d, "\"perf.cycles\":\"not supported") ? ""
                        : strstr(d, "\"perf.cycles\":\"not permitted")
                            ? ""
                            : strstr(d, "\"perf.cycles\":\"ok\""));
    }
    free(d);
    h_close(&x);
}

/* -p PID with a child the PID had started before the sampler: the child
 * is opened on too, so its work after the open counts. */
static void test_pid_mode_existing_child(void **state)
{
    (void)state;
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) == 1)
            touch_pages(3000);
        _exit(0);
    }
    close(go[0]);
    h x;
    if (h_open(&x, getpid(), 1) != 0) {
        close(go[1]);
        waitpid(child, NULL, 0);
        return;
    }
    if (col(&x, "perf.page_faults") < 0) {
        printf("SKIP  software counters refused here\n");
        close(go[1]);
        waitpid(child, NULL, 0);
        h_close(&x);
        return;
    }
    char *d = describe(&x);
    assert_non_null(strstr(d, "\"targets\":2,")); /* this process and its child */
    free(d);
    int64_t before = value(&x, "perf.page_faults");
    assert_int_equal(write(go[1], "g", 1), 1);
    close(go[1]);
    assert_int_equal(waitpid(child, NULL, 0), child);
    assert_true(value(&x, "perf.page_faults") - before >= 3000);
    h_close(&x);
}

static int cmp_pid(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

/* The tree members the counters are opened on, from a captured /proc: the
 * tree of 100 is {100, 101, 102, 103}; 1235's name fakes parent 100. */
static void test_tree_members(void **state)
{
    (void)state;
    char proc[4096];
    snprintf(proc, sizeof proc, "%s/nodes/hpc-ib-rapl/proc", pm_test_fixtures());
    pm_sctx ctx;
    pm_error err;
    assert_int_equal(pm_sctx_open(&ctx, proc, "/nonexistent-perfmon", &err), 0);
    pid_t roots[2] = {100, 102};
    ctx.roots = roots;
    ctx.nroots = 1;
    pid_t *m = NULL;
    size_t n = 0;
    assert_int_equal(pm_proctree_members(&ctx, 64, &m, &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(m[0], 100); /* roots first */
    qsort(m, n, sizeof *m, cmp_pid);
    assert_int_equal(m[1], 101);
    assert_int_equal(m[2], 102);
    assert_int_equal(m[3], 103);
    free(m);
    /* A bound, and a root inside another root's tree is listed once. */
    assert_int_equal(pm_proctree_members(&ctx, 2, &m, &n), 0);
    assert_int_equal(n, 2);
    free(m);
    ctx.nroots = 2;
    roots[0] = 102;
    roots[1] = 200;
    assert_int_equal(pm_proctree_members(&ctx, 64, &m, &n), 0);
    assert_int_equal(n, 3); /* 102, 200, 103 */
    free(m);
    pm_sctx_close(&ctx);
}

static void test_fixture_root_absent(void **state)
{
    (void)state;
    char proc[4096], sys[4096];
    snprintf(proc, sizeof proc, "%s/nodes/hpc-ib-rapl/proc", pm_test_fixtures());
    snprintf(sys, sizeof sys, "%s/nodes/hpc-ib-rapl/sys", pm_test_fixtures());
    pm_sctx ctx;
    pm_error err;
    assert_int_equal(pm_sctx_open(&ctx, proc, sys, &err), 0);
    pm_schema s;
    pm_schema_init(&s);
    void *st = NULL;
    assert_int_equal(pm_source_perf.open(&ctx, &s, &st, &err), PM_ENOENT);
    assert_non_null(strstr(err.msg, "not procfs"));
    assert_int_equal(s.n, 0);
    assert_null(st);
    pm_source_perf.close(NULL);
    pm_schema_free(&s);
    pm_sctx_close(&ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_command_mode),
        cmocka_unit_test(test_pid_mode),
        cmocka_unit_test(test_pid_mode_existing_child),
        cmocka_unit_test(test_tree_members),
        cmocka_unit_test(test_fixture_root_absent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
