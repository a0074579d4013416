/* How the job ended and its error events (docs/analysis.md, "How the job
 * ended").  Sources: the profile's event notes (docs/format.md, "Event
 * notes", parsed with cJSON), the error counters that rose between two
 * kept samples, the end record and the metadata's request. */
#include "perfmon/job_end.h"

#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/analysis.h"
#include "perfmon/clock.h"
#include "perfmon/error.h"
#include "perfmon/units.h"
#include "perfmon/vec.h"

#define MAX_EVENTS_PER_HOST 1000 /* hostile input: a host's events beyond are counted only */
#define LIMIT_SLACK_S 60.0       /* a time limit "hit": within a minute of it */
#define LAST_MINUTE_S 60.0

/* ---- names ---------------------------------------------------------------- */

static const char *const STATE_NAMES[] = {"unknown",    "completed", "stopped",
                                          "incomplete", "running",   "failed",
                                          "signal",     "timeout",   "oom"};

const char *pm_end_state_name(int state)
{
    if (state < 0 || (size_t)state >= sizeof STATE_NAMES / sizeof *STATE_NAMES)
        return "unknown";
    return STATE_NAMES[state];
}

/* The error counters: a rise between two kept samples is an event. */
typedef struct counter_def {
    const char *column;
    int kind;
    const char *what; /* the detail: "<what> +N" */
} counter_def;

static const counter_def COUNTERS[] = {
    {"cg.mem_events_oom_kill", PM_EV_CG_OOM_KILL, "the job's cgroup memory.events oom_kill"},
    {"cg.mem_events_oom", PM_EV_CG_OOM, "the job's cgroup memory.events oom (limit reached)"},
    {"cg.mem_events_max", PM_EV_CG_MAX, "the job's cgroup memory.events max (at its limit)"},
    {"cg.mem_events_high", PM_EV_CG_HIGH, "the job's cgroup memory.events high"},
    {"node.oom_kill", PM_EV_NODE_OOM_KILL, "OOM kills on the node (/proc/vmstat oom_kill)"},
    {"cpu.thermal_core_throttles", PM_EV_THERMAL_CORE, "CPU core thermal throttling"},
    {"cpu.thermal_package_throttles", PM_EV_THERMAL_PACKAGE, "CPU package thermal throttling"},
    {"edac.ce", PM_EV_EDAC_CE, "corrected memory errors (EDAC)"},
    {"edac.ue", PM_EV_EDAC_UE, "uncorrected memory errors (EDAC)"},
    {"ib.symbol_errors", PM_EV_IB_SYMBOL, "Infiniband symbol errors"},
    {"ib.link_downed", PM_EV_IB_LINK_DOWNED, "Infiniband link downed"},
    {"ib.rcv_errors", PM_EV_IB_RCV, "Infiniband receive errors"},
    {"ib.saturated", PM_EV_IB_SATURATED,
     "Infiniband ports with an error counter stuck at its maximum"},
    {"gpu.xid", PM_EV_GPU_XID, "GPU XID errors"},
    {"gpu.ecc_dbe", PM_EV_GPU_ECC_DBE, "GPU uncorrected (double-bit) ECC errors"},
    {"gpu.throttle_thermal", PM_EV_GPU_THERMAL, "GPU thermal throttling"},
};
#define NCOUNTERS (sizeof COUNTERS / sizeof *COUNTERS)

static const char *const KIND_NAMES[PM_EV_NKINDS] = {
    [PM_EV_EXIT] = "exit",
    [PM_EV_SIGNAL] = "signal",
    [PM_EV_OOM_KILL] = "oom_kill",
    [PM_EV_CGROUP] = "cgroup",
    [PM_EV_XID] = "xid",
    [PM_EV_CG_OOM_KILL] = "cg_oom_kill",
    [PM_EV_CG_OOM] = "cg_mem_oom",
    [PM_EV_CG_MAX] = "cg_mem_max",
    [PM_EV_CG_HIGH] = "cg_mem_high",
    [PM_EV_NODE_OOM_KILL] = "node_oom_kill",
    [PM_EV_THERMAL_CORE] = "thermal_core",
    [PM_EV_THERMAL_PACKAGE] = "thermal_package",
    [PM_EV_EDAC_CE] = "edac_ce",
    [PM_EV_EDAC_UE] = "edac_ue",
    [PM_EV_IB_SYMBOL] = "ib_symbol_errors",
    [PM_EV_IB_LINK_DOWNED] = "ib_link_downed",
    [PM_EV_IB_RCV] = "ib_rcv_errors",
    [PM_EV_IB_SATURATED] = "ib_saturated",
    [PM_EV_GPU_XID] = "gpu_xid",
    [PM_EV_GPU_ECC_DBE] = "gpu_ecc_dbe",
    [PM_EV_GPU_THERMAL] = "gpu_thermal",
};

const char *pm_event_kind_name(int kind)
{
    if (kind < 0 || kind >= PM_EV_NKINDS)
        return "unknown";
    return KIND_NAMES[kind];
}

const char *pm_signal_name(int sig)
{
    /* signal(7), x86 and arm numbering (the generic one) */
    static const char *const N[] = {
        NULL,        "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",   "SIGTRAP", "SIGABRT", "SIGBUS",
        "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",  "SIGPIPE", "SIGALRM", "SIGTERM",
        "SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",  "SIGTTIN", "SIGTTOU", "SIGURG",
        "SIGXCPU",   "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO",   "SIGPWR",  "SIGSYS"};
    if (sig <= 0 || (size_t)sig >= sizeof N / sizeof *N)
        return NULL;
    return N[sig];
}

int pm_job_end_reads(const char *column)
{
    if (strcmp(column, "cg.mem_limit") == 0 || strcmp(column, "cg.mem_current") == 0 ||
        strcmp(column, "proc.rss") == 0)
        return 1;
    for (size_t i = 0; i < NCOUNTERS; i++)
        if (strcmp(column, COUNTERS[i].column) == 0)
            return 1;
    /* a node's gpu.<n>.xid ... become a GPU host's gpu.xid (pm_gpu_split) */
    return strncmp(column, "gpu.", 4) == 0;
}

/* ---- event notes ---------------------------------------------------------- */

/* A note's text copied for a reader: printable ASCII, others '?'. */
static void clean(char *out, size_t cap, const char *s)
{
    size_t i = 0;
    for (; s && *s && i + 1 < cap; s++)
        out[i++] = (unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f ? *s : '?';
    if (cap)
        out[i] = 0;
}

static cJSON *parse_event(const char *text)
{
    const char *p = text;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != '{')
        return NULL;
    cJSON *o = cJSON_Parse(p);
    if (!o)
        return NULL;
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
    if (!cJSON_IsObject(o) || !cJSON_IsString(ev)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int pm_note_is_event(const char *text)
{
    cJSON *o = text ? parse_event(text) : NULL;
    cJSON_Delete(o);
    return o != NULL;
}

/* A member as a number; NaN when absent or not a finite number. */
static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

/* A whole number in [lo, hi], else def. */
static long whole(const cJSON *o, const char *k, long lo, long hi, long def)
{
    double d = num(o, k);
    if (isnan(d) || d != floor(d) || d < (double)lo || d > (double)hi)
        return def;
    return (long)d;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

/* ---- one host ------------------------------------------------------------- */

typedef struct host_events {
    pm_job_event *ev;
    size_t n, cap;
    size_t dropped; /* beyond MAX_EVENTS_PER_HOST */
    int nomem;
} host_events;

/* What the end decision reads from the events of one host. */
typedef struct facts {
    int have_exit;
    int exit_status, exit_signal, exit_core;
    double exit_t;
    int oom_note; /* an oom_kill note of the job */
    double oom_t;
    long oom_pid;
    char oom_comm[64];
    int oom_scope;
    double stop_sig_t; /* the first SIGTERM/SIGINT/SIGHUP the sampler got */
    int stop_sig;
    double cg_oom_kill_t; /* the first rise of cg.mem_events_oom_kill */
    int cg_limit_hit;     /* cg.mem_events_max or _oom rose */
    double node_oom_t;    /* the first rise of node.oom_kill */
    int has_oom_note, has_xid_note;
} facts;

static pm_job_event *add_event(host_events *he, size_t h, int kind, double t, double value)
{
    if (he->n >= MAX_EVENTS_PER_HOST) {
        he->dropped++;
        return NULL;
    }
    if (PM_VEC_RESERVE(he->ev, he->cap, he->n + 1, 8) != 0) {
        he->nomem = 1;
        return NULL;
    }
    pm_job_event *e = &he->ev[he->n++];
    memset(e, 0, sizeof *e);
    e->t = e->t_end = t;
    e->host = h;
    e->kind = kind;
    e->value = value;
    switch (kind) {
    case PM_EV_CGROUP:
    case PM_EV_EXIT: e->severity = 0; break; /* (an exit that failed: below) */
    case PM_EV_OOM_KILL:
    case PM_EV_XID:
    case PM_EV_CG_OOM_KILL:
    case PM_EV_NODE_OOM_KILL:
    case PM_EV_EDAC_UE:
    case PM_EV_IB_LINK_DOWNED:
    case PM_EV_GPU_XID:
    case PM_EV_GPU_ECC_DBE: e->severity = 2; break;
    default: e->severity = 1; break;
    }
    return e;
}

static void signal_text(char *out, size_t cap, int sig)
{
    const char *nm = pm_signal_name(sig);
    if (nm)
        snprintf(out, cap, "signal %d (%s)", sig, nm);
    else
        snprintf(out, cap, "signal %d", sig);
}

/* One note: an event when it is one of the kinds known; errors on the way
 * (out of memory) only lose the event. */
static void note_event(host_events *he, size_t h, const char *text, facts *f)
{
    cJSON *o = parse_event(text);
    if (!o)
        return;
    const char *ev = str(o, "event");
    double t = num(o, "t");
    if (isnan(t) || t <= 0) {
        cJSON_Delete(o);
        return;
    }
    char a[96], b[96], c[64];
    if (strcmp(ev, "exit") == 0) {
        long pid = whole(o, "pid", 0, INT32_MAX, -1);
        long st = whole(o, "status", 0, 255, -1);
        long sig = whole(o, "signal", 1, 127, 0);
        if (st < 0 && sig == 0)
            goto out;
        pm_job_event *e = add_event(he, h, PM_EV_EXIT, t, sig ? (double)sig : (double)st);
        f->have_exit = 1;
        f->exit_t = t;
        f->exit_status = sig ? -1 : (int)st;
        f->exit_signal = (int)sig;
        f->exit_core = whole(o, "core", 0, 1, 0) == 1;
        if (!e)
            goto out;
        e->severity = sig || st ? 2 : 0;
        a[0] = 0;
        if (pid >= 0)
            snprintf(a, sizeof a, " (pid %ld)", pid);
        if (sig) {
            signal_text(b, sizeof b, (int)sig);
            snprintf(e->detail, sizeof e->detail, "the command%s was killed by %s%s", a, b,
                     f->exit_core ? ", core dumped" : "");
        } else {
            snprintf(e->detail, sizeof e->detail, "the command%s exited with status %ld", a, st);
        }
    } else if (strcmp(ev, "signal") == 0) {
        long sig = whole(o, "signal", 1, 127, 0);
        if (!sig)
            goto out;
        int fwd = whole(o, "forwarded", 0, 1, 0) == 1;
        pm_job_event *e = add_event(he, h, PM_EV_SIGNAL, t, (double)sig);
        if ((sig == 15 || sig == 2 || sig == 1) && isnan(f->stop_sig_t)) {
            f->stop_sig_t = t;
            f->stop_sig = (int)sig;
        }
        if (e) {
            signal_text(b, sizeof b, (int)sig);
            snprintf(e->detail, sizeof e->detail, "the sampler got %s%s", b,
                     fwd ? ", forwarded to the command" : "");
        }
    } else if (strcmp(ev, "oom_kill") == 0) {
        long pid = whole(o, "pid", 0, INT32_MAX, -1);
        clean(c, sizeof c, str(o, "comm") ? str(o, "comm") : "?");
        const char *cons = str(o, "constraint");
        int scope = !cons                                   ? 0
                    : strcmp(cons, "CONSTRAINT_MEMCG") == 0 ? 1
                    : strcmp(cons, "CONSTRAINT_NONE") == 0  ? 2
                                                            : 0;
        long in_job = whole(o, "in_job", 0, 1, -1);
        f->has_oom_note = 1;
        pm_job_event *e = add_event(he, h, PM_EV_OOM_KILL, t, (double)pid);
        if (in_job == 1 && !f->oom_note) {
            f->oom_note = 1;
            f->oom_t = t;
            f->oom_pid = pid;
            snprintf(f->oom_comm, sizeof f->oom_comm, "%s", c);
            f->oom_scope = scope;
        }
        if (e) {
            clean(b, sizeof b, str(o, "memcg") ? str(o, "memcg") : "");
            clean(a, sizeof a, cons ? cons : "no constraint given");
            snprintf(e->detail, sizeof e->detail,
                     "%s (pid %ld) killed by the OOM killer (%s%s%s)%s", c, pid, a,
                     b[0] ? ", memcg " : "", b,
                     in_job == 1   ? ", in the job"
                     : in_job == 0 ? ", not in the job"
                                   : "");
        }
    } else if (strcmp(ev, "cgroup") == 0) {
        pm_job_event *e = add_event(he, h, PM_EV_CGROUP, t, (double)whole(o, "version", 1, 2, 0));
        if (e) {
            clean(a, sizeof a, str(o, "path") ? str(o, "path") : "?");
            clean(c, sizeof c, str(o, "level") ? str(o, "level") : "?");
            snprintf(e->detail, sizeof e->detail, "the job's cgroup (v%ld, %s level%s): %s",
                     whole(o, "version", 1, 2, 0), c,
                     whole(o, "created", 0, 1, 0) == 1 ? ", made by perfmon" : "", a);
        }
    } else if (strcmp(ev, "xid") == 0) {
        long xid = whole(o, "xid", 0, INT32_MAX, -1);
        long gpu = whole(o, "gpu", 0, 65535, -1);
        if (xid < 0)
            goto out;
        f->has_xid_note = 1;
        pm_job_event *e = add_event(he, h, PM_EV_XID, t, (double)xid);
        if (e)
            snprintf(e->detail, sizeof e->detail, "GPU %ld: XID error %ld", gpu, xid);
    }
out:
    cJSON_Delete(o);
}

/* The rises of one counter column over the kept samples, a run of
 * consecutive rising samples as one event. */
static void counter_events(host_events *he, size_t h, const pm_host *ho, const double *v,
                           const counter_def *d, facts *f)
{
    double prev = NAN;
    pm_job_event *run = NULL;
    for (size_t i = 0; i < ho->n; i++) {
        double x = v[ho->idx[i]];
        if (isnan(x)) {
            run = NULL;
            continue;
        }
        double inc = isnan(prev) ? 0 : x - prev;
        prev = x;
        if (!(inc > 0)) { /* the same, or a reset: the new value is the base */
            run = NULL;
            continue;
        }
        double t = ho->t[i];
        if (d->kind == PM_EV_CG_OOM_KILL && isnan(f->cg_oom_kill_t))
            f->cg_oom_kill_t = t;
        if (d->kind == PM_EV_CG_OOM || d->kind == PM_EV_CG_MAX)
            f->cg_limit_hit = 1;
        if (d->kind == PM_EV_NODE_OOM_KILL && isnan(f->node_oom_t))
            f->node_oom_t = t;
        if (run) {
            run->t_end = t;
            run->value += inc;
        } else if (!(run = add_event(he, h, d->kind, t, inc))) {
            continue;
        }
        double span = run->t_end - run->t;
        char over[48] = "";
        if (span > 0)
            pm_fmt_duration(span, over + 6, sizeof over - 6), memcpy(over, " over ", 6);
        if (d->kind == PM_EV_GPU_THERMAL) {
            char dur[32];
            pm_fmt_duration(run->value * 1e-9, dur, sizeof dur);
            snprintf(run->detail, sizeof run->detail, "%s: %s below its clocks%s", d->what, dur,
                     over);
        } else {
            snprintf(run->detail, sizeof run->detail, "%s +%.0f%s", d->what, run->value, over);
        }
    }
}

/* The metadata's request: the time limit's deadline. */
static void request_deadline(const pm_profile *p, pm_end *e)
{
    e->deadline = e->time_limit_s = NAN;
    if (!p->meta_json)
        return;
    cJSON *m = cJSON_Parse(p->meta_json);
    const cJSON *r = m ? cJSON_GetObjectItemCaseSensitive(m, "request") : NULL;
    double lim = num(r, "time_limit_s"), st = num(r, "start_time");
    if (lim > 0 && st > 0) {
        e->time_limit_s = lim;
        e->deadline = st + lim;
    }
    cJSON_Delete(m);
}

static const double *column(const pm_host *ho, const char *name)
{
    int c = pm_profile_column(ho->prof, name);
    return c >= 0 ? ho->prof->values[c] : NULL;
}

/* The memory of the last minute and the limit. */
static void last_minute(const pm_host *ho, pm_end *e)
{
    e->mem_limit = e->mem_last_max = NAN;
    e->mem_from = "";
    if (!ho->n)
        return;
    const double *lim = column(ho, "cg.mem_limit");
    for (size_t i = ho->n; lim && i-- > 0;)
        if (!isnan(lim[ho->idx[i]]) && lim[ho->idx[i]] > 0) {
            e->mem_limit = lim[ho->idx[i]];
            break;
        }
    const char *from[] = {"cg.mem_current", "proc.rss"};
    double tl = ho->t[ho->n - 1];
    for (int k = 0; k < 2 && isnan(e->mem_last_max); k++) {
        const double *v = column(ho, from[k]);
        for (size_t i = ho->n; v && i-- > 0 && ho->t[i] >= tl - LAST_MINUTE_S;) {
            double x = v[ho->idx[i]];
            if (!isnan(x) && (isnan(e->mem_last_max) || x > e->mem_last_max)) {
                e->mem_last_max = x;
                e->mem_from = from[k];
            }
        }
    }
}

/* The decision table (docs/analysis.md, "How the job ended"). */
static void decide(const pm_host *ho, const facts *f, pm_end *e)
{
    const pm_profile *p = ho->prof;
    int has_end = p->has_end;
    int st = has_end ? p->end.exit_status : -1;
    /* the command's end: the exit event, else the end record's status */
    if (f->have_exit) {
        e->exit_status = f->exit_status;
        e->signal = f->exit_signal;
        e->core = f->exit_core;
        e->t = f->exit_t;
    } else if (st >= 0) {
        e->exit_status = st;
        if (st > 128 && st < 128 + 65) {
            e->signal = st - 128;
            e->signal_inferred = 1;
        }
        e->t = e->t_last;
    }
    int sigterm_like = e->signal == 15 || e->signal == 9;
    int near_limit = 0;
    /* (a command that exited with status 0 completed, limit or not) */
    if (!isnan(e->deadline) && !(e->exit_status == 0 && !e->signal)) {
        double lo = e->deadline - LIMIT_SLACK_S;
        near_limit = (!isnan(f->stop_sig_t) && f->stop_sig_t >= lo) ||
                     (!isnan(e->t_last) && e->t_last >= lo &&
                      (sigterm_like || !has_end || (!isnan(f->stop_sig_t))));
    }
    if (f->oom_note || !isnan(f->cg_oom_kill_t)) {
        e->state = PM_END_OOM;
        if (f->oom_note) {
            e->t = f->oom_t;
            e->oom_pid = f->oom_pid;
            snprintf(e->oom_comm, sizeof e->oom_comm, "%s", f->oom_comm);
            e->oom_scope = f->oom_scope;
        } else {
            e->t = f->cg_oom_kill_t;
        }
        if (!e->oom_scope && f->cg_limit_hit)
            e->oom_scope = 1;
    } else if (near_limit) {
        e->state = PM_END_TIMEOUT;
        e->t = !isnan(f->stop_sig_t) ? f->stop_sig_t : e->t_last;
    } else if (e->signal) {
        e->state = e->signal_inferred ? PM_END_FAILED : PM_END_SIGNAL;
    } else if (e->exit_status > 0) {
        e->state = PM_END_FAILED;
    } else if (e->exit_status == 0) {
        e->state = PM_END_COMPLETED;
    } else if (has_end) {
        e->state = PM_END_STOPPED;
        e->t = e->t_last;
    } else if (ho->incomplete[0] == 't') {
        e->state = PM_END_RUNNING;
    } else if (ho->incomplete[0]) {
        e->state = PM_END_INCOMPLETE;
    } else {
        e->state = PM_END_UNKNOWN;
    }
}

int pm_job_end_begin(pm_analysis *a)
{
    a->ends = calloc(a->in.nhosts ? a->in.nhosts : 1, sizeof *a->ends);
    a->host_events = calloc(a->in.nhosts ? a->in.nhosts : 1, sizeof(host_events));
    return a->ends && a->host_events ? 0 : PM_ENOMEM;
}

int pm_job_end_host(pm_analysis *a, size_t h, const pm_host *ho)
{
    host_events *he = &((host_events *)a->host_events)[h];
    pm_end *e = &a->ends[h];
    memset(e, 0, sizeof *e);
    e->exit_status = -1;
    e->oom_pid = -1;
    e->t = e->t_last = NAN;
    e->mem_from = "";
    snprintf(e->incomplete, sizeof e->incomplete, "%s", ho->incomplete);
    snprintf(e->format, sizeof e->format, "%s", ho->format);
    facts f = {.exit_status = -1,
               .exit_t = NAN,
               .oom_t = NAN,
               .oom_pid = -1,
               .stop_sig_t = NAN,
               .cg_oom_kill_t = NAN,
               .node_oom_t = NAN};
    const pm_profile *p = ho->prof;
    if (!p)
        return 0;
    for (size_t i = 0; i < p->nnotes; i++)
        note_event(he, h, p->notes[i], &f);
    for (size_t k = 0; k < NCOUNTERS; k++) {
        const counter_def *d = &COUNTERS[k];
        /* the kernel log's OOM kills and NVML's XIDs say more than their
         * counts: the count's rises are not listed again */
        if ((f.has_oom_note && (d->kind == PM_EV_CG_OOM_KILL || d->kind == PM_EV_NODE_OOM_KILL)) ||
            (f.has_xid_note && d->kind == PM_EV_GPU_XID))
            continue;
        const double *v = column(ho, d->column);
        if (v && ho->t && ho->idx)
            counter_events(he, h, ho, v, d, &f);
    }
    if (f.has_oom_note) { /* (the decision still reads the counts) */
        const double *v = column(ho, "cg.mem_events_oom_kill");
        for (size_t i = 1; v && ho->t && i < ho->n; i++)
            if (v[ho->idx[i]] > v[ho->idx[i - 1]]) {
                f.cg_oom_kill_t = ho->t[i];
                break;
            }
    }
    if (he->nomem)
        return PM_ENOMEM;
    if (p->has_end)
        e->t_last = (double)p->end.end_wall_ns * 1e-9;
    else if (ho->n && ho->t)
        e->t_last = ho->t[ho->n - 1];
    snprintf(e->reason, sizeof e->reason, "%s", p->has_end ? p->end.reason : "");
    clean(e->reason, sizeof e->reason, e->reason);
    request_deadline(p, e);
    if (ho->t && ho->idx)
        last_minute(ho, e);
    if (ho->gpu) { /* a GPU's end is its node's */
        e->state = PM_END_UNKNOWN;
        return 0;
    }
    decide(ho, &f, e);
    return 0;
}

static int cmp_event(const void *x, const void *y)
{
    const pm_job_event *a = x, *b = y;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->host != b->host)
        return a->host < b->host ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind - b->kind;
    if (a->value != b->value)
        return a->value < b->value ? -1 : 1;
    return strcmp(a->detail, b->detail);
}

int pm_job_end_finish(pm_analysis *a)
{
    host_events *he = a->host_events;
    size_t n = 0;
    for (size_t h = 0; he && h < a->in.nhosts; h++) {
        n += he[h].n;
        a->events_dropped += he[h].dropped;
    }
    int rc = 0;
    a->events = calloc(n ? n : 1, sizeof *a->events);
    if (!a->events)
        rc = PM_ENOMEM;
    for (size_t h = 0; he && h < a->in.nhosts; h++) {
        if (!rc && he[h].n)
            memcpy(a->events + a->nevents, he[h].ev, he[h].n * sizeof *he[h].ev);
        if (!rc)
            a->nevents += he[h].n;
        free(he[h].ev);
    }
    free(he);
    a->host_events = NULL;
    if (rc)
        return rc;
    qsort(a->events, a->nevents, sizeof *a->events, cmp_event);
    pm_job_end *j = &a->end;
    j->state = PM_END_UNKNOWN;
    j->host = SIZE_MAX;
    j->nhosts = j->nnodes = 0;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        if (a->in.hosts[h].gpu)
            continue;
        j->nnodes++;
        if (j->host == SIZE_MAX || a->ends[h].state > j->state) {
            j->state = a->ends[h].state;
            j->host = h;
            j->nhosts = 1;
        } else if (a->ends[h].state == j->state) {
            j->nhosts++;
        }
    }
    return 0;
}

void pm_job_end_free(pm_analysis *a)
{
    host_events *he = a->host_events;
    for (size_t h = 0; he && h < a->in.nhosts; h++)
        free(he[h].ev);
    free(he);
    a->host_events = NULL;
    free(a->ends);
    free(a->events);
    a->ends = NULL;
    a->events = NULL;
    a->nevents = 0;
}

/* ---- words ---------------------------------------------------------------- */

/* The hosts in the job's state: "" when they are all the nodes (or one
 * node), else " on node-1, node-3 and 2 more". */
static void hosts_in_state(const pm_analysis *a, char *out, size_t cap, int force)
{
    const pm_job_end *j = &a->end;
    out[0] = 0;
    if (j->host == SIZE_MAX || (!force && (j->nhosts == j->nnodes)))
        return;
    size_t shown = 0, len = 0;
    for (size_t h = 0; h < a->in.nhosts && len + 1 < cap; h++) {
        if (a->in.hosts[h].gpu || a->ends[h].state != j->state)
            continue;
        if (shown == 3) {
            snprintf(out + len, cap - len, " and %zu more", j->nhosts - shown);
            return;
        }
        int k = snprintf(out + len, cap - len, "%s%s", shown ? ", " : " on ", a->in.hosts[h].name);
        if (k < 0)
            return;
        len += (size_t)k;
        shown++;
    }
}

static void mem_tail(const pm_end *e, char *out, size_t cap)
{
    char b1[32], b2[32];
    out[0] = 0;
    if (!isnan(e->mem_last_max) && !isnan(e->mem_limit)) {
        pm_fmt_bytes(e->mem_last_max, b1, sizeof b1);
        pm_fmt_bytes(e->mem_limit, b2, sizeof b2);
        snprintf(out, cap, "; in its last minute it used up to %s of %s (%.0f %%, %s)", b1, b2,
                 100 * e->mem_last_max / e->mem_limit, e->mem_from);
    } else if (!isnan(e->mem_last_max)) {
        pm_fmt_bytes(e->mem_last_max, b1, sizeof b1);
        snprintf(out, cap, "; in its last minute it used up to %s (%s)", b1, e->mem_from);
    }
}

static void before_end(const pm_end *e, char *out, size_t cap)
{
    out[0] = 0;
    if (!isnan(e->t) && !isnan(e->t_last) && e->t_last >= e->t) {
        char d[32];
        pm_fmt_duration(e->t_last - e->t, d, sizeof d);
        snprintf(out, cap, ", %s before the end", d);
    }
}

/* The words of pm_end_text; with clock, times as the time of day (page 1,
 * whose header gives the day). */
static int end_words(const pm_analysis *a, size_t h, int clock, char *buf, size_t cap)
{
    const pm_end *e;
    char on[256] = "";
    if (h == SIZE_MAX) {
        if (!a->ends || a->end.host == SIZE_MAX)
            return snprintf(buf, cap, "not recorded (no node's profile)");
        e = &a->ends[a->end.host];
        hosts_in_state(a, on, sizeof on, e->state == PM_END_OOM || a->end.nnodes > 1);
        if (e->state == PM_END_COMPLETED || e->state == PM_END_UNKNOWN)
            on[0] = 0;
    } else {
        e = &a->ends[h];
    }
    char at[48] = "", iso[40], sig[48], be[48], mt[160];
    if (!isnan(e->t) && pm_utc_iso(e->t, iso, sizeof iso) > 0 && strlen(iso) >= 19)
        snprintf(at, sizeof at, clock ? " at %.8s" : " at %s", clock ? iso + 11 : iso);
    signal_text(sig, sizeof sig, e->signal);
    switch (e->state) {
    case PM_END_OOM: {
        char who[96] = "", scope[128] = "", lim[32];
        if (e->oom_comm[0])
            snprintf(who, sizeof who, ": %s (pid %ld)", e->oom_comm, e->oom_pid);
        pm_fmt_bytes(e->mem_limit, lim, sizeof lim);
        if (e->oom_scope == 1 && !isnan(e->mem_limit))
            snprintf(scope, sizeof scope, "; the job's cgroup limit is %s", lim);
        else if (e->oom_scope == 1)
            snprintf(scope, sizeof scope, "; the job's cgroup hit its memory limit");
        else if (e->oom_scope == 2)
            snprintf(scope, sizeof scope, "; the whole node ran out of memory");
        before_end(e, be, sizeof be);
        mem_tail(e, mt, sizeof mt);
        return snprintf(buf, cap, "killed by the OOM killer%s%s%s%s%s%s", who, on, at, be, scope,
                        mt);
    }
    case PM_END_TIMEOUT: {
        char lim[32];
        pm_fmt_duration(e->time_limit_s, lim, sizeof lim);
        char how[96] = "";
        if (e->signal && !e->signal_inferred)
            snprintf(how, sizeof how, "; the command was killed by %s", sig);
        else if (e->exit_status > 0)
            snprintf(how, sizeof how, "; the command exited with status %d", e->exit_status);
        return snprintf(buf, cap, "hit its time limit of %s%s%s%s", lim, on, at, how);
    }
    case PM_END_SIGNAL:
        return snprintf(buf, cap, "killed by %s%s%s%s", sig, e->core ? ", core dumped" : "", on,
                        at);
    case PM_END_FAILED:
        if (e->signal_inferred)
            return snprintf(buf, cap, "exit status %d (128 + %d: %s?)%s", e->exit_status, e->signal,
                            pm_signal_name(e->signal) ? pm_signal_name(e->signal) : "a signal", on);
        return snprintf(buf, cap, "exited with status %d (failed)%s", e->exit_status, on);
    case PM_END_COMPLETED: return snprintf(buf, cap, "completed (exit status 0)%s", on);
    case PM_END_STOPPED:
        return snprintf(buf, cap, "sampling ended: %s (no command was run)%s",
                        e->reason[0] ? e->reason : "stopped", on);
    case PM_END_RUNNING:
        return snprintf(buf, cap, "still running: the sampler was still running%s", on);
    case PM_END_INCOMPLETE:
        return snprintf(buf, cap, "incomplete: no end record (the sampler was killed or crashed)%s",
                        on);
    default: return snprintf(buf, cap, "not recorded (%s input has no end record)", e->format);
    }
}

int pm_end_text(const pm_analysis *a, size_t h, char *buf, size_t cap)
{
    return end_words(a, h, 0, buf, cap);
}

int pm_end_sentence(const pm_analysis *a, char *buf, size_t cap)
{
    if (!a->ends || a->end.host == SIZE_MAX)
        return snprintf(buf, cap, "How the job ended is not recorded.");
    const pm_end *e = &a->ends[a->end.host];
    char on[256];
    hosts_in_state(a, on, sizeof on, a->end.nnodes > 1 || e->state == PM_END_OOM);
    if (e->state == PM_END_OOM) {
        char at[48] = "", be[48] = "", lim[32], mt[160] = "";
        char iso[40];
        if (!isnan(e->t) && pm_utc_iso(e->t, iso, sizeof iso) > 0 && strlen(iso) >= 19)
            snprintf(at, sizeof at, " at %.8s", iso + 11);
        if (!isnan(e->t) && !isnan(e->t_last) && e->t_last >= e->t) {
            char d[32];
            pm_fmt_duration(e->t_last - e->t, d, sizeof d);
            snprintf(be, sizeof be, ", %s before the job ended", d);
        }
        char who[96];
        if (e->oom_comm[0])
            snprintf(who, sizeof who, "%s (pid %ld) was", e->oom_comm, e->oom_pid);
        else
            snprintf(who, sizeof who, "The job was");
        pm_fmt_bytes(e->mem_limit, lim, sizeof lim);
        char scope[96] = "";
        if (e->oom_scope == 1 && !isnan(e->mem_limit))
            snprintf(scope, sizeof scope, "; its cgroup's memory limit is %s", lim);
        else if (e->oom_scope == 1)
            snprintf(scope, sizeof scope, "; its cgroup reached its memory limit");
        else if (e->oom_scope == 2)
            snprintf(scope, sizeof scope, "; the whole node ran out of memory");
        mem_tail(e, mt, sizeof mt);
        return snprintf(buf, cap, "%s killed by the out-of-memory killer%s%s%s%s%s.", who, on, at,
                        be, scope, mt);
    }
    char t[400];
    end_words(a, SIZE_MAX, 1, t, sizeof t);
    switch (e->state) {
    case PM_END_COMPLETED:
    case PM_END_FAILED:
    case PM_END_SIGNAL:
    case PM_END_TIMEOUT:
        if (e->state == PM_END_FAILED && e->signal_inferred)
            return snprintf(buf, cap, "The job ended with %s.", t);
        if (e->state == PM_END_SIGNAL)
            return snprintf(buf, cap, "The job was %s.", t);
        return snprintf(buf, cap, "The job %s.", t);
    case PM_END_STOPPED: return snprintf(buf, cap, "No command was run; %s.", t);
    case PM_END_RUNNING: return snprintf(buf, cap, "The job is %s.", t);
    case PM_END_INCOMPLETE: return snprintf(buf, cap, "The job's profile is %s.", t);
    default: return snprintf(buf, cap, "How the job ended is %s.", t);
    }
}
