/* scanner_gen.h - writes Scanner binary profiles for the tests, following
 * the layout in perfmon/scanner.h (as Scanner's write_profiler_to_file):
 * interval keys are dictionary-encoded in order of first use.  Fields
 * marked "damage" write corrupt files on purpose. */
#ifndef PERFMON_SCANNER_GEN_H
#define PERFMON_SCANNER_GEN_H

#include <stddef.h>
#include <stdint.h>

typedef struct pm_sgen_interval {
    const char *key;
    int64_t start, end; /* ns after the file's start */
} pm_sgen_interval;

typedef struct pm_sgen_counter {
    const char *name;
    int64_t value;
} pm_sgen_counter;

typedef struct pm_sgen_worker {
    int64_t node;
    const char *type, *tag;
    int64_t number;
    const pm_sgen_interval *iv;
    size_t niv;
    const pm_sgen_counter *ct;
    size_t nct;
    int64_t bad_counter_count; /* damage: written instead of nct when non-zero */
    int64_t bad_key_count;     /* damage: written instead of the key count when non-zero */
} pm_sgen_worker;

typedef struct pm_sgen_file {
    int64_t start_ns, end_ns;
    const pm_sgen_worker *first; /* process_job (or the master's only worker) */
    int master;                  /* 1: nothing after the first worker */
    const pm_sgen_worker *load;
    unsigned nload;
    const pm_sgen_worker *eval; /* neval * per_chain, pipeline by pipeline */
    unsigned neval, per_chain;
    const pm_sgen_worker *save;
    unsigned nsave;
} pm_sgen_file;

/* Encode f into buf (cap bytes; buf may be NULL to measure).  Returns the
 * encoded length, whatever cap is. */
size_t pm_sgen_encode(const pm_sgen_file *f, unsigned char *buf, size_t cap);

/* Encode f and write its first len bytes (all of it when len is
 * (size_t)-1) to path.  Returns 0 or -1. */
int pm_sgen_write(const char *path, const pm_sgen_file *f, size_t len);

/* The example job used by the fixtures: node's worker profile (node 0 or
 * 1) with one load, two eval pipelines of three groups and one save
 * worker, or (node < 0) the master profile.  Start time start_ns. */
void pm_sgen_example(int node, int64_t start_ns, pm_sgen_file *out);

#endif
