/* The rates of the regression gate on simulated histories (docs/archive.md,
 * "How often it cries wolf"): each entry judged alone, then the gate
 * across entries with confirmation, under both tail models.
 *   gate_rates [SEEDS]   (default 1000) */
#include <stdio.h>
#include <stdlib.h>

#include "../tests/support/gate_sim.h"

static double pct(size_t a, size_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0;
}

int main(int argc, char **argv)
{
    size_t seeds = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
    if (seeds == 0 || seeds > 1000000) {
        fprintf(stderr, "usage: gate_rates [SEEDS from 1 to 1000000]\n");
        return 2;
    }
    static const char *const models[] = {"per-entry tails (5 % of entries and runs +15 %)",
                                         "whole-run tails (5 % of runs, every entry +12 %)"};
    static const char *const methods[] = {"each entry alone", "the gate"};
    printf("%zu seeds; 4 entries, 3 %% log-normal noise; stable histories of %d runs (each run "
           "checked from run 5 on); a 10 %% slowdown from run %d on\n",
           seeds, PM_SIM_STABLE_RUNS, PM_SIM_SLOW_AT);
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 2; k++) {
            pm_sim_rates r;
            if (pm_sim_run(m, k, seeds, 1, &r) != 0) {
                fprintf(stderr, "gate_rates: out of memory\n");
                return 3;
            }
            printf("\n%s, %s:\n", models[m], methods[k]);
            printf("  false failures      %zu of %zu checks (%.2f %%), suspect %zu (%.2f %%)\n",
                   r.fails, r.checks, pct(r.fails, r.checks), r.suspects,
                   pct(r.suspects, r.checks));
            printf("  with reruns         %zu of %zu pipelines fail (%.2f %%), %zu reruns "
                   "(%.2f %%)\n",
                   r.pipeline_fails, r.pipelines, pct(r.pipeline_fails, r.pipelines), r.reruns,
                   pct(r.reruns, r.pipelines));
            printf("  every entry +10 %%   failed at run %d in %.1f %%, by run %d in %.1f %%\n",
                   PM_SIM_SLOW_AT, pct(r.all_at, r.series), PM_SIM_SLOW_AT + 1,
                   pct(r.all_by1, r.series));
            printf("  one entry +10 %%     failed by run %d in %.1f %%\n", PM_SIM_SLOW_AT + 2,
                   pct(r.one_by2, r.series));
            printf("  first slowed pipeline, rerun protocol: every entry %.1f %%, one entry "
                   "%.1f %%\n",
                   pct(r.rerun_all, r.series), pct(r.rerun_one, r.series));
            printf("  change points: %.2f per stable history of 4 entries x %d runs; the "
                   "every-entry step found at run %d in %.1f %%\n",
                   (double)r.cps_stable / (double)r.series, PM_SIM_STABLE_RUNS, PM_SIM_SLOW_AT,
                   pct(r.cps_found, r.series));
        }
    return ferror(stdout) || fflush(stdout) ? 3 : 0;
}
