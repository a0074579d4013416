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
#include "perfmon/proctree.h"
#include "perfmon/request.h"
#include "perfmon/sampler.h"
#include "perfmon/strs.h"
#include "perfmon/source.h"
#include "perfmon/writer.h"

#define MAX_SOURCES 16

static volatile sig_atomic_t g_stop_signal;
static volatile sig_atomic_t g_child_event;

static void on_signal(int sig)
{
    if (sig == SIGCHLD)
        g_child_event = 1;
    else
        g_stop_signal = sig;
}

typedef struct run {
    const pm_sampler_opts *o;
    pm_sctx ctx;
    pm_profile_info info;
    pm_schema schema;
    const pm_source *src[MAX_SOURCES];
    void *state[MAX_SOURCES];
    size_t nsrc;
    int col_cpu, col_rss, col_late, col_missed, col_dur;
    pm_sample sample;
    pm_writer *w[2];
    size_t nw;
    int writing;        /* 0 after a write failure: suspended until a retry works */
    int64_t retry_at;   /* while suspended: when to try writing again */
    int64_t backoff_ns; /* and the wait after that, doubling up to 10 s */
    uint64_t lost;      /* samples not recorded in the current outage */
    uint64_t lost_total;
    pid_t roots[PM_MAX_PIDS];
    size_t nroots;
    pid_t child;
    int gate_fd; /* -- CMD: closed after the first sample lets CMD exec */
    int exec_fd; /* -- CMD: carries exec's errno when it fails */
    pm_profile_end end;
    int64_t late_ns; /* a sample later than this counts as late */
    int fd_statm;    /* /proc/self/statm, kept open */
    pm_ipc ipc;      /* --ipc, watched when ipc_on */
    int ipc_on;
    struct rlimit nofile; /* the limit the sampler started with... */
    int nofile_raised;    /* ...raised for kept descriptors; CMD gets it back */
} run;

/* The output directory, created with its parents, and writable. */
static int mkdir_p(const char *dir, pm_error *err)
{
    int rc = pm_mkdir_p(dir, err);
    if (rc)
        return rc;
    if (access(dir, W_OK | X_OK) != 0)
        return pm_error_sys(err, PM_EIO, errno, "%s: not writable", dir);
    return 0;
}

/* The sampler's own resident size, from the real /proc/self/statm even
 * when --proc-root names a captured tree: that tree's "self" is another
 * process (the one that captured it).  Not recorded when unreadable. */
static void self_rss(run *r, pm_sample *s)
{
    char buf[128];
    if (pm_pread_kept(&r->fd_statm, AT_FDCWD, "/proc/self/statm", buf, sizeof buf, NULL) <= 0)
        return;
    unsigned long long size, res;
    long ps = sysconf(_SC_PAGESIZE);
    if (sscanf(buf, "%20llu %20llu", &size, &res) != 2 || ps <= 0 ||
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
static void source_note(void *arg, const char *text)
{
    note_text((run *)arg, text);
}

/* pm_sctx.job_cgroup: the cgroup source's cgroup made for -- CMD. */
static int job_cgroup_dir(void *arg)
{
    const run *r = arg;
    for (size_t i = 0; i < r->nsrc; i++)
        if (r->src[i] == &pm_source_cgroup)
            return pm_cgroup_job_dir(r->state[i]);
    return -1;
}

/* pm_sctx.followed: a root, or a member of the process-tree source's tree
 * at its last sample. */
static int followed_pid(void *arg, int pid)
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
        int rc = mkdir_p(r->o->out_dir, err);
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

/* Open sources; an essential one that fails is fatal. */
static int open_sources(run *r, pm_buf *status, pm_error *err)
{
    pm_buf_puts(status, ",\"sources\":{");
    int first = 1;
    for (size_t i = 0; pm_sources[i] && r->nsrc < MAX_SOURCES; i++) {
        const pm_source *s = pm_sources[i];
        void *state = NULL;
        pm_error e;
        pm_error_clear(&e);
        int rc = s->open(&r->ctx, &r->schema, &state, &e);
        pm_buf_printf(status, "%s\"%s\":", first ? "" : ",", s->name);
        first = 0;
        if (rc == 0) {
            pm_buf_puts(status, "\"ok\"");
            r->src[r->nsrc] = s;
            r->state[r->nsrc++] = state;
            continue;
        }
        if (s->essential)
            return pm_error_set(err, rc, "%s", e.msg);
        pm_buf_json_str(status, e.msg);
        pm_log(PM_LOG_INFO, "source %s absent: %s", s->name, e.msg);
    }
    pm_buf_puts(status, "}");
    for (size_t i = 0; i < r->nsrc; i++)
        if (r->src[i]->describe) {
            pm_buf_puts(status, ",");
            r->src[i]->describe(r->state[i], status);
        }
    r->col_cpu =
        pm_schema_add(&r->schema, "sampler.cpu_time", "s", PM_COUNTER, PM_F64, "sampler", 0);
    r->col_rss = pm_schema_add(&r->schema, "sampler.rss", "B", PM_GAUGE, PM_U64, "sampler", 0);
    r->col_late =
        pm_schema_add(&r->schema, "sampler.lateness", "s", PM_GAUGE, PM_F64, "sampler", 0);
    r->col_missed =
        pm_schema_add(&r->schema, "sampler.missed", "1", PM_COUNTER, PM_U64, "sampler", 0);
    r->col_dur = pm_schema_add(&r->schema, "sampler.duration", "s", PM_GAUGE, PM_F64, "sampler", 0);
    if (r->col_dur < 0)
        return pm_error_set(err, PM_ENOMEM, "cannot build the column schema");
    return 0;
}

/* DIR/<job>_<host>[.<n>].<ext> into path[cap]: 0, or -1 when too long. */
static int profile_path(const run *r, const char *job, const char *host, int n, const char *ext,
                        char *path, size_t cap)
{
    int len = n == 1 ? snprintf(path, cap, "%s/%s_%s.%s", r->o->out_dir, job, host, ext)
                     : snprintf(path, cap, "%s/%s_%s.%d.%s", r->o->out_dir, job, host, n, ext);
    return len < 0 || (size_t)len >= cap ? -1 : 0;
}

/* Create DIR/<job>_<host>[.<n>].<ext> exclusively for each format asked,
 * with one run number n for all (-f both: x.3.pmp and x.3.pmp.jsonl pair
 * up by name): the first n under which no file of either format exists. */
static int open_writers(run *r, const char *meta, pm_error *err)
{
    char job[128], host[128], path[4096];
    pm_sanitize_name(r->info.job_id, job, sizeof job);
    pm_sanitize_name(r->info.host, host, sizeof host);
    static const char *const ext[2] = {"pmp", "pmp.jsonl"};
    static const int fmt[2] = {PM_FMT_BIN, PM_FMT_JSONL};
    const int want[2] = {r->o->write_bin, r->o->write_json};
    for (int n = 1; n < 1000; n++) {
        int taken = 0;
        for (int f = 0; f < 2 && !taken; f++) {
            struct stat sb;
            if (profile_path(r, job, host, n, ext[f], path, sizeof path) != 0)
                return pm_error_set(err, PM_EUSAGE, "%s: output path too long", r->o->out_dir);
            taken = lstat(path, &sb) == 0;
        }
        for (int f = 0; f < 2 && !taken; f++) {
            if (!want[f])
                continue;
            if (profile_path(r, job, host, n, ext[f], path, sizeof path) != 0)
                return pm_error_set(err, PM_EUSAGE, "%s: output path too long", r->o->out_dir);
            int rc = pm_writer_open(&r->w[r->nw], path, fmt[f], &r->info, r->schema.cols,
                                    r->schema.n, meta, err);
            if (rc != 0 && err->sys != EEXIST)
                return rc;
            if (rc != 0) {
                /* Created meanwhile by another run: drop this number. */
                taken = 1;
                pm_error_clear(err);
                break;
            }
            r->nw++;
            pm_log(PM_LOG_INFO, "writing %s (%zu columns)", path, r->schema.n);
        }
        if (!taken)
            return 0;
        while (r->nw > 0) {
            r->nw--;
            unlink(pm_writer_path(r->w[r->nw]));
            pm_writer_close(r->w[r->nw], NULL);
        }
    }
    return pm_error_set(err, PM_EIO, "%s: too many profiles for job %s on %s", r->o->out_dir, job,
                        host);
}

static void take_sample(run *r, int64_t deadline, uint64_t missed_total)
{
    pm_sample *s = &r->sample;
    pm_sample_clear(s);
    int64_t t0 = pm_mono_ns();
    s->mono_ns = t0;
    s->wall_ns = pm_wall_ns();
    r->ctx.now_mono_ns = t0;
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
static void reap_orphans(run *r)
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

/* Fork CMD, held at a gate until the sampler has taken its first sample:
 * the baseline of every cumulative column (the tree's CPU time and I/O,
 * the counters that the kernel enables at exec) is then taken before CMD
 * has done anything, so nothing CMD does is lost in the baseline, however
 * late the first sample comes on a loaded node.  release_child() opens the
 * gate and reports a failed exec. */
static int start_child(run *r, pm_error *err, const sigset_t *oldmask)
{
    int pfd[2], gate[2];
    if (pipe2(pfd, O_CLOEXEC) != 0)
        return pm_error_sys(err, PM_EIO, errno, "pipe");
    if (pipe2(gate, O_CLOEXEC) != 0) {
        int e = errno;
        close(pfd[0]);
        close(pfd[1]);
        return pm_error_sys(err, PM_EIO, e, "pipe");
    }
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(pfd[0]);
        close(pfd[1]);
        close(gate[0]);
        close(gate[1]);
        return pm_error_sys(err, PM_EIO, e, "fork");
    }
    if (pid == 0) {
        close(pfd[0]);
        close(gate[1]);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        sigaction(SIGCHLD, &sa, NULL);
        sigprocmask(SIG_SETMASK, oldmask, NULL);
        /* Wait at the gate: end of file once the sampler has sampled (or
         * has died, in which case CMD runs unobserved rather than never). */
        char c;
        ssize_t g;
        do
            g = read(gate[0], &c, 1);
        while (g < 0 && errno == EINTR);
        close(gate[0]);
        if (r->nofile_raised)
            setrlimit(RLIMIT_NOFILE, &r->nofile);
        execvp(r->o->cmd[0], r->o->cmd);
        int e = errno;
        ssize_t w = write(pfd[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(pfd[1]);
    close(gate[0]);
    r->gate_fd = gate[1];
    r->exec_fd = pfd[0];
    r->child = pid;
    r->roots[0] = pid;
    r->nroots = 1;
    /* Before the gate opens: e.g. into the cgroup made for CMD. */
    for (size_t i = 0; i < r->nsrc; i++)
        if (r->src[i]->adopt)
            r->src[i]->adopt(r->state[i], &r->ctx, pid);
    return 0;
}

/* The run id that ties together the files of one sampler run (-f both)
 * and tells runs of one job apart (docs/format.md): 64 random bits, or,
 * without getrandom, the pid and both clocks mixed (splitmix64). */
static void make_run_id(char *out, size_t cap)
{
    uint64_t x = 0;
    if (getrandom(&x, sizeof x, GRND_NONBLOCK) != (ssize_t)sizeof x) {
        x = (uint64_t)getpid() * 0x9E3779B97F4A7C15u ^ (uint64_t)pm_wall_ns() ^
            (uint64_t)pm_mono_ns() << 17;
        x ^= x >> 30;
        x *= 0xBF58476D1CE4E5B9u;
        x ^= x >> 27;
        x *= 0x94D049BB133111EBu;
        x ^= x >> 31;
    }
    snprintf(out, cap, "%016llx", (unsigned long long)x);
}

/* Open the gate and wait for CMD's exec: 0 when it runs, PM_ENOENT with
 * the reason when it could not be started (the child has been reaped). */
static int release_child(run *r, pm_error *err)
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

/* Nothing ran: remove the profiles again. */
static void discard_profiles(run *r)
{
    for (size_t i = 0; i < r->nw; i++) {
        unlink(pm_writer_path(r->w[i]));
        pm_writer_close(r->w[i], NULL);
    }
    r->nw = 0;
}

static void join_cmdline(const pm_sampler_opts *o, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    if (o->cmd) {
        for (size_t i = 0; o->cmd[i] && n + 1 < cap; i++) {
            int w = snprintf(out + n, cap - n, "%s%s", i ? " " : "", o->cmd[i]);
            if (w < 0)
                break;
            n += (size_t)w;
        }
    } else {
        for (size_t i = 0; i < o->npids && n + 1 < cap; i++) {
            int w = snprintf(out + n, cap - n, "%spid %d", i ? ", " : "", (int)o->pids[i]);
            if (w < 0)
                break;
            n += (size_t)w;
        }
    }
}

static void cleanup(run *r)
{
    for (size_t i = 0; i < r->nsrc; i++)
        r->src[i]->close(r->state[i]);
    for (size_t i = 0; i < r->nw; i++) {
        pm_error err;
        if (pm_writer_close(r->w[i], &err) != 0 && r->writing)
            pm_log(PM_LOG_ERROR, "%s", err.msg);
    }
    r->nw = 0;
    pm_close_kept(&r->fd_statm);
    pm_close_kept(&r->gate_fd);
    pm_close_kept(&r->exec_fd);
    if (r->ipc_on)
        pm_ipc_close(&r->ipc);
    r->ipc_on = 0;
    pm_sample_free(&r->sample);
    pm_schema_free(&r->schema);
    pm_sctx_close(&r->ctx);
}

static int setup(run *r, const sigset_t *oldmask, pm_error *err)
{
    const pm_sampler_opts *o = r->o;
    int rc = mkdir_p(o->out_dir, err);
    if (rc)
        return rc;
    /* The IPC file stops a run without a command; one that already says
     * FINISHED would end this run before it started. */
    if (o->ipc_file && !o->cmd) {
        r->ipc_on = 1;
        rc = pm_ipc_open(&r->ipc, o->ipc_file, o->ipc_reset, pm_mono_ns(), err);
        if (rc)
            return rc;
    }
    rc = pm_sctx_open(&r->ctx, o->proc_root, o->sys_root, err);
    if (rc)
        return rc;
    r->ctx.out_dir = o->out_dir;
    r->ctx.pss_interval_ns = o->pss_interval_ns;
    r->ctx.system_counters = o->system_counters;
    r->ctx.note = source_note;
    r->ctx.note_arg = r;
    r->ctx.followed = followed_pid;
    r->ctx.followed_arg = r;
    r->ctx.job_cgroup = job_cgroup_dir;
    r->ctx.job_cgroup_arg = r;
    for (size_t i = 0; i < o->npids; i++)
        r->roots[r->nroots++] = o->pids[i];
    if (o->cmd) {
        r->nroots = 1; /* the child's pid is filled in when it starts */
        /* Every descendant of CMD is the job, whoever it runs as: a job
         * started by root may switch user (su, setpriv, a launcher). */
        r->ctx.any_uid = 1;
    }
    r->ctx.roots = r->roots;
    r->ctx.nroots = r->nroots;
    /* In a SLURM job with nothing named to follow: the job's own steps on
     * this node (how SKA perfmon found the "main step job"). */
    const char *sjob = getenv("SLURM_JOB_ID");
    if (!o->cmd && !o->npids && sjob && *sjob) {
        r->ctx.slurm_job = sjob;
        r->ctx.slurm_step = getenv("SLURM_STEP_ID");
    }
    if (o->npids) {
        /* Follow processes of the monitored user, which may not be ours. */
        char path[32];
        struct stat st;
        snprintf(path, sizeof path, "%d", (int)o->pids[0]);
        if (fstatat(r->ctx.proc_fd, path, &st, 0) == 0)
            r->ctx.uid = st.st_uid;
    }

    pm_sampler_host(o, r->info.host, sizeof r->info.host);
    pm_job_detect(&r->info);
    if (o->job_id)
        snprintf(r->info.job_id, sizeof r->info.job_id, "%s", o->job_id);
    snprintf(r->info.sampler, sizeof r->info.sampler, "perfmon-sample %s", PM_VERSION);
    join_cmdline(o, r->info.command, sizeof r->info.command);
    if (r->ctx.slurm_job)
        snprintf(r->info.command, sizeof r->info.command, "SLURM job %s: its steps on this node",
                 r->ctx.slurm_job);
    r->info.interval_ns = o->interval_ns;
    r->info.sampler_pid = getpid();
    make_run_id(r->info.run_id, sizeof r->info.run_id);

    pm_buf meta;
    pm_buf_init(&meta);
    char *hw = pm_hwinfo_json(&r->ctx, r->info.host);
    if (hw)
        pm_buf_puts(&meta, hw);
    else
        pm_buf_puts(&meta, "{\"hostname\":\"?\"");
    free(hw);
    rc = open_sources(r, &meta, err);
    /* What the job asked for, once, before the first sample (squeue, where
     * needed, is bounded to 2 s). */
    pm_request req;
    pm_request_detect(&req, 2000);
    pm_request_json(&req, &meta);
    pm_buf_puts(&meta, "}");
    if (rc == 0 && meta.oom)
        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
    if (rc == 0)
        rc = pm_sample_init(&r->sample, r->schema.n);
    if (rc == 0) {
        r->info.start_wall_ns = pm_wall_ns();
        r->info.start_mono_ns = pm_mono_ns();
        r->writing = 1;
        rc = open_writers(r, meta.data, err);
    }
    pm_buf_free(&meta);
    if (rc == 0 && o->cmd) {
        /* The tree's orphans come to the sampler: still members, and
         * read a last time before they are reaped (reap_orphans). */
        r->ctx.subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
        rc = start_child(r, err, oldmask);
        if (rc != 0)
            discard_profiles(r);
    }
    return rc;
}

void pm_sampler_host(const pm_sampler_opts *o, char *out, size_t cap)
{
    const char *slurm = getenv("SLURMD_NODENAME");
    if (cap == 0)
        return;
    if (o->host)
        snprintf(out, cap, "%s", o->host);
    else if (slurm && *slurm)
        snprintf(out, cap, "%s", slurm);
    else if (gethostname(out, cap - 1) != 0)
        snprintf(out, cap, "unknown");
    out[cap - 1] = '\0';
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
            reap_orphans(r);
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
    r->fd_statm = -1;
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
    int rc = setup(r, &oldmask, &err);
    if (rc != 0) {
        pm_log(PM_LOG_ERROR, "%s", err.msg);
        cleanup(r);
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
        if (r->gate_fd >= 0 && release_child(r, &err) != 0) {
            pm_log(PM_LOG_ERROR, "%s", err.msg);
            discard_profiles(r);
            cleanup(r);
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
    cleanup(r);
    free(r);
    return status;
}
