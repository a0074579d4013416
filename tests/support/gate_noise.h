/* gate_noise.h - reruns of one benchmark on a shared machine: a seeded
 * uniform generator (splitmix64), which the gate's simulated histories of
 * gate_sim.h draw from, and a one-benchmark timing model.
 *
 * Each timing is base * exp(e) with e the sum of
 *   - jitter: normal, standard deviation sd (1.5 % by default): caches,
 *     frequency, the scheduler;
 *   - a neighbour: with probability p_busy (1 run in 10) another job on
 *     the node slows the run by scale * (U^(-1/alpha) - 1), a Pareto tail
 *     (alpha 2, scale 2 %): mostly a few %, now and then 20 % or more.
 * A neighbour only ever slows a run down: the noise is one-sided and
 * heavy-tailed, as on a shared node.  Deterministic for a seed.
 */
#ifndef PERFMON_GATE_NOISE_H
#define PERFMON_GATE_NOISE_H

#include <stddef.h>
#include <stdint.h>

typedef struct pm_noise {
    uint64_t state;
    double sd, p_busy, scale, alpha;
} pm_noise;

/* Seed the generator with the defaults above. */
void pm_noise_init(pm_noise *g, uint64_t seed);
/* A uniform number in (0, 1). */
double pm_noise_uniform(pm_noise *g);
/* One rerun's timing of a benchmark whose undisturbed timing is base. */
double pm_noise_timing(pm_noise *g, double base);

#endif
