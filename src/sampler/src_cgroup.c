/* cgroup source: the kernel's own accounting of the job's cgroup.
 *
 * Which cgroup (docs/perfmon-sample.md, "The job's cgroup"):
 * - `-- CMD`: a fresh child cgroup `perfmon-<sampler pid>` made under the
 *   sampler's own cgroup (each v1 hierarchy, or v2), into which CMD is
 *   moved (adopt) before it is released from its start gate, removed at
 *   close; when it cannot be made, the sampler's own cgroup if that is a
 *   SLURM job's, otherwise nothing (and a note says why);
 * - `-p PID`: the cgroup of that process (a SLURM job's level when it is in
 *   one);
 * - inside a SLURM job: the job's cgroup from the sampler's own cgroup.
 * The cgroup is always read from /proc/PID/cgroup (cgroups(7)): `0::/path`
 * on v2, `ID:controllers:/path` per v1 hierarchy.  The hierarchies are
 * under <sys>/fs/cgroup: v2 when it holds cgroup.controllers; otherwise v1
 * mounts named after their controllers (`cpu,cpuacct` or `cpuacct`), and
 * on a hybrid system the cgroup2 mount `unified` gives the pressure files.
 *
 * Files (Documentation/admin-guide/cgroup-v2.rst, cgroup-v1/) are
 * opened once at open() and read with pread(fd, ..., 0) every sample.  A
 * file the kernel does not have is left out with one note; a value that
 * does not parse is not recorded.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "perfmon/buf.h"
#include "perfmon/clock.h"
#include "perfmon/fileio.h"
#include "perfmon/log.h"
#include "perfmon/parse.h"
#include "perfmon/proctree.h"
#include "perfmon/source.h"

#include "cgroup.h"

void pm_cg_add_note(cg_state *st, const char *fmt, ...)
{
    if (st->nnotes == MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->notes[st->nnotes++], NOTE_LEN, fmt, ap);
    va_end(ap);
    pm_log(PM_LOG_INFO, "%s", st->notes[st->nnotes - 1]);
}

/* ------------------------------------------------------------- the ops */

static void cg_free(cg_state *st)
{
    for (size_t i = 0; i < st->nf; i++)
        pm_close_kept(&st->f[i].fd);
    st->nf = 0;
    pm_cg_remove_children(st);
    pm_cg_close_hiers(st);
    free(st->buf);
    free(st);
}

static int cg_open(const pm_sctx *ctx, pm_schema *s, void **state, pm_error *err)
{
    cg_state *st = calloc(1, sizeof *st);
    char *buf = malloc(CG_BUF);
    if (!st || !buf) {
        free(st);
        free(buf);
        return pm_error_set(err, PM_ENOMEM, "cgroup: out of memory");
    }
    st->buf = buf;
    st->clk_tck = ctx->clk_tck;
    for (int i = 0; i < 4; i++)
        st->io_tot[i] = -1;
    char why[CG_PATH + 200];
    why[0] = '\0';
    if (!pm_cg_find(ctx, st, why, sizeof why)) {
        if (st->nnotes && ctx->nroots > 0 && ctx->roots[0] <= 0) {
            /* -- CMD: the notes say why there is no cgroup */
            st->dead = 1;
            st->adopted = 1;
            *state = st;
            return 0;
        }
        cg_free(st);
        return pm_error_set(err, PM_ENOENT, "%s", why);
    }
    st->adopted = !st->created;
    int rc = pm_cg_open_files(ctx, st, s);
    if (rc < 0) {
        cg_free(st);
        return pm_error_set(err, rc, "cgroup: cannot add columns");
    }
    *state = st;
    return 0;
}

/* Write the pending notes: the cgroup event first, at the first sample. */
static void announce(cg_state *st, const pm_sctx *ctx, const pm_sample *s)
{
    if (!st->dead && st->level) {
        pm_buf b;
        pm_buf_init(&b);
        pm_buf_puts(&b, "{\"event\":\"cgroup\",\"t\":");
        pm_buf_json_num(&b, (double)s->wall_ns / 1e9);
        pm_buf_printf(&b, ",\"version\":%d,\"path\":", st->version);
        /* the hierarchy that holds most: v2, else memory's, else the first */
        const hier *h = &st->h[0];
        for (size_t i = 0; i < st->nh; i++)
            if (st->h[i].ctrl & (C_V2 | C_MEMORY)) {
                h = &st->h[i];
                break;
            }
        pm_buf_json_str(&b, h->path);
        pm_buf_printf(&b, ",\"from_pid\":%d,\"created\":%d,\"level\":", (int)st->from_pid,
                      st->created);
        pm_buf_json_str(&b, st->level);
        pm_buf_puts(&b, "}");
        if (!b.oom)
            pm_sctx_note(ctx, b.data);
        pm_buf_free(&b);
        st->level = NULL; /* once */
    }
    for (size_t i = 0; i < st->nnotes; i++)
        pm_sctx_note(ctx, st->notes[i]);
    st->nnotes = 0;
    st->announced = 1;
}

static int cg_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    cg_state *st = state;
    if (!st->announced)
        announce(st, ctx, s);
    if (st->dead || !st->adopted)
        return -1;
    int slow = ctx->pss_interval_ns <= 0 || !st->slow_due || ctx->now_mono_ns >= st->slow_due;
    if (slow && ctx->pss_interval_ns > 0)
        st->slow_due = (ctx->now_mono_ns ? ctx->now_mono_ns : 1) + ctx->pss_interval_ns;
    int rare = pm_sctx_rare_due(ctx, &st->rare_due);
    for (size_t i = 0; i < st->nf; i++)
        if (!st->h[st->f[i].hi].off && (slow || st->f[i].sp->when != W_SLOW) &&
            (rare || st->f[i].sp->when != W_RARE))
            pm_cg_read_file(st, &st->f[i], s);
    if (!st->announced)
        announce(st, ctx, s); /* a malformed line seen just now */
    return 0;
}

/* -- CMD: move the command (pid, held at its start gate) into the
 * cgroups made for it. */
static void cg_adopt(void *state, const pm_sctx *ctx, pid_t pid)
{
    (void)ctx;
    cg_state *st = state;
    if (!st->created || st->dead)
        return;
    char num[24];
    int len = snprintf(num, sizeof num, "%d\n", (int)pid);
    for (size_t i = 0; i < st->nh; i++) {
        int fd = openat(st->h[i].dirfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
        int rc = fd < 0 ? -errno : pm_write_all(fd, num, (size_t)len);
        if (fd >= 0 && close(fd) != 0 && rc == 0)
            rc = -errno;
        if (rc != 0 && st->h[i].ctrl == C_PSI) {
            pm_cg_add_note(st,
                           "cgroup: no pressure columns (cannot move the command into %s%s: %s)",
                           st->h[i].mount, st->h[i].path, strerror(-rc));
            st->h[i].off = 1;
        } else if (rc != 0) {
            pm_cg_add_note(st, "cgroup: cannot move the command into %s%s: %s; no cgroup columns",
                           st->h[i].mount, st->h[i].path, strerror(-rc));
            st->dead = 1;
            return;
        }
    }
    st->from_pid = pid;
    st->adopted = 1;
}

static void cg_close(void *state)
{
    if (state)
        cg_free(state);
}

const pm_source pm_source_cgroup = {
    .name = "cgroup",
    .open = cg_open,
    .read = cg_read,
    .adopt = cg_adopt,
    .close = cg_close,
};
