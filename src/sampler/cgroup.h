/* cgroup.h - the cgroup source's state and the contract between its
 * files: src_cgroup.c (the source's table: open, read, adopt, close),
 * cgroup_find.c (which cgroup: /proc/PID/cgroup, the hierarchies, the
 * cgroup made for -- CMD) and cgroup_files.c (the table of files and
 * columns, opening them, parsing a sample).  Private to the sampler.
 */
#ifndef PERFMON_CGROUP_SRC_H
#define PERFMON_CGROUP_SRC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perfmon/source.h"

#define CG_PATH 1024 /* longest cgroup path taken */
#define CG_BUF 16384 /* bounded read of one file (memory.stat is ~3 KiB) */
#define MAX_HIER 6
#define MAX_FILES 24
#define MAX_KEYS 6
#define MAX_DISKS 64
#define MAX_NOTES 24
#define NOTE_LEN 320
/* v1 memory.limit_in_bytes when no limit is set: PAGE_COUNTER_MAX pages,
 * 0x7FFFFFFFFFFFF000 with 4 KiB pages; anything from 2^62 on is taken as
 * unlimited (no machine has 4 EiB). */
#define V1_UNLIMITED (1ull << 62)

/* Controllers (v1 hierarchies) and the parts of a v2 cgroup. */
enum {
    C_CPUACCT = 1,
    C_CPU = 2,
    C_MEMORY = 4,
    C_BLKIO = 8,
    C_PIDS = 16,
    C_PSI = 32, /* the pressure files: v2 only (hybrid: the unified mount) */
    C_V2 = 64,  /* the cpu.stat, memory.*, io.*, pids.* files of v2 */
};

enum { K_SINGLE, K_LIMIT, K_KEYED, K_PSI, K_IOSTAT, K_BLKIO };
enum { S_RAW, S_USEC, S_NSEC, S_TICK };
/* How often a file is read (docs/format.md, "The job's cgroup"):
 *   W_EVERY  every sample: the job's CPU and memory, the accounting itself;
 *   W_SLOW   at the first sample, then every --pss-interval, like PSS:
 *            gauges that change slowly or cost most to read (memory.stat
 *            sums per-CPU counters, and on v2 flushes them first: about a
 *            third of a sample's cost on v1); the analysis holds a sparse
 *            gauge;
 *   W_RARE   at most every PM_RARE_NS and at the first and the last sample
 *            (source.h, pm_sctx_rare_due): the split of the CPU time, the
 *            I/O and pressure counters (the analysis spreads a sparse
 *            counter's rate over the span between its readings), the
 *            limit's event counters and the high-water marks (only their
 *            rises and last values count). */
enum { W_EVERY, W_SLOW, W_RARE };

typedef struct field {
    const char *key; /* keyed files: the key; PSI: "some"/"full" */
    const char *col;
    const char *unit;
    int kind;  /* PM_COUNTER or PM_GAUGE */
    int scale; /* S_RAW: a u64 column; else seconds in an f64 column */
} field;

typedef struct spec {
    unsigned ctrl;
    const char *file;
    const char *alt; /* read instead when file is absent (may be NULL) */
    int kind;
    int when;        /* W_*: how often it is read */
    const char *why; /* why the kernel may lack it (note), or NULL */
    field f[MAX_KEYS];
} spec;

/* One cgroup directory: a v1 hierarchy's, the v2 one, or (hybrid) the
 * unified mount's for the pressure files. */
typedef struct hier {
    unsigned ctrl;
    int version;
    char mount[64];     /* under sys: "fs/cgroup/cpu,cpuacct" */
    char path[CG_PATH]; /* the cgroup, from /proc/PID/cgroup */
    int dirfd;          /* the cgroup's directory */
    int parentfd;       /* created: the directory it was made in */
    char made[32];      /* created: its name, "" otherwise */
    int off;            /* CMD could not be moved into it: not read */
} hier;

typedef struct cgfile {
    const spec *sp;
    size_t hi;        /* its hierarchy in st->h */
    const char *name; /* the name opened (spec file or alt) */
    int fd;
    int col[MAX_KEYS];
    int bad_noted;
} cgfile;

typedef struct disk {
    char name[32];
    unsigned maj, min;
    int col[4]; /* read_bytes, write_bytes, read_ops, write_ops */
} disk;

typedef struct cg_state {
    hier h[MAX_HIER];
    size_t nh;
    cgfile f[MAX_FILES];
    size_t nf;
    disk d[MAX_DISKS];
    size_t nd;
    int io_tot[4]; /* cg.io_read_bytes, _write_bytes, _read_ops, _write_ops */
    long clk_tck;
    int created;   /* perfmon made the cgroups for CMD */
    int adopted;   /* CMD is in them (or nothing needs adopting) */
    int dead;      /* nothing to record (adopting failed) */
    int announced; /* the notes were written */
    int version;
    pid_t from_pid;
    const char *level;
    int64_t slow_due; /* mono time the slow files are read again */
    int64_t rare_due; /* and the rare ones (pm_sctx_rare_due) */
    char notes[MAX_NOTES][NOTE_LEN];
    size_t nnotes;
    char *buf;
} cg_state;

/* A note for the profile's metadata, logged too (at most MAX_NOTES). */
void pm_cg_add_note(cg_state *st, const char *fmt, ...) PM_PRINTF(2, 3);
/* Finding the cgroup (cgroup_find.c). */
ssize_t pm_cg_pread0(int fd, char *buf, size_t cap);
int pm_cg_single_u64(char *buf, uint64_t *v);
int pm_cg_parse_devnum(const char *s, unsigned *maj, unsigned *min);
/* Close the hierarchies' directories; remove the cgroups made for CMD. */
void pm_cg_close_hiers(cg_state *st);
void pm_cg_remove_children(cg_state *st);
/* The files (cgroup_files.c): open those the kernel has, add their
 * columns; read one file into the sample. */
int pm_cg_open_files(const pm_sctx *ctx, cg_state *st, pm_schema *s);
void pm_cg_read_file(cg_state *st, cgfile *f, pm_sample *s);
/* Which cgroup to read (the top of src_cgroup.c): 0, or not 0 with why. */
int pm_cg_find(const pm_sctx *ctx, cg_state *st, char *why, size_t cap);

#endif
