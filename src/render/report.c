/* The PDF job report, laid out with libharu (see report.h).
 *
 * Page plan: summary (job at a glance, key figures, nodes that stand out,
 * efficiency notes, contents), data quality, hardware, plot pages grouped
 * as templates/report.json says (all-node plots first, then per-node),
 * colour maps for big jobs, and the per-node statistics appendix.  Every
 * page has a header (job, user, nodes, start) and a "Page N of M" footer,
 * written once the page count is known.  The --stats --json summary is
 * attached to the file, so the report alone is the archival record.
 *
 * This file is the driver: pm_report_write opens the document (fonts,
 * outline, info), calls the pages in the order report_int.h lists, then
 * the contents, footers and attachment, and saves to a temporary name
 * renamed into place.  The layout toolkit is pdf_doc.c; the pages are
 * report_summary.c, report_compare.c, report_nodes.c, report_phases.c,
 * report_plots.c and report_stats.c.
 */
#include "report_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Attach the statistics JSON as an embedded file named perfmon-stats.json. */
static int attach_stats(pdf_doc *d, char *dir, size_t cap, pm_error *err)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, cap, "%s/perfmon-report.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir))
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot create", dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/perfmon-stats.json", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot create", path);
    size_t len = strlen(d->o->stats_json);
    int bad = fwrite(d->o->stats_json, 1, len, f) != len;
    bad |= fclose(f) != 0;
    if (bad)
        return pm_error_sys(err, PM_EIO, errno, "%s: write failed", path);
    /* libharu names the attachment after the path it is given: attach it
     * by its bare name from inside the directory, so the name is
     * "perfmon-stats.json" and the output does not depend on the temporary
     * directory.  (The file is opened here and read when the PDF is saved.) */
    int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cwd < 0)
        return pm_error_sys(err, PM_EIO, errno, "cannot open the working directory");
    if (chdir(dir) != 0) {
        int e = errno;
        close(cwd);
        return pm_error_sys(err, PM_EIO, e, "%s: cannot enter", dir);
    }
    HPDF_EmbeddedFile ef = HPDF_AttachFile(d->pdf, "perfmon-stats.json");
    int back = fchdir(cwd);
    close(cwd);
    if (back != 0)
        return pm_error_sys(err, PM_EIO, errno, "cannot return to the working directory");
    if (!ef)
        return pm_error_set(err, PM_EIO, "cannot attach the statistics to the PDF");
    return 0;
}

static void set_info(pdf_doc *d)
{
    long long t = d->o->creation_time;
    if (t < 0) {
        const char *sde = getenv("SOURCE_DATE_EPOCH");
        char *end;
        t = sde && *sde ? strtoll(sde, &end, 10) : (long long)time(NULL);
        if (sde && *sde && (*end || t < 0))
            t = 0;
    }
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    HPDF_Date date = {tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                      tm.tm_sec,         'Z',           0,          0};
    HPDF_SetInfoDateAttr(d->pdf, HPDF_INFO_CREATION_DATE, date);
    HPDF_SetInfoDateAttr(d->pdf, HPDF_INFO_MOD_DATE, date);
    char title[256];
    snprintf(title, sizeof title, "perfmon job report %s",
             pm_analysis_info(d->a, offsetof(pm_profile_info, job_id)));
    HPDF_SetInfoAttr(d->pdf, HPDF_INFO_TITLE, title);
    HPDF_SetInfoAttr(d->pdf, HPDF_INFO_AUTHOR,
                     pm_analysis_info(d->a, offsetof(pm_profile_info, user)));
    HPDF_SetInfoAttr(d->pdf, HPDF_INFO_CREATOR, "perfmon-analyze " PM_VERSION);
    HPDF_SetInfoAttr(d->pdf, HPDF_INFO_SUBJECT, "Resource usage of a batch job");
}

void pm_report_opts_init(pm_report_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dpi = 200;
    o->creation_time = -1;
}

int pm_report_write(const pm_analysis *a, const pm_report_opts *o, pm_error *err)
{
    pdf_doc *d = calloc(1, sizeof *d);
    if (!d)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    d->a = a;
    d->o = o;
    pm_layout *layout = NULL;
    int rc = pm_layout_load(o->layout_path, &layout, err);
    if (rc) {
        free(d);
        return rc;
    }
    d->l = layout;
    char tmpdir[4096] = "";
    if ((rc = pdf_open(d, o->font_path, o->font_bold_path, err)) != 0)
        goto out;
    set_info(d);
    char start[64];
    pdf_utc(a->t_start, start, sizeof start);
    char nodes[64];
    report_nodes_text(a, nodes, sizeof nodes);
    snprintf(d->header, sizeof d->header, "Job %s  |  User %s  |  %s  |  Start %s",
             report_or_dash(pm_analysis_info(a, offsetof(pm_profile_info, job_id))),
             report_or_dash(pm_analysis_info(a, offsetof(pm_profile_info, user))), nodes, start);

    pdf_new_page(d);
    pdf_bookmark(d, "Summary", 0);
    report_summary_page(d);
    double toc_y = d->y;
    if (o->compare && (rc = report_compare_pages(d, err)) != 0)
        goto out;
    report_quality_page(d);
    report_hardware_page(d);
    if ((rc = report_phases_page(d, err)) != 0)
        goto out;
    rc = report_plot_pages(d, err);
    if (rc)
        goto out;
    report_statistics_pages(d);
    pdf_contents(d, toc_y);
    pdf_footers(d);
    if (o->stats_json && (rc = attach_stats(d, tmpdir, sizeof tmpdir, err)) != 0)
        goto out;
    if (d->oom) {
        rc = pm_error_set(err, PM_ENOMEM, "out of memory laying out the report");
        goto out;
    }
    if (d->hpdf_error) {
        rc = pm_error_set(err, PM_EIO, "PDF library error 0x%04X (detail %u)",
                          (unsigned)d->hpdf_error, (unsigned)d->hpdf_detail);
        goto out;
    }
    /* Save to a temporary name and rename, so a failed write never leaves
     * a truncated report behind under the real name. */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", o->pdf_path);
    if ((rc = pdf_save(d, tmp, o->pdf_path, err)) != 0) {
        unlink(tmp);
        goto out;
    }
    if (rename(tmp, o->pdf_path) != 0) {
        rc = pm_error_sys(err, PM_EIO, errno, "%s: cannot rename into place", o->pdf_path);
        unlink(tmp);
    }
out:
    if (tmpdir[0]) {
        char path[4200];
        snprintf(path, sizeof path, "%s/perfmon-stats.json", tmpdir);
        unlink(path);
        rmdir(tmpdir);
    }
    if (d->pdf)
        HPDF_Free(d->pdf);
    pm_layout_free(layout);
    free(d->pages);
    free(d);
    return rc;
}
