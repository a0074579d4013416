/* RAPL source: energy counters of the powercap framework,
 * /sys/class/powercap/intel-rapl:<pkg>[:<sub>]/energy_uj
 * (Documentation/power/powercap/powercap.rst).  AMD Zen exposes the same
 * interface.  energy_uj counts microjoules and wraps to 0 after
 * max_energy_range_uj; the column's wrap modulus records that range so
 * the analyzer can unwrap exactly.  Domain names follow SKA perfmon:
 * package-0, core-0, uncore-0, dram-0, psys.
 * Since Linux 5.10 energy_uj is readable by root only; then the section
 * is absent and the metadata says why.
 * A reading above max_energy_range_uj cannot be real (the counter wraps
 * there): it is not recorded, and noted once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/log.h"
#include "perfmon/parse.h"
#include "perfmon/source.h"

#define MAX_DOMAINS 64

typedef struct rapl_domain {
    char zone[48]; /* intel-rapl:0:1 */
    char name[48]; /* dram-0 */
    int fd;        /* zone directory */
    int efd;       /* energy_uj, kept open */
    int col;
    uint64_t range;
} rapl_domain;

typedef struct rapl_state {
    rapl_domain d[MAX_DOMAINS];
    size_t n;
    char reason[160];
    int warned;
} rapl_state;

static int cmp_zone(const void *a, const void *b)
{
    return strcmp(((const rapl_domain *)a)->zone, ((const rapl_domain *)b)->zone);
}

static void rapl_close(void *state)
{
    rapl_state *st = state;
    if (!st)
        return;
    for (size_t i = 0; i < st->n; i++)
        if (st->d[i].fd >= 0)
            close(st->d[i].fd);
    for (size_t i = 0; i < st->n; i++)
        pm_close_kept(&st->d[i].efd);
    free(st);
}

static int read_u64_at(int dfd, const char *file, uint64_t *v)
{
    char buf[64];
    ssize_t n = pm_read_small(dfd, file, buf, sizeof buf, NULL);
    if (n <= 0)
        return n < 0 ? (int)n : -EINVAL;
    buf[strcspn(buf, "\n")] = '\0';
    return pm_parse_u64(buf, v) == 0 ? 0 : -EINVAL;
}

static int rapl_open(const pm_sctx *ctx, pm_schema *s, void **state, pm_error *err)
{
    int fd = openat(ctx->sys_fd, "class/powercap", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        if (fd >= 0)
            close(fd);
        return pm_error_set(err, PM_ENOENT, "no RAPL interface (%s/class/powercap absent)",
                            ctx->sys_root);
    }
    rapl_state *st = calloc(1, sizeof *st);
    if (!st) {
        closedir(dir);
        return pm_error_set(err, PM_ENOMEM, "rapl: out of memory");
    }
    struct dirent *e;
    int denied = 0;
    while ((e = readdir(dir)) != NULL && st->n < MAX_DOMAINS) {
        if (strncmp(e->d_name, "intel-rapl:", 11) != 0 || strlen(e->d_name) >= 48)
            continue;
        int zfd = openat(dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (zfd < 0)
            continue;
        rapl_domain *d = &st->d[st->n];
        char nm[64];
        uint64_t energy, range;
        int rc = read_u64_at(zfd, "energy_uj", &energy);
        if (rc == -EACCES || rc == -EPERM)
            denied = 1;
        if (rc != 0 || pm_read_small(zfd, "name", nm, sizeof nm, NULL) <= 0 ||
            read_u64_at(zfd, "max_energy_range_uj", &range) != 0) {
            close(zfd);
            continue;
        }
        nm[strcspn(nm, "\n")] = '\0';
        strcpy(d->zone, e->d_name);
        /* intel-rapl:<pkg> is a package; intel-rapl:<pkg>:<sub> a
         * subdomain named core/uncore/dram; psys has no package number. */
        const char *pkg = e->d_name + 11;
        size_t plen = strcspn(pkg, ":");
        if (strncmp(nm, "package-", 8) == 0 || strcmp(nm, "psys") == 0)
            snprintf(d->name, sizeof d->name, "%.40s", nm);
        else
            snprintf(d->name, sizeof d->name, "%.20s-%.*s", nm, (int)(plen < 8 ? plen : 8), pkg);
        d->fd = zfd;
        d->efd = -1;
        d->range = range;
        st->n++;
    }
    closedir(dir);
    if (st->n == 0) {
        rapl_close(st);
        return pm_error_set(err, PM_ENOENT,
                            denied ? "RAPL energy counters are not readable "
                                     "(root only since Linux 5.10)"
                                   : "no RAPL domains found");
    }
    qsort(st->d, st->n, sizeof st->d[0], cmp_zone);
    for (size_t i = 0; i < st->n; i++) {
        char col[96];
        snprintf(col, sizeof col, "rapl.%s", st->d[i].name);
        /* A second domain with the same name (unusual firmware) gets the
         * zone suffix rather than being dropped. */
        st->d[i].col = pm_schema_add(s, col, "uJ", PM_COUNTER, PM_U64, "rapl", st->d[i].range + 1);
        if (st->d[i].col == PM_EUSAGE) {
            snprintf(col, sizeof col, "rapl.%s", st->d[i].zone);
            st->d[i].col =
                pm_schema_add(s, col, "uJ", PM_COUNTER, PM_U64, "rapl", st->d[i].range + 1);
        }
    }
    *state = st;
    return 0;
}

static int rapl_read(void *state, const pm_sctx *ctx, pm_sample *s)
{
    rapl_state *st = state;
    for (size_t i = 0; i < st->n; i++) {
        char buf[64];
        uint64_t v;
        if (pm_pread_kept(&st->d[i].efd, st->d[i].fd, "energy_uj", buf, sizeof buf, NULL) <= 0)
            continue;
        buf[strcspn(buf, "\n")] = '\0';
        if (pm_parse_u64(buf, &v) != 0)
            continue;
        if (st->d[i].range && v > st->d[i].range) {
            if (!st->warned) {
                st->warned = 1;
                pm_log(PM_LOG_WARN,
                       "rapl: %s/class/powercap/%s/energy_uj: %llu is above its "
                       "max_energy_range_uj %llu and cannot be real; not recorded (noted once)",
                       ctx->sys_root, st->d[i].zone, (unsigned long long)v,
                       (unsigned long long)st->d[i].range);
            }
            continue;
        }
        pm_sample_u64(s, st->d[i].col, v);
    }
    return 0;
}

static void rapl_describe(void *state, pm_buf *j)
{
    rapl_state *st = state;
    pm_buf_puts(j, "\"rapl_domains\":[");
    for (size_t i = 0; i < st->n; i++) {
        pm_buf_puts(j, i ? ",{\"name\":" : "{\"name\":");
        pm_buf_json_str(j, st->d[i].name);
        pm_buf_puts(j, ",\"zone\":");
        pm_buf_json_str(j, st->d[i].zone);
        pm_buf_printf(j, ",\"max_energy_range_uj\":%llu}", (unsigned long long)st->d[i].range);
    }
    pm_buf_puts(j, "]");
}

const pm_source pm_source_rapl = {
    .name = "rapl",
    .open = rapl_open,
    .read = rapl_read,
    .describe = rapl_describe,
    .close = rapl_close,
};
