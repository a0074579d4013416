/* Unit tests of the events source (src/sampler/src_events.c) on the
 * captured tree fixtures/nodes/events, and of the kernel log's parser
 * (src/sampler/kmsg.c) on captured and hostile /dev/kmsg records.
 *
 * fixtures/nodes/events: /proc/vmstat with oom_kill 3; /proc/pressure/cpu
 * without a "full" line (before Linux 5.13), memory and io with one; two
 * CPUs of one package with thermal_throttle counts (core 7 + 5, package 11
 * on both, counted once); EDAC mc0 (2 corrected, 0 uncorrected) and mc1
 * (40, 1), and mc/power, which is no memory controller.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <cjson/cJSON.h>

#include "perfmon/buf.h"
#include "perfmon/kmsg.h"
#include "perfmon/source.h"

#include "../support/testutil.h"

/* ----------------------------------------------------------- the source */

typedef struct eh {
    char proc[4200], sys[4200];
    pm_sctx ctx;
    pm_schema schema;
    pm_sample s;
    void *state;
    pm_error err;
    int rc;
    char notes[4096]; /* the notes written, one a line */
} eh;

static void take_note(void *arg, const char *text)
{
    eh *h = arg;
    size_t n = strlen(h->notes);
    snprintf(h->notes + n, sizeof h->notes - n, "%s\n", text);
}

static int e_open(eh *h, const char *root)
{
    memset(h, 0, sizeof *h);
    snprintf(h->proc, sizeof h->proc, "%s/proc", root);
    snprintf(h->sys, sizeof h->sys, "%s/sys", root);
    assert_int_equal(pm_sctx_open(&h->ctx, h->proc, h->sys, &h->err), 0);
    h->ctx.note = take_note;
    h->ctx.note_arg = h;
    pm_schema_init(&h->schema);
    h->rc = pm_source_events.open(&h->ctx, &h->schema, &h->state, &h->err);
    if (h->rc == 0)
        assert_int_equal(pm_sample_init(&h->s, h->schema.n), 0);
    return h->rc;
}

/* One sample, a second after the one before (the error counters are read
 * at most once a second: pm_sctx_rare_due). */
static void e_read(eh *h)
{
    h->ctx.now_mono_ns += PM_RARE_NS;
    pm_sample_clear(&h->s);
    assert_int_equal(pm_source_events.read(h->state, &h->ctx, &h->s), 0);
}

static void e_close(eh *h)
{
    if (h->rc == 0) {
        pm_source_events.close(h->state);
        pm_sample_free(&h->s);
    }
    pm_schema_free(&h->schema);
    pm_sctx_close(&h->ctx);
}

static int col(const eh *h, const char *name)
{
    for (size_t i = 0; i < h->schema.n; i++)
        if (strcmp(h->schema.cols[i].name, name) == 0)
            return (int)i;
    return -1;
}

static int has(const eh *h, const char *name)
{
    int c = col(h, name);
    if (c < 0)
        fail_msg("no column %s", name);
    return (h->s.present[c / 8] >> (c % 8)) & 1;
}

static uint64_t u64v(const eh *h, const char *name)
{
    if (!has(h, name))
        fail_msg("column %s not recorded", name);
    return h->s.v[col(h, name)].u;
}

static double f64v(const eh *h, const char *name)
{
    if (!has(h, name))
        fail_msg("column %s not recorded", name);
    return h->s.v[col(h, name)].f;
}

static char *fixture(void)
{
    static char root[4096];
    snprintf(root, sizeof root, "%s/nodes/events", pm_test_fixtures());
    return root;
}

/* A copy of fixtures/nodes/events in a temporary directory. */
static char *copy_tree(void)
{
    char *dir = strdup(pm_test_tmpdir());
    assert_non_null(dir);
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp -r '%s/.' '%s/'", fixture(), dir);
    assert_int_equal(system(cmd), 0);
    return dir;
}

static void drop_tree(char *dir)
{
    pm_test_rmrf(dir);
    free(dir);
}

/* Rewrite root/rel in place (same inode: the source keeps it open). */
PM_PRINTF(3, 4) static void put(const char *root, const char *rel, const char *fmt, ...)
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

static void rm(const char *root, const char *rel)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    pm_test_rmrf(path);
}

static void test_columns_and_values(void **state)
{
    (void)state;
    eh h;
    assert_int_equal(e_open(&h, fixture()), 0);
    static const struct {
        const char *name, *unit;
        int type;
    } cols[] = {
        {"node.oom_kill", "1", PM_U64},
        {"psi.cpu_some", "s", PM_F64},
        {"psi.mem_some", "s", PM_F64},
        {"psi.mem_full", "s", PM_F64},
        {"psi.io_some", "s", PM_F64},
        {"psi.io_full", "s", PM_F64},
        {"cpu.thermal_core_throttles", "1", PM_U64},
        {"cpu.thermal_package_throttles", "1", PM_U64},
        {"edac.ce", "1", PM_U64},
        {"edac.ue", "1", PM_U64},
    };
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        int c = col(&h, cols[i].name);
        if (c < 0)
            fail_msg("no column %s", cols[i].name);
        assert_string_equal(h.schema.cols[c].unit, cols[i].unit);
        assert_string_equal(h.schema.cols[c].group, "events");
        assert_int_equal(h.schema.cols[c].kind, PM_COUNTER);
        assert_int_equal(h.schema.cols[c].type, cols[i].type);
    }
    /* cpu has no "full" line here; the node's is always 0 anyway. */
    assert_int_equal(col(&h, "psi.cpu_full"), -1);
    assert_int_equal(h.schema.n, sizeof cols / sizeof cols[0]);
    e_read(&h);
    assert_int_equal(u64v(&h, "node.oom_kill"), 3);
    assert_true(f64v(&h, "psi.cpu_some") == 1.5);
    assert_true(f64v(&h, "psi.mem_some") == 2.25);
    assert_true(f64v(&h, "psi.mem_full") == 0.75);
    assert_true(f64v(&h, "psi.io_some") == 4.0);
    assert_true(f64v(&h, "psi.io_full") == 3.0);
    assert_int_equal(u64v(&h, "cpu.thermal_core_throttles"), 12);
    assert_int_equal(u64v(&h, "cpu.thermal_package_throttles"), 11); /* one package */
    assert_int_equal(u64v(&h, "edac.ce"), 42);
    assert_int_equal(u64v(&h, "edac.ue"), 1);
    /* A captured tree is not the running kernel: its log is not read,
     * and nothing needs saying in the profile. */
    assert_string_equal(h.notes, "");
    pm_buf b;
    pm_buf_init(&b);
    pm_buf_puts(&b, "{");
    pm_source_events.describe(h.state, &b);
    pm_buf_puts(&b, "}");
    cJSON *j = cJSON_Parse(b.data);
    assert_non_null(j);
    const cJSON *ev = cJSON_GetObjectItem(j, "events");
    assert_string_equal(cJSON_GetObjectItem(ev, "oom_kill")->valuestring, "ok");
    assert_string_equal(cJSON_GetObjectItem(ev, "psi")->valuestring, "ok");
    assert_string_equal(cJSON_GetObjectItem(ev, "thermal")->valuestring, "ok");
    assert_string_equal(cJSON_GetObjectItem(ev, "edac")->valuestring, "ok");
    assert_non_null(
        strstr(cJSON_GetObjectItem(ev, "kernel_log")->valuestring, "not the running kernel"));
    cJSON_Delete(j);
    pm_buf_free(&b);
    e_close(&h);
}

static void test_counters_move_and_fail(void **state)
{
    (void)state;
    char *root = copy_tree();
    eh h;
    assert_int_equal(e_open(&h, root), 0);
    e_read(&h);
    put(root, "proc/vmstat", "pgfault 1\noom_kill 4\npgmajfault 2\n");
    put(root, "proc/pressure/memory",
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=3250001\n"
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=1750000\n");
    put(root, "sys/devices/system/cpu/cpu1/thermal_throttle/core_throttle_count", "9\n");
    put(root, "sys/devices/system/edac/mc/mc1/ue_count", "2\n");
    e_read(&h);
    assert_int_equal(u64v(&h, "node.oom_kill"), 4);
    assert_true(f64v(&h, "psi.mem_some") == 3.250001);
    assert_true(f64v(&h, "psi.mem_full") == 1.75);
    assert_int_equal(u64v(&h, "cpu.thermal_core_throttles"), 16);
    assert_int_equal(u64v(&h, "edac.ue"), 2);
    /* What does not parse is not recorded, never recorded as 0. */
    put(root, "proc/vmstat", "pgfault 1\noom_kill 4x\n");
    put(root, "proc/pressure/io", "some avg10=0.00 total=\nfull total=18446744073709551616\n");
    put(root, "sys/devices/system/edac/mc/mc0/ce_count", "-1\n");
    put(root, "sys/devices/system/edac/mc/mc1/ce_count", "\n");
    e_read(&h);
    assert_false(has(&h, "node.oom_kill"));
    assert_false(has(&h, "psi.io_some"));
    assert_false(has(&h, "psi.io_full"));
    assert_false(has(&h, "edac.ce"));
    assert_int_equal(u64v(&h, "edac.ue"), 2);
    assert_true(f64v(&h, "psi.cpu_some") == 1.5);
    e_close(&h);
    drop_tree(root);
}

/* Samples closer than a second: the error and pressure counters at the
 * first, then not until a second has passed, and always at the last. */
static void test_rare_counters_cadence(void **state)
{
    (void)state;
    char *root = copy_tree();
    eh h;
    assert_int_equal(e_open(&h, root), 0);
    h.ctx.now_mono_ns = 5 * PM_RARE_NS;
    pm_sample_clear(&h.s);
    assert_int_equal(pm_source_events.read(h.state, &h.ctx, &h.s), 0);
    assert_true(has(&h, "node.oom_kill") && has(&h, "cpu.thermal_core_throttles"));
    h.ctx.now_mono_ns += PM_RARE_NS / 2;
    pm_sample_clear(&h.s);
    assert_int_equal(pm_source_events.read(h.state, &h.ctx, &h.s), 0);
    assert_false(has(&h, "node.oom_kill"));
    assert_false(has(&h, "edac.ue"));
    assert_false(has(&h, "psi.mem_some"));
    h.ctx.now_mono_ns += PM_RARE_NS / 10;
    h.ctx.last_sample = 1;
    pm_sample_clear(&h.s);
    assert_int_equal(pm_source_events.read(h.state, &h.ctx, &h.s), 0);
    assert_true(has(&h, "node.oom_kill") && has(&h, "edac.ue") && has(&h, "psi.mem_some"));
    e_close(&h);
    drop_tree(root);
}

static void test_psi_full_and_packages(void **state)
{
    (void)state;
    char *root = copy_tree();
    /* A 5.13 kernel's cpu file has a "full" line: still no column. */
    put(root, "proc/pressure/cpu",
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=10\n"
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
    /* The second CPU on a package of its own: its package counts too. */
    put(root, "sys/devices/system/cpu/cpu1/topology/physical_package_id", "1\n");
    put(root, "sys/devices/system/cpu/cpu1/thermal_throttle/package_throttle_count", "4\n");
    eh h;
    assert_int_equal(e_open(&h, root), 0);
    assert_int_equal(col(&h, "psi.cpu_full"), -1);
    e_read(&h);
    assert_true(f64v(&h, "psi.cpu_some") == 10e-6);
    assert_int_equal(u64v(&h, "cpu.thermal_package_throttles"), 15);
    e_close(&h);
    drop_tree(root);
}

static void test_parts_absent(void **state)
{
    (void)state;
    char *root = copy_tree();
    rm(root, "proc/pressure");
    rm(root, "sys/devices/system/edac");
    rm(root, "sys/devices/system/cpu/cpu0/thermal_throttle");
    rm(root, "sys/devices/system/cpu/cpu1/thermal_throttle");
    eh h;
    assert_int_equal(e_open(&h, root), 0);
    assert_int_equal(h.schema.n, 1); /* node.oom_kill alone */
    e_read(&h);
    assert_int_equal(u64v(&h, "node.oom_kill"), 3);
    /* PSI off or absent is said once in the profile. */
    assert_non_null(strstr(h.notes, "events: "));
    assert_non_null(strstr(h.notes, "pressure/cpu: absent: no psi.* columns"));
    e_read(&h);
    assert_null(strstr(strstr(h.notes, "psi.*") + 1, "psi.*"));
    pm_buf b;
    pm_buf_init(&b);
    pm_buf_puts(&b, "{");
    pm_source_events.describe(h.state, &b);
    pm_buf_puts(&b, "}");
    cJSON *j = cJSON_Parse(b.data);
    assert_non_null(j);
    const cJSON *ev = cJSON_GetObjectItem(j, "events");
    assert_non_null(strstr(cJSON_GetObjectItem(ev, "edac")->valuestring, "no EDAC"));
    assert_non_null(strstr(cJSON_GetObjectItem(ev, "thermal")->valuestring, "thermal_throttle"));
    assert_non_null(strstr(cJSON_GetObjectItem(ev, "psi")->valuestring, "absent"));
    cJSON_Delete(j);
    pm_buf_free(&b);
    e_close(&h);
    /* Pressure files that are there but do not read (psi=0 answers
     * EOPNOTSUPP; here: no "some" line) are absent as well. */
    put(root, "proc/vmstat", "oom_kill\n");
    char path[4200];
    snprintf(path, sizeof path, "%s/proc/pressure", root);
    assert_int_equal(mkdir(path, 0755), 0);
    put(root, "proc/pressure/cpu", "full avg10=0.00 total=0\n");
    put(root, "proc/pressure/memory", "some total=1\n");
    put(root, "proc/pressure/io", "some total=1\n");
    /* Nothing at all: the source is absent, and says why. */
    assert_int_equal(e_open(&h, root), PM_ENOENT);
    assert_non_null(strstr(h.err.msg, "no oom_kill line"));
    assert_non_null(strstr(h.err.msg, "no \"some ... total=\" line"));
    assert_int_equal(h.schema.n, 0);
    e_close(&h);
    drop_tree(root);
    pm_source_events.close(NULL);
}

/* --------------------------------------------------- the kernel log */

static void test_kmsg_record(void **state)
{
    (void)state;
    pm_kmsg_rec r;
    static const char ok[] = "6,1234,552049260,-;hello world\n SUBSYSTEM=mem\n DEVICE=x\n";
    assert_int_equal(pm_kmsg_parse(ok, strlen(ok), &r), 0);
    assert_int_equal(r.prio, 6);
    assert_int_equal(r.seq, 1234);
    assert_int_equal(r.ts_us, 552049260);
    assert_int_equal(r.flag, '-');
    assert_int_equal(r.len, 11);
    assert_memory_equal(r.msg, "hello world", 11);
    /* The caller id field of Linux 5.1 and later. */
    static const char caller[] = "3,7,8,c,caller=T42;frag";
    assert_int_equal(pm_kmsg_parse(caller, strlen(caller), &r), 0);
    assert_int_equal(r.flag, 'c');
    assert_int_equal(r.len, 4);
    static const char *const bad[] = {
        "",
        "6",
        "6,1,2",
        "6,1,2,",
        "6,1,2,-",
        "6,1,2,-x;m",
        "a,1,2,-;m",
        "6,,2,-;m",
        "6,1,2,x;m",
        "-6,1,2,-;m",
        "6,1,99999999999999999999,-;m",
        "1024,1,2,-;m",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (pm_kmsg_parse(bad[i], strlen(bad[i]), &r) == 0)
            fail_msg("'%s' parsed", bad[i]);
    /* Bounded by its length, not by a NUL. */
    static const char nul[] = "6,1,2,-;ab\0cd";
    assert_int_equal(pm_kmsg_parse(nul, sizeof nul - 1, &r), 0);
    assert_int_equal(r.len, 5);
}

/* Feed records ("PRIO,SEQ,TS,FLAG;TEXT", one string each) and collect
 * the kills, flushing at the end when flush is set. */
static size_t feed(const char *const *recs, size_t n, int flush, pm_oom_kill *out, size_t max)
{
    pm_oom_parser p;
    pm_oom_init(&p);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        pm_oom_kill got[4];
        size_t m = pm_oom_feed(&p, recs[i], strlen(recs[i]), got, 4);
        for (size_t j = 0; j < m; j++) {
            assert_true(k < max);
            out[k++] = got[j];
        }
    }
    if (flush) {
        pm_oom_kill got[4];
        size_t m = pm_oom_flush(&p, got, 4);
        for (size_t j = 0; j < m; j++) {
            assert_true(k < max);
            out[k++] = got[j];
        }
    }
    return k;
}

/* As a 6.x kernel logs a kill by a memory cgroup's limit (captured on
 * this project's test machine, Linux 6.18, cgroup v1). */
static const char *const memcg_kill[] = {
    "4,912,551958012,-;python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, "
    "oom_score_adj=0",
    "4,913,551958020,-;CPU: 1 UID: 0 PID: 4242 Comm: python3 Not tainted 6.18.44 #1",
    "6,950,551958400,-;memory: usage 65536kB, limit 65536kB, failcnt 120",
    "6,960,551958500,-;Tasks state (memory values in pages):",
    "6,961,551958510,-;[   4242]     0  4242    69678    16288    16288        0         0   "
    "233472        0             0 python3",
    "6,962,551958600,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,"
    "mems_allowed=0,oom_memcg=/pm_oom_test_7,task_memcg=/pm_oom_test_7,task=python3,pid=4242,"
    "uid=0",
    "3,963,551958700,-;Memory cgroup out of memory: Killed process 4242 (python3) "
    "total-vm:278712kB, anon-rss:65152kB, file-rss:5760kB, shmem-rss:0kB, UID:0 pgtables:228kB "
    "oom_score_adj:0",
    "6,964,551959000,-;oom_reaper: reaped process 4242 (python3), now anon-rss:0kB, "
    "file-rss:0kB, shmem-rss:0kB",
};

static void test_oom_memcg(void **state)
{
    (void)state;
    pm_oom_kill k[4];
    assert_int_equal(feed(memcg_kill, sizeof memcg_kill / sizeof *memcg_kill, 1, k, 4), 1);
    assert_int_equal(k[0].pid, 4242);
    assert_string_equal(k[0].comm, "python3");
    assert_string_equal(k[0].constraint, "CONSTRAINT_MEMCG");
    assert_string_equal(k[0].memcg, "/pm_oom_test_7");
    assert_string_equal(k[0].task_memcg, "/pm_oom_test_7");
    assert_int_equal(k[0].anon_rss_kb, 65152);
    assert_int_equal(k[0].total_vm_kb, 278712);
    assert_int_equal(k[0].uid, 0);
    assert_int_equal(k[0].ts_us, 551958700); /* the kill line's */
}

static void test_oom_node_wide_and_old_kernels(void **state)
{
    (void)state;
    pm_oom_kill k[4];
    /* The node ran out (5.x): no oom_memcg. */
    static const char *const global[] = {
        "6,1,100,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,"
        "global_oom,task_memcg=/user.slice/user-1000.slice/session-3.scope,task=stress,pid=77,"
        "uid=1000",
        "3,2,101,-;Out of memory: Killed process 77 (stress) total-vm:8000000kB, "
        "anon-rss:7900000kB, file-rss:4kB, shmem-rss:0kB, UID:1000 pgtables:15000kB "
        "oom_score_adj:0",
    };
    assert_int_equal(feed(global, 2, 1, k, 4), 1);
    assert_string_equal(k[0].constraint, "CONSTRAINT_NONE");
    assert_string_equal(k[0].memcg, "");
    assert_string_equal(k[0].task_memcg, "/user.slice/user-1000.slice/session-3.scope");
    assert_string_equal(k[0].comm, "stress");
    assert_int_equal(k[0].uid, 1000);
    assert_int_equal(k[0].anon_rss_kb, 7900000);
    /* 4.19: the summary has no cgroups. */
    static const char *const v419[] = {
        "6,1,100,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,"
        "task=a.out,pid=900,uid=0",
        "3,2,101,-;Out of memory: Kill process 900 (a.out) score 990 or sacrifice child",
        "3,3,102,-;Killed process 900 (a.out) total-vm:100kB, anon-rss:90kB, file-rss:0kB, "
        "shmem-rss:0kB",
    };
    assert_int_equal(feed(v419, 3, 1, k, 4), 1);
    assert_string_equal(k[0].comm, "a.out");
    assert_string_equal(k[0].task_memcg, "");
    assert_string_equal(k[0].constraint, "CONSTRAINT_NONE");
    assert_int_equal(k[0].uid, 0);
    assert_int_equal(k[0].total_vm_kb, 100);
    /* Before 4.19 only the kill line: the constraint is unknown... */
    assert_int_equal(feed(v419 + 2, 1, 1, k, 4), 1);
    assert_string_equal(k[0].constraint, "");
    assert_int_equal(k[0].uid, -1);
    /* ...unless the lines before it tell a cgroup's kill (4.18, and 3.10
     * with its cgroup paths in pr_cont() fragments). */
    static const char *const v418[] = {
        "6,1,1,-;Task in /t/a killed as a result of limit of /t",
        "6,2,2,-;memory: usage 65536kB, limit 65536kB, failcnt 12",
        "3,3,3,-;Memory cgroup out of memory: Kill process 4242 (python3) score 1000 or "
        "sacrifice child",
        "3,4,4,-;Killed process 4242 (python3) total-vm:278712kB, anon-rss:65152kB, "
        "file-rss:5760kB, shmem-rss:0kB",
    };
    assert_int_equal(feed(v418, 4, 1, k, 4), 1);
    assert_string_equal(k[0].constraint, "CONSTRAINT_MEMCG");
    assert_string_equal(k[0].memcg, "/t");
    assert_string_equal(k[0].task_memcg, "/t/a");
    assert_int_equal(k[0].anon_rss_kb, 65152);
    static const char *const v310[] = {
        "6,1,1,c;Task in ",
        "6,2,1,+;/t",
        "6,3,1,+; killed as a result of limit of ",
        "6,4,1,+;/t",
        "3,5,3,-;Memory cgroup out of memory: Kill process 77 (x) score 1000 or sacrifice child",
        "3,6,4,-;Killed process 77 (x) total-vm:1kB, anon-rss:2kB, file-rss:3kB",
        /* the hints are used once, and forgotten at the next OOM (a
         * victim already exiting is not killed again): the next kill is
         * the node's */
        "6,7,5,-;Task in /z killed as a result of limit of /z",
        "4,8,5,-;y invoked oom-killer: gfp_mask=0x24201ca, order=0, oom_score_adj=0",
        "3,9,5,-;Out of memory: Kill process 78 (y) score 900 or sacrifice child",
        "3,10,6,-;Killed process 78 (y) total-vm:1kB, anon-rss:2kB, file-rss:3kB",
    };
    assert_int_equal(feed(v310, sizeof v310 / sizeof *v310, 1, k, 4), 2);
    assert_string_equal(k[0].constraint, "CONSTRAINT_MEMCG");
    assert_string_equal(k[0].task_memcg, "/t");
    assert_string_equal(k[1].constraint, "");
    assert_string_equal(k[1].task_memcg, "");
}

static void test_oom_continued_records(void **state)
{
    (void)state;
    /* Kernels before 5.10 logged the summary's pr_cont() pieces as
     * fragments: 'c' then '+'. */
    static const char *const frags[] = {
        "6,10,500,c;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null)",
        "6,11,500,+;,cpuset=/,mems_allowed=0",
        "6,12,500,+;,oom_memcg=/t,task_memcg=/t",
        "6,13,500,+;,task=python3,pid=4242,uid=0",
        "3,14,501,-;Memory cgroup out of memory: Killed process 4242 (python3) total-vm:1kB, "
        "anon-rss:2kB, file-rss:3kB, shmem-rss:0kB",
    };
    pm_oom_kill k[4];
    assert_int_equal(feed(frags, 5, 0, k, 4), 1);
    assert_string_equal(k[0].memcg, "/t");
    assert_string_equal(k[0].constraint, "CONSTRAINT_MEMCG");
    assert_int_equal(k[0].anon_rss_kb, 2);
    /* A continued line longer than the parser keeps is dropped whole; the
     * kill line still names the kill. */
    static char big[PM_KMSG_TEXT + 64];
    snprintf(big, sizeof big, "6,11,500,+;,oom_memcg=/%0*d", PM_KMSG_TEXT, 7);
    const char *const cut[] = {frags[0], big, frags[3], frags[4]};
    assert_int_equal(feed(cut, 4, 0, k, 4), 1);
    assert_string_equal(k[0].memcg, "");
    assert_string_equal(k[0].comm, "python3");
    assert_string_equal(k[0].constraint, "CONSTRAINT_MEMCG"); /* from the prefix */
    /* A '+' without its start stands alone; a line never ended is ended
     * by the flush. */
    const char *const lone[] = {frags[1], frags[0], frags[1], frags[2], frags[3]};
    assert_int_equal(feed(lone, 5, 1, k, 4), 1);
    assert_int_equal(k[0].pid, 4242);
    assert_string_equal(k[0].comm, "python3");
    assert_int_equal(k[0].anon_rss_kb, -1);
}

static void test_oom_hostile(void **state)
{
    (void)state;
    pm_oom_kill k[8];
    /* Names holding the separators around them. */
    static const char *const names[] = {
        "6,1,1,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
        "oom_memcg=/x,task=y,task_memcg=/x,task=y,task=a,task=b,pid=5,uid=0",
        "3,2,2,-;Memory cgroup out of memory: Killed process 5 (a,task=b) total-vm:1kB, "
        "anon-rss:2kB, file-rss:0kB",
        "3,3,3,-;Out of memory: Killed process 9 (x) total-vm:) total-vm:10kB, anon-rss:20kB, "
        "file-rss:0kB",
    };
    assert_int_equal(feed(names, 3, 1, k, 8), 2);
    assert_string_equal(k[0].comm, "a,task=b");
    assert_string_equal(k[0].task_memcg, "/x,task=y");
    assert_string_equal(k[1].comm, "x) total-vm:");
    assert_int_equal(k[1].total_vm_kb, 10);
    assert_int_equal(k[1].anon_rss_kb, 20);
    /* An overlong cgroup path is cut to the field; the pid still reads. */
    static char longrec[6000];
    int n = snprintf(longrec, sizeof longrec,
                     "6,1,1,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),"
                     "oom_memcg=/%04000d,task_memcg=/s,task=p,pid=31,uid=0",
                     0);
    assert_true(n > 4000 && (size_t)n < sizeof longrec);
    const char *const lr[] = {longrec};
    assert_int_equal(feed(lr, 1, 1, k, 8), 1);
    assert_int_equal(k[0].pid, 31);
    assert_int_equal(strlen(k[0].memcg), sizeof k[0].memcg - 1);
    assert_string_equal(k[0].task_memcg, "/s");
    /* Truncated, missing or impossible fields, user-space records, other
     * lines: no kill. */
    static const char *const junk[] = {
        "3,1,1,-;Memory cgroup out of memory: Killed process 4242 (pyth",
        "3,1,1,-;Out of memory: Killed process ",
        "3,1,1,-;Out of memory: Killed process x (p) total-vm:1kB",
        "3,1,1,-;Out of memory: Killed process 0 (p) total-vm:1kB",
        "3,1,1,-;Out of memory: Killed process 2147483648 (p) total-vm:1kB",
        "3,1,1,-;Out of memory: Killed process 99999999999999999999999 (p) total-vm:1kB",
        "3,1,1,-;Out of memory: Killed process 12(p) total-vm:1kB",
        "6,1,1,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),task=x,pid=",
        "6,1,1,-;oom-kill:constraint=CONSTRAINT_MEMCG,task=x,pid=12a,uid=0",
        "6,1,1,-;oom-kill:",
        "14,1,1,-;Out of memory: Killed process 12 (fake) total-vm:1kB",
        "6,1,1,-;oom_reaper: reaped process 4242 (python3), now anon-rss:0kB",
        "6,1,1,-;I Killed process 5 (x)",
        "garbage",
        "",
    };
    assert_int_equal(feed(junk, sizeof junk / sizeof *junk, 1, k, 8), 0);
    /* Missing sizes stay unknown, not 0. */
    static const char *const nosize[] = {"3,1,1,-;Killed process 12 (p)"};
    assert_int_equal(feed(nosize, 1, 1, k, 8), 1);
    assert_int_equal(k[0].total_vm_kb, -1);
    assert_int_equal(k[0].anon_rss_kb, -1);
    assert_string_equal(k[0].comm, "p");
}

static void test_oom_unpaired(void **state)
{
    (void)state;
    pm_oom_kill k[8];
    /* A summary whose kill line names another pid, two summaries in a
     * row, and a summary left at the end: each kill once. */
    static const char *const recs[] = {
        "6,1,10,-;oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/a,task_memcg=/a,task=one,pid=1,"
        "uid=0",
        "3,2,11,-;Memory cgroup out of memory: Killed process 2 (two) total-vm:1kB, anon-rss:1kB",
        "6,3,12,-;oom-kill:constraint=CONSTRAINT_NONE,task_memcg=/b,task=three,pid=3,uid=0",
        "6,4,13,-;oom-kill:constraint=CONSTRAINT_NONE,task_memcg=/c,task=four,pid=4,uid=0",
    };
    assert_int_equal(feed(recs, 4, 1, k, 8), 4);
    static const int pids[] = {1, 2, 3, 4};
    static const char *const comms[] = {"one", "two", "three", "four"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(k[i].pid, pids[i]);
        assert_string_equal(k[i].comm, comms[i]);
    }
    assert_string_equal(k[0].task_memcg, "/a");
    assert_int_equal(k[0].anon_rss_kb, -1);
    assert_int_equal(k[1].anon_rss_kb, 1);
    assert_string_equal(k[3].task_memcg, "/c");
    /* Without a flush, the last summary waits for its kill line. */
    assert_int_equal(feed(recs, 4, 0, k, 8), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns_and_values),
        cmocka_unit_test(test_counters_move_and_fail),
        cmocka_unit_test(test_rare_counters_cadence),
        cmocka_unit_test(test_psi_full_and_packages),
        cmocka_unit_test(test_parts_absent),
        cmocka_unit_test(test_kmsg_record),
        cmocka_unit_test(test_oom_memcg),
        cmocka_unit_test(test_oom_node_wide_and_old_kernels),
        cmocka_unit_test(test_oom_continued_records),
        cmocka_unit_test(test_oom_hostile),
        cmocka_unit_test(test_oom_unpaired),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
