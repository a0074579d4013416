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

/* A number for a table cell, the same in the PDF and in --stats: an
 * integer in full ("24", not "24.000"), else 3 significant digits or up to
 * 3 decimals by size ("0.341", "34.25", "498.9", "2641", "9.14e-04" below
 * 0.001, "1.7e+09" from 1e9); "-" when not finite. */
void pm_fmt_num(double v, char *out, size_t cap);

/* v in unit scaled to its size where the unit is a size or an energy
 * ("B", "KiB", "MiB", "GiB": pm_fmt_bytes; "J", "kWh": pm_fmt_energy);
 * returns 1 then (the text carries its unit), else writes pm_fmt_num and
 * returns 0. */
int pm_fmt_value(double v, const char *unit, char *out, size_t cap);

#endif
