/* Quantities scaled to their size for readers: byte counts in IEC units,
 * durations from seconds to hours, energies from joules to MWh (units.h).
 * One formatter per kind of quantity, used by every output that shows
 * one (page 1, --stats, --compare, the phase table), so that a figure
 * reads the same wherever it appears. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "perfmon/units.h"

void pm_fmt_bytes(double bytes, char *out, size_t cap)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (!cap)
        return;
    if (!isfinite(bytes) || bytes < 0) {
        snprintf(out, cap, "-");
        return;
    }
    double v = bytes;
    size_t u = 0;
    /* Move up while the number would print as 1024 or more. */
    while (u + 1 < sizeof unit / sizeof unit[0] && v >= 1023.95 && (u > 0 || v >= 1023.5)) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(out, cap, "%.0f B", v);
    else if (v < 99.95)
        snprintf(out, cap, "%.1f %s", v, unit[u]);
    else
        snprintf(out, cap, "%.0f %s", v, unit[u]);
}

void pm_fmt_duration(double s, char *out, size_t cap)
{
    if (!cap)
        return;
    if (!isfinite(s) || s < 0)
        snprintf(out, cap, "-");
    else if (s < 9.95)
        snprintf(out, cap, "%.1f s", s);
    else if (s < 59.5)
        snprintf(out, cap, "%.0f s", s);
    else if (s < 3600 - 3) /* 59.95 min and above print as 1.0 h */
        snprintf(out, cap, "%.1f min", s / 60.0);
    else
        snprintf(out, cap, "%.1f h", s / 3600.0);
}

void pm_fmt_energy(double joules, char *out, size_t cap)
{
    static const struct {
        double size;
        const char *unit;
    } u[] = {{1, "J"}, {1e3, "kJ"}, {3.6e3, "Wh"}, {3.6e6, "kWh"}, {3.6e9, "MWh"}};
    if (!cap)
        return;
    if (!isfinite(joules) || joules < 0) {
        snprintf(out, cap, "-");
        return;
    }
    /* The largest unit the energy reaches once rounded: 999.96 J prints
     * as 1.0 kJ, 3599.9 J as 1.0 Wh. */
    size_t k = 0;
    while (k + 1 < sizeof u / sizeof u[0] && joules / u[k + 1].size >= 0.9995)
        k++;
    double v = joules / u[k].size;
    snprintf(out, cap, v < 99.95 ? "%.1f %s" : "%.0f %s", v, u[k].unit);
}

void pm_fmt_num(double v, char *out, size_t cap)
{
    double a = fabs(v);
    if (!cap)
        return;
    if (!isfinite(v))
        snprintf(out, cap, "-");
    else if (a == 0)
        snprintf(out, cap, "0");
    else if (a < 1e15 && v == floor(v))
        snprintf(out, cap, "%.0f", v);
    else if (a >= 1e9 || a < 1e-3)
        snprintf(out, cap, "%.3g", v);
    else if (a >= 1000)
        snprintf(out, cap, "%.0f", v);
    else if (a >= 100)
        snprintf(out, cap, "%.1f", v);
    else if (a >= 1)
        snprintf(out, cap, "%.2f", v);
    else
        snprintf(out, cap, "%.3f", v);
}

int pm_fmt_value(double v, const char *unit, char *out, size_t cap)
{
    static const struct {
        const char *unit;
        double bytes;
    } sizes[] = {{"B", 1}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        if (strcmp(unit, sizes[i].unit) == 0) {
            if (isfinite(v) && v < 0) /* a negative size (a difference) as a number */
                break;
            pm_fmt_bytes(v * sizes[i].bytes, out, cap);
            return 1;
        }
    if (strcmp(unit, "J") == 0 || strcmp(unit, "kWh") == 0) {
        pm_fmt_energy(strcmp(unit, "J") == 0 ? v : v * 3.6e6, out, cap);
        return 1;
    }
    pm_fmt_num(v, out, cap);
    return 0;
}
