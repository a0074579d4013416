/* phase.h - job phases: marks recorded on the nodes, their pairing into
 * intervals, Scanner-style binary interval profiles, and phase statistics.
 *
 * A mark is one event written by `perfmon-sample mark` into the per-host
 * events file (docs/format.md, "Events"): start or end of a named phase,
 * or a one-shot phase that carries its own duration.  pm_phases_pair()
 * turns a host's marks into intervals (pm_phase).  Scanner profiles yield
 * intervals directly (one track per worker) plus counters.
 *
 * Ownership: a pm_phase_set owns every string and array in it and is
 * released with pm_phase_set_free().
 */
#ifndef PERFMON_PHASE_H
#define PERFMON_PHASE_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/error.h"

/* Limits every reader enforces. */
#define PM_EVENT_LINE_MAX 4000 /* one event line, bytes (one atomic write) */
#define PM_EVENT_NAME_MAX 64
#define PM_EVENT_ATTRS_MAX 32  /* KEY=VALUE pairs per event */
#define PM_EVENTS_MAX 10000000 /* events per file */

enum pm_edge { PM_EDGE_START = 0, PM_EDGE_END = 1, PM_EDGE_ONESHOT = 2 };

/* One recorded mark. */
typedef struct pm_event {
    int64_t wall_ns; /* CLOCK_REALTIME, as the samples' wall time */
    int64_t mono_ns; /* CLOCK_MONOTONIC, as the samples' monotonic time */
    char *host;
    int pid;
    char *name;    /* phase kind */
    int edge;      /* enum pm_edge */
    double diff_s; /* ONESHOT: duration, ending at wall_ns */
    char *key;     /* pairing key: the "img", "key" or "id" attribute, or "" */
    char *attrs;   /* the attributes as a JSON object text ("{}" when none) */
    size_t line;   /* line in its file (messages) */
} pm_event;

/* One phase interval. */
typedef struct pm_phase {
    char *host;    /* node (Scanner: "node <n>") */
    char *name;    /* phase kind (Scanner: the interval key) */
    char *key;     /* pairing key value, "" when none */
    char *track;   /* Scanner worker ("load[0]"), "" for marks */
    double t0, t1; /* seconds since the epoch */
    char *attrs;   /* JSON object text */
} pm_phase;

/* A named total per worker kind, as Scanner's statistics(): a counter's
 * summed values, or the summed time of the intervals with that key. */
typedef struct pm_phase_counter {
    char *kind;    /* worker type ("load", "eval", ...) */
    char *name;    /* counter name or interval key */
    int is_time;   /* 1: value is summed interval time in ns */
    int64_t value; /* saturates at the int64 limits */
} pm_phase_counter;

typedef struct pm_phase_set {
    pm_phase *v;
    size_t n, cap;
    pm_phase_counter *counters;
    size_t ncounters, ccap;
    size_t *chash; /* open-addressing index into counters (private) */
    size_t chash_cap;
    char **problems; /* unmatched marks and the like, one line each */
    size_t nproblems, pcap;
    /* Scanner: profiles read, their earliest start and latest end (ns since
     * the epoch), and the difference in s (Scanner's total_time). */
    size_t scanner_files;
    int64_t scanner_start_ns, scanner_end_ns;
    double scanner_total_s;
} pm_phase_set;

void pm_phase_set_free(pm_phase_set *s);

/* Append (copies the strings).  Returns 0 or PM_ENOMEM. */
int pm_phase_add(pm_phase_set *s, const char *host, const char *name, const char *key,
                 const char *track, double t0, double t1, const char *attrs) PM_WUR;
int pm_phase_counter_add(pm_phase_set *s, const char *kind, const char *name, int is_time,
                         int64_t value) PM_WUR;
/* Move everything in src to dst (phases appended, totals summed, problems
 * appended, Scanner span widened); src is left empty.  0 or PM_ENOMEM
 * (then src keeps what was not moved and both stay valid to free). */
int pm_phase_set_take(pm_phase_set *dst, pm_phase_set *src) PM_WUR;
int pm_phase_problem(pm_phase_set *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- events files ---------------------------------------------------------- */

/* Whether the first bytes of a file are a perfmon events file. */
int pm_events_sniff(const void *head, size_t len);

typedef struct pm_event_list {
    pm_event *v;
    size_t n, cap;
} pm_event_list;

void pm_event_list_free(pm_event_list *l);

/* Read an events file.  A malformed line is skipped and counted in
 * *bad (with the first one's position in err) so one torn line never
 * loses the others; a file with no valid event at all is an error. */
int pm_events_read(const char *path, pm_event_list *out, size_t *bad, pm_error *err) PM_WUR;
/* The same over len bytes of text (need not be NUL-terminated); path
 * names the source in messages. */
int pm_events_decode(const char *path, const char *text, size_t len, pm_event_list *out,
                     size_t *bad, pm_error *err) PM_WUR;

/* Append one event to DIR/<host>.events (created if missing) as a single
 * locked write; safe with many concurrent writers on one node and over
 * NFS.  attrs: n "KEY=VALUE" strings. */
int pm_event_append(const char *dir, const char *host, const char *name, int edge, double diff_s,
                    const char *const *attrs, size_t nattrs, pm_error *err) PM_WUR;

/* Pair marks into phases, per host by (name, key) in time order: an end
 * closes the latest open start of the same name and key (so nested and
 * repeated phases pair as written); one-shot marks are phases on their
 * own.  Unmatched marks become problems ("host: end of NAME at TIME has
 * no start"), never errors. */
int pm_phases_pair(const pm_event_list *events, pm_phase_set *out, pm_error *err) PM_WUR;

/* Scanner profiles: see perfmon/scanner.h. */

#endif
