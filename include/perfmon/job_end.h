/* job_end.h - how the job ended and the error events on its hosts
 * (docs/analysis.md, "How the job ended").
 *
 * Per host, the timed event notes of the profile (docs/format.md, "Event
 * notes") and the error counters that rose between two samples become
 * events; from them, the end record and the job's request, each host gets
 * an end state, and the job the worst of its hosts'.
 *
 * Ownership: the analysis owns a->ends, a->end and a->events
 * (pm_job_end_free); the text functions write into the caller's buffer.
 */
#ifndef PERFMON_JOB_END_H
#define PERFMON_JOB_END_H

#include <stddef.h>

/* End states, ordered: a larger value is a worse end, and the job's state
 * is its hosts' largest. */
enum pm_end_state {
    PM_END_UNKNOWN = 0,    /* the input records no end (SKA, Scanner) */
    PM_END_COMPLETED = 1,  /* exit status 0 */
    PM_END_STOPPED = 2,    /* no command: sampling ended (SIGTERM, IPC, duration) */
    PM_END_INCOMPLETE = 3, /* no end record */
    PM_END_RUNNING = 4,    /* the sampler was still running */
    PM_END_FAILED = 5,  /* exit status 1 .. 255 (>= 128 without an exit event: signal_inferred) */
    PM_END_SIGNAL = 6,  /* killed by a signal */
    PM_END_TIMEOUT = 7, /* hit its time limit */
    PM_END_OOM = 8      /* killed by the OOM killer */
};

/* Kinds of event: the notes' kinds first, then the counters'. */
enum pm_event_kind {
    PM_EV_EXIT = 0,      /* note: the command ended */
    PM_EV_SIGNAL,        /* note: the sampler got SIGTERM, SIGINT or SIGHUP */
    PM_EV_OOM_KILL,      /* note: the kernel log's OOM kill */
    PM_EV_CGROUP,        /* note: the job's cgroup found or made */
    PM_EV_XID,           /* note: an NVML XID error */
    PM_EV_CG_OOM_KILL,   /* cg.mem_events_oom_kill rose */
    PM_EV_CG_OOM,        /* cg.mem_events_oom rose: the limit was reached, allocation failed */
    PM_EV_CG_MAX,        /* cg.mem_events_max rose: usage reached the limit */
    PM_EV_CG_HIGH,       /* cg.mem_events_high rose */
    PM_EV_NODE_OOM_KILL, /* node.oom_kill rose */
    PM_EV_THERMAL_CORE,
    PM_EV_THERMAL_PACKAGE,
    PM_EV_EDAC_CE,
    PM_EV_EDAC_UE,
    PM_EV_IB_SYMBOL,
    PM_EV_IB_LINK_DOWNED,
    PM_EV_IB_RCV,
    PM_EV_IB_SATURATED, /* ports with a counter stuck at its maximum went up */
    PM_EV_GPU_XID,      /* gpu.xid rose (a GPU host) */
    PM_EV_GPU_ECC_DBE,
    PM_EV_GPU_THERMAL, /* gpu.throttle_thermal: time held below its clocks */
    PM_EV_NKINDS
};

typedef struct pm_job_event {
    double t;     /* s since the epoch: the note's t, or the sample that saw the rise */
    double t_end; /* a counter's rises in consecutive samples are one event: the last; = t */
    size_t host;  /* host index */
    int kind;     /* enum pm_event_kind */
    double value; /* the increase (counters); the status, signal or XID (notes) */
    int severity; /* 0 information (an exit with status 0, the cgroup), 1 warning
                   * (limit hits, throttling, corrected errors, a signal to the sampler),
                   * 2 critical (kills, uncorrected errors, XIDs, a failed command) */
    char detail[192];
} pm_job_event;

/* One host's end. */
typedef struct pm_end {
    int state;           /* enum pm_end_state */
    int exit_status;     /* the command's, -1 when none */
    int signal;          /* 0 when none */
    int signal_inferred; /* signal read from an exit status >= 128 alone */
    int core;            /* the exit event says a core was dumped */
    double t;            /* when it ended or was killed; NaN when unknown */
    double t_last;       /* the end record's time, else the last sample's; NaN */
    long oom_pid;        /* -1 when unknown */
    char oom_comm[64];
    int oom_scope;        /* 0 unknown, 1 the job's cgroup limit, 2 the whole node */
    double mem_limit;     /* cg.mem_limit's last value (B), NaN */
    double mem_last_max;  /* cg.mem_current (else proc.rss) max over the last 60 s (B), NaN */
    const char *mem_from; /* the column of mem_last_max, "" */
    double deadline;      /* request start_time + time_limit_s, NaN */
    double time_limit_s;  /* NaN */
    char reason[64];      /* the end record's reason, "" */
    char incomplete[48];  /* the host's, "" */
    char format[16];
} pm_end;

/* The job's end: the worst host's state and which hosts are in it. */
typedef struct pm_job_end {
    int state;
    size_t host;   /* the first host in that state (SIZE_MAX: none) */
    size_t nhosts; /* hosts in that state */
    size_t nnodes; /* hosts that are nodes (not GPUs) */
} pm_job_end;

struct pm_analysis;
struct pm_host;

/* The keyword of a state ("completed", "failed", "signal", "oom",
 * "timeout", "incomplete", "running", "stopped", "unknown") and of an
 * event kind ("exit", "oom_kill", "cg_oom_kill", "edac_ue", ...). */
const char *pm_end_state_name(int state);
const char *pm_event_kind_name(int kind);
/* SIGKILL for 9, ..., NULL for a number Linux does not name. */
const char *pm_signal_name(int sig);

/* Whether a profile note's text is an event note (a JSON object with a
 * string "event"): the outputs that list plain notes leave these out. */
int pm_note_is_event(const char *text);

/* Whether the end decision reads raw column `column` (the column
 * projection of the reader decodes it). */
int pm_job_end_reads(const char *column);

/* Set up a->ends[nhosts] and the per-host event lists (before the hosts
 * are scanned).  Returns 0 or PM_ENOMEM. */
int pm_job_end_begin(struct pm_analysis *a);
/* Scan host h (ho: its profile with the values of pm_job_end_reads'
 * columns, its kept samples t/idx/n): its events and its end into
 * a->ends[h].  Hosts may be scanned at once from several threads. */
int pm_job_end_host(struct pm_analysis *a, size_t h, const struct pm_host *ho);
/* The job's end from the hosts' and the events in one list, by time then
 * host (the same whatever order the hosts were scanned in). */
int pm_job_end_finish(struct pm_analysis *a);
void pm_job_end_free(struct pm_analysis *a);

/* The end of host h, or of the job (h = SIZE_MAX), in words, without
 * "job: " (e.g. "killed by signal 11 (SIGSEGV) on node-1 at
 * 2026-11-28T00:14:07Z"); the job's names its hosts where they are not
 * all the nodes.  Returns snprintf's count. */
int pm_end_text(const struct pm_analysis *a, size_t h, char *buf, size_t cap);
/* Page 1's first sentence (e.g. "python3 (pid 4242) was killed by the
 * out-of-memory killer on node-3 at 00:14:07, 2 s before the job ended;
 * its cgroup's memory limit is 64 MiB."). */
int pm_end_sentence(const struct pm_analysis *a, char *buf, size_t cap);

#endif
