/* perfev.h - per-microarchitecture counter event tables.
 *
 * The raw events that count floating-point operations and cache and
 * memory traffic differ between CPU generations, so they live as data in
 * templates/events/<arch>.events (format in docs/perfmon-sample.md,
 * "Event tables"): which CPUs a table is for (vendor, family, models),
 * the raw events with their vendor codes, grouped as they are scheduled
 * together, and the derived counters (FLOP, bytes) as weighted sums of
 * events.  The sampler picks the table matching the CPU's CPUID vendor,
 * family and model.  The parser is plain C (the sampler links libc only).
 *
 * Ownership: tables are caller-owned fixed-size structures; nothing inside
 * is allocated.
 */
#ifndef PERFMON_PERFEV_H
#define PERFMON_PERFEV_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/error.h"

#define PM_PEV_MAX_EVENTS 48
#define PM_PEV_MAX_DERIVED 12
#define PM_PEV_MAX_TERMS 16
#define PM_PEV_MAX_MATCH 8
#define PM_PEV_MAX_RANGES 16
#define PM_PEV_MAX_BYTES (256u << 10) /* a table file is at most this long */

typedef struct pm_pev_event {
    char name[64];    /* vendor name, e.g. FP_ARITH_INST_RETIRED.SCALAR_DOUBLE */
    uint64_t config;  /* perf_event_attr.config for PERF_TYPE_RAW */
    uint64_t config1; /* extra register (offcore response), 0 when none */
    int group;        /* counter group number (0-based) */
} pm_pev_event;

typedef struct pm_pev_term {
    int event;     /* index into pm_pev_table.ev */
    double weight; /* e.g. 8 FLOP per 512-bit packed double instruction */
} pm_pev_term;

typedef struct pm_pev_derived {
    char id[32];   /* column perf.<id>: flops_sp, flops_dp, flops, l2_bytes ... */
    char unit[16]; /* FLOP, B */
    pm_pev_term t[PM_PEV_MAX_TERMS];
    size_t nt;
} pm_pev_derived;

typedef struct pm_pev_match {
    char vendor[16]; /* CPUID vendor string: GenuineIntel, AuthenticAMD */
    int family;      /* as /proc/cpuinfo "cpu family" (extended family added) */
    uint16_t lo[PM_PEV_MAX_RANGES], hi[PM_PEV_MAX_RANGES]; /* model ranges, inclusive */
    size_t nr;
} pm_pev_match;

typedef struct pm_pev_table {
    char path[256]; /* file it was read from */
    char arch[32];  /* table name, e.g. skylake-sp */
    char title[128];
    pm_pev_match m[PM_PEV_MAX_MATCH];
    size_t nm;
    pm_pev_event ev[PM_PEV_MAX_EVENTS];
    size_t nev;
    int ngroups;
    pm_pev_derived d[PM_PEV_MAX_DERIVED];
    size_t nd;
} pm_pev_table;

/* Parse the text of one table (NUL-terminated).  path names it in
 * messages ("path:line: what is wrong").  Returns 0 or PM_EFORMAT. */
int pm_pev_parse(const char *path, const char *text, pm_pev_table *t, pm_error *err) PM_WUR;

/* 1 when the table is for this CPU. */
int pm_pev_matches(const pm_pev_table *t, const char *vendor, int family, int model);

/* Read every *.events file of dir (in name order) and keep the first one
 * whose match lines cover this CPU in *out.  Returns 0; PM_ENOENT when no
 * table matches or dir cannot be listed (err says which); PM_EFORMAT or
 * PM_EIO when a table file is unreadable or malformed (err names it). */
int pm_pev_select(const char *dir, const char *vendor, int family, int model, pm_pev_table *out,
                  pm_error *err) PM_WUR;

/* Weighted sum of a derived counter's events; counts[i] belongs to
 * event i of the table.  NaN when one of its events is NaN (not counted). */
double pm_pev_derive(const pm_pev_derived *d, const double *counts);

#endif
