/* sampler.h - perfmon-sample: options, job identity, and the run loop. */
#ifndef PERFMON_SAMPLER_H
#define PERFMON_SAMPLER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perfmon/error.h"
#include "perfmon/profile.h"

#define PM_MAX_PIDS 64

typedef struct pm_sampler_opts {
    const char *out_dir;
    int64_t interval_ns;     /* default 1 s, at least 50 ms */
    int64_t checkpoint_ns;   /* fdatasync period, default 60 s */
    int64_t duration_ns;     /* 0 = unlimited */
    int64_t pss_interval_ns; /* PSS/USS refresh period, default 5 s */
    const char *ipc_file;    /* stop when it contains FINISHED */
    int ipc_reset;           /* --ipc-reset: empty a FINISHED left by an earlier run */
    const char *job_id;      /* overrides the scheduler's */
    const char *host;        /* overrides the host name */
    int write_bin, write_json;
    pid_t pids[PM_MAX_PIDS]; /* -p */
    size_t npids;
    char *const *cmd;      /* -- CMD ARGS (NULL-terminated), or NULL */
    const char *proc_root; /* "/proc" unless re-rooted */
    const char *sys_root;  /* "/sys" unless re-rooted */
    int system_counters;   /* --system-counters: per-CPU counters without a tree */
    int verbose;
} pm_sampler_opts;

/* Fill in the scheduler, job id, node rank and user from the environment
 * (SLURM, PBS, OAR; "local" otherwise).  host must already be set. */
void pm_job_detect(pm_profile_info *info);

/* The host name the run records: opts->host, else SLURMD_NODENAME, else
 * gethostname(), else "unknown"; NUL-terminated in out[cap]. */
void pm_sampler_host(const pm_sampler_opts *opts, char *out, size_t cap);

/* Run the sampler; returns the process exit status (see the man page).
 * It reports through the log sink the program installs (log.h): failures
 * at PM_LOG_ERROR, lost or restored output at PM_LOG_NOTICE, the sources'
 * diagnostics at PM_LOG_WARN and below. */
int pm_sampler_run(const pm_sampler_opts *opts);

#endif
