/* gate_sim.h - the rates of the regression gate on simulated benchmark
 * histories (docs/archive.md, "How often it cries wolf"): a test of 4
 * entries, each timing base * exp(N(0, 3 %)), under one of two tail
 * models, judged after every run by each entry alone (the gate before
 * confirmation) or by the gate across entries of archive_gate.h.
 * bench/gate_rates.c prints the table; tests/unit/test_archive_gate.c
 * asserts it on fewer seeds.  Deterministic for a seed.
 */
#ifndef PERFMON_GATE_SIM_H
#define PERFMON_GATE_SIM_H

#include <stddef.h>
#include <stdint.h>

#define PM_SIM_ENTRIES 4
#define PM_SIM_STABLE_RUNS 100 /* a stable history: runs 5 to 100 are judged */
#define PM_SIM_SLOW_AT 25      /* the first slowed run (1-based) */
#define PM_SIM_SLOW_RUNS 30
#define PM_SIM_RERUNS 2 /* the rerun protocol: at most two reruns in a pipeline */

enum pm_sim_model {
    PM_SIM_ENTRY_TAILS = 0, /* 5 % of entries and runs +15 % */
    PM_SIM_RUN_TAILS = 1    /* 5 % of runs, every entry +12 % */
};

enum pm_sim_method {
    PM_SIM_ALONE = 0, /* each entry alone: any entry beyond its noise fails the run */
    PM_SIM_GATE = 1   /* the gate across entries with confirmation */
};

typedef struct pm_sim_rates {
    size_t series;
    size_t checks, fails, suspects;           /* stable histories, each run checked once */
    size_t pipelines, pipeline_fails, reruns; /* the same with the rerun protocol */
    size_t all_at, all_by1;      /* every entry 10 % slower: failed at run 25, by run 26 */
    size_t one_by2;              /* one entry 10 % slower: failed by run 27 */
    size_t rerun_all, rerun_one; /* the first slowed pipeline fails with the rerun protocol */
    size_t cps_stable;           /* change points found in the stable histories (history) */
    size_t cps_found; /* slowed histories (every entry) with a change point found at 25 */
} pm_sim_rates;

/* The kinds of histories simulated (pm_sim_run_parts()). */
enum pm_sim_part {
    PM_SIM_STABLE = 1,    /* stable, each run checked once: checks, fails, suspects, cps_stable */
    PM_SIM_PIPELINES = 2, /* stable with the rerun protocol: pipelines, pipeline_fails, reruns */
    PM_SIM_SLOWED = 4,    /* slowed from run 25 on: all_at, all_by1, one_by2, rerun_*, cps_found */
    PM_SIM_ALL = 7
};

/* Simulate seeds histories of each kind from seed0 on.  Returns 0, or -1
 * when out of memory. */
int pm_sim_run(int model, int method, size_t seeds, uint64_t seed0, pm_sim_rates *out);
/* The same for the kinds in parts only (enum pm_sim_part): the slowed
 * histories are short and cheap, so a test can afford more of them. */
int pm_sim_run_parts(int model, int method, size_t seeds, uint64_t seed0, int parts,
                     pm_sim_rates *out);

#endif
