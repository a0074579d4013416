/* report_bench: the cost of the PDF job report and the PNG plots, through
 * the perfmon-analyze command a user runs.
 *
 *   report_bench BIN_DIR [HOSTS SAMPLES [SKA_HOSTS SKA_SAMPLES]]
 *
 * 1. HOSTS perfmon profiles of SAMPLES samples at 1 s (CPU waves, a counter
 *    reset per host so repaired spans are drawn), then
 *    `perfmon-analyze DIR --pdf` and `... --pdf --plots DIR`;
 * 2. an SKA perfmon cpu_metrics.json of SKA_HOSTS x SKA_SAMPLES, then
 *    `perfmon-analyze FILE --pdf` and `perfmon-analyze FILE --stats`.
 * Wall time, CPU time and peak RSS of each command come from wait4().
 * Targets (issue 15, against SKA perfmon's 19.7 s and 329 MB for plots +
 * PDF and 229 MB for its compute part on 16 x 3,600): --pdf on 16 x 86,400
 * in at most 3 s; on SKA 16 x 3,600 at most 0.39 s and 33 MB; --stats on
 * SKA 16 x 3,600 at most 23 MB; the SKA PDF at most 1 MB.  PM_BENCH_KEEP=1
 * keeps the inputs and PDFs (the directory is printed) for profiling.
 * PM_BENCH_STATS_ONLY=1 runs `perfmon-analyze DIR --stats` alone (make
 * bench: its peak RSS on 64 x 86,400, the figure issue 18 bounds); with
 * PM_BENCH_STREAM=1 also `--stats --stream`, with PM_BENCH_STREAM=only
 * that alone (a job too big for the in-memory analysis); PM_BENCH_PDF=1
 * adds `--pdf` to each (issue 18's `--stats --pdf` targets).
 * PM_BENCH_GEN_ONLY=1 only generates the profiles and prints where they
 * are (left for the caller to remove), for measuring by hand. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../tests/support/synth.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Run argv (its stdout to /dev/null); wall seconds, CPU seconds (user +
 * system: on a shared machine the wall time also counts waiting for a
 * CPU) and peak RSS (MiB) of the child. */
static int run(char *const argv[], double *wall, double *cpu, double *rss_mb)
{
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        execv(argv[0], argv);
        fprintf(stderr, "report_bench: %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) != pid)
        return -1;
    *wall = now() - t0;
    *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    *rss_mb = (double)ru.ru_maxrss / 1024;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static long file_kb(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)(st.st_size / 1024) : -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: report_bench BIN_DIR [HOSTS SAMPLES [SKA_HOSTS SKA_SAMPLES]]\n");
        return 2;
    }
    const char *bin = argv[1];
    size_t hosts = argc > 2 ? strtoul(argv[2], NULL, 10) : 16;
    size_t samples = argc > 3 ? strtoul(argv[3], NULL, 10) : 86400;
    size_t ska_hosts = argc > 4 ? strtoul(argv[4], NULL, 10) : 16;
    size_t ska_samples = argc > 5 ? strtoul(argv[5], NULL, 10) : 3600;
    char dir[] = "/tmp/pm-report-bench.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("report_bench: mkdtemp");
        return 1;
    }
    char exe[4200], job[4200], pdf[4200], plots[4200], ska[4200];
    snprintf(exe, sizeof exe, "%s/perfmon-analyze", bin);
    snprintf(job, sizeof job, "%s/job", dir);
    snprintf(pdf, sizeof pdf, "%s/report.pdf", dir);
    snprintf(plots, sizeof plots, "%s/plots", dir);
    snprintf(ska, sizeof ska, "%s/cpu_metrics.json", dir);
    mkdir(job, 0755);

    double t0 = now();
    for (size_t h = 0; h < hosts; h++) {
        char host[64], path[4300];
        snprintf(host, sizeof host, "node%03zu", h);
        snprintf(path, sizeof path, "%s/%s.pmp", job, host);
        pm_synth s;
        pm_synth_init(&s, host);
        s.n = samples;
        s.cpu_pct = 30 + (double)(h * 11 % 50);
        s.cpu_wave = 15;
        s.wave_period_s = 3600;
        s.wave_phase = (double)h * 0.7;
        s.reset_at = samples / 3 + h * 97;
        pm_error err;
        if (pm_synth_write(path, &s, &err)) {
            fprintf(stderr, "report_bench: %s\n", err.msg);
            return 1;
        }
    }
    double t_gen = now() - t0;
    if (getenv("PM_BENCH_GEN_ONLY")) {
        printf("report_bench: %zu hosts x %zu samples generated in %.1f s, in %s\n", hosts, samples,
               t_gen, job);
        return 0;
    }
    int bad = 0;
    if (getenv("PM_BENCH_STATS_ONLY")) {
        double w = NAN, c = NAN, r = NAN, ws = NAN, cs = NAN, rs = NAN;
        char o_s[] = "--stats", o_quiet[] = "-q", o_stream[] = "--stream", o_pdf[] = "--pdf";
        const char *st = getenv("PM_BENCH_STREAM");
        int with_pdf = getenv("PM_BENCH_PDF") != NULL;
        char *a[] = {exe, job, o_s, o_quiet, with_pdf ? o_pdf : NULL, pdf, NULL};
        char *as[] = {exe, job, o_s, o_quiet, o_stream, with_pdf ? o_pdf : NULL, pdf, NULL};
        if (!st || strcmp(st, "only") != 0)
            bad |= run(a, &w, &c, &r);
        if (st)
            bad |= run(as, &ws, &cs, &rs);
        char rm[4300];
        snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
        if (getenv("PM_BENCH_KEEP"))
            printf("report_bench: inputs kept in %s\n", dir);
        else if (system(rm) != 0)
            fprintf(stderr, "report_bench: cleanup of %s failed\n", dir);
        printf("report_bench: %zu hosts x %zu samples (generated in %.1f s)\n", hosts, samples,
               t_gen);
        printf("  %-40s %8s %8s %10s\n", "command", "wall s", "cpu s", "peak MiB");
        if (!isnan(w))
            printf("  %-40s %8.2f %8.2f %10.1f\n", with_pdf ? "--stats --pdf" : "--stats", w, c, r);
        if (!isnan(ws))
            printf("  %-40s %8.2f %8.2f %10.1f\n",
                   with_pdf ? "--stats --pdf --stream" : "--stats --stream", ws, cs, rs);
        if (bad)
            fprintf(stderr, "report_bench: a command failed\n");
        return bad ? 1 : 0;
    }
    double w1, c1, r1, w2, c2, r2, w3, c3, r3, w4, c4, r4;
    char o_pdf[] = "--pdf", o_plots[] = "--plots", o_q[] = "-q", o_stats[] = "--stats";
    char *a1[] = {exe, job, o_pdf, pdf, o_q, NULL};
    bad |= run(a1, &w1, &c1, &r1);
    long kb = file_kb(pdf);
    char *a2[] = {exe, job, o_pdf, pdf, o_plots, plots, o_q, NULL};
    bad |= run(a2, &w2, &c2, &r2);
    t0 = now();
    if (pm_synth_write_ska(ska, ska_hosts, ska_samples) != 0) {
        perror("report_bench: SKA JSON");
        return 1;
    }
    double t_ska = now() - t0;
    char *a3[] = {exe, ska, o_pdf, pdf, o_q, NULL};
    bad |= run(a3, &w3, &c3, &r3);
    long ska_kb = file_kb(pdf);
    char *a4[] = {exe, ska, o_stats, o_q, NULL};
    bad |= run(a4, &w4, &c4, &r4);

    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (getenv("PM_BENCH_KEEP"))
        printf("report_bench: inputs kept in %s\n", dir);
    else if (system(cmd) != 0)
        fprintf(stderr, "report_bench: cleanup of %s failed\n", dir);
    printf("report_bench: %zu hosts x %zu samples (generated in %.1f s); SKA %zu x %zu (%.1f s)\n",
           hosts, samples, t_gen, ska_hosts, ska_samples, t_ska);
    printf("  %-40s %8s %8s %10s\n", "command", "wall s", "cpu s", "peak MiB");
    printf("  %-40s %8.2f %8.2f %10.1f  (PDF %ld KiB; target <= 3 s)\n", "--pdf", w1, c1, r1, kb);
    printf("  %-40s %8.2f %8.2f %10.1f\n", "--pdf --plots (PNG at 200 dpi)", w2, c2, r2);
    printf("  %-40s %8.2f %8.2f %10.1f  (PDF %ld KiB; targets <= 0.39 s, 33 MB, PDF <= 1 MB)\n",
           "SKA cpu_metrics.json --pdf", w3, c3, r3, ska_kb);
    printf("  %-40s %8.2f %8.2f %10.1f  (target <= 23 MB)\n", "SKA cpu_metrics.json --stats", w4,
           c4, r4);
    if (bad)
        fprintf(stderr, "report_bench: a command failed\n");
    return bad ? 1 : 0;
}
