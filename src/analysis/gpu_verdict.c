/* GPU verdicts: what the GPUs really did, from SM activity rather than
 * NVML's "utilisation" (the share of time in which any kernel ran, which
 * one small kernel keeps at 100 %).  Semantics: docs/analysis.md, "GPU
 * verdicts"; thresholds in templates/rules.json.
 *
 * held_idle, starved, memory_bound and compute_bound walk a GPU's
 * samples: in memory from the series kept, under --stream in the
 * per-host step (pm_gpu_signs_host, called from stream.c's first pass
 * with the host's series), by the same function on the same values, so
 * that both modes give the same notes.  A sample counts where its SM
 * activity is a number: a gap (first sample, GPU lost) is neither idle
 * nor busy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_verdict.h"
#include "rule_plan.h"
#include "perfmon/mem.h"

static const struct {
    const char *name;
    int check;
} checks[] = {
    {"held_idle", PM_GPU_HELD_IDLE},       {"starved", PM_GPU_STARVED},
    {"memory_bound", PM_GPU_MEMORY_BOUND}, {"compute_bound", PM_GPU_COMPUTE_BOUND},
    {"one_idle", PM_GPU_ONE_IDLE},         {"unmeasured", PM_GPU_UNMEASURED},
};

/* The pipes a compute-bound GPU is bound by, as a sentence names them. */
static const struct {
    const char *metric;
    const char *words;
} pipes[] = {
    {"gpu_tensor_active", "tensor cores"},
    {"gpu_fp64_active", "FP64 pipe"},
    {"gpu_fp32_active", "FP32 pipe"},
    {"gpu_fp16_active", "FP16 pipe"},
};
#define NPIPES (sizeof pipes / sizeof pipes[0])

static double num(const cJSON *o, const char *key, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

int pm_gpu_rule_parse(const cJSON *o, double threshold, pm_gpu_rule *r, const char *path, size_t i,
                      pm_error *err)
{
    memset(r, 0, sizeof *r);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "check");
    for (size_t k = 0; cJSON_IsString(c) && k < sizeof checks / sizeof *checks; k++)
        if (strcmp(c->valuestring, checks[k].name) == 0)
            r->check = checks[k].check;
    if (!r->check)
        return pm_error_set(err, PM_EFORMAT,
                            "%s: rules[%zu].check: a gpu rule needs one of held_idle, starved, "
                            "memory_bound, compute_bound, one_idle, unmeasured",
                            path, i);
    r->threshold = threshold;
    r->util_min = num(o, "util_min", 80);
    r->sm_min = num(o, "sm_min", 5);
    r->min_share_pct = num(o, "min_share_pct", 50);
    r->ratio = num(o, "ratio", 2);
    r->min_duration_s = num(o, "min_duration_s", 0);
    if (!(threshold >= 0 && threshold <= 100) || !(r->util_min >= 0 && r->util_min <= 100) ||
        !(r->sm_min >= 0 && r->sm_min <= 100) ||
        !(r->min_share_pct > 0 && r->min_share_pct <= 100) || !(r->ratio >= 1 && r->ratio < 1e6) ||
        !(r->min_duration_s >= 0))
        return pm_error_set(
            err, PM_EFORMAT,
            "%s: rules[%zu]: a gpu rule needs 0 <= threshold <= 100, "
            "0 <= util_min <= 100, 0 <= sm_min <= 100, 0 < min_share_pct <= 100, ratio >= 1 and "
            "min_duration_s >= 0",
            path, i);
    return 0;
}

int pm_gpu_host_is_mig(const char *host)
{
    if (strncmp(host, "gpu-", 4) != 0)
        return 0;
    const char *p = host + 4;
    while (*p >= '0' && *p <= '9')
        p++;
    if (p == host + 4 || strncmp(p, ".mig", 4) != 0)
        return 0;
    const char *q = p + 4;
    while (*q >= '0' && *q <= '9')
        q++;
    return q > p + 4 && *q == '.';
}

/* Host h's series of catalog metric id; NULL if none.  With values
 * set, only a series that keeps its values (not under --stream). */
static const pm_series *series_of(const pm_analysis *a, const char *id, size_t h, int values)
{
    int m = pm_analysis_metric(a, id);
    if (m < 0 || !a->metrics[m].host)
        return NULL;
    const pm_series *s = a->metrics[m].host[h];
    /* --stream keeps some series' values for the report only: never used
     * here, so that its notes do not depend on the outputs asked for */
    if (!s || !s->n || (values && (a->opts.stream || !s->v || !s->t)))
        return NULL;
    return s;
}

/* The series a GPU's samples are walked in: SM activity, utilisation,
 * DRAM and the pipes; NULL where the GPU has none. */
typedef struct gpu_series {
    const pm_series *sm, *ut, *dram, *pipe[NPIPES];
} gpu_series;

static const pm_series *usable(const pm_series *s)
{
    return s && s->n && s->v && s->t ? s : NULL;
}

/* The mean of s over the samples where sel (or, without sel, every
 * sample) is set and s has a number; NaN when none. */
static double mean_where(const pm_series *s, const unsigned char *sel)
{
    double sum = 0;
    size_t n = 0;
    for (size_t k = 0; s && k < s->n; k++)
        if ((!sel || sel[k]) && isfinite(s->v[k])) {
            sum += s->v[k];
            n++;
        }
    return n ? sum / (double)n : NAN;
}

static int push(pm_gpu_finding **out, size_t *n, const pm_gpu_finding *f)
{
    pm_gpu_finding *g = pm_realloc_array(*out, *n + 1, sizeof *g);
    if (!g)
        return PM_ENOMEM;
    *out = g;
    g[(*n)++] = *f;
    return 0;
}

static int long_enough(const pm_analysis *a, const pm_gpu_rule *r, size_t h)
{
    return a->in.hosts[h].gpu && a->nodes[h].wall_time_s >= r->min_duration_s;
}

/* held_idle, starved: the share of the GPU's measured samples that are
 * idle (SM activity < threshold) or starved (utilisation >= util_min and
 * sm_min <= SM activity < threshold: an idle GPU is not starved). */
static int sign_share(const pm_gpu_rule *r, const gpu_series *gs, pm_node_sign *g)
{
    const pm_series *sm = gs->sm, *ut = gs->ut;
    if (!sm || (r->check == PM_GPU_STARVED && (!ut || ut->n != sm->n)))
        return 0;
    unsigned char *sel = calloc(sm->n, 1);
    if (!sel)
        return PM_ENOMEM;
    size_t measured = 0, hit = 0;
    double t = NAN, t_end = NAN;
    for (size_t k = 0; k < sm->n; k++) {
        double v = sm->v[k];
        double u = ut && ut->n == sm->n ? ut->v[k] : NAN;
        if (!isfinite(v) || (r->check == PM_GPU_STARVED && !isfinite(u)))
            continue;
        measured++;
        if (!(v < r->threshold) ||
            (r->check == PM_GPU_STARVED && (!(u >= r->util_min) || !(v >= r->sm_min))))
            continue;
        sel[k] = 1;
        hit++;
        if (isnan(t))
            t = sm->t[k];
        t_end = sm->t[k];
    }
    double share = measured ? 100.0 * (double)hit / (double)measured : NAN;
    if (hit && share >= r->min_share_pct) {
        /* held idle: the means over the whole job (what "utilisation"
         * said of it); starved: over the starved samples */
        g->value = share;
        g->t = t;
        g->t_end = t_end;
        g->before = mean_where(ut, r->check == PM_GPU_STARVED ? sel : NULL);
        g->after = mean_where(sm, r->check == PM_GPU_STARVED ? sel : NULL);
    }
    free(sel);
    return 0;
}

/* memory_bound, compute_bound: over the samples where the SMs worked
 * (SM activity >= 5 %), DRAM share against the busiest pipe. */
static int sign_bound(const pm_gpu_rule *r, const gpu_series *gs, pm_node_sign *g)
{
    const pm_series *sm = gs->sm, *dram = gs->dram;
    if (!sm || !dram || dram->n != sm->n)
        return 0;
    unsigned char *sel = calloc(sm->n, 1);
    if (!sel)
        return PM_ENOMEM;
    double t = NAN, t_end = NAN;
    for (size_t k = 0; k < sm->n; k++)
        if (sm->v[k] >= 5) {
            sel[k] = 1;
            if (isnan(t))
                t = sm->t[k];
            t_end = sm->t[k];
        }
    double d = mean_where(dram, sel), best = NAN;
    size_t which = NPIPES;
    for (size_t p = 0; p < NPIPES; p++) {
        const pm_series *ps = gs->pipe[p];
        double m = ps && ps->n == sm->n ? mean_where(ps, sel) : NAN;
        if (isfinite(m) && (which == NPIPES || m > best)) {
            best = m;
            which = p;
        }
    }
    free(sel);
    if (isnan(t) || !isfinite(d) || which == NPIPES)
        return 0;
    int fire = r->check == PM_GPU_MEMORY_BOUND ? d >= r->threshold && d >= r->ratio * best
                                               : best >= r->threshold && best >= r->ratio * d;
    if (fire) {
        g->value = r->check == PM_GPU_MEMORY_BOUND ? d : best;
        g->t = t;
        g->t_end = t_end;
        g->before = d;
        g->after = best;
        g->what = (int)which;
    }
    return 0;
}

int pm_gpu_rule_walks(const pm_gpu_rule *r)
{
    return r->check == PM_GPU_HELD_IDLE || r->check == PM_GPU_STARVED ||
           r->check == PM_GPU_MEMORY_BOUND || r->check == PM_GPU_COMPUTE_BOUND;
}

/* Rule r's finding on one GPU from its series: g->value NaN when none. */
static int sign_of(const pm_gpu_rule *r, const gpu_series *gs, pm_node_sign *g)
{
    *g = (pm_node_sign){NAN, NAN, NAN, NAN, NAN, 0, 0};
    if (r->check == PM_GPU_HELD_IDLE || r->check == PM_GPU_STARVED)
        return sign_share(r, gs, g);
    return sign_bound(r, gs, g);
}

int pm_gpu_signs_host(const pm_analysis *a, size_t h, pm_series *const *ser, pm_node_summary *s)
{
    const pm_rule_plan *p = a->rule_plan;
    for (size_t i = 0; i < PM_NODE_GPU_SIGNS; i++)
        s->gpu_sign[i] = (pm_node_sign){NAN, NAN, NAN, NAN, NAN, 0, 0};
    if (!p || !p->ngpu || !a->in.hosts[h].gpu)
        return 0;
    gpu_series gs;
    memset(&gs, 0, sizeof gs);
    const pm_catalog *cat = a->catalog;
    for (size_t d = 0; d < cat->n; d++) {
        const char *id = cat->m[d].id;
        const pm_series *x = usable(ser[d]);
        if (!strcmp(id, "gpu_sm_active"))
            gs.sm = x;
        else if (!strcmp(id, "gpu_util"))
            gs.ut = x;
        else if (!strcmp(id, "gpu_dram_active"))
            gs.dram = x;
        for (size_t k = 0; k < NPIPES; k++)
            if (!strcmp(id, pipes[k].metric))
                gs.pipe[k] = x;
    }
    int rc = 0;
    for (size_t i = 0; i < p->ngpu && !rc; i++)
        rc = sign_of(&p->gpu[i], &gs, &s->gpu_sign[i]);
    return rc;
}

/* held_idle, starved, memory_bound, compute_bound on GPU h: in memory
 * from its series, under --stream from the per-host step's finding
 * (slot: the rule's place among the plan's gpu rules). */
static int check_walk(const pm_analysis *a, const pm_gpu_rule *r, int slot, size_t h,
                      pm_gpu_finding **out, size_t *n)
{
    pm_node_sign g;
    if (a->opts.stream) {
        if (slot < 0 || slot >= PM_NODE_GPU_SIGNS || !a->rule_plan ||
            (size_t)slot >= a->rule_plan->ngpu)
            return 0;
        g = a->nodes[h].gpu_sign[slot];
    } else {
        gpu_series gs = {series_of(a, "gpu_sm_active", h, 1),
                         series_of(a, "gpu_util", h, 1),
                         series_of(a, "gpu_dram_active", h, 1),
                         {NULL}};
        for (size_t k = 0; k < NPIPES; k++)
            gs.pipe[k] = series_of(a, pipes[k].metric, h, 1);
        int rc = sign_of(r, &gs, &g);
        if (rc)
            return rc;
    }
    if (isnan(g.value))
        return 0;
    pm_gpu_finding f;
    memset(&f, 0, sizeof f);
    f.host = (int)h;
    f.value = g.value;
    f.t = g.t;
    f.t_end = g.t_end;
    f.before = g.before;
    f.after = g.after;
    if (r->check == PM_GPU_MEMORY_BOUND || r->check == PM_GPU_COMPUTE_BOUND)
        snprintf(f.what, sizeof f.what, "%s",
                 g.what >= 0 && (size_t)g.what < NPIPES ? pipes[g.what].words : "");
    return push(out, n, &f);
}

/* one_idle: physical GPUs (not MIG instances), each judged by its mean
 * SM activity, by its mean utilisation where SM activity is not measured
 * (the series' statistics, which --stream keeps too). */
static int check_one_idle(const pm_analysis *a, const pm_gpu_rule *r, pm_gpu_finding **out,
                          size_t *n)
{
    double *act = pm_alloc_array(a->in.nhosts ? a->in.nhosts : 1, sizeof *act);
    if (!act)
        return PM_ENOMEM;
    size_t nidle = 0, nworked = 0;
    double worked = 0;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        act[h] = NAN;
        if (!long_enough(a, r, h) || pm_gpu_host_is_mig(a->in.hosts[h].name))
            continue;
        const pm_series *sm = series_of(a, "gpu_sm_active", h, 0);
        const pm_series *ut = series_of(a, "gpu_util", h, 0);
        act[h] = sm ? sm->st.mean : ut ? ut->st.mean : NAN;
        if (act[h] < r->threshold)
            nidle++;
        else if (act[h] >= r->threshold) {
            nworked++;
            worked += act[h];
        }
    }
    int rc = 0;
    for (size_t h = 0; h < a->in.nhosts && !rc && nidle && nworked; h++) {
        if (!(act[h] < r->threshold))
            continue;
        pm_gpu_finding f;
        memset(&f, 0, sizeof f);
        f.host = (int)h;
        f.value = act[h];
        f.after = worked / (double)nworked;
        f.others = nworked;
        const pm_host *ho = &a->in.hosts[h]; /* --stream keeps t_first, t_last only */
        f.t = ho->t && ho->n ? ho->t[0] : ho->t_first;
        f.t_end = ho->t && ho->n ? ho->t[ho->n - 1] : ho->t_last;
        snprintf(f.what, sizeof f.what, "%s",
                 series_of(a, "gpu_sm_active", h, 0) ? "SM activity" : "utilisation");
        rc = push(out, n, &f);
    }
    free(act);
    return rc;
}

/* unmeasured: one finding naming the GPUs that have utilisation but no
 * SM activity. */
static int check_unmeasured(const pm_analysis *a, const pm_gpu_rule *r, pm_gpu_finding **out,
                            size_t *n)
{
    pm_gpu_finding f;
    memset(&f, 0, sizeof f);
    f.host = -1;
    f.t = f.t_end = NAN;
    size_t len = 0;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        if (!long_enough(a, r, h) || series_of(a, "gpu_sm_active", h, 0) ||
            !series_of(a, "gpu_util", h, 0))
            continue;
        if (f.host < 0)
            f.host = (int)h;
        if (f.others < 3 && len < sizeof f.what) {
            int w = snprintf(f.what + len, sizeof f.what - len, "%s%s", f.others ? ", " : "",
                             a->in.hosts[h].name);
            len = w < 0 ? sizeof f.what : len + (size_t)w;
        } else if (f.others == 3 && len + 5 < sizeof f.what) {
            snprintf(f.what + len, sizeof f.what - len, ", ...");
            len += 5;
        }
        f.others++;
    }
    return f.others ? push(out, n, &f) : 0;
}

int pm_gpu_verdicts(const pm_analysis *a, const pm_gpu_rule *r, int slot, pm_gpu_finding **out,
                    size_t *n)
{
    *out = NULL;
    *n = 0;
    int rc = 0;
    if (r->check == PM_GPU_ONE_IDLE)
        rc = check_one_idle(a, r, out, n);
    else if (r->check == PM_GPU_UNMEASURED)
        rc = check_unmeasured(a, r, out, n);
    else
        for (size_t h = 0; h < a->in.nhosts && !rc; h++) {
            if (!long_enough(a, r, h))
                continue;
            rc = check_walk(a, r, slot, h, out, n);
        }
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}
