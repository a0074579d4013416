/* Network source: /proc/net/dev (proc(5)), split into loopback and
 * external interfaces as AzureML's perf.py reports them.  Every interface
 * other than "lo" counts as external.  The counters are those of the
 * sampler's network namespace.
 *
 * Every 64-bit value is a possible counter (a 400 Gb/s link passes 2^63
 * bytes in under 6 years), so none is rejected alone; a sum over
 * interfaces that overflows 64 bits cannot be real and leaves that column
 * unrecorded in the sample, noted once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/fileio.h"
#include "perfmon/log.h"
#include "perfmon/parse.h"
#include "perfmon/source.h"

#include "sread.h"

/* About 130 bytes an interface: 4 MiB holds some 30,000 (veth pairs of a
 * container host, VLANs, IPoIB children). */
#define NETDEV_MAX (4u << 20)

enum { LO, EXT };

typedef struct net_state {
    int bs[2], br[2], ps[2], pr[2];
    int errs, drops;
    int fd;
    int warned_big;
    int warned_sum;
    char *buf;
    size_t cap;
} net_state;

static void net_free(net_state *st)
{
    pm_close_kept(&st->fd);
    free(st->buf);
    free(st);
}

static int net_open(const pm_sctx *ctx, pm_schema *s, void **state, pm_error *err)
{
    net_state *st = calloc(1, sizeof *st);
    if (!st)
        return pm_error_set(err, PM_ENOMEM, "net: out of memory");
    st->fd = -1;
    ssize_t n = pm_sread_records(&st->fd, ctx->proc_fd, "net/dev", &st->buf, &st->cap, NETDEV_MAX);
    if (n <= 0) {
        net_free(st);
        if (n == -ENOMEM)
            return pm_error_set(err, PM_ENOMEM, "net: out of memory");
        if (n == -EFBIG)
            return pm_error_set(err, PM_ENOENT, "%s/net/dev: larger than %u bytes", ctx->proc_root,
                                NETDEV_MAX);
        return pm_error_set(err, PM_ENOENT, "%s/net/dev: not readable", ctx->proc_root);
    }
    static const char *const pre[2] = {"net.lo.", "net.ext."};
    char name[64];
    for (int k = 0; k < 2; k++) {
        snprintf(name, sizeof name, "%sbytes_sent", pre[k]);
        st->bs[k] = pm_schema_add(s, name, "B", PM_COUNTER, PM_U64, "net", 0);
        snprintf(name, sizeof name, "%sbytes_recv", pre[k]);
        st->br[k] = pm_schema_add(s, name, "B", PM_COUNTER, PM_U64, "net", 0);
        snprintf(name, sizeof name, "%spackets_sent", pre[k]);
        st->ps[k] = pm_schema_add(s, name, "1", PM_COUNTER, PM_U64, "net", 0);
        snprintf(name, sizeof name, "%spackets_recv", pre[k]);
        st->pr[k] = pm_schema_add(s, name, "1", PM_COUNTER, PM_U64, "net", 0);
    }
    st->errs = pm_schema_add(s, "net.ext.errors", "1", PM_COUNTER, PM_U64, "net", 0);
    st->drops = pm_schema_add(s, "net.ext.drops", "1", PM_COUNTER, PM_U64, "net", 0);
    if (st->drops < 0) {
        net_free(st);
        return pm_error_set(err, PM_ENOMEM, "net: cannot add columns");
    }
    *state = st;
    return 0;
}

static int net_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    net_state *st = state;
    ssize_t n = pm_sread_records(&st->fd, ctx->proc_fd, "net/dev", &st->buf, &st->cap, NETDEV_MAX);
    if (n == -EFBIG && !st->warned_big) {
        st->warned_big = 1;
        pm_log(PM_LOG_WARN,
               "net: %s/net/dev grew beyond %u bytes; network counters not "
               "recorded",
               ctx->proc_root, NETDEV_MAX);
    }
    if (n <= 0)
        return -1;
    /* Sums, and a flag per sum that overflowed. */
    uint64_t bs[2] = {0}, br[2] = {0}, ps[2] = {0}, pr[2] = {0}, errs = 0, drops = 0;
    int obs[2] = {0}, obr[2] = {0}, ops[2] = {0}, opr[2] = {0}, oerrs = 0, odrops = 0;
    char *cur = st->buf, *line;
    while ((line = pm_next_line(&cur)) != NULL) {
        /* "  name: rx_bytes rx_packets rx_errs rx_drop fifo frame compressed
         *  multicast tx_bytes tx_packets tx_errs tx_drop ..." */
        char *colon = strrchr(line, ':');
        if (!colon)
            continue; /* the two header lines */
        *colon = '\0';
        char *nm = line;
        while (*nm == ' ')
            nm++;
        char *f[16];
        if (pm_split_fields(colon + 1, f, 16) < 12)
            continue;
        uint64_t v[12];
        int ok = 1;
        for (int i = 0; i < 12; i++)
            ok &= pm_parse_u64(f[i], &v[i]) == 0;
        if (!ok)
            continue;
        int k = strcmp(nm, "lo") == 0 ? LO : EXT;
        obr[k] |= __builtin_add_overflow(br[k], v[0], &br[k]);
        opr[k] |= __builtin_add_overflow(pr[k], v[1], &pr[k]);
        obs[k] |= __builtin_add_overflow(bs[k], v[8], &bs[k]);
        ops[k] |= __builtin_add_overflow(ps[k], v[9], &ps[k]);
        if (k == EXT) {
            oerrs |= __builtin_add_overflow(errs, v[2], &errs);
            oerrs |= __builtin_add_overflow(errs, v[10], &errs);
            odrops |= __builtin_add_overflow(drops, v[3], &drops);
            odrops |= __builtin_add_overflow(drops, v[11], &drops);
        }
    }
    int over = 0;
    for (int k = 0; k < 2; k++) {
        over |= obs[k] | obr[k] | ops[k] | opr[k];
        if (!obs[k])
            pm_sample_u64(s, st->bs[k], bs[k]);
        if (!obr[k])
            pm_sample_u64(s, st->br[k], br[k]);
        if (!ops[k])
            pm_sample_u64(s, st->ps[k], ps[k]);
        if (!opr[k])
            pm_sample_u64(s, st->pr[k], pr[k]);
    }
    over |= oerrs | odrops;
    if (!oerrs)
        pm_sample_u64(s, st->errs, errs);
    if (!odrops)
        pm_sample_u64(s, st->drops, drops);
    if (over && !st->warned_sum) {
        st->warned_sum = 1;
        pm_log(PM_LOG_WARN,
               "net: %s/net/dev: a sum over interfaces passes 2^64, which no "
               "counter can reach; that column not recorded in such samples (noted once)",
               ctx->proc_root);
    }
    return 0;
}

static void net_close(void *state)
{
    net_state *st = state;
    if (st)
        net_free(st);
}

const pm_source pm_source_net = {
    .name = "net",
    .open = net_open,
    .read = net_read,
    .close = net_close,
};
