/* Command line of perfmon-sample. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfmon/cli.h"
#include "perfmon/clock.h"
#include "perfmon/log.h"
#include "perfmon/parse.h"
#include "perfmon/sampler.h"
#include "sample_cli.h"

static const char usage_text[] =
    "usage: perfmon-sample -o DIR [OPTIONS] [-p PID[,PID...] | -- CMD [ARGS...]]\n"
    "\n"
    "Record this node's system and process-tree time series into DIR.\n"
    "With -- CMD, run CMD, follow its process tree and exit with its status.\n"
    "With -p, follow existing process trees until they end.\n"
    "With neither, sample system-wide until SIGINT/SIGTERM, --duration or --ipc;\n"
    "in a SLURM job, also follow the job's steps on this node (but the sampler's).\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR        profile directory (created if missing; shared by all nodes)\n"
    "  -i, --interval SECONDS  sampling interval, >= 0.05 (default 1; suffixes ms s m h)\n"
    "  -c, --checkpoint SECS   make samples durable (fdatasync) this often (default 60)\n"
    "  -d, --duration SECONDS  stop after this long\n"
    "      --pss-interval SECS refresh process PSS/USS this often (default 5; 0 = every\n"
    "                          sample; reading them costs ~30 us per process)\n"
    "      --ipc FILE          stop cleanly once FILE contains the word FINISHED (seen\n"
    "                          within 1 s); a FILE that says FINISHED at start is an error\n"
    "      --ipc-reset         empty an --ipc FILE that already says FINISHED (left by an\n"
    "                          earlier run of a requeued job) instead of refusing to start\n"
    "      --system-counters   with neither -p nor -- CMD, count hardware events on every\n"
    "                          CPU (needs privilege; reading them interrupts every CPU\n"
    "                          each sample, so it is off by default)\n"
    "  -j, --job-id ID         job id (default: SLURM_JOB_ID, PBS_JOBID, OAR_JOB_ID or 'local')\n"
    "      --host NAME         host name to record (default: SLURMD_NODENAME or hostname)\n"
    "  -f, --format FMT        bin, json or both (default bin: binary version 3;\n"
    "                          PERFMON_PROFILE_VERSION=1 or 2 writes version 1 or 2)\n"
    "  -p, --pid PID[,PID...]  follow these processes and their descendants\n"
    "      --proc-root DIR     read /proc from DIR (or $PERFMON_PROC_ROOT)\n"
    "      --sys-root DIR      read /sys from DIR (or $PERFMON_SYS_ROOT)\n"
    "  -v, --verbose           log to stderr (twice: more)\n"
    "  -h, --help              show this help and exit\n"
    "  -V, --version           show the version and exit\n"
    "\n"
    "NVIDIA GPUs are read through libnvidia-ml.so.1 when it loads ($PERFMON_NVML_LIB\n"
    "names another); without it or without a GPU there are simply no GPU columns.\n"
    "\n"
    "Exit status: CMD's status with -- CMD (127 if it cannot be run); otherwise 0,\n"
    "1 when samples were not recorded (e.g. disk full; retried), 2 for bad options or\n"
    "an unusable DIR or --ipc FILE.\n"
    "Hardware counters are counted with perf_event_open for CMD, the -p trees or\n"
    "(--system-counters) every CPU; FLOP and cache/memory event tables are read\n"
    "from $PERFMON_TEMPLATES/events or the installed templates.\n"
    "In a SLURM, PBS or OAR job, what it asked for (CPUs, memory, time limit) is\n"
    "recorded once at start; an older SLURM's time limit comes from squeue,\n"
    "killed after 2 s.\n"
    "See perfmon-sample(1) and docs/format.md.\n"
    "\n"
    "Examples:\n"
    "  perfmon-sample -o prof -i 0.5 -- ./solver input.dat\n"
    "  perfmon-sample mark -o prof solve start\n";

static int parse_seconds(const char *opt, const char *arg, int64_t min_ns, int64_t *out,
                         pm_error *err)
{
    if (pm_parse_duration_ns(arg, out) != 0)
        return pm_error_set(err, PM_EUSAGE, "%s: '%s' is not a duration in seconds", opt, arg);
    if (*out < min_ns)
        return pm_error_set(err, PM_EUSAGE, "%s: %s is below the minimum of %g s", opt, arg,
                            (double)min_ns / 1e9);
    return 0;
}

static int parse_pids(const char *arg, pm_sampler_opts *o, pm_error *err)
{
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", arg) >= (int)sizeof buf)
        return pm_error_set(err, PM_EUSAGE, "-p: list too long");
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (pm_parse_u64(t, &v) != 0 || v == 0 || v > 4194304)
            return pm_error_set(err, PM_EUSAGE, "-p: '%s' is not a process id", t);
        if (o->npids >= PM_MAX_PIDS)
            return pm_error_set(err, PM_EUSAGE, "-p: more than %d processes", PM_MAX_PIDS);
        o->pids[o->npids++] = (pid_t)v;
    }
    if (o->npids == 0)
        return pm_error_set(err, PM_EUSAGE, "-p: no process id given");
    return 0;
}

/* "+": stop at the first non-option, so CMD's own options stay its;
 * ":": a missing value comes back as ':', told apart from an unknown '?'. */
static const char short_opts[] = "+:o:i:c:d:j:f:p:vhV";

int pm_sampler_parse_args(int argc, char **argv, pm_sampler_opts *o, pm_error *err)
{
    memset(o, 0, sizeof *o);
    o->interval_ns = PM_NS_PER_S;
    o->checkpoint_ns = 60 * PM_NS_PER_S;
    o->pss_interval_ns = 5 * PM_NS_PER_S;
    o->write_bin = 1;
    o->proc_root = getenv("PERFMON_PROC_ROOT") ? getenv("PERFMON_PROC_ROOT") : "/proc";
    o->sys_root = getenv("PERFMON_SYS_ROOT") ? getenv("PERFMON_SYS_ROOT") : "/sys";
    enum { OPT_IPC = 256, OPT_HOST, OPT_PROC, OPT_SYS, OPT_PSS, OPT_SYSCNT, OPT_IPC_RESET };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"interval", required_argument, NULL, 'i'},
        {"checkpoint", required_argument, NULL, 'c'},
        {"duration", required_argument, NULL, 'd'},
        {"ipc", required_argument, NULL, OPT_IPC},
        {"ipc-reset", no_argument, NULL, OPT_IPC_RESET},
        {"pss-interval", required_argument, NULL, OPT_PSS},
        {"system-counters", no_argument, NULL, OPT_SYSCNT},
        {"job-id", required_argument, NULL, 'j'},
        {"host", required_argument, NULL, OPT_HOST},
        {"format", required_argument, NULL, 'f'},
        {"pid", required_argument, NULL, 'p'},
        {"proc-root", required_argument, NULL, OPT_PROC},
        {"sys-root", required_argument, NULL, OPT_SYS},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    /* 0, not 1: glibc reinitialises getopt only then; with 1 it resumes
     * inside the cluster where a previous parse stopped (a stale, possibly
     * freed argv). */
    optind = 0;
    opterr = 0;
    int c, rc;
    while ((c = getopt_long(argc, argv, short_opts, longopts, NULL)) != -1) {
        switch (c) {
        case 'o': o->out_dir = optarg; break;
        case 'i':
            if ((rc = parse_seconds("--interval", optarg, PM_NS_PER_S / 20, &o->interval_ns, err)))
                return rc;
            break;
        case 'c':
            if ((rc = parse_seconds("--checkpoint", optarg, PM_NS_PER_S / 20, &o->checkpoint_ns,
                                    err)))
                return rc;
            break;
        case 'd':
            if ((rc = parse_seconds("--duration", optarg, 1, &o->duration_ns, err)))
                return rc;
            break;
        case OPT_IPC: o->ipc_file = optarg; break;
        case OPT_IPC_RESET: o->ipc_reset = 1; break;
        case OPT_SYSCNT: o->system_counters = 1; break;
        case OPT_PSS:
            if ((rc = parse_seconds("--pss-interval", optarg, 0, &o->pss_interval_ns, err)))
                return rc;
            break;
        case 'j':
            if (!*optarg)
                return pm_error_set(err, PM_EUSAGE, "--job-id: empty");
            o->job_id = optarg;
            break;
        case OPT_HOST:
            if (!*optarg)
                return pm_error_set(err, PM_EUSAGE, "--host: empty");
            o->host = optarg;
            break;
        case 'f':
            if (strcmp(optarg, "bin") == 0) {
                o->write_bin = 1;
                o->write_json = 0;
            } else if (strcmp(optarg, "json") == 0) {
                o->write_bin = 0;
                o->write_json = 1;
            } else if (strcmp(optarg, "both") == 0) {
                o->write_bin = o->write_json = 1;
            } else {
                return pm_error_set(err, PM_EUSAGE, "--format: '%s' is not bin, json or both",
                                    optarg);
            }
            break;
        case 'p':
            if ((rc = parse_pids(optarg, o, err)))
                return rc;
            break;
        case OPT_PROC: o->proc_root = optarg; break;
        case OPT_SYS: o->sys_root = optarg; break;
        case 'v': o->verbose++; break;
        case 'h': fputs(usage_text, stdout); return 1;
        case 'V': (void)pm_cli_version("perfmon-sample"); return 1;
        default: return pm_cli_refused(c, argv, short_opts, longopts, err);
        }
    }
    if (optind < argc) {
        if (strcmp(argv[optind - 1], "--") != 0)
            return pm_error_set(err, PM_EUSAGE,
                                "unexpected argument '%s'; put the command "
                                "after '--'",
                                argv[optind]);
        o->cmd = argv + optind;
    } else if (optind > 1 && strcmp(argv[optind - 1], "--") == 0) {
        return pm_error_set(err, PM_EUSAGE, "no command after '--'");
    }
    if (!o->out_dir || !*o->out_dir)
        return pm_error_set(err, PM_EUSAGE, "-o DIR is required (see --help)");
    if (o->ipc_reset && !o->ipc_file)
        return pm_error_set(err, PM_EUSAGE, "--ipc-reset needs --ipc FILE");
    if (o->ipc_file && !*o->ipc_file)
        return pm_error_set(err, PM_EUSAGE, "--ipc: empty file name");
    if (o->cmd && o->npids)
        return pm_error_set(err, PM_EUSAGE, "-p and -- CMD cannot be combined");
    for (size_t i = 0; i < o->npids; i++) {
        char path[64];
        snprintf(path, sizeof path, "%s/%d", o->proc_root, (int)o->pids[i]);
        if (access(path, F_OK) != 0)
            return pm_error_set(err, PM_EUSAGE, "-p: no process %d", (int)o->pids[i]);
    }
    return 0;
}

/* The sampler's reports (log.h) on stderr, each line naming the host;
 * failures and lost output always, the rest with -v (-vv: debug too). */
static void log_sink(int level, const char *msg, void *user)
{
    static const char *const names[] = {"error", "warning", "warning", "info", "debug"};
    const char *name = level >= 0 && level <= PM_LOG_DEBUG ? names[level] : "debug";
    fprintf(stderr, "perfmon-sample[%s]: %s: %s\n", (const char *)user, name, msg);
}

int pm_sample_main(int argc, char **argv)
{
    pm_sampler_opts o;
    pm_error err;
    pm_error_clear(&err);
    int rc = pm_sampler_parse_args(argc, argv, &o, &err);
    if (rc == 1)
        return PM_EXIT_OK;
    if (rc != 0) {
        fprintf(stderr, "perfmon-sample: %s\n", err.msg);
        return PM_EXIT_USAGE;
    }
    const char *pv = getenv("PERFMON_PROFILE_VERSION");
    if (pv && *pv && strcmp(pv, "1") != 0 && strcmp(pv, "2") != 0 && strcmp(pv, "3") != 0) {
        fprintf(stderr,
                "perfmon-sample: PERFMON_PROFILE_VERSION=%.40s: give 1, 2 or 3 (the binary "
                "profile's version; 3 when unset)\n",
                pv);
        return PM_EXIT_USAGE;
    }
    char host[256];
    pm_sampler_host(&o, host, sizeof host);
    pm_log_set_sink(log_sink, host,
                    o.verbose > 1 ? PM_LOG_DEBUG
                    : o.verbose   ? PM_LOG_INFO
                                  : PM_LOG_NOTICE);
    rc = pm_sampler_run(&o);
    pm_log_set_sink(NULL, NULL, 0);
    return rc;
}
