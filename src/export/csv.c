/* --csv FILE: one row per host and timestamp, one column per metric with
 * its unit in the header (RFC 4180 quoting). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/export.h"
#include "perfmon/fileio.h"

static void csv_str(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int pm_export_csv(const pm_analysis *a, const char *path, pm_error *err)
{
    return pm_export_csv_digits(a, path, PM_CSV_DIGITS, err);
}

struct pm_csv_out {
    FILE *f;
    int digits, tdigits;
    size_t nm;
    char tmp[4200]; /* written here, renamed to path at the end */
    char path[];    /* for the messages */
};

pm_csv_out *pm_csv_open(const char *path, int digits, const pm_metric_def *const *defs, size_t nm,
                        pm_error *err)
{
    size_t len = strlen(path);
    pm_csv_out *w = calloc(1, sizeof *w + len + 1);
    if (!w) {
        pm_error_set(err, PM_ENOMEM, "out of memory");
        return NULL;
    }
    memcpy(w->path, path, len + 1);
    if (pm_out_begin(path, w->tmp, sizeof w->tmp, err) != 0) {
        free(w);
        return NULL;
    }
    w->f = fopen(w->tmp, "w");
    if (!w->f) {
        pm_error_sys(err, PM_EIO, errno, "%s: cannot create", path);
        free(w);
        return NULL;
    }
    w->digits = digits;
    w->tdigits = digits > PM_TIME_DIGITS ? digits : PM_TIME_DIGITS;
    w->nm = nm;
    setvbuf(w->f, NULL, _IOFBF, 1 << 16);
    fputs("host,time [s]", w->f);
    char h[256];
    for (size_t m = 0; m < nm; m++) {
        snprintf(h, sizeof h, "%s [%s]", defs[m]->id, defs[m]->unit);
        fputc(',', w->f);
        csv_str(w->f, h);
    }
    fputc('\n', w->f);
    return w;
}

void pm_csv_host(pm_csv_out *w, const pm_host *host, const pm_series *const *s)
{
    FILE *f = w->f;
    char num[48];
    for (size_t i = 0; i < host->n; i++) {
        csv_str(f, host->name);
        fputc(',', f);
        size_t len = pm_fmt_double(num, host->t[i], w->tdigits);
        fwrite(num, 1, len, f);
        for (size_t m = 0; m < w->nm; m++) {
            fputc(',', f);
            /* recorded values only: a held refresh of a sparse gauge is not */
            if (s[m] && !isnan(s[m]->v[i]) && s[m]->q[i] != PM_Q_HELD) {
                len = pm_fmt_double(num, s[m]->v[i], w->digits);
                fwrite(num, 1, len, f);
            }
        }
        fputc('\n', f);
    }
}

int pm_csv_close(pm_csv_out *w, pm_error *err)
{
    if (!w)
        return 0;
    int rc = pm_out_end(w->tmp, w->path, pm_close_checked(w->f, w->path, err), err);
    free(w);
    return rc;
}

void pm_csv_discard(pm_csv_out *w)
{
    if (!w)
        return;
    (void)fclose(w->f);
    pm_error e;
    (void)pm_out_end(w->tmp, w->path, PM_EIO, &e);
    free(w);
}

int pm_export_csv_digits(const pm_analysis *a, const char *path, int digits, pm_error *err)
{
    size_t nm = a->nmetrics ? a->nmetrics : 1;
    const pm_metric_def **defs = calloc(nm, sizeof *defs);
    const pm_series **s = calloc(nm, sizeof *s);
    pm_csv_out *w = NULL;
    int rc = 0;
    if (!defs || !s)
        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
    for (size_t m = 0; !rc && m < a->nmetrics; m++)
        defs[m] = a->metrics[m].def;
    if (!rc && !(w = pm_csv_open(path, digits, defs, a->nmetrics, err)))
        rc = err->code ? err->code : PM_EIO;
    for (size_t h = 0; !rc && h < a->in.nhosts; h++) {
        for (size_t m = 0; m < a->nmetrics; m++)
            s[m] = a->metrics[m].host[h];
        pm_csv_host(w, &a->in.hosts[h], s);
    }
    if (w)
        rc = pm_csv_close(w, err);
    free(defs);
    free(s);
    return rc;
}
