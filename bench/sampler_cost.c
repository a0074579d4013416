/* sampler_cost: read perfmon profiles and report what the sampler cost
 * (its own CPU time per sample, peak RSS, timing quality), from the
 * sampler.* columns and the end record.  Used by bench/run.sh. */
#include <math.h>
#include <stdio.h>

#include "perfmon/profile.h"

int main(int argc, char **argv)
{
    int bad = 0;
    printf("%-40s %8s %12s %12s %10s %8s %8s\n", "profile", "samples", "cpu/sample", "wall/sample",
           "peak RSS", "late", "missed");
    for (int a = 1; a < argc; a++) {
        pm_profile *p;
        pm_error err;
        if (pm_profile_read(argv[a], &p, &err) != 0) {
            fprintf(stderr, "%s\n", err.msg);
            bad = 1;
            continue;
        }
        int cpu = pm_profile_column(p, "sampler.cpu_time");
        int rss = pm_profile_column(p, "sampler.rss");
        int dur = pm_profile_column(p, "sampler.duration");
        if (cpu < 0 || rss < 0 || dur < 0 || p->n < 12) {
            fprintf(stderr, "%s: no sampler columns or too few samples\n", argv[a]);
            pm_profile_free(p);
            bad = 1;
            continue;
        }
        /* Skip the first samples: they include start-up (hardware
         * discovery, first listing of /proc). */
        size_t first = 10, last = p->n - 1;
        double cpu_per = (p->values[cpu][last] - p->values[cpu][first]) / (double)(last - first);
        double wall = 0, peak = 0;
        for (size_t i = first; i <= last; i++) {
            wall += p->values[dur][i];
            if (p->values[rss][i] > peak)
                peak = p->values[rss][i];
        }
        wall /= (double)(last - first + 1);
        if (p->has_end && p->end.self_maxrss_kb * 1024.0 > peak)
            peak = p->end.self_maxrss_kb * 1024.0;
        printf("%-40s %8zu %9.3f ms %9.3f ms %7.2f MiB %8llu %8llu\n", argv[a], p->n, cpu_per * 1e3,
               wall * 1e3, peak / 1048576.0, (unsigned long long)(p->has_end ? p->end.late : 0),
               (unsigned long long)(p->has_end ? p->end.missed : 0));
        pm_profile_free(p);
    }
    return bad;
}
