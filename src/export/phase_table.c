/* The cells of "Resource use per phase", the same in the report and in
 * --stats (docs/analysis.md, "Resource use per phase"): figures scaled to
 * their size by the formatters of the key figures. */
#include <math.h>
#include <stdio.h>

#include "perfmon/phase_stats.h"
#include "perfmon/export.h"
#include "perfmon/units.h"

const char *const PM_PHASE_USE_HEAD[PM_PHASE_USE_COLS] = {
    "Phase",     "Time",         "CPU time", "CPU share",   "Memory peak",
    "Disk read", "Disk written", "Net sent", "Net received"};

void pm_phase_use_cells(const pm_phase_kind_stats *ks, char cells[PM_PHASE_USE_COLS][48])
{
    snprintf(cells[0], 48, "%s", ks->name);
    pm_fmt_duration(ks->max_host_s, cells[1], 48);
    pm_fmt_duration(ks->cpu_core_s, cells[2], 48);
    if (isfinite(ks->cpu_share_pct))
        snprintf(cells[3], 48, "%.1f %%", ks->cpu_share_pct);
    else
        snprintf(cells[3], 48, "-");
    pm_fmt_bytes(ks->mem_peak_bytes, cells[4], 48);
    pm_fmt_bytes(ks->disk_read_bytes, cells[5], 48);
    pm_fmt_bytes(ks->disk_write_bytes, cells[6], 48);
    pm_fmt_bytes(ks->net_sent_bytes, cells[7], 48);
    pm_fmt_bytes(ks->net_recv_bytes, cells[8], 48);
}

const char *const PM_PHASE_ENERGY_HEAD[PM_PHASE_ENERGY_COLS] = {"Phase", "CPU energy (RAPL)",
                                                                "GPU energy", "GPU energy from"};

const char *pm_phase_energy_from(int from)
{
    switch (from & (PM_ENERGY_FROM_COUNTER | PM_ENERGY_FROM_POWER)) {
    case PM_ENERGY_FROM_COUNTER: return "energy counter";
    case PM_ENERGY_FROM_POWER: return "power integrated (no energy counter)";
    case PM_ENERGY_FROM_COUNTER | PM_ENERGY_FROM_POWER:
        return "energy counter, power integrated where none";
    default: return NULL;
    }
}

void pm_phase_energy_cells(const pm_phase_kind_stats *ks, char cells[PM_PHASE_ENERGY_COLS][48])
{
    snprintf(cells[0], 48, "%s", ks->name);
    pm_fmt_energy(ks->cpu_energy_j, cells[1], 48);
    pm_fmt_energy(ks->gpu_energy_j, cells[2], 48);
    const char *from =
        isfinite(ks->gpu_energy_j) ? pm_phase_energy_from(ks->gpu_energy_from) : NULL;
    snprintf(cells[3], 48, "%s", from ? from : "-");
}

int pm_phase_energy_any(const pm_phase_stats *st)
{
    for (size_t k = 0; st && k < st->nkinds; k++)
        if (isfinite(st->kinds[k].cpu_energy_j) || isfinite(st->kinds[k].gpu_energy_j))
            return 1;
    return 0;
}
