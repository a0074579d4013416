/* run.h - the sampling run's state, shared by run.c (the loop: samples,
 * writing, signals, the end) and run_setup.c (opening the sources and the
 * profiles, starting the command, closing).  Private to the sampler.
 */
#ifndef PERFMON_RUN_H
#define PERFMON_RUN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "perfmon/ipc.h"
#include "perfmon/sampler.h"
#include "perfmon/source.h"
#include "perfmon/writer.h"

#define MAX_SOURCES 16

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
    int64_t late_ns;   /* a sample later than this counts as late */
    int fd_statm;      /* /proc/self/statm, kept open */
    int fd_loadavg;    /* <proc>/loadavg, kept open... */
    char loadavg[128]; /* ...and this sample's text (ctx.loadavg) */
    pm_ipc ipc;        /* --ipc, watched when ipc_on */
    int ipc_on;
    struct rlimit nofile; /* the limit the sampler started with... */
    int nofile_raised;    /* ...raised for kept descriptors; CMD gets it back */
} run;

/* run.c: the callbacks the sources' context carries (pm_sctx.note,
 * .followed), the command's end and its start gate. */
void pm_run_source_note(void *arg, const char *text);
int pm_run_followed_pid(void *arg, int pid);
void pm_run_reap_orphans(run *r);
int pm_run_release_child(run *r, pm_error *err);

/* run_setup.c: DIR made (with its parents) and writable; the sources, the
 * profiles and (-- CMD) the command at its gate, 0 or a PM_E* code with
 * err; the profiles removed after a failed start; everything closed. */
int pm_run_mkdir_p(const char *dir, pm_error *err);
int pm_run_setup(run *r, const sigset_t *oldmask, pm_error *err);
void pm_run_discard_profiles(run *r);
void pm_run_cleanup(run *r);

#endif
