/* ptree.h - the process-tree source's state, shared by its three files:
 * src_proctree.c (the source's table, the sample, the accounting of
 * departed members), ptree_discover.c (listing /proc and deciding which
 * processes belong to the tree) and ptree_member.c (reading a member's
 * files).  Private to the sampler; see src_proctree.c for the rules.
 */
#ifndef PERFMON_PTREE_H
#define PERFMON_PTREE_H

#include <dirent.h>
#include <stdint.h>
#include <sys/types.h>

#include "perfmon/source.h"

/* STEPD: a slurmstepd of the followed job; not a member, its children are. */
enum { UNKNOWN = 0, TREE = 1, OTHER = 2, STEPD = 3 };

enum { F_STAT, F_SCHED, F_STATM, F_IO, F_SMAPS, F_FDDIR, NFILES };

/* Descriptors of members' files stay open between samples (a re-read is
 * one pread instead of open+read+read+close), for as many members as the
 * descriptor limit allows (tree_state.max_kept): each may hold NFILES and
 * MAX_TASKS more, so a huge tree cannot exhaust the limit. */
#define MAX_TASKS 8 /* threads whose schedstat stands for a full read */
#define FDS_PER_KEPT (NFILES + MAX_TASKS)

/* The threads of a multithreaded kept member, as last listed from
 * /proc/<pid>/task, with their schedstat descriptors (-1: not open). */
typedef struct ptasks {
    int n;
    int32_t tid[MAX_TASKS];
    int fd[MAX_TASKS];
} ptasks;

typedef struct pent {
    int32_t pid;  /* 0 = empty slot */
    int32_t ppid; /* at the last read: it changes when orphaned */
    uint8_t state;
    uint8_t carried; /* copied into the next table */
    uint8_t recheck; /* verdict provisional: classify afresh at the next listing */
    uint8_t seen;    /* read at least once: the counters below are valid */
    uint8_t have_io;
    uint8_t sink; /* collects vanished children in this sample (settle()) */
    /* May have started a child that the table does not hold: it ran since
     * the last listing or the last read of its children files (a process
     * that has not been on a CPU cannot fork).  zombie: read as one. */
    uint8_t dirty, zombie;
    uint32_t seq;   /* the sample in which it was last read */
    int fd[NFILES]; /* kept descriptors, -1 when closed */
    uint64_t start; /* starttime (field 22): a reused pid has another */
    /* At the last read, in microseconds: the member's CPU time as counted
     * (own + max(ch, ch_floor), or a zombie child's exact rusage, never
     * less than at the read before), its own time (utime+stime, or a
     * zombie's exact time on the CPU), and cutime+cstime then and at the
     * read before (0 before the first).  ch_floor: what its reaped
     * children are known to have brought to cutime+cstime (settle()). */
    uint64_t cpu, own, ch, ch_prev, ch_floor;
    uint64_t rb, wb, rb_prev, wb_prev; /* io read_bytes, write_bytes, likewise */
    uint64_t in_cpu, in_rb, in_wb;     /* vanished under it, this sample */
    /* Gauges of the last full read. */
    uint64_t threads, vsize, rss_pages, shared, nfd;
    uint8_t have_shared, have_fds;
    /* cached: the last full read is reusable while the member, single-
     * threaded, has not run since: its schedstat (time on the CPU, ns, and
     * timeslices) still says sched_ns, sched_cnt.  Re-read at least every
     * STAT_REFRESH samples for RSS, which reclaim lowers while a process
     * sleeps.  (A multithreaded member is read in full every sample: its
     * schedstat is the main thread's only.) */
    uint8_t cached, stat_age;
    uint64_t sched_ns, sched_cnt;
    /* A multithreaded kept member: its threads (NULL until listed), whose
     * schedstat sums stand for sched_ns, sched_cnt. */
    ptasks *tasks;
    /* Checks that found it had run, in a row; samples left without a
     * check (a busy member is read in full without asking first). */
    uint8_t busy, skip_checks;
} pent;

#define STAT_REFRESH 10
#define BUSY_CHECKS 3 /* after this many checks that found it had run... */
#define BUSY_SKIP 8   /* ...this many samples are read in full unasked */

/* A member gone since the last sample, with its figures at its last read.
 * final: read as a zombie just before the sampler reaped it (reaping());
 * ch0, rb0, wb0 are then the figures of the read before. */
typedef struct gone {
    int32_t pid, ppid;
    uint8_t final, have_io;
    uint64_t cpu, ch, rb, wb;
    uint64_t ch0, rb0, wb0, floor0;
    uint64_t in_cpu, in_rb, in_wb;
} gone;

typedef struct ptab {
    pent *e;
    size_t cap; /* power of two */
} ptab;

/* Impossible-value kinds, each noted once. */
enum { B_CPU, B_RSS, B_SHARED, B_VM, B_THREADS, B_IO, B_FDS, B_PSS, NBAD };

typedef struct tree_state {
    ptab tab, next;
    int32_t *pending;
    size_t npending, cap_pending;
    DIR *proc;
    int col_count, col_threads, col_fds, col_cpu, col_pct, col_rss, col_vms, col_shared;
    int col_pss, col_uss, col_swap, col_mempct, col_rb, col_wb;
    /* The last two samples with a CPU figure: microseconds and times. */
    uint64_t prev_cpu, prev2_cpu;
    int64_t prev_mono, prev2_mono;
    int have_prev, have_prev2;
    uint64_t mem_total;
    int warned_io, warned_smaps, warned_fd;
    int smaps_ok, io_ok;
    int procfs;       /* the /proc root is procfs (not a captured copy) */
    size_t kept;      /* members with kept descriptors */
    size_t max_kept;  /* at most (from RLIMIT_NOFILE) */
    int32_t *listing; /* pids of the last /proc listing */
    /* The slots of tab that hold members, in slot order, as of the last
     * listing (a slot may have left the tree since: check its state). */
    uint32_t *members;
    size_t nmembers, cap_members;
    size_t cap_listing;
    int64_t pss_every_ns; /* smaps_rollup refresh period */
    int64_t pss_last_ns;  /* 0: not read yet */
    int pss_now;          /* read smaps_rollup in this sample */
    uint64_t pss_rss;     /* the tree's RSS in the sample that last read it */
    int fd_loadavg;       /* /proc/loadavg, for the last pid created */
    int64_t last_pid;     /* at the last listing; -1 = list next time */
    /* Births found through the members' children files
     * (/proc/<pid>/task/<tid>/children, CONFIG_PROC_CHILDREN) instead of a
     * listing of /proc: children_ok when the files exist (and no SLURM
     * roots); list_ns: the last listing; orphans: a member that may have
     * had a child the table lacks has exited (its children went to a
     * reaper the files of the members do not show): list at the next
     * birth. */
    int children_ok;
    int orphans;
    int64_t list_ns;
    /* -- CMD: the tree's time on the CPU (a task-clock perf counter that
     * CMD and all it starts inherit; src_proctree.c), as last read, and
     * whether no task of the tree ran since (idle: the members' checks
     * are skipped in this sample).  clock_wait: samples left before the
     * next read (a busy tree is not asked every sample). */
    int fd_clock;
    int have_clock, idle;
    uint64_t clock;
    uint8_t clock_wait;
    int npending_unknown; /* pids left undecided: list again */
    uint32_t seq;         /* samples read so far */
    /* Members gone since the last sample, and the live members that
     * collect them (settle()). */
    gone *gone;
    size_t ngone, cap_gone;
    pent **sinks;
    size_t nsinks, cap_sinks;
    /* What departed members took with them (see the top of the file);
     * CPU times are kept in microseconds. */
    uint64_t dep_cpu, dep_rb, dep_wb;
    uint64_t us_per_tick; /* 1e6 / USER_HZ when exact, else 0 */
    int32_t self;         /* the sampler's pid */
    /* Bounds of a real value (check_*()), from the node's uptime, CPUs and
     * memory; warned[k] once a kind was refused. */
    double uptime_s; /* at open; 100 years when unknown */
    int64_t open_mono_ns;
    uint64_t ncpus;
    uint64_t cpu_max, io_max, mem_max_pages;
    uint8_t warned[NBAD];
} tree_state;

typedef struct totals {
    uint64_t count, threads, fds, rss, vms, shared, pss, uss, swap, rb, wb, cpu;
    int have_pss, have_io, have_fds;
    uint8_t bad[NBAD]; /* an impossible value was met: the column stays empty */
} totals;

/* The fields of /proc/<pid>/stat used here. */
typedef struct pstat {
    char state;
    int32_t ppid;
    uint64_t ut, stt, threads, start, vsize, rss;
    int64_t cut, cst;
} pstat;

/* Discovery (ptree_discover.c). */
pent *pm_ptree_find(const ptab *t, int32_t pid);
void pm_ptree_close_files(tree_state *st, pent *e);
int pm_ptree_push_gone(tree_state *st, const gone *g);
/* A member is gone: keep its last figures for settle(), forget the pid. */
void pm_ptree_vanish(tree_state *st, pent *e);
/* Rebuild the pid table from a fresh listing of /proc; 0 or -errno. */
int pm_ptree_discover(tree_state *st, const pm_sctx *ctx);
/* Births on the node since the last look: does the table hold every
 * child of the members that may have started one (pent.dirty)?  Reads
 * their threads' children files; 1 yes (their dirty flags cleared), 0
 * when /proc must be listed (a child not known as a member, a file that
 * does not read or parse, too many files to read). */
int pm_ptree_children_known(tree_state *st, const pm_sctx *ctx);
/* The threads of process pid (/proc/<pid>/task), at most cap, into tid[]:
 * their number, or -1 when unreadable or more than cap. */
int pm_ptree_list_threads(const pm_sctx *ctx, int32_t pid, int32_t *tid, int cap);
/* The pid most recently created on the node, or -1. */
int64_t pm_ptree_last_pid(tree_state *st, const pm_sctx *ctx);

/* Reading members (ptree_member.c). */
void pm_ptree_node_limits(tree_state *st, const pm_sctx *ctx);
void pm_ptree_time_limits(tree_state *st, const pm_sctx *ctx);
ssize_t pm_ptree_member_file(tree_state *st, const pm_sctx *ctx, pent *e, int k, char *buf,
                             size_t cap);
int pm_ptree_parse_stat(char *buf, pstat *ps);
void pm_ptree_cpu_us(const tree_state *st, const pm_sctx *ctx, int32_t pid, const pstat *ps,
                     uint64_t *own, uint64_t *ch, uint64_t *ru);
void pm_ptree_set_cpu(pent *e, uint64_t own, uint64_t ch, uint64_t ru);
int pm_ptree_cpu_ok(tree_state *st, const pm_sctx *ctx, int32_t pid, const pstat *ps);
int pm_ptree_read_io(tree_state *st, const pm_sctx *ctx, pent *e, uint64_t *rb, uint64_t *wb,
                     ssize_t *r);
void pm_ptree_read_pss(tree_state *st, const pm_sctx *ctx, pent *e, totals *t);
void pm_ptree_read_member(tree_state *st, const pm_sctx *ctx, pent *e, totals *t);

#endif
