/* What the batch system was asked for, read once at start: CPUs, memory
 * and the time limit from the job's environment (SLURM, PBS, OAR), the
 * time limit of an older SLURM from `squeue -h -j JOB -o %l` run with a
 * short bound.  Written into the profile's metadata as "request"
 * (docs/perfmon-sample.md, "What the job asked for"); the analysis sets it against what was
 * used (docs/analysis.md, "Requested vs used"). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfmon/buf.h"
#include "perfmon/clock.h"
#include "perfmon/parse.h"
#include "perfmon/request.h"

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static double env_count(const char *name)
{
    const char *v = env(name);
    uint64_t u;
    return v && pm_parse_u64(v, &u) == 0 && u < (1ull << 40) ? (double)u : NAN;
}

/* SLURM's --mem: a number of MiB ("4096"), or with a suffix (K, M, G, T;
 * newer versions export plain MiB).  Bytes, NaN when unusable; 0 (all
 * the node's memory) is NaN too. */
static double slurm_mem(const char *name)
{
    const char *v = env(name);
    if (!v)
        return NAN;
    char num[32];
    size_t n = strspn(v, "0123456789");
    if (n == 0 || n >= sizeof num)
        return NAN;
    memcpy(num, v, n);
    num[n] = 0;
    uint64_t u;
    if (pm_parse_u64(num, &u) != 0 || u == 0)
        return NAN;
    double scale = 1048576.0;
    switch (v[n]) {
    case 0:
    case 'M':
    case 'm': break;
    case 'K':
    case 'k': scale = 1024.0; break;
    case 'G':
    case 'g': scale = 1073741824.0; break;
    case 'T':
    case 't': scale = 1099511627776.0; break;
    default: return NAN;
    }
    if (v[n] && v[n + 1])
        return NAN;
    return (double)u * scale;
}

double pm_request_parse_time(const char *s)
{
    /* SLURM: [days-]hours:minutes:seconds, minutes:seconds, minutes,
     * days-hours, days-hours:minutes; PBS: [[hh:]mm:]ss or seconds;
     * "UNLIMITED", "INVALID", "NOT_SET": no limit (NaN). */
    if (!s)
        return NAN;
    while (*s == ' ' || *s == '\t')
        s++;
    long long days = 0, f[3] = {0, 0, 0};
    int nf = 0, have_days = 0;
    const char *p = s;
    const char *dash = strchr(s, '-');
    if (dash) {
        char *end;
        errno = 0;
        days = strtoll(s, &end, 10);
        if (end != dash || errno || days < 0 || days > 100000)
            return NAN;
        have_days = 1;
        p = dash + 1;
    }
    while (*p) {
        if (nf == 3 || *p < '0' || *p > '9')
            return NAN;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || v < 0 || v > 100000000)
            return NAN;
        f[nf++] = v;
        p = end;
        if (*p == ':')
            p++;
        else if (*p == '\n' || *p == '\r' || *p == ' ')
            break;
        else if (*p)
            return NAN;
    }
    if (nf == 0)
        return NAN;
    double sec;
    if (have_days) /* days-hours[:minutes[:seconds]] */
        sec = (double)f[0] * 3600 + (double)f[1] * 60 + (double)f[2];
    else if (nf == 1) /* minutes (SLURM) */
        sec = (double)f[0] * 60;
    else if (nf == 2) /* minutes:seconds */
        sec = (double)f[0] * 60 + (double)f[1];
    else
        sec = (double)f[0] * 3600 + (double)f[1] * 60 + (double)f[2];
    return (double)days * 86400 + sec;
}

/* Run argv (a PATH lookup), its first line of output into out (cap bytes);
 * killed after timeout_ms.  Returns 0 when it exited 0 in time. */
static int run_bounded(char *const *argv, char *out, size_t cap, int timeout_ms)
{
    int fd[2];
    out[0] = 0;
    if (pipe2(fd, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) {
            dup2(nul, 0);
            dup2(nul, 2);
        }
        dup2(fd[1], 1);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    size_t len = 0;
    int64_t deadline = pm_mono_ns() + (int64_t)timeout_ms * 1000000;
    for (;;) {
        int64_t left = (deadline - pm_mono_ns()) / 1000000;
        if (left <= 0)
            break;
        struct pollfd p = {fd[0], POLLIN, 0};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        char tmp[256];
        ssize_t n = read(fd[0], tmp, sizeof tmp);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        size_t k = (size_t)n < cap - 1 - len ? (size_t)n : cap - 1 - len;
        memcpy(out + len, tmp, k);
        len += k;
    }
    out[len] = 0;
    close(fd[0]);
    int status = 0;
    pid_t w;
    /* Its output closes a moment before it can be reaped: wait for it up
     * to the bound. */
    while (((w = waitpid(pid, &status, WNOHANG)) == 0 && pm_mono_ns() < deadline) ||
           (w < 0 && errno == EINTR)) {
        if (w == 0) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    if (w == 0) { /* still running past the bound */
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        return -1;
    }
    out[strcspn(out, "\n")] = 0;
    return w == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

void pm_request_detect(pm_request *r, int timeout_ms)
{
    memset(r, 0, sizeof *r);
    r->cpus = r->cpus_per_task = r->ntasks = r->nodes = NAN;
    r->mem_bytes = r->mem_per_node_bytes = r->mem_per_cpu_bytes = NAN;
    r->time_limit_s = r->start_time = NAN;
    const char *job = env("SLURM_JOB_ID");
    if (!job)
        job = env("SLURM_JOBID");
    if (job) {
        snprintf(r->scheduler, sizeof r->scheduler, "slurm");
        r->cpus_per_task = env_count("SLURM_CPUS_PER_TASK");
        r->ntasks = env_count("SLURM_NTASKS");
        if (isnan(r->ntasks))
            r->ntasks = env_count("SLURM_NPROCS");
        r->nodes = env_count("SLURM_JOB_NUM_NODES");
        r->cpus = env_count("SLURM_CPUS_ON_NODE");
        const char *cpn = env("SLURM_JOB_CPUS_PER_NODE");
        if (cpn) { /* "4(x2),2": the list as SLURM wrote it */
            snprintf(r->cpus_per_node_list, sizeof r->cpus_per_node_list, "%s", cpn);
            if (isnan(r->cpus)) {
                uint64_t u;
                char first[24];
                size_t n = strspn(cpn, "0123456789");
                if (n && n < sizeof first) {
                    memcpy(first, cpn, n);
                    first[n] = 0;
                    if (pm_parse_u64(first, &u) == 0)
                        r->cpus = (double)u;
                }
            }
        }
        r->mem_per_node_bytes = slurm_mem("SLURM_MEM_PER_NODE");
        r->mem_per_cpu_bytes = slurm_mem("SLURM_MEM_PER_CPU");
        r->mem_bytes = r->mem_per_node_bytes;
        if (isnan(r->mem_bytes) && !isnan(r->mem_per_cpu_bytes) && !isnan(r->cpus))
            r->mem_bytes = r->mem_per_cpu_bytes * r->cpus;
        double end = env_count("SLURM_JOB_END_TIME"), start = env_count("SLURM_JOB_START_TIME");
        if (!isnan(start))
            r->start_time = start;
        if (!isnan(end) && !isnan(start) && end > start) {
            r->time_limit_s = end - start;
            snprintf(r->time_limit_from, sizeof r->time_limit_from, "SLURM_JOB_END_TIME");
        } else if (timeout_ms > 0) {
            char id[64], line[128], a0[] = "squeue", a1[] = "-h", a2[] = "-j", a4[] = "-o",
                                    a5[] = "%l";
            snprintf(id, sizeof id, "%s", job);
            char *argv[] = {a0, a1, a2, id, a4, a5, NULL};
            if (run_bounded(argv, line, sizeof line, timeout_ms) == 0) {
                r->time_limit_s = pm_request_parse_time(line);
                if (!isnan(r->time_limit_s))
                    snprintf(r->time_limit_from, sizeof r->time_limit_from, "squeue");
            }
        }
    } else if (env("PBS_JOBID")) {
        snprintf(r->scheduler, sizeof r->scheduler, "pbs");
        r->cpus = env_count("PBS_NUM_PPN");
        if (isnan(r->cpus))
            r->cpus = env_count("NCPUS");
        r->nodes = env_count("PBS_NUM_NODES");
        r->time_limit_s = pm_request_parse_time(env("PBS_WALLTIME"));
        /* Torque's PBS_WALLTIME is plain seconds, not minutes. */
        const char *w = env("PBS_WALLTIME");
        if (w && strspn(w, "0123456789") == strlen(w))
            r->time_limit_s = env_count("PBS_WALLTIME");
        if (!isnan(r->time_limit_s))
            snprintf(r->time_limit_from, sizeof r->time_limit_from, "PBS_WALLTIME");
    } else if (env("OAR_JOB_ID") || env("OAR_JOBID")) {
        snprintf(r->scheduler, sizeof r->scheduler, "oar");
        r->time_limit_s = env_count("OAR_JOB_WALLTIME_SECONDS");
        if (!isnan(r->time_limit_s))
            snprintf(r->time_limit_from, sizeof r->time_limit_from, "OAR_JOB_WALLTIME_SECONDS");
    }
}

static void put_num(pm_buf *b, int *first, const char *key, double v)
{
    if (isnan(v))
        return;
    pm_buf_printf(b, "%s\"%s\":", *first ? "" : ",", key);
    pm_buf_json_num(b, v);
    *first = 0;
}

void pm_request_json(const pm_request *r, pm_buf *b)
{
    if (!r->scheduler[0])
        return;
    pm_buf_puts(b, ",\"request\":{\"scheduler\":");
    pm_buf_json_str(b, r->scheduler);
    int first = 0;
    put_num(b, &first, "cpus", r->cpus);
    put_num(b, &first, "cpus_per_task", r->cpus_per_task);
    put_num(b, &first, "ntasks", r->ntasks);
    put_num(b, &first, "nodes", r->nodes);
    if (r->cpus_per_node_list[0]) {
        pm_buf_puts(b, ",\"cpus_per_node_list\":");
        pm_buf_json_str(b, r->cpus_per_node_list);
    }
    put_num(b, &first, "mem_bytes", r->mem_bytes);
    put_num(b, &first, "mem_per_node_bytes", r->mem_per_node_bytes);
    put_num(b, &first, "mem_per_cpu_bytes", r->mem_per_cpu_bytes);
    put_num(b, &first, "time_limit_s", r->time_limit_s);
    if (r->time_limit_from[0]) {
        pm_buf_puts(b, ",\"time_limit_from\":");
        pm_buf_json_str(b, r->time_limit_from);
    }
    put_num(b, &first, "start_time", r->start_time);
    pm_buf_puts(b, "}");
}
