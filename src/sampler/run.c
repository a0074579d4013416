/* The sampling loop of perfmon-sample.
 *
 * Samples are taken on absolute deadlines start + k * interval, so the
 * series does not drift; a deadline that has already passed is counted as
 * missed instead of being taken late in a burst.  The loop sleeps in
 * ppoll() with all handled signals blocked outside it, so no signal can
 * slip in between the check and the sleep.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfmon/buf.h"
#include "perfmon/clock.h"
#include "perfmon/dirs.h"
#include "perfmon/fileio.h"
#include "perfmon/ipc.h"
#include "perfmon/log.h"
#include "perfmon/parse.h"
#include "perfmon/proctree.h"
#include "perfmon/request.h"
#include "perfmon/sampler.h"
#include "perfmon/strs.h"
#include "perfmon/source.h"
#include "perfmon/writer.h"

#include "run.h"

static volatile sig_atomic_t g_stop_signal;
static volatile sig_atomic_t g_child_event;

static void on_signal(int sig)
{
    if (sig == SIGCHLD)
        g_child_event = 1;
    else
        g_stop_signal = sig;
}

/* The sampler's own resident size, from the real /proc/self/statm even
 * when --proc-root names a captured tree: that tree's "self" is another
 * process (the one that captured it).  Not recorded when unreadable. */
static void self_rss(run *r, pm_sample *s)
{
    char buf[128];
    if (pm_pread_kept(&r->fd_statm, AT_FDCWD, "/proc/self/statm", buf, sizeof buf, NULL) <= 0)
        return;
    /* proc(5) statm: size, resident (pages). */
    const char *p = buf;
    uint64_t size, res;
    long ps = r->ctx.page_size;
    if (pm_scan_u64(&p, &size) != 0 || pm_scan_u64(&p, &res) != 0 || ps <= 0 ||
        res > UINT64_MAX / (uint64_t)ps)
        return;
    pm_sample_u64(s, r->col_rss, res * (uint64_t)ps);
}

/* Write msg into the profile(s) as a note (and log it). */
static void note_text(run *r, const char *msg)
{
    pm_log(PM_LOG_INFO, "%s", msg);
    for (size_t i = 0; i < r->nw && r->writing; i++) {
        pm_error err;
        if (pm_writer_note(r->w[i], msg, &err) != 0)
            pm_log(PM_LOG_WARN, "%s", err.msg);
    }
}

static void note(run *r, const char *fmt, ...) PM_PRINTF(2, 3);
static void note(run *r, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    note_text(r, msg);
}

/* pm_sctx.note: a source's note or event, written as it is: not cut to
 * note()'s buffer, which would leave an event's JSON unterminated. */
void pm_run_source_note(void *arg, const char *text)
{
    note_text((run *)arg, text);
}

/* pm_sctx.followed: a root, or a member of the process-tree source's tree
 * at its last sample. */
int pm_run_followed_pid(void *arg, int pid)
{
    const run *r = arg;
    for (size_t i = 0; i < r->nroots; i++)
        if (r->roots[i] == pid)
            return 1;
    for (size_t i = 0; i < r->nsrc; i++)
        if (r->src[i] == &pm_source_proctree && pm_proctree_follows(r->state[i], pid))
            return 1;
    return 0;
}

/* "SIGKILL" for 9 (the signals a job ends by), else "signal N". */
static const char *signal_name(int sig, char *buf, size_t cap)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {
        {SIGHUP, "SIGHUP"},       {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"},
        {SIGILL, "SIGILL"},       {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},
        {SIGBUS, "SIGBUS"},       {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"},
        {SIGUSR1, "SIGUSR1"},     {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
        {SIGPIPE, "SIGPIPE"},     {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
        {SIGSTKFLT, "SIGSTKFLT"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},
        {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"}, {SIGSYS, "SIGSYS"},
        {SIGPWR, "SIGPWR"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig)
            return names[i].name;
    snprintf(buf, cap, "signal %d", sig);
    return buf;
}

/* The "exit" event of CMD (docs/format.md, "Event notes"). */
static void note_exit(run *r, int ws, int64_t wall_ns)
{
    char name[24];
    if (WIFSIGNALED(ws))
        note(r,
             "{\"event\":\"exit\",\"t\":%.6f,\"pid\":%d,\"signal\":%d,\"signal_name\":\"%s\","
             "\"core\":%d}",
             (double)wall_ns / 1e9, (int)r->child, WTERMSIG(ws),
             signal_name(WTERMSIG(ws), name, sizeof name), WCOREDUMP(ws) ? 1 : 0);
    else if (WIFEXITED(ws))
        note(r, "{\"event\":\"exit\",\"t\":%.6f,\"pid\":%d,\"status\":%d}", (double)wall_ns / 1e9,
             (int)r->child, WEXITSTATUS(ws));
}

/* A write, sync or restore failed: suspend recording.  The first failure
 * is reported; retries follow at growing intervals (1 s doubling up to 10 s),
 * so a disk that fills up and is cleaned again only leaves a gap. */
static void suspend(run *r, const pm_error *err)
{
    if (r->writing) {
        r->writing = 0;
        r->backoff_ns = PM_NS_PER_S;
        r->lost = 0;
        pm_log(PM_LOG_ERROR,
               "%s; samples are not recorded until writing works again (retried at growing "
               "intervals up to 10 s); the profile stays readable up to the last complete "
               "sample",
               err->msg);
    } else {
        pm_log(PM_LOG_INFO, "retry failed: %s", err->msg);
        r->backoff_ns = r->backoff_ns * 2 > 10 * PM_NS_PER_S ? 10 * PM_NS_PER_S : r->backoff_ns * 2;
    }
    r->retry_at = pm_mono_ns() + r->backoff_ns;
}

/* A write worked again after an outage: say so once, in the profile too. */
static void resume(run *r)
{
    if (r->writing)
        return;
    char msg[160];
    snprintf(msg, sizeof msg,
             "recording resumed after a write error; %llu samples were not "
             "recorded",
             (unsigned long long)r->lost);
    for (size_t i = 0; i < r->nw; i++) {
        pm_error err;
        if (pm_writer_note(r->w[i], msg, &err) != 0) {
            suspend(r, &err);
            return;
        }
    }
    r->writing = 1;
    r->lost = 0;
    pm_log(PM_LOG_NOTICE, "%s", msg);
}

/* An output file that was removed (alone or with its directory) would
 * swallow every later sample: create the directory and the file again
 * with everything recorded so far. */
static int restore_removed(run *r, pm_error *err)
{
    for (size_t i = 0; i < r->nw; i++) {
        if (pm_writer_check_linked(r->w[i], err) == 0)
            continue;
        int rc = pm_run_mkdir_p(r->o->out_dir, err);
        if (rc == 0)
            rc = pm_writer_restore(r->w[i], err);
        if (rc != 0)
            return rc;
        pm_log(PM_LOG_NOTICE, "%s was removed; created again with everything recorded so far",
               pm_writer_path(r->w[i]));
        note(r, "%s was removed and created again", pm_writer_path(r->w[i]));
    }
    return 0;
}

/* May the caller write now?  While suspended only when a retry is due,
 * and then removed files are restored first. */
static int write_due(run *r)
{
    if (r->writing)
        return 1;
    if (pm_mono_ns() < r->retry_at)
        return 0;
    pm_error err;
    if (restore_removed(r, &err) != 0) {
        suspend(r, &err);
        return 0;
    }
    return 1;
}

static void take_sample(run *r, int64_t deadline, uint64_t missed_total)
{
    pm_sample *s = &r->sample;
    pm_sample_clear(s);
    int64_t t0 = pm_mono_ns();
    s->mono_ns = t0;
    s->wall_ns = pm_wall_ns();
    r->ctx.now_mono_ns = t0;
    r->ctx.loadavg = pm_pread_kept(&r->fd_loadavg, r->ctx.proc_fd, "loadavg", r->loadavg,
                                   sizeof r->loadavg, NULL) > 0
                         ? r->loadavg
                         : NULL;
    for (size_t i = 0; i < r->nsrc; i++)
        r->src[i]->read(r->state[i], &r->ctx, s);
    int64_t late = t0 - deadline;
    pm_sample_f64(s, r->col_late, late > 0 ? (double)late / 1e9 : 0.0);
    if (late > r->late_ns)
        r->end.late++;
    pm_sample_u64(s, r->col_missed, missed_total);
    pm_sample_f64(s, r->col_cpu, (double)pm_self_cpu_ns() / 1e9);
    self_rss(r, s);
    pm_sample_f64(s, r->col_dur, (double)(pm_mono_ns() - t0) / 1e9);
    int ok = write_due(r);
    for (size_t i = 0; i < r->nw && ok; i++) {
        pm_error err;
        if (pm_writer_sample(r->w[i], s->mono_ns, s->wall_ns, s->v, s->present, &err) != 0) {
            suspend(r, &err);
            ok = 0;
        }
    }
    if (ok) {
        r->end.samples++;
        resume(r);
    } else {
        r->lost++;
        r->lost_total++;
    }
}

static int roots_alive(const run *r)
{
    for (size_t i = 0; i < r->nroots; i++) {
        char path[32];
        snprintf(path, sizeof path, "%d/stat", (int)r->roots[i]);
        char buf[512];
        if (pm_read_small(r->ctx.proc_fd, path, buf, sizeof buf, NULL) > 0) {
            const char *p = strrchr(buf, ')');
            if (p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X')
                return 1;
        }
    }
    return 0;
}

/* Has the child exited?  Peek without reaping, so that its counters are
 * still readable for the last sample. */
static int child_exited(run *r)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)r->child, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno == ECHILD;
    return si.si_pid == r->child;
}

/* Reap orphans adopted as subreaper, leaving the monitored child alone.
 * Each is a zombie of the command's tree: the sources read it a last time
 * first (the process tree's CPU time and I/O would otherwise lose what it
 * did since the last sample). */
void pm_run_reap_orphans(run *r)
{
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0)
            return;
        if (si.si_pid == r->child)
            return;
        for (size_t i = 0; i < r->nsrc; i++)
            if (r->src[i]->reaping)
                r->src[i]->reaping(r->state[i], &r->ctx, si.si_pid);
        waitpid(si.si_pid, NULL, WNOHANG);
    }
}

/* Open the gate and wait for CMD's exec: 0 when it runs, PM_ENOENT with
 * the reason when it could not be started (the child has been reaped). */
int pm_run_release_child(run *r, pm_error *err)
{
    close(r->gate_fd);
    r->gate_fd = -1;
    int e = 0;
    ssize_t n;
    do
        n = read(r->exec_fd, &e, sizeof e);
    while (n < 0 && errno == EINTR);
    close(r->exec_fd);
    r->exec_fd = -1;
    if (n == (ssize_t)sizeof e) {
        waitpid(r->child, NULL, 0);
        r->child = -1;
        return pm_error_sys(err, PM_ENOENT, e, "cannot run '%s'", r->o->cmd[0]);
    }
    return 0;
}

/* Block the signals the loop handles (they are taken in ppoll only) and
 * install their handler; *oldmask gets the mask before. */
static void catch_signals(sigset_t *oldmask)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGCHLD};
    sigset_t block;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&block, sigs[i]);
    sigprocmask(SIG_BLOCK, &block, oldmask);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    /* A broken pipe on stderr must not kill the sampler. */
    signal(SIGPIPE, SIG_IGN);
}

/* The loop's state between samples. */
typedef struct loop {
    int64_t start, deadline, last_sync, last_link_check;
    uint64_t missed;
    int child_done, final;
    int64_t exit_wall_ns; /* when the command's exit was seen */
    const char *reason;
    sigset_t waitmask; /* the mask while sleeping: the handled signals open */
} loop;

/* End with one last sample now, for reason. */
static void last_now(loop *l, const char *reason)
{
    l->final = 1;
    l->reason = reason;
    l->deadline = pm_mono_ns();
}

/* After a sample: sync and check the outputs when due, and set the next
 * deadline.  AFTER_END: the run ends now (duration reached); AFTER_NOW:
 * take the last sample at once; AFTER_SLEEP: wait for l->deadline (with
 * l->final set when that sample is the last). */
enum { AFTER_SLEEP, AFTER_NOW, AFTER_END };
static int after_sample(run *r, loop *l)
{
    const pm_sampler_opts *o = r->o;
    pm_error err;
    int64_t now = pm_mono_ns();
    if (r->writing && now - l->last_sync >= o->checkpoint_ns) {
        for (size_t i = 0; i < r->nw; i++)
            if (r->writing && pm_writer_sync(r->w[i], &err) != 0)
                suspend(r, &err);
        l->last_sync = now;
    }
    if (r->writing && now - l->last_link_check >= PM_NS_PER_S) {
        if (restore_removed(r, &err) != 0)
            suspend(r, &err);
        l->last_link_check = now;
    }
    /* An end seen after a sample: one last sample now, flagged as such
     * (the sources read what they read once a second then too). */
    if (r->ipc_on && pm_ipc_says_finished(o->ipc_file)) {
        last_now(l, "IPC file says FINISHED");
        return AFTER_NOW;
    }
    if (o->duration_ns && now - l->start >= o->duration_ns) {
        l->reason = "duration reached";
        return AFTER_END;
    }
    if (o->npids && !roots_alive(r)) {
        last_now(l, "monitored processes ended");
        return AFTER_NOW;
    }
    /* Next deadline strictly in the future; skipped ones are missed.
     * After a late sample (an overrun, SIGSTOP, a stalled file system)
     * a deadline less than half an interval away is missed too, so that
     * the late sample is not followed by another moments later (two
     * samples 14 ms apart were seen after SIGCONT: a rate over 14 ms). */
    const int64_t iv = o->interval_ns;
    l->deadline += iv;
    if (l->deadline <= now) {
        int64_t skip = (now - l->deadline) / iv + 1;
        if (l->deadline + skip * iv - now < iv / 2)
            skip++;
        l->missed += (uint64_t)skip;
        l->deadline += skip * iv;
    }
    if (o->duration_ns && l->deadline >= l->start + o->duration_ns) {
        /* The run's last sample: the sources read what they read only
         * once a second too (pm_sctx_rare_due). */
        l->deadline = l->start + o->duration_ns;
        l->final = 1;
        l->reason = "duration reached";
    }
    return AFTER_SLEEP;
}

/* Sleep until the deadline, a signal, or (--ipc) an inotify event or the
 * next read of the IPC file, at most a second away.  1 when the IPC file
 * says the run is over. */
static int sleep_until(run *r, loop *l)
{
    for (;;) {
        int64_t now = pm_mono_ns();
        if (r->ipc_on && now >= pm_ipc_deadline(&r->ipc) && pm_ipc_check(&r->ipc, now))
            return 1;
        if (g_child_event || g_stop_signal || now >= l->deadline)
            return 0;
        int64_t wake = l->deadline;
        if (r->ipc_on && pm_ipc_deadline(&r->ipc) < wake)
            wake = pm_ipc_deadline(&r->ipc);
        int64_t left = wake - now;
        struct timespec ts = {(time_t)(left / PM_NS_PER_S), (long)(left % PM_NS_PER_S)};
        struct pollfd pfd = {r->ipc_on ? pm_ipc_fd(&r->ipc) : -1, POLLIN, 0};
        if (ppoll(&pfd, 1, &ts, &l->waitmask) > 0 && (pfd.revents & POLLIN) &&
            pm_ipc_check(&r->ipc, pm_mono_ns()))
            return 1;
    }
}

/* What woke the loop: the command's end, a stop signal. */
static void handle_events(run *r, loop *l)
{
    if (g_child_event) {
        g_child_event = 0;
        if (r->child > 0) {
            pm_run_reap_orphans(r);
            if (child_exited(r)) {
                l->child_done = 1;
                l->exit_wall_ns = pm_wall_ns();
                /* one last sample while its counters are readable */
                last_now(l, "command exited");
            }
        } else {
            while (waitpid(-1, NULL, WNOHANG) > 0) {
            }
        }
    }
    if (g_stop_signal) {
        int sig = g_stop_signal;
        g_stop_signal = 0;
        int fwd = r->child > 0 && !l->child_done;
        char name[24];
        /* Transparent wrapper: pass the signal on and keep sampling until
         * the command has exited. */
        if (fwd && kill(r->child, sig) != 0)
            fwd = 0;
        note(r,
             "{\"event\":\"signal\",\"t\":%.6f,\"signal\":%d,\"signal_name\":\"%s\","
             "\"forwarded\":%d}",
             (double)pm_wall_ns() / 1e9, sig, signal_name(sig, name, sizeof name), fwd);
        if (!fwd)
            last_now(l, sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP");
    }
}

/* After the last sample: the command's status, the end record.  Returns
 * the exit status of the run. */
static int finish(run *r, loop *l)
{
    pm_error err;
    int status = 0;
    if (r->child > 0) {
        int ws = 0;
        pid_t w;
        while ((w = waitpid(r->child, &ws, 0)) < 0 && errno == EINTR) {
        }
        status = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 1;
        r->end.exit_status = status;
        if (w == r->child)
            note_exit(r, ws, l->child_done ? l->exit_wall_ns : pm_wall_ns());
    }
    r->end.end_wall_ns = pm_wall_ns();
    r->end.end_mono_ns = pm_mono_ns();
    r->end.missed = l->missed;
    r->end.self_cpu_ns = pm_self_cpu_ns();
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        r->end.self_maxrss_kb = (uint64_t)ru.ru_maxrss;
    snprintf(r->end.reason, sizeof r->end.reason, "%s", l->reason);
    /* One last try for the end record, whatever the back-off says. */
    r->retry_at = 0;
    int due = write_due(r);
    if (due && r->writing && restore_removed(r, &err) != 0) {
        suspend(r, &err);
        due = 0;
    }
    if (due)
        resume(r);
    for (size_t i = 0; i < r->nw && r->writing; i++)
        if (pm_writer_end(r->w[i], &r->end, &err) != 0)
            suspend(r, &err);
    int failed = !r->writing || r->lost_total;
    if (r->lost_total)
        pm_log(PM_LOG_NOTICE, "%llu samples were not recorded because of write errors",
               (unsigned long long)r->lost_total);
    pm_log(PM_LOG_INFO, "%llu samples, %llu late, %llu missed; stopped: %s",
           (unsigned long long)r->end.samples, (unsigned long long)r->end.late,
           (unsigned long long)l->missed, l->reason);
    if (r->o->cmd)
        return status;
    return failed ? 1 : 0;
}

int pm_sampler_run(const pm_sampler_opts *o)
{
    run *r = calloc(1, sizeof *r);
    if (!r) {
        pm_log(PM_LOG_ERROR, "out of memory");
        return 1;
    }
    r->o = o;
    r->child = -1;
    r->gate_fd = r->exec_fd = -1;
    r->fd_statm = r->fd_loadavg = -1;
    r->end.exit_status = -1;
    r->late_ns = o->interval_ns / 10;
    sigset_t oldmask;
    catch_signals(&oldmask);
    /* The process-tree source keeps its members' files open, as many as
     * the soft descriptor limit allows: raise it to the hard limit (at most
     * 65,536); CMD starts with the limit the sampler was given. */
    if (getrlimit(RLIMIT_NOFILE, &r->nofile) == 0 && r->nofile.rlim_cur != RLIM_INFINITY &&
        r->nofile.rlim_cur < 65536 && r->nofile.rlim_max > r->nofile.rlim_cur) {
        struct rlimit up = r->nofile;
        up.rlim_cur = up.rlim_max == RLIM_INFINITY || up.rlim_max > 65536 ? 65536 : up.rlim_max;
        r->nofile_raised = setrlimit(RLIMIT_NOFILE, &up) == 0;
    }

    pm_error err;
    pm_error_clear(&err);
    int rc = pm_run_setup(r, &oldmask, &err);
    if (rc != 0) {
        pm_log(PM_LOG_ERROR, "%s", err.msg);
        pm_run_cleanup(r);
        free(r);
        return rc == PM_ENOENT && o->cmd ? 127 : 2;
    }
    for (size_t i = 0; i < r->nsrc; i++) {
        if (r->src[i] == &pm_source_proctree && r->nroots)
            note(r, "following %zu process tree(s), root pid %d", r->nroots, (int)r->roots[0]);
        else if (r->src[i] == &pm_source_proctree && r->ctx.slurm_job)
            note(r,
                 "following the processes of SLURM job %s on this node (steps other than "
                 "%s)",
                 r->ctx.slurm_job, r->ctx.slurm_step ? r->ctx.slurm_step : "none");
    }

    loop l;
    memset(&l, 0, sizeof l);
    l.start = l.deadline = l.last_sync = l.last_link_check = r->info.start_mono_ns;
    l.reason = "stopped";
    l.waitmask = oldmask;
    sigdelset(&l.waitmask, SIGTERM);
    sigdelset(&l.waitmask, SIGINT);
    sigdelset(&l.waitmask, SIGHUP);
    sigdelset(&l.waitmask, SIGCHLD);
    for (;;) {
        r->ctx.last_sample = l.final;
        take_sample(r, l.deadline, l.missed);
        if (r->gate_fd >= 0 && pm_run_release_child(r, &err) != 0) {
            pm_log(PM_LOG_ERROR, "%s", err.msg);
            pm_run_discard_profiles(r);
            pm_run_cleanup(r);
            free(r);
            return 127;
        }
        if (l.final)
            break;
        int next = after_sample(r, &l);
        if (next == AFTER_END)
            break;
        if (next == AFTER_NOW)
            continue;
        if (sleep_until(r, &l))
            last_now(&l, "IPC file says FINISHED"); /* one last sample, then the end record */
        handle_events(r, &l);
    }
    int status = finish(r, &l);
    pm_run_cleanup(r);
    free(r);
    return status;
}
