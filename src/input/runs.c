/* Jobs and runs: which of the profiles read form the run analysed
 * (--job, --run), the refusal of several runs or of one host sampled
 * twice at once, and why a run may be incomplete.
 * Semantics: docs/analysis.md, "Jobs and runs". */
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

#include "runs.h"
#include "perfmon/buf.h"
#include "perfmon/clock.h"
#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/ska.h"
#include "perfmon/strs.h"

typedef struct run_grp {
    const char *job; /* borrowed from a profile */
    double t0, t1;
    size_t num; /* 1-based, in order of start time */
    int sel;
} run_grp;

void pm_input_span(const pm_profile *p, double *t0, double *t1)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < p->n; i++) {
        int64_t t = p->t_wall_ns[i];
        if (t == INT64_MIN)
            continue;
        if (t < lo)
            lo = t;
        if (t > hi)
            hi = t;
    }
    if (lo > hi)
        lo = hi = p->info.start_wall_ns;
    *t0 = (double)lo * 1e-9;
    *t1 = (double)hi * 1e-9;
}

/* Two files of one sampler run (-f both, or a copy): the run id, or for
 * files written before it, the sampler's pid and start time. */
static int same_run(const pm_profile *x, const pm_profile *y)
{
    if (x->format == PM_FMT_SKA || y->format == PM_FMT_SKA ||
        strcmp(pm_profile_host(x), pm_profile_host(y)) != 0 ||
        strcmp(x->info.job_id, y->info.job_id) != 0)
        return 0;
    if (x->info.run_id[0] || y->info.run_id[0])
        return strcmp(x->info.run_id, y->info.run_id) == 0;
    /* The JSON form keeps microseconds, read back through a double. */
    int64_t d = x->info.start_wall_ns - y->info.start_wall_ns;
    return x->info.sampler_pid > 0 && x->info.sampler_pid == y->info.sampler_pid && d > -2000 &&
           d < 2000;
}

/* Is x the copy to read rather than y?  The binary form (exact times and
 * values), then the one with more samples, then the first. */
static int better_copy(const ent *x, const ent *y)
{
    int bx = x->p->format == PM_FMT_BIN, by = y->p->format == PM_FMT_BIN;
    if (bx != by)
        return bx;
    return x->nfull > y->nfull;
}

static int cmp_ent_host(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    int c = strcmp(pm_profile_host(x->p), pm_profile_host(y->p));
    if (c)
        return c;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static int cmp_ent_job(const void *a, const void *b)
{
    const ent *x = *(const ent *const *)a, *y = *(const ent *const *)b;
    int c = strcmp(x->p->info.job_id, y->p->info.job_id);
    if (c)
        return c;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static void fmt_utc(char *out, size_t cap, double t)
{
    if (pm_utc_iso(t, out, cap) < 0)
        snprintf(out, cap, "%.0f", t);
}

static const char *job_name(const char *job)
{
    return *job ? job : "(none)";
}

/* Short host names compare equal ("n01" and "n01.cluster"). */
static int same_host_name(const char *a, const char *b)
{
    size_t la = strcspn(a, "."), lb = strcspn(b, ".");
    return la == lb && strncmp(a, b, la) == 0;
}

/* Is the sampler that wrote this profile still running here?  Its host is
 * this one and a process with its pid started when it did: proc(5)
 * /proc/<pid>/stat field 22, starttime in clock ticks after boot, against
 * the profile's start on CLOCK_MONOTONIC (a reused pid started later). */
static int sampler_alive(const pm_profile_info *in)
{
    if (in->sampler_pid <= 1 || in->sampler_pid > INT32_MAX || in->start_mono_ns <= 0)
        return 0;
    char me[256] = "";
    const char *slurm = getenv("SLURMD_NODENAME");
    if (gethostname(me, sizeof me - 1) != 0)
        me[0] = 0;
    if (!(me[0] && same_host_name(me, in->host)) && !(slurm && same_host_name(slurm, in->host)))
        return 0;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)in->sampler_pid);
    if (pm_read_small(AT_FDCWD, path, buf, sizeof buf, NULL) <= 0)
        return 0;
    const char *q = strrchr(buf, ')');
    if (!q)
        return 0;
    q++;
    for (int field = 3; field < 22; field++) { /* skip fields 3..21 */
        while (*q == ' ')
            q++;
        while (*q && *q != ' ')
            q++;
    }
    while (*q == ' ')
        q++;
    char *end;
    errno = 0;
    unsigned long long ticks = strtoull(q, &end, 10);
    long hz = sysconf(_SC_CLK_TCK);
    if (end == q || errno || hz <= 0)
        return 0;
    double d = (double)in->start_mono_ns * 1e-9 - (double)ticks / (double)hz;
    return d > -2 && d < 600;
}

const char *pm_input_incomplete_reason(const ent *e)
{
    const pm_profile *p = e->p;
    if ((p->format != PM_FMT_BIN && p->format != PM_FMT_JSONL) || p->has_end)
        return NULL;
    struct stat st;
    if (sampler_alive(&p->info) ||
        (e->size >= 0 && stat(p->path, &st) == 0 && st.st_size != e->size))
        return "the sampler was still running";
    return "no end record";
}

/* A run's line in the listing: number, job, start, span, hosts, run ids,
 * files (each list shortened after a few). */
static char *run_line(const run_grp *r, size_t ri, const ent *es, size_t ne)
{
    char t0[40];
    fmt_utc(t0, sizeof t0, r->t0);
    pm_buf b;
    pm_buf_init(&b);
    pm_buf_printf(&b, "run %zu: job %s, from %s for %.0f s", r->num, job_name(r->job), t0,
                  r->t1 - r->t0);
    const char *what[3] = {"host", "run id", "file"};
    for (int k = 0; k < 3; k++) {
        size_t n = 0;
        pm_buf items;
        pm_buf_init(&items);
        for (size_t i = 0; i < ne; i++) {
            if (es[i].drop || es[i].run != ri)
                continue;
            const char *s = k == 0   ? pm_profile_host(es[i].p)
                            : k == 1 ? es[i].p->info.run_id
                                     : es[i].p->path;
            if (!*s)
                continue;
            int seen = 0; /* each once (an SKA file holds several hosts) */
            for (size_t j = 0; j < i && !seen; j++)
                seen = !es[j].drop && es[j].run == ri &&
                       strcmp(k == 0   ? pm_profile_host(es[j].p)
                              : k == 1 ? es[j].p->info.run_id
                                       : es[j].p->path,
                              s) == 0;
            if (seen)
                continue;
            if (n < 4)
                pm_buf_printf(&items, "%s%s", n ? ", " : "", s);
            n++;
        }
        if (n > 4)
            pm_buf_printf(&items, ", and %zu more", n - 4);
        if (n)
            pm_buf_printf(&b, "; %zu %s%s: %s", n, what[k], n == 1 ? "" : "s",
                          items.len ? items.data : "");
        pm_buf_free(&items);
    }
    if (b.oom) {
        pm_buf_free(&b);
        return NULL;
    }
    return b.data;
}

/* One events file serves every run that wrote marks into a directory (a
 * requeued job's, a second run's): a phase mark belongs to the run whose
 * span is nearest to its start (0 inside it), and the marks of runs not
 * chosen are dropped, so --run picks the phases with the samples.  Scanner
 * intervals (their own track) are left alone. */
static void keep_run_phases(pm_inputs *in, const run_grp *runs, size_t nr)
{
    pm_phase_set *ps = &in->phases;
    size_t kept = 0, dropped = 0;
    for (size_t i = 0; i < ps->n; i++) {
        pm_phase *ph = &ps->v[i];
        size_t best = 0;
        double bd = INFINITY;
        for (size_t r = 0; r < nr; r++) {
            double d = ph->t0 < runs[r].t0   ? runs[r].t0 - ph->t0
                       : ph->t0 > runs[r].t1 ? ph->t0 - runs[r].t1
                                             : 0;
            if (d <= bd) {
                bd = d;
                best = r;
            }
        }
        if (ph->track[0] || runs[best].sel) {
            ps->v[kept++] = *ph;
            continue;
        }
        free(ph->host);
        free(ph->name);
        free(ph->key);
        free(ph->track);
        free(ph->attrs);
        dropped++;
    }
    ps->n = kept;
    if (dropped)
        (void)pm_strs_add(&in->ignored, &in->nignored,
                          "%zu phase%s marked during runs not selected: not used", dropped,
                          dropped == 1 ? "" : "s");
}
/* Decide which profiles are analysed: drop a second copy of one sampler
 * run (the JSON Lines file of -f both), group the rest by job id and by
 * run (profiles that overlap or follow within tol in time), keep the run
 * opts->job/opts->run select, and refuse several runs, or one host sampled
 * twice at once.  Lines explaining a refusal go to *details. */
/* Among es[0..ne) (sorted by host): a copy of another file's run is
 * dropped (the better copy kept, the other a note in in->ignored), and two
 * samplers of one host at once are listed in *clash, with the indices of
 * their two entries in *clash_ent[2 k], [2 k + 1].  0 or PM_ENOMEM (the
 * lists freed). */
static int find_clashes(pm_inputs *in, ent *es, size_t ne, char ***clash, size_t *nclash,
                        size_t **clash_ent, pm_error *err)
{
    for (size_t i = 0; i < ne; i++) {
        for (size_t j = i + 1;
             j < ne && strcmp(pm_profile_host(es[j].p), pm_profile_host(es[i].p)) == 0; j++) {
            ent *x = &es[i], *y = &es[j];
            if (x->drop || y->drop)
                continue;
            if (same_run(x->p, y->p)) {
                ent *keep = better_copy(y, x) ? y : x, *copy = keep == x ? y : x;
                copy->drop = 1;
                (void)pm_strs_add(&in->ignored, &in->nignored,
                                  "%s: the same sampler run as %s (run id %s); only that one is "
                                  "read",
                                  copy->p->path, keep->p->path,
                                  keep->p->info.run_id[0] ? keep->p->info.run_id : "not recorded");
                if (x->drop)
                    break;
                continue;
            }
            double ov = fmin(x->t1, y->t1) - fmax(x->t0, y->t0);
            if (ov <= 0 || (x->p->format == PM_FMT_SKA && y->p->format == PM_FMT_SKA))
                continue;
            size_t *nc = pm_realloc_array(*clash_ent, 2 * (*nclash + 1), sizeof *nc);
            if (!nc ||
                pm_strs_add(clash, nclash,
                            "host %s was sampled twice at once: %s (pid %lld, run id %s) and "
                            "%s (pid %lld, run id %s) overlap for %.0f s",
                            pm_profile_host(x->p), x->p->path, (long long)x->p->info.sampler_pid,
                            x->p->info.run_id[0] ? x->p->info.run_id : "-", y->p->path,
                            (long long)y->p->info.sampler_pid,
                            y->p->info.run_id[0] ? y->p->info.run_id : "-", ov)) {
                free(nc ? nc : *clash_ent);
                *clash_ent = NULL;
                pm_strs_free(*clash, *nclash);
                *clash = NULL;
                *nclash = 0;
                return pm_error_set(err, PM_ENOMEM, "out of memory");
            }
            *clash_ent = nc;
            nc[2 * *nclash - 2] = i;
            nc[2 * *nclash - 1] = j;
        }
    }
    return 0;
}

/* Group es[0..ne) into runs[*nr] (es[i].run set): by job id, then
 * profiles that overlap in time or follow within tol (a restarted
 * sampler); ord holds ne pointers of scratch.  Runs are numbered by start
 * time. */
static void group_runs(ent *es, size_t ne, ent **ord, run_grp *runs, size_t *nrun)
{
    size_t no = 0, nr = 0;
    for (size_t i = 0; i < ne; i++) {
        es[i].run = SIZE_MAX;
        if (!es[i].drop)
            ord[no++] = &es[i];
    }
    qsort(ord, no, sizeof *ord, cmp_ent_job);
    /* A host seen again in the current run starts a new run unless another
     * host was still sampling then (a sampler restarted in a running job);
     * top[0], top[1]: the latest end over the run and over the hosts other
     * than top[0]'s. */
    double tol = 0;
    struct {
        const char *host;
        double t1;
    } top[2] = {{NULL, -INFINITY}, {NULL, -INFINITY}};
    for (size_t i = 0; i < no; i++) {
        ent *e = ord[i];
        const char *host = pm_profile_host(e->p);
        double iv = (double)e->p->info.interval_ns * 1e-9;
        double t = fmax(10.0, 3 * (isfinite(iv) ? iv : 0));
        int fresh = nr == 0 || strcmp(runs[nr - 1].job, e->p->info.job_id) != 0 ||
                    e->t0 > runs[nr - 1].t1 + fmax(tol, t);
        if (!fresh) {
            int again = 0;
            size_t me = (size_t)(e - es);
            for (size_t j = me; j-- > 0 && strcmp(pm_profile_host(es[j].p), host) == 0 && !again;)
                again = es[j].run == nr - 1;
            for (size_t j = me + 1; j < ne && strcmp(pm_profile_host(es[j].p), host) == 0 && !again;
                 j++)
                again = es[j].run == nr - 1;
            double others = top[0].host && strcmp(top[0].host, host) != 0 ? top[0].t1 : top[1].t1;
            fresh = again && !(others >= e->t0);
        }
        if (fresh) {
            runs[nr++] = (run_grp){e->p->info.job_id, e->t0, e->t1, 0, 1};
            tol = t;
            top[0].host = host;
            top[0].t1 = e->t1;
            top[1].host = NULL;
            top[1].t1 = -INFINITY;
        } else {
            run_grp *r = &runs[nr - 1];
            if (e->t1 > r->t1)
                r->t1 = e->t1;
            if (t > tol)
                tol = t;
            if (strcmp(top[0].host, host) == 0) {
                top[0].t1 = fmax(top[0].t1, e->t1);
            } else if (e->t1 > top[0].t1) {
                top[1] = top[0];
                top[0].host = host;
                top[0].t1 = e->t1;
            } else if (e->t1 > top[1].t1) {
                top[1].host = host;
                top[1].t1 = e->t1;
            }
        }
        e->run = nr - 1;
    }
    /* Numbered by start time. */
    for (size_t r = 0; r < nr; r++) {
        runs[r].num = 1;
        for (size_t q = 0; q < nr; q++)
            runs[r].num += runs[q].t0 < runs[r].t0 || (runs[q].t0 == runs[r].t0 && q < r);
    }
    *nrun = nr;
}

/* The run --job and --run select (runs[].sel; *nselp: how many); a
 * PM_EUSAGE with its message when none or several are selected, for the
 * caller to list the runs after. */
static int pick_run(const pm_input_opts *o, const ent *es, size_t ne, run_grp *runs, size_t nr,
                    size_t *nselp, pm_error *err)
{
    size_t nsel = nr;
    int rc = 0;
    *nselp = nr;
    if (o->job) {
        nsel = 0;
        for (size_t r = 0; r < nr; r++)
            nsel += runs[r].sel = strcmp(runs[r].job, o->job) == 0;
        *nselp = nsel;
        if (nsel == 0) {
            rc = pm_error_set(err, PM_EUSAGE, "--job %s: no profile of that job among the inputs",
                              o->job);
            return rc;
        }
    }
    if (o->run) {
        char *end;
        errno = 0;
        unsigned long long k = strtoull(o->run, &end, 10);
        size_t len = strlen(o->run), found = 0, which = 0;
        int by_num = *o->run && !*end && errno == 0 && k >= 1 && k <= nr;
        /* "last": the latest run (of --job, when given), what a job script
         * that reuses its directory across requeues wants. */
        if (strcmp(o->run, "last") == 0) {
            by_num = 1;
            k = 0;
            for (size_t r = 0; r < nr; r++)
                if (runs[r].sel && runs[r].num > k)
                    k = runs[r].num;
        }
        for (size_t r = 0; r < nr; r++) {
            int hit = 0;
            if (by_num)
                hit = runs[r].num == k;
            else
                for (size_t i = 0; i < ne && !hit && len >= 4; i++)
                    hit = !es[i].drop && es[i].run == r &&
                          strncmp(es[i].p->info.run_id, o->run, len) == 0;
            if (hit && runs[r].sel) {
                found++;
                which = r;
            }
        }
        if (found > 1) {
            rc = pm_error_set(err, PM_EUSAGE,
                              "--run %s: several runs match; give more of the "
                              "run id",
                              o->run);
            return rc;
        }
        if (!found) {
            rc = pm_error_set(err, PM_EUSAGE, "--run %s: no such run among the inputs%s", o->run,
                              o->job ? " of that --job" : "");
            return rc;
        }
        for (size_t r = 0; r < nr; r++)
            runs[r].sel = r == which;
        nsel = 1;
        *nselp = nsel;
    }
    if (nsel > 1) {
        size_t njobs = 0;
        for (size_t r = 0; r < nr; r++) {
            int first = runs[r].sel;
            for (size_t q = 0; q < r && first; q++)
                first = !(runs[q].sel && strcmp(runs[q].job, runs[r].job) == 0);
            njobs += first;
        }
        rc = pm_error_set(err, PM_EUSAGE,
                          "the inputs hold %zu runs of %zu job%s, which are not analysed as one; "
                          "pick one with --run N (or its run id)%s, or name its files",
                          nsel, njobs, njobs == 1 ? "" : "s", njobs > 1 ? ", --job ID" : "");
        return rc;
    }
    return rc;
}

/* The lines that explain a refusal (details): each run (those selected
 * first, else all), then each clash; without a caller to show them, the
 * start of each run's line goes into err's message too. */
static void list_runs(const pm_input_opts *o, const run_grp *runs, size_t nr, size_t nsel,
                      const ent *es, size_t ne, char *const *clash, size_t nclash, char ***details,
                      size_t *ndetails, pm_error *err)
{
    /* Each run (those selected first, else all), then each clash. */
    for (size_t k = 1; k <= nr; k++)
        for (size_t r = 0; r < nr; r++) {
            if (runs[r].num != k || (nsel && !runs[r].sel))
                continue;
            char *line = run_line(&runs[r], r, es, ne);
            if (line) {
                (void)pm_strs_add(details, ndetails, "%s", line);
                /* Without a caller to show the lines, the message holds
                 * the start of each. */
                size_t ml = strlen(err->msg);
                if (!o->input_msg && ml + 4 < sizeof err->msg)
                    snprintf(err->msg + ml, sizeof err->msg - ml, "%s%.*s", k == 1 ? ": " : " | ",
                             (int)strcspn(line, ";"), line);
            }
            free(line);
        }
    for (size_t c = 0; c < nclash; c++)
        (void)pm_strs_add(details, ndetails, "%s", clash[c]);
}

int pm_input_select_run(pm_inputs *in, const pm_input_opts *o, ent *es, size_t ne, char ***details,
                        size_t *ndetails, pm_error *err)
{
    if (ne) /* Scanner profiles alone: none */
        qsort(es, ne, sizeof *es, cmp_ent_host);
    char **clash = NULL;
    size_t nclash = 0;
    size_t *clash_ent = NULL; /* [2 nclash] the two entries of each clash */
    int rc = find_clashes(in, es, ne, &clash, &nclash, &clash_ent, err);
    if (rc)
        return rc;
    ent **ord = pm_alloc_array(ne ? ne : 1, sizeof *ord);
    run_grp *runs = pm_alloc_array(ne ? ne : 1, sizeof *runs);
    if (!ord || !runs) {
        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        goto out;
    }
    size_t nr = 0, nsel = 0;
    group_runs(es, ne, ord, runs, &nr);
    if ((rc = pick_run(o, es, ne, runs, nr, &nsel, err)))
        goto listing;
    /* The chosen run: a host sampled twice at once cannot be read as one. */
    for (size_t c = 0; c < nclash; c++)
        if (es[clash_ent[2 * c]].run == es[clash_ent[2 * c + 1]].run &&
            runs[es[clash_ent[2 * c]].run].sel) {
            rc = pm_error_set(err, PM_EUSAGE, "%s; name the files of one sampler", clash[c]);
            goto listing;
        }
    for (size_t i = 0; i < ne; i++)
        if (!es[i].drop && !runs[es[i].run].sel) {
            es[i].drop = 2;
            (void)pm_strs_add(&in->ignored, &in->nignored, "%s: job %s, run %zu: not selected",
                              es[i].p->path, job_name(es[i].p->info.job_id), runs[es[i].run].num);
        }
    if (nsel < nr)
        keep_run_phases(in, runs, nr);
    goto out;
listing:
    list_runs(o, runs, nr, nsel, es, ne, clash, nclash, details, ndetails, err);
out:
    free(ord);
    free(runs);
    free(clash_ent);
    pm_strs_free(clash, nclash);
    return rc;
}
