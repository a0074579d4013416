/* The sampling run's set-up and tear-down (run.c is the loop): the
 * sources and the profiles opened, the command started at its gate,
 * everything closed at the end.
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

#include "run.h"

/* The output directory, created with its parents, and writable. */
int pm_run_mkdir_p(const char *dir, pm_error *err)
{
    int rc = pm_mkdir_p(dir, err);
    if (rc)
        return rc;
    if (access(dir, W_OK | X_OK) != 0)
        return pm_error_sys(err, PM_EIO, errno, "%s: not writable", dir);
    return 0;
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

/* Fork CMD, held at a gate until the sampler has taken its first sample:
 * the baseline of every cumulative column (the tree's CPU time and I/O,
 * the counters that the kernel enables at exec) is then taken before CMD
 * has done anything, so nothing CMD does is lost in the baseline, however
 * late the first sample comes on a loaded node.  pm_run_release_child() opens the
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

/* Nothing ran: remove the profiles again. */
void pm_run_discard_profiles(run *r)
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

void pm_run_cleanup(run *r)
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
    pm_close_kept(&r->fd_loadavg);
    pm_close_kept(&r->gate_fd);
    pm_close_kept(&r->exec_fd);
    if (r->ipc_on)
        pm_ipc_close(&r->ipc);
    r->ipc_on = 0;
    pm_sample_free(&r->sample);
    pm_schema_free(&r->schema);
    pm_sctx_close(&r->ctx);
}

int pm_run_setup(run *r, const sigset_t *oldmask, pm_error *err)
{
    const pm_sampler_opts *o = r->o;
    int rc = pm_run_mkdir_p(o->out_dir, err);
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
    r->ctx.note = pm_run_source_note;
    r->ctx.note_arg = r;
    r->ctx.followed = pm_run_followed_pid;
    r->ctx.followed_arg = r;
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
         * read a last time before they are reaped (pm_run_reap_orphans). */
        r->ctx.subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
        rc = start_child(r, err, oldmask);
        if (rc != 0)
            pm_run_discard_profiles(r);
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
