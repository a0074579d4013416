/* phase_contrib.h - each phase's figures, one host at a time (phases.c,
 * phase_use.c).
 * Private to src/analysis. */
#ifndef PM_ANALYSIS_PHASE_CONTRIB_H
#define PM_ANALYSIS_PHASE_CONTRIB_H

#include <stddef.h>

#include "perfmon/analysis.h"
#include "perfmon/phase.h"

/* Each phase's figures from the series of the hosts it covers, computed
 * one host at a time (pm_phase_contrib_host) so that the stream mode
 * fills them in its fold and the in-memory path from its series, and
 * pm_phase_stats_compute combines them in the same order in both. */
enum {
    PM_PU_CPU_PCT_S,               /* cpu_usage's step integral (NaN: no series) */
    PM_PU_CPU_COV,                 /* its seconds with a value */
    PM_PU_MEM,                     /* step max of proc_rss, else mem_used, converted */
    PM_PU_BYTES,                   /* disk_read, disk_write, net_out, net_in: 4 */
    PM_PU_CPU_J = PM_PU_BYTES + 4, /* RAPL's packages and DRAM: their counters' increase (J) */
    PM_PU_N
};
/* How a GPU's energy in a phase was found (pm_phase_contrib.gpu_src). */
enum { PM_GPU_J_COUNTER = 1, PM_GPU_J_POWER = 2 };
typedef struct pm_phase_contrib {
    size_t ncat;     /* catalog metrics */
    size_t *first;   /* [phases + 1]: phase i's members x ncat means at mean + first[i] */
    double *mean;    /* window means by (phase, member of its node, catalog metric) */
    double *use;     /* [phases * PM_PU_N] the figures of phase_use.c, of the node */
    size_t *hfirst;  /* [nhosts + 1]: host h fills entries hfirst[h] .. hfirst[h + 1] - 1 */
    size_t *hphase;  /* of phase hphase[k], */
    size_t *hmember; /* as member hmember[k] of its node, or SIZE_MAX: the use */
    /* [first[phases] / ncat] by (phase, member of its node): a GPU's energy
     * in the phase (J; NaN on the node itself and where not measured) and
     * its source (PM_GPU_J_*, 0 none) */
    double *gpu_j;
    unsigned char *gpu_src;
} pm_phase_contrib;

/* Which slots each host fills (a->in.phases, a->in.hosts set).  Returns 0 or
 * PM_ENOMEM; pm_phase_contrib_free(NULL) and of a zeroed one are no-ops. */
int pm_phase_contrib_init(const pm_analysis *a, pm_phase_contrib *pc);
void pm_phase_contrib_free(pm_phase_contrib *pc);
/* Host h's slots, from its series by catalog index (ser[d], NULL where
 * the host has none); slots are the host's own, so hosts may run at once. */
void pm_phase_contrib_host(const pm_analysis *a, pm_phase_contrib *pc, size_t h,
                           pm_series *const *ser);
/* The use figures of phase p of host h (phase_use.c). */
void pm_phase_use_host(const pm_analysis *a, const pm_phase *p, pm_series *const *ser, double *use);
/* GPU host h's energy in phase p (phase_use.c): its energy counter's
 * increase over the phase (gpu_energy_power; *src PM_GPU_J_COUNTER), else,
 * where the GPU has no counter or it has no value over the phase, its
 * power integrated (gpu_power; *src PM_GPU_J_POWER); NaN and *src 0 where
 * neither is there. */
double pm_phase_gpu_energy(const pm_analysis *a, const pm_phase *p, pm_series *const *ser,
                           unsigned char *src);

/* pm_phase_stats_compute with the contributions given (the stream mode's),
 * or computed here from the series when given is NULL. */
int pm_phase_stats_from(pm_analysis *a, pm_phase_contrib *given, pm_error *err) PM_WUR;

struct pm_phase_stats;
/* The resource use per phase kind of st (phase_use.c), from each phase's
 * figures in pc: fills the cpu_*, mem_*, disk_* and net_* fields of every
 * kind. */
void pm_phase_use_compute(const pm_analysis *a, const pm_phase_contrib *pc,
                          struct pm_phase_stats *st);

#endif
