/* Unit tests of the cgroup source (src/sampler/src_cgroup.c) on the
 * captured trees in fixtures/cgroup/ (described in its README.md): which
 * cgroup is found (a SLURM job's level from a step's path, v2 and v1, a
 * SLUID), the values of each column, files the kernel lacks (column absent
 * and one note), the unlimited memory limit, and malformed input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfmon/source.h"

#include "../support/testutil.h"

#define assert_dbl(a, b) dbl_near((a), (b), #a, __FILE__, __LINE__)
static void dbl_near(double a, double b, const char *expr, const char *file, int line)
{
    if (!(fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1)))
        fail_msg("%s:%d: %s = %.17g, expected %.17g", file, line, expr, a, b);
}

typedef struct harness {
    char proc[4200], sys[4200];
    pm_sctx ctx;
    pm_schema schema;
    pm_sample s;
    void *state;
    pm_error err;
    int open_rc;
    pid_t roots[1];
    char notes[8192]; /* the notes written, one a line */
} harness;

static void on_note(void *arg, const char *text)
{
    harness *h = arg;
    size_t len = strlen(h->notes);
    snprintf(h->notes + len, sizeof h->notes - len, "%s\n", text);
}

/* Open the cgroup source on fixtures/cgroup/<tree> with the sampler
 * following pid (0: none), or in SLURM job slurm_job. */
static int h_open(harness *h, const char *tree, pid_t pid, const char *slurm_job)
{
    memset(h, 0, sizeof *h);
    snprintf(h->proc, sizeof h->proc, "%s/cgroup/%s/proc", pm_test_fixtures(), tree);
    snprintf(h->sys, sizeof h->sys, "%s/cgroup/%s/sys", pm_test_fixtures(), tree);
    assert_int_equal(pm_sctx_open(&h->ctx, h->proc, h->sys, &h->err), 0);
    h->ctx.clk_tck = 100;
    h->roots[0] = pid;
    h->ctx.roots = h->roots;
    h->ctx.nroots = pid > 0 ? 1 : 0;
    h->ctx.slurm_job = slurm_job;
    h->ctx.note = on_note;
    h->ctx.note_arg = h;
    pm_schema_init(&h->schema);
    h->open_rc = pm_source_cgroup.open(&h->ctx, &h->schema, &h->state, &h->err);
    if (h->open_rc == 0)
        assert_int_equal(pm_sample_init(&h->s, h->schema.n), 0);
    return h->open_rc;
}

static int h_read(harness *h)
{
    pm_sample_clear(&h->s);
    h->s.wall_ns = 1795000000 * (int64_t)1000000000;
    return pm_source_cgroup.read(h->state, &h->ctx, &h->s);
}

static void h_close(harness *h)
{
    if (h->open_rc == 0) {
        pm_source_cgroup.close(h->state);
        pm_sample_free(&h->s);
    }
    pm_schema_free(&h->schema);
    pm_sctx_close(&h->ctx);
}

static int col(const harness *h, const char *name)
{
    for (size_t i = 0; i < h->schema.n; i++)
        if (strcmp(h->schema.cols[i].name, name) == 0)
            return (int)i;
    return -1;
}

static int has(const harness *h, const char *name)
{
    int c = col(h, name);
    if (c < 0)
        fail_msg("no column %s", name);
    return (h->s.present[c / 8] >> (c % 8)) & 1;
}

static uint64_t u64v(const harness *h, const char *name)
{
    if (!has(h, name))
        fail_msg("column %s not recorded", name);
    int c = col(h, name);
    assert_int_equal(h->schema.cols[c].type, PM_U64);
    return h->s.v[c].u;
}

static double f64v(const harness *h, const char *name)
{
    if (!has(h, name))
        fail_msg("column %s not recorded", name);
    int c = col(h, name);
    assert_int_equal(h->schema.cols[c].type, PM_F64);
    return h->s.v[c].f;
}

static void check_col(const harness *h, const char *name, const char *unit, int kind)
{
    int c = col(h, name);
    if (c < 0)
        fail_msg("no column %s", name);
    assert_string_equal(h->schema.cols[c].unit, unit);
    assert_int_equal(h->schema.cols[c].kind, kind);
    assert_string_equal(h->schema.cols[c].group, "cgroup");
}

static void has_note(const harness *h, const char *part)
{
    if (!strstr(h->notes, part))
        fail_msg("no note with \"%s\" in:\n%s", part, h->notes);
}

/* v2: the sampler runs in a SLURM step's task; the job's level is taken. */
static void test_v2_slurm_job(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open(&h, "v2", 0, "1234"), 0);
    assert_int_equal(h_read(&h), 0);
    has_note(&h, "{\"event\":\"cgroup\",\"t\":1795000000,\"version\":2,"
                 "\"path\":\"/system.slice/slurmstepd.scope/job_1234\",");
    has_note(&h, "\"created\":0,\"level\":\"job\"}");
    check_col(&h, "cg.cpu_usage", "s", PM_COUNTER);
    check_col(&h, "cg.mem_peak", "B", PM_GAUGE);
    check_col(&h, "cg.io.sda.read_bytes", "B", PM_COUNTER);
    check_col(&h, "cg.pids", "1", PM_GAUGE);
    assert_dbl(f64v(&h, "cg.cpu_usage"), 7.384512);
    assert_dbl(f64v(&h, "cg.cpu_user"), 6.001234);
    assert_dbl(f64v(&h, "cg.cpu_system"), 1.383278);
    assert_int_equal(u64v(&h, "cg.cpu_periods"), 1200);
    assert_int_equal(u64v(&h, "cg.cpu_throttled_periods"), 37);
    assert_dbl(f64v(&h, "cg.cpu_throttled"), 0.912345);
    assert_int_equal(u64v(&h, "cg.mem_current"), 3221225472u);
    assert_int_equal(u64v(&h, "cg.mem_peak"), 4026531840u);
    assert_int_equal(u64v(&h, "cg.mem_limit"), 8589934592u);
    assert_int_equal(u64v(&h, "cg.mem_anon"), 2147483648u);
    assert_int_equal(u64v(&h, "cg.mem_file"), 1006632960u);
    assert_int_equal(u64v(&h, "cg.mem_kernel"), 67108864u);
    assert_int_equal(u64v(&h, "cg.mem_events_low"), 0);
    assert_int_equal(u64v(&h, "cg.mem_events_high"), 5);
    assert_int_equal(u64v(&h, "cg.mem_events_max"), 3);
    assert_int_equal(u64v(&h, "cg.mem_events_oom"), 1);
    assert_int_equal(u64v(&h, "cg.mem_events_oom_kill"), 1);
    /* per whole disk; the loop device is in neither the columns nor the
     * totals */
    assert_int_equal(u64v(&h, "cg.io.sda.read_bytes"), 1048576);
    assert_int_equal(u64v(&h, "cg.io.sda.write_ops"), 512);
    assert_int_equal(u64v(&h, "cg.io.nvme0n1.write_bytes"), 8388608);
    assert_int_equal(u64v(&h, "cg.io.nvme0n1.read_ops"), 1024);
    assert_int_equal(col(&h, "cg.io.loop0.read_bytes"), -1);
    assert_int_equal(u64v(&h, "cg.io_read_bytes"), 1048576 + 4194304);
    assert_int_equal(u64v(&h, "cg.io_write_bytes"), 2097152 + 8388608);
    assert_int_equal(u64v(&h, "cg.io_read_ops"), 256 + 1024);
    assert_int_equal(u64v(&h, "cg.io_write_ops"), 512 + 2048);
    assert_int_equal(u64v(&h, "cg.pids"), 42);
    assert_dbl(f64v(&h, "cg.psi_cpu_some"), 2.5);
    assert_dbl(f64v(&h, "cg.psi_cpu_full"), 0.1);
    assert_dbl(f64v(&h, "cg.psi_mem_some"), 3.0);
    assert_dbl(f64v(&h, "cg.psi_mem_full"), 1.5);
    assert_dbl(f64v(&h, "cg.psi_io_some"), 0.4);
    assert_dbl(f64v(&h, "cg.psi_io_full"), 0.2);
    /* nothing missing, nothing malformed: the event is the only note */
    assert_null(strchr(strchr(h.notes, '\n') + 1, '\n'));
    /* the event is written once */
    h.notes[0] = '\0';
    assert_int_equal(h_read(&h), 0);
    assert_string_equal(h.notes, "");
    h_close(&h);
}

/* v2 with a SLUID job (found from -p PID), on an older kernel. */
static void test_v2_sluid_old_kernel(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open(&h, "v2", 4242, NULL), 0);
    assert_int_equal(h_read(&h), 0);
    has_note(&h, "\"path\":\"/system.slice/slurmstepd.scope/sEKNKTV3WPV500\",\"from_pid\":4242,"
                 "\"created\":0,\"level\":\"job\"}");
    /* memory.peak (5.19): column absent, one note */
    assert_int_equal(col(&h, "cg.mem_peak"), -1);
    has_note(&h, "cgroup: memory.peak not available (Linux before 5.19)");
    /* memory.max "max": the column is there, with no value */
    assert_false(has(&h, "cg.mem_limit"));
    assert_int_equal(u64v(&h, "cg.mem_current"), 1048576);
    /* no cpu controller: usage without the throttling columns */
    assert_dbl(f64v(&h, "cg.cpu_usage"), 5.0);
    assert_int_equal(col(&h, "cg.cpu_periods"), -1);
    assert_int_equal(col(&h, "cg.cpu_throttled"), -1);
    has_note(&h, "cgroup: cpu.stat has no nr_periods, nr_throttled, throttled_usec");
    assert_int_equal(col(&h, "cg.mem_kernel"), -1);
    has_note(&h, "cgroup: memory.stat has no kernel");
    assert_int_equal(u64v(&h, "cg.io_read_bytes"), 4096);
    /* a disk without a line in io.stat did no I/O in the cgroup */
    assert_int_equal(u64v(&h, "cg.io.nvme0n1.read_bytes"), 0);
    h_close(&h);
}

/* Malformed /proc/PID/cgroup lines are skipped (and counted in a note). */
static void test_v2_bad_proc_lines(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open(&h, "v2", 4300, NULL), 0);
    assert_int_equal(h_read(&h), 0);
    has_note(&h, "\"path\":\"/system.slice/slurmstepd.scope/job_1234\"");
    has_note(&h, "cgroup: 4 malformed line(s) of /proc/4300/cgroup ignored");
    assert_int_equal(u64v(&h, "cg.pids"), 42);
    h_close(&h);
}

/* Hostile file contents: nothing malformed is recorded, what parses is. */
static void test_v2_hostile_files(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open(&h, "v2", 6666, NULL), 0);
    assert_int_equal(h_read(&h), 0);
    has_note(&h, "\"level\":\"process\"");
    assert_false(has(&h, "cg.cpu_usage"));   /* -5 */
    assert_false(has(&h, "cg.cpu_user"));    /* above 2^64 */
    assert_false(has(&h, "cg.cpu_system"));  /* "12 34"; the repeated key is ignored */
    assert_false(has(&h, "cg.mem_current")); /* 12abc */
    assert_false(has(&h, "cg.mem_peak"));    /* empty */
    assert_false(has(&h, "cg.mem_limit"));   /* -1 */
    assert_int_equal(u64v(&h, "cg.mem_anon"), 1024);
    assert_false(has(&h, "cg.mem_kernel")); /* 0x10 */
    assert_false(has(&h, "cg.io_read_bytes"));
    assert_false(has(&h, "cg.psi_cpu_some")); /* no total= */
    assert_false(has(&h, "cg.psi_cpu_full")); /* above 2^64 */
    assert_dbl(f64v(&h, "cg.psi_mem_some"), 5e-6);
    assert_int_equal(col(&h, "cg.psi_mem_full"), -1); /* no "full" line */
    assert_dbl(f64v(&h, "cg.psi_io_full"), 7e-6);
    assert_int_equal(u64v(&h, "cg.pids"), 7);
    has_note(&h, "cgroup: cpu.stat: malformed line ignored (starting \"usage_usec\")");
    has_note(&h, "cgroup: memory.current: malformed line ignored");
    has_note(&h, "cgroup: io.stat: malformed line ignored");
    /* one note per file, not one per sample */
    h.notes[0] = '\0';
    assert_int_equal(h_read(&h), 0);
    assert_string_equal(h.notes, "");
    h_close(&h);
}

/* memory.stat, the limit (and v1's kernel memory) are read at the first
 * sample and then every --pss-interval; the counters every sample. */
static void test_slow_files(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open(&h, "v2", 0, "1234"), 0);
    h.ctx.pss_interval_ns = 5000000000;
    h.ctx.now_mono_ns = 1000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "cg.mem_anon"), 2147483648u);
    assert_int_equal(u64v(&h, "cg.mem_limit"), 8589934592u);
    h.ctx.now_mono_ns = 5900000000;
    assert_int_equal(h_read(&h), 0);
    assert_false(has(&h, "cg.mem_anon"));
    assert_false(has(&h, "cg.mem_limit"));
    assert_int_equal(u64v(&h, "cg.mem_current"), 3221225472u);
    assert_dbl(f64v(&h, "cg.cpu_usage"), 7.384512);
    assert_int_equal(u64v(&h, "cg.mem_events_oom_kill"), 1);
    h.ctx.now_mono_ns = 6000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "cg.mem_kernel"), 67108864u);
    h_close(&h);
}

/* No cgroup: the root cgroup, a system-wide run, another SLURM job. */
static void test_no_cgroup(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open(&h, "v2", 1, NULL), PM_ENOENT);
    assert_non_null(strstr(h.err.msg, "root cgroup"));
    h_close(&h);
    assert_int_equal(h_open(&h, "v2", 0, NULL), PM_ENOENT);
    assert_non_null(strstr(h.err.msg, "system-wide"));
    h_close(&h);
    assert_int_equal(h_open(&h, "v2", 0, "999"), PM_ENOENT);
    assert_non_null(strstr(h.err.msg, "not in SLURM job 999"));
    h_close(&h);
    assert_int_equal(h_open(&h, "v2", 77777, NULL), PM_ENOENT); /* no such process */
    h_close(&h);
    assert_int_equal(h_open(&h, "v2", 4400, NULL), PM_ENOENT); /* its cgroup has gone */
    assert_non_null(strstr(h.err.msg, "not under"));
    h_close(&h);
}

/* v1: SLURM's slurm/uid_<uid>/job_<id> in each hierarchy, a combined
 * cpu,cpuacct mount. */
static void test_v1_slurm_job(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open(&h, "v1", 0, "77"), 0);
    assert_int_equal(h_read(&h), 0);
    has_note(&h, "{\"event\":\"cgroup\",\"t\":1795000000,\"version\":1,"
                 "\"path\":\"/slurm/uid_1000/job_77\",");
    has_note(&h, "\"level\":\"job\"");
    assert_dbl(f64v(&h, "cg.cpu_usage"), 12.3456789);
    assert_dbl(f64v(&h, "cg.cpu_user"), 10.0);
    assert_dbl(f64v(&h, "cg.cpu_system"), 2.34);
    assert_int_equal(u64v(&h, "cg.cpu_periods"), 10);
    assert_int_equal(u64v(&h, "cg.cpu_throttled_periods"), 2);
    assert_dbl(f64v(&h, "cg.cpu_throttled"), 0.3);
    assert_int_equal(u64v(&h, "cg.mem_current"), 1073741824u);
    assert_int_equal(u64v(&h, "cg.mem_peak"), 2147483648u);
    assert_int_equal(u64v(&h, "cg.mem_limit"), 4294967296u);
    assert_int_equal(u64v(&h, "cg.mem_anon"), 402653184u);
    assert_int_equal(u64v(&h, "cg.mem_file"), 536870912u);
    assert_int_equal(u64v(&h, "cg.mem_kernel"), 33554432u);
    assert_int_equal(u64v(&h, "cg.mem_events_max"), 4);
    assert_int_equal(u64v(&h, "cg.mem_events_oom_kill"), 2);
    assert_int_equal(col(&h, "cg.mem_events_high"), -1); /* no v1 equivalent */
    /* the device-mapper device is not a whole disk: not in the totals */
    assert_int_equal(u64v(&h, "cg.io_read_bytes"), 65536);
    assert_int_equal(u64v(&h, "cg.io_write_bytes"), 131072);
    assert_int_equal(u64v(&h, "cg.io.sda.read_ops"), 16);
    assert_int_equal(u64v(&h, "cg.io_write_ops"), 32);
    assert_int_equal(u64v(&h, "cg.pids"), 17);
    /* v1 has no per-cgroup pressure (no unified mount here) */
    assert_int_equal(col(&h, "cg.psi_cpu_some"), -1);
    h_close(&h);
}

/* v1 under a SLURM built for several slurmd on one machine (Debian's):
 * `slurm_<node>/uid_<uid>/job_<id>`, still the job's level. */
static void test_v1_slurm_node_prefix(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open(&h, "v1", 901, NULL), 0);
    assert_int_equal(h_read(&h), 0);
    has_note(&h, "\"path\":\"/slurm_node1/uid_1000/job_78\"");
    has_note(&h, "\"level\":\"job\"");
    assert_int_equal(u64v(&h, "cg.mem_current"), 1073741824u);
    h_close(&h);
}

/* v1: a process in its own memory cgroup without a limit. */
static void test_v1_unlimited(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open(&h, "v1", 900, NULL), 0);
    assert_int_equal(h_read(&h), 0);
    has_note(&h, "\"path\":\"/mygroup\",\"from_pid\":900,\"created\":0,\"level\":\"process\"");
    assert_false(has(&h, "cg.mem_limit")); /* 9223372036854771712 */
    assert_int_equal(u64v(&h, "cg.mem_peak"), 2097152);
    assert_int_equal(col(&h, "cg.mem_kernel"), -1);
    has_note(&h, "cgroup: memory.kmem.usage_in_bytes not available");
    assert_int_equal(col(&h, "cg.mem_events_oom_kill"), -1); /* before 4.13 */
    has_note(&h, "cgroup: memory.oom_control has no oom_kill");
    /* its other hierarchies are the root cgroup: not the process's */
    assert_int_equal(col(&h, "cg.cpu_usage"), -1);
    assert_int_equal(col(&h, "cg.pids"), -1);
    h_close(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v2_slurm_job),
        cmocka_unit_test(test_v2_sluid_old_kernel),
        cmocka_unit_test(test_v2_bad_proc_lines),
        cmocka_unit_test(test_v2_hostile_files),
        cmocka_unit_test(test_no_cgroup),
        cmocka_unit_test(test_v1_slurm_job),
        cmocka_unit_test(test_v1_slurm_node_prefix),
        cmocka_unit_test(test_v1_unlimited),
        cmocka_unit_test(test_slow_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
