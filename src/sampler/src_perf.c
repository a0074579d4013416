/* Counter source: hardware and software events through perf_event_open(2),
 * with no perf binary and no helper process.
 *
 * What is counted: cycles, instructions, cache references and misses,
 * branches and branch misses (PERF_TYPE_HARDWARE), context switches, CPU
 * migrations and page faults (PERF_TYPE_SOFTWARE), and the raw events of
 * the event table that matches the CPU (templates/events/, perfev.h) with
 * their derived FLOP and byte counters.  Every column is a cumulative
 * counter; rates (MFLOP/s, MB/s, IPC) are the analyzer's job.
 *
 * Whose events, by how the sampler was started:
 *  - with -- CMD the sources are opened before CMD is forked (the root pid
 *    is still 0): the counters are opened on the sampler itself, disabled,
 *    with inherit and enable_on_exec, so the forked child inherits them and
 *    the kernel enables them when it execs CMD; everything CMD then starts
 *    inherits them too, and nothing the sampler does itself is counted.
 *  - with -p PID the counters are opened, with inherit, on every thread of
 *    each root and of every descendant it has at that moment (perf only
 *    inherits to tasks created after the open, so present members are
 *    opened one by one; later ones inherit).
 *  - system-wide (neither) one counter set per online CPU (pid -1), which
 *    the kernel allows only with perf_event_paranoid <= 0, CAP_PERFMON or
 *    CAP_SYS_ADMIN; otherwise the source is absent and says so.
 * Reading an inherited counter returns the sum over the task it was opened
 * on and all its descendants, those that exited included.
 *
 * Events of one group are scheduled onto the PMU together and read with one
 * read(2) (PERF_FORMAT_GROUP), so ratios within a group are exact.  When
 * there are more events than counters the kernel multiplexes groups;
 * each value is then scaled by time_enabled / time_running (the perf stat
 * estimate), kept non-decreasing, and perf.counted_pct records the
 * smallest share of time a group was actually counted.
 *
 * Refusals are not errors: an event the kernel rejects (ENOENT, EOPNOTSUPP
 * or EINVAL in a VM without a PMU, EACCES under perf_event_paranoid) is
 * absent and the reason goes into the hardware metadata.  Under
 * perf_event_paranoid 2 an unprivileged sampler retries with user-space
 * counting only, and then leaves out context switches and migrations,
 * which the kernel counts in kernel context.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <dirent.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/hwinfo.h"
#include "perfmon/log.h"
#include "perfmon/parse.h"
#include "perfmon/perfev.h"
#include "perfmon/proctree.h"
#include "perfmon/source.h"
#include "perfmon/templates.h"

#define PROC_SUPER_MAGIC_ 0x9fa0
#define NGENERIC 9
#define MAX_EVENTS (NGENERIC + PM_PEV_MAX_EVENTS)
#define MAX_GROUPS (2 + PM_PEV_MAX_EVENTS)
#define MAX_TARGETS 4096
#define FD_RESERVE 256 /* descriptors left for the rest of the sampler */

enum { M_EXEC, M_PIDS, M_SYSTEM };
static const char *const mode_name[] = {"command", "pids", "system"};

static const struct {
    const char *col;
    uint32_t type;
    uint64_t config;
    int group;
    int kernel_ctx; /* only ever counted in kernel context */
} generic[NGENERIC] = {
    {"perf.context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 1},
    {"perf.cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 0, 1},
    {"perf.page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0, 0},
    {"perf.cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1, 0},
    {"perf.instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1, 0},
    {"perf.cache_references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, 1, 0},
    {"perf.cache_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 1, 0},
    {"perf.branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 1, 0},
    {"perf.branch_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 1, 0},
};

typedef struct pev {
    char col[96];
    uint32_t type;
    uint64_t config, config1;
    int group; /* 0 software, 1 hardware, 2 + n raw table group n */
    int kernel_ctx;
    int col_idx; /* -1 until it opened somewhere */
    int nopen;   /* targets it opened on */
    int err;     /* errno of the first refusal */
    double last; /* last value recorded (kept non-decreasing) */
} pev;

typedef struct perf_state {
    pev ev[MAX_EVENTS];
    size_t nev, nraw; /* raw table events are ev[NGENERIC .. NGENERIC + nraw) */
    int ngroups;
    int mode;
    int *tgt; /* pids/tids (M_PIDS), CPUs (M_SYSTEM), 0 (M_EXEC) */
    size_t ntgt, ntgt_wanted;
    int *fd; /* [ntgt][nev], -1 when not open */
    int user_only;
    int denied_first; /* EACCES/EPERM on the first target */
    int paranoid;
    int have_table;
    pm_pev_table *tab;
    char table_note[512];
    int dcol[PM_PEV_MAX_DERIVED];
    double dlast[PM_PEV_MAX_DERIVED];
    int col_counted;
    uint64_t *buf; /* group read buffer */
    size_t bufn;
    double *sum;   /* [nev] per sample */
    uint8_t *seen; /* [nev] */
} perf_state;

static long sys_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group_fd,
                                unsigned long flags)
{
    return syscall(SYS_perf_event_open, a, pid, cpu, group_fd, flags);
}

static void perf_close(void *state)
{
    perf_state *st = state;
    if (!st)
        return;
    if (st->fd)
        for (size_t i = 0; i < st->ntgt * st->nev; i++)
            if (st->fd[i] >= 0)
                close(st->fd[i]);
    free(st->fd);
    free(st->tgt);
    free(st->tab);
    free(st->buf);
    free(st->sum);
    free(st->seen);
    free(st);
}

static int read_paranoid(const pm_sctx *ctx)
{
    char buf[32];
    int64_t v;
    if (pm_read_small(ctx->proc_fd, "sys/kernel/perf_event_paranoid", buf, sizeof buf, NULL) <= 0)
        return 99;
    buf[strcspn(buf, "\n")] = '\0';
    return pm_parse_i64(buf, &v) == 0 && v > -10 && v < 10 ? (int)v : 99;
}

static int add_target(perf_state *st, int id)
{
    if (st->ntgt_wanted++ >= MAX_TARGETS)
        return 0;
    int *nt = realloc(st->tgt, (st->ntgt + 1) * sizeof *nt);
    if (!nt)
        return PM_ENOMEM;
    st->tgt = nt;
    st->tgt[st->ntgt++] = id;
    return 0;
}

/* Every thread of each root and of each descendant it already has
 * (/proc/<pid>/task; the pid alone when its task directory cannot be
 * listed): the kernel passes counters on only to tasks created after the
 * open, so the tree's present members are opened one by one. */
static int pid_targets(perf_state *st, const pm_sctx *ctx)
{
    pid_t *members = NULL;
    size_t nm = 0;
    if (pm_proctree_members(ctx, MAX_TARGETS, &members, &nm) != 0) {
        /* /proc unlistable: the roots alone. */
        free(members);
        members = malloc(ctx->nroots * sizeof *members);
        if (!members)
            return PM_ENOMEM;
        memcpy(members, ctx->roots, ctx->nroots * sizeof *members);
        nm = ctx->nroots;
    }
    int rc = 0;
    for (size_t r = 0; r < nm && !rc; r++) {
        char path[48];
        snprintf(path, sizeof path, "%d/task", (int)members[r]);
        int fd = openat(ctx->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        size_t before = st->ntgt_wanted;
        if (d) {
            struct dirent *e;
            uint64_t tid;
            while (!rc && (e = readdir(d)) != NULL)
                if (pm_parse_u64(e->d_name, &tid) == 0 && tid > 0 && tid <= INT32_MAX)
                    rc = add_target(st, (int)tid);
            closedir(d);
        } else if (fd >= 0) {
            close(fd);
        }
        if (!rc && st->ntgt_wanted == before)
            rc = add_target(st, (int)members[r]);
    }
    free(members);
    return rc;
}

/* Online CPUs from devices/system/cpu/online ("0-3,6,8-11"). */
static int cpu_targets(perf_state *st, const pm_sctx *ctx)
{
    char buf[4096];
    if (pm_read_small(ctx->sys_fd, "devices/system/cpu/online", buf, sizeof buf, NULL) > 0) {
        buf[strcspn(buf, "\n")] = '\0';
        char *save = NULL;
        for (char *r = strtok_r(buf, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
            char *dash = strchr(r, '-');
            uint64_t lo, hi;
            if (dash)
                *dash = '\0';
            if (pm_parse_u64(r, &lo) != 0 ||
                (dash ? pm_parse_u64(dash + 1, &hi) : (hi = lo, 0)) != 0 || hi < lo ||
                hi >= MAX_TARGETS)
                continue;
            for (uint64_t c = lo; c <= hi; c++)
                if (add_target(st, (int)c) != 0)
                    return PM_ENOMEM;
        }
    }
    if (st->ntgt == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < n && c < MAX_TARGETS; c++)
            if (add_target(st, (int)c) != 0)
                return PM_ENOMEM;
    }
    return 0;
}

static void add_event(perf_state *st, const char *col, uint32_t type, uint64_t config,
                      uint64_t config1, int group, int kernel_ctx)
{
    pev *e = &st->ev[st->nev++];
    snprintf(e->col, sizeof e->col, "%s", col);
    e->type = type;
    e->config = config;
    e->config1 = config1;
    e->group = group;
    e->kernel_ctx = kernel_ctx;
    e->col_idx = -1;
    if (group + 1 > st->ngroups)
        st->ngroups = group + 1;
}

/* The event table for this CPU, from the templates directory. */
static void load_table(perf_state *st, const pm_sctx *ctx)
{
    pm_cpu_ident id;
    if (pm_hwinfo_cpu_ident(ctx, &id) != 0) {
        snprintf(st->table_note, sizeof st->table_note, "CPU vendor unknown (%s/cpuinfo)",
                 ctx->proc_root);
        return;
    }
    char tdir[4096], edir[4200];
    pm_find_template_dir(NULL, "events", tdir, sizeof tdir);
    snprintf(edir, sizeof edir, "%s/events", tdir);
    st->tab = malloc(sizeof *st->tab);
    if (!st->tab)
        return;
    pm_error err;
    pm_error_clear(&err);
    if (pm_pev_select(edir, id.vendor, id.family, id.model, st->tab, &err) != 0) {
        snprintf(st->table_note, sizeof st->table_note, "%s", err.msg);
        return;
    }
    st->have_table = 1;
    st->nraw = st->tab->nev;
    for (size_t i = 0; i < st->tab->nev; i++) {
        char col[96], lower[64];
        const pm_pev_event *e = &st->tab->ev[i];
        size_t k = 0;
        for (; e->name[k] && k + 1 < sizeof lower; k++)
            lower[k] =
                (char)(e->name[k] >= 'A' && e->name[k] <= 'Z' ? e->name[k] + 32 : e->name[k]);
        lower[k] = '\0';
        snprintf(col, sizeof col, "perf.raw.%s", lower);
        add_event(st, col, PERF_TYPE_RAW, e->config, e->config1, 2 + e->group, 0);
    }
}

static int denied(int e)
{
    return e == EACCES || e == EPERM;
}

static int open_fd(perf_state *st, const pev *e, int target, int leader)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = e->type;
    a.config = e->config;
    a.config1 = e->config1;
    a.read_format =
        PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    a.exclude_hv = 1;
    a.exclude_kernel = (unsigned)st->user_only;
    pid_t pid = target;
    int cpu = -1;
    if (st->mode == M_SYSTEM) {
        pid = -1;
        cpu = target;
    } else {
        a.inherit = 1;
    }
    if (st->mode == M_EXEC) {
        pid = 0;
        if (leader < 0) {
            /* Siblings follow their leader's state. */
            a.disabled = 1;
            a.enable_on_exec = 1;
        }
    }
    long fd = sys_perf_event_open(&a, pid, cpu, leader, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : (int)fd;
}

/* Open every group on every target.  Returns the number of fds opened. */
static size_t open_all(perf_state *st)
{
    size_t opened = 0;
    for (size_t t = 0; t < st->ntgt; t++) {
        for (int g = 0; g < st->ngroups; g++) {
            int leader = -1;
            for (size_t i = 0; i < st->nev; i++) {
                pev *e = &st->ev[i];
                int *slot = &st->fd[t * st->nev + i];
                if (e->group != g || (st->user_only && e->kernel_ctx))
                    continue;
                int fd = open_fd(st, e, st->tgt[t], leader);
                if (fd == -ESRCH)
                    break; /* the thread ended meanwhile */
                if (fd < 0) {
                    if (!e->err)
                        e->err = -fd;
                    /* Refused on the first target (the sampler itself or
                     * the first root): a permission matter of this user,
                     * not of a foreign process in the tree. */
                    if (t == 0 && denied(-fd))
                        st->denied_first = 1;
                    continue;
                }
                *slot = fd;
                e->nopen++;
                opened++;
                if (leader < 0)
                    leader = fd;
            }
        }
    }
    return opened;
}

static void close_all(perf_state *st)
{
    for (size_t i = 0; i < st->ntgt * st->nev; i++)
        if (st->fd[i] >= 0) {
            close(st->fd[i]);
            st->fd[i] = -1;
        }
    for (size_t i = 0; i < st->nev; i++)
        st->ev[i].nopen = st->ev[i].err = 0;
}

static const char *why(int e)
{
    switch (e) {
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV: return "not supported (no PMU for it here, e.g. a VM)";
    case EINVAL: return "refused by the kernel (EINVAL: unknown to this PMU)";
    case EACCES:
    case EPERM: return "not permitted (perf_event_paranoid, CAP_PERFMON)";
    case EMFILE:
    case ENFILE: return "out of file descriptors";
    case EBUSY: return "counter busy (taken by another user, e.g. the NMI watchdog)";
    default: return strerror(e);
    }
}

/* Make room for ntgt * nev descriptors under RLIMIT_NOFILE: raise the soft
 * limit towards the hard one, then drop targets that do not fit. */
static void fit_fd_limit(perf_state *st)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return;
    rlim_t need = (rlim_t)(st->ntgt * st->nev) + FD_RESERVE;
    if (need > rl.rlim_cur && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = need < rl.rlim_max ? need : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (need > rl.rlim_cur) {
        size_t fit = rl.rlim_cur > FD_RESERVE ? (size_t)(rl.rlim_cur - FD_RESERVE) / st->nev : 0;
        if (fit < st->ntgt)
            st->ntgt = fit;
    }
}

static int perf_open(const pm_sctx *ctx, pm_schema *s, void **state, pm_error *err)
{
    struct statfs sfs;
    if (fstatfs(ctx->proc_fd, &sfs) != 0 || sfs.f_type != PROC_SUPER_MAGIC_)
        return pm_error_set(err, PM_ENOENT, "counters need the live kernel (%s is not procfs)",
                            ctx->proc_root);
    if (ctx->nroots == 0 && !ctx->system_counters)
        /* Reading a counter that runs on another CPU takes an interrupt of
         * that CPU (an IPI; in a VM an exit as well): measured here, 1.4 ms
         * of the sampler's CPU per sample on 2 CPUs, five times the rest of
         * the sample.  The job's cores are not to be disturbed unasked. */
        return pm_error_set(err, PM_ENOENT,
                            "no process tree to count: system-wide counters "
                            "are off (--system-counters turns them on)");
    perf_state *st = calloc(1, sizeof *st);
    if (!st)
        return pm_error_set(err, PM_ENOMEM, "perf: out of memory");
    st->paranoid = read_paranoid(ctx);
    st->mode = ctx->nroots == 0                         ? M_SYSTEM
               : ctx->nroots == 1 && ctx->roots[0] == 0 ? M_EXEC
                                                        : M_PIDS;
    int rc = st->mode == M_SYSTEM ? cpu_targets(st, ctx)
             : st->mode == M_PIDS ? pid_targets(st, ctx)
                                  : add_target(st, 0);
    if (rc) {
        perf_close(st);
        return pm_error_set(err, PM_ENOMEM, "perf: out of memory");
    }
    for (size_t i = 0; i < NGENERIC; i++)
        add_event(st, generic[i].col, generic[i].type, generic[i].config, 0, generic[i].group,
                  generic[i].kernel_ctx);
    load_table(st, ctx);
    fit_fd_limit(st);
    st->fd = malloc((st->ntgt ? st->ntgt : 1) * st->nev * sizeof *st->fd);
    st->sum = calloc(st->nev, sizeof *st->sum);
    st->seen = calloc(st->nev, 1);
    st->bufn = 3 + st->nev;
    st->buf = calloc(st->bufn, sizeof *st->buf);
    if (!st->fd || !st->sum || !st->seen || !st->buf) {
        perf_close(st);
        return pm_error_set(err, PM_ENOMEM, "perf: out of memory");
    }
    for (size_t i = 0; i < st->ntgt * st->nev; i++)
        st->fd[i] = -1;
    size_t opened = open_all(st);
    if (st->denied_first && st->mode != M_SYSTEM) {
        /* perf_event_paranoid 2: an unprivileged user may count user space
         * only.  Count that rather than nothing. */
        close_all(st);
        st->user_only = 1;
        opened = open_all(st);
    }
    if (opened == 0) {
        int e = 0;
        for (size_t i = 0; i < st->nev && !e; i++)
            e = st->ev[i].err;
        if (st->mode == M_SYSTEM && denied(e))
            pm_error_set(err, PM_ENOENT,
                         "system-wide counters need perf_event_paranoid <= 0 "
                         "(it is %d), CAP_PERFMON or root; follow the job with -p or -- CMD",
                         st->paranoid);
        else if (st->ntgt == 0)
            pm_error_set(err, PM_ENOENT, "no descriptors left for counters (RLIMIT_NOFILE)");
        else
            pm_error_set(err, PM_ENOENT,
                         "no counter could be opened: %s (%s; "
                         "perf_event_paranoid is %d)",
                         why(e), strerrorname_np(e) ? strerrorname_np(e) : "?", st->paranoid);
        perf_close(st);
        return PM_ENOENT;
    }
    for (size_t i = 0; i < st->nev; i++) {
        pev *e = &st->ev[i];
        if (!e->nopen)
            continue;
        e->col_idx = pm_schema_add(s, e->col, "1", PM_COUNTER, PM_U64, "perf", 0);
        if (e->col_idx < 0 && e->col_idx != PM_EUSAGE) {
            perf_close(st);
            return pm_error_set(err, e->col_idx, "perf: cannot add column %s", e->col);
        }
    }
    for (size_t d = 0; st->have_table && d < st->tab->nd; d++) {
        const pm_pev_derived *dv = &st->tab->d[d];
        int all = 1;
        for (size_t k = 0; k < dv->nt; k++)
            all &= st->ev[NGENERIC + (size_t)dv->t[k].event].nopen > 0;
        st->dcol[d] = -1;
        if (!all)
            continue;
        char col[96];
        snprintf(col, sizeof col, "perf.%s", dv->id);
        st->dcol[d] = pm_schema_add(s, col, dv->unit, PM_COUNTER, PM_U64, "perf", 0);
    }
    st->col_counted = pm_schema_add(s, "perf.counted_pct", "%", PM_GAUGE, PM_F64, "perf", 0);
    *state = st;
    return 0;
}

/* A count (>= 0, scaled by multiplexing) to the nearest integer, saturated:
 * rounding by hand keeps the sampler free of libm (llround), and the cast
 * of a double at or beyond 2^64 would be undefined. */
static uint64_t round_u64(double v)
{
    if (!(v > 0))
        return 0;
    if (v >= 18446744073709551616.0)
        return UINT64_MAX;
    return (uint64_t)(v + 0.5);
}

static int perf_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    (void)ctx;
    perf_state *st = state;
    double en[MAX_GROUPS] = {0}, run[MAX_GROUPS] = {0};
    memset(st->sum, 0, st->nev * sizeof *st->sum);
    memset(st->seen, 0, st->nev);
    for (size_t t = 0; t < st->ntgt; t++) {
        const int *fds = &st->fd[t * st->nev];
        for (int g = 0; g < st->ngroups; g++) {
            size_t members[MAX_EVENTS], nm = 0;
            for (size_t i = 0; i < st->nev; i++)
                if (st->ev[i].group == g && fds[i] >= 0)
                    members[nm++] = i;
            if (nm == 0)
                continue;
            /* { nr, time_enabled, time_running, value[nr] }
             * (perf_event_open(2), PERF_FORMAT_GROUP). */
            ssize_t n = read(fds[members[0]], st->buf, st->bufn * sizeof *st->buf);
            if (n < (ssize_t)(3 * sizeof(uint64_t)) || st->buf[0] != nm ||
                (size_t)n < (3 + nm) * sizeof(uint64_t))
                continue;
            double e = (double)st->buf[1], r = (double)st->buf[2];
            en[g] += e;
            run[g] += r;
            double scale = r > 0 ? e / r : 0;
            for (size_t k = 0; k < nm; k++) {
                st->sum[members[k]] += (double)st->buf[3 + k] * scale;
                st->seen[members[k]] = 1;
            }
        }
    }
    double raw[PM_PEV_MAX_EVENTS];
    for (size_t i = 0; i < st->nev; i++) {
        pev *e = &st->ev[i];
        double v = NAN;
        if (st->seen[i]) {
            v = st->sum[i] > e->last ? st->sum[i] : e->last;
            e->last = v;
            pm_sample_u64(s, e->col_idx, round_u64(v));
        }
        if (i >= NGENERIC)
            raw[i - NGENERIC] = v;
    }
    for (size_t d = 0; st->have_table && d < st->tab->nd; d++) {
        double v = pm_pev_derive(&st->tab->d[d], raw);
        if (st->dcol[d] < 0 || isnan(v))
            continue;
        if (v < st->dlast[d])
            v = st->dlast[d];
        st->dlast[d] = v;
        pm_sample_u64(s, st->dcol[d], round_u64(v));
    }
    double counted = NAN;
    for (int g = 0; g < st->ngroups; g++)
        if (en[g] > 0) {
            double pct = 100.0 * run[g] / en[g];
            if (isnan(counted) || pct < counted)
                counted = pct;
        }
    pm_sample_f64(s, st->col_counted, counted);
    return 0;
}

static void perf_describe(void *state, pm_buf *j)
{
    perf_state *st = state;
    pm_buf_printf(j,
                  "\"perf\":{\"mode\":\"%s\",\"targets\":%zu,\"targets_wanted\":%zu,"
                  "\"perf_event_paranoid\":%d,\"user_space_only\":%s,\"scaling\":"
                  "\"time_enabled/time_running applied\",\"events\":{",
                  mode_name[st->mode], st->ntgt, st->ntgt_wanted, st->paranoid,
                  st->user_only ? "true" : "false");
    for (size_t i = 0; i < st->nev; i++) {
        const pev *e = &st->ev[i];
        char msg[160];
        if (e->nopen)
            snprintf(msg, sizeof msg, "ok");
        else if (st->user_only && e->kernel_ctx)
            snprintf(msg, sizeof msg,
                     "left out: counted in kernel context, which "
                     "perf_event_paranoid %d does not allow",
                     st->paranoid);
        else if (!e->err)
            snprintf(msg, sizeof msg, "not opened: no target left (the threads had ended)");
        else
            snprintf(msg, sizeof msg, "%s (%s)", why(e->err),
                     strerrorname_np(e->err) ? strerrorname_np(e->err) : "?");
        pm_buf_puts(j, i ? "," : "");
        pm_buf_json_str(j, e->col);
        pm_buf_puts(j, ":");
        pm_buf_json_str(j, msg);
    }
    pm_buf_puts(j, "},\"table\":");
    if (st->have_table) {
        pm_buf_puts(j, "{\"arch\":");
        pm_buf_json_str(j, st->tab->arch);
        pm_buf_puts(j, ",\"title\":");
        pm_buf_json_str(j, st->tab->title);
        pm_buf_puts(j, ",\"file\":");
        pm_buf_json_str(j, st->tab->path);
        pm_buf_puts(j, ",\"derived\":{");
        for (size_t d = 0; d < st->tab->nd; d++) {
            pm_buf_puts(j, d ? "," : "");
            pm_buf_json_str(j, st->tab->d[d].id);
            pm_buf_puts(j, st->dcol[d] >= 0 ? ":\"ok\"" : ":\"left out: an event is missing\"");
        }
        pm_buf_puts(j, "}}");
    } else {
        pm_buf_puts(j, "null,\"table_reason\":");
        pm_buf_json_str(j, st->table_note);
    }
    pm_buf_puts(j, "}");
}

const pm_source pm_source_perf = {
    .name = "perf",
    .open = perf_open,
    .read = perf_read,
    .describe = perf_describe,
    .close = perf_close,
};
