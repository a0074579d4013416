/* perfmon-analyze's progress line (progress.h says what it shows), ended
 * with a newline by pm_progress_end once the analysis, then the report, is
 * done. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "progress.h"
#include "perfmon/clock.h"

#define PROGRESS_HZ 10

void pm_progress_begin(progress_line *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->stage = -1;
    pl->t0 = pm_mono_s();
}

static void progress_print(progress_line *pl, int final)
{
    double now = pm_mono_s(), el = now - pl->t_stage;
    const pm_progress *r = &pl->last[PM_STAGE_READ], *d = &pl->last[PM_STAGE_DERIVE],
                      *w = &pl->last[PM_STAGE_REPORT];
    char line[400], rate[96] = "";
    const double mb = 1e6;
    /* The rate and time left of the stage, once it has run a tenth of a
     * second: of MB read, hosts derived (as many as the series derived
     * make whole hosts) or plots placed. */
    double done = 0, total = 0;
    const char *unit = "";
    size_t hd = d->hosts_done;
    if (d->metrics_total && d->series_done / d->metrics_total > hd)
        hd = d->series_done / d->metrics_total;
    if (pl->stage == PM_STAGE_READ) {
        done = (double)r->bytes_done / mb;
        total = (double)r->bytes_total / mb;
        unit = "MB/s";
    } else if (pl->stage == PM_STAGE_DERIVE) {
        done = (double)hd;
        total = (double)d->hosts_total;
        unit = "hosts/s";
        if (d->passes && d->pass) {
            /* --stream: the hosts of every pass known so far */
            done += (double)(d->pass - 1) * (double)d->hosts_total;
            total *= (double)d->passes;
        }
    } else {
        done = (double)w->plots_done;
        total = (double)w->plots_total;
        unit = "plots/s";
    }
    if (!final && el >= 1.0 / PROGRESS_HZ && done > 0) {
        double v = done / el;
        int n = snprintf(rate, sizeof rate, ", %.*f %s", v < 100 ? 1 : 0, v, unit);
        if (total > done) {
            double left = (total - done) / v;
            snprintf(rate + n, sizeof rate - (size_t)n,
                     left < 60 ? ", %.0f s left" : ", %.0f min left",
                     left < 60 ? ceil(left) : ceil(left / 60));
        }
    }
    if (final && pl->stage == PM_STAGE_REPORT)
        snprintf(line, sizeof line, "report: %zu plots, %zu pages in %.1f s", w->plots_done,
                 w->pages_done, now - pl->t0);
    else if (final)
        snprintf(line, sizeof line, "%zu files (%.3g MB), %zu hosts, %zu metrics in %.1f s",
                 r->files_done, (double)r->bytes_done / mb, d->hosts_total, d->metrics_done,
                 now - pl->t0);
    else if (pl->stage == PM_STAGE_READ)
        snprintf(line, sizeof line, "reading %zu/%zu files (%.3g/%.3g MB)%s", r->files_done,
                 r->files_total, (double)r->bytes_done / mb, (double)r->bytes_total / mb, rate);
    else if (pl->stage == PM_STAGE_DERIVE && d->passes)
        snprintf(line, sizeof line, "pass %zu/%zu over the hosts: %zu/%zu hosts%s", d->pass,
                 d->passes, hd, d->hosts_total, rate);
    else if (pl->stage == PM_STAGE_DERIVE)
        snprintf(line, sizeof line, "%zu/%zu hosts, %zu/%zu metrics%s", hd, d->hosts_total,
                 d->metrics_done, d->metrics_total, rate);
    else if (w->plots_total)
        snprintf(line, sizeof line, "report: %zu/%zu plots, page %zu%s", w->plots_done,
                 w->plots_total, w->pages_done, rate);
    else
        snprintf(line, sizeof line, "report: page %zu", w->pages_done);
    /* One terminal line: cut to its width, the rest of it cleared. */
    size_t cols = 80;
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
        cols = ws.ws_col;
    fprintf(stderr, "\rperfmon-analyze: %.*s\033[K%s", (int)(cols - 18), line, final ? "\n" : "");
    fflush(stderr);
    pl->t_print = now;
    pl->shown = !final;
}

void pm_progress_update(const pm_progress *p, void *user)
{
    progress_line *pl = user;
    if (p->stage < PM_STAGE_READ || p->stage > PM_STAGE_REPORT)
        return;
    double now = pm_mono_s();
    /* (--stream: a new pass over the hosts is a change too) */
    int changed = p->stage != pl->stage ||
                  (p->stage == PM_STAGE_DERIVE && p->pass != pl->last[PM_STAGE_DERIVE].pass);
    if (p->stage != pl->stage) {
        pl->stage = p->stage;
        pl->t_stage = now;
    }
    pl->last[p->stage] = *p;
    if (changed || now - pl->t_print >= 1.0 / PROGRESS_HZ)
        progress_print(pl, 0);
}

void pm_progress_end(progress_line *pl)
{
    if (pl->stage >= 0)
        progress_print(pl, 1);
    pl->stage = -1;
    pl->shown = 0;
}
