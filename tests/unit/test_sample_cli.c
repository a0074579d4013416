/* perfmon-sample as a user runs it: wrapping a command, exit status,
 * kill -9, the IPC file, signals, and bad options.  The profiles written
 * are read back with the library's reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/profile.h"
#include "testutil.h"

static char sampler[4096];

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Start perfmon-sample with args; stderr goes to errfile. */
static pid_t spawn(const char *const *args, const char *errfile)
{
    /* execv wants char *const[]; copy the pointers (no cast of const). */
    char *argv[64];
    size_t n = 0;
    while (args[n] && n < 63)
        n++;
    memcpy(argv, args, n * sizeof *argv);
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 2);
            close(fd);
        }
        execv(sampler, argv);
        _exit(126);
    }
    return pid;
}

static int wait_status(pid_t pid)
{
    int ws;
    if (waitpid(pid, &ws, 0) != pid)
        return -1;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static int run(const char *const *args, const char *errfile)
{
    return wait_status(spawn(args, errfile));
}

/* The one profile with extension ext in dir (asserts there is exactly one). */
static void find_profile(const char *dir, const char *ext, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), el = strlen(ext);
        if (n > el && strcmp(e->d_name + n - el, ext) == 0 &&
            (strcmp(ext, ".pmp") != 0 || !strstr(e->d_name, ".pmp.jsonl"))) {
            snprintf(out, cap, "%s/%s", dir, e->d_name);
            found++;
        }
    }
    closedir(d);
    assert_int_equal(found, 1);
}

static char *slurp(const char *path)
{
    char *buf = NULL;
    size_t len;
    pm_error err;
    if (pm_read_whole(path, 1 << 20, &buf, &len, &err) != 0)
        return strdup("");
    return buf;
}

static void test_wraps_command(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char out[512], err[512], path[600];
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    const char *args[] = {sampler, "-o", out, "-i", "0.2", "-f", "both", "--", "sleep", "2", NULL};
    assert_int_equal(run(args, err), 0);
    char *e = slurp(err);
    assert_string_equal(e, ""); /* quiet by default */
    free(e);
    for (int k = 0; k < 2; k++) {
        find_profile(out, k ? ".pmp.jsonl" : ".pmp", path, sizeof path);
        pm_profile *p;
        pm_error perr;
        assert_int_equal(pm_profile_read(path, &p, &perr), 0);
        assert_true(p->n >= 8);
        assert_true(p->n <= 13);
        assert_string_equal(p->info.job_id,
                            getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : "local");
        assert_non_null(strstr(p->info.command, "sleep 2"));
        assert_true(p->has_end);
        assert_int_equal(p->end.exit_status, 0);
        assert_string_equal(p->end.reason, "command exited");
        /* Every group this machine has is there. */
        const char *need[] = {"cpu.percent", "mem.used", "net.ext.bytes_sent", "fs.out.usage_pct",
                              "proc.count",  "proc.rss", "proc.cpu_time",      "sampler.cpu_time",
                              "load.1",      NULL};
        for (int i = 0; need[i]; i++)
            if (pm_profile_column(p, need[i]) < 0)
                fail_msg("column %s missing", need[i]);
        int cnt = pm_profile_column(p, "proc.count");
        assert_true(p->values[cnt][1] >= 1.0);
        /* Timestamps increase and are spaced by the interval. */
        for (size_t i = 1; i < p->n; i++) {
            assert_true(p->t_mono_ns[i] > p->t_mono_ns[i - 1]);
            if (i + 1 < p->n) {
                int64_t d = p->t_mono_ns[i] - p->t_mono_ns[i - 1];
                assert_true(d > 150000000 && d < 250000000);
            }
        }
        assert_non_null(p->meta_json);
        assert_non_null(strstr(p->meta_json, "\"cpu\""));
        pm_profile_free(p);
    }
    pm_test_rmrf(dir);
    free(dir);
}

static void test_exit_status(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char out[512], err[512];
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    const char *a1[] = {sampler, "-o", out, "-i", "0.1", "--", "sh", "-c", "exit 7", NULL};
    assert_int_equal(run(a1, err), 7);
    const char *a2[] = {sampler, "-o", out, "-i", "0.1", "--", "sh", "-c", "kill -TERM $$", NULL};
    assert_int_equal(run(a2, err), 128 + SIGTERM);
    const char *a3[] = {sampler, "-o", out, "--", "/nonexistent/program", NULL};
    assert_int_equal(run(a3, err), 127);
    char *e = slurp(err);
    assert_non_null(strstr(e, "/nonexistent/program"));
    free(e);
    pm_test_rmrf(dir);
    free(dir);
}

/* kill -9 mid-run: everything written before is readable. */
static void test_kill9(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char out[512], err[512], path[600];
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    const char *args[] = {sampler, "-o", out, "-i", "0.05", NULL};
    pid_t pid = spawn(args, err);
    sleep_ms(1000);
    kill(pid, SIGKILL);
    assert_int_equal(wait_status(pid), 128 + SIGKILL);
    find_profile(out, ".pmp", path, sizeof path);
    pm_profile *p;
    pm_error perr;
    assert_int_equal(pm_profile_read(path, &p, &perr), 0);
    assert_true(p->n >= 10);
    assert_false(p->has_end);
    assert_int_equal(p->nwarnings, 0);
    pm_profile_free(p);
    pm_test_rmrf(dir);
    free(dir);
}

static void stop_case(const char *how)
{
    char *dir = strdup(pm_test_tmpdir());
    char out[512], err[512], ipc[512], path[600];
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    snprintf(ipc, sizeof ipc, "%s/ipc", dir);
    const char *args[] = {sampler, "-o", out, "-i", "0.1", "--ipc", ipc, NULL};
    pid_t pid = spawn(args, err);
    sleep_ms(600);
    if (strcmp(how, "ipc") == 0) {
        FILE *f = fopen(ipc, "w");
        assert_non_null(f);
        fputs("FINISHED\n", f);
        fclose(f);
    } else {
        kill(pid, strcmp(how, "SIGTERM") == 0 ? SIGTERM : SIGINT);
    }
    assert_int_equal(wait_status(pid), 0);
    find_profile(out, ".pmp", path, sizeof path);
    pm_profile *p;
    pm_error perr;
    assert_int_equal(pm_profile_read(path, &p, &perr), 0);
    assert_true(p->n >= 4);
    assert_true(p->has_end);
    assert_int_equal(p->end.samples, p->n);
    assert_string_equal(p->end.reason, strcmp(how, "ipc") == 0 ? "IPC file says FINISHED" : how);
    pm_profile_free(p);
    pm_test_rmrf(dir);
    free(dir);
}

static void test_ipc_file(void **state)
{
    (void)state;
    stop_case("ipc");
}

static void test_sigterm(void **state)
{
    (void)state;
    stop_case("SIGTERM");
    stop_case("SIGINT");
}

/* -p follows an existing process until it ends. */
static void test_pid_mode(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char out[512], err[512], path[600], pidbuf[32];
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    pid_t child = fork();
    if (child == 0) {
        execlp("sleep", "sleep", "1", (char *)NULL);
        _exit(127);
    }
    snprintf(pidbuf, sizeof pidbuf, "%d", (int)child);
    const char *args[] = {sampler, "-o", out, "-i", "0.1", "-p", pidbuf, NULL};
    pid_t pid = spawn(args, err);
    /* Reap the sleep so the sampler sees it gone (not a zombie). */
    assert_int_equal(wait_status(child), 0);
    assert_int_equal(wait_status(pid), 0);
    find_profile(out, ".pmp", path, sizeof path);
    pm_profile *p;
    pm_error perr;
    assert_int_equal(pm_profile_read(path, &p, &perr), 0);
    assert_true(p->n >= 5);
    assert_string_equal(p->end.reason, "monitored processes ended");
    pm_profile_free(p);
    pm_test_rmrf(dir);
    free(dir);
}

static void expect_usage(const char *const *args, const char *needle)
{
    char *dir = strdup(pm_test_tmpdir());
    char err[512];
    snprintf(err, sizeof err, "%s/err", dir);
    int st = run(args, err);
    char *e = slurp(err);
    if (st != 2 || !strstr(e, needle))
        fail_msg("status %d, stderr '%s', expected 2 and '%s'", st, e, needle);
    free(e);
    pm_test_rmrf(dir);
    free(dir);
}

static void test_bad_options(void **state)
{
    (void)state;
    const char *a1[] = {sampler, NULL};
    expect_usage(a1, "-o DIR is required");
    const char *a2[] = {sampler, "-o", "/tmp/x", "-i", "0.01", NULL};
    expect_usage(a2, "--interval");
    const char *a3[] = {sampler, "-o", "/tmp/x", "-i", "abc", NULL};
    expect_usage(a3, "not a duration");
    const char *a4[] = {sampler, "-o", "/tmp/x", "-p", "999999999", NULL};
    expect_usage(a4, "-p");
    const char *a5[] = {sampler, "-o", "/tmp/x", "--format", "xml", NULL};
    expect_usage(a5, "xml");
    const char *a6[] = {sampler, "-o", "/tmp/x", "--bogus", NULL};
    expect_usage(a6, "--bogus");
    const char *a7[] = {sampler, "-o", "/proc/perfmon-cannot-create", "--", "true", NULL};
    expect_usage(a7, "perfmon-cannot-create");
    const char *a8[] = {sampler, "-o", "/dev/null", NULL};
    expect_usage(a8, "/dev/null");
}

/* The filesystem fills up: recording stops with a message, the profile
 * stays readable, and the wrapped command's status is still returned. */
static void test_disk_full(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip(); /* needs root to mount a small tmpfs */
    char *dir = strdup(pm_test_tmpdir());
    char mnt[512], cmd[1200], err[512], path[700];
    snprintf(mnt, sizeof mnt, "%s/small", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    mkdir(mnt, 0755);
    snprintf(cmd, sizeof cmd, "mount -t tmpfs -o size=20k tmpfs '%s' 2>/dev/null", mnt);
    if (system(cmd) != 0) {
        fprintf(stderr, "SKIP disk-full test: cannot mount a tmpfs here\n");
        pm_test_rmrf(dir);
        free(dir);
        skip();
    }
    const char *args[] = {
        sampler, "-o", mnt, "-i", "0.05", "-f", "json", "--", "sh", "-c", "sleep 2; exit 5", NULL};
    assert_int_equal(run(args, err), 5);
    char *e = slurp(err);
    assert_non_null(strstr(e, "No space left on device"));
    free(e);
    find_profile(mnt, ".pmp.jsonl", path, sizeof path);
    pm_profile *p;
    pm_error perr;
    assert_int_equal(pm_profile_read(path, &p, &perr), 0);
    assert_true(p->n >= 3);
    for (size_t i = 1; i < p->n; i++)
        assert_true(p->t_mono_ns[i] > p->t_mono_ns[i - 1]);
    pm_profile_free(p);
    snprintf(cmd, sizeof cmd, "umount '%s'", mnt);
    assert_int_equal(system(cmd), 0);
    pm_test_rmrf(dir);
    free(dir);
}

/* The output directory is removed mid-run: the sampler notices within a
 * second, says so and creates the directory and the profile again with
 * everything recorded so far, instead of writing into a file nobody can
 * reach. */
static void test_dir_removed(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char out[512], err[512], cmd[700];
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    const char *args[] = {sampler, "-o", out, "-i", "0.1", "-d", "3", NULL};
    pid_t pid = spawn(args, err);
    sleep_ms(700);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
    assert_int_equal(system(cmd), 0);
    /* Created again with what was recorded before: nothing is lost. */
    assert_int_equal(wait_status(pid), 0);
    char *e = slurp(err);
    assert_non_null(strstr(e, "was removed; created again"));
    free(e);
    char path[600];
    find_profile(out, ".pmp", path, sizeof path);
    pm_profile *p;
    pm_error perr;
    assert_int_equal(pm_profile_read(path, &p, &perr), 0);
    assert_true(p->has_end);
    assert_int_equal(p->end.samples, p->n);
    assert_true(p->n >= 25);
    assert_int_equal(p->nwarnings, 0);
    for (size_t i = 1; i < p->n; i++)
        assert_true(p->t_mono_ns[i] - p->t_mono_ns[i - 1] < 500000000);
    pm_profile_free(p);
    pm_test_rmrf(dir);
    free(dir);
}

/* SIGSTOP/SIGCONT: the deadlines slept through are counted as missed,
 * not taken in a burst. */
static void test_stop_cont(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char out[512], err[512], path[600];
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    const char *args[] = {sampler, "-o", out, "-i", "0.1", "-d", "2.5", NULL};
    pid_t pid = spawn(args, err);
    sleep_ms(500);
    kill(pid, SIGSTOP);
    sleep_ms(1000);
    kill(pid, SIGCONT);
    assert_int_equal(wait_status(pid), 0);
    find_profile(out, ".pmp", path, sizeof path);
    pm_profile *p;
    pm_error perr;
    assert_int_equal(pm_profile_read(path, &p, &perr), 0);
    assert_true(p->has_end);
    assert_true(p->end.missed >= 7 && p->end.missed <= 12);
    assert_true(p->n >= 12 && p->n <= 20);
    pm_profile_free(p);
    pm_test_rmrf(dir);
    free(dir);
}

/* The tree grows with forks and its CPU time includes children that lived
 * shorter than one interval. */
static void test_tree_accounting(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char out[512], err[512], path[600];
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    struct rusage before, after;
    getrusage(RUSAGE_CHILDREN, &before);
    const char *script =
        "sleep 1 & sleep 1 & sleep 1 & wait; "
        "i=0; while [ $i -lt 40 ]; do "
        "sh -c 'x=0; while [ $x -lt 4000 ]; do x=$((x+1)); done'; i=$((i+1)); done";
    const char *args[] = {sampler, "-o", out, "-i", "0.2", "--", "sh", "-c", script, NULL};
    assert_int_equal(run(args, err), 0);
    getrusage(RUSAGE_CHILDREN, &after);
    find_profile(out, ".pmp", path, sizeof path);
    pm_profile *p;
    pm_error perr;
    assert_int_equal(pm_profile_read(path, &p, &perr), 0);
    int cnt = pm_profile_column(p, "proc.count"), cpu = pm_profile_column(p, "proc.cpu_time");
    double maxcount = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->values[cnt][i] > maxcount)
            maxcount = p->values[cnt][i];
    assert_true(maxcount >= 4.0); /* sh + three sleeps */
    double children = (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec) +
                      (double)(after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
                      (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec) / 1e6 +
                      (double)(after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6;
    double tree = p->values[cpu][p->n - 1];
    double self = (double)p->end.self_cpu_ns / 1e9;
    /* children = the command's tree + the sampler itself. */
    if (tree < 0.6 * (children - self) || tree > children + 0.05)
        fail_msg("tree CPU %.3f s, children %.3f s, sampler %.3f s", tree, children, self);
    pm_profile_free(p);
    pm_test_rmrf(dir);
    free(dir);
}

/* The highest value of column name in the profile in dir. */
static double column_max(const char *dir, const char *name)
{
    char path[600];
    find_profile(dir, ".pmp", path, sizeof path);
    pm_profile *p;
    pm_error perr;
    assert_int_equal(pm_profile_read(path, &p, &perr), 0);
    int c = pm_profile_column(p, name);
    assert_true(c >= 0);
    double max = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->values[c][i] > max)
            max = p->values[c][i];
    pm_profile_free(p);
    return max;
}

static void test_root_job_switching_user(void **state)
{
    (void)state;
    /* A job run as root whose children switch user (su, setpriv, an MPI
     * launcher): they and their own children are still the job.  sh (root)
     * + sleep (nobody) + sh (nobody) with its two sleeps = 5 processes. */
    if (getuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)
        skip(); /* needs root and setpriv(1) */
    char *dir = strdup(pm_test_tmpdir());
    char out[512], err[512];
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    const char *script = "nobody='/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups'; "
                         "$nobody sleep 1.5 & $nobody sh -c 'sleep 1.5 & sleep 1.5 & wait' & wait";
    const char *args[] = {sampler, "-o", out, "-i", "0.2", "--", "sh", "-c", script, NULL};
    assert_int_equal(run(args, err), 0);
    double maxcount = column_max(out, "proc.count");
    if (maxcount < 5.0)
        fail_msg("at most %g processes followed, expected 5", maxcount);
    pm_test_rmrf(dir);
    free(dir);
}

static void test_help(void **state)
{
    (void)state;
    char *dir = strdup(pm_test_tmpdir());
    char err[512];
    snprintf(err, sizeof err, "%s/err", dir);
    const char *args[] = {sampler, "--help", NULL};
    assert_int_equal(run(args, err), 0);
    pm_test_rmrf(dir);
    free(dir);
}

int main(void)
{
    const char *bin = getenv("PM_BIN");
    snprintf(sampler, sizeof sampler, "%s/perfmon-sample", bin ? bin : "build/release/bin");
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wraps_command),
        cmocka_unit_test(test_exit_status),
        cmocka_unit_test(test_kill9),
        cmocka_unit_test(test_ipc_file),
        cmocka_unit_test(test_sigterm),
        cmocka_unit_test(test_pid_mode),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_disk_full),
        cmocka_unit_test(test_dir_removed),
        cmocka_unit_test(test_stop_cont),
        cmocka_unit_test(test_tree_accounting),
        cmocka_unit_test(test_root_job_switching_user),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
