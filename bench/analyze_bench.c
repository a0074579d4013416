/* analyze_bench: generate N hosts x M samples of binary perfmon profiles
 * (pm_synth, via pm_writer) in a temporary directory, then time the
 * analysis to --stats and to --data (three runs, the median of each
 * step).  Then the same for an SKA perfmon
 * merged cpu_metrics.json of H hosts x S samples (its pandas pipeline's
 * compute part takes 2.5-3.5 s and about 230 MB on 16 x 3,600).
 * Prints tables.
 *
 *   analyze_bench [HOSTS [SAMPLES [SKA_HOSTS [SKA_SAMPLES]]]]
 *   (default 64 86400 16 3600; a count of 0 skips that part)
 * Run from the source root (templates/metrics.json), or set
 * PERFMON_TEMPLATES.  PM_BENCH_DIR=DIR keeps the generated profiles in DIR
 * (and reuses them when DIR already holds them), for profiling runs;
 * PM_BENCH_FORMAT=jsonl writes them as JSON Lines (under the same names),
 * whose reading costs more (bench/mpi.sh). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perfmon/analysis.h"
#include "perfmon/export.h"
#include "perfmon/profile.h"
#include "../tests/support/synth.h"

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

/* The profile reader alone, on as many threads as the analysis uses, to
 * show how much of "read + analyse" is reading. */
typedef struct rd {
    const char *dir;
    size_t hosts, next;
    pthread_mutex_t lock;
    int failed;
} rd;

static void *read_only(void *arg)
{
    rd *r = arg;
    pm_read_buf rb = {0}; /* as the analysis reads: into a buffer per thread */
    for (;;) {
        pthread_mutex_lock(&r->lock);
        size_t h = r->next++;
        pthread_mutex_unlock(&r->lock);
        if (h >= r->hosts)
            break;
        char path[4200];
        snprintf(path, sizeof path, "%s/node%04zu.pmp", r->dir, h);
        pm_profile *p = NULL;
        pm_error err;
        if (pm_profile_read_hinted(path, NULL, &rb, &p, &err) != 0)
            r->failed = 1;
        pm_profile_free(p);
    }
    pm_read_buf_free(&rb);
    return NULL;
}

static double time_read_only(const char *dir, size_t hosts)
{
    rd r = {dir, hosts, 0, PTHREAD_MUTEX_INITIALIZER, 0};
    size_t n = pm_thread_count(hosts);
    pthread_t th[8];
    int started = 0;
    double t0 = now();
    for (size_t i = 1; i < n && i < 8; i++)
        if (pthread_create(&th[started], NULL, read_only, &r) == 0)
            started++;
    read_only(&r);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    return r.failed ? -1 : now() - t0;
}

/* The median of three. */
static double median3(const double *x)
{
    double a = x[0], b = x[1], c = x[2];
    if (a > b) {
        double t = a;
        a = b;
        b = t;
    }
    return c < a ? a : c > b ? b : c;
}

static long peak_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int bench_ska(size_t hosts, size_t n, const char *catalog)
{
    char dir[] = "/tmp/pm-bench-ska.XXXXXX";
    if (!mkdtemp(dir))
        return -1;
    char path[4200];
    snprintf(path, sizeof path, "%s/cpu_metrics.json", dir);
    double t0 = now();
    if (pm_synth_write_ska(path, hosts, n) != 0)
        return -1;
    double t_gen = now() - t0;
    struct stat st;
    double bytes = stat(path, &st) == 0 ? (double)st.st_size : 0;
    long rss0 = peak_kb();
    pm_analyze_opts o;
    pm_analyze_opts_init(&o);
    o.catalog_path = catalog;
    pm_error err;
    const char *paths[1] = {path};
    /* Each mode three times (the first run in a process pays for fresh
     * memory): the median. */
    double times[2][3];
    for (int compat = 0; compat < 2; compat++) {
        o.compat_ska = compat;
        for (int run = 0; run < 3; run++) {
            pm_analysis *a = NULL;
            t0 = now();
            FILE *null = fopen("/dev/null", "w");
            if (pm_analysis_run(paths, 1, &o, &a, &err) || !null || pm_stats_text(a, null, &err)) {
                fprintf(stderr, "analyze_bench: %s\n", err.msg);
                return -1;
            }
            fclose(null);
            times[compat][run] = now() - t0;
            pm_analysis_free(a);
        }
    }
    long rss1 = peak_kb();
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "analyze_bench: cleanup of %s failed\n", dir);
    printf("analyze_bench: SKA cpu_metrics.json, %zu hosts x %zu samples (%.0f MB of JSON)\n",
           hosts, n, bytes / 1e6);
    printf("  %-34s %9.2f\n", "generate the JSON", t_gen);
    printf("  %-34s %9.3f  (runs: %.3f %.3f %.3f)\n", "read + analyse + --stats", median3(times[0]),
           times[0][0], times[0][1], times[0][2]);
    printf("  %-34s %9.3f  (runs: %.3f %.3f %.3f)\n", "the same with --compat=ska",
           median3(times[1]), times[1][0], times[1][1], times[1][2]);
    printf("  %-34s %9.0f MB  (before: %.0f MB)\n", "peak RSS after", (double)rss1 / 1024,
           (double)rss0 / 1024);
    return 0;
}

int main(int argc, char **argv)
{
    size_t hosts = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
    size_t samples = argc > 2 ? strtoul(argv[2], NULL, 10) : 86400;
    size_t ska_hosts = argc > 3 ? strtoul(argv[3], NULL, 10) : 16;
    size_t ska_samples = argc > 4 ? strtoul(argv[4], NULL, 10) : 3600;
    const char *tdir = getenv("PERFMON_TEMPLATES");
    char catalog[4096];
    snprintf(catalog, sizeof catalog, "%s/metrics.json", tdir && *tdir ? tdir : "templates");
    /* SKA first, so its peak memory is not hidden by the larger part. */
    if (ska_hosts && ska_samples && bench_ska(ska_hosts, ska_samples, catalog) != 0)
        return 1;
    if (!hosts || !samples)
        return 0;
    char dir[4096] = "/tmp/pm-bench.XXXXXX";
    const char *keep = getenv("PM_BENCH_DIR");
    if (keep && *keep) {
        snprintf(dir, sizeof dir, "%s", keep);
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            perror(dir);
            return 1;
        }
    } else if (!mkdtemp(dir)) {
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
        struct stat have;
        if (keep && stat(path, &have) == 0 && have.st_size > 0)
            continue;
        pm_synth s;
        pm_synth_init(&s, host);
        s.n = samples;
        s.start_s = 1.7e9 + (double)(h % 7) * 0.13; /* skewed starts */
        s.rapl_wrap = 262143328850ull + 1;
        s.rss_growth = 1000;
        const char *fmt = getenv("PM_BENCH_FORMAT");
        if (fmt && strcmp(fmt, "jsonl") == 0)
            s.format = PM_FMT_JSONL;
        if (pm_synth_write(path, &s, &err)) {
            fprintf(stderr, "analyze_bench: %s\n", err.msg);
            return 1;
        }
    }
    double t_gen = now() - t0;
    double bytes = dir_bytes(dir, hosts);

    /* The whole path three times (a virtual machine's first touch of
     * memory varies from run to run): the median of each step. */
    enum { RUNS = 3 };
    double t_an[RUNS], t_stats[RUNS], t_data[RUNS], t_total[RUNS];
    size_t nmetrics = 0, ncols = 0;
    char data[4200];
    snprintf(data, sizeof data, keep && *keep ? "%s.data" : "%s/data", dir);
    for (int run = 0; run < RUNS; run++) {
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
        t_an[run] = now() - t0;
        t0 = now();
        FILE *null = fopen("/dev/null", "w");
        if (!null || pm_stats_text(a, null, &err) || pm_stats_json(a, null, &err)) {
            fprintf(stderr, "analyze_bench: %s\n", err.msg);
            return 1;
        }
        fclose(null);
        t_stats[run] = now() - t0;
        t0 = now();
        if (pm_export_gnuplot(a, data, &err)) {
            fprintf(stderr, "analyze_bench: %s\n", err.msg);
            return 1;
        }
        t_data[run] = now() - t0;
        t_total[run] = t_an[run] + t_stats[run] + t_data[run];
        nmetrics = a->nmetrics;
        ncols = a->in.hosts[0].prof->ncols;
        pm_analysis_free(a);
    }
    /* After the analysis, so that its memory churn is not charged to it. */
    double t_read = time_read_only(dir, hosts);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char cmd[8400];
    if (keep && *keep)
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", data);
    else
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "analyze_bench: cleanup of %s failed\n", dir);

    double values = (double)hosts * (double)samples * (double)ncols;
    printf("analyze_bench: %zu hosts x %zu samples x %zu columns (%.0f MB binary, %zu metrics)\n",
           hosts, samples, ncols, bytes / 1e6, nmetrics);
    printf("  %-34s %9s\n", "step", "seconds");
    printf("  %-34s %9.2f\n", "generate profiles (pm_writer)", t_gen);
    double an = median3(t_an), total = median3(t_total);
    printf("  %-34s %9.2f  (%.0f MB/s, %.0f Mvalues/s)\n", "read + analyse", an, bytes / 1e6 / an,
           values / 1e6 / an);
    printf("  %-34s %9.2f  (profile reader alone, same threads)\n", "  of which reading", t_read);
    printf("  %-34s %9.2f\n", "--stats (text + JSON)", median3(t_stats));
    printf("  %-34s %9.2f\n", "--data (gnuplot files)", median3(t_data));
    printf("  %-34s %9.2f  (runs: %.2f %.2f %.2f)\n", "total to --stats + --data", total,
           t_total[0], t_total[1], t_total[2]);
    printf("  %-34s %9.0f MB  (decoded values: %.0f MB)\n", "peak RSS", (double)ru.ru_maxrss / 1024,
           values * 8 / 1e6);
    return 0;
}
