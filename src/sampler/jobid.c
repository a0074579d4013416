/* Job identity from the batch system's environment. */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/sampler.h"
#include "perfmon/vec.h"

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 0-based position of host among the distinct names of a node file, in
 * order of first appearance, or -1.  PBS and OAR list one line per slot,
 * and a host's lines need not be adjacent (round-robin placement), so the
 * rank is the number of distinct names before the host's first line. */
static int nodefile_rank(const char *path, const char *host)
{
    char *buf = NULL;
    size_t len;
    if (pm_read_whole(path, 16u << 20, &buf, &len, NULL) != 0)
        return -1;
    char **before = NULL; /* the names before host's first line */
    size_t n = 0, cap = 0;
    int found = 0;
    const char *prev = "";
    char *cur = buf, *line;
    size_t hl = strcspn(host, ".");
    while ((line = strsep(&cur, "\n")) != NULL) {
        line[strcspn(line, " \t\r")] = '\0';
        if (!*line || strcmp(line, prev) == 0)
            continue; /* the common case of a host's slots in a row */
        prev = line;
        size_t ll = strcspn(line, ".");
        if (strcmp(line, host) == 0 || (ll == hl && strncmp(line, host, hl) == 0)) {
            found = 1;
            break;
        }
        if (PM_VEC_RESERVE(before, cap, n + 1, 64) != 0) {
            found = 0;
            break;
        }
        before[n++] = line;
    }
    int rank = -1;
    if (found) {
        if (n) /* before is NULL when host is on the first line */
            qsort(before, n, sizeof *before, cmp_str);
        rank = 0;
        for (size_t i = 0; i < n; i++)
            if (i == 0 || strcmp(before[i], before[i - 1]) != 0)
                rank++;
    }
    free(before);
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
