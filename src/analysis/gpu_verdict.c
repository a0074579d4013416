/* GPU verdicts: what the GPUs really did, from SM activity rather than
 * NVML's "utilisation" (the share of time in which any kernel ran, which
 * one small kernel keeps at 100 %).  Semantics: docs/analysis.md, "GPU
 * verdicts"; thresholds in templates/rules.json.
 *
 * The checks walk a GPU's samples (series values) where they are kept;
 * with --stream, which keeps no values, they find nothing (said in the
 * docs).  A sample counts where its SM activity is a number: a gap
 * (first sample, GPU lost) is neither idle nor busy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_verdict.h"
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

static const pm_series *series(const pm_analysis *a, const char *id, size_t h)
{
    return series_of(a, id, h, 1);
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
    return a->hosts[h].gpu && a->nodes[h].wall_time_s >= r->min_duration_s;
}

/* held_idle, starved: the share of the GPU's measured samples that are
 * idle (SM activity < threshold) or starved (utilisation >= util_min and
 * sm_min <= SM activity < threshold: an idle GPU is not starved). */
static int check_share(const pm_analysis *a, const pm_gpu_rule *r, size_t h, pm_gpu_finding **out,
                       size_t *n)
{
    const pm_series *sm = series(a, "gpu_sm_active", h);
    const pm_series *ut = series(a, "gpu_util", h);
    if (!sm || (r->check == PM_GPU_STARVED && (!ut || ut->n != sm->n)))
        return 0;
    unsigned char *sel = calloc(sm->n, 1);
    if (!sel)
        return PM_ENOMEM;
    size_t measured = 0, hit = 0;
    pm_gpu_finding f;
    memset(&f, 0, sizeof f);
    f.host = (int)h;
    f.t = f.t_end = NAN;
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
        if (isnan(f.t))
            f.t = sm->t[k];
        f.t_end = sm->t[k];
    }
    int rc = 0;
    f.value = measured ? 100.0 * (double)hit / (double)measured : NAN;
    if (hit && f.value >= r->min_share_pct) {
        /* held idle: the means over the whole job (what "utilisation"
         * said of it); starved: over the starved samples */
        f.before = mean_where(ut, r->check == PM_GPU_STARVED ? sel : NULL);
        f.after = mean_where(sm, r->check == PM_GPU_STARVED ? sel : NULL);
        rc = push(out, n, &f);
    }
    free(sel);
    return rc;
}

/* memory_bound, compute_bound: over the samples where the SMs worked
 * (SM activity >= 5 %), DRAM share against the busiest pipe. */
static int check_bound(const pm_analysis *a, const pm_gpu_rule *r, size_t h, pm_gpu_finding **out,
                       size_t *n)
{
    const pm_series *sm = series(a, "gpu_sm_active", h);
    const pm_series *dram = series(a, "gpu_dram_active", h);
    if (!sm || !dram || dram->n != sm->n)
        return 0;
    unsigned char *sel = calloc(sm->n, 1);
    if (!sel)
        return PM_ENOMEM;
    pm_gpu_finding f;
    memset(&f, 0, sizeof f);
    f.host = (int)h;
    f.t = f.t_end = NAN;
    for (size_t k = 0; k < sm->n; k++)
        if (sm->v[k] >= 5) {
            sel[k] = 1;
            if (isnan(f.t))
                f.t = sm->t[k];
            f.t_end = sm->t[k];
        }
    double d = mean_where(dram, sel), best = NAN;
    size_t which = NPIPES;
    for (size_t p = 0; p < NPIPES; p++) {
        const pm_series *ps = series(a, pipes[p].metric, h);
        double m = ps && ps->n == sm->n ? mean_where(ps, sel) : NAN;
        if (isfinite(m) && (which == NPIPES || m > best)) {
            best = m;
            which = p;
        }
    }
    free(sel);
    if (isnan(f.t) || !isfinite(d) || which == NPIPES)
        return 0;
    f.before = d;
    f.after = best;
    snprintf(f.what, sizeof f.what, "%s", pipes[which].words);
    int fire = r->check == PM_GPU_MEMORY_BOUND ? d >= r->threshold && d >= r->ratio * best
                                               : best >= r->threshold && best >= r->ratio * d;
    f.value = r->check == PM_GPU_MEMORY_BOUND ? d : best;
    return fire ? push(out, n, &f) : 0;
}

/* one_idle: physical GPUs (not MIG instances), each judged by its mean
 * SM activity, by its mean utilisation where SM activity is not measured
 * (the series' statistics, which --stream keeps too). */
static int check_one_idle(const pm_analysis *a, const pm_gpu_rule *r, pm_gpu_finding **out,
                          size_t *n)
{
    double *act = pm_alloc_array(a->nhosts ? a->nhosts : 1, sizeof *act);
    if (!act)
        return PM_ENOMEM;
    size_t nidle = 0, nworked = 0;
    double worked = 0;
    for (size_t h = 0; h < a->nhosts; h++) {
        act[h] = NAN;
        if (!long_enough(a, r, h) || pm_gpu_host_is_mig(a->hosts[h].name))
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
    for (size_t h = 0; h < a->nhosts && !rc && nidle && nworked; h++) {
        if (!(act[h] < r->threshold))
            continue;
        pm_gpu_finding f;
        memset(&f, 0, sizeof f);
        f.host = (int)h;
        f.value = act[h];
        f.after = worked / (double)nworked;
        f.others = nworked;
        const pm_host *ho = &a->hosts[h]; /* --stream keeps t_first, t_last only */
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
    for (size_t h = 0; h < a->nhosts; h++) {
        if (!long_enough(a, r, h) || series_of(a, "gpu_sm_active", h, 0) ||
            !series_of(a, "gpu_util", h, 0))
            continue;
        if (f.host < 0)
            f.host = (int)h;
        if (f.others < 3 && len < sizeof f.what) {
            int w = snprintf(f.what + len, sizeof f.what - len, "%s%s", f.others ? ", " : "",
                             a->hosts[h].name);
            len = w < 0 ? sizeof f.what : len + (size_t)w;
        } else if (f.others == 3 && len + 5 < sizeof f.what) {
            snprintf(f.what + len, sizeof f.what - len, ", ...");
            len += 5;
        }
        f.others++;
    }
    return f.others ? push(out, n, &f) : 0;
}

int pm_gpu_verdicts(const pm_analysis *a, const pm_gpu_rule *r, pm_gpu_finding **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    int rc = 0;
    if (r->check == PM_GPU_ONE_IDLE)
        rc = check_one_idle(a, r, out, n);
    else if (r->check == PM_GPU_UNMEASURED)
        rc = check_unmeasured(a, r, out, n);
    else
        for (size_t h = 0; h < a->nhosts && !rc; h++) {
            if (!long_enough(a, r, h))
                continue;
            if (r->check == PM_GPU_HELD_IDLE || r->check == PM_GPU_STARVED)
                rc = check_share(a, r, h, out, n);
            else
                rc = check_bound(a, r, h, out, n);
        }
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}
