/* synth.h - synthetic perfmon profiles for tests, fixtures and benchmarks.
 *
 * Every value is a simple function of the sample index, so tests can state
 * the expected statistics by hand (formulas in tests/support/synth.c).  The
 * profiles are written with the ordinary pm_writer API, so they exercise the
 * same reader as real ones.
 */
#ifndef PERFMON_SYNTH_H
#define PERFMON_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/error.h"

enum {
    PM_SYNTH_IB = 1,      /* Infiniband counters */
    PM_SYNTH_RAPL = 2,    /* RAPL package-0, package-1, dram-0 */
    PM_SYNTH_PROC = 4,    /* process-tree columns */
    PM_SYNTH_SAMPLER = 8, /* sampler self-measurement */
    PM_SYNTH_ALL = 15
};

typedef struct pm_synth {
    const char *host;
    int format;           /* PM_FMT_BIN or PM_FMT_JSONL */
    size_t n;             /* samples */
    double start_s;       /* wall time of sample 0 (s since the epoch) */
    double interval_s;    /* sampling interval */
    int groups;           /* PM_SYNTH_* bits */
    double cpu_pct;       /* cpu.percent = cpu_pct (+ the wave below) */
    double cpu_wave;      /* + cpu_wave * sin(2 pi e / wave_period_s + wave_phase); */
    double wave_period_s; /*   0 = constant (and cpu.user grows exactly with it) */
    double wave_phase;
    size_t idle_from; /* if > 0: cpu.percent = idle_pct from this sample on */
    double idle_pct;
    double net_rate;         /* net.ext.bytes_sent grows by net_rate B/s */
    double power_w;          /* rapl.package-0 and -1 each at power_w W */
    uint64_t rapl_wrap;      /* RAPL column wrap (max_energy_range_uj + 1); 0 = none */
    double rss0, rss_growth; /* proc.rss = rss0 + rss_growth * elapsed s */
    size_t reset_at;         /* if > 0: net.ext.bytes_sent restarts from 0 here */
    size_t gap_at;           /* if > 0: cpu.percent not recorded at this sample */
    double wall_step_s;      /* wall clock stepped by this much at n/2 (mono unaffected) */
    int with_end;            /* write the end record */
    size_t ncpus;            /* cpu.ncpus */
    const char *job_id;      /* header job id; NULL = "synthetic" */
    const char *run_id;      /* header run id; NULL = none (as files before it) */
    int64_t pid;             /* header sampler pid; 0 = none */
} pm_synth;

/* Defaults: 60 samples at 1 s from 1.7e9, all groups, 50 % CPU, 1 MiB/s,
 * 100 W per package, 16 CPUs, binary, end record. */
void pm_synth_init(pm_synth *s, const char *host);

/* Write the profile to path (which must not exist). */
int pm_synth_write(const char *path, const pm_synth *s, pm_error *err) PM_WUR;

/* An SKA perfmon merged cpu_metrics.json of hosts x n samples with every
 * field SKA records, laid out as Python's json.dump(indent=4) writes it.
 * Returns 0, or -1 with errno set. */
int pm_synth_write_ska(const char *path, size_t hosts, size_t n);

/* A large job for the report's many-node tests and benchmarks (issue 18):
 * hosts profiles "nid00000".. of n samples at 1 s in dir (which must
 * exist), the nodes in three groups that behave differently, spread over
 * the host names: group 0 (4 in 10) busy early (70 % CPU + 25 sin over
 * one period: high in the first half, low in the second), group 1 (4 in
 * 10) the mirror image (busy late: the same mean), group 2 (2 in 10) steady
 * at 30 % with a short ripple; within a group the level varies by up to
 * 1 %.  Also idle nodes (2 % CPU from n/5 on), nodes that lost their last
 * tenth of samples and nodes that started 3 s late: pm_synth_group_of
 * says which.  Returns 0 or the first write error. */
enum { PM_SYNTH_IDLE = 3, PM_SYNTH_LOST = 4, PM_SYNTH_LATE = 5 };
int pm_synth_write_groups(const char *dir, size_t hosts, size_t n, pm_error *err) PM_WUR;
/* The group (0, 1, 2) of host k of pm_synth_write_groups, or the special
 * node it is (PM_SYNTH_IDLE, _LOST, _LATE). */
int pm_synth_group_of(size_t k);

#endif
