/* profile.h - the per-host profile: schema, samples, and the reader.
 *
 * A profile is what one sampler run on one host recorded: who/where/when
 * (pm_profile_info), a fixed list of columns (pm_column), optional hardware
 * metadata (JSON text), and a time series of samples.  The on-disk forms
 * (binary and JSON Lines) are described in docs/format.md.
 *
 * Ownership: pm_profile_read() returns a profile the caller owns and frees
 * with pm_profile_free(); all arrays inside belong to the profile.
 */
#ifndef PERFMON_PROFILE_H
#define PERFMON_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/error.h"

/* The binary version written (docs/format.md); JSON Lines stays 1. */
#define PM_PROFILE_VERSION 3
#define PM_PROFILE_JSONL_VERSION 1

/* Bounds that every reader enforces (docs/format.md, "Limits"). */
#define PM_MAX_COLUMNS 65536u
#define PM_MAX_STRING 4096u
#define PM_MAX_HEADER_BYTES (16u << 20)
#define PM_MAX_RECORD_BYTES (64u << 20)

enum pm_kind { PM_GAUGE = 0, PM_COUNTER = 1 };
enum pm_vtype { PM_F64 = 0, PM_U64 = 1 };
/* PM_FMT_BIN1, PM_FMT_BIN2: for pm_writer_open only, binary version 1 or 2
 * (tests, benchmarks). */
enum pm_format {
    PM_FMT_UNKNOWN = 0,
    PM_FMT_BIN = 1,
    PM_FMT_JSONL = 2,
    PM_FMT_BIN1 = 3,
    PM_FMT_BIN2 = 4
};

/* Record types of the binary form. */
enum pm_record_type {
    PM_REC_HEADER = 1,
    PM_REC_META = 2,
    PM_REC_SAMPLE = 3,
    PM_REC_NOTE = 4,
    PM_REC_END = 5,
};

typedef struct pm_column {
    char name[96];  /* dotted, e.g. "net.ext.bytes_sent" */
    char unit[24];  /* "B", "%", "s", "uJ", "1" ... */
    char group[32]; /* "cpu", "memory", "disk", "net", "ib", "rapl", "proc", "sampler" */
    uint8_t kind;   /* enum pm_kind */
    uint8_t type;   /* enum pm_vtype: how the value is stored */
    uint64_t wrap;  /* counters only: the value wraps to 0 at this value; 0 = 2^64/none */
} pm_column;

typedef union pm_value {
    uint64_t u;
    double f;
} pm_value;

typedef struct pm_profile_info {
    char host[256];
    char job_id[128];
    char scheduler[16]; /* "slurm", "pbs", "oar", "local" */
    char node_rank[32]; /* SLURM_NODEID / PROCID etc., "" when unknown */
    char user[64];
    char command[1024]; /* monitored command line, "" when system-wide */
    char sampler[64];   /* producing tool and version */
    int64_t start_wall_ns;
    int64_t start_mono_ns;
    int64_t interval_ns; /* requested sampling interval */
    int64_t sampler_pid;
    /* One sampler run, the same in every file it writes (-f both): 16 hex
     * digits, "" in files written before it was recorded. */
    char run_id[40];
} pm_profile_info;

/* Written once at a clean exit (absent after kill -9). */
typedef struct pm_profile_end {
    int64_t end_wall_ns;
    int64_t end_mono_ns;
    uint64_t samples;    /* samples written */
    uint64_t late;       /* samples taken more than 10% of an interval late */
    uint64_t missed;     /* deadlines skipped entirely */
    int64_t self_cpu_ns; /* sampler CPU time over the run */
    uint64_t self_maxrss_kb;
    int32_t exit_status; /* monitored command's exit status, -1 when none */
    char reason[64];     /* why sampling stopped: "command exited", "SIGTERM", ... */
} pm_profile_end;

typedef struct pm_profile {
    char *path; /* where it was read from */
    int format; /* enum pm_format */
    pm_profile_info info;
    char *host_long; /* the whole host name when info.host is too
                                 * short for it (info.host has its start), else NULL */
    size_t ncols;
    pm_column *cols;
    char *meta_json;         /* hardware metadata (JSON object text) or NULL */
    size_t n;                /* number of samples */
    int64_t *t_mono_ns;      /* [n] */
    int64_t *t_wall_ns;      /* [n] */
    double **values;         /* [ncols][n]; NaN = not recorded */
    void *block;             /* when set, the times and values[c] live in this */
    size_t block_bytes;      /* one mapping (pm_profile_reserve_block), */
    size_t block_slot;       /* block_slot bytes each; else each is malloc'd */
    unsigned char *released; /* [ncols + 2] block slots given back */
    unsigned char *unread;   /* [ncols] or NULL: 1 where the column was not
                                 * decoded (pm_read_hint.want); its values[c]
                                 * is NULL, as a released column's */
    int has_end;
    pm_profile_end end;
    char **notes; /* [nnotes] notes the sampler recorded */
    size_t nnotes;
    /* What the reader had to skip; each is also described in warnings. */
    size_t bad_records;     /* records skipped for a bad checksum/length */
    uint64_t skipped_bytes; /* bytes skipped (torn tail, corruption) */
    char **warnings;        /* [nwarnings] "file: offset N: ..." */
    size_t nwarnings;
} pm_profile;

/* Sniff the first bytes of a file: enum pm_format or PM_FMT_UNKNOWN. */
int pm_profile_sniff(const void *head, size_t len);

/* Read a profile in either form (decided by content).  Damage after a
 * valid header (torn tail, bad records) is skipped and described in
 * p->warnings; only an unusable header is an error.  On error *out is NULL
 * and err names the file and offset (binary) or line (JSON). */
int pm_profile_read(const char *path, pm_profile **out, pm_error *err) PM_WUR;

/* What a reader of many profiles knows in advance: columns for which
 * late(name, ctx) is true will be released early or late, one by one
 * (pm_profile_release_column); a binary profile places them together at
 * the end of its block, so that released ones free whole huge pages.
 * Column projection: when want is set, only the columns for which
 * want(name, ctx) is true are decoded and stored; the others keep their
 * pm_column (name, unit, kind: messages and column lists do not change)
 * with values[c] NULL and unread[c] 1, and cost no memory.  Damage in a
 * column not decoded is still found and reported as in a full read. */
typedef struct pm_read_hint {
    int (*late)(const char *column, void *ctx);
    int (*want)(const char *column, void *ctx);
    void *ctx;
} pm_read_hint;
/* A buffer a reader of many files keeps from one to the next. */
typedef struct pm_read_buf {
    unsigned char *p;
    size_t cap;
    int in_block;
} pm_read_buf;
void pm_read_buf_free(pm_read_buf *b);
/* pm_profile_read with a layout hint (or NULL) and, with rb, the file read
 * into rb (grown as needed) instead of mapped; files over PM_READ_BUF_MAX
 * are mapped all the same, so that the buffer stays well below memory. */
#define PM_READ_BUF_MAX ((size_t)512 << 20)
int pm_profile_read_hinted(const char *path, const pm_read_hint *hint, pm_read_buf *rb,
                           pm_profile **out, pm_error *err) PM_WUR;

/* Decode a binary profile held in memory (path is used in messages). */
int pm_profile_decode_bin(const char *path, const unsigned char *buf, size_t len, pm_profile **out,
                          pm_error *err) PM_WUR;
/* The key samples of a binary version 2 or 3 profile (docs/format.md,
 * "Index"): decoding can start at any of them. */
typedef struct pm_bin_key {
    int64_t wall_ns, mono_ns; /* the key sample's times */
    uint64_t offset;          /* of its record in the file */
    uint64_t sample;          /* its number, counting from 0 */
} pm_bin_key;
typedef struct pm_bin_index {
    pm_bin_key *keys; /* [n], in file order */
    size_t n;
    int from_footer; /* 1: read from the index records; 0: rebuilt by
                               * scanning (no footer after a kill, or a damaged one) */
} pm_bin_index;
/* Load the index of buf (a version 2 or 3 file): from its footer and the chain
 * of index records before it, each entry checked against the key sample
 * it names; else by scanning the records.  Free with pm_bin_index_free. */
int pm_bin_index_load(const char *path, const unsigned char *buf, size_t len, pm_bin_index *idx,
                      pm_error *err) PM_WUR;
void pm_bin_index_free(pm_bin_index *idx);
/* Decode only the samples whose wall time is in [from_wall_ns, to_wall_ns)
 * of a binary version 2 or 3 profile, starting at the last key sample at or
 * before from_wall_ns (through the index) and stopping at the first key
 * sample at or after to_wall_ns.  Header and metadata as
 * pm_profile_decode_bin; notes and the end record only when they lie in
 * the decoded span. */
int pm_profile_decode_bin_range(const char *path, const unsigned char *buf, size_t len,
                                int64_t from_wall_ns, int64_t to_wall_ns, pm_profile **out,
                                pm_error *err) PM_WUR;
/* Decode a JSON Lines profile held in memory (NUL-terminated text). */
int pm_profile_decode_jsonl(const char *path, const char *text, size_t len, pm_profile **out,
                            pm_error *err) PM_WUR;
/* The same with a hint (or NULL): its want projects the columns. */
int pm_profile_decode_jsonl_hinted(const char *path, const char *text, size_t len,
                                   const pm_read_hint *hint, pm_profile **out,
                                   pm_error *err) PM_WUR;

/* The host name: host_long when set, else info.host. */
const char *pm_profile_host(const pm_profile *p);

/* Index of the column named name, or -1. */
int pm_profile_column(const pm_profile *p, const char *name);

void pm_profile_free(pm_profile *p);
/* pm_profile_free, but p's block of decoded values (pm_profile_reserve_block)
 * stays with the calling thread for its next profile of at most that size,
 * instead of going back to the kernel: a fresh block costs a page fault and
 * a zeroed huge page per 2 MiB, about a fifth of the time of reading a host
 * again (the bounded analysis reads every host at each of its passes).  A
 * thread keeps at most one block, given back when the thread ends (or the
 * process, for the main thread).  Only for a profile none of whose columns
 * was taken (pm_profile_take_column) or is still in use. */
void pm_profile_recycle(pm_profile *p);

/* --- helpers shared by readers (profile_model.c) --- */
pm_profile *pm_profile_new(const char *path, int format);
int pm_profile_set_columns(pm_profile *p, const pm_column *cols, size_t ncols);
/* Mark the columns hint->want refuses as not decoded (p->unread); a no-op
 * without hint or want.  Call after pm_profile_set_columns and before
 * reserving. */
int pm_profile_project(pm_profile *p, const pm_read_hint *hint);
/* Make room for at least n samples (columns not decoded get none). */
int pm_profile_reserve(pm_profile *p, size_t n);
/* Make room for exactly n samples when the reader knows the bound up
 * front (the binary reader does): big profiles get all columns in one
 * mapping backed by transparent huge pages, which costs a few hundred page
 * faults instead of one per 4 KiB; small ones are reserved as by
 * pm_profile_reserve().  Not to be followed by pm_profile_reserve(). */
int pm_profile_reserve_block(pm_profile *p, size_t n, const pm_read_hint *hint);
/* Give back column c's values (values[c] becomes NULL). */
void pm_profile_release_column(pm_profile *p, size_t c);
/* Hand column c's array to the caller (values[c] becomes NULL), who may
 * overwrite it: with *in_block set it lives in p's block and goes with p
 * (so p must outlive its use); else the caller frees it.  NULL when the
 * column was already released or taken. */
double *pm_profile_take_column(pm_profile *p, size_t c, int *in_block);
int pm_profile_add_warning(pm_profile *p, const char *fmt, ...) PM_PRINTF(2, 3);
int pm_profile_add_note(pm_profile *p, const char *text, size_t len);

const char *pm_kind_name(int kind);
const char *pm_vtype_name(int type);

#endif
