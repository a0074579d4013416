/* Unit tests of the sampler's metric sources (src/sampler/src_*.c) on the
 * captured /proc and /sys trees in fixtures/nodes/.
 *
 * hpc-ib-rapl: a 2-socket Skylake-SP node with Infiniband and RAPL, and a
 *   process tree 100 -> {101, 102 -> 103}, an unrelated 200, a process
 *   whose name has spaces and parentheses (1234) and one whose name fakes
 *   a parent field (1235, "x) S 100 (y", really a child of 1).
 * minimal: an old kernel: 4-field /proc/stat, no MemAvailable, 11-number
 *   diskstats, no Infiniband, no powercap.
 * captured: a tree copied with cp from a 6.1 node: a "self" link to the
 *   copying process, no /sys/block, many kinds of block devices.
 * impossible: values no kernel can produce, in meminfo, stat, loadavg,
 *   diskstats and net/dev.
 *
 * Counters that need two readings are tested on a copy of the tree in a
 * temporary directory whose files are rewritten in place (the sources keep
 * their descriptors open, so the rewrite must keep the inode).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "perfmon/log.h"
#include "perfmon/source.h"

#include "../support/testutil.h"

#define EPS 1e-9

/* cmocka 1.1.5 has no assert_double_equal. */
#define assert_dbl(a, b, eps) dbl_near((a), (b), (eps), #a, __FILE__, __LINE__)
static void dbl_near(double a, double b, double eps, const char *expr, const char *file, int line)
{
    if (!(fabs(a - b) <= eps))
        fail_msg("%s:%d: %s = %.17g, expected %.17g (+-%g)", file, line, expr, a, b, eps);
}

/* ---------------------------------------------------------------- helpers */

typedef struct harness {
    char root[4096];
    char proc[4200], sys[4200]; /* the context borrows them (messages) */
    pm_sctx ctx;
    pm_schema schema;
    pm_sample s;
    const pm_source *src;
    void *state;
    pm_error err;
    int open_rc;
    pid_t roots[4];
} harness;

static void fixture_root(char *out, size_t cap, const char *node)
{
    snprintf(out, cap, "%s/nodes/%s", pm_test_fixtures(), node);
}

/* The SLURM job (and the sampler's own step) h_open puts in the context. */
static const char *h_slurm_job, *h_slurm_step;

/* Open a context on root/proc and root/sys with deterministic clock tick
 * and page size, then open src on it.  Returns the source's open() code;
 * on success the sample is sized to the schema. */
static int h_open(harness *h, const pm_source *src, const char *root, const pid_t *roots,
                  size_t nroots)
{
    memset(h, 0, sizeof *h);
    snprintf(h->root, sizeof h->root, "%s", root);
    snprintf(h->proc, sizeof h->proc, "%s/proc", root);
    snprintf(h->sys, sizeof h->sys, "%s/sys", root);
    assert_int_equal(pm_sctx_open(&h->ctx, h->proc, h->sys, &h->err), 0);
    h->ctx.clk_tck = 100;
    h->ctx.page_size = 4096;
    h->ctx.uid = getuid();
    assert_true(nroots <= 4);
    for (size_t i = 0; i < nroots; i++)
        h->roots[i] = roots[i];
    h->ctx.roots = h->roots;
    h->ctx.nroots = nroots;
    h->ctx.slurm_job = h_slurm_job;
    h->ctx.slurm_step = h_slurm_step;
    pm_schema_init(&h->schema);
    h->src = src;
    h->open_rc = src->open(&h->ctx, &h->schema, &h->state, &h->err);
    if (h->open_rc == 0)
        assert_int_equal(pm_sample_init(&h->s, h->schema.n), 0);
    return h->open_rc;
}

static int h_open_node(harness *h, const pm_source *src, const char *node, const pid_t *roots,
                       size_t nroots)
{
    char root[4096];
    fixture_root(root, sizeof root, node);
    return h_open(h, src, root, roots, nroots);
}

static int h_read(harness *h)
{
    pm_sample_clear(&h->s);
    return h->src->read(h->state, &h->ctx, &h->s);
}

static void h_close(harness *h)
{
    if (h->open_rc == 0) {
        h->src->close(h->state);
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
    int c = col(h, name);
    if (c < 0)
        fail_msg("no column %s", name);
    if (!has(h, name))
        fail_msg("column %s not recorded", name);
    assert_int_equal(h->schema.cols[c].type, PM_U64);
    return h->s.v[c].u;
}

static double f64v(const harness *h, const char *name)
{
    int c = col(h, name);
    if (c < 0)
        fail_msg("no column %s", name);
    if (!has(h, name))
        fail_msg("column %s not recorded", name);
    assert_int_equal(h->schema.cols[c].type, PM_F64);
    return h->s.v[c].f;
}

static void check_col(const harness *h, const char *name, const char *unit, int kind, int type,
                      const char *group)
{
    int c = col(h, name);
    if (c < 0)
        fail_msg("no column %s", name);
    assert_string_equal(h->schema.cols[c].unit, unit);
    assert_int_equal(h->schema.cols[c].kind, kind);
    assert_int_equal(h->schema.cols[c].type, type);
    assert_string_equal(h->schema.cols[c].group, group);
}

/* Copy fixtures/nodes/<node> into a fresh temporary directory; returns its
 * root (caller frees and removes it with drop_copy). */
static char *copy_node(const char *node)
{
    char *tmp = pm_test_tmpdir();
    assert_non_null(tmp);
    char *dir = strdup(tmp);
    assert_non_null(dir);
    char src[4096], cmd[9000];
    fixture_root(src, sizeof src, node);
    snprintf(cmd, sizeof cmd, "cp -r '%s/.' '%s/'", src, dir);
    assert_int_equal(system(cmd), 0);
    return dir;
}

static void drop_copy(char *dir)
{
    pm_test_rmrf(dir);
    free(dir);
}

/* Rewrite root/rel in place (truncate, same inode), as the kernel would. */
PM_PRINTF(3, 4) static void write_file(const char *root, const char *rel, const char *fmt, ...)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    if (!f)
        fail_msg("cannot write %s: %s", path, strerror(errno));
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    assert_int_equal(fclose(f), 0);
}

static void make_dir(const char *root, const char *rel)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    assert_int_equal(mkdir(path, 0755), 0);
}

/* A complete 52-field /proc/<pid>/stat line (proc(5)). */
static void write_stat(const char *root, int pid, const char *comm, int ppid, unsigned long ut,
                       unsigned long st, long cut, long cst, unsigned long threads,
                       unsigned long vsize, unsigned long rss)
{
    char rel[64];
    snprintf(rel, sizeof rel, "proc/%d/stat", pid);
    write_file(root, rel,
               "%d (%s) S %d %d %d 0 -1 4194560 12345 678 9 0 %lu %lu %ld %ld 20 0 %lu 0 "
               "113643 %lu %lu 18446744073709551615 94242397700096 94242397719977 "
               "140729151452752 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0 94242397735984 "
               "94242397737600 94243008184320 140729151453836 140729151453856 "
               "140729151453856 140729151455211 0\n",
               pid, comm, ppid, pid, pid, ut, st, cut, cst, threads, vsize, rss);
}

/* ---------------------------------------------------------------- context */

static void test_sctx_open_missing_proc(void **state)
{
    (void)state;
    pm_sctx ctx;
    pm_error err;
    pm_error_clear(&err);
    assert_int_equal(pm_sctx_open(&ctx, "/nonexistent/proc", "/nonexistent/sys", &err), PM_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent/proc"));
    pm_sctx_close(&ctx);
}

static void test_sctx_open_missing_sys(void **state)
{
    (void)state;
    /* No /sys (a minimal container): the context opens and the sysfs
     * sources report their hardware absent. */
    char proc[4200];
    fixture_root(proc, sizeof proc, "hpc-ib-rapl");
    strcat(proc, "/proc");
    pm_sctx ctx;
    pm_error err;
    assert_int_equal(pm_sctx_open(&ctx, proc, "/nonexistent/sys", &err), 0);
    pm_schema schema;
    pm_schema_init(&schema);
    void *st = NULL;
    assert_int_equal(pm_source_infiniband.open(&ctx, &schema, &st, &err), PM_ENOENT);
    assert_int_equal(pm_source_rapl.open(&ctx, &schema, &st, &err), PM_ENOENT);
    assert_int_equal(schema.n, 0);
    pm_schema_free(&schema);
    pm_sctx_close(&ctx);
}

static void test_registry(void **state)
{
    (void)state;
    static const char *const names[] = {"cpu",    "memory",   "disk",       "net",
                                        "nvml",   "perf",     "infiniband", "rapl",
                                        "events", "proctree", "cgroup"};
    enum { N = sizeof names / sizeof *names };
    size_t n = 0;
    while (pm_sources[n]) {
        assert_true(n < N);
        assert_string_equal(pm_sources[n]->name, names[n]);
        assert_non_null(pm_sources[n]->open);
        assert_non_null(pm_sources[n]->read);
        assert_non_null(pm_sources[n]->close);
        pm_sources[n]->close(NULL); /* close(NULL) is a no-op */
        n++;
    }
    assert_int_equal(n, N);
    assert_true(pm_source_cpu.essential);
    assert_true(pm_source_memory.essential);
    assert_false(pm_source_infiniband.essential);
    assert_false(pm_source_rapl.essential);
}

/* -------------------------------------------------------------------- cpu */

/* v2 of hpc-ib-rapl/proc/stat: core i did 10*(i+1) busy ticks of 100. */
static const char stat_v2[] = "cpu  956020 27 242947 79019997 17583 0 9900 0 0 0\n"
                              "cpu0 120353 12 30457 9876632 2346 0 1235 0 0 0\n"
                              "cpu1 118020 0 29871 9880199 2102 0 1191 0 0 0\n"
                              "cpu2 119904 5 31003 9875071 2231 0 1302 0 0 0\n"
                              "cpu3 121042 0 30112 9874459 2401 0 1251 0 0 0\n"
                              "cpu4 117698 3 29951 9881049 2000 0 1181 0 0 0\n"
                              "cpu5 119057 0 30501 9878839 2051 0 1223 0 0 0\n"
                              "cpu6 120568 7 30801 9876029 2301 0 1276 0 0 0\n"
                              "cpu7 119378 0 30251 9877719 2151 0 1241 0 0 0\n"
                              "intr 1234567890 33 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0\n"
                              "ctxt 987700000\n"
                              "processes 4567990\n"
                              "procs_running 3\n"
                              "procs_blocked 0\n";

/* v3: the node line went backwards (user -5000: counters reset), cpu0's
 * busy time went backwards, cpu1's busy time went back by one tick while
 * its total grew; cpus 2-7 did 25 busy ticks of 100. */
static const char stat_v3[] = "cpu  951020 27 242947 79019997 17583 0 9900 0 0 0\n"
                              "cpu0 119353 12 30457 9876632 2346 0 1235 0 0 0\n"
                              "cpu1 118019 0 29871 9880399 2102 0 1191 0 0 0\n"
                              "cpu2 119929 5 31003 9875146 2231 0 1302 0 0 0\n"
                              "cpu3 121067 0 30112 9874534 2401 0 1251 0 0 0\n"
                              "cpu4 117723 3 29951 9881124 2000 0 1181 0 0 0\n"
                              "cpu5 119082 0 30501 9878914 2051 0 1223 0 0 0\n"
                              "cpu6 120593 7 30801 9876104 2301 0 1276 0 0 0\n"
                              "cpu7 119403 0 30251 9877794 2151 0 1241 0 0 0\n"
                              "ctxt 987800000\n";

static void test_cpu_columns(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_cpu, "hpc-ib-rapl", NULL, 0), 0);
    static const char *const times[] = {"cpu.user",   "cpu.nice", "cpu.system",  "cpu.idle",
                                        "cpu.iowait", "cpu.irq",  "cpu.softirq", "cpu.steal"};
    for (size_t i = 0; i < 8; i++)
        check_col(&h, times[i], "s", PM_COUNTER, PM_F64, "cpu");
    check_col(&h, "cpu.percent", "%", PM_GAUGE, PM_F64, "cpu");
    check_col(&h, "cpu.core_min_pct", "%", PM_GAUGE, PM_F64, "cpu");
    check_col(&h, "cpu.core_avg_pct", "%", PM_GAUGE, PM_F64, "cpu");
    check_col(&h, "cpu.core_max_pct", "%", PM_GAUGE, PM_F64, "cpu");
    check_col(&h, "cpu.ncpus", "1", PM_GAUGE, PM_U64, "cpu");
    check_col(&h, "cpu.ctxt", "1", PM_COUNTER, PM_U64, "cpu");
    check_col(&h, "cpu.forks", "1", PM_COUNTER, PM_U64, "cpu");
    check_col(&h, "procs.running", "1", PM_GAUGE, PM_U64, "cpu");
    check_col(&h, "procs.blocked", "1", PM_GAUGE, PM_U64, "cpu");
    check_col(&h, "load.1", "1", PM_GAUGE, PM_F64, "cpu");
    check_col(&h, "load.5", "1", PM_GAUGE, PM_F64, "cpu");
    check_col(&h, "load.15", "1", PM_GAUGE, PM_F64, "cpu");
    h_close(&h);
}

static void test_cpu_first_sample(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_cpu, "hpc-ib-rapl", NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    /* cpu  955676 27 242939 79019565 17575 0 9892 0 0 0, USER_HZ 100 */
    assert_dbl(f64v(&h, "cpu.user"), 9556.76, EPS);
    assert_dbl(f64v(&h, "cpu.nice"), 0.27, EPS);
    assert_dbl(f64v(&h, "cpu.system"), 2429.39, EPS);
    assert_dbl(f64v(&h, "cpu.idle"), 790195.65, EPS);
    assert_dbl(f64v(&h, "cpu.iowait"), 175.75, EPS);
    assert_dbl(f64v(&h, "cpu.irq"), 0.0, EPS);
    assert_dbl(f64v(&h, "cpu.softirq"), 98.92, EPS);
    assert_dbl(f64v(&h, "cpu.steal"), 0.0, EPS);
    assert_int_equal(u64v(&h, "cpu.ncpus"), 8);
    assert_int_equal(u64v(&h, "cpu.ctxt"), 987654321);
    assert_int_equal(u64v(&h, "cpu.forks"), 4567890);
    assert_int_equal(u64v(&h, "procs.running"), 9);
    assert_int_equal(u64v(&h, "procs.blocked"), 1);
    assert_dbl(f64v(&h, "load.1"), 12.50, EPS);
    assert_dbl(f64v(&h, "load.5"), 11.75, EPS);
    assert_dbl(f64v(&h, "load.15"), 10.02, EPS);
    /* Percentages need two readings. */
    assert_false(has(&h, "cpu.percent"));
    assert_false(has(&h, "cpu.core_min_pct"));
    assert_false(has(&h, "cpu.core_avg_pct"));
    assert_false(has(&h, "cpu.core_max_pct"));
    h_close(&h);
}

/* The sampling loop reads <proc>/loadavg once a sample and hands its text
 * to the sources (pm_sctx.loadavg): the load averages come from it, and
 * the process tree's newest pid, whose change lists /proc again. */
static void test_loadavg_from_context(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_cpu, "hpc-ib-rapl", NULL, 0), 0);
    h.ctx.loadavg = "1.25 0.50 0.25 2/345 6789\n";
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "load.1"), 1.25, EPS);
    assert_dbl(f64v(&h, "load.5"), 0.50, EPS);
    assert_dbl(f64v(&h, "load.15"), 0.25, EPS);
    h_close(&h);

    char *root = copy_node("hpc-ib-rapl");
    const pid_t roots[] = {100};
    assert_int_equal(h_open(&h, &pm_source_proctree, root, roots, 1), 0);
    h.ctx.loadavg = "1.25 0.50 0.25 2/345 1235\n";
    h.ctx.now_mono_ns = 1000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 4);
    /* 104 is born; the file on disk still names 1235, the context 1236. */
    make_dir(root, "proc/104");
    write_stat(root, 104, "step", 100, 1, 1, 0, 0, 1, 4096, 10);
    h.ctx.now_mono_ns = 2000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 4);
    h.ctx.loadavg = "1.25 0.50 0.25 2/345 1236\n";
    h.ctx.now_mono_ns = 3000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 5);
    h_close(&h);
    drop_copy(root);
}

static void test_cpu_percent_two_reads(void **state)
{
    (void)state;
    char *root = copy_node("hpc-ib-rapl");
    harness h;
    assert_int_equal(h_open(&h, &pm_source_cpu, root, NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    write_file(root, "proc/stat", "%s", stat_v2);
    assert_int_equal(h_read(&h), 0);
    /* Node: 360 busy ticks of 800. Cores: 10, 20, ... 80 of 100 each. */
    assert_dbl(f64v(&h, "cpu.percent"), 45.0, EPS);
    assert_dbl(f64v(&h, "cpu.core_min_pct"), 10.0, EPS);
    assert_dbl(f64v(&h, "cpu.core_avg_pct"), 45.0, EPS);
    assert_dbl(f64v(&h, "cpu.core_max_pct"), 80.0, EPS);
    assert_dbl(f64v(&h, "cpu.user"), 9560.20, EPS);
    assert_int_equal(u64v(&h, "cpu.ctxt"), 987700000);
    assert_int_equal(u64v(&h, "procs.running"), 3);
    assert_int_equal(u64v(&h, "procs.blocked"), 0);

    /* Counters that go backwards give no percentage, never a negative one. */
    write_file(root, "proc/stat", "%s", stat_v3);
    assert_int_equal(h_read(&h), 0);
    assert_false(has(&h, "cpu.percent"));
    assert_dbl(f64v(&h, "cpu.core_min_pct"), 25.0, EPS);
    assert_dbl(f64v(&h, "cpu.core_avg_pct"), 25.0, EPS);
    assert_dbl(f64v(&h, "cpu.core_max_pct"), 25.0, EPS);
    assert_int_equal(u64v(&h, "cpu.ncpus"), 8);
    assert_false(has(&h, "procs.running")); /* line absent this time */

    /* After the reset the new values are the baseline: an unchanged file
     * is an empty interval, again no percentage. */
    assert_int_equal(h_read(&h), 0);
    assert_false(has(&h, "cpu.percent"));
    assert_false(has(&h, "cpu.core_avg_pct"));
    h_close(&h);
    drop_copy(root);
}

static void test_cpu_all_idle_and_all_busy(void **state)
{
    (void)state;
    char *root = copy_node("minimal");
    harness h;
    assert_int_equal(h_open(&h, &pm_source_cpu, root, NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    /* cpu0 all idle (+100 idle), cpu1 all busy (+100 user). */
    write_file(root, "proc/stat",
               "cpu  1100 20 300 50100\ncpu0 600 10 200 24100\ncpu1 500 10 100 26000\n");
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "cpu.percent"), 50.0, EPS);
    assert_dbl(f64v(&h, "cpu.core_min_pct"), 0.0, EPS);
    assert_dbl(f64v(&h, "cpu.core_max_pct"), 100.0, EPS);
    assert_dbl(f64v(&h, "cpu.core_avg_pct"), 50.0, EPS);
    assert_dbl(f64v(&h, "cpu.user"), 11.0, EPS);
    h_close(&h);
    drop_copy(root);
}

static void test_cpu_old_kernel_four_fields(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_cpu, "minimal", NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    /* cpu  1000 20 300 50000 */
    assert_dbl(f64v(&h, "cpu.user"), 10.0, EPS);
    assert_dbl(f64v(&h, "cpu.nice"), 0.2, EPS);
    assert_dbl(f64v(&h, "cpu.system"), 3.0, EPS);
    assert_dbl(f64v(&h, "cpu.idle"), 500.0, EPS);
    assert_int_equal(u64v(&h, "cpu.ncpus"), 2);
    assert_int_equal(u64v(&h, "cpu.ctxt"), 5000);
    assert_int_equal(u64v(&h, "cpu.forks"), 300);
    assert_dbl(f64v(&h, "load.15"), 0.30, EPS);
    /* The fields this kernel does not have (iowait, irq, softirq, steal)
     * are left unrecorded, never a silent 0. */
    assert_false(has(&h, "cpu.iowait"));
    assert_false(has(&h, "cpu.steal"));
    assert_false(has(&h, "cpu.irq"));
    assert_false(has(&h, "cpu.softirq"));
    h_close(&h);

    /* 2.6.0 to 2.6.10: seven fields, no steal. */
    char *root = copy_node("minimal");
    write_file(root, "proc/stat",
               "cpu  1000 20 300 50000 70 80 90\ncpu0 1000 20 300 50000 70 80 90\n");
    assert_int_equal(h_open(&h, &pm_source_cpu, root, NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "cpu.iowait"), 0.7, EPS);
    assert_dbl(f64v(&h, "cpu.irq"), 0.8, EPS);
    assert_dbl(f64v(&h, "cpu.softirq"), 0.9, EPS);
    assert_false(has(&h, "cpu.steal"));
    h_close(&h);
    drop_copy(root);
}

static void test_cpu_open_failures(void **state)
{
    (void)state;
    static const struct {
        const char *stat; /* NULL: no file */
    } rows[] = {{NULL}, {""}, {"intr 1 2 3\nctxt 5\n"}, {"cpu0 1 2 3 4\n"}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char *root = copy_node("minimal");
        char path[4200];
        snprintf(path, sizeof path, "%s/proc/stat", root);
        if (rows[i].stat)
            write_file(root, "proc/stat", "%s", rows[i].stat);
        else
            assert_int_equal(unlink(path), 0);
        harness h;
        assert_int_equal(h_open(&h, &pm_source_cpu, root, NULL, 0), PM_EIO);
        assert_non_null(strstr(h.err.msg, "stat"));
        assert_int_equal(h.schema.n, 0);
        h_close(&h);
        drop_copy(root);
    }
}

static void test_cpu_huge_stat_file(void **state)
{
    (void)state;
    /* 2000 cpus: /proc/stat larger than the first buffer (16 KiB). */
    char *root = copy_node("minimal");
    char path[4200];
    snprintf(path, sizeof path, "%s/proc/stat", root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "cpu  %d 0 %d %d 0 0 0 0 0 0\n", 2000 * 100, 2000 * 10, 2000 * 1000);
    for (int i = 0; i < 2000; i++)
        fprintf(f, "cpu%d 100 0 10 1000 0 0 0 0 0 0\n", i);
    fprintf(f, "ctxt 42\n");
    assert_int_equal(fclose(f), 0);
    harness h;
    assert_int_equal(h_open(&h, &pm_source_cpu, root, NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "cpu.ncpus"), 2000);
    assert_int_equal(u64v(&h, "cpu.ctxt"), 42);
    h_close(&h);
    drop_copy(root);
}

/* ----------------------------------------------------------------- memory */

static void test_memory_hpc(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_memory, "hpc-ib-rapl", NULL, 0), 0);
    check_col(&h, "mem.total", "B", PM_GAUGE, PM_U64, "memory");
    check_col(&h, "mem.percent", "%", PM_GAUGE, PM_F64, "memory");
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "mem.total"), 196608000ull * 1024);
    assert_int_equal(u64v(&h, "mem.available"), 150000000ull * 1024);
    assert_int_equal(u64v(&h, "mem.used"), 46608000ull * 1024);
    assert_dbl(f64v(&h, "mem.percent"), 100.0 * 46608000 / 196608000, EPS);
    assert_int_equal(u64v(&h, "mem.free"), 120000000ull * 1024);
    assert_int_equal(u64v(&h, "mem.buffers"), 1024000ull * 1024);
    assert_int_equal(u64v(&h, "mem.cached"), 30000000ull * 1024); /* not SwapCached */
    assert_int_equal(u64v(&h, "mem.shared"), 2048000ull * 1024);
    assert_int_equal(u64v(&h, "swap.total"), 8388604ull * 1024);
    assert_int_equal(u64v(&h, "swap.used"), 388604ull * 1024);
    assert_dbl(f64v(&h, "swap.percent"), 100.0 * 388604 / 8388604, EPS);
    h_close(&h);
}

static void test_memory_old_kernel(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_memory, "minimal", NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "mem.total"), 2048000ull * 1024);
    /* No MemAvailable (kernel < 3.14): not made up, and "used" is the
     * classic total - free - buffers - cached of the fixture's meminfo:
     * 2048000 - 512000 - 100000 - 700000 = 736000 kB, 35.9375 %. */
    assert_false(has(&h, "mem.available"));
    assert_int_equal(u64v(&h, "mem.used"), 736000ull * 1024);
    assert_dbl(f64v(&h, "mem.percent"), 35.9375, EPS);
    assert_false(has(&h, "mem.shared")); /* no Shmem line either */
    assert_int_equal(u64v(&h, "mem.free"), 512000ull * 1024);
    assert_int_equal(u64v(&h, "swap.total"), 0);
    assert_int_equal(u64v(&h, "swap.used"), 0);
    assert_dbl(f64v(&h, "swap.percent"), 0.0, EPS);
    h_close(&h);
}

/* The metadata member the memory source adds: which "used" it records. */
static char *describe_json(const harness *h)
{
    pm_buf j;
    pm_buf_init(&j);
    pm_buf_puts(&j, "{");
    h->src->describe(h->state, &j);
    pm_buf_puts(&j, "}");
    assert_false(j.oom);
    char *out = strdup(j.data);
    pm_buf_free(&j);
    return out;
}

static void test_memory_used_definition(void **state)
{
    (void)state;
    static const struct {
        const char *node, *want;
    } rows[] = {
        {"hpc-ib-rapl", "MemTotal - MemAvailable"},
        {"minimal", "MemTotal - MemFree - Buffers - Cached (no MemAvailable: kernel before 3.14)"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        harness h;
        assert_int_equal(h_open_node(&h, &pm_source_memory, rows[i].node, NULL, 0), 0);
        char *js = describe_json(&h);
        cJSON *o = cJSON_Parse(js);
        assert_non_null(o);
        cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "mem_used");
        assert_true(cJSON_IsString(u));
        assert_string_equal(u->valuestring, rows[i].want);
        cJSON_Delete(o);
        free(js);
        h_close(&h);
    }
}

/* Without MemAvailable at start: used = total - free - buffers - cached,
 * clamped at 0, and only when all four are there and real. */
static void test_memory_classic_rows(void **state)
{
    (void)state;
    static const struct {
        const char *meminfo;
        uint64_t used_kb; /* UINT64_MAX: not recorded */
    } rows[] = {
        {"MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 20 kB\nCached: 300 kB\n", 580},
        {"MemTotal: 1000 kB\nMemFree: 0 kB\nBuffers: 0 kB\nCached: 0 kB\n", 1000},
        /* racy reads: more free than total */
        {"MemTotal: 1000 kB\nMemFree: 900 kB\nBuffers: 200 kB\nCached: 300 kB\n", 0},
        {"MemTotal: 1000 kB\nMemFree: 100 kB\nCached: 300 kB\n", UINT64_MAX},
        {"MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: x kB\nCached: 300 kB\n", UINT64_MAX},
        /* 2^50 kB is the largest value taken; one more cannot be real */
        {"MemTotal: 1125899906842624 kB\nMemFree: 0 kB\nBuffers: 0 kB\nCached: 0 kB\n",
         1125899906842624ull},
        {"MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 20 kB\nCached: 1125899906842625 kB\n",
         UINT64_MAX},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char *root = copy_node("minimal");
        write_file(root, "proc/meminfo", "%s", rows[i].meminfo);
        harness h;
        assert_int_equal(h_open(&h, &pm_source_memory, root, NULL, 0), 0);
        assert_int_equal(h_read(&h), 0);
        assert_false(has(&h, "mem.available"));
        if (rows[i].used_kb == UINT64_MAX) {
            assert_false(has(&h, "mem.used"));
            assert_false(has(&h, "mem.percent"));
        } else {
            assert_int_equal(u64v(&h, "mem.used"), rows[i].used_kb * 1024);
            assert_dbl(f64v(&h, "mem.percent"),
                       100.0 * (double)rows[i].used_kb / (double)(u64v(&h, "mem.total") / 1024),
                       EPS);
        }
        h_close(&h);
        drop_copy(root);
    }
}

static void test_memory_rows(void **state)
{
    (void)state;
    static const struct {
        const char *meminfo;
        int open_rc;
        int read_rc;
        uint64_t avail_kb; /* UINT64_MAX: not recorded */
        uint64_t used_kb;
    } rows[] = {
        {NULL, PM_EIO, 0, 0, 0},
        {"MemFree: 10 kB\n", PM_EIO, 0, 0, 0},
        {"MemTotal: x kB\n", PM_EIO, 0, 0, 0},
        /* available above total (racy reads): used clamps at 0 */
        {"MemTotal: 100 kB\nMemAvailable: 120 kB\n", 0, 0, 120, 0},
        {"MemTotal: 100 kB\nMemAvailable: 0 kB\n", 0, 0, 0, 100},
        {"MemTotal: 100 kB\nMemAvailable: junk\n", 0, 0, UINT64_MAX, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char *root = copy_node("minimal");
        if (rows[i].meminfo) {
            write_file(root, "proc/meminfo", "%s", rows[i].meminfo);
        } else {
            char p[4200];
            snprintf(p, sizeof p, "%s/proc/meminfo", root);
            assert_int_equal(unlink(p), 0);
        }
        harness h;
        assert_int_equal(h_open(&h, &pm_source_memory, root, NULL, 0), rows[i].open_rc);
        if (rows[i].open_rc == 0) {
            assert_int_equal(h_read(&h), rows[i].read_rc);
            if (rows[i].avail_kb == UINT64_MAX) {
                assert_false(has(&h, "mem.available"));
            } else {
                assert_int_equal(u64v(&h, "mem.available"), rows[i].avail_kb * 1024);
                assert_int_equal(u64v(&h, "mem.used"), rows[i].used_kb * 1024);
            }
        }
        h_close(&h);
        drop_copy(root);
    }
}

/* ------------------------------------------------------------------- disk */

static void test_disk_whole_devices_only(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_disk, "hpc-ib-rapl", NULL, 0), 0);
    check_col(&h, "disk.read_bytes", "B", PM_COUNTER, PM_U64, "disk");
    check_col(&h, "disk.busy_time", "s", PM_COUNTER, PM_F64, "disk");
    assert_int_equal(h_read(&h), 0);
    /* sda + nvme0n1 only: partitions sda1 and nvme0n1p1, loop0 and dm-0
     * are not counted.  Sectors are 512 bytes. */
    assert_int_equal(u64v(&h, "disk.read_bytes"), (4000000ull + 8000000ull) * 512);
    assert_int_equal(u64v(&h, "disk.write_bytes"), (1600000ull + 6400000ull) * 512);
    assert_int_equal(u64v(&h, "disk.read_ops"), 50000 + 100000);
    assert_int_equal(u64v(&h, "disk.write_ops"), 20000 + 80000);
    assert_dbl(f64v(&h, "disk.busy_time"), (52000 + 60000) / 1000.0, EPS);
    /* Usage of "/" is real; no output directory was given. */
    double root_pct = f64v(&h, "fs.root.usage_pct");
    assert_true(root_pct >= 0.0 && root_pct <= 100.0);
    assert_false(has(&h, "fs.out.usage_pct"));
    assert_false(has(&h, "fs.out.size"));

    /* describe() lists the whole devices, never loop/dm. */
    pm_buf j;
    pm_buf_init(&j);
    pm_buf_puts(&j, "{");
    pm_source_disk.describe(h.state, &j);
    pm_buf_puts(&j, "}");
    cJSON *o = cJSON_Parse(j.data);
    assert_non_null(o);
    cJSON *disks = cJSON_GetObjectItem(o, "disks");
    assert_true(cJSON_IsArray(disks));
    assert_int_equal(cJSON_GetArraySize(disks), 2);
    int sda = 0, nvme = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, disks) {
        sda += strcmp(e->valuestring, "sda") == 0;
        nvme += strcmp(e->valuestring, "nvme0n1") == 0;
    }
    assert_int_equal(sda, 1);
    assert_int_equal(nvme, 1);
    cJSON_Delete(o);
    pm_buf_free(&j);
    h_close(&h);
}

static void test_disk_out_dir_usage(void **state)
{
    (void)state;
    char *tmp = pm_test_tmpdir();
    assert_non_null(tmp);
    char *out = strdup(tmp);
    char root[4096];
    fixture_root(root, sizeof root, "hpc-ib-rapl");
    harness h;
    assert_int_equal(h_open(&h, &pm_source_disk, root, NULL, 0), 0);
    h.ctx.out_dir = out;
    assert_int_equal(h_read(&h), 0);
    double pct = f64v(&h, "fs.out.usage_pct");
    assert_true(pct >= 0.0 && pct <= 100.0);
    assert_true(u64v(&h, "fs.out.size") > 0);
    assert_true(u64v(&h, "fs.out.used") <= u64v(&h, "fs.out.size"));
    h_close(&h);
    pm_test_rmrf(out);
    free(out);
}

static void test_disk_old_kernel_format(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_disk, "minimal", NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    /* 2.6-era lines: 3 + 11 fields. */
    assert_int_equal(u64v(&h, "disk.read_bytes"), 30000ull * 512);
    assert_int_equal(u64v(&h, "disk.write_bytes"), 5600ull * 512);
    assert_int_equal(u64v(&h, "disk.read_ops"), 1500);
    assert_int_equal(u64v(&h, "disk.write_ops"), 700);
    assert_dbl(f64v(&h, "disk.busy_time"), 1.1, EPS);
    h_close(&h);
}

/* The disks, disks_from and disk_counters members of the metadata. */
static cJSON *disk_meta(const harness *h)
{
    char *js = describe_json(h);
    cJSON *o = cJSON_Parse(js);
    free(js);
    assert_non_null(o);
    return o;
}

static const char *meta_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v))
        fail_msg("metadata: no string %s", key);
    return v->valuestring;
}

static void test_disk_no_sys_block(void **state)
{
    (void)state;
    /* Without /sys/block the whole devices are the names of diskstats
     * that are no partition of another: hda (not hda1), with the numbers
     * of test_disk_old_kernel_format; fs usage stays. */
    char *root = copy_node("minimal");
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/sys/block'", root);
    assert_int_equal(system(cmd), 0);
    harness h;
    assert_int_equal(h_open(&h, &pm_source_disk, root, NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "disk.read_bytes"), 30000ull * 512);
    assert_int_equal(u64v(&h, "disk.write_ops"), 700);
    assert_dbl(f64v(&h, "disk.busy_time"), 1.1, EPS);
    assert_true(has(&h, "fs.root.usage_pct"));
    cJSON *o = disk_meta(&h);
    assert_string_equal(meta_str(o, "disks_from"), "diskstats");
    assert_string_equal(meta_str(o, "disk_counters"), "ok");
    cJSON_Delete(o);
    h_close(&h);

    /* No /sys at all (a captured /proc alone): the same. */
    char proc[4200];
    snprintf(proc, sizeof proc, "%s/proc", root);
    memset(&h, 0, sizeof h);
    assert_int_equal(pm_sctx_open(&h.ctx, proc, "/nonexistent/sys", &h.err), 0);
    pm_schema_init(&h.schema);
    h.src = &pm_source_disk;
    h.open_rc = pm_source_disk.open(&h.ctx, &h.schema, &h.state, &h.err);
    assert_int_equal(h.open_rc, 0);
    assert_int_equal(pm_sample_init(&h.s, h.schema.n), 0);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "disk.read_bytes"), 30000ull * 512);
    h_close(&h);

    /* And no diskstats either: no counters, and the metadata says why
     * rather than "ok" alone. */
    snprintf(cmd, sizeof cmd, "%s/proc/diskstats", root);
    assert_int_equal(unlink(cmd), 0);
    assert_int_equal(h_open(&h, &pm_source_disk, root, NULL, 0), 0);
    assert_int_equal(col(&h, "disk.read_bytes"), -1);
    o = disk_meta(&h);
    assert_non_null(strstr(meta_str(o, "disk_counters"), "diskstats"));
    cJSON_Delete(o);
    h_close(&h);
    drop_copy(root);
}

/* fixtures/nodes/captured: no /sys/block, and every kind of device name.
 * Whole devices by the kernel's naming rule: sda, nvme0n1, mmcblk0,
 * mmcblk0boot0 (its own disk in sysfs), vda, sr0; not their partitions
 * (sda1 sda2 nvme0n1p1 nvme0n1p2 mmcblk0p1 vda1) nor loop0 dm-0 md0 nbd0
 * zram0.  Sums by hand from the file: */
#define CAP_READS (1000 + 2000 + 300 + 10 + 700 + 5)
#define CAP_RSECT (80000 + 160000 + 6000 + 80 + 14000 + 40)
#define CAP_WRITES (500 + 1500 + 100 + 0 + 300 + 0)
#define CAP_WSECT (40000 + 120000 + 2000 + 0 + 9000 + 0)
#define CAP_TICKS_MS (3000 + 4000 + 500 + 20 + 800 + 10)

static void check_captured_disks(const harness *h)
{
    assert_int_equal(u64v(h, "disk.read_ops"), CAP_READS);
    assert_int_equal(u64v(h, "disk.read_bytes"), (uint64_t)CAP_RSECT * 512);
    assert_int_equal(u64v(h, "disk.write_ops"), CAP_WRITES);
    assert_int_equal(u64v(h, "disk.write_bytes"), (uint64_t)CAP_WSECT * 512);
    assert_dbl(f64v(h, "disk.busy_time"), CAP_TICKS_MS / 1000.0, EPS);
}

static void test_disk_captured_tree(void **state)
{
    (void)state;
    static const char *const whole[] = {"mmcblk0", "mmcblk0boot0", "nvme0n1", "sda", "sr0", "vda"};
    enum { NWHOLE = sizeof whole / sizeof *whole };
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_disk, "captured", NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    check_captured_disks(&h);
    cJSON *o = disk_meta(&h);
    assert_string_equal(meta_str(o, "disks_from"), "diskstats");
    cJSON *disks = cJSON_GetObjectItemCaseSensitive(o, "disks");
    assert_int_equal(cJSON_GetArraySize(disks), NWHOLE);
    for (int i = 0; i < NWHOLE; i++)
        assert_string_equal(cJSON_GetArrayItem(disks, i)->valuestring, whole[i]);
    cJSON_Delete(o);
    h_close(&h);

    /* The same tree with the /sys/block the kernel would have shown (the
     * whole devices, loop0 and the other virtual ones): the same sums. */
    char *root = copy_node("captured");
    make_dir(root, "sys/block");
    static const char *const sysblock[] = {"mmcblk0", "mmcblk0boot0", "nvme0n1", "sda",
                                           "sr0",     "vda",          "loop0",   "dm-0",
                                           "md0",     "nbd0",         "zram0"};
    for (size_t i = 0; i < sizeof sysblock / sizeof *sysblock; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "sys/block/%s", sysblock[i]);
        make_dir(root, rel);
    }
    assert_int_equal(h_open(&h, &pm_source_disk, root, NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    check_captured_disks(&h);
    o = disk_meta(&h);
    assert_string_equal(meta_str(o, "disks_from"), "sys/block");
    cJSON_Delete(o);
    h_close(&h);
    drop_copy(root);
}

/* The naming rule on awkward names (no /sys/block). */
static void test_disk_partition_names(void **state)
{
    (void)state;
    static const struct {
        const char *names; /* listed in diskstats, each with 1 read */
        unsigned whole;    /* how many are whole devices */
    } rows[] = {
        {"sda sda1 sda15 sdb sdaa sdaa1", 3},         /* sda sdb sdaa */
        {"nvme0n1 nvme0n10 nvme0n1p1 nvme0n10p2", 2}, /* nvme0n1 nvme0n10 */
        {"sda1 sda2", 2},                             /* partitions of no listed disk */
        {"mmcblk1 mmcblk1p1 mmcblk1boot1 mmcblk1rpmb", 3},
        {"xvda xvda1 hdc hdc3 vdb vdb1 sr0 sr1", 5},
        {"loop0 loop0p1 md127 md127p1 dm-3 ram0 zram0 nbd2 nbd2p1", 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char *root = copy_node("captured");
        char path[4200], buf[512];
        snprintf(path, sizeof path, "%s/proc/diskstats", root);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        snprintf(buf, sizeof buf, "%s", rows[i].names);
        char *save = NULL;
        int minor = 0;
        for (char *n = strtok_r(buf, " ", &save); n; n = strtok_r(NULL, " ", &save))
            fprintf(f, "   8 %4d %s 1 0 8 0 0 0 0 0 0 1 0 0 0 0 0 0 0\n", minor++, n);
        assert_int_equal(fclose(f), 0);
        harness h;
        assert_int_equal(h_open(&h, &pm_source_disk, root, NULL, 0), 0);
        assert_int_equal(h_read(&h), 0);
        if (rows[i].whole == 0) {
            assert_int_equal(col(&h, "disk.read_ops"), -1);
        } else if (u64v(&h, "disk.read_ops") != rows[i].whole) {
            fail_msg("%s: %llu whole devices, expected %u", rows[i].names,
                     (unsigned long long)u64v(&h, "disk.read_ops"), rows[i].whole);
        }
        h_close(&h);
        drop_copy(root);
    }
}

static void test_disk_malformed_lines(void **state)
{
    (void)state;
    char *root = copy_node("minimal");
    harness h;
    assert_int_equal(h_open(&h, &pm_source_disk, root, NULL, 0), 0);
    write_file(root, "proc/diskstats",
               "   3    0 hda 1500 20 30000 400 700 10 5600 900 0 1100\n"  /* too short */
               "   3    0 hda 1500 20 x 400 700 10 5600 900 0 1100 1300\n" /* not a number */
               "   3    0 hda 10 0 80 1 2 0 16 1 0 2000 2\n"               /* good */
               "\n");
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "disk.read_bytes"), 80 * 512);
    assert_int_equal(u64v(&h, "disk.write_ops"), 2);
    assert_dbl(f64v(&h, "disk.busy_time"), 2.0, EPS);
    h_close(&h);
    drop_copy(root);
}

static void test_disk_many_devices(void **state)
{
    (void)state;
    /* A /proc/diskstats beyond 64 KiB (~1500 loop devices of snaps and
     * containers, or hundreds of multipath/NVMe namespaces) is read whole:
     * disk.read_bytes = hda's 30000 sectors * 512, hda being last. */
    char *root = copy_node("minimal");
    char path[4200];
    snprintf(path, sizeof path, "%s/proc/diskstats", root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 1500; i++)
        fprintf(f, "   7 %7d loop%d 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", i, i);
    fprintf(f, "   3       0 hda 1500 20 30000 400 700 10 5600 900 0 1100 1300 0 0 0 0 0 0\n");
    assert_int_equal(fclose(f), 0);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_true(sb.st_size > 65536);
    harness h;
    assert_int_equal(h_open(&h, &pm_source_disk, root, NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "disk.read_bytes"), 30000ull * 512);
    assert_int_equal(u64v(&h, "disk.write_ops"), 700);
    /* Beyond the 4 MiB bound: the counters are left unrecorded, never
     * summed over part of the file; the filesystems are still measured. */
    f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 90000; i++)
        fprintf(f, "   7 %7d loop%d 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", i, i);
    fprintf(f, "   3       0 hda 1500 20 30000 400 700 10 5600 900 0 1100 1300 0 0 0 0 0 0\n");
    assert_int_equal(fclose(f), 0);
    assert_int_equal(stat(path, &sb), 0);
    assert_true(sb.st_size > (4 << 20));
    h.ctx.now_mono_ns += 2 * PM_RARE_NS; /* file system usage: once a second */
    assert_int_equal(h_read(&h), 0);
    assert_false(has(&h, "disk.read_bytes"));
    assert_false(has(&h, "disk.busy_time"));
    assert_true(has(&h, "fs.root.usage_pct"));
    h_close(&h);
    drop_copy(root);
}

static void test_disk_many_whole_devices(void **state)
{
    (void)state;
    /* A multipath host lists every path of every LUN as a whole device:
     * 600 of them in /sys/block, all counted (the list once stopped at
     * 256). */
    char *root = copy_node("minimal");
    char path[4200];
    snprintf(path, sizeof path, "%s/proc/diskstats", root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 600; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "sys/block/sd%03d", i);
        make_dir(root, rel);
        fprintf(f, "   8 %7d sd%03d 1 0 2 0 3 0 4 0 0 5 0\n", i * 16, i);
        fprintf(f, "   8 %7d sd%03d1 1 0 2 0 3 0 4 0 0 5 0\n", i * 16 + 1, i); /* partition */
    }
    assert_int_equal(fclose(f), 0);
    harness h;
    assert_int_equal(h_open(&h, &pm_source_disk, root, NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "disk.read_ops"), 600);
    assert_int_equal(u64v(&h, "disk.read_bytes"), 600ull * 2 * 512);
    assert_int_equal(u64v(&h, "disk.write_ops"), 600 * 3);
    assert_dbl(f64v(&h, "disk.busy_time"), 600 * 5 / 1000.0, EPS);
    h_close(&h);
    drop_copy(root);
}

/* -------------------------------------------------------------------- net */

static void test_net_lo_ext_split(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_net, "hpc-ib-rapl", NULL, 0), 0);
    check_col(&h, "net.ext.bytes_recv", "B", PM_COUNTER, PM_U64, "net");
    check_col(&h, "net.lo.packets_sent", "1", PM_COUNTER, PM_U64, "net");
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "net.lo.bytes_recv"), 123456789);
    assert_int_equal(u64v(&h, "net.lo.bytes_sent"), 123456789);
    assert_int_equal(u64v(&h, "net.lo.packets_recv"), 234567);
    assert_int_equal(u64v(&h, "net.lo.packets_sent"), 234567);
    /* eth0 + ib0 */
    assert_int_equal(u64v(&h, "net.ext.bytes_recv"), 9876543210ull + 5555555555ull);
    assert_int_equal(u64v(&h, "net.ext.bytes_sent"), 1234567890ull + 6666666666ull);
    assert_int_equal(u64v(&h, "net.ext.packets_recv"), 7654321 + 4444444);
    assert_int_equal(u64v(&h, "net.ext.packets_sent"), 2345678 + 3333333);
    assert_int_equal(u64v(&h, "net.ext.errors"), 3 + 1);
    assert_int_equal(u64v(&h, "net.ext.drops"), 5 + 2 + 7);
    h_close(&h);
}

static void test_net_no_space_after_colon(void **state)
{
    (void)state;
    /* Old kernels print "eth0:21007604" when the counter fills the column. */
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_net, "minimal", NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "net.ext.bytes_recv"), 21007604);
    assert_int_equal(u64v(&h, "net.ext.bytes_sent"), 45700);
    assert_int_equal(u64v(&h, "net.lo.bytes_recv"), 3267);
    h_close(&h);
}

static void test_net_rows(void **state)
{
    (void)state;
    static const char hdr[] =
        "Inter-|   Receive                                                |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes    "
        "packets errs drop fifo colls carrier compressed\n";
    static const struct {
        const char *body;
        int read_rc;
        uint64_t ext_recv, lo_recv;
    } rows[] = {
        /* only the header: all zero */
        {"", 0, 0, 0},
        /* short line and junk ignored */
        {"  eth0: 1 2 3\n  eth1: 5 0 0 0 0 0 0 0 6 0 0 0 0 0 0 0\n"
         "  eth2: x 0 0 0 0 0 0 0 6 0 0 0 0 0 0 0\n",
         0, 5, 0},
        /* a loopback-like name that is not "lo" counts as external */
        {"  lo0: 7 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n    lo: 9 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", 0, 7,
         9},
        /* counters near 2^64 */
        {"  eth0: 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", 0, 18446744073709551615ull,
         0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char *root = copy_node("minimal");
        harness h;
        assert_int_equal(h_open(&h, &pm_source_net, root, NULL, 0), 0);
        write_file(root, "proc/net/dev", "%s%s", hdr, rows[i].body);
        assert_int_equal(h_read(&h), rows[i].read_rc);
        assert_int_equal(u64v(&h, "net.ext.bytes_recv"), rows[i].ext_recv);
        assert_int_equal(u64v(&h, "net.lo.bytes_recv"), rows[i].lo_recv);
        h_close(&h);
        drop_copy(root);
    }
}

static void test_net_many_interfaces(void **state)
{
    (void)state;
    /* A container host with ~500 veth interfaces has a /proc/net/dev
     * larger than 64 KiB: it is read whole, the counters summed over every
     * interface. */
    char *root = copy_node("minimal");
    char path[4200];
    snprintf(path, sizeof path, "%s/proc/net/dev", root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("Inter-|   Receive                                                |  Transmit\n"
          " face |bytes    packets errs drop fifo frame compressed multicast|bytes    "
          "packets errs drop fifo colls carrier compressed\n",
          f);
    fputs("    lo:    3267      29    0    0    0     0          0         0     3267      29"
          "    0    0    0     0       0          0\n",
          f);
    for (int i = 0; i < 600; i++)
        fprintf(f,
                "veth%05x:    1000      10    0    0    0     0          0         0     2000"
                "      20    0    0    0     0       0          0\n",
                i);
    assert_int_equal(fclose(f), 0);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_true(sb.st_size > 65536);
    harness h;
    assert_int_equal(h_open(&h, &pm_source_net, root, NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "net.ext.bytes_recv"), 600 * 1000);
    assert_int_equal(u64v(&h, "net.ext.bytes_sent"), 600 * 2000);
    assert_int_equal(u64v(&h, "net.lo.bytes_recv"), 3267);
    /* Beyond the 4 MiB bound: nothing recorded rather than part of a sum. */
    f = fopen(path, "a");
    assert_non_null(f);
    for (int i = 600; i < 40000; i++)
        fprintf(f,
                "veth%05x:    1000      10    0    0    0     0          0         0     2000"
                "      20    0    0    0     0       0          0\n",
                i);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(stat(path, &sb), 0);
    assert_true(sb.st_size > (4 << 20));
    assert_true(h_read(&h) < 0);
    assert_false(has(&h, "net.ext.bytes_recv"));
    assert_false(has(&h, "net.lo.bytes_recv"));
    h_close(&h);
    drop_copy(root);
}

static void test_net_absent(void **state)
{
    (void)state;
    char *root = copy_node("minimal");
    char p[4200];
    snprintf(p, sizeof p, "%s/proc/net/dev", root);
    assert_int_equal(unlink(p), 0);
    harness h;
    assert_int_equal(h_open(&h, &pm_source_net, root, NULL, 0), PM_ENOENT);
    assert_int_equal(h.schema.n, 0);
    h_close(&h);
    drop_copy(root);
}

/* ----------------------------------------------------- impossible values */

/* Notes through pm_log: how many, and the last one. */
static int n_notes;
static char last_note[1024];

static void count_notes(int level, const char *msg, void *user)
{
    (void)user;
    if (level <= PM_LOG_WARN) {
        n_notes++;
        snprintf(last_note, sizeof last_note, "%s", msg);
    }
}

/* Open src on fixtures/nodes/impossible (or a copy), read it twice and
 * return the notes of both reads, which must be the notes of the first:
 * each impossible value is noted once. */
static int read_twice(harness *h, const pm_source *src, const char *root)
{
    n_notes = 0;
    pm_log_set_sink(count_notes, NULL, PM_LOG_WARN);
    assert_int_equal(h_open(h, src, root, NULL, 0), 0);
    assert_int_equal(h_read(h), 0);
    int first = n_notes;
    assert_int_equal(h_read(h), 0);
    assert_int_equal(n_notes, first);
    pm_log_set_sink(NULL, NULL, PM_LOG_WARN);
    return first;
}

static void test_impossible_memory(void **state)
{
    (void)state;
    /* MemAvailable 2^50+1 kB and Cached 2^64-1 kB cannot be real: they,
     * and used and percent (which need MemAvailable), are not recorded;
     * the rest is, exactly as in the file. */
    char root[4096];
    fixture_root(root, sizeof root, "impossible");
    harness h;
    assert_int_equal(read_twice(&h, &pm_source_memory, root), 2);
    assert_non_null(strstr(last_note, "Cached 18446744073709551615 kB"));
    assert_int_equal(u64v(&h, "mem.total"), 16384000ull * 1024);
    assert_false(has(&h, "mem.available"));
    assert_false(has(&h, "mem.used"));
    assert_false(has(&h, "mem.percent"));
    assert_false(has(&h, "mem.cached"));
    assert_int_equal(u64v(&h, "mem.free"), 8000000ull * 1024);
    assert_int_equal(u64v(&h, "mem.buffers"), 200000ull * 1024);
    assert_int_equal(u64v(&h, "mem.shared"), 50000ull * 1024);
    assert_int_equal(u64v(&h, "swap.used"), 1000000ull * 1024);
    assert_dbl(f64v(&h, "swap.percent"), 50.0, EPS);
    h_close(&h);
}

static void test_impossible_cpu(void **state)
{
    (void)state;
    /* The node line's system field is 2^63-1 ticks, cpu1's user 2^64-1,
     * ctxt 2^64-1, procs_running 5000000 (above PID_MAX_LIMIT), load.1
     * 99999999: not recorded.  The rest is, as in the file (USER_HZ 100). */
    char *root = copy_node("impossible");
    harness h;
    assert_int_equal(read_twice(&h, &pm_source_cpu, root), 4);
    assert_dbl(f64v(&h, "cpu.user"), 40.0, EPS);
    assert_false(has(&h, "cpu.system"));
    assert_dbl(f64v(&h, "cpu.idle"), 1000.0, EPS);
    assert_false(has(&h, "cpu.percent"));
    assert_int_equal(u64v(&h, "cpu.ncpus"), 2);
    assert_false(has(&h, "cpu.ctxt"));
    assert_int_equal(u64v(&h, "cpu.forks"), 3000);
    assert_false(has(&h, "procs.running"));
    assert_int_equal(u64v(&h, "procs.blocked"), 0);
    assert_false(has(&h, "load.1"));
    assert_dbl(f64v(&h, "load.5"), 0.5, EPS);
    assert_dbl(f64v(&h, "load.15"), 0.25, EPS);
    /* Sound values again: everything is recorded, and the percentages
     * come back from the next interval on: node 50 busy ticks of 100,
     * cpu0 20 of 50, cpu1 30 of 50. */
    write_file(root, "proc/stat",
               "cpu  4000 0 2000 100000 0 0 0 0 0 0\n"
               "cpu0 2000 0 1000 50000 0 0 0 0 0 0\n"
               "cpu1 2000 0 1000 50000 0 0 0 0 0 0\n"
               "ctxt 7000\nprocesses 3000\nprocs_running 3\nprocs_blocked 0\n");
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "cpu.system"), 20.0, EPS);
    assert_int_equal(u64v(&h, "cpu.ctxt"), 7000);
    assert_int_equal(u64v(&h, "procs.running"), 3);
    assert_false(has(&h, "cpu.percent"));
    write_file(root, "proc/stat",
               "cpu  4030 0 2020 100050 0 0 0 0 0 0\n"
               "cpu0 2010 0 1010 50030 0 0 0 0 0 0\n"
               "cpu1 2020 0 1010 50020 0 0 0 0 0 0\n"
               "ctxt 7100\nprocesses 3001\nprocs_running 2\nprocs_blocked 0\n");
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "cpu.percent"), 50.0, EPS);
    assert_dbl(f64v(&h, "cpu.core_min_pct"), 40.0, EPS);
    assert_dbl(f64v(&h, "cpu.core_max_pct"), 60.0, EPS);
    h_close(&h);
    drop_copy(root);
}

static void test_impossible_disk(void **state)
{
    (void)state;
    /* sdb claims 2^60 sectors read (512 EiB): the sample's disk counters
     * are not recorded (a sum without sdb would look like a reset). */
    char *root = copy_node("impossible");
    harness h;
    assert_int_equal(read_twice(&h, &pm_source_disk, root), 1);
    assert_non_null(strstr(last_note, "sdb"));
    assert_false(has(&h, "disk.read_bytes"));
    assert_false(has(&h, "disk.write_bytes"));
    assert_false(has(&h, "disk.read_ops"));
    assert_false(has(&h, "disk.busy_time"));
    assert_false(has(&h, "fs.root.usage_pct")); /* read at most once a second */
    h.ctx.now_mono_ns += 2 * PM_RARE_NS;
    assert_int_equal(h_read(&h), 0);
    assert_false(has(&h, "disk.read_bytes"));
    assert_true(has(&h, "fs.root.usage_pct"));
    /* 2^54 sectors is still taken; sums are then recorded again. */
    write_file(root, "proc/diskstats",
               "   8 0 sda 1000 0 80000 700 500 0 40000 600 0 3000 1300 0 0 0 0 0 0\n"
               "   8 16 sdb 2000 0 18014398509481984 700 500 0 40000 600 0 3000 1300 0 0 0 0 0"
               " 0\n");
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "disk.read_bytes"), (80000ull + (1ull << 54)) * 512);
    assert_int_equal(u64v(&h, "disk.read_ops"), 3000);
    h_close(&h);
    drop_copy(root);
}

static void test_impossible_net(void **state)
{
    (void)state;
    /* eth0 + ib0 received bytes pass 2^64: that sum is not recorded; the
     * other sums are the file's: sent 2000000 + 3000000, packets received
     * 5000 + 20, sent 4000 + 6000, errors 1, drops 2. */
    char root[4096];
    fixture_root(root, sizeof root, "impossible");
    harness h;
    assert_int_equal(read_twice(&h, &pm_source_net, root), 1);
    assert_false(has(&h, "net.ext.bytes_recv"));
    assert_int_equal(u64v(&h, "net.ext.bytes_sent"), 5000000);
    assert_int_equal(u64v(&h, "net.ext.packets_recv"), 5020);
    assert_int_equal(u64v(&h, "net.ext.packets_sent"), 10000);
    assert_int_equal(u64v(&h, "net.ext.errors"), 1);
    assert_int_equal(u64v(&h, "net.ext.drops"), 2);
    assert_int_equal(u64v(&h, "net.lo.bytes_recv"), 1000);
    h_close(&h);
}

static void test_impossible_ib_rapl(void **state)
{
    (void)state;
    /* Port 1's port_xmit_data is 2^62 + 1 words: 4 x that passes 2^64
     * bytes, so ib.bytes_sent is not recorded; the rest is the file's, x 4
     * for data.  package-0's energy_uj is one above its
     * max_energy_range_uj, where the counter wraps: not recorded; dram-0
     * is. */
    char root[4096];
    fixture_root(root, sizeof root, "impossible");
    harness h;
    assert_int_equal(read_twice(&h, &pm_source_infiniband, root), 1);
    assert_non_null(strstr(last_note, "port_xmit_data"));
    assert_false(has(&h, "ib.bytes_sent"));
    assert_int_equal(u64v(&h, "ib.bytes_recv"), 4 * (3000000000ull + 500000000ull));
    assert_int_equal(u64v(&h, "ib.packets_sent"), 50000000 + 7000000);
    assert_int_equal(u64v(&h, "ib.packets_recv"), 40000000 + 6000000);
    h_close(&h);
    assert_int_equal(read_twice(&h, &pm_source_rapl, root), 1);
    assert_non_null(strstr(last_note, "intel-rapl:0/energy_uj: 262143328851"));
    assert_false(has(&h, "rapl.package-0"));
    assert_int_equal(u64v(&h, "rapl.dram-0"), 23456789012ull);
    h_close(&h);
    /* At the range itself the reading is taken. */
    char *copy = copy_node("impossible");
    write_file(copy, "sys/class/powercap/intel-rapl:0/energy_uj", "262143328850\n");
    assert_int_equal(read_twice(&h, &pm_source_rapl, copy), 0);
    assert_int_equal(u64v(&h, "rapl.package-0"), 262143328850ull);
    h_close(&h);
    drop_copy(copy);
}

/* ------------------------------------------------------------- infiniband */

static void test_ib_ports_summed_times_four(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_infiniband, "hpc-ib-rapl", NULL, 0), 0);
    check_col(&h, "ib.bytes_sent", "B", PM_COUNTER, PM_U64, "ib");
    check_col(&h, "ib.packets_recv", "1", PM_COUNTER, PM_U64, "ib");
    assert_int_equal(h_read(&h), 0);
    /* port_*_data count 4-byte words (IBA 14.2.5.6). */
    assert_int_equal(u64v(&h, "ib.bytes_sent"), 4 * (4000000000ull + 1000000000ull));
    assert_int_equal(u64v(&h, "ib.bytes_recv"), 4 * (3000000000ull + 500000000ull));
    assert_int_equal(u64v(&h, "ib.packets_sent"), 50000000 + 7000000);
    assert_int_equal(u64v(&h, "ib.packets_recv"), 40000000 + 6000000);
    /* The error counters: port 2's symbol_error is stuck at its 16-bit
     * maximum, so one port is saturated. */
    check_col(&h, "ib.symbol_errors", "1", PM_COUNTER, PM_U64, "events");
    check_col(&h, "ib.saturated", "1", PM_GAUGE, PM_U64, "events");
    assert_int_equal(u64v(&h, "ib.symbol_errors"), 12 + 65535);
    assert_int_equal(u64v(&h, "ib.link_downed"), 1);
    assert_int_equal(u64v(&h, "ib.rcv_errors"), 3 + 7);
    assert_int_equal(u64v(&h, "ib.saturated"), 1);

    pm_buf j;
    pm_buf_init(&j);
    pm_buf_puts(&j, "{");
    pm_source_infiniband.describe(h.state, &j);
    pm_buf_puts(&j, "}");
    cJSON *o = cJSON_Parse(j.data);
    assert_non_null(o);
    cJSON *ports = cJSON_GetObjectItem(o, "infiniband_ports");
    assert_int_equal(cJSON_GetArraySize(ports), 2);
    int mask = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, ports) {
        assert_string_equal(cJSON_GetObjectItem(e, "device")->valuestring, "mlx5_0");
        mask |= 1 << (int)cJSON_GetObjectItem(e, "port")->valuedouble;
    }
    assert_int_equal(mask, (1 << 1) | (1 << 2));
    cJSON_Delete(o);
    pm_buf_free(&j);
    h_close(&h);
}

static void test_ib_counter_changes_and_vanishes(void **state)
{
    (void)state;
    char *root = copy_node("hpc-ib-rapl");
    harness h;
    assert_int_equal(h_open(&h, &pm_source_infiniband, root, NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    write_file(root, "sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data", "4000000100\n");
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "ib.bytes_sent"), 4 * (4000000100ull + 1000000000ull));
    /* A counter that cannot be parsed is skipped; the other port still
     * counts (the analyzer sees a drop and treats it as a reset). */
    write_file(root, "sys/class/infiniband/mlx5_0/ports/2/counters/port_rcv_data", "garbage\n");
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "ib.bytes_recv"), 4 * 3000000000ull);
    /* Port 1's link_downed reaches its 8-bit maximum: two ports stuck;
     * port 2's symbol_error cleared (perfquery -R): one again. */
    write_file(root, "sys/class/infiniband/mlx5_0/ports/1/counters/link_downed", "255\n");
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "ib.saturated"), 2);
    assert_int_equal(u64v(&h, "ib.link_downed"), 255);
    write_file(root, "sys/class/infiniband/mlx5_0/ports/2/counters/symbol_error", "0\n");
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "ib.saturated"), 1);
    assert_int_equal(u64v(&h, "ib.symbol_errors"), 12);
    h_close(&h);
    /* Ports without error counters (the impossible tree's): no columns. */
    char imp[4096];
    fixture_root(imp, sizeof imp, "impossible");
    assert_int_equal(h_open(&h, &pm_source_infiniband, imp, NULL, 0), 0);
    assert_int_equal(col(&h, "ib.symbol_errors"), -1);
    assert_int_equal(col(&h, "ib.saturated"), -1);
    assert_int_equal(h.schema.n, 4);
    h_close(&h);
    drop_copy(root);
}

static void test_ib_absent(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_infiniband, "minimal", NULL, 0), PM_ENOENT);
    assert_true(h.err.msg[0] != '\0');
    assert_int_equal(h.schema.n, 0);
    h_close(&h);

    /* A device without readable port counters is absent too. */
    char *root = copy_node("minimal");
    make_dir(root, "sys/class");
    make_dir(root, "sys/class/infiniband");
    make_dir(root, "sys/class/infiniband/mlx4_0");
    make_dir(root, "sys/class/infiniband/mlx4_0/ports");
    make_dir(root, "sys/class/infiniband/mlx4_0/ports/1");
    assert_int_equal(h_open(&h, &pm_source_infiniband, root, NULL, 0), PM_ENOENT);
    assert_int_equal(h.schema.n, 0);
    h_close(&h);
    drop_copy(root);
}

/* ------------------------------------------------------------------- rapl */

static void test_rapl_domains(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_rapl, "hpc-ib-rapl", NULL, 0), 0);
    static const struct {
        const char *col;
        uint64_t energy, wrap;
    } rows[] = {
        {"rapl.package-0", 123456789012ull, 262143328850ull + 1},
        {"rapl.dram-0", 23456789012ull, 65712999613ull + 1},
        {"rapl.package-1", 98765432109ull, 262143328850ull + 1},
        {"rapl.dram-1", 3456789ull, 65712999613ull + 1},
    };
    assert_int_equal(h.schema.n, 4);
    assert_int_equal(h_read(&h), 0);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int c = col(&h, rows[i].col);
        if (c < 0)
            fail_msg("no column %s", rows[i].col);
        check_col(&h, rows[i].col, "uJ", PM_COUNTER, PM_U64, "rapl");
        assert_int_equal(h.schema.cols[c].wrap, rows[i].wrap);
        assert_int_equal(u64v(&h, rows[i].col), rows[i].energy);
    }
    /* Columns come in zone order: intel-rapl:0, :0:0, :1, :1:0. */
    assert_string_equal(h.schema.cols[0].name, "rapl.package-0");
    assert_string_equal(h.schema.cols[1].name, "rapl.dram-0");
    assert_string_equal(h.schema.cols[2].name, "rapl.package-1");
    assert_string_equal(h.schema.cols[3].name, "rapl.dram-1");

    pm_buf j;
    pm_buf_init(&j);
    pm_buf_puts(&j, "{");
    pm_source_rapl.describe(h.state, &j);
    pm_buf_puts(&j, "}");
    cJSON *o = cJSON_Parse(j.data);
    assert_non_null(o);
    cJSON *d = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "rapl_domains"), 1);
    assert_string_equal(cJSON_GetObjectItem(d, "name")->valuestring, "dram-0");
    assert_string_equal(cJSON_GetObjectItem(d, "zone")->valuestring, "intel-rapl:0:0");
    assert_dbl(cJSON_GetObjectItem(d, "max_energy_range_uj")->valuedouble, 65712999613.0, 0.5);
    cJSON_Delete(o);
    pm_buf_free(&j);
    h_close(&h);
}

static void test_rapl_wrap_recorded_raw(void **state)
{
    (void)state;
    /* The sampler records raw energy; the wrap (max_energy_range_uj + 1)
     * is the column's modulus and the analyzer unwraps. */
    char *root = copy_node("hpc-ib-rapl");
    harness h;
    assert_int_equal(h_open(&h, &pm_source_rapl, root, NULL, 0), 0);
    write_file(root, "sys/class/powercap/intel-rapl:0/energy_uj", "262143328850\n");
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "rapl.package-0"), 262143328850ull);
    write_file(root, "sys/class/powercap/intel-rapl:0/energy_uj", "1000\n");
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "rapl.package-0"), 1000);
    /* An unreadable value leaves the column unrecorded, the others stay. */
    write_file(root, "sys/class/powercap/intel-rapl:0/energy_uj", "\n");
    assert_int_equal(h_read(&h), 0);
    assert_false(has(&h, "rapl.package-0"));
    assert_true(has(&h, "rapl.dram-0"));
    h_close(&h);
    drop_copy(root);
}

static void test_rapl_duplicate_and_psys(void **state)
{
    (void)state;
    char *root = copy_node("hpc-ib-rapl");
    /* A second "dram" zone under package 0 (unusual firmware) and a psys
     * zone; an "intel-rapl" control-type directory is not a zone. */
    make_dir(root, "sys/class/powercap/intel-rapl:0:1");
    write_file(root, "sys/class/powercap/intel-rapl:0:1/name", "dram\n");
    write_file(root, "sys/class/powercap/intel-rapl:0:1/energy_uj", "77\n");
    write_file(root, "sys/class/powercap/intel-rapl:0:1/max_energy_range_uj", "65712999613\n");
    make_dir(root, "sys/class/powercap/intel-rapl:2");
    write_file(root, "sys/class/powercap/intel-rapl:2/name", "psys\n");
    write_file(root, "sys/class/powercap/intel-rapl:2/energy_uj", "5\n");
    write_file(root, "sys/class/powercap/intel-rapl:2/max_energy_range_uj", "262143328850\n");
    /* a zone without max_energy_range_uj is skipped */
    make_dir(root, "sys/class/powercap/intel-rapl:3");
    write_file(root, "sys/class/powercap/intel-rapl:3/name", "package-3\n");
    write_file(root, "sys/class/powercap/intel-rapl:3/energy_uj", "5\n");
    harness h;
    assert_int_equal(h_open(&h, &pm_source_rapl, root, NULL, 0), 0);
    assert_int_equal(h.schema.n, 6);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "rapl.dram-0"), 23456789012ull);
    assert_int_equal(u64v(&h, "rapl.intel-rapl:0:1"), 77);
    assert_int_equal(u64v(&h, "rapl.psys"), 5);
    assert_int_equal(col(&h, "rapl.package-3"), -1);
    h_close(&h);
    drop_copy(root);
}

static void test_rapl_absent(void **state)
{
    (void)state;
    harness h;
    assert_int_equal(h_open_node(&h, &pm_source_rapl, "minimal", NULL, 0), PM_ENOENT);
    assert_true(h.err.msg[0] != '\0');
    assert_int_equal(h.schema.n, 0);
    h_close(&h);

    /* powercap present but no intel-rapl zone (e.g. only dtpm) */
    char *root = copy_node("minimal");
    make_dir(root, "sys/class");
    make_dir(root, "sys/class/powercap");
    make_dir(root, "sys/class/powercap/dtpm");
    assert_int_equal(h_open(&h, &pm_source_rapl, root, NULL, 0), PM_ENOENT);
    assert_non_null(strstr(h.err.msg, "no RAPL domains"));
    h_close(&h);
    drop_copy(root);
}

/* ---------------------------------------------------------- process tree */

static void test_proctree_tree_of_100(void **state)
{
    (void)state;
    harness h;
    const pid_t roots[] = {100};
    assert_int_equal(h_open_node(&h, &pm_source_proctree, "hpc-ib-rapl", roots, 1), 0);
    check_col(&h, "proc.count", "1", PM_GAUGE, PM_U64, "proc");
    check_col(&h, "proc.cpu_time", "s", PM_COUNTER, PM_F64, "proc");
    check_col(&h, "proc.read_bytes", "B", PM_COUNTER, PM_U64, "proc");
    assert_int_equal(h_read(&h), 0);
    /* 100, 101, 102 and grandchild 103; not 200, 1234, nor 1235 whose
     * name "x) S 100 (y" imitates a child of 100. */
    assert_int_equal(u64v(&h, "proc.count"), 4);
    assert_int_equal(u64v(&h, "proc.threads"), 1 + 8 + 8 + 2);
    /* utime+stime+cutime+cstime: 85 + 10500 + 9400 + 400 ticks */
    assert_dbl(f64v(&h, "proc.cpu_time"), 203.85, EPS);
    assert_int_equal(u64v(&h, "proc.rss"), (1000ull + 250000 + 260000 + 5000) * 4096);
    assert_int_equal(u64v(&h, "proc.vms"), 12000000ull + 2000000000 + 2100000000 + 50000000);
    assert_int_equal(u64v(&h, "proc.shared"), (800ull + 20000 + 21000 + 1500) * 4096);
    assert_int_equal(u64v(&h, "proc.pss"), (2000ull + 950000 + 990000 + 15000) * 1024);
    assert_int_equal(u64v(&h, "proc.uss"),
                     (100ull + 900 + 1000 + 900000 + 1100 + 940000 + 200 + 14000) * 1024);
    assert_int_equal(u64v(&h, "proc.swap"), (512ull + 256) * 1024);
    assert_int_equal(u64v(&h, "proc.read_bytes"), 4096ull + 1048576000 + 2097152000 + 0);
    assert_int_equal(u64v(&h, "proc.write_bytes"), 8192ull + 524288000 + 262144000 + 4096);
    assert_dbl(f64v(&h, "proc.mem_percent"), 100.0 * (516000.0 * 4096) / (196608000.0 * 1024), EPS);
    /* fd/ of 100 holds 5 symlinks, of 101 3 (102 and 103 have none).  A
     * copied directory's size is its block size (4096), not a count as on
     * procfs since Linux 6.2: the links are counted. */
    assert_int_equal(u64v(&h, "proc.fds"), 5 + 3);
    /* First sample: no rate. */
    assert_false(has(&h, "proc.cpu_percent"));
    h_close(&h);
}

static void test_proctree_odd_comm(void **state)
{
    (void)state;
    harness h;
    const pid_t roots[] = {1234}; /* "1234 (my (odd) prog) S 1 ..." */
    assert_int_equal(h_open_node(&h, &pm_source_proctree, "hpc-ib-rapl", roots, 1), 0);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 1);
    assert_int_equal(u64v(&h, "proc.threads"), 3);
    assert_dbl(f64v(&h, "proc.cpu_time"), (777 + 333 + 11 + 22) / 100.0, EPS);
    assert_int_equal(u64v(&h, "proc.vms"), 123456789);
    assert_int_equal(u64v(&h, "proc.rss"), 4321ull * 4096);
    assert_int_equal(u64v(&h, "proc.shared"), 1234ull * 4096);
    h_close(&h);

    /* Several roots: both trees, each process once. */
    const pid_t two[] = {1234, 102, 103};
    assert_int_equal(h_open_node(&h, &pm_source_proctree, "hpc-ib-rapl", two, 3), 0);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 3);
    assert_int_equal(u64v(&h, "proc.threads"), 3 + 8 + 2);
    h_close(&h);
}

static void test_proctree_cpu_percent_and_churn(void **state)
{
    (void)state;
    char *root = copy_node("hpc-ib-rapl");
    harness h;
    const pid_t roots[] = {100};
    assert_int_equal(h_open(&h, &pm_source_proctree, root, roots, 1), 0);
    h.ctx.now_mono_ns = 1000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), 203.85, EPS);

    /* One second later 101 used 30 more ticks of user time and 103 20 of
     * system time: 0.5 s of CPU in 1 s = 50 %.  No process was created
     * (loadavg's last pid is unchanged), so /proc is not listed again. */
    write_stat(root, 101, "mpi_rank", 100, 10030, 500, 0, 0, 8, 2000000000, 250000);
    write_stat(root, 103, "helper", 102, 300, 120, 0, 0, 2, 50000000, 5000);
    h.ctx.now_mono_ns = 2000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 4);
    assert_dbl(f64v(&h, "proc.cpu_time"), 204.35, EPS);
    assert_dbl(f64v(&h, "proc.cpu_percent"), 50.0, 1e-6);

    /* 103 exits; 101 forks 104 (a new last pid in loadavg), which runs as
     * 103 did.  Counting stays exact across the churn. */
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/103' && cp -r '%s/proc/102' '%s/proc/104'", root,
             root, root);
    assert_int_equal(system(cmd), 0);
    write_stat(root, 104, "helper", 101, 10, 10, 0, 0, 4, 50000000, 7000);
    write_file(root, "proc/loadavg", "12.50 11.75 10.02 9/1234 1236\n");
    h.ctx.now_mono_ns = 3000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 4);
    assert_int_equal(u64v(&h, "proc.threads"), 1 + 8 + 8 + 4);
    assert_int_equal(u64v(&h, "proc.rss"), (1000ull + 250000 + 260000 + 7000) * 4096);
    /* 103 left with 420 ticks that its parent 102's cutime + cstime did
     * not take (it did not reap it): they stay in the counter as departed,
     * and 104 brought 20: 0.2 s in 1 s. */
    assert_dbl(f64v(&h, "proc.cpu_time"), (20435.0 + 20) / 100.0, EPS);
    assert_dbl(f64v(&h, "proc.cpu_percent"), 20.0, 1e-6);

    /* The whole tree exits: only the count is recorded, as 0. */
    snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/100' '%s/proc/101' '%s/proc/102' '%s/proc/104'",
             root, root, root, root);
    assert_int_equal(system(cmd), 0);
    write_file(root, "proc/loadavg", "12.50 11.75 10.02 9/1234 1237\n");
    h.ctx.now_mono_ns = 4000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 0);
    assert_false(has(&h, "proc.rss"));
    assert_false(has(&h, "proc.cpu_time"));
    h_close(&h);
    drop_copy(root);
}

/* A process with a stat line and a command line (argv joined by NULs). */
static void fake_proc(const char *root, int pid, const char *comm, int ppid, const char *cmdline)
{
    char rel[64];
    snprintf(rel, sizeof rel, "proc/%d", pid);
    make_dir(root, rel);
    write_stat(root, pid, comm, ppid, 100, 50, 0, 0, 1, 1000000, 100);
    snprintf(rel, sizeof rel, "proc/%d/cmdline", pid);
    write_file(root, rel, "%s", cmdline);
}

/* In SLURM job 77 with no roots: the children of the job's slurmstepd
 * processes and their descendants, except under the sampler's own step
 * (0); not another job's; the step daemons themselves are not counted; a
 * slurmstepd without its title yet is looked at again. */
static void test_proctree_slurm_steps(void **state)
{
    (void)state;
    char *root = copy_node("hpc-ib-rapl");
    fake_proc(root, 500, "slurmstepd", 1, "slurmstepd: [77.batch]");
    fake_proc(root, 501, "slurm_script", 500, "/bin/sh");
    fake_proc(root, 510, "slurmstepd", 1, "slurmstepd: [77.0]");
    fake_proc(root, 511, "perfmon-sample", 510, "perfmon-sample");
    fake_proc(root, 520, "slurmstepd", 1, "slurmstepd: [77.1]");
    fake_proc(root, 521, "solver", 520, "./solver");
    fake_proc(root, 522, "solver", 521, "./solver");
    fake_proc(root, 530, "slurmstepd", 1, "slurmstepd: [778.0]");
    fake_proc(root, 531, "other", 530, "other");
    fake_proc(root, 540, "slurmstepd", 1, "/usr/sbin/slurmstepd");
    fake_proc(root, 550, "slurmstepd", 1, "slurmstepd: [77.garbage");
    fake_proc(root, 551, "x", 550, "x");
    fake_proc(root, 560, "(slurmstepd)", 1, "slurmstepd: [77.3]"); /* comm differs */
    fake_proc(root, 561, "y", 560, "y");
    h_slurm_job = "77";
    h_slurm_step = "0";
    harness h;
    assert_int_equal(h_open(&h, &pm_source_proctree, root, NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 3); /* 501, 521, 522 */
    assert_int_equal(u64v(&h, "proc.rss"), 3 * 100 * 4096ull);
    /* 540 takes its title and starts a task: no new listing is needed to
     * look at 540 again, but the task is a new pid. */
    write_file(root, "proc/540/cmdline", "slurmstepd: [77.2]");
    fake_proc(root, 541, "task", 540, "task");
    write_file(root, "proc/loadavg", "12.50 11.75 10.02 9/1234 1236\n");
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 4);
    h_close(&h);

    /* Without an own step (the batch step runs the sampler): every step. */
    h_slurm_step = NULL;
    assert_int_equal(h_open(&h, &pm_source_proctree, root, NULL, 0), 0);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 5); /* and 511 */
    h_close(&h);
    h_slurm_job = NULL;
    drop_copy(root);
}

static void test_proctree_low_pids_and_big_tree(void **state)
{
    (void)state;
    /* After pid wrap-around a child can have a smaller pid than its
     * parent: 50 (child of 101) and 60 (child of 50).  And 300 more
     * children of 102, beyond the 256 members whose descriptors are kept
     * open: the rest are read by path, and counted all the same. */
    char *root = copy_node("hpc-ib-rapl");
    char rel[64];
    snprintf(rel, sizeof rel, "proc/%d", 50);
    make_dir(root, rel);
    write_stat(root, 50, "wrapped", 101, 1, 1, 0, 0, 1, 4096, 1);
    snprintf(rel, sizeof rel, "proc/%d", 60);
    make_dir(root, rel);
    write_stat(root, 60, "wrapped child", 50, 1, 1, 0, 0, 1, 4096, 1);
    for (int pid = 3000; pid < 3300; pid++) {
        snprintf(rel, sizeof rel, "proc/%d", pid);
        make_dir(root, rel);
        write_stat(root, pid, "worker", 102, 2, 0, 0, 0, 1, 4096, 1);
    }
    harness h;
    const pid_t roots[] = {100};
    assert_int_equal(h_open(&h, &pm_source_proctree, root, roots, 1), 0);
    for (int k = 0; k < 2; k++) { /* again with the descriptors kept */
        assert_int_equal(h_read(&h), 0);
        assert_int_equal(u64v(&h, "proc.count"), 4 + 2 + 300);
        assert_int_equal(u64v(&h, "proc.threads"), 19 + 2 + 300);
        assert_dbl(f64v(&h, "proc.cpu_time"), (20385 + 4 + 600) / 100.0, EPS);
        assert_int_equal(u64v(&h, "proc.rss"), (516000ull + 2 + 300) * 4096);
    }
    h_close(&h);
    drop_copy(root);
}

static void test_proctree_other_user(void **state)
{
    (void)state;
    if (getuid() != 0)
        skip(); /* needs chown */
    /* 102 belongs to another user: it and its child 103 are not followed
     * (the root itself is followed whoever owns it). */
    char *root = copy_node("hpc-ib-rapl");
    char p[4200];
    snprintf(p, sizeof p, "%s/proc/102", root);
    assert_int_equal(chown(p, 4242, 4242), 0);
    harness h;
    const pid_t roots[] = {100};
    assert_int_equal(h_open(&h, &pm_source_proctree, root, roots, 1), 0);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 2);
    assert_int_equal(u64v(&h, "proc.threads"), 1 + 8);
    h_close(&h);

    /* Wrapping a command (-- CMD) follows the whole tree, whoever owns it. */
    assert_int_equal(h_open(&h, &pm_source_proctree, root, roots, 1), 0);
    h.ctx.any_uid = 1;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 4);
    assert_int_equal(u64v(&h, "proc.threads"), 1 + 8 + 8 + 2);
    h_close(&h);
    drop_copy(root);
}

static void test_proctree_malformed_stat(void **state)
{
    (void)state;
    static const struct {
        const char *stat; /* for pid 103 */
        uint64_t count;
    } rows[] = {
        {"", 3},                                  /* empty: vanished */
        {"103 (helper S 102 103 103\n", 3},       /* no ')': not ours */
        {"103 (helper) S 102 103 103 0 -1\n", 3}, /* truncated */
        {"103 (helper)S 102 1 2\n", 3},           /* no blank after ')' */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char *root = copy_node("hpc-ib-rapl");
        write_file(root, "proc/103/stat", "%s", rows[i].stat);
        harness h;
        const pid_t roots[] = {100};
        assert_int_equal(h_open(&h, &pm_source_proctree, root, roots, 1), 0);
        assert_int_equal(h_read(&h), 0);
        assert_int_equal(u64v(&h, "proc.count"), rows[i].count);
        assert_int_equal(u64v(&h, "proc.threads"), 1 + 8 + 8);
        h_close(&h);
        drop_copy(root);
    }
}

/* Members come and go; the counters stay continuous and count each tick
 * once: a child reaped into a member's cutime/cstime, one that vanishes
 * without (its parent ignores SIGCHLD), one read a last time by the
 * sampler before it reaps it (reaping()), and a reused pid. */
static void test_proctree_departed(void **state)
{
    (void)state;
    char *root = copy_node("hpc-ib-rapl");
    harness h;
    const pid_t roots[] = {100};
    assert_int_equal(h_open(&h, &pm_source_proctree, root, roots, 1), 0);
    h.ctx.now_mono_ns = 1000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), 203.85, EPS);
    const uint64_t rb0 = 4096ull + 1048576000 + 2097152000,
                   wb0 = 8192ull + 524288000 + 262144000 + 4096;
    assert_int_equal(u64v(&h, "proc.read_bytes"), rb0);
    assert_int_equal(u64v(&h, "proc.write_bytes"), wb0);

    /* 103 (300+100 ticks) runs 20 more, exits, and 102 reaps it: 102's
     * cutime + cstime grow by 420, its write_bytes by 103's 4096. */
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/103'", root);
    assert_int_equal(system(cmd), 0);
    write_stat(root, 102, "mpi_rank", 100, 9000, 400, 320, 100, 8, 2100000000, 260000);
    write_file(root, "proc/102/io", "read_bytes: 2097152000\nwrite_bytes: %llu\n",
               262144000ull + 4096);
    write_file(root, "proc/loadavg", "12.50 11.75 10.02 9/1234 1236\n");
    h.ctx.now_mono_ns = 2000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 3);
    assert_dbl(f64v(&h, "proc.cpu_time"), 204.05, EPS);
    assert_dbl(f64v(&h, "proc.cpu_percent"), 20.0, 1e-6);
    assert_int_equal(u64v(&h, "proc.read_bytes"), rb0);
    assert_int_equal(u64v(&h, "proc.write_bytes"), wb0);

    /* 101 (10500 ticks) vanishes and 100's cutime does not move (it
     * ignores SIGCHLD: the kernel reaped 101 and dropped its times):
     * departed, the counter does not drop, nor do the bytes. */
    snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/101'", root);
    assert_int_equal(system(cmd), 0);
    write_file(root, "proc/loadavg", "12.50 11.75 10.02 9/1234 1237\n");
    h.ctx.now_mono_ns = 3000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 2);
    assert_dbl(f64v(&h, "proc.cpu_time"), 204.05, EPS);
    assert_dbl(f64v(&h, "proc.cpu_percent"), 0.0, 1e-9);
    assert_int_equal(u64v(&h, "proc.read_bytes"), rb0);
    assert_int_equal(u64v(&h, "proc.write_bytes"), wb0);

    /* 102 runs 50 more ticks and writes 8192 bytes, exits, and the
     * sampler (its subreaper) reads it a last time before reaping it;
     * then it is gone from /proc.  Counted once. */
    write_stat(root, 102, "mpi_rank", 100, 9050, 400, 320, 100, 8, 2100000000, 260000);
    write_file(root, "proc/102/io", "read_bytes: 2097152000\nwrite_bytes: %llu\n",
               262144000ull + 4096 + 8192);
    assert_non_null(h.src->reaping);
    h.src->reaping(h.state, &h.ctx, 102);
    snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/102'", root);
    assert_int_equal(system(cmd), 0);
    write_file(root, "proc/loadavg", "12.50 11.75 10.02 9/1234 1238\n");
    h.ctx.now_mono_ns = 4000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 1);
    assert_dbl(f64v(&h, "proc.cpu_time"), 204.55, EPS);
    assert_int_equal(u64v(&h, "proc.write_bytes"), wb0 + 8192);
    h.ctx.now_mono_ns = 5000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), 204.55, EPS);

    /* 100 forks 104 (30 ticks); then 104 exits unreaped-into-100 and a
     * process of another tree (parent 1) gets pid 104: another start time.
     * The old 104 departs with its 30 ticks, the new one is not ours. */
    snprintf(cmd, sizeof cmd, "mkdir '%s/proc/104'", root);
    assert_int_equal(system(cmd), 0);
    write_stat(root, 104, "step", 100, 20, 10, 0, 0, 1, 4096, 10);
    write_file(root, "proc/loadavg", "12.50 11.75 10.02 9/1234 1239\n");
    h.ctx.now_mono_ns = 6000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 2);
    assert_dbl(f64v(&h, "proc.cpu_time"), 204.85, EPS);
    write_file(root, "proc/104/stat",
               "104 (other) S 1 104 104 0 -1 4194560 0 0 0 0 5000 0 0 0 20 0 1 0 999999 4096 "
               "10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
    h.ctx.now_mono_ns = 1000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), 204.85, EPS);
    write_file(root, "proc/loadavg", "12.50 11.75 10.02 9/1234 1240\n");
    h.ctx.now_mono_ns = 8000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 1);
    assert_dbl(f64v(&h, "proc.cpu_time"), 204.85, EPS);
    h_close(&h);
    drop_copy(root);
}

/* A zombie child (state Z) of a member: pid, exited with ut + st ticks
 * of CPU and ns nanoseconds on the CPU (schedstat). */
static void write_zombie(const char *root, int pid, int ppid, unsigned long ut, unsigned long st,
                         unsigned long long ns)
{
    char rel[64];
    snprintf(rel, sizeof rel, "proc/%d", pid);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/%s'", root, rel);
    assert_int_equal(system(cmd), 0);
    snprintf(rel, sizeof rel, "proc/%d/stat", pid);
    write_file(root, rel,
               "%d (short) Z %d %d %d 0 -1 4194560 0 0 0 0 %lu %lu 0 0 20 0 1 0 "
               "200000 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0 0 0 0 0 0 "
               "0 0 0\n",
               pid, ppid, pid, pid, ut, st);
    snprintf(rel, sizeof rel, "proc/%d/schedstat", pid);
    write_file(root, rel, "%llu 1000 3\n", ns);
}

/* Short processes reaped in batches: a zombie's CPU counts at the first
 * sample that sees it, exactly (schedstat: 5 ms reads 0 ticks), and when
 * its parent reaps it the parent's cutime (truncated to ticks) neither
 * counts it again nor takes it back; a child whose time never reaches its
 * parent (SIGCHLD ignored) stays counted. */
static void test_proctree_zombie_when_seen(void **state)
{
    (void)state;
    char *root = copy_node("hpc-ib-rapl");
    harness h;
    const pid_t roots[] = {100};
    assert_int_equal(h_open(&h, &pm_source_proctree, root, roots, 1), 0);
    h.ctx.now_mono_ns = 1000000000;
    assert_int_equal(h_read(&h), 0);
    const double c0 = 203.85;
    assert_dbl(f64v(&h, "proc.cpu_time"), c0, EPS);

    /* 105 ran 5 ms and exited; 100 has not reaped it yet. */
    write_zombie(root, 105, 100, 0, 0, 5000000);
    write_file(root, "proc/loadavg", "12.50 11.75 10.02 9/1234 1236\n");
    h.ctx.now_mono_ns = 2000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), c0 + 0.005, EPS);
    assert_dbl(f64v(&h, "proc.cpu_percent"), 0.5, 1e-6);

    /* 106 ran 6 ms and exited; 100 reaps 105: its cutime stays 10 ticks
     * (5 ms more is less than a tick). */
    write_zombie(root, 106, 100, 0, 0, 6000000);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/105'", root);
    assert_int_equal(system(cmd), 0);
    write_file(root, "proc/loadavg", "12.50 11.75 10.02 9/1234 1237\n");
    h.ctx.now_mono_ns = 3000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), c0 + 0.011, EPS);

    /* 100 reaps 106: cutime 11 ticks; 105 and 106 counted once. */
    write_stat(root, 100, "job.sh", 1, 50, 20, 11, 5, 1, 12000000, 1000);
    snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/106'", root);
    assert_int_equal(system(cmd), 0);
    write_file(root, "proc/loadavg", "12.50 11.75 10.02 9/1234 1238\n");
    h.ctx.now_mono_ns = 4000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), c0 + 0.011, EPS);
    assert_dbl(f64v(&h, "proc.cpu_percent"), 0.0, 1e-9);

    /* A child never seen (born and reaped between two samples) brings
     * cutime to 12 ticks: cutime + cstime, 170 ms, passes the floor (161
     * ms) and the tree's time grows by the difference. */
    write_stat(root, 100, "job.sh", 1, 50, 20, 12, 5, 1, 12000000, 1000);
    write_file(root, "proc/loadavg", "12.50 11.75 10.02 9/1234 1239\n");
    h.ctx.now_mono_ns = 5000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), c0 + 0.020, EPS);

    /* 107 ran 50 ms (3 + 2 ticks) and exited, seen; then it is gone and
     * 100's cutime did not move (it ignores SIGCHLD): still counted. */
    write_zombie(root, 107, 100, 3, 2, 50000000);
    write_file(root, "proc/loadavg", "12.50 11.75 10.02 9/1234 1240\n");
    h.ctx.now_mono_ns = 6000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), c0 + 0.070, EPS);
    snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/107'", root);
    assert_int_equal(system(cmd), 0);
    write_file(root, "proc/loadavg", "12.50 11.75 10.02 9/1234 1241\n");
    h.ctx.now_mono_ns = 1000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 4);
    assert_dbl(f64v(&h, "proc.cpu_time"), c0 + 0.070, EPS);
    h_close(&h);
    drop_copy(root);
}

/* A member of more than 8 threads is read in full every sample, unasked;
 * once it has one thread again, its schedstat stands for its full read
 * as any single-threaded member's does. */
static void test_proctree_many_threads_then_one(void **state)
{
    (void)state;
    char *root = copy_node("hpc-ib-rapl");
    write_file(root, "proc/103/schedstat", "1000 0 5\n");
    write_stat(root, 103, "helper", 102, 300, 100, 0, 0, 9, 4096, 10);
    harness h;
    const pid_t roots[] = {103};
    assert_int_equal(h_open(&h, &pm_source_proctree, root, roots, 1), 0);
    for (int i = 1; i <= 3; i++) {
        h.ctx.now_mono_ns = i * 1000000000LL;
        assert_int_equal(h_read(&h), 0);
        assert_int_equal(u64v(&h, "proc.threads"), 9);
    }
    write_stat(root, 103, "helper", 102, 300, 100, 0, 0, 1, 4096, 10);
    h.ctx.now_mono_ns = 4000000000;
    assert_int_equal(h_read(&h), 0); /* read in full: one thread now */
    h.ctx.now_mono_ns = 5000000000;
    assert_int_equal(h_read(&h), 0); /* asked, then read in full: the baseline */
    assert_dbl(f64v(&h, "proc.cpu_time"), 4.0, EPS);
    write_stat(root, 103, "helper", 102, 400, 100, 0, 0, 1, 4096, 10);
    h.ctx.now_mono_ns = 6000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), 4.0, EPS); /* its thread did not run */
    write_file(root, "proc/103/schedstat", "2000 0 6\n");
    h.ctx.now_mono_ns = 1000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), 5.0, EPS);
    h_close(&h);
    drop_copy(root);
}

/* A multithreaded member none of whose threads ran since its last full
 * read (each thread's schedstat, /proc/<pid>/task/<tid>/schedstat,
 * unchanged) is not read again: its last figures stand, as a
 * single-threaded member's do.  103 has 2 threads (103 and 104). */
static void test_proctree_threads_not_run(void **state)
{
    (void)state;
    char *root = copy_node("hpc-ib-rapl");
    make_dir(root, "proc/103/task");
    make_dir(root, "proc/103/task/103");
    make_dir(root, "proc/103/task/104");
    write_file(root, "proc/103/schedstat", "1000 0 5\n");
    write_file(root, "proc/103/task/103/schedstat", "1000 0 5\n");
    write_file(root, "proc/103/task/104/schedstat", "2000 0 7\n");
    harness h;
    const pid_t roots[] = {103};
    assert_int_equal(h_open(&h, &pm_source_proctree, root, roots, 1), 0);
    h.ctx.now_mono_ns = 1000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.threads"), 2);
    assert_dbl(f64v(&h, "proc.cpu_time"), 4.0, EPS);
    /* Threads listed, their sums the baseline of this full read. */
    h.ctx.now_mono_ns = 2000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), 4.0, EPS);
    /* stat says more, but no thread ran: the last read stands. */
    write_stat(root, 103, "helper", 102, 400, 100, 0, 0, 2, 4096, 10);
    h.ctx.now_mono_ns = 3000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), 4.0, EPS);
    /* Thread 104 ran: read in full. */
    write_file(root, "proc/103/task/104/schedstat", "3000 0 8\n");
    h.ctx.now_mono_ns = 4000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), 5.0, EPS);
    /* A third thread: 104 ran to make it; listed again at the next check. */
    make_dir(root, "proc/103/task/105");
    write_file(root, "proc/103/task/105/schedstat", "10 0 1\n");
    write_file(root, "proc/103/task/104/schedstat", "3500 0 9\n");
    write_stat(root, 103, "helper", 102, 450, 100, 0, 0, 3, 4096, 10);
    h.ctx.now_mono_ns = 5000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.threads"), 3);
    assert_dbl(f64v(&h, "proc.cpu_time"), 5.5, EPS);
    h.ctx.now_mono_ns = 6000000000;
    assert_int_equal(h_read(&h), 0); /* 3 threads listed: baseline */
    write_stat(root, 103, "helper", 102, 480, 100, 0, 0, 3, 4096, 10);
    h.ctx.now_mono_ns = 1000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), 5.5, EPS);
    write_file(root, "proc/103/task/105/schedstat", "20 0 2\n");
    h.ctx.now_mono_ns = 8000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), 5.8, EPS);
    h_close(&h);
    drop_copy(root);
}

/* Give member pid of a copied tree a one-thread stat, a schedstat and a
 * children file (/proc/<pid>/task/<pid>/children) listing kids. */
static void child_file_member(const char *root, int pid, int ppid, const char *kids)
{
    char rel[64];
    snprintf(rel, sizeof rel, "proc/%d/task", pid);
    make_dir(root, rel);
    snprintf(rel, sizeof rel, "proc/%d/task/%d", pid, pid);
    make_dir(root, rel);
    snprintf(rel, sizeof rel, "proc/%d/task/%d/children", pid, pid);
    write_file(root, rel, "%s", kids);
    snprintf(rel, sizeof rel, "proc/%d/schedstat", pid);
    write_file(root, rel, "1000 0 5\n");
    write_stat(root, pid, "m", ppid, 100, 50, 0, 0, 1, 4096, 10);
}

/* Where the kernel has children files, a birth on the node is looked up
 * in the children files of the members that ran since their last look
 * (only those can have started a process), not by listing /proc; the
 * listing comes when one names a pid the table lacks (a zombie too: the
 * kernel keeps it on its parent's list until it is reaped), when a member
 * that ran exits (its children go to a reaper), and at most a second
 * after the last listing.  104, a child of 101 that no children file
 * names (as one started with CLONE_PARENT would be), shows when a listing
 * happened. */
static void test_proctree_births_from_children(void **state)
{
    (void)state;
    char *root = copy_node("hpc-ib-rapl");
    child_file_member(root, 100, 1, "101 102 ");
    child_file_member(root, 101, 100, "");
    child_file_member(root, 102, 100, "103 ");
    child_file_member(root, 103, 102, "");
    harness h;
    const pid_t roots[] = {100};
    assert_int_equal(h_open(&h, &pm_source_proctree, root, roots, 1), 0);
    h.ctx.now_mono_ns = 1000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 4);
    h.ctx.now_mono_ns = 1100000000;
    assert_int_equal(h_read(&h), 0);

    /* Births elsewhere (500): the members' children are all known. */
    fake_proc(root, 104, "clone", 101, "clone");
    child_file_member(root, 104, 101, "");
    write_stat(root, 104, "clone", 101, 0, 0, 0, 0, 1, 0, 0);
    fake_proc(root, 500, "other", 1, "other");
    write_file(root, "proc/loadavg", "1.00 1.00 1.00 2/600 500\n");
    h.ctx.now_mono_ns = 1200000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 4);
    /* Another birth elsewhere: no member ran, nothing is read. */
    fake_proc(root, 501, "other", 1, "other");
    write_file(root, "proc/loadavg", "1.00 1.00 1.00 2/600 501\n");
    h.ctx.now_mono_ns = 1300000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 4);

    /* 102 ran and started 105, which ran 0.3 s and exited unreaped: its
     * parent's children file names it, so /proc is listed (finding 104
     * too), and its time counts in this interval. */
    write_file(root, "proc/102/schedstat", "2000 0 6\n");
    write_file(root, "proc/102/task/102/children", "103 105 ");
    fake_proc(root, 105, "short", 102, "short");
    write_stat(root, 105, "short", 102, 20, 10, 0, 0, 1, 0, 0);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "sed -i 's/) S /) Z /' '%s/proc/105/stat'", root);
    assert_int_equal(system(cmd), 0);
    write_file(root, "proc/loadavg", "1.00 1.00 1.00 2/600 505\n");
    double c13 = f64v(&h, "proc.cpu_time");
    h.ctx.now_mono_ns = 1400000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 6);
    assert_dbl(f64v(&h, "proc.cpu_time") - c13, 0.3, EPS);

    /* 102 reaps 105: its cutime takes the 0.3 s, and it ran 0.1 s.  A
     * birth elsewhere lists /proc: 105 exited (it may have started a
     * process, now a reaper's). */
    double c14 = f64v(&h, "proc.cpu_time");
    write_file(root, "proc/105/stat", "%s", ""); /* a kept descriptor reads nothing */
    snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/105'", root);
    assert_int_equal(system(cmd), 0);
    write_stat(root, 102, "m", 100, 110, 50, 20, 10, 1, 4096, 10);
    write_file(root, "proc/102/schedstat", "3000 0 7\n");
    write_file(root, "proc/102/task/102/children", "103 ");
    fake_proc(root, 502, "other", 1, "other");
    write_file(root, "proc/loadavg", "1.00 1.00 1.00 2/600 502\n");
    h.ctx.now_mono_ns = 1500000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 5);
    assert_dbl(f64v(&h, "proc.cpu_time") - c14, 0.1, EPS);

    /* 103 ran, started 106 and exited; 106 went to the sampler (the
     * subreaper) and no member's children file names it: the exit of a
     * member that ran lists /proc at the next birth, finding 106. */
    h.ctx.subreaper = 1;
    write_file(root, "proc/103/schedstat", "2000 0 6\n");
    h.ctx.now_mono_ns = 1600000000;
    assert_int_equal(h_read(&h), 0);
    write_file(root, "proc/103/stat", "%s", ""); /* kept descriptors read nothing */
    write_file(root, "proc/103/schedstat", "%s", "");
    snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/103'", root);
    assert_int_equal(system(cmd), 0);
    write_file(root, "proc/102/task/102/children", "%s", "");
    fake_proc(root, 106, "orphan", (int)getpid(), "orphan");
    write_file(root, "proc/loadavg", "1.00 1.00 1.00 2/600 506\n");
    h.ctx.now_mono_ns = 1700000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 5); /* 100, 101, 102, 104, 106 */

    /* 106 ran but no birth since: 107, its child, appears with one (the
     * children file read then names it). */
    child_file_member(root, 106, (int)getpid(), "107 ");
    fake_proc(root, 107, "grandchild", 106, "grandchild");
    write_file(root, "proc/loadavg", "1.00 1.00 1.00 2/600 507\n");
    h.ctx.now_mono_ns = 1800000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 6);
    h_close(&h);
    drop_copy(root);
}

/* A child started by a thread other than the main one is on that thread's
 * children list (/proc/<pid>/task/<tid>/children): a multithreaded member
 * that ran has each thread's file read.  700 has threads 700 and 710; 710
 * starts 711. */
static void test_proctree_births_thread_children(void **state)
{
    (void)state;
    char *root = copy_node("hpc-ib-rapl");
    fake_proc(root, 700, "m", 1, "m");
    child_file_member(root, 700, 1, "");
    write_stat(root, 700, "m", 1, 700, 50, 0, 0, 2, 4096, 10);
    make_dir(root, "proc/700/task/710");
    write_file(root, "proc/700/task/700/schedstat", "7000 0 5\n");
    write_file(root, "proc/700/task/710/schedstat", "7000 0 5\n");
    write_file(root, "proc/700/task/710/children", "%s", "");
    harness h;
    const pid_t roots[] = {700};
    assert_int_equal(h_open(&h, &pm_source_proctree, root, roots, 1), 0);
    h.ctx.now_mono_ns = 1000000000;
    assert_int_equal(h_read(&h), 0);
    h.ctx.now_mono_ns = 1100000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 1);
    write_file(root, "proc/700/task/710/schedstat", "8000 0 6\n");
    write_file(root, "proc/700/task/710/children", "711 ");
    fake_proc(root, 711, "worker", 700, "worker");
    write_file(root, "proc/loadavg", "1.00 1.00 1.00 2/600 711\n");
    h.ctx.now_mono_ns = 1200000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 2);
    h_close(&h);
    drop_copy(root);
}

/* The kernel keeps a child that has exited on its parent's children list
 * until it is reaped (what the births look-up above relies on): checked
 * on the running kernel, where it has the files. */
static void test_proctree_kernel_keeps_zombie_children(void **state)
{
    (void)state;
    if (access("/proc/thread-self/children", R_OK) != 0)
        skip();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
    char buf[4096], want[32];
    FILE *f = fopen("/proc/thread-self/children", "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    snprintf(want, sizeof want, "%d", (int)pid);
    int found = 0;
    for (char *save = NULL, *tok = strtok_r(buf, " \n", &save); tok;
         tok = strtok_r(NULL, " \n", &save))
        found |= strcmp(tok, want) == 0;
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    assert_true(found);
}

static int g_notes;
static char g_note[1024];
static void note_sink(int level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    g_notes++;
    snprintf(g_note + strlen(g_note), sizeof g_note - strlen(g_note), "%s\n", msg);
}

/* 300 has a cstime of 2^63-1 ticks (9.2e16 s) and a statm shared field
 * of 2^64-1 pages (16 EiB) in the fixture: impossible.  Each is noted
 * once, its column left empty; the other columns and its child 301 are
 * recorded. */
static void test_proctree_impossible_values(void **state)
{
    (void)state;
    char *root = copy_node("hpc-ib-rapl");
    harness h;
    const pid_t roots[] = {300};
    g_notes = 0;
    g_note[0] = '\0';
    pm_log_set_sink(note_sink, NULL, PM_LOG_INFO);
    assert_int_equal(h_open(&h, &pm_source_proctree, root, roots, 1), 0);
    h.ctx.now_mono_ns = 1000000000;
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 2);
    assert_int_equal(u64v(&h, "proc.threads"), 2 + 2);
    assert_int_equal(u64v(&h, "proc.rss"), 2 * 5000ull * 4096);
    assert_int_equal(u64v(&h, "proc.vms"), 2 * 50000000ull);
    assert_int_equal(u64v(&h, "proc.write_bytes"), 2 * 4096ull);
    assert_false(has(&h, "proc.cpu_time"));
    assert_false(has(&h, "proc.shared"));
    assert_int_equal(g_notes, 2);
    assert_non_null(strstr(g_note, "/300/stat: cstime (ticks) 9223372036854775807 is impossible"));
    assert_non_null(
        strstr(g_note, "/300/statm: shared (pages) 18446744073709551615 is impossible"));
    h.ctx.now_mono_ns = 2000000000;
    assert_int_equal(h_read(&h), 0);
    assert_false(has(&h, "proc.cpu_time"));
    assert_false(has(&h, "proc.cpu_percent"));
    assert_int_equal(g_notes, 2); /* once */
    /* Sane again: recorded again. */
    write_stat(root, 300, "corrupt", 1, 300, 100, 0, 7, 2, 50000000, 5000);
    write_file(root, "proc/300/statm", "12207 5000 1500 5 0 3500 0\n");
    h.ctx.now_mono_ns = 3000000000;
    assert_int_equal(h_read(&h), 0);
    assert_dbl(f64v(&h, "proc.cpu_time"), (407 + 400) / 100.0, EPS);
    assert_int_equal(u64v(&h, "proc.shared"), 2 * 1500ull * 4096);
    /* A negative cutime is no better. */
    write_stat(root, 301, "helper", 300, 300, 100, -5, 0, 2, 50000000, 5000);
    h.ctx.now_mono_ns = 4000000000;
    assert_int_equal(h_read(&h), 0);
    assert_false(has(&h, "proc.cpu_time"));
    assert_int_equal(g_notes, 2); /* the CPU kind was noted already */
    h_close(&h);
    pm_log_set_sink(NULL, NULL, PM_LOG_INFO);
    drop_copy(root);
}

static void test_proctree_absent_cases(void **state)
{
    (void)state;
    harness h;
    /* System-wide sampling: no tree to follow. */
    assert_int_equal(h_open_node(&h, &pm_source_proctree, "hpc-ib-rapl", NULL, 0), PM_ENOENT);
    assert_int_equal(h.schema.n, 0);
    h_close(&h);
    /* A root that does not exist: count 0, nothing else. */
    const pid_t roots[] = {4000000};
    assert_int_equal(h_open_node(&h, &pm_source_proctree, "hpc-ib-rapl", roots, 1), 0);
    assert_int_equal(h_read(&h), 0);
    assert_int_equal(u64v(&h, "proc.count"), 0);
    assert_false(has(&h, "proc.threads"));
    h_close(&h);
}

/* ----------------------------------------------------- the real machine */

static void test_real_proc_smoke(void **state)
{
    (void)state;
    /* Every source on this machine's /proc and /sys: open either works or
     * says the hardware is absent, and two reads succeed. */
    pid_t self = getpid();
    for (size_t i = 0; pm_sources[i]; i++) {
        harness h;
        memset(&h, 0, sizeof h);
        assert_int_equal(pm_sctx_open(&h.ctx, "/proc", "/sys", &h.err), 0);
        h.ctx.roots = &self;
        h.ctx.nroots = 1;
        h.ctx.pss_interval_ns = 0;
        pm_schema_init(&h.schema);
        h.src = pm_sources[i];
        h.open_rc = h.src->open(&h.ctx, &h.schema, &h.state, &h.err);
        if (h.open_rc != 0) {
            assert_int_equal(h.open_rc, PM_ENOENT);
            assert_false(h.src->essential);
            h_close(&h);
            continue;
        }
        assert_int_equal(pm_sample_init(&h.s, h.schema.n), 0);
        assert_int_equal(h_read(&h), 0);
        h.ctx.now_mono_ns = 1;
        assert_int_equal(h_read(&h), 0);
        if (h.src == &pm_source_proctree)
            assert_true(u64v(&h, "proc.count") >= 1);
        if (h.src == &pm_source_cpu)
            assert_true(u64v(&h, "cpu.ncpus") >= 1);
        h_close(&h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sctx_open_missing_proc),
        cmocka_unit_test(test_sctx_open_missing_sys),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_cpu_columns),
        cmocka_unit_test(test_cpu_first_sample),
        cmocka_unit_test(test_cpu_percent_two_reads),
        cmocka_unit_test(test_cpu_all_idle_and_all_busy),
        cmocka_unit_test(test_cpu_old_kernel_four_fields),
        cmocka_unit_test(test_cpu_open_failures),
        cmocka_unit_test(test_cpu_huge_stat_file),
        cmocka_unit_test(test_memory_hpc),
        cmocka_unit_test(test_memory_old_kernel),
        cmocka_unit_test(test_memory_rows),
        cmocka_unit_test(test_memory_used_definition),
        cmocka_unit_test(test_memory_classic_rows),
        cmocka_unit_test(test_disk_whole_devices_only),
        cmocka_unit_test(test_disk_out_dir_usage),
        cmocka_unit_test(test_disk_old_kernel_format),
        cmocka_unit_test(test_disk_no_sys_block),
        cmocka_unit_test(test_disk_malformed_lines),
        cmocka_unit_test(test_disk_many_devices),
        cmocka_unit_test(test_disk_many_whole_devices),
        cmocka_unit_test(test_disk_captured_tree),
        cmocka_unit_test(test_disk_partition_names),
        cmocka_unit_test(test_net_lo_ext_split),
        cmocka_unit_test(test_net_no_space_after_colon),
        cmocka_unit_test(test_net_rows),
        cmocka_unit_test(test_net_many_interfaces),
        cmocka_unit_test(test_net_absent),
        cmocka_unit_test(test_impossible_memory),
        cmocka_unit_test(test_impossible_cpu),
        cmocka_unit_test(test_impossible_disk),
        cmocka_unit_test(test_impossible_net),
        cmocka_unit_test(test_impossible_ib_rapl),
        cmocka_unit_test(test_ib_ports_summed_times_four),
        cmocka_unit_test(test_ib_counter_changes_and_vanishes),
        cmocka_unit_test(test_ib_absent),
        cmocka_unit_test(test_rapl_domains),
        cmocka_unit_test(test_rapl_wrap_recorded_raw),
        cmocka_unit_test(test_rapl_duplicate_and_psys),
        cmocka_unit_test(test_rapl_absent),
        cmocka_unit_test(test_proctree_tree_of_100),
        cmocka_unit_test(test_proctree_odd_comm),
        cmocka_unit_test(test_proctree_cpu_percent_and_churn),
        cmocka_unit_test(test_proctree_low_pids_and_big_tree),
        cmocka_unit_test(test_proctree_slurm_steps),
        cmocka_unit_test(test_proctree_other_user),
        cmocka_unit_test(test_proctree_malformed_stat),
        cmocka_unit_test(test_proctree_absent_cases),
        cmocka_unit_test(test_proctree_departed),
        cmocka_unit_test(test_proctree_zombie_when_seen),
        cmocka_unit_test(test_proctree_threads_not_run),
        cmocka_unit_test(test_proctree_births_from_children),
        cmocka_unit_test(test_proctree_births_thread_children),
        cmocka_unit_test(test_proctree_kernel_keeps_zombie_children),
        cmocka_unit_test(test_loadavg_from_context),
        cmocka_unit_test(test_proctree_many_threads_then_one),
        cmocka_unit_test(test_proctree_impossible_values),
        cmocka_unit_test(test_real_proc_smoke),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
