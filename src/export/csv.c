/* --csv FILE: one row per host and timestamp, one column per metric with
 * its unit in the header (RFC 4180 quoting). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
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

int pm_export_csv_digits(const pm_analysis *a, const char *path, int digits, pm_error *err)
{
    int tdigits = digits > PM_TIME_DIGITS ? digits : PM_TIME_DIGITS;
    FILE *f = fopen(path, "w");
    if (!f)
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot create", path);
    setvbuf(f, NULL, _IOFBF, 1 << 16);
    fputs("host,time [s]", f);
    char h[256];
    for (size_t m = 0; m < a->nmetrics; m++) {
        snprintf(h, sizeof h, "%s [%s]", a->metrics[m].def->id, a->metrics[m].def->unit);
        fputc(',', f);
        csv_str(f, h);
    }
    fputc('\n', f);
    char num[48];
    for (size_t ho = 0; ho < a->nhosts; ho++) {
        const pm_host *host = &a->hosts[ho];
        for (size_t i = 0; i < host->n; i++) {
            csv_str(f, host->name);
            fputc(',', f);
            size_t len = pm_fmt_double(num, host->t[i], tdigits);
            fwrite(num, 1, len, f);
            for (size_t m = 0; m < a->nmetrics; m++) {
                fputc(',', f);
                const pm_series *s = a->metrics[m].host[ho];
                /* recorded values only: a held refresh of a sparse gauge is not */
                if (s && !isnan(s->v[i]) && s->q[i] != PM_Q_HELD) {
                    len = pm_fmt_double(num, s->v[i], digits);
                    fwrite(num, 1, len, f);
                }
            }
            fputc('\n', f);
        }
    }
    return pm_close_checked(f, path, err);
}
