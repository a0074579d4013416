/* The job report as one HTML file (see html.h).
 *
 * pm_html_write builds three parts in memory, then writes them in order:
 *
 *     body   the report as plain HTML: verdict, job, key figures, notes,
 *            a figure per chart (its title; the script draws into it),
 *            the constant metrics and the statistics per node;
 *     data   one JSON object in a <script type="application/json">: the
 *            job's start, nodes, phases, and per chart its series as
 *            indices into "blobs", the distinct float32 (and colour-map
 *            byte) arrays;
 *     bin    the blobs one after the other, each byte-shuffled, as one
 *            zlib stream in base64, in a <script type="application/
 *            octet-stream"> (data, never run) that the script inflates
 *            with the browser's DecompressionStream;
 *     code   uPlot and TEMPLATES/html/report.js, inline.
 *
 * The head's Content-Security-Policy names the SHA-256 of each inline
 * script and of the style element, computed here from the bytes written,
 * so the browser runs nothing else (docs/report.md, "The HTML report").
 * The charts are the PDF's (pm_chart_build, in the PDF's order; a flat
 * metric is a row of the constant table instead), so --stream gives the
 * same bytes: the report keeps for them what it keeps for the PDF.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfmon/compare.h"
#include "perfmon/export.h"
#include "perfmon/fileio.h"
#include "perfmon/html.h"
#include "perfmon/mem.h"
#include "perfmon/phase_stats.h"
#include "perfmon/report.h"
#include "perfmon/request_use.h"
#include "perfmon/spread.h"
#include "perfmon/units.h"
#include "html_int.h"
#include "report_int.h"

#ifndef PM_VERSION
#define PM_VERSION "0"
#endif

/* The vendored chart library (docs/report.md says why this one). */
#define UPLOT_DIR "html/vendor/uplot-1.6.32"
#define TEMPLATE_MAX ((size_t)4 << 20)

void pm_html_opts_init(pm_html_opts *o)
{
    memset(o, 0, sizeof *o);
    o->creation_time = -1;
}

/* ---- templates ------------------------------------------------------------ */

typedef struct tfile {
    const char *name; /* relative to the templates directory */
    char *data;
    size_t len;
} tfile;

enum { T_CSS, T_JS, T_UCSS, T_UJS, T_SUMS, T_N };

static int read_template(const char *dir, tfile *f, pm_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, f->name);
    if (pm_read_whole(path, TEMPLATE_MAX, &f->data, &f->len, err) != 0) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        return pm_error_set(err, PM_EIO,
                            "%s (a template of the HTML report); give --templates DIR or set "
                            "PERFMON_TEMPLATES",
                            why);
    }
    return 0;
}

static void hex32(const uint8_t h[32], char out[65])
{
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", h[i]);
}

/* The vendored files against their SHA256SUMS ("HEX  NAME" lines, as
 * sha256sum writes them): a damaged or replaced library is refused. */
static int check_sums(const tfile *t, pm_error *err)
{
    for (int i = T_UCSS; i <= T_UJS; i++) {
        const char *base = strrchr(t[i].name, '/') + 1;
        uint8_t h[32];
        char hex[65], line[400];
        pm_sha256(t[i].data, t[i].len, h);
        hex32(h, hex);
        snprintf(line, sizeof line, "%s  %s\n", hex, base);
        if (!strstr(t[T_SUMS].data, line))
            return pm_error_set(err, PM_EIO, "%s: does not match its SHA-256 in %s", t[i].name,
                                t[T_SUMS].name);
    }
    return 0;
}

/* An inline script must not end its element early or open a comment. */
static int script_safe(const tfile *f, pm_error *err)
{
    for (size_t i = 0; i + 8 <= f->len; i++)
        if ((f->data[i] == '<' && strncasecmp(f->data + i, "</script", 8) == 0) ||
            (f->data[i] == '<' && strncmp(f->data + i, "<!--", 4) == 0))
            return pm_error_set(err, PM_EIO, "%s: holds \"</script\" or \"<!--\"", f->name);
    return 0;
}

static const char *const TNAMES[T_N] = {"html/report.css", "html/report.js",
                                        UPLOT_DIR "/uPlot.min.css", UPLOT_DIR "/uPlot.iife.min.js",
                                        UPLOT_DIR "/SHA256SUMS"};

/* Read the templates and check them: the library against its sums, no
 * script that would end its element early. */
static int load_templates(const char *dir, tfile *t, pm_error *err)
{
    int rc = 0;
    memset(t, 0, T_N * sizeof *t);
    for (int i = 0; i < T_N; i++)
        t[i].name = TNAMES[i];
    for (int i = 0; i < T_N && !rc; i++)
        rc = read_template(dir, &t[i], err);
    if (!rc)
        rc = check_sums(t, err);
    if (!rc)
        rc = script_safe(&t[T_UJS], err);
    if (!rc)
        rc = script_safe(&t[T_JS], err);
    return rc;
}

static void free_templates(tfile *t)
{
    for (int i = 0; i < T_N; i++) {
        free(t[i].data);
        t[i].data = NULL;
    }
}

int pm_html_check_templates(const char *dir, pm_error *err)
{
    tfile t[T_N];
    int rc = load_templates(dir, t, err);
    free_templates(t);
    return rc;
}

/* ,"KEY":[[kind, from, to] ...]: at most MAX_PHASES of a's phases (seconds
 * since a's start), kind the index of the phase's name in names[0..n). */
static void phases_json(pm_buf *d, const char *key, const pm_analysis *a, const char *const *names,
                        size_t n)
{
    html_json_key(d, key, 0);
    pm_buf_puts(d, "[");
    size_t shown = 0;
    for (size_t i = 0; a->phase_stats && i < a->in.phases.n && shown < MAX_PHASES; i++) {
        const pm_phase *p = &a->in.phases.v[i];
        size_t k;
        for (k = 0; k < n; k++)
            if (strcmp(names[k], p->name) == 0)
                break;
        if (k == n || !(p->t1 >= p->t0))
            continue;
        pm_buf_printf(d, "%s[%zu,", shown ? "," : "", k);
        pm_buf_json_num(d, p->t0 - a->t_start);
        pm_buf_puts(d, ",");
        pm_buf_json_num(d, p->t1 - a->t_start);
        pm_buf_puts(d, "]");
        shown++;
    }
    pm_buf_puts(d, "]");
}

/* The data's head: the job's start and end, the nodes and the phases;
 * with --compare also job A's phases ("aphases", on A's elapsed time),
 * the kinds then B's followed by those only A has, so that a kind has one
 * colour in both jobs. */
static void data_head(html_ctx *c)
{
    const pm_analysis *a = c->a, *ra = c->o->compare ? c->o->compare->a : NULL;
    pm_buf *d = &c->data;
    pm_buf_puts(d, "{\"t0\":");
    pm_buf_json_num(d, a->t_start);
    pm_buf_puts(d, ",\"t1\":");
    double span = a->t_end - a->t_start;
    if (ra) /* both jobs whole on the one axis */
        span = fmax(span, ra->t_end - ra->t_start);
    pm_buf_json_num(d, span);
    pm_buf_printf(d, ",\"elapsed\":%d,\"nodes\":[", c->o->elapsed ? 1 : 0);
    for (size_t h = 0; h < a->in.nhosts; h++) {
        if (h)
            pm_buf_puts(d, ",");
        pm_html_json_str(d, a->in.hosts[h].name);
    }
    const pm_phase_stats *st = a->phase_stats, *sa = ra ? ra->phase_stats : NULL;
    size_t nb = st ? st->nkinds : 0, na = sa ? sa->nkinds : 0, nk = 0;
    const char **names = pm_alloc_array(nb + na + 1, sizeof *names);
    if (!names) {
        c->oom = 1;
        return;
    }
    for (size_t k = 0; k < nb; k++)
        names[nk++] = st->kinds[k].name;
    for (size_t k = 0; k < na; k++) {
        size_t j;
        for (j = 0; j < nb; j++)
            if (strcmp(names[j], sa->kinds[k].name) == 0)
                break;
        if (j == nb)
            names[nk++] = sa->kinds[k].name;
    }
    pm_buf_puts(d, "],\"kinds\":[");
    for (size_t k = 0; k < nk; k++) {
        if (k)
            pm_buf_puts(d, ",");
        pm_html_json_str(d, names[k]);
    }
    pm_buf_puts(d, "]");
    phases_json(d, "phases", a, names, nb);
    if (ra)
        phases_json(d, "aphases", ra, names, nk);
    free(names);
    pm_buf_puts(d, ",\"charts\":[");
}

/* The blobs' list ([count, bytes an element] each) and, in c->bin, the
 * blobs one after the other, each byte-shuffled (pm_html_shuffle), as one
 * zlib stream in base64 (as they are where deflate does not pay). */
static int data_tail(html_ctx *c, pm_buf *bin, pm_error *err)
{
    pm_buf *d = &c->data;
    size_t raw = 0;
    for (size_t i = 0; i < c->nblobs; i++)
        raw += c->blobs[i].len;
    unsigned char *all = malloc(raw ? raw : 1), *z = NULL;
    if (!all)
        return pm_error_set(err, PM_ENOMEM, "out of memory for the HTML report's series");
    size_t at = 0, zl = 0;
    pm_buf_puts(d, ",\"blobs\":[");
    for (size_t i = 0; i < c->nblobs; i++) {
        const blob *b = &c->blobs[i];
        pm_html_shuffle(b->bytes, b->len, b->elem, all + at);
        at += b->len;
        pm_buf_printf(d, "%s[%zu,%zu]", i ? "," : "", b->len / b->elem, b->elem);
    }
    int rc = pm_html_deflate(all, raw, &z, &zl);
    if (rc) {
        free(all);
        return pm_error_set(err, rc, "cannot deflate the HTML report's series (%zu bytes)", raw);
    }
    int packed = zl < raw;
    pm_buf_printf(d, "],\"packed\":%d,\"raw\":%zu}", packed, raw);
    if (packed)
        pm_base64(bin, z, zl);
    else
        pm_base64(bin, all, raw);
    free(all);
    free(z);
    return 0;
}

/* ---- the file ------------------------------------------------------------- */

static long long creation_time(const pm_html_opts *o)
{
    long long t = o->creation_time;
    if (t >= 0)
        return t;
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    if (sde && *sde) {
        char *end;
        errno = 0;
        t = strtoll(sde, &end, 10);
        return *end || errno || t < 0 ? 0 : t;
    }
    return (long long)time(NULL);
}

static void csp_hash(pm_buf *b, const char *data, size_t len)
{
    uint8_t h[32];
    pm_sha256(data, len, h);
    pm_buf_puts(b, " 'sha256-");
    pm_base64(b, h, 32);
    pm_buf_puts(b, "'");
}

static void body_top(html_ctx *c, const char *verdict, char limits[][160], size_t nlim)
{
    pm_buf *b = &c->body;
    pm_buf_puts(b, "<header><h1>Job performance report</h1>\n<p id=\"verdict\">");
    pm_html_text(b, verdict);
    pm_buf_puts(b, "</p>\n");
    for (size_t i = 0; i < nlim; i++) {
        pm_buf_puts(b, "<p class=\"limit\">");
        pm_html_text(b, limits[i]);
        pm_buf_puts(b, "</p>\n");
    }
    pm_buf_puts(b, "</header>\n<nav id=\"contents\"><h2>Contents</h2><ol>"
                   "<li><a href=\"#job\">The job</a></li>"
                   "<li><a href=\"#key-figures\">Key figures</a></li>"
                   "<li><a href=\"#efficiency\">Efficiency notes</a></li>");
    if (c->o->compare)
        pm_buf_puts(b, "<li><a href=\"#comparison\">Comparison with another job</a></li>");
    pm_buf_puts(b, "<li><a href=\"#plots\">Plots</a></li>"
                   "<li><a href=\"#statistics\">Statistics per node</a></li></ol></nav>\n<main>\n");
    pm_buf_puts(b, "<h2>The job</h2>\n");
    html_job_table(c);
    pm_buf_puts(b, "<h2 id=\"key-figures\">Key figures (per node, and for the whole job)</h2>\n");
    html_key_figures(c);
    pm_buf_puts(b, "<h2 id=\"efficiency\">Efficiency notes</h2>\n");
    html_notes_list(c);
    html_phase_use(c);
}

static void plots_head(html_ctx *c)
{
    pm_buf *b = &c->body;
    pm_buf_puts(b, "<h2 id=\"plots\">Plots</h2>\n<p class=\"help\">Drag across a plot to zoom "
                   "every plot to that time; double-click to see the whole job again. Click a "
                   "node in a legend or in the statistics table to highlight it in every "
                   "plot.</p>\n<div id=\"phases\"></div>\n");
}

/* The file: head, style, body, data, the series, uPlot and report.js, in
 * PATH.tmp first, renamed into place when every byte is written. */
static int write_file(const char *path, const pm_buf *head, const pm_buf *style, const html_ctx *c,
                      const pm_buf *bin, const tfile *t, pm_error *err)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot create", tmp);
    int bad = fwrite(head->data, 1, head->len, f) != head->len;
    bad |= fwrite(style->data, 1, style->len, f) != style->len;
    bad |= fputs("</style>\n</head>\n<body>\n", f) < 0;
    bad |= fwrite(c->body.data, 1, c->body.len, f) != c->body.len;
    bad |= fputs("<script type=\"application/json\" id=\"pm-data\">", f) < 0;
    bad |= fwrite(c->data.data, 1, c->data.len, f) != c->data.len;
    bad |= fputs("</script>\n<script type=\"application/octet-stream\" id=\"pm-bin\">", f) < 0;
    bad |= fwrite(bin->data ? bin->data : "", 1, bin->len, f) != bin->len;
    bad |= fputs("</script>\n<script>", f) < 0;
    bad |= fwrite(t[T_UJS].data, 1, t[T_UJS].len, f) != t[T_UJS].len;
    bad |= fputs("</script>\n<script>", f) < 0;
    bad |= fwrite(t[T_JS].data, 1, t[T_JS].len, f) != t[T_JS].len;
    bad |= fputs("</script>\n</body>\n</html>\n", f) < 0;
    int e = bad ? errno : 0;
    if ((fflush(f) != 0 || ferror(f)) && !bad) {
        bad = 1;
        e = errno;
    }
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        unlink(tmp);
        return pm_error_sys(err, PM_EIO, e, "%s: write failed", tmp);
    }
    if (rename(tmp, path) != 0) {
        int rc = pm_error_sys(err, PM_EIO, errno, "%s: cannot rename into place", path);
        unlink(tmp);
        return rc;
    }
    return 0;
}

int pm_html_write(const pm_analysis *a, const pm_html_opts *o_in, pm_error *err)
{
    /* A comparison is on elapsed time: the jobs ran at different times. */
    pm_html_opts oc = *o_in;
    if (oc.compare)
        oc.elapsed = 1;
    const pm_html_opts *o = &oc;
    tfile t[T_N];
    memset(t, 0, sizeof t);
    html_ctx c;
    memset(&c, 0, sizeof c);
    c.a = a;
    c.o = o;
    pm_buf_init(&c.body);
    pm_buf_init(&c.data);
    pm_buf head, style, bin;
    pm_buf_init(&head);
    pm_buf_init(&style);
    pm_buf_init(&bin);
    pm_layout *layout = NULL;
    flat_row *fl = NULL;
    int rc = pm_layout_load(o->layout_path, &layout, err);
    if (!rc)
        rc = load_templates(o->template_dir, t, err);
    if (rc)
        goto out;
    c.l = layout;
    fl = calloc(a->nmetrics ? a->nmetrics : 1, sizeof *fl);
    if (!fl) {
        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        goto out;
    }
    char verdict[2048] = "";
    (void)pm_verdict_text(a, verdict, sizeof verdict);
    char limits[8][160];
    size_t nlim = pm_verdict_limits(a, limits, 8);
    data_head(&c);
    body_top(&c, verdict, limits, nlim);
    if (o->compare && (rc = html_compare(&c, err)) != 0)
        goto out;
    plots_head(&c);
    size_t nfl = 0;
    char missing[512];
    c.flat = calloc(a->nmetrics ? a->nmetrics : 1, 1);
    if (!c.flat) {
        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = html_charts(&c, fl, &nfl, missing, sizeof missing, err)) != 0)
        goto out;
    pm_buf_puts(&c.data, "],\"heat\":[");
    if ((rc = html_heatmaps(&c, err)) != 0)
        goto out;
    pm_buf_puts(&c.data, "]");
    if ((rc = html_timeline(&c, err)) != 0)
        goto out;
    html_constant_table(&c, fl, nfl, missing);
    pm_buf_puts(&c.body, "<h2 id=\"statistics\">Statistics per node</h2>\n<p class=\"help\">"
                         "Click a column's heading to sort by it; type in the box to show the "
                         "nodes whose name holds the text (Enter highlights the first).</p>\n"
                         "<input type=\"search\" id=\"node-filter\" placeholder=\"Find a "
                         "node\" aria-label=\"Find a node\">\n");
    html_node_table(&c);
    if ((rc = data_tail(&c, &bin, err)) != 0)
        goto out;
    long long when = creation_time(o);
    time_t tt = (time_t)when;
    struct tm tm;
    char date[32] = "";
    if (gmtime_r(&tt, &tm))
        strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", &tm);
    pm_buf_printf(&c.body, "</main>\n<footer>perfmon-analyze %s, %s</footer>\n", PM_VERSION, date);

    /* The style element's text, hashed for the policy as written. */
    pm_buf_add(&style, t[T_UCSS].data, t[T_UCSS].len);
    pm_buf_puts(&style, "\n");
    pm_buf_add(&style, t[T_CSS].data, t[T_CSS].len);
    pm_buf_puts(&head, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                       "'none'; script-src");
    csp_hash(&head, t[T_UJS].data, t[T_UJS].len);
    csp_hash(&head, t[T_JS].data, t[T_JS].len);
    pm_buf_puts(&head, "; style-src");
    csp_hash(&head, style.data ? style.data : "", style.len);
    pm_buf_puts(&head,
                "\">\n<meta name=\"viewport\" content=\"width=device-width, "
                "initial-scale=1\">\n<meta name=\"generator\" content=\"perfmon-analyze " PM_VERSION
                "\">\n<title>perfmon job report ");
    pm_html_text(&head, pm_analysis_info(a, offsetof(pm_profile_info, job_id)));
    pm_buf_puts(&head, "</title>\n<style>");
    if (head.oom || style.oom || bin.oom || c.body.oom || c.data.oom || c.oom) {
        rc = pm_error_set(err, PM_ENOMEM, "out of memory for the HTML report");
        goto out;
    }

    rc = write_file(o->path, &head, &style, &c, &bin, t, err);
out:
    free_templates(t);
    for (size_t i = 0; i < c.nblobs; i++)
        free(c.blobs[i].bytes);
    free(c.blobs);
    free(c.flat);
    free(fl);
    pm_layout_free(layout);
    pm_buf_free(&c.body);
    pm_buf_free(&c.data);
    pm_buf_free(&head);
    pm_buf_free(&style);
    pm_buf_free(&bin);
    return rc;
}
