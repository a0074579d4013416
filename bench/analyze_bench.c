/* analyze_bench: generate N hosts x M samples of binary perfmon profiles
 * (pm_synth, via pm_writer) in a temporary directory, then time the
 * analysis to --stats and to --data.  Prints a table.
 *
 *   analyze_bench [HOSTS [SAMPLES]]      (default 64 86400)
 * Run from the source root (templates/metrics.json), or set
 * PERFMON_TEMPLATES. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perfmon/analysis.h"
#include "perfmon/export.h"
#include "perfmon/synth.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double dir_bytes(const char *dir, size_t hosts)
{
    double total = 0;
    char p[4096];
    for (size_t h = 0; h < hosts; h++) {
        struct stat st;
        snprintf(p, sizeof p, "%s/node%04zu.pmp", dir, h);
        if (stat(p, &st) == 0)
            total += (double)st.st_size;
    }
    return total;
}

int main(int argc, char **argv)
{
    size_t hosts = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
    size_t samples = argc > 2 ? strtoul(argv[2], NULL, 10) : 86400;
    const char *tdir = getenv("PERFMON_TEMPLATES");
    char catalog[4096];
    snprintf(catalog, sizeof catalog, "%s/metrics.json", tdir && *tdir ? tdir : "templates");
    char dir[] = "/tmp/pm-bench.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    pm_error err;
    pm_error_clear(&err);
    double t0 = now();
    for (size_t h = 0; h < hosts; h++) {
        char host[64], path[4200];
        snprintf(host, sizeof host, "node%04zu", h);
        snprintf(path, sizeof path, "%s/%s.pmp", dir, host);
        pm_synth s;
        pm_synth_init(&s, host);
        s.n = samples;
        s.start_s = 1.7e9 + (double)(h % 7) * 0.13; /* skewed starts */
        s.rapl_wrap = 262143328850ull + 1;
        s.rss_growth = 1000;
        if (pm_synth_write(path, &s, &err)) {
            fprintf(stderr, "analyze_bench: %s\n", err.msg);
            return 1;
        }
    }
    double t_gen = now() - t0;
    double bytes = dir_bytes(dir, hosts);

    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    o.catalog_path = catalog;
    const char *paths[1] = {dir};
    t0 = now();
    pm_analysis *a = NULL;
    if (pm_analysis_run(paths, 1, &o, &a, &err)) {
        fprintf(stderr, "analyze_bench: %s\n", err.msg);
        return 1;
    }
    double t_an = now() - t0;
    t0 = now();
    FILE *null = fopen("/dev/null", "w");
    if (!null || pm_stats_text(a, null, &err) || pm_stats_json(a, null, &err)) {
        fprintf(stderr, "analyze_bench: %s\n", err.msg);
        return 1;
    }
    fclose(null);
    double t_stats = now() - t0;
    char data[4200];
    snprintf(data, sizeof data, "%s/data", dir);
    t0 = now();
    if (pm_export_gnuplot(a, data, &err)) {
        fprintf(stderr, "analyze_bench: %s\n", err.msg);
        return 1;
    }
    double t_data = now() - t0;
    size_t nmetrics = a->nmetrics, ncols = a->hosts[0].prof->ncols;
    pm_analysis_free(a);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "analyze_bench: cleanup of %s failed\n", dir);

    double values = (double)hosts * (double)samples * (double)ncols;
    printf("analyze_bench: %zu hosts x %zu samples x %zu columns (%.0f MB binary, %zu metrics)\n",
           hosts, samples, ncols, bytes / 1e6, nmetrics);
    printf("  %-34s %9s\n", "step", "seconds");
    printf("  %-34s %9.2f\n", "generate profiles (pm_writer)", t_gen);
    printf("  %-34s %9.2f  (%.0f MB/s, %.0f Mvalues/s)\n", "read + analyse", t_an,
           bytes / 1e6 / t_an, values / 1e6 / t_an);
    printf("  %-34s %9.2f\n", "--stats (text + JSON)", t_stats);
    printf("  %-34s %9.2f\n", "--data (gnuplot files)", t_data);
    printf("  %-34s %9.2f\n", "total to --stats + --data", t_an + t_stats + t_data);
    printf("  %-34s %9.0f MB  (decoded values: %.0f MB)\n", "peak RSS", (double)ru.ru_maxrss / 1024,
           values * 8 / 1e6);
    return 0;
}
