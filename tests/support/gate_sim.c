/* Simulated benchmark histories judged by the gate (see gate_sim.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gate_noise.h"
#include "gate_sim.h"
#include "perfmon/archive_changepoint.h"
#include "perfmon/archive_check.h"
#include "perfmon/archive_gate.h"

#define E PM_SIM_ENTRIES
#define MAXRUNS (3 * PM_SIM_STABLE_RUNS) /* with reruns */

typedef struct hist {
    double v[E][MAXRUNS];
    size_t run[MAXRUNS];
    size_t n;
} hist;

/* One run of the test: slow is the factor of the slowed entries (every
 * entry, or entry 0 only when one is set). */
static void draw(pm_noise *g, int model, double slow, int one, hist *h)
{
    static const double base[E] = {2.5, 0.04, 13.0, 0.7};
    int run_tail = model == PM_SIM_RUN_TAILS && pm_noise_uniform(g) < 0.05;
    for (int e = 0; e < E; e++) {
        double u1 = pm_noise_uniform(g), u2 = pm_noise_uniform(g);
        double x = 0.03 * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
        double tail = pm_noise_uniform(g);
        double f = model == PM_SIM_ENTRY_TAILS ? (tail < 0.05 ? 1.15 : 1) : (run_tail ? 1.12 : 1);
        h->v[e][h->n] = base[e] * exp(x) * f * (one && e != 0 ? 1 : slow);
    }
    h->run[h->n] = h->n;
    h->n++;
}

/* The verdict on the latest run: PM_GATE_OK, _SUSPECT or _REGRESSION
 * (PM_GATE_SHORT before the history is long enough). */
static int judge(const hist *h, int method)
{
    pm_check_opts o;
    pm_check_opts_init(&o);
    if (method == PM_SIM_ALONE) {
        int v = PM_GATE_OK;
        for (int e = 0; e < E; e++) {
            pm_check_result r;
            pm_check_series(h->v[e], h->n, &o, &r);
            if (r.verdict == PM_CHECK_SHORT)
                return PM_GATE_SHORT;
            if (r.verdict == PM_CHECK_REGRESSION)
                v = PM_GATE_REGRESSION;
        }
        return v;
    }
    pm_gate_entry x[E];
    for (int e = 0; e < E; e++) {
        memset(&x[e], 0, sizeof x[e]);
        x[e].v = h->v[e];
        x[e].run = h->run;
        x[e].n = h->n;
        x[e].o = o;
        x[e].gated = 1;
    }
    pm_gate_opts g;
    pm_gate_opts_init(&g);
    pm_gate_test t;
    pm_error err;
    if (pm_gate_judge(x, E, h->n, &g, &t, &err) != 0)
        return -1;
    int v = t.verdict == PM_GATE_SHORT ? PM_GATE_OK : t.verdict;
    for (int e = 0; e < E; e++) {
        if (x[e].verdict == PM_GATE_SHORT)
            return PM_GATE_SHORT;
        if (x[e].verdict == PM_GATE_REGRESSION) {
            v = PM_GATE_REGRESSION;
        } else if (x[e].verdict == PM_GATE_SUSPECT && v == PM_GATE_OK)
            v = PM_GATE_SUSPECT;
    }
    return v;
}

/* A pipeline with the rerun protocol: check; on suspect, rerun once
 * (another run of the same kind) and check again.  Returns the final
 * verdict; *reran is set when it reran. */
static int pipeline(pm_noise *g, int model, int method, double slow, int one, hist *h, int *reran)
{
    draw(g, model, slow, one, h);
    int v = judge(h, method);
    *reran = 0;
    while (v == PM_GATE_SUSPECT && *reran < PM_SIM_RERUNS && h->n < MAXRUNS) {
        ++*reran;
        draw(g, model, slow, one, h);
        v = judge(h, method);
    }
    return v;
}

static size_t changepoints_at(const hist *h, size_t at, size_t *total)
{
    size_t found = 0;
    *total = 0;
    pm_cp_opts co;
    pm_cp_opts_init(&co);
    for (int e = 0; e < E; e++) {
        pm_cp *cp = NULL;
        size_t n = 0;
        pm_error err;
        if (pm_cp_find(h->v[e], h->n, &co, &cp, &n, &err) != 0)
            continue;
        *total += n;
        for (size_t i = 0; i < n; i++)
            found += cp[i].at == at;
        free(cp);
    }
    return found;
}

/* The generator's state for history seed s: splitmix64's finaliser of s,
 * so that the streams of seeds s and s + 1 are unrelated (pm_noise_init()
 * alone starts seed s + 1 one draw after seed s: with 12 draws a run
 * under per-entry tails, the history of seed s + 12 was that of seed s
 * one run later, and 1,000 seeds held far fewer independent histories). */
static void seed_noise(pm_noise *g, uint64_t s)
{
    uint64_t z = s + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    pm_noise_init(g, z ^ (z >> 31));
}

int pm_sim_run(int model, int method, size_t seeds, uint64_t seed0, pm_sim_rates *out)
{
    return pm_sim_run_parts(model, method, seeds, seed0, PM_SIM_ALL, out);
}

int pm_sim_run_parts(int model, int method, size_t seeds, uint64_t seed0, int parts,
                     pm_sim_rates *out)
{
    memset(out, 0, sizeof *out);
    hist *h = malloc(sizeof *h);
    if (!h)
        return -1;
    for (size_t s = 0; s < seeds; s++) {
        pm_noise g;
        out->series++;
        /* stable: each run checked once */
        seed_noise(&g, seed0 + s);
        size_t total;
        if (parts & PM_SIM_STABLE) {
            h->n = 0;
            for (int i = 0; i < PM_SIM_STABLE_RUNS; i++) {
                draw(&g, model, 1, 0, h);
                int v = judge(h, method);
                if (v == PM_GATE_SHORT)
                    continue;
                out->checks++;
                out->fails += v == PM_GATE_REGRESSION;
                out->suspects += v == PM_GATE_SUSPECT;
            }
            (void)changepoints_at(h, 0, &total);
            out->cps_stable += total;
        }
        /* stable with the rerun protocol */
        seed_noise(&g, seed0 + s + 7000000);
        if (parts & PM_SIM_PIPELINES) {
            h->n = 0;
            for (int i = 0; i < PM_SIM_STABLE_RUNS && h->n < MAXRUNS - 1; i++) {
                int reran, v = pipeline(&g, model, method, 1, 0, h, &reran);
                if (v == PM_GATE_SHORT)
                    continue;
                out->pipelines++;
                out->reruns += (size_t)reran;
                out->pipeline_fails += v == PM_GATE_REGRESSION;
            }
        }
        /* every entry, then one entry, 10 % slower from run 25 on */
        for (int one = 0; one < 2 && (parts & PM_SIM_SLOWED); one++) {
            seed_noise(&g, seed0 + s + (one ? 2000000 : 1000000));
            h->n = 0;
            int failed = 0;
            for (int i = 1; i <= PM_SIM_SLOW_RUNS; i++) {
                draw(&g, model, i >= PM_SIM_SLOW_AT ? 1.10 : 1, one, h);
                int v = judge(h, method);
                if (i < PM_SIM_SLOW_AT || failed || v != PM_GATE_REGRESSION)
                    continue;
                failed = i;
            }
            if (!one) {
                out->all_at += failed == PM_SIM_SLOW_AT;
                out->all_by1 += failed && failed <= PM_SIM_SLOW_AT + 1;
                out->cps_found += changepoints_at(h, PM_SIM_SLOW_AT - 1, &total) > 0;
            } else {
                out->one_by2 += failed && failed <= PM_SIM_SLOW_AT + 2;
            }
            /* the first slowed pipeline, with the rerun protocol */
            seed_noise(&g, seed0 + s + (one ? 4000000 : 3000000));
            h->n = 0;
            for (int i = 1; i < PM_SIM_SLOW_AT; i++)
                draw(&g, model, 1, one, h);
            int reran, v = pipeline(&g, model, method, 1.10, one, h, &reran);
            if (one)
                out->rerun_one += v == PM_GATE_REGRESSION;
            else
                out->rerun_all += v == PM_GATE_REGRESSION;
        }
    }
    free(h);
    return 0;
}
