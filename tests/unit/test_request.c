/* What a job asked its batch system for (src/sampler/request.c) from fake
 * SLURM, PBS and OAR environments, squeue faked by a script in PATH (one
 * that answers, one that fails, one that hangs past the bound), the
 * metadata JSON parsed back, and the note of src/analysis/request_use.c
 * for hand-made figures. */
#include <cJSON.h>
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

#include "perfmon/buf.h"
#include "perfmon/request.h"
#include "perfmon/request_use.h"

#include "../support/testutil.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const vars[] = {
    "SLURM_JOB_ID",
    "SLURM_JOBID",
    "SLURM_CPUS_PER_TASK",
    "SLURM_JOB_CPUS_PER_NODE",
    "SLURM_CPUS_ON_NODE",
    "SLURM_MEM_PER_NODE",
    "SLURM_MEM_PER_CPU",
    "SLURM_NTASKS",
    "SLURM_NPROCS",
    "SLURM_JOB_NUM_NODES",
    "SLURM_JOB_END_TIME",
    "SLURM_JOB_START_TIME",
    "PBS_JOBID",
    "PBS_WALLTIME",
    "PBS_NUM_PPN",
    "PBS_NUM_NODES",
    "NCPUS",
    "OAR_JOB_ID",
    "OAR_JOBID",
    "OAR_JOB_WALLTIME_SECONDS",
};

static char tmpdir[256], oldpath[4096];

static int setup(void **state)
{
    (void)state;
    for (size_t i = 0; i < N(vars); i++)
        unsetenv(vars[i]);
    char *t = pm_test_tmpdir();
    if (!t)
        return -1;
    snprintf(tmpdir, sizeof tmpdir, "%s", t);
    const char *p = getenv("PATH");
    snprintf(oldpath, sizeof oldpath, "%s", p ? p : "/usr/bin:/bin");
    char path[4400];
    snprintf(path, sizeof path, "%s:%s", tmpdir, oldpath); /* our squeue first */
    setenv("PATH", path, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < N(vars); i++)
        unsetenv(vars[i]);
    setenv("PATH", oldpath, 1);
    pm_test_rmrf(tmpdir);
    return 0;
}

/* A fake squeue: body is the script after #!/bin/sh; it records its
 * arguments in tmpdir/args. */
static void fake_squeue(const char *body)
{
    char path[512];
    snprintf(path, sizeof path, "%s/squeue", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\necho \"$@\" > '%s/args'\n%s\n", tmpdir, body);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, 0755), 0);
}

static void test_parse_time(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        double want;
    } rows[] = {
        {"5:00", 300},                        /* minutes:seconds, squeue's %l for --time=5 */
        {"00:07:00", 420},                    /* hours:minutes:seconds */
        {"1:30:00", 5400},      {"30", 1800}, /* plain minutes (SLURM) */
        {"2-12:00:00", 216000},               /* days-hours:minutes:seconds */
        {"1-00", 86400},                      /* days-hours */
        {"1-02:03", 93780},                   /* days-hours:minutes */
        {"7:00:00\n", 25200},   {"UNLIMITED", NAN}, {"INVALID", NAN}, {"", NAN},
        {"1:2:3:4", NAN},       {"-5", NAN},        {"12x", NAN},
    };
    for (size_t i = 0; i < N(rows); i++) {
        double got = pm_request_parse_time(rows[i].s);
        if (isnan(rows[i].want) ? !isnan(got) : got != rows[i].want)
            fail_msg("parse_time(\"%s\") = %g, want %g", rows[i].s, got, rows[i].want);
    }
    assert_true(isnan(pm_request_parse_time(NULL)));
}

static cJSON *as_json(const pm_request *r)
{
    pm_buf b;
    pm_buf_init(&b);
    pm_buf_puts(&b, "{\"hostname\":\"n1\"");
    pm_request_json(r, &b);
    pm_buf_puts(&b, "}");
    cJSON *j = cJSON_Parse(b.data);
    pm_buf_free(&b);
    assert_non_null(j);
    return j;
}

static double jnum(const cJSON *j, const char *k)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "request");
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(r, k);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

static const char *jstr(const cJSON *j, const char *k)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "request");
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(r, k);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* sbatch --time=2:00:00 --mem=64G -c 4 -n 2 on SLURM >= 23.02. */
static void test_slurm_env(void **state)
{
    (void)state;
    setenv("SLURM_JOB_ID", "4242", 1);
    setenv("SLURM_CPUS_PER_TASK", "4", 1);
    setenv("SLURM_NTASKS", "2", 1);
    setenv("SLURM_JOB_NUM_NODES", "1", 1);
    setenv("SLURM_CPUS_ON_NODE", "8", 1);
    setenv("SLURM_JOB_CPUS_PER_NODE", "8", 1);
    setenv("SLURM_MEM_PER_NODE", "65536", 1); /* MiB */
    setenv("SLURM_JOB_START_TIME", "1700000000", 1);
    setenv("SLURM_JOB_END_TIME", "1700007200", 1);
    fake_squeue("exit 1"); /* not asked */
    pm_request r;
    pm_request_detect(&r, 2000);
    cJSON *j = as_json(&r);
    assert_string_equal(jstr(j, "scheduler"), "slurm");
    assert_true(jnum(j, "cpus") == 8);
    assert_true(jnum(j, "cpus_per_task") == 4);
    assert_true(jnum(j, "ntasks") == 2);
    assert_true(jnum(j, "mem_bytes") == 65536.0 * 1048576);
    assert_true(jnum(j, "mem_per_node_bytes") == 65536.0 * 1048576);
    assert_true(isnan(jnum(j, "mem_per_cpu_bytes"))); /* absent, not null */
    assert_true(jnum(j, "time_limit_s") == 7200);
    assert_true(jnum(j, "start_time") == 1700000000);
    assert_string_equal(jstr(j, "time_limit_from"), "SLURM_JOB_END_TIME");
    assert_string_equal(jstr(j, "cpus_per_node_list"), "8");
    cJSON_Delete(j);
    char args[512];
    snprintf(args, sizeof args, "%s/args", tmpdir);
    assert_int_equal(access(args, F_OK), -1); /* squeue was not run */
}

/* --mem-per-cpu=2000 on 3 CPUs, an older SLURM: squeue gives the limit. */
static void test_slurm_squeue(void **state)
{
    (void)state;
    setenv("SLURM_JOBID", "99", 1);
    setenv("SLURM_JOB_CPUS_PER_NODE", "3(x2)", 1);
    setenv("SLURM_MEM_PER_CPU", "2000", 1);
    fake_squeue("echo 1-02:03:04");
    pm_request r;
    pm_request_detect(&r, 5000);
    assert_true(r.cpus == 3);
    assert_true(r.mem_per_cpu_bytes == 2000.0 * 1048576);
    assert_true(r.mem_bytes == 3 * 2000.0 * 1048576);
    assert_true(r.time_limit_s == 86400 + 2 * 3600 + 3 * 60 + 4);
    assert_string_equal(r.time_limit_from, "squeue");
    char buf[256] = "";
    char args[512];
    snprintf(args, sizeof args, "%s/args", tmpdir);
    FILE *f = fopen(args, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "-h -j 99 -o %l\n");
}

/* squeue failing, answering UNLIMITED, or hanging: no limit, and the
 * sampler goes on (the hanging one is killed at the bound). */
static void test_slurm_squeue_bad(void **state)
{
    (void)state;
    static const char *const bodies[] = {"echo 'slurm_load_jobs error' >&2; exit 1",
                                         "echo UNLIMITED", "exec sleep 30"};
    setenv("SLURM_JOB_ID", "7", 1);
    setenv("SLURM_MEM_PER_NODE", "0", 1); /* all the node's memory: not a number to hold to */
    for (size_t i = 0; i < N(bodies); i++) {
        fake_squeue(bodies[i]);
        pm_request r;
        pm_request_detect(&r, 300);
        assert_string_equal(r.scheduler, "slurm");
        assert_true(isnan(r.time_limit_s));
        assert_true(isnan(r.mem_bytes));
        assert_string_equal(r.time_limit_from, "");
    }
}

static void test_pbs_oar_none(void **state)
{
    (void)state;
    pm_request r;
    setenv("PBS_JOBID", "12.server", 1);
    setenv("PBS_WALLTIME", "3600", 1); /* Torque: seconds */
    setenv("PBS_NUM_PPN", "16", 1);
    pm_request_detect(&r, 0);
    assert_string_equal(r.scheduler, "pbs");
    assert_true(r.time_limit_s == 3600);
    assert_true(r.cpus == 16);
    setenv("PBS_WALLTIME", "01:30:00", 1);
    pm_request_detect(&r, 0);
    assert_true(r.time_limit_s == 5400);
    unsetenv("PBS_JOBID");
    setenv("OAR_JOB_ID", "5", 1);
    setenv("OAR_JOB_WALLTIME_SECONDS", "600", 1);
    pm_request_detect(&r, 0);
    assert_string_equal(r.scheduler, "oar");
    assert_true(r.time_limit_s == 600);
    unsetenv("OAR_JOB_ID");
    pm_request_detect(&r, 0);
    assert_string_equal(r.scheduler, "");
    cJSON *j = as_json(&r); /* outside a job: no "request" key */
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "request"));
    cJSON_Delete(j);
}

/* The note: only figures below 25 % of the request, in words. */
static void test_note(void **state)
{
    (void)state;
    pm_request_use u = {0};
    u.have = 1;
    u.wall_s = 7.3 * 60;
    u.time_limit_s = 2 * 3600;
    u.time_pct = u.wall_s / u.time_limit_s * 100; /* 6.08 % */
    u.mem_used_bytes = 1.9 * 1073741824.0;
    u.mem_req_bytes = 64 * 1073741824.0;
    u.mem_pct = u.mem_used_bytes / u.mem_req_bytes * 100; /* 2.97 % */
    u.cpus_req = 4;
    u.cpu_pct = 80;
    char out[512];
    assert_int_equal(pm_request_note(&u, out, sizeof out), 2);
    assert_string_equal(out, "Used 6.1 % of the requested walltime (7.3 min of 2.0 h); peak memory "
                             "3.0 % of the requested (1.9 GiB of 64.0 GiB per node).");
    u.time_pct = 30;
    u.mem_pct = 50;
    u.cpu_pct = 12;
    assert_int_equal(pm_request_note(&u, out, sizeof out), 1);
    assert_string_equal(out, "Used 12 % of the requested CPU time (4 CPUs per node).");
    u.cpu_pct = NAN; /* not known: no note */
    assert_int_equal(pm_request_note(&u, out, sizeof out), 0);
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test_setup_teardown(test_slurm_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slurm_squeue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slurm_squeue_bad, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pbs_oar_none, setup, teardown),
        cmocka_unit_test(test_note),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
