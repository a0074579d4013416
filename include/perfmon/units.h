/* Quantities scaled to their size for readers (src/common/units.c). */
#ifndef PERFMON_UNITS_H
#define PERFMON_UNITS_H

#include <stddef.h>

/* A byte count scaled to its size with IEC units: "0 B", "1023 B",
 * "1.0 KiB", "1.5 TiB" (one decimal below 100, none above), "-" when not
 * finite or negative. */
void pm_fmt_bytes(double bytes, char *out, size_t cap);
/* A duration scaled to its size: "4.2 s", "30 s", "12.5 min", "3.2 h";
 * "-" when not finite or negative. */
void pm_fmt_duration(double s, char *out, size_t cap);

/* An energy scaled to its size: "850 J", "2.5 kJ", "1.2 Wh", "7.2 kWh",
 * "3.1 MWh" (one decimal below 100, none above; kJ only below 1 Wh),
 * "-" when not finite or negative.  Used wherever an energy is shown. */
void pm_fmt_energy(double joules, char *out, size_t cap);

#endif
