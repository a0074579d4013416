/* Job identity from the batch system's environment. */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/sampler.h"

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* 0-based position of host among the distinct names of a node file (PBS
 * and OAR list one line per slot), or -1. */
static int nodefile_rank(const char *path, const char *host)
{
    char *buf = NULL;
    size_t len;
    if (pm_read_whole(path, 16u << 20, &buf, &len, NULL) != 0)
        return -1;
    int rank = -1, distinct = 0;
    char prev[256] = "";
    char *cur = buf, *line;
    size_t hl = strcspn(host, ".");
    while ((line = strsep(&cur, "\n")) != NULL) {
        line[strcspn(line, " \t\r")] = '\0';
        if (!*line || strcmp(line, prev) == 0)
            continue;
        snprintf(prev, sizeof prev, "%s", line);
        size_t ll = strcspn(line, ".");
        if (strcmp(line, host) == 0 || (ll == hl && strncmp(line, host, hl) == 0)) {
            rank = distinct;
            break;
        }
        distinct++;
    }
    free(buf);
    return rank;
}

void pm_job_detect(pm_profile_info *info)
{
    const char *v;
    int rank = -1;
    if ((v = env("SLURM_JOB_ID")) || (v = env("SLURM_JOBID"))) {
        snprintf(info->scheduler, sizeof info->scheduler, "slurm");
        snprintf(info->job_id, sizeof info->job_id, "%s", v);
        if ((v = env("SLURM_NODEID")))
            snprintf(info->node_rank, sizeof info->node_rank, "%s", v);
        else if ((v = env("SLURM_PROCID")))
            snprintf(info->node_rank, sizeof info->node_rank, "%s", v);
    } else if ((v = env("PBS_JOBID"))) {
        snprintf(info->scheduler, sizeof info->scheduler, "pbs");
        snprintf(info->job_id, sizeof info->job_id, "%s", v);
        const char *nf = env("PBS_NODEFILE_LOCAL");
        if (!nf)
            nf = env("PBS_NODEFILE");
        if (nf)
            rank = nodefile_rank(nf, info->host);
    } else if ((v = env("OAR_JOB_ID")) || (v = env("OAR_JOBID"))) {
        snprintf(info->scheduler, sizeof info->scheduler, "oar");
        snprintf(info->job_id, sizeof info->job_id, "%s", v);
        const char *nf = env("OAR_NODEFILE");
        if (!nf)
            nf = env("OAR_FILE_NODES");
        if (nf)
            rank = nodefile_rank(nf, info->host);
    } else {
        snprintf(info->scheduler, sizeof info->scheduler, "local");
        snprintf(info->job_id, sizeof info->job_id, "local");
    }
    if (rank >= 0)
        snprintf(info->node_rank, sizeof info->node_rank, "%d", rank);
    const char *user = env("SLURM_JOB_USER");
    if (!user)
        user = env("USER");
    if (!user) {
        struct passwd *pw = getpwuid(getuid());
        user = pw ? pw->pw_name : NULL;
    }
    snprintf(info->user, sizeof info->user, "%s", user ? user : "");
}

void pm_sanitize_name(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    if (cap == 0)
        return;
    for (; s && *s && n + 1 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        out[n++] = ok ? (char)c : '_';
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, cap, "unknown");
    else if (out[0] == '.')
        out[0] = '_';
}
