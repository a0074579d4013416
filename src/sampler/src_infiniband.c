/* Infiniband source: port counters under
 * /sys/class/infiniband/<device>/ports/<n>/counters/ summed over ports.
 *
 * port_xmit_data and port_rcv_data count 32-bit words ("octets divided by
 * 4", IBA spec 14.2.5.6 / Documentation of the sysfs ABI), so they are
 * multiplied by 4 here and recorded in bytes.  Kernels expose the 64-bit
 * extended counters under the same names when the HCA supports them; the
 * legacy 32-bit counters saturate rather than wrap, which the analyzer's
 * reset repair treats as a stuck value, not a wrap.
 * A data counter above 2^62 words (2^64 bytes) or a sum over ports past
 * 2^64 cannot be recorded as bytes, and cannot be real: that column is
 * left unrecorded in the sample, noted once.
 *
 * The port error counters (IBA 16.1.3.5, PortCounters) symbol_error and
 * port_rcv_errors (16 bits) and link_downed (8 bits) stop at their maximum
 * instead of wrapping: their sums over ports are recorded as ib.symbol_errors,
 * ib.rcv_errors and ib.link_downed, and ib.saturated counts the ports
 * with one of them stuck at its maximum (from then on that port's errors
 * are no longer counted, which is itself worth telling).  They have
 * columns when at least one port has the files.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/log.h"
#include "perfmon/parse.h"
#include "perfmon/source.h"

#define MAX_PORTS 64
enum { XD, RD, XP, RP, SE, LD, RE, NCTR };
static const char *const ctr_file[NCTR] = {"port_xmit_data",   "port_rcv_data", "port_xmit_packets",
                                           "port_rcv_packets", "symbol_error",  "link_downed",
                                           "port_rcv_errors"};
/* The error counters' maxima, where they stop (0: the data counters). */
static const uint64_t ctr_max[NCTR] = {0, 0, 0, 0, 65535, 255, 65535};
#define FIRST_ERR SE

typedef struct ib_port {
    char dev[64];
    unsigned num;
    int dir;      /* the counters/ folder */
    int fd[NCTR]; /* the counter files, kept open */
} ib_port;

typedef struct ib_state {
    ib_port ports[MAX_PORTS];
    size_t nports;
    int col[NCTR];
    int col_saturated;
    int warned;
} ib_state;

static void ib_close(void *state)
{
    ib_state *st = state;
    if (!st)
        return;
    for (size_t i = 0; i < st->nports; i++) {
        close(st->ports[i].dir);
        for (int k = 0; k < NCTR; k++)
            pm_close_kept(&st->ports[i].fd[k]);
    }
    free(st);
}

static void scan_ports(ib_state *st, const pm_sctx *ctx, const char *dev)
{
    char path[512];
    snprintf(path, sizeof path, "class/infiniband/%s/ports", dev);
    int pfd = openat(ctx->sys_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = pfd >= 0 ? fdopendir(pfd) : NULL;
    if (!d) {
        if (pfd >= 0)
            close(pfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL && st->nports < MAX_PORTS) {
        uint64_t num;
        if (pm_parse_u64(e->d_name, &num) != 0 || num > 255)
            continue;
        char cpath[600];
        snprintf(cpath, sizeof cpath, "%s/counters", e->d_name);
        int cfd = openat(pfd, cpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cfd < 0)
            continue;
        char probe[64];
        if (pm_read_small(cfd, ctr_file[XD], probe, sizeof probe, NULL) <= 0) {
            close(cfd);
            continue;
        }
        ib_port *p = &st->ports[st->nports++];
        snprintf(p->dev, sizeof p->dev, "%s", dev);
        p->num = (unsigned)num;
        p->dir = cfd;
        for (int k = 0; k < NCTR; k++)
            p->fd[k] = -1;
    }
    closedir(d);
}

static int ib_open(const pm_sctx *ctx, pm_schema *s, void **state, pm_error *err)
{
    int fd = openat(ctx->sys_fd, "class/infiniband", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return pm_error_set(err, PM_ENOENT, "no Infiniband devices (%s/class/infiniband absent)",
                            ctx->sys_root);
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return pm_error_set(err, PM_ENOENT, "cannot list %s/class/infiniband", ctx->sys_root);
    }
    ib_state *st = calloc(1, sizeof *st);
    if (!st) {
        closedir(d);
        return pm_error_set(err, PM_ENOMEM, "infiniband: out of memory");
    }
    /* Sorted device order makes the metadata stable. */
    struct dirent *e;
    char names[32][64];
    size_t nn = 0;
    while ((e = readdir(d)) != NULL && nn < 32)
        if (e->d_name[0] != '.' && strlen(e->d_name) < 64)
            strcpy(names[nn++], e->d_name);
    closedir(d);
    qsort(names, nn, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    for (size_t i = 0; i < nn; i++)
        scan_ports(st, ctx, names[i]);
    if (st->nports == 0) {
        ib_close(st);
        return pm_error_set(err, PM_ENOENT, "Infiniband devices have no readable port counters");
    }
    st->col[XD] = pm_schema_add(s, "ib.bytes_sent", "B", PM_COUNTER, PM_U64, "ib", 0);
    st->col[RD] = pm_schema_add(s, "ib.bytes_recv", "B", PM_COUNTER, PM_U64, "ib", 0);
    st->col[XP] = pm_schema_add(s, "ib.packets_sent", "1", PM_COUNTER, PM_U64, "ib", 0);
    st->col[RP] = pm_schema_add(s, "ib.packets_recv", "1", PM_COUNTER, PM_U64, "ib", 0);
    if (st->col[RP] < 0) {
        ib_close(st);
        return pm_error_set(err, PM_ENOMEM, "infiniband: cannot add columns");
    }
    /* The error counters, where a port has them. */
    static const char *const err_col[NCTR] = {
        [SE] = "ib.symbol_errors", [LD] = "ib.link_downed", [RE] = "ib.rcv_errors"};
    int any = 0;
    st->col_saturated = -1;
    for (int k = FIRST_ERR; k < NCTR; k++) {
        st->col[k] = -1;
        for (size_t i = 0; i < st->nports && st->col[k] == -1; i++) {
            char probe[64];
            if (pm_read_small(st->ports[i].dir, ctr_file[k], probe, sizeof probe, NULL) > 0)
                st->col[k] = pm_schema_add(s, err_col[k], "1", PM_COUNTER, PM_U64, "events", 0);
        }
        any |= st->col[k] != -1;
        if (st->col[k] < -1) {
            ib_close(st);
            return pm_error_set(err, PM_ENOMEM, "infiniband: cannot add columns");
        }
    }
    if (any) {
        st->col_saturated = pm_schema_add(s, "ib.saturated", "1", PM_GAUGE, PM_U64, "events", 0);
        if (st->col_saturated < 0) {
            ib_close(st);
            return pm_error_set(err, PM_ENOMEM, "infiniband: cannot add columns");
        }
    }
    *state = st;
    return 0;
}

static int ib_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    ib_state *st = state;
    uint64_t sum[NCTR] = {0}, saturated = 0;
    int ok[NCTR] = {0}, bad[NCTR] = {0}, any_err = 0;
    for (size_t i = 0; i < st->nports; i++) {
        int stuck = 0;
        for (int k = 0; k < NCTR; k++) {
            char buf[64];
            uint64_t v;
            ib_port *p = &st->ports[i];
            if (st->col[k] < 0)
                continue;
            if (pm_pread_kept(&p->fd[k], p->dir, ctr_file[k], buf, sizeof buf, NULL) <= 0)
                continue;
            buf[strcspn(buf, "\n")] = '\0';
            if (pm_parse_u64(buf, &v) != 0)
                continue;
            if (k >= FIRST_ERR) {
                any_err = 1;
                stuck |= v >= ctr_max[k];
            }
            if ((k == XD || k == RD) && __builtin_mul_overflow(v, 4, &v))
                bad[k] = 1;
            bad[k] |= __builtin_add_overflow(sum[k], v, &sum[k]);
            ok[k] = 1;
        }
        saturated += (uint64_t)stuck;
    }
    if (any_err)
        pm_sample_u64(s, st->col_saturated, saturated);
    for (int k = 0; k < NCTR; k++) {
        if (ok[k] && !bad[k])
            pm_sample_u64(s, st->col[k], sum[k]);
        if (bad[k] && !st->warned) {
            st->warned = 1;
            pm_log(PM_LOG_WARN,
                   "infiniband: %s/class/infiniband: %s passes 2^64 bytes or "
                   "packets summed over ports, which no counter can reach; not recorded "
                   "(noted once)",
                   ctx->sys_root, ctr_file[k]);
        }
    }
    return 0;
}

static void ib_describe(void *state, pm_buf *j)
{
    ib_state *st = state;
    pm_buf_puts(j, "\"infiniband_ports\":[");
    for (size_t i = 0; i < st->nports; i++) {
        pm_buf_puts(j, i ? ",{\"device\":" : "{\"device\":");
        pm_buf_json_str(j, st->ports[i].dev);
        pm_buf_printf(j, ",\"port\":%u}", st->ports[i].num);
    }
    pm_buf_puts(j, "]");
}

const pm_source pm_source_infiniband = {
    .name = "infiniband",
    .open = ib_open,
    .read = ib_read,
    .describe = ib_describe,
    .close = ib_close,
};
