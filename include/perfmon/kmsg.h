/* kmsg.h - the kernel log's records (/dev/kmsg) and the OOM killer's
 * lines in them, for the sampler's events source (src/sampler/src_events.c).
 *
 * A /dev/kmsg record (Documentation/ABI/testing/dev-kmsg) is
 *
 *     PRIO,SEQ,TIMESTAMP_US,FLAG[,...];MESSAGE\n
 *     [ KEY=VALUE\n ...]
 *
 * with the message's non-printable bytes escaped as \xNN by the kernel,
 * TIMESTAMP_US the microseconds since boot on the kernel's local clock,
 * and FLAG '-' for a whole record, or on kernels before 5.10 'c' for the
 * first fragment of a line continued with pr_cont() and '+' for a later
 * fragment.
 *
 * The OOM killer (mm/oom_kill.c) writes, per kill, a summary line (since
 * Linux 4.19; the cgroup members since 5.0, the memcg members for the
 * kill's cgroups)
 *
 *     oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,
 *       mems_allowed=0,oom_memcg=/t,task_memcg=/t,task=python3,pid=4242,uid=0
 *
 * and, after it, the kill itself
 *
 *     Memory cgroup out of memory: Killed process 4242 (python3)
 *       total-vm:270000kB, anon-rss:65000kB, file-rss:3000kB, ...
 *
 * ("Out of memory: Killed process ..." when the node ran out; without the
 * prefix and after a "Kill process ... or sacrifice child" line before
 * Linux 5.1).  Before the summary line (Linux 4.19) a cgroup's kill
 * said "Task in /t killed as a result of limit of /t" and "Memory cgroup
 * out of memory: Kill process 4242 (python3) ..." before its kill line.
 * pm_oom_feed() parses these and joins them into one pm_oom_kill per
 * killed process.
 *
 * Nothing here reads a file or allocates: every field is bounded, and a
 * record that does not parse is skipped.
 */
#ifndef PERFMON_KMSG_H
#define PERFMON_KMSG_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/error.h"

/* Longest message text kept (the kernel's own limit is about 1 KiB). */
#define PM_KMSG_TEXT 1024

typedef struct pm_kmsg_rec {
    unsigned prio;   /* facility * 8 + level */
    uint64_t seq;    /* the record's sequence number */
    uint64_t ts_us;  /* microseconds since boot */
    char flag;       /* '-', 'c' or '+' */
    const char *msg; /* the message, inside the caller's buffer (not NUL-terminated) */
    size_t len;
} pm_kmsg_rec;

/* Parse one record (len bytes of buf, as one read() of /dev/kmsg returned
 * it).  Returns 0, or -1 when the header is malformed. */
int pm_kmsg_parse(const char *buf, size_t len, pm_kmsg_rec *out) PM_WUR;

typedef struct pm_oom_kill {
    int32_t pid;
    int64_t ts_us;        /* kernel time of the record that completed it */
    char comm[64];        /* "" when unknown */
    char constraint[32];  /* "CONSTRAINT_MEMCG", ...; "" when unknown */
    char memcg[256];      /* the cgroup whose limit was hit ("" when none given) */
    char task_memcg[256]; /* the victim's memory cgroup ("" when not given) */
    int64_t anon_rss_kb;  /* -1 when unknown */
    int64_t total_vm_kb;  /* -1 when unknown */
    int64_t uid;          /* -1 when unknown */
} pm_oom_kill;

/* Joins the records of a kill.  Zero-initialise (or pm_oom_init) before
 * the first pm_oom_feed. */
typedef struct pm_oom_parser {
    char cont[PM_KMSG_TEXT]; /* a line being assembled from 'c'/'+' fragments */
    size_t ncont;
    uint64_t cont_ts;
    int in_cont;
    int cont_cut;        /* the assembled line did not fit: dropped */
    pm_oom_kill pending; /* a summary line waiting for its kill line */
    int have_pending;
    /* The summary's text between "task_memcg=" (or "mems_allowed=") and
     * ",pid=": the victim's cgroup and name, split again once the kill
     * line tells the name (both may contain ",task="). */
    char mid[384];
    size_t nmid;
    int mid_has_memcg;
    /* Before 4.19: the cgroups of "Task in ... killed as a result of limit
     * of ..." and the pid of "Memory cgroup out of memory: Kill process",
     * for the kill line that follows. */
    char hint_task_memcg[256], hint_memcg[256];
    int have_hint_cg;
    int32_t hint_memcg_pid;
    uint64_t records, malformed; /* records seen, headers that did not parse */
} pm_oom_parser;

void pm_oom_init(pm_oom_parser *p);

/* Feed one raw record.  Completed kills are written to out (room for
 * max, at least 4); returns how many.  A summary whose kill line never
 * comes is completed alone by the next summary or by pm_oom_flush(). */
size_t pm_oom_feed(pm_oom_parser *p, const char *rec, size_t len, pm_oom_kill *out, size_t max);

/* Complete what is pending (a continued line not yet ended, a summary
 * without its kill line).  Completed kills go to out (room for max, at
  * least 4); returns how many. */
size_t pm_oom_flush(pm_oom_parser *p, pm_oom_kill *out, size_t max);

#endif
