/* Input stage: collect files, read them by content (perfmon binary, JSON
 * Lines, SKA JSON) on worker threads, merge several files per host, and
 * build the hosts.  Semantics: docs/analysis.md, "Inputs". */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exchange.h"
#include "gpu.h"
#include "perfmon/input.h"
#include "read.h"
#include "runs.h"
#include "perfmon/clock.h"
#include "perfmon/buf.h"
#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/phase.h"
#include "perfmon/scanner.h"
#include "perfmon/ska.h"
#include "perfmon/strs.h"

#define MAX_INPUT_FILES 100000

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* --- collecting input files -------------------------------------------- */

static int collect_dir(const char *dir, char ***files, size_t *nfiles, pm_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return pm_error_sys(err, PM_ENOENT, errno, "%s: cannot open directory", dir);
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        if (pm_path_join(path, sizeof path, dir, e->d_name) != 0)
            continue;
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n >= MAX_INPUT_FILES) {
            rc = pm_error_set(err, PM_ELIMIT, "%s: more than %d files", dir, MAX_INPUT_FILES);
            break;
        }
        if ((rc = pm_strs_add(&names, &n, "%s", path))) {
            rc = pm_error_set(err, PM_ENOMEM, "out of memory");
            break;
        }
    }
    closedir(d);
    if (rc) {
        pm_strs_free(names, n);
        return rc;
    }
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n && !rc; i++)
        if (pm_strs_add(files, nfiles, "%s", names[i]))
            rc = pm_error_set(err, PM_ENOMEM, "out of memory");
    pm_strs_free(names, n);
    return rc;
}

/* SKA perfmon reads only the merged cpu_metrics.json of a directory, never
 * the per-host <jobid>_<host>.json files its samplers wrote before the
 * merge (seed 003, CreateDataFrame.go): beside a readable cpu_metrics.json
 * those are not read twice, and say so (-v). */
static int is_ska_host_file(const slot *sl)
{
    if (sl->rc || sl->ngot != 1 || sl->got[0]->format != PM_FMT_SKA)
        return 0;
    const char *b = strrchr(sl->path, '/');
    b = b ? b + 1 : sl->path;
    const char *us = strchr(b, '_');
    const char *host = pm_profile_host(sl->got[0]);
    size_t hl = strlen(host);
    return us && us > b && strlen(us + 1) == hl + 5 && strncmp(us + 1, host, hl) == 0 &&
           strcmp(us + 1 + hl, ".json") == 0;
}

static size_t dir_len(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? (size_t)(b - path) : 0;
}

static void skip_ska_host_files(slot *slots, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const slot *m = &slots[i];
        size_t dl = dir_len(m->path);
        if (m->rc || !m->ngot || m->got[0]->format != PM_FMT_SKA ||
            strcmp(m->path + dl + (dl || m->path[0] == '/'), "cpu_metrics.json") != 0)
            continue;
        for (size_t j = 0; j < n; j++) {
            slot *sl = &slots[j];
            if (j == i || sl->ignored || dir_len(sl->path) != dl ||
                strncmp(sl->path, m->path, dl) != 0 || !is_ska_host_file(sl))
                continue;
            if (asprintf(
                    &sl->ignored,
                    "%s: per-host SKA file not read: %s holds the merged data (as SKA perfmon, which reads only that)",
                    sl->path, m->path) < 0)
                sl->ignored = NULL;
            pm_profile_free(sl->got[0]);
            free(sl->got);
            free(sl->clocks);
            sl->got = NULL;
            sl->clocks = NULL;
            sl->ngot = 0;
        }
    }
}

typedef struct pref {
    pm_profile *p;
    pm_clock clock;
    int gpu;                /* split off a node's profile by pm_gpu_split */
    const char *incomplete; /* why it may be unfinished, or NULL */
} pref;

/* Nodes first, then GPUs; by name, then by first time. */
static int cmp_pref(const void *a, const void *b)
{
    const pref *x = a, *y = b;
    if (x->gpu != y->gpu)
        return x->gpu - y->gpu;
    int c = strcmp(pm_profile_host(x->p), pm_profile_host(y->p));
    if (c)
        return c;
    int64_t fx = pm_input_first_time(x->p), fy = pm_input_first_time(y->p);
    return fx < fy ? -1 : fx > fy;
}

static const char *format_name(int f)
{
    switch (f) {
    case PM_FMT_BIN: return "binary";
    case PM_FMT_JSONL: return "jsonl";
    case PM_FMT_SKA: return "ska";
    default: return "unknown";
    }
}

/* Give each GPU recorded in a node's profile a profile of its own (gpu.c),
 * appended to *prs with the node's clock. */
static int split_gpus(pref **prs, size_t *np, pm_error *err)
{
    size_t nodes = *np;
    for (size_t i = 0; i < nodes; i++) {
        pm_profile **g = NULL;
        size_t ng = 0;
        if (pm_gpu_split((*prs)[i].p, &g, &ng) != 0)
            return pm_error_set(err, PM_ENOMEM, "out of memory");
        pref *grown = ng ? pm_realloc_array(*prs, *np + ng, sizeof *grown) : *prs;
        if (!grown) {
            for (size_t k = 0; k < ng; k++)
                pm_profile_free(g[k]);
            free(g);
            return pm_error_set(err, PM_ENOMEM, "out of memory");
        }
        *prs = grown;
        for (size_t k = 0; k < ng; k++)
            (*prs)[(*np)++] = (pref){g[k], (*prs)[i].clock, 1, (*prs)[i].incomplete};
        free(g);
    }
    return 0;
}

/* Build in->hosts from the profiles (sorted by host, then first time). */
static int group_hosts(pm_inputs *in, pref *prs, size_t np, pm_error *err)
{
    in->hosts = calloc(np ? np : 1, sizeof *in->hosts);
    if (!in->hosts)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    qsort(prs, np, sizeof *prs, cmp_pref);
    size_t i = 0;
    while (i < np) {
        size_t j = i + 1;
        while (j < np && prs[j].gpu == prs[i].gpu &&
               strcmp(pm_profile_host(prs[j].p), pm_profile_host(prs[i].p)) == 0)
            j++;
        pm_host *h = &in->hosts[in->nhosts++];
        h->name = pm_strdup(pm_profile_host(prs[i].p));
        h->clock = prs[i].clock;
        h->gpu = prs[i].gpu;
        if (!h->name)
            return pm_error_set(err, PM_ENOMEM, "out of memory");
        snprintf(h->format, sizeof h->format, "%s", format_name(prs[i].p->format));
        for (size_t k = i; k < j; k++) {
            if (pm_strs_add(&h->files, &h->nfiles, "%s", prs[k].p->path))
                return pm_error_set(err, PM_ENOMEM, "out of memory");
            if (prs[k].p->format != prs[i].p->format)
                snprintf(h->format, sizeof h->format, "mixed");
            if (fabs(prs[k].clock.step_max_s) > fabs(h->clock.step_max_s))
                h->clock.step_max_s = prs[k].clock.step_max_s;
            /* "still running" says more than "no end record". */
            if (prs[k].incomplete && (!h->incomplete[0] || prs[k].incomplete[0] == 't'))
                snprintf(h->incomplete, sizeof h->incomplete, "%s", prs[k].incomplete);
        }
        if (j - i == 1) {
            h->prof = prs[i].p;
            prs[i].p = NULL;
        } else {
            pm_profile *tmp[j - i];
            for (size_t k = i; k < j; k++)
                tmp[k - i] = prs[k].p;
            int rc = pm_input_merge(tmp, j - i, &h->prof);
            if (rc)
                return pm_error_set(err, rc, "%s: cannot merge %zu profiles", h->name, j - i);
            for (size_t k = i; k < j; k++) {
                pm_profile_free(prs[k].p);
                prs[k].p = NULL;
            }
        }
        i = j;
    }
    return 0;
}

/* Scanner numbers its nodes; perfmon names its hosts and records each
 * one's rank in the job (SLURM_NODEID and the like).  A Scanner phase on
 * "node <n>" moves to the one host whose rank is n, so that its resource
 * use can be read during it; without such a host it stays on "node <n>". */
static int map_scanner_nodes(pm_inputs *in, pm_error *err)
{
    for (size_t i = 0; i < in->phases.n; i++) {
        pm_phase *p = &in->phases.v[i];
        if (!p->track[0] || strncmp(p->host, "node ", 5) != 0)
            continue; /* marks have no track */
        const char *rank = p->host + 5;
        const pm_host *match = NULL;
        for (size_t h = 0; h < in->nhosts; h++)
            if (strcmp(in->hosts[h].prof->info.node_rank, rank) == 0) {
                if (match) { /* two hosts of one rank: no mapping */
                    match = NULL;
                    break;
                }
                match = &in->hosts[h];
            }
        if (!match)
            continue;
        char *name = pm_strdup(match->name);
        if (!name)
            return pm_error_set(err, PM_ENOMEM, "out of memory");
        free(p->host);
        p->host = name;
    }
    return 0;
}

/* The end of the inputs' exchange under a split: with --stream, the
 * hosts' exchange follows (split_stream.c), and the status waits for it. */
static int split_end(const pm_input_opts *opts, int rc, pm_error *err)
{
    if (opts->stream)
        return pm_split_survey_end(opts->split, rc, err);
    return pm_split_finish(opts->split, rc, err);
}

/* The files of paths: each directory's regular files (collect_dir), each
 * file as given.  0 or a PM_E* code (err says which path). */
static int collect_inputs(const char *const *paths, size_t npaths, char ***files, size_t *nfiles,
                          pm_error *err)
{
    for (size_t i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0)
            return pm_error_sys(err, PM_ENOENT, errno, "%s", paths[i]);
        if (S_ISDIR(st.st_mode)) {
            size_t before = *nfiles;
            int rc = collect_dir(paths[i], files, nfiles, err);
            if (rc)
                return rc;
            if (*nfiles == before)
                return pm_error_set(err, PM_ENOENT, "%s: directory holds no files", paths[i]);
        } else if (pm_strs_add(files, nfiles, "%s", paths[i])) {
            return pm_error_set(err, PM_ENOMEM, "out of memory");
        }
    }
    return 0;
}

/* Read files[0..nfiles) (on the worker threads, or this rank's share
 * under mpirun: a rank > 0 returns once it has sent it) into entries
 * *es[*ne], in file order, with the files' warnings and notes in a, their
 * phases paired into in->phases; *nevfiles counts the events files.  0 or a
 * PM_E* code; the entries made are the caller's, also on failure. */
static int read_entries(pm_inputs *in, const pm_input_opts *opts, char **files, size_t nfiles,
                        ent **es, size_t *ne, size_t *nevfiles, pm_error *err)
{
    int rc = 0;
    slot *slots = calloc(nfiles ? nfiles : 1, sizeof *slots);
    if (!slots)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    pm_read_hint hint;
    pm_input_survey_hint(in, &hint);
    for (size_t i = 0; i < nfiles; i++) {
        slots[i].path = files[i];
        slots[i].survey = opts->stream && in->read_first.want;
    }
    /* Under mpirun each rank reads a share (split.c); a rank > 0 has
     * sent it to rank 0 and is done. */
    if (opts->split && opts->split->size > 1) {
        rc = pm_split_read(opts->split, slots, nfiles, opts, in->read_first.want ? &hint : NULL,
                           err);
        if (opts->split->rank) {
            free(slots);
            return rc;
        }
    } else {
        pm_input_read_slots(slots, nfiles, opts, in->read_first.want ? &hint : NULL);
    }
    skip_ska_host_files(slots, nfiles);
    /* Merge in file order; on the first fatal problem keep freeing. */
    pm_event_list events = {NULL, 0, 0};
    for (size_t i = 0; i < nfiles; i++) {
        slot *sl = &slots[i];
        if (sl->ignored) {
            /* Bad lines of an events file are a warning, not a note. */
            if (sl->events.n)
                (void)pm_strs_add(&in->warnings, &in->nwarnings, "%s", sl->ignored);
            else
                (void)pm_strs_add(&in->ignored, &in->nignored, "%s", sl->ignored);
        }
        free(sl->ignored);
        *nevfiles += sl->events.n > 0;
        if (sl->events.n && !rc && pm_input_events_take(&events, &sl->events) != 0)
            rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        pm_event_list_free(&sl->events);
        if (sl->phases.scanner_files && !rc && pm_phase_set_take(&in->phases, &sl->phases))
            rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        pm_phase_set_free(&sl->phases);
        if (!rc && sl->rc && (sl->rc == PM_ENOMEM || opts->strict)) {
            *err = sl->err;
            rc = sl->rc;
        } else if (sl->rc) {
            (void)pm_strs_add(&in->warnings, &in->nwarnings, "%s", sl->err.msg);
        }
        for (size_t k = 0; k < sl->ngot; k++) {
            pm_profile *p = sl->got[k];
            for (size_t w = 0; w < p->nwarnings && !rc; w++)
                (void)pm_strs_add(&in->warnings, &in->nwarnings, "%s", p->warnings[w]);
            ent *grown = rc ? NULL : pm_realloc_array(*es, *ne + 1, sizeof *grown);
            if (!grown) {
                pm_profile_free(p);
                if (!rc)
                    rc = pm_error_set(err, PM_ENOMEM, "out of memory");
                continue;
            }
            *es = grown;
            (*es)[(*ne)++] = (ent){.p = p,
                                   .clock = sl->clocks[k],
                                   .size = sl->size,
                                   .nfull = sl->nfull ? sl->nfull[k] : p->n};
        }
        free(sl->got);
        free(sl->clocks);
        free(sl->nfull);
    }
    free(slots);
    if (!rc && events.n) {
        rc = pm_phases_pair(&events, &in->phases, err);
        for (size_t i = 0; i < in->phases.nproblems && !rc; i++)
            (void)pm_strs_add(&in->warnings, &in->nwarnings, "%s", in->phases.problems[i]);
    }
    pm_event_list_free(&events);
    return rc;
}

/* The entries the run selection kept, with their GPUs split off, grouped
 * into in->hosts; the entries are taken (*es freed, *ne 0).  0 or a PM_E*
 * code. */
static int hosts_from_entries(pm_inputs *in, ent **es, size_t *ne, pm_error *err)
{
    pref *prs = calloc(*ne ? *ne : 1, sizeof *prs);
    if (!prs)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    size_t np = 0;
    for (size_t i = 0; i < *ne; i++) {
        if ((*es)[i].drop) {
            pm_profile_free((*es)[i].p);
            continue;
        }
        prs[np++] = (pref){(*es)[i].p, (*es)[i].clock, 0, pm_input_incomplete_reason(&(*es)[i])};
    }
    free(*es);
    *es = NULL;
    *ne = 0;
    int rc = split_gpus(&prs, &np, err);
    if (rc == 0)
        rc = group_hosts(in, prs, np, err);
    for (size_t i = 0; i < np; i++)
        pm_profile_free(prs[i].p);
    free(prs);
    return rc;
}

int pm_input_load(pm_inputs *in, const pm_input_opts *opts, const char *const *paths, size_t npaths,
                  pm_error *err)
{
    char **files = NULL, **details = NULL;
    size_t nfiles = 0, ndetails = 0, nevfiles = 0;
    ent *es = NULL;
    size_t ne = 0;
    int rc = 0;
    if ((rc = collect_inputs(paths, npaths, &files, &nfiles, err)))
        goto fail;
    rc = read_entries(in, opts, files, nfiles, &es, &ne, &nevfiles, err);
    if (rc || (opts->split && opts->split->size > 1 && opts->split->rank))
        goto fail;
    if (ne == 0 && in->phases.n == 0 && !in->phases.scanner_files) {
        /* Say why, for the first file at least (-v and the warnings list
         * every one). */
        const char *why = in->nwarnings ? in->warnings[0] : in->nignored ? in->ignored[0] : "";
        rc = pm_error_set(err, PM_ENOENT, "no readable profile among %zu file%s%s%s", nfiles,
                          nfiles == 1 ? "" : "s", *why ? ": " : "", why);
        goto fail;
    }
    /* Scanner profiles alone are an analysis (of phases); marks alone are
     * not: they say when, not what was used. */
    if (ne == 0 && !in->phases.scanner_files) {
        rc = pm_error_set(err, PM_EEMPTY,
                          "no resource profile among %zu file%s: found only %zu phase%s marked in "
                          "%zu events file%s",
                          nfiles, nfiles == 1 ? "" : "s", in->phases.n,
                          in->phases.n == 1 ? "" : "s", nevfiles, nevfiles == 1 ? "" : "s");
        goto fail;
    }
    for (size_t i = 0; i < ne; i++) {
        pm_profile *p = es[i].p;
        if (!p->info.host[0]) {
            /* No host recorded: the file name stands in. */
            const char *b = strrchr(p->path, '/');
            snprintf(p->info.host, sizeof p->info.host, "%s", b ? b + 1 : p->path);
        }
        pm_input_span(p, &es[i].t0, &es[i].t1);
    }
    if ((rc = pm_input_select_run(in, opts, es, ne, &details, &ndetails, err)))
        goto fail;
    if ((rc = hosts_from_entries(in, &es, &ne, err)))
        goto fail;
    for (size_t h = 0; h < in->nhosts; h++)
        if (in->hosts[h].incomplete[0] && !in->hosts[h].gpu)
            (void)pm_strs_add(&in->warnings, &in->nwarnings, "%s: incomplete: %s (%s)",
                              in->hosts[h].name, in->hosts[h].incomplete, in->hosts[h].files[0]);
    if ((rc = map_scanner_nodes(in, err)))
        goto fail;
    if (opts->split && opts->split->size > 1 && (rc = split_end(opts, 0, err)))
        goto fail;
    pm_strs_free(files, nfiles);
    return 0;
fail:
    /* Every rank ends its part of the exchange, also on failure. */
    if (opts->split && opts->split->size > 1)
        rc = split_end(opts, rc, err);
    if (opts->input_msg) {
        for (size_t i = 0; i < ndetails; i++)
            opts->input_msg(PM_MSG_DETAIL, details[i], opts->input_msg_user);
        for (size_t i = 0; i < in->nwarnings; i++)
            opts->input_msg(PM_MSG_WARNING, in->warnings[i], opts->input_msg_user);
        for (size_t i = 0; i < in->nignored; i++)
            opts->input_msg(PM_MSG_IGNORED, in->ignored[i], opts->input_msg_user);
    }
    for (size_t i = 0; i < ne; i++)
        pm_profile_free(es[i].p);
    free(es);
    pm_strs_free(details, ndetails);
    pm_strs_free(files, nfiles);
    if (opts->split && opts->split->size > 1 && opts->split->rank)
        return rc; /* a rank > 0 ends here, also when all went well */
    return rc ? rc : PM_EFORMAT;
}

int pm_input_host_load(const pm_inputs *in, size_t h, int values, pm_profile **out, pm_error *err)
{
    if (in->remote)
        return pm_remote_fetch(in, h, values, out, err);
    return pm_input_host_read(in, h, values, out, err);
}

void pm_input_host_drop(const pm_inputs *in, size_t h)
{
    if (in->remote)
        pm_remote_drop(in, h);
}

void pm_inputs_free(pm_inputs *in)
{
    for (size_t h = 0; h < in->nhosts; h++) {
        pm_host *ho = &in->hosts[h];
        free(ho->name);
        pm_strs_free(ho->files, ho->nfiles);
        pm_profile_free(ho->prof);
    }
    free(in->hosts);
    pm_strs_free(in->warnings, in->nwarnings);
    pm_strs_free(in->ignored, in->nignored);
    pm_phase_set_free(&in->phases);
    memset(in, 0, sizeof *in);
}
