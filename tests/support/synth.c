/* Synthetic profiles (see synth.h).  Column set mirrors the sampler's. */
#include "synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/mem.h"
#include "perfmon/profile.h"
#include "perfmon/writer.h"

void pm_synth_init(pm_synth *s, const char *host)
{
    memset(s, 0, sizeof *s);
    s->host = host;
    s->format = PM_FMT_BIN;
    s->n = 60;
    s->start_s = 1.7e9;
    s->interval_s = 1.0;
    s->groups = PM_SYNTH_ALL;
    s->cpu_pct = 50;
    s->net_rate = 1048576;
    s->power_w = 100;
    s->rss0 = 1073741824.0;
    s->with_end = 1;
    s->ncpus = 16;
}

enum col_id {
    C_CPU_PCT,
    C_CPU_AVG,
    C_CPU_MIN,
    C_CPU_MAX,
    C_NCPUS,
    C_USER,
    C_LOAD1,
    C_MEM_TOTAL,
    C_MEM_USED,
    C_MEM_PCT,
    C_DISK_R,
    C_DISK_W,
    C_FS_OUT,
    C_NET_LO_S,
    C_NET_LO_R,
    C_NET_S,
    C_NET_R,
    C_NET_PS,
    C_NET_PR,
    C_IB_S,
    C_IB_R,
    C_RAPL_P0,
    C_RAPL_P1,
    C_RAPL_D0,
    C_PROC_CPU,
    C_PROC_PCT,
    C_PROC_RSS,
    C_PROC_FDS,
    C_SMP_CPU,
    C_SMP_RSS,
    C_SMP_LATE,
    C_SMP_MISSED,
    C_N
};

static const struct {
    const char *name, *unit, *group;
    int kind;
    int needs;
} COLS[C_N] = {
    {"cpu.percent", "%", "cpu", PM_GAUGE, 0},
    {"cpu.core_avg_pct", "%", "cpu", PM_GAUGE, 0},
    {"cpu.core_min_pct", "%", "cpu", PM_GAUGE, 0},
    {"cpu.core_max_pct", "%", "cpu", PM_GAUGE, 0},
    {"cpu.ncpus", "1", "cpu", PM_GAUGE, 0},
    {"cpu.user", "s", "cpu", PM_COUNTER, 0},
    {"load.1", "1", "cpu", PM_GAUGE, 0},
    {"mem.total", "B", "memory", PM_GAUGE, 0},
    {"mem.used", "B", "memory", PM_GAUGE, 0},
    {"mem.percent", "%", "memory", PM_GAUGE, 0},
    {"disk.read_bytes", "B", "disk", PM_COUNTER, 0},
    {"disk.write_bytes", "B", "disk", PM_COUNTER, 0},
    {"fs.out.usage_pct", "%", "disk", PM_GAUGE, 0},
    {"net.lo.bytes_sent", "B", "net", PM_COUNTER, 0},
    {"net.lo.bytes_recv", "B", "net", PM_COUNTER, 0},
    {"net.ext.bytes_sent", "B", "net", PM_COUNTER, 0},
    {"net.ext.bytes_recv", "B", "net", PM_COUNTER, 0},
    {"net.ext.packets_sent", "1", "net", PM_COUNTER, 0},
    {"net.ext.packets_recv", "1", "net", PM_COUNTER, 0},
    {"ib.bytes_sent", "B", "ib", PM_COUNTER, PM_SYNTH_IB},
    {"ib.bytes_recv", "B", "ib", PM_COUNTER, PM_SYNTH_IB},
    {"rapl.package-0", "uJ", "rapl", PM_COUNTER, PM_SYNTH_RAPL},
    {"rapl.package-1", "uJ", "rapl", PM_COUNTER, PM_SYNTH_RAPL},
    {"rapl.dram-0", "uJ", "rapl", PM_COUNTER, PM_SYNTH_RAPL},
    {"proc.cpu_time", "s", "proc", PM_COUNTER, PM_SYNTH_PROC},
    {"proc.cpu_percent", "%", "proc", PM_GAUGE, PM_SYNTH_PROC},
    {"proc.rss", "B", "proc", PM_GAUGE, PM_SYNTH_PROC},
    {"proc.fds", "1", "proc", PM_GAUGE, PM_SYNTH_PROC},
    {"sampler.cpu_time", "s", "sampler", PM_COUNTER, PM_SYNTH_SAMPLER},
    {"sampler.rss", "B", "sampler", PM_GAUGE, PM_SYNTH_SAMPLER},
    {"sampler.lateness", "s", "sampler", PM_GAUGE, PM_SYNTH_SAMPLER},
    {"sampler.missed", "1", "sampler", PM_COUNTER, PM_SYNTH_SAMPLER},
};

/* Value of column c at sample i (elapsed seconds e). */
static double value(const pm_synth *s, int c, size_t i, double e)
{
    double iv = s->interval_s;
    /* CPU: cpu_pct + cpu_wave * sin(w e + phase), and its exact integral. */
    double w = s->wave_period_s > 0 ? 2 * M_PI / s->wave_period_s : 0;
    double pct = s->cpu_pct + (w > 0 ? s->cpu_wave * sin(w * e + s->wave_phase) : 0);
    double ie = s->idle_from && i >= s->idle_from ? (double)s->idle_from * iv : e;
    double integral = ie * s->cpu_pct;
    if (w > 0)
        integral += s->cpu_wave / w * (cos(s->wave_phase) - cos(w * ie + s->wave_phase));
    if (s->idle_from && i >= s->idle_from) {
        /* Idle from sample idle_from on: a flat idle_pct. */
        pct = s->idle_pct;
        integral += (e - ie) * s->idle_pct;
    }
    switch (c) {
    case C_CPU_PCT: return s->gap_at && i == s->gap_at ? NAN : pct;
    case C_CPU_AVG: return pct;
    case C_CPU_MIN: return pct / 2;
    case C_CPU_MAX: return pct * 1.5 > 100 ? 100 : pct * 1.5;
    case C_NCPUS: return (double)s->ncpus;
    case C_USER: return integral * (double)s->ncpus / 100;
    case C_LOAD1: return (double)s->ncpus * pct / 100;
    case C_MEM_TOTAL: return 68719476736.0;
    case C_MEM_USED: return 17179869184.0;
    case C_MEM_PCT: return 25;
    case C_DISK_R: return floor(e * 2097152);
    case C_DISK_W: return floor(e * 1048576);
    case C_FS_OUT: return 40;
    case C_NET_LO_S:
    case C_NET_LO_R: return floor(e * 1024);
    case C_NET_S:
        if (s->reset_at && i >= s->reset_at)
            return floor((double)(i - s->reset_at) * iv * s->net_rate);
        return floor(e * s->net_rate);
    case C_NET_R: return floor(e * s->net_rate / 2);
    case C_NET_PS: return floor(e * 1000);
    case C_NET_PR: return floor(e * 500);
    case C_IB_S:
    case C_IB_R: return floor(e * 4194304);
    case C_RAPL_P0:
    case C_RAPL_P1: {
        double uj = e * s->power_w * 1e6;
        return s->rapl_wrap ? fmod(uj, (double)s->rapl_wrap) : uj;
    }
    case C_RAPL_D0: {
        double uj = e * 10 * 1e6;
        return s->rapl_wrap ? fmod(uj, (double)s->rapl_wrap) : uj;
    }
    case C_PROC_CPU: return e * 4;
    case C_PROC_PCT: return 400;
    case C_PROC_RSS: return s->rss0 + s->rss_growth * e;
    case C_PROC_FDS: return 12;
    case C_SMP_CPU: return e * 0.001;
    case C_SMP_RSS: return 4194304;
    case C_SMP_LATE: return 0.0005;
    case C_SMP_MISSED: return 0;
    default: return NAN;
    }
}

int pm_synth_write(const char *path, const pm_synth *s, pm_error *err)
{
    pm_column cols[C_N];
    int map[C_N];
    size_t nc = 0;
    memset(cols, 0, sizeof cols);
    for (int c = 0; c < C_N; c++) {
        if (COLS[c].needs && !(s->groups & COLS[c].needs))
            continue;
        pm_column *col = &cols[nc];
        snprintf(col->name, sizeof col->name, "%s", COLS[c].name);
        snprintf(col->unit, sizeof col->unit, "%s", COLS[c].unit);
        snprintf(col->group, sizeof col->group, "%s", COLS[c].group);
        col->kind = (uint8_t)COLS[c].kind;
        col->type = PM_F64;
        if (c == C_RAPL_P0 || c == C_RAPL_P1 || c == C_RAPL_D0)
            col->wrap = s->rapl_wrap;
        map[nc++] = c;
    }
    pm_profile_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.host, sizeof info.host, "%s", s->host);
    snprintf(info.job_id, sizeof info.job_id, "%s", s->job_id ? s->job_id : "synthetic");
    if (s->run_id)
        snprintf(info.run_id, sizeof info.run_id, "%s", s->run_id);
    info.sampler_pid = s->pid;
    snprintf(info.scheduler, sizeof info.scheduler, "local");
    snprintf(info.sampler, sizeof info.sampler, "perfmon-synth");
    int64_t mono0 = 1000000000;
    double whole = floor(s->start_s); /* s * 1e9 would round to 256 ns */
    info.start_wall_ns = (int64_t)whole * 1000000000 + (int64_t)llround((s->start_s - whole) * 1e9);
    info.start_mono_ns = mono0;
    info.interval_ns = (int64_t)llround(s->interval_s * 1e9);
    char meta[128];
    snprintf(meta, sizeof meta,
             "{\"cpu\":{\"threads\":%zu},\"memory\":{\"total_bytes\":68719476736}}", s->ncpus);
    pm_writer *w = NULL;
    int rc = pm_writer_open(&w, path, s->format, &info, cols, nc, meta, err);
    if (rc)
        return rc;
    pm_value vals[C_N];
    uint8_t present[(C_N + 7) / 8];
    for (size_t i = 0; i < s->n && !rc; i++) {
        double e = (double)i * s->interval_s;
        memset(present, 0, sizeof present);
        for (size_t k = 0; k < nc; k++) {
            double v = value(s, map[k], i, e);
            vals[k].f = v;
            if (!isnan(v))
                present[k / 8] |= (uint8_t)(1u << (k % 8));
        }
        int64_t mono = mono0 + (int64_t)llround(e * 1e9);
        int64_t wall = info.start_wall_ns + (int64_t)llround(e * 1e9);
        if (s->wall_step_s != 0 && i >= s->n / 2)
            wall += (int64_t)llround(s->wall_step_s * 1e9);
        rc = pm_writer_sample(w, mono, wall, vals, present, err);
    }
    if (!rc && s->with_end) {
        pm_profile_end end;
        memset(&end, 0, sizeof end);
        double span = s->n ? (double)(s->n - 1) * s->interval_s : 0;
        end.end_wall_ns = info.start_wall_ns + (int64_t)llround(span * 1e9);
        end.end_mono_ns = mono0 + (int64_t)llround(span * 1e9);
        end.samples = s->n;
        end.self_cpu_ns = (int64_t)llround(span * 1e6);
        end.self_maxrss_kb = 4096;
        end.exit_status = 0;
        snprintf(end.reason, sizeof end.reason, "command exited");
        rc = pm_writer_end(w, &end, err);
    }
    int crc = pm_writer_close(w, rc ? NULL : err);
    return rc ? rc : crc;
}

/* An SKA perfmon merged cpu_metrics.json with every field SKA records,
 * laid out as Python's json.dump(indent=4) writes it (one value a line). */
int pm_synth_write_ska(const char *path, size_t hosts, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\"host_names\": [");
    for (size_t h = 0; h < hosts; h++)
        fprintf(f, "%s\"ska-node-%03zu\"", h ? ", " : "", h);
    fprintf(f, "]");
    static const char *const top[] = {"cpu_percent_sys", "cpu_percent", "cpu_time",
                                      "memory_percent",  "num_threads", "num_fds"};
    static const char *const groups[][5] = {
        {"memory_info", "rss", "vms", "shared", NULL},
        {"memory_full_info", "uss", "swap", NULL, NULL},
        {"io_counters", "read_bytes", "write_bytes", "read_count", "write_count"},
        {"net_io_counters", "bytes_sent", "bytes_recv", "packets_sent", "packets_recv"},
        {"ib_io_counters", "port_xmit_data", "port_rcv_data", "port_xmit_packets",
         "port_rcv_packets"},
        {"rapl_powercap", "package-0", "package-1", "dram-0", "dram-1"},
    };
    for (size_t h = 0; h < hosts; h++) {
        fprintf(f, ",\n\"ska-node-%03zu\": {\"time_stamps\": [", h);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s\n            %zu", i ? "," : "", (size_t)1700000000 + h % 3 + i);
        fprintf(f, "]");
        for (size_t k = 0; k < sizeof top / sizeof *top; k++) {
            fprintf(f, ", \"%s\": [", top[k]);
            for (size_t i = 0; i < n; i++)
                fprintf(f, "%s\n            %.15g", i ? "," : "",
                        10.0 + (double)((i * 7 + k) % 80) + (double)i * 1.23456789e-5);
            fprintf(f, "]");
        }
        for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
            fprintf(f, ", \"%s\": {", groups[g][0]);
            for (size_t k = 1; k < 5 && groups[g][k]; k++) {
                fprintf(f, "%s\"%s\": [", k > 1 ? ", " : "", groups[g][k]);
                for (size_t i = 0; i < n; i++)
                    fprintf(f, "%s\n                %zu", i ? "," : "",
                            i * (1000 + 37 * k) + (i * i) % 101);
                fprintf(f, "]");
            }
            fprintf(f, "}");
        }
        fprintf(f, "}");
    }
    fprintf(f, "}\n");
    return fclose(f);
}

int pm_synth_group_of(size_t k)
{
    if (k % 500 == 17)
        return PM_SYNTH_IDLE;
    if (k % 400 == 33)
        return PM_SYNTH_LOST;
    if (k % 1000 == 101)
        return PM_SYNTH_LATE;
    size_t g = k * 7919 % 10; /* a fixed shuffle: groups not in name order */
    return g < 4 ? 0 : g < 8 ? 1 : 2;
}

int pm_synth_write_groups(const char *dir, size_t hosts, size_t n, pm_error *err)
{
    for (size_t k = 0; k < hosts; k++) {
        char host[32], path[4200];
        snprintf(host, sizeof host, "nid%05zu", k);
        snprintf(path, sizeof path, "%s/%s.pmp", dir, host);
        pm_synth s;
        pm_synth_init(&s, host);
        s.n = n;
        s.groups = PM_SYNTH_ALL;
        int g = pm_synth_group_of(k);
        double jitter = (double)(k * 37 % 11) / 10.0 - 0.5; /* -0.5 .. +0.5 % */
        /* One period over the job: sin > 0 in the first half. */
        double period = (double)n;
        s.cpu_pct = 70 + jitter;
        s.cpu_wave = 25;
        s.wave_period_s = period;
        s.net_rate = 2097152;
        if (g == 1)
            s.wave_phase = M_PI;
        else if (g == 2) {
            s.cpu_pct = 30 + jitter;
            s.cpu_wave = 3;
            s.wave_period_s = 20;
            s.net_rate = 262144;
            s.power_w = 60;
        } else if (g == PM_SYNTH_IDLE) {
            s.idle_from = n / 5;
            s.idle_pct = 2;
        } else if (g == PM_SYNTH_LOST) {
            s.n = n - n / 10;
        } else if (g == PM_SYNTH_LATE) {
            s.start_s += 3;
        }
        int rc = pm_synth_write(path, &s, err);
        if (rc)
            return rc;
    }
    return 0;
}
