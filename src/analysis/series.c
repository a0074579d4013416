/* Per-point series operations (docs/analysis.md, "Rates, unwrapping and repairs"). */
#include "perfmon/series.h"
#include "perfmon/stats.h"
#include "perfmon/invariant.h"

#include <stdint.h>
#include <math.h>
#include <string.h>

static const char *const QNAMES[PM_Q_N] = {"ok",           "wrap",    "reset", "gap",
                                           "interpolated", "dropped", "held"};
static const char *const RNAMES[] = {"hold", "interp", "zero", "drop"};

const char *pm_quality_name(int q)
{
    return q >= 0 && q < PM_Q_N ? QNAMES[q] : "?";
}

int pm_repair_parse(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, RNAMES[i]) == 0)
            return i;
    return -1;
}

const char *pm_repair_name(int mode)
{
    return mode >= 0 && mode < 4 ? RNAMES[mode] : "?";
}

/* The series invariant once times are cleaned: the kept indices (all of
 * 0..n-1 when keep is NULL) increase, and so do their finite times. */
__attribute__((unused)) static int times_increasing(const double *t, const size_t *keep, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        size_t a = keep ? keep[i - 1] : i - 1, b = keep ? keep[i] : i;
        if (!(a < b && isfinite(t[a]) && isfinite(t[b]) && t[a] < t[b]))
            return 0;
    }
    return 1;
}

size_t pm_time_increasing(const double *t, size_t n, size_t *keep, size_t *ndropped)
{
    size_t k = 0;
    double last = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(t[i]) && t[i] > last) {
            keep[k++] = i;
            last = t[i];
        }
    }
    PM_ASSERT(k <= n);
    PM_ASSERT(times_increasing(t, keep, k));
    if (ndropped)
        *ndropped = n - k;
    return k;
}

size_t pm_unwrap(double *v, size_t n, double modulus, uint8_t *q)
{
    if (!(modulus > 0))
        return 0;
    double offset = 0, prev = NAN;
    size_t wraps = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        double raw = v[i];
        if (!isnan(prev) && raw < prev) {
            offset += modulus;
            wraps++;
            if (q)
                q[i] = PM_Q_WRAP;
        }
        prev = raw;
        v[i] = raw + offset;
    }
    return wraps;
}

void pm_rate(const double *t, const double *v, size_t n, double *out, uint8_t *q)
{
    if (n == 0)
        return;
    out[0] = NAN;
    q[0] = PM_Q_GAP;
    for (size_t i = 1; i < n; i++) {
        double dt = t[i] - t[i - 1];
        if (isnan(v[i]) || isnan(v[i - 1]) || !(dt > 0)) {
            out[i] = NAN;
            q[i] = PM_Q_GAP;
            continue;
        }
        out[i] = (v[i] - v[i - 1]) / dt;
        if (q[i] != PM_Q_WRAP)
            q[i] = PM_Q_OK;
    }
}

size_t pm_repair(double *v, uint8_t *q, size_t n, int mode)
{
    size_t count = 0;
    double last = 0;     /* preceding valid value; 0 at the start (hold) */
    double before = NAN; /* preceding valid original value (interp) */
    size_t next_i = 0;   /* cached index of the next valid value (interp) */
    double next_v = NAN;
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        if (v[i] >= 0) {
            last = before = v[i];
            continue;
        }
        count++;
        q[i] = PM_Q_RESET;
        switch (mode) {
        case PM_REPAIR_ZERO: v[i] = 0; break;
        case PM_REPAIR_DROP:
            v[i] = NAN;
            q[i] = PM_Q_DROPPED;
            break;
        case PM_REPAIR_INTERP:
            /* Neighbours are the nearest valid points of the original
             * series; the forward search is cached so a run of negatives
             * costs O(n), not O(n^2). */
            if (next_i <= i) {
                next_v = NAN;
                for (next_i = i + 1; next_i < n; next_i++)
                    if (!isnan(v[next_i]) && v[next_i] >= 0) {
                        next_v = v[next_i];
                        break;
                    }
            }
            PM_ASSERT(next_i > i && next_i <= n); /* the look-ahead cursor */
            if (!isnan(before) && !isnan(next_v))
                v[i] = (before + next_v) / 2;
            else if (!isnan(before))
                v[i] = before;
            else if (!isnan(next_v))
                v[i] = next_v;
            else
                v[i] = 0;
            break;
        default: /* hold */ v[i] = last; break;
        }
    }
    return count;
}

size_t pm_ska_replace_neg(double *v, size_t n)
{
    size_t changed = 0;
    double last = NAN;
    for (size_t i = 0; i < n; i++) {
        if (!isnan(v[i]) && v[i] >= 0) {
            last = v[i];
            continue;
        }
        v[i] = isnan(last) ? 0 : last;
        changed++;
    }
    return changed;
}

void pm_qcounts_add(pm_qcounts *c, const uint8_t *q, size_t n)
{
    /* Most points are PM_Q_OK (0): 8 of them are counted at once, and
     * only a word with another flag is counted point by point. */
    size_t i = 0, ok = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, q + i, sizeof w);
        if (w == 0) {
            ok += 8;
            continue;
        }
        for (size_t j = i; j < i + 8; j++)
            if (q[j] < PM_Q_N)
                c->n[q[j]]++;
    }
    for (; i < n; i++)
        if (q[i] < PM_Q_N)
            c->n[q[i]]++;
    c->n[PM_Q_OK] += ok;
}

/* The median time between consecutive valid points of v when it is more
 * than 1.5 sample intervals (a column recorded only every few samples),
 * else 0.  scratch holds n doubles and is overwritten. */
static double sparse_gap(const double *t, const double *v, size_t n, double interval,
                         double *scratch)
{
    /* Called on a cleaned time axis (pm_time_increasing), never SKA's. */
    PM_ASSERT(times_increasing(t, NULL, n));
    if (!(interval > 0))
        return 0;
    /* First only count the gaps longer than 1.5 intervals: when both order
     * statistics that the median interpolates between are not, neither is
     * the median (a + f (b - a) with a <= b and 0 <= f <= 1/2 rounds to at
     * most b), and the gaps need not be selected among: the usual series,
     * a value at every sample. */
    const double bound = 1.5 * interval;
    size_t ng = 0, nlong = 0, last = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        if (last != SIZE_MAX) {
            nlong += t[i] - t[last] > bound;
            ng++;
        }
        last = i;
    }
    PM_ASSERT(ng < n || n == 0); /* n values make n-1 gaps: scratch holds n */
    if (ng == 0)
        return 0;
    size_t lo = (size_t)floor((double)(ng - 1) * 0.5);
    if (lo + 1 < ng && nlong < ng - lo - 1)
        return 0;
    ng = 0;
    last = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        if (last != SIZE_MAX)
            scratch[ng++] = t[i] - t[last];
        last = i;
    }
    double gap = pm_quantile_select(scratch, ng, 0.5);
    return gap > bound ? gap : 0;
}

int pm_rate_sparse(const double *t, const double *v, size_t n, double interval, double *out,
                   uint8_t *q)
{
    double gap = sparse_gap(t, v, n, interval, out);
    if (!(gap > 0))
        return 0;
    double bound = 1.5 * gap;
    size_t prev = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        out[i] = NAN;
        if (isnan(v[i])) {
            q[i] = PM_Q_GAP;
            continue;
        }
        double dt = prev == SIZE_MAX ? NAN : t[i] - t[prev];
        if (!(dt > 0) || dt > bound) {
            /* The first reading, or one after the source stopped for
             * longer than a refresh: no rate over the span. */
            q[i] = PM_Q_GAP;
            prev = i;
            continue;
        }
        double r = (v[i] - v[prev]) / dt;
        for (size_t j = prev + 1; j < i; j++) {
            out[j] = r;
            q[j] = PM_Q_HELD;
        }
        out[i] = r;
        if (q[i] != PM_Q_WRAP)
            q[i] = PM_Q_OK;
        prev = i;
    }
    return 1;
}

size_t pm_hold_sparse(const double *t, double *v, uint8_t *q, size_t n, double interval,
                      double *scratch)
{
    double gap = sparse_gap(t, v, n, interval, scratch);
    if (!(gap > 0))
        return 0;
    double bound = 1.5 * gap, x = NAN, tx = NAN;
    size_t held = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isnan(v[i])) {
            x = v[i];
            tx = t[i];
        } else if (!isnan(x) && q[i] != PM_Q_DROPPED && t[i] - tx <= bound) {
            v[i] = x;
            q[i] = PM_Q_HELD;
            held++;
        }
    }
    return held;
}
