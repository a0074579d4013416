/* Hardware metadata, recorded once per profile: CPU (from /proc/cpuinfo
 * and sysfs topology/caches), memory, NUMA nodes, kernel and OS. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/hwinfo.h"
#include "perfmon/parse.h"
#include "perfmon/source.h"

#define MAX_IDS 4096

typedef struct cpuinfo {
    char vendor[64], model_name[160], flags_avx[64];
    int family, model, stepping;
    double mhz;
    unsigned threads;
    unsigned nsock, ncore;
    uint32_t sock_ids[MAX_IDS];
    uint64_t core_keys[MAX_IDS];
} cpuinfo;

/* Value of a "key\t: value" line, trimmed, into out. */
static int line_value(const char *line, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key);
    if (strncmp(line, key, kl) != 0)
        return 0;
    const char *p = line + kl;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != ':')
        return 0;
    p++;
    while (*p == ' ')
        p++;
    snprintf(out, cap, "%s", p);
    return 1;
}

/* Whether the blank-separated list holds word as a whole entry. */
static int has_word(const char *list, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p++) {
        int starts = p == list || p[-1] == ' ' || p[-1] == '\t';
        int ends = p[wl] == '\0' || p[wl] == ' ' || p[wl] == '\t' || p[wl] == '\n';
        if (starts && ends)
            return 1;
    }
    return 0;
}

static void add_unique32(uint32_t *ids, unsigned *n, uint32_t v)
{
    for (unsigned i = 0; i < *n; i++)
        if (ids[i] == v)
            return;
    if (*n < MAX_IDS)
        ids[(*n)++] = v;
}

static void add_unique64(uint64_t *ids, unsigned *n, uint64_t v)
{
    for (unsigned i = 0; i < *n; i++)
        if (ids[i] == v)
            return;
    if (*n < MAX_IDS)
        ids[(*n)++] = v;
}

static void parse_cpuinfo(const pm_sctx *ctx, cpuinfo *ci)
{
    size_t cap = 1 << 16;
    char *buf = NULL;
    for (;;) {
        char *nb = realloc(buf, cap);
        if (!nb) {
            free(buf);
            return;
        }
        buf = nb;
        int full;
        if (pm_read_small(ctx->proc_fd, "cpuinfo", buf, cap, &full) <= 0) {
            free(buf);
            return;
        }
        if (!full || cap >= (16u << 20))
            break;
        cap *= 2;
    }
    char *cur = buf, *line, val[256];
    uint64_t phys = 0, core = 0;
    while ((line = pm_next_line(&cur)) != NULL) {
        uint64_t v;
        if (line_value(line, "processor", val, sizeof val)) {
            ci->threads++;
        } else if (line_value(line, "vendor_id", val, sizeof val) && !ci->vendor[0]) {
            snprintf(ci->vendor, sizeof ci->vendor, "%s", val);
        } else if (line_value(line, "model name", val, sizeof val) && !ci->model_name[0]) {
            snprintf(ci->model_name, sizeof ci->model_name, "%s", val);
        } else if (line_value(line, "cpu family", val, sizeof val)) {
            if (pm_parse_u64(val, &v) == 0 && v < 4096)
                ci->family = (int)v;
        } else if (line_value(line, "model", val, sizeof val)) {
            if (pm_parse_u64(val, &v) == 0 && v < 4096)
                ci->model = (int)v;
        } else if (line_value(line, "stepping", val, sizeof val)) {
            if (pm_parse_u64(val, &v) == 0 && v < 4096)
                ci->stepping = (int)v;
        } else if (line_value(line, "cpu MHz", val, sizeof val)) {
            double d;
            if (pm_parse_double(val, &d) == 0 && d > ci->mhz)
                ci->mhz = d;
        } else if (line_value(line, "physical id", val, sizeof val)) {
            if (pm_parse_u64(val, &phys) == 0 && phys < UINT32_MAX)
                add_unique32(ci->sock_ids, &ci->nsock, (uint32_t)phys);
        } else if (line_value(line, "core id", val, sizeof val)) {
            if (pm_parse_u64(val, &core) == 0 && core < UINT32_MAX)
                add_unique64(ci->core_keys, &ci->ncore, phys << 32 | core);
        } else if (line_value(line, "flags", val, sizeof val) && !ci->flags_avx[0]) {
            /* The widest vector extension, which decides FLOP rates.  The
             * whole line, not val: a flags line is longer than val. */
            const char *fl = strchr(line, ':') + 1;
            const char *w = has_word(fl, "avx512f") ? "avx512"
                            : has_word(fl, "avx2")  ? "avx2"
                            : has_word(fl, "avx")   ? "avx"
                                                    : "sse";
            snprintf(ci->flags_avx, sizeof ci->flags_avx, "%s", w);
        }
    }
    free(buf);
}

/* Microarchitecture from vendor, family and model (Intel SDM vol. 4
 * table 2-1; AMD family 17h/19h/1Ah).  Unknown parts are "unknown". */
static const char *microarch(const char *vendor, int family, int model)
{
    static const struct {
        const char *vendor;
        int family, model;
        const char *name;
    } table[] = {
        {"GenuineIntel", 6, 0x3F, "haswell"},        {"GenuineIntel", 6, 0x3C, "haswell"},
        {"GenuineIntel", 6, 0x4F, "broadwell"},      {"GenuineIntel", 6, 0x56, "broadwell"},
        {"GenuineIntel", 6, 0x55, "skylake-sp"},     {"GenuineIntel", 6, 0x5E, "skylake"},
        {"GenuineIntel", 6, 0x4E, "skylake"},        {"GenuineIntel", 6, 0x6A, "icelake-sp"},
        {"GenuineIntel", 6, 0x6C, "icelake-sp"},     {"GenuineIntel", 6, 0x7E, "icelake"},
        {"GenuineIntel", 6, 0x8F, "sapphirerapids"}, {"GenuineIntel", 6, 0xCF, "emeraldrapids"},
        {"GenuineIntel", 6, 0xAD, "graniterapids"},  {"GenuineIntel", 6, 0x2D, "sandybridge-ep"},
        {"GenuineIntel", 6, 0x3E, "ivybridge-ep"},   {"GenuineIntel", 6, 0x8C, "tigerlake"},
        {"GenuineIntel", 6, 0x97, "alderlake"},      {"GenuineIntel", 6, 0xB7, "raptorlake"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(vendor, table[i].vendor) == 0 && family == table[i].family &&
            model == table[i].model)
            return table[i].name;
    if (strcmp(vendor, "AuthenticAMD") == 0) {
        if (family == 0x17)
            return model >= 0x30 ? "zen2" : "zen";
        if (family == 0x19)
            return (model >= 0x10 && model <= 0x1F) || (model >= 0x60 && model <= 0x7F) ||
                           (model >= 0xA0 && model <= 0xAF)
                       ? "zen4"
                       : "zen3";
        if (family == 0x1A)
            return "zen5";
    }
    return "unknown";
}

static void caches(const pm_sctx *ctx, pm_buf *j)
{
    pm_buf_puts(j, "\"caches\":[");
    int first = 1;
    for (int i = 0; i < 8; i++) {
        char path[96], lvl[16], type[32], size[32];
        snprintf(path, sizeof path, "devices/system/cpu/cpu0/cache/index%d/level", i);
        if (pm_read_small(ctx->sys_fd, path, lvl, sizeof lvl, NULL) <= 0)
            continue;
        snprintf(path, sizeof path, "devices/system/cpu/cpu0/cache/index%d/type", i);
        if (pm_read_small(ctx->sys_fd, path, type, sizeof type, NULL) <= 0)
            continue;
        snprintf(path, sizeof path, "devices/system/cpu/cpu0/cache/index%d/size", i);
        if (pm_read_small(ctx->sys_fd, path, size, sizeof size, NULL) <= 0)
            continue;
        lvl[strcspn(lvl, "\n")] = type[strcspn(type, "\n")] = size[strcspn(size, "\n")] = '\0';
        uint64_t l;
        if (pm_parse_u64(lvl, &l) != 0)
            continue;
        pm_buf_printf(j, "%s{\"level\":%llu,\"type\":", first ? "" : ",", (unsigned long long)l);
        pm_buf_json_str(j, type);
        pm_buf_puts(j, ",\"size\":");
        pm_buf_json_str(j, size);
        pm_buf_puts(j, "}");
        first = 0;
    }
    pm_buf_puts(j, "]");
}

static unsigned numa_nodes(const pm_sctx *ctx)
{
    int fd = openat(ctx->sys_fd, "devices/system/node", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    unsigned n = 0;
    struct dirent *e;
    uint64_t v;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "node", 4) == 0 && pm_parse_u64(e->d_name + 4, &v) == 0)
            n++;
    closedir(d);
    return n;
}

static void os_release(pm_buf *j)
{
    char buf[4096], val[256] = "";
    if (pm_read_small(AT_FDCWD, "/etc/os-release", buf, sizeof buf, NULL) > 0) {
        char *cur = buf, *line;
        while ((line = pm_next_line(&cur)) != NULL)
            if (strncmp(line, "PRETTY_NAME=", 12) == 0) {
                const char *v = line + 12;
                size_t n = strlen(v);
                if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
                    v++;
                    n -= 2;
                }
                snprintf(val, sizeof val, "%.*s", (int)n, v);
            }
    }
    pm_buf_puts(j, ",\"os\":");
    pm_buf_json_str(j, val);
}

char *pm_hwinfo_json(const pm_sctx *ctx, const char *hostname)
{
    cpuinfo *ci = calloc(1, sizeof *ci);
    if (!ci)
        return NULL;
    parse_cpuinfo(ctx, ci);
    pm_buf j;
    pm_buf_init(&j);
    pm_buf_puts(&j, "{\"hostname\":");
    pm_buf_json_str(&j, hostname);
    struct utsname u;
    char kernel[256] = "";
    if (pm_read_small(ctx->proc_fd, "sys/kernel/osrelease", kernel, sizeof kernel, NULL) > 0)
        kernel[strcspn(kernel, "\n")] = '\0';
    else if (uname(&u) == 0)
        snprintf(kernel, sizeof kernel, "%s", u.release);
    pm_buf_puts(&j, ",\"kernel\":");
    pm_buf_json_str(&j, kernel);
    if (uname(&u) == 0) {
        pm_buf_puts(&j, ",\"machine\":");
        pm_buf_json_str(&j, u.machine);
    }
    os_release(&j);
    pm_buf_puts(&j, ",\"cpu\":{\"vendor\":");
    pm_buf_json_str(&j, ci->vendor);
    pm_buf_puts(&j, ",\"model_name\":");
    pm_buf_json_str(&j, ci->model_name);
    pm_buf_printf(&j,
                  ",\"family\":%d,\"model\":%d,\"stepping\":%d,\"microarchitecture\":", ci->family,
                  ci->model, ci->stepping);
    pm_buf_json_str(&j, microarch(ci->vendor, ci->family, ci->model));
    pm_buf_puts(&j, ",\"vector\":");
    pm_buf_json_str(&j, ci->flags_avx);
    unsigned sockets = ci->nsock ? ci->nsock : 1;
    unsigned cores = ci->ncore ? ci->ncore : ci->threads;
    pm_buf_printf(&j, ",\"sockets\":%u,\"cores\":%u,\"threads\":%u,\"mhz\":", sockets, cores,
                  ci->threads);
    pm_buf_json_num(&j, ci->mhz);
    char mf[64];
    uint64_t khz;
    if (pm_read_small(ctx->sys_fd, "devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", mf,
                      sizeof mf, NULL) > 0) {
        mf[strcspn(mf, "\n")] = '\0';
        if (pm_parse_u64(mf, &khz) == 0)
            pm_buf_printf(&j, ",\"max_mhz\":%llu", (unsigned long long)(khz / 1000));
    }
    pm_buf_puts(&j, ",");
    caches(ctx, &j);
    pm_buf_puts(&j, "}");
    char mem[4096];
    uint64_t total;
    if (pm_read_small(ctx->proc_fd, "meminfo", mem, sizeof mem, NULL) > 0 &&
        pm_kv_u64(mem, "MemTotal", &total) == 0 && total <= (1ull << 50)) /* as src_memory.c */
        pm_buf_printf(&j, ",\"memory\":{\"total_bytes\":%llu}", (unsigned long long)total * 1024);
    pm_buf_printf(&j, ",\"numa_nodes\":%u,\"clk_tck\":%ld,\"page_size\":%ld", numa_nodes(ctx),
                  ctx->clk_tck, ctx->page_size);
    free(ci);
    /* The caller appends source descriptions and closes the object. */
    if (j.oom) {
        pm_buf_free(&j);
        return NULL;
    }
    return pm_buf_take(&j);
}

int pm_hwinfo_cpu_ident(const pm_sctx *ctx, pm_cpu_ident *id)
{
    memset(id, 0, sizeof *id);
    id->microarch = "unknown";
    cpuinfo *ci = calloc(1, sizeof *ci);
    if (!ci)
        return PM_ENOMEM;
    parse_cpuinfo(ctx, ci);
    snprintf(id->vendor, sizeof id->vendor, "%s", ci->vendor);
    id->family = ci->family;
    id->model = ci->model;
    id->microarch = microarch(ci->vendor, ci->family, ci->model);
    free(ci);
    return id->vendor[0] ? 0 : PM_ENOENT;
}
