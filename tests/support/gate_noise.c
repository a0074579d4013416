/* The shared machine's noise of gate_noise.h. */
#include <math.h>

#include "gate_noise.h"

void pm_noise_init(pm_noise *g, uint64_t seed)
{
    g->state = seed * 0x9E3779B97F4A7C15ull + 1;
    g->sd = 0.015;
    g->p_busy = 0.10;
    g->scale = 0.02;
    g->alpha = 2.0;
}

/* splitmix64 (Steele, Lea, Flood 2014). */
static uint64_t next(pm_noise *g)
{
    uint64_t z = (g->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double pm_noise_uniform(pm_noise *g)
{
    return ((double)(next(g) >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
}

double pm_noise_timing(pm_noise *g, double base)
{
    /* Box-Muller: one normal number per call (the second is dropped, so
     * every call draws the same count of uniforms). */
    double u1 = pm_noise_uniform(g), u2 = pm_noise_uniform(g);
    double e = g->sd * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
    double busy = pm_noise_uniform(g), u3 = pm_noise_uniform(g);
    if (busy < g->p_busy)
        e += g->scale * (pow(u3, -1 / g->alpha) - 1);
    return base * exp(e);
}
