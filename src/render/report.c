/* The PDF job report, laid out with libharu (see report.h).
 *
 * Page plan: summary (job at a glance, key figures, nodes that stand out,
 * efficiency notes, contents), data quality, hardware, plot pages grouped
 * as templates/report.json says (all-node plots first, then per-node),
 * colour maps for big jobs, and the per-node statistics appendix.  Every
 * page has a header (job, user, nodes, start) and a "Page N of M" footer,
 * written once the page count is known.  The --stats --json summary is
 * attached to the file, so the report alone is the archival record.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <hpdf.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perfmon/units.h"
#include "perfmon/buf.h"
#include "perfmon/canvas.h"
#include "perfmon/compare.h"
#include "perfmon/export.h"
#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/phase_stats.h"
#include "perfmon/report.h"
#include "perfmon/request.h"
#include "perfmon/spread.h"

#define PAGE_W 595.276
#define PAGE_H 841.89
#define MARGIN_X 42.0
#define TOP 58.0        /* content starts this far from the top */
#define BOTTOM 48.0     /* and ends this far from the bottom */
#define CONTENT_W (PAGE_W - 2 * MARGIN_X)
#define PDF_DPI 72 /* vectors: a series is decimated to one column per point */
#define MAX_TOC 64
#define STATS_MAX_COLS 6  /* value columns per statistics table */
#define HW_MAX_ROWS 10    /* hardware configurations listed */

#define DEFAULT_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
#define DEFAULT_BOLD "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"

typedef struct toc_entry {
    char title[96];
    size_t page;          /* index into pages */
    double y;             /* where the line is on the summary page */
} toc_entry;

typedef struct doc {
    HPDF_Doc pdf;
    HPDF_Font font, bold;
    const pm_analysis *a;
    const pm_report_opts *o;
    const pm_layout *l;
    HPDF_Page *pages;
    size_t npages, cap;
    HPDF_Page page;
    double y;             /* cursor, from the top of the page */
    char header[600];
    HPDF_STATUS hpdf_error, hpdf_detail;
    HPDF_Outline root;
    toc_entry toc[MAX_TOC];
    size_t ntoc;
    HPDF_Page toc_page;
    double ink[3];        /* colour of the text drawn next (RGB, 0 = black) */
    int oom;
    pm_canvas_pdf cv;     /* what the plots' vectors share in the PDF */
} doc;

static void on_hpdf_error(HPDF_STATUS error_no, HPDF_STATUS detail_no, void *user)
{
    doc *d = user;
    if (!d->hpdf_error) {
        d->hpdf_error = error_no;
        d->hpdf_detail = detail_no;
    }
}

static double Y(double top) { return PAGE_H - top; }

static void set_font(doc *d, int bold, double size)
{
    HPDF_Page_SetFontAndSize(d->page, bold ? d->bold : d->font, (HPDF_REAL)size);
}

static double width_of(doc *d, const char *s)
{
    return HPDF_Page_TextWidth(d->page, s);
}

/* Text at (x, top) in the current font, its baseline 0.8 em below top. */
static void text(doc *d, double x, double top, double size, int bold, const char *s)
{
    set_font(d, bold, size);
    HPDF_Page_SetRGBFill(d->page, (HPDF_REAL)d->ink[0], (HPDF_REAL)d->ink[1],
                         (HPDF_REAL)d->ink[2]);
    HPDF_Page_BeginText(d->page);
    HPDF_Page_TextOut(d->page, (HPDF_REAL)x, (HPDF_REAL)Y(top + size * 0.8), s);
    HPDF_Page_EndText(d->page);
}

static void text_right(doc *d, double xr, double top, double size, int bold, const char *s)
{
    set_font(d, bold, size);
    text(d, xr - width_of(d, s), top, size, bold, s);
}

/* Shorten s (UTF-8) with an ellipsis to fit w at the current font. */
static void fit(doc *d, const char *s, double w, char *out, size_t cap)
{
    snprintf(out, cap, "%s", s);
    if (width_of(d, out) <= w)
        return;
    size_t n = strlen(out);
    while (n > 1) {
        n--;
        while (n > 0 && ((unsigned char)out[n] & 0xC0) == 0x80)
            n--;
        if (n + 4 > cap)
            continue;
        memcpy(out + n, "\xe2\x80\xa6", 4);
        if (width_of(d, out) <= w)
            return;
    }
}

static void rule(doc *d, double top, double gray, double lw)
{
    HPDF_Page_SetGrayStroke(d->page, (HPDF_REAL)gray);
    HPDF_Page_SetLineWidth(d->page, (HPDF_REAL)lw);
    HPDF_Page_MoveTo(d->page, (HPDF_REAL)MARGIN_X, (HPDF_REAL)Y(top));
    HPDF_Page_LineTo(d->page, (HPDF_REAL)(PAGE_W - MARGIN_X), (HPDF_REAL)Y(top));
    HPDF_Page_Stroke(d->page);
}

static void new_page(doc *d)
{
    if (d->npages == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 32;
        HPDF_Page *np = pm_realloc_array(d->pages, nc, sizeof *np);
        if (!np) {
            d->oom = 1;
            return;
        }
        d->pages = np;
        d->cap = nc;
    }
    d->page = HPDF_AddPage(d->pdf);
    HPDF_Page_SetSize(d->page, HPDF_PAGE_SIZE_A4, HPDF_PAGE_PORTRAIT);
    d->pages[d->npages++] = d->page;
    double ink[3];
    memcpy(ink, d->ink, sizeof ink);
    memset(d->ink, 0, sizeof d->ink);
    text(d, MARGIN_X, 24, 8, 0, d->header);
    text_right(d, PAGE_W - MARGIN_X, 24, 8, 1, "perfmon");
    memcpy(d->ink, ink, sizeof ink);
    rule(d, 36, 0.6, 0.5);
    d->y = TOP;
}

static void need(doc *d, double h)
{
    if (d->y + h > PAGE_H - BOTTOM)
        new_page(d);
}

/* An outline entry (bookmark) at the cursor, and a contents line. */
static void bookmark(doc *d, const char *title, int toc)
{
    HPDF_Outline o = HPDF_CreateOutline(d->pdf, d->root, title, HPDF_GetEncoder(d->pdf, "UTF-8"));
    HPDF_Destination dst = HPDF_Page_CreateDestination(d->page);
    HPDF_Destination_SetFitH(dst, (HPDF_REAL)Y(d->y - 10));
    HPDF_Outline_SetDestination(o, dst);
    if (toc && d->ntoc < MAX_TOC) {
        snprintf(d->toc[d->ntoc].title, sizeof d->toc[0].title, "%s", title);
        d->toc[d->ntoc].page = d->npages - 1;
        d->ntoc++;
    }
}

/* A section heading with an outline entry (and a contents line). */
static void heading(doc *d, const char *title, int toc)
{
    need(d, 60);
    text(d, MARGIN_X, d->y, 14, 1, title);
    bookmark(d, title, toc);
    d->y += 24;
}

static void subheading(doc *d, const char *title)
{
    need(d, 40);
    text(d, MARGIN_X, d->y, 10.5, 1, title);
    d->y += 17;
}

static void paragraph(doc *d, const char *s, double size)
{
    /* Greedy word wrap to the content width. */
    set_font(d, 0, size);
    char line[1024];
    size_t ll = 0;
    const char *p = s;
    while (*p) {
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        /* A number keeps its unit on its line ("154 MiB", "52 %"). */
        static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB",
                                            "%", "s", "min", "h"};
        if (*p == ' ' && p > w && p[-1] >= '0' && p[-1] <= '9') {
            const char *u = p + 1, *ue = u;
            while (*ue && *ue != ' ')
                ue++;
            size_t ul = (size_t)(ue - u);
            while (ul && (u[ul - 1] == '.' || u[ul - 1] == ',' || u[ul - 1] == ';' ||
                          u[ul - 1] == ')'))
                ul--;
            for (size_t k = 0; k < sizeof units / sizeof units[0]; k++)
                if (strlen(units[k]) == ul && strncmp(units[k], u, ul) == 0) {
                    p = ue;
                    break;
                }
        }
        size_t wl = (size_t)(p - w);
        char trial[1024];
        snprintf(trial, sizeof trial, "%.*s%s%.*s", (int)ll, line, ll ? " " : "", (int)wl, w);
        if (ll && width_of(d, trial) > CONTENT_W) {
            need(d, size * 1.4);
            text(d, MARGIN_X, d->y, size, 0, line);
            d->y += size * 1.35;
            snprintf(line, sizeof line, "%.*s", (int)wl, w);
            ll = strlen(line);
        } else {
            snprintf(line, sizeof line, "%s", trial);
            ll = strlen(line);
        }
        while (*p == ' ')
            p++;
    }
    if (ll) {
        need(d, size * 1.4);
        text(d, MARGIN_X, d->y, size, 0, line);
        d->y += size * 1.35;
    }
}

/* ---- tables --------------------------------------------------------------- */

typedef struct table {
    size_t ncols;
    const double *w;       /* column widths (points) */
    const int *right;      /* right-aligned columns */
    const char *const *head;
    double size;
} table;

/* Split a header into at most two lines that fit w (the second shortened
 * with an ellipsis when it still does not). */
static int head_lines(doc *d, const char *h, double w, char *l1, char *l2, size_t cap)
{
    snprintf(l1, cap, "%s", h);
    l2[0] = 0;
    if (width_of(d, l1) <= w)
        return 1;
    size_t best = 0;
    for (size_t i = 1; h[i]; i++) {
        if (h[i] != ' ')
            continue;
        snprintf(l1, cap, "%.*s", (int)i, h);
        if (width_of(d, l1) <= w)
            best = i;
    }
    if (!best) {
        fit(d, h, w, l1, cap);
        return 1;
    }
    snprintf(l1, cap, "%.*s", (int)best, h);
    fit(d, h + best + 1, w, l2, cap);
    return 2;
}

static void table_head(doc *d, const table *t)
{
    char l1[256], l2[256];
    int lines = 1;
    set_font(d, 1, t->size);
    for (size_t c = 0; c < t->ncols; c++)
        if (head_lines(d, t->head[c], t->w[c] - 4, l1, l2, sizeof l1) == 2)
            lines = 2;
    double hh = t->size * (0.6 + 1.1 * lines);
    need(d, hh + t->size * 3);
    HPDF_Page_SetGrayFill(d->page, 0.92);
    HPDF_Page_Rectangle(d->page, (HPDF_REAL)MARGIN_X, (HPDF_REAL)Y(d->y + hh),
                        (HPDF_REAL)CONTENT_W, (HPDF_REAL)hh);
    HPDF_Page_Fill(d->page);
    HPDF_Page_SetGrayFill(d->page, 0);
    double x = MARGIN_X;
    for (size_t c = 0; c < t->ncols; c++) {
        set_font(d, 1, t->size);
        int n = head_lines(d, t->head[c], t->w[c] - 4, l1, l2, sizeof l1);
        /* Bottom-align: a one-line header sits on the second line. */
        double top = d->y + t->size * 0.3 + (lines == 2 && n == 1 ? t->size * 1.1 : 0);
        for (int k = 0; k < n; k++) {
            const char *s = k ? l2 : l1;
            double yy = top + k * t->size * 1.1;
            if (t->right[c])
                text_right(d, x + t->w[c] - 2, yy, t->size, 1, s);
            else
                text(d, x + 2, yy, t->size, 1, s);
        }
        x += t->w[c];
    }
    d->y += hh + t->size * 0.1;
}

static void table_row(doc *d, const table *t, const char *const *cells, int shade)
{
    if (d->y + t->size * 1.5 > PAGE_H - BOTTOM) {
        new_page(d);
        table_head(d, t);
    }
    if (shade) {
        HPDF_Page_SetGrayFill(d->page, 0.97);
        HPDF_Page_Rectangle(d->page, (HPDF_REAL)MARGIN_X, (HPDF_REAL)Y(d->y + t->size * 1.45),
                            (HPDF_REAL)CONTENT_W, (HPDF_REAL)(t->size * 1.45));
        HPDF_Page_Fill(d->page);
        HPDF_Page_SetGrayFill(d->page, 0);
    }
    double x = MARGIN_X;
    for (size_t c = 0; c < t->ncols; c++) {
        char s[512];
        set_font(d, 0, t->size);
        fit(d, cells[c] ? cells[c] : "", t->w[c] - 4, s, sizeof s);
        if (t->right[c])
            text_right(d, x + t->w[c] - 2, d->y + t->size * 0.25, t->size, 0, s);
        else
            text(d, x + 2, d->y + t->size * 0.25, t->size, 0, s);
        x += t->w[c];
    }
    d->y += t->size * 1.45;
}

/* ---- numbers and times ---------------------------------------------------- */

static void num(double v, char *out, size_t cap)
{
    double a = fabs(v);
    if (!isfinite(v))
        snprintf(out, cap, "-");
    else if (a == 0)
        snprintf(out, cap, "0");
    else if (a < 1e15 && v == floor(v))
        snprintf(out, cap, "%.0f", v);
    else if (a >= 1e9 || a < 1e-3)
        snprintf(out, cap, "%.3g", v);
    else if (a >= 1000)
        snprintf(out, cap, "%.0f", v);
    else if (a >= 100)
        snprintf(out, cap, "%.1f", v);
    else if (a >= 1)
        snprintf(out, cap, "%.2f", v);
    else
        snprintf(out, cap, "%.3f", v);
}

static void utc(double t, char *out, size_t cap)
{
    if (!isfinite(t)) {
        snprintf(out, cap, "-");
        return;
    }
    time_t s = (time_t)floor(t);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(out, cap, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static void duration(double s, char *out, size_t cap)
{
    if (!isfinite(s) || s < 0) {
        snprintf(out, cap, "-");
        return;
    }
    long v = lround(s);
    if (v >= 86400)
        snprintf(out, cap, "%ldd %02ld:%02ld:%02ld (%.0f s)", v / 86400, (v / 3600) % 24,
                 (v / 60) % 60, v % 60, s);
    else
        snprintf(out, cap, "%02ld:%02ld:%02ld (%.1f s)", v / 3600, (v / 60) % 60, v % 60, s);
}

/* The first non-empty profile info field over hosts. */
/* ---- images --------------------------------------------------------------- */

typedef void (*draw_cb)(cairo_t *cr, double w, double h, const void *obj);

static void draw_chart(cairo_t *cr, double w, double h, const void *obj)
{
    pm_plot_draw(cr, 0, 0, w, h, 8.0, obj);
}

static void draw_heat(cairo_t *cr, double w, double h, const void *obj)
{
    pm_heatmap_draw(cr, 0, 0, w, h, 8.0, obj);
}

static void draw_timeline(cairo_t *cr, double w, double h, const void *obj)
{
    pm_timeline_draw(cr, 0, 0, w, h, 8.0, obj);
}

/* Draw into a canvas that records vectors (see canvas.h); PDF_DPI sets
 * the pixel columns a series is decimated to (min and max per column). */
static pm_canvas *render_canvas(draw_cb fn, const void *obj, double w, double h)
{
    pm_canvas *cv = pm_canvas_new(w, h, PDF_DPI);
    if (!cv)
        return NULL;
    fn(pm_canvas_cairo(cv), w, h, obj);
    if (pm_canvas_status(cv) != 0) {
        pm_canvas_free(cv);
        return NULL;
    }
    return cv;
}

/* Write a canvas of w x h points at the cursor, as PDF paths and text. */
static int place_canvas(doc *d, const pm_canvas *cv, double h)
{
    pm_canvas_pdf_write(cv, &d->cv, d->page, MARGIN_X, d->y, PAGE_H);
    if (d->hpdf_error)
        return PM_EIO;
    d->y += h;
    return 0;
}

/* ---- sections -------------------------------------------------------------- */

static size_t total_samples(const pm_analysis *a)
{
    size_t n = 0;
    for (size_t h = 0; h < a->nhosts; h++)
        n += a->hosts[h].n;
    return n;
}

static void kv_row(doc *d, const char *k, const char *v)
{
    static const double w[2] = {130, CONTENT_W - 130};
    static const int right[2] = {0, 0};
    table t = {2, w, right, NULL, 9};
    const char *cells[2] = {k, v};
    table_row(d, &t, cells, 0);
}

/* The efficiency notes, a rule that fired on several nodes folded into
 * one line (most severe first, the job-level notes before node notes). */
static void notes(doc *d)
{
    const pm_analysis *a = d->a;
    static const char *const sev[] = {"info", "warning", "critical"};
    /* info blue-grey, warning orange, critical red */
    static const double ink[3][3] = {{0.25, 0.35, 0.55}, {0.78, 0.42, 0.0}, {0.78, 0.08, 0.08}};
    if (a->nnotes == 0) {
        paragraph(d, "No rule fired.", 9);
        return;
    }
    pm_note_line *l = NULL;
    size_t n = pm_note_lines(a, &l);
    if (!l) {
        d->oom = 1;
        return;
    }
    char buf[1024];
    for (size_t i = 0; i < n; i++) {
        const pm_note *nt = &a->notes[l[i].note];
        const char *msg = nt->message ? nt->message : nt->rule;
        int s = l[i].severity;
        memcpy(d->ink, ink[s], sizeof d->ink);
        if (l[i].count == 1)
            snprintf(buf, sizeof buf, "[%s] %s", sev[s], msg);
        else if (l[i].count > l[i].shown)
            snprintf(buf, sizeof buf, "[%s] %zu nodes (%s and %zu more), e.g. %s", sev[s],
                     l[i].count, l[i].hosts, l[i].count - l[i].shown, msg);
        else
            snprintf(buf, sizeof buf, "[%s] %zu nodes (%s), e.g. %s", sev[s], l[i].count,
                     l[i].hosts, msg);
        paragraph(d, buf, 9);
        memset(d->ink, 0, sizeof d->ink);
    }
    free(l);
}

static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

/* "3 nodes", or "1 node, 2 GPUs": GPUs are hosts of their own in the
 * analysis (gpu-<n>.<node>) but not nodes of the job. */
static void nodes_text(const pm_analysis *a, char *buf, size_t cap)
{
    size_t ngpu = 0;
    for (size_t h = 0; h < a->nhosts; h++)
        ngpu += a->hosts[h].gpu != 0;
    size_t nn = a->nhosts - ngpu;
    int w = snprintf(buf, cap, "%zu node%s", nn, nn == 1 ? "" : "s");
    if (ngpu && w > 0 && (size_t)w < cap)
        snprintf(buf + w, cap - (size_t)w, ", %zu GPU%s", ngpu, ngpu == 1 ? "" : "s");
}

/* Requested vs used (request_out.c's lines, as --stats), the note for
 * far-apart figures in the warning colour. */
static void request_rows(doc *d)
{
    char lines[3][160], note[512];
    size_t n;
    pm_request_use_lines(d->a, lines, &n);
    for (size_t i = 0; i < n; i++) {
        const char *colon = strchr(lines[i], ':');
        char k[16];
        snprintf(k, sizeof k, "%.*s", colon ? (int)(colon - lines[i]) : 0, lines[i]);
        kv_row(d, colon ? k : "Requested", colon ? colon + 2 : lines[i]);
    }
    pm_request_use u;
    pm_request_use_compute(d->a, &u);
    if (pm_request_note(&u, note, sizeof note)) {
        static const double orange[3] = {0.78, 0.42, 0.0};
        memcpy(d->ink, orange, sizeof d->ink);
        paragraph(d, note, 9);
        memset(d->ink, 0, sizeof d->ink);
    }
}

/* Resource use per phase on page 1, where the job has phases: the cells
 * --stats prints (pm_phase_use_cells). */
static void phase_use_table(doc *d)
{
    const pm_phase_stats *st = d->a->phase_stats;
    if (!st || !st->nkinds)
        return;
    subheading(d, "Resource use per phase (whole job)");
    static const double w[PM_PHASE_USE_COLS] = {95, 46, 52, 48, 56, 52, 54, 52, 56};
    static const int right[PM_PHASE_USE_COLS] = {0, 1, 1, 1, 1, 1, 1, 1, 1};
    table t = {PM_PHASE_USE_COLS, w, right, PM_PHASE_USE_HEAD, 8};
    table_head(d, &t);
    for (size_t k = 0; k < st->nkinds; k++) {
        char c[PM_PHASE_USE_COLS][48];
        const char *cells[PM_PHASE_USE_COLS];
        pm_phase_use_cells(&st->kinds[k], c);
        for (int i = 0; i < PM_PHASE_USE_COLS; i++)
            cells[i] = c[i];
        table_row(d, &t, cells, (int)(k % 2));
    }
    paragraph(d, "Time: the longest node's; CPU time in core-seconds, its share of the CPUs the "
                 "nodes have over the phase; memory: the highest node's peak of the job's RSS "
                 "(of its memory used where no process tree was followed); bytes summed over "
                 "nodes.", 7.5);
    d->y += 8;
}

static void summary_page(doc *d)
{
    const pm_analysis *a = d->a;
    char buf[512], b2[128];
    text(d, MARGIN_X, d->y, 20, 1, "Job performance report");
    d->y += 30;
    /* The verdict in words, then what the profile cannot say. */
    char verdict[2048];
    if (pm_verdict_text(a, verdict, sizeof verdict)) {
        paragraph(d, verdict, 10.5);
        d->y += 3;
    }
    char limits[8][160];
    size_t nlim = pm_verdict_limits(a, limits, 8);
    static const double gray[3] = {0.35, 0.35, 0.35};
    memcpy(d->ink, gray, sizeof d->ink);
    for (size_t i = 0; i < nlim; i++)
        paragraph(d, limits[i], 8.5);
    memset(d->ink, 0, sizeof d->ink);
    d->y += 8;
    snprintf(buf, sizeof buf, "%s", pm_analysis_info(a, offsetof(pm_profile_info, job_id)));
    kv_row(d, "Job ID", buf[0] ? buf : "-");
    kv_row(d, "User", or_dash(pm_analysis_info(a, offsetof(pm_profile_info, user))));
    kv_row(d, "Scheduler", or_dash(pm_analysis_info(a, offsetof(pm_profile_info, scheduler))));
    nodes_text(a, buf, sizeof buf);
    kv_row(d, "Nodes", buf);
    utc(a->t_start, buf, sizeof buf);
    kv_row(d, "Start", buf);
    utc(a->t_end, buf, sizeof buf);
    kv_row(d, "End", buf);
    duration(a->t_end - a->t_start, buf, sizeof buf);
    kv_row(d, "Duration", buf);
    double iv = NAN;
    if (a->nhosts)
        iv = a->hosts[0].interval;
    num(iv, b2, sizeof b2);
    snprintf(buf, sizeof buf, "%s s (analysis grid %.3g s)", b2, a->grid_step);
    kv_row(d, "Sampling interval", buf);
    snprintf(buf, sizeof buf, "%zu", total_samples(a));
    kv_row(d, "Samples analysed", buf);
    const char *cmd = pm_analysis_info(a, offsetof(pm_profile_info, command));
    if (*cmd)
        kv_row(d, "Command", cmd);
    if (pm_analysis_incomplete(a, buf, sizeof buf))
        kv_row(d, "Status", buf);
    request_rows(d);
    d->y += 10;

    subheading(d, "Key figures (per node, and for the whole job)");
    static const double w[5] = {175, 84, 84, 84, 84};
    static const int right[5] = {0, 1, 1, 1, 1};
    static const char *const head[5] = {"Figure", "Min node", "Average", "Max node", "Job"};
    table t = {5, w, right, head, 8.5};
    table_head(d, &t);
    for (size_t i = 0; i < d->l->nfigures; i++) {
        const pm_layout_figure *lf = &d->l->figures[i];
        const pm_figure *f = pm_figure_find(lf->key);
        if (!f)
            continue;
        double mn = INFINITY, mx = -INFINITY, sum = 0;
        size_t k = 0;
        for (size_t h = 0; h < a->nhosts; h++) {
            double v = pm_figure_value(&a->nodes[h], f);
            if (!isfinite(v))
                continue;
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
            sum += v;
            k++;
        }
        if (!k)
            continue;
        char c1[48], c2[48], c3[48], c4[48], lab[128];
        double sc = lf->scale, jv = pm_figure_value(&a->job, f);
        /* Byte counts scaled to their size (KiB ... TiB), each on its own. */
        double bytes = !strcmp(f->unit, "MiB") ? 1048576.0 : !strcmp(f->unit, "B") ? 1.0 : 0;
        if (bytes > 0) {
            pm_fmt_bytes(mn * bytes, c1, sizeof c1);
            pm_fmt_bytes(sum / (double)k * bytes, c2, sizeof c2);
            pm_fmt_bytes(mx * bytes, c3, sizeof c3);
            pm_fmt_bytes(jv * bytes, c4, sizeof c4);
            snprintf(lab, sizeof lab, "%s", lf->label[0] ? lf->label : f->label);
        } else if (!strcmp(f->unit, "kWh") || !strcmp(f->unit, "J")) {
            /* Energies scaled from J to MWh (pm_fmt_energy, as --stats and --compare). */
            double j = !strcmp(f->unit, "kWh") ? 3.6e6 : 1.0;
            pm_fmt_energy(mn * j, c1, sizeof c1);
            pm_fmt_energy(sum / (double)k * j, c2, sizeof c2);
            pm_fmt_energy(mx * j, c3, sizeof c3);
            pm_fmt_energy(jv * j, c4, sizeof c4);
            snprintf(lab, sizeof lab, "%s", lf->label[0] ? lf->label : f->label);
        } else if (!strcmp(f->unit, "h") || !strcmp(f->unit, "s")) {
            /* Times (CPU hours too) scaled from s to h. */
            double secs = !strcmp(f->unit, "h") ? 3600.0 : 1.0;
            pm_fmt_duration(mn * secs, c1, sizeof c1);
            pm_fmt_duration(sum / (double)k * secs, c2, sizeof c2);
            pm_fmt_duration(mx * secs, c3, sizeof c3);
            pm_fmt_duration(jv * secs, c4, sizeof c4);
            snprintf(lab, sizeof lab, "%s", lf->label[0] ? lf->label : f->label);
        } else {
            num(mn * sc, c1, sizeof c1);
            num(sum / (double)k * sc, c2, sizeof c2);
            num(mx * sc, c3, sizeof c3);
            num(jv * sc, c4, sizeof c4);
            snprintf(lab, sizeof lab, "%s (%s)", lf->label[0] ? lf->label : f->label,
                     lf->unit[0] ? lf->unit : f->unit);
        }
        const char *cells[5] = {lab, c1, c2, c3, c4};
        table_row(d, &t, cells, (int)(i % 2));
    }
    d->y += 8;

    phase_use_table(d);

    /* Nodes that stand out, in both directions: the metrics whose busiest
     * node's mean is furthest above the per-node average, or whose least
     * busy node's is furthest below it (an idle node among many hardly
     * moves the maximum). */
    if (a->nhosts > 1) {
        subheading(d, "Nodes that stand out");
        int shown = 0;
        size_t used[5];
        for (int pick = 0; pick < 5; pick++) {
            double best = 1.15;
            size_t bm = SIZE_MAX;
            for (size_t m = 0; m < a->nmetrics; m++) {
                int dup = 0;
                for (int u = 0; u < pick; u++)
                    dup |= used[u] == m;
                const pm_metric_result *r = &a->metrics[m];
                if (dup || r->nhosts_with_data < 2 || !isfinite(r->imbalance) ||
                    strcmp(r->def->page, "quality") == 0)
                    continue;
                double lo = INFINITY;
                for (size_t h = 0; h < a->nhosts; h++)
                    if (r->host[h] && isfinite(r->host[h]->st.mean) && r->host[h]->st.mean < lo)
                        lo = r->host[h]->st.mean;
                double score = r->imbalance;
                if (lo > 0 && isfinite(lo) && r->avg_per_node / lo > score)
                    score = r->avg_per_node / lo;
                if (score > best) {
                    best = score;
                    bm = m;
                }
            }
            if (bm == SIZE_MAX)
                break;
            used[pick] = bm;
            const pm_metric_result *r = &a->metrics[bm];
            /* The hosts with the largest and the smallest mean. */
            size_t hm = 0, hl = 0;
            double hv = -INFINITY, lv = INFINITY;
            for (size_t h = 0; h < a->nhosts; h++) {
                if (!r->host[h] || !isfinite(r->host[h]->st.mean))
                    continue;
                if (r->host[h]->st.mean > hv) {
                    hv = r->host[h]->st.mean;
                    hm = h;
                }
                if (r->host[h]->st.mean < lv) {
                    lv = r->host[h]->st.mean;
                    hl = h;
                }
            }
            char v1[32], v2[32], v3[32];
            num(hv, v1, sizeof v1);
            num(r->avg_per_node, v2, sizeof v2);
            num(lv, v3, sizeof v3);
            const char *u = pm_unit_shown(r->def->unit), *g = *u ? " " : "";
            int wn = snprintf(buf, sizeof buf, "%s: %s averages %s%s%s against %s%s%s per node (x%.2f)",
                             r->def->name, a->hosts[hm].name, v1, g, u, v2, g, u, r->imbalance);
            if (wn > 0 && (size_t)wn < sizeof buf && hl != hm && lv * 1.15 < r->avg_per_node)
                snprintf(buf + wn, sizeof buf - (size_t)wn, "; %s only %s%s%s.", a->hosts[hl].name,
                         v3, g, u);
            else if (wn > 0 && (size_t)wn + 1 < sizeof buf)
                snprintf(buf + wn, sizeof buf - (size_t)wn, ".");
            paragraph(d, buf, 9);
            shown++;
        }
        if (!shown)
            paragraph(d, "No metric differs between nodes by more than 15%.", 9);
        d->y += 6;
    }

    subheading(d, "Efficiency notes");
    notes(d);
    d->y += 6;
    /* Contents: lines filled in with page numbers at the end. */
    subheading(d, "Contents");
    d->toc_page = d->page;
}

/* The full per-host data-quality table (up to PM_SPREAD_MIN_NODES nodes). */
static void quality_table(doc *d)
{
    const pm_analysis *a = d->a;
    static const double w[10] = {92, 44, 40, 44, 46, 44, 50, 50, 52, 49};
    static const int right[10] = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    static const char *const head[10] = {"Host", "Samples", "Interval s", "Dropped", "Repaired",
                                         "Gaps", "Clock off. s", "Sampler CPU%",
                                         "Sampler MiB", "Missed"};
    table t = {10, w, right, head, 7.5};
    table_head(d, &t);
    for (size_t h = 0; h < a->nhosts; h++) {
        pm_quality_row q;
        pm_quality_row_of(a, h, &q);
        char c[10][48];
        snprintf(c[0], 48, "%s", a->hosts[h].name);
        snprintf(c[1], 48, "%.0f", q.samples);
        num(q.interval_s, c[2], 48);
        snprintf(c[3], 48, "%.0f", q.dropped);
        snprintf(c[4], 48, "%.0f", q.repaired);
        snprintf(c[5], 48, "%.0f", q.gaps);
        num(q.clock_offset_s, c[6], 48);
        num(q.sampler_cpu_pct, c[7], 48);
        num(q.sampler_mib, c[8], 48);
        num(q.missed, c[9], 48);
        const char *cells[10];
        for (int i = 0; i < 10; i++)
            cells[i] = c[i];
        table_row(d, &t, cells, (int)(h % 2));
    }
}

/* A distribution table: one row per column, its min, p5, median, p95 and
 * max across the nodes. */
static const double spread_w[6] = {171, 68, 68, 68, 68, 68};
static const int spread_right[6] = {0, 1, 1, 1, 1, 1};
static const char *const spread_head[6] = {"Across nodes", "Min", "5th pct", "Median", "95th pct",
                                           "Max"};

static void spread_row(doc *d, const table *t, const char *label, const double *v, size_t n,
                       int shade)
{
    pm_spread sp;
    if (pm_spread_of(v, n, &sp) != 0) {
        d->oom = 1;
        return;
    }
    if (sp.n == 0)
        return;
    char c[5][48];
    num(sp.min, c[0], 48);
    num(sp.p5, c[1], 48);
    num(sp.median, c[2], 48);
    num(sp.p95, c[3], 48);
    num(sp.max, c[4], 48);
    const char *cells[6] = {label, c[0], c[1], c[2], c[3], c[4]};
    table_row(d, t, cells, shade);
}

/* Nodes at one end of a ranking, each with its reason. */
static void outlier_table(doc *d, const char *title, const pm_node_rank *r, size_t n)
{
    static const double w[2] = {92, CONTENT_W - 92};
    static const int right[2] = {0, 0};
    const char *head[2] = {"Node", title};
    table t = {2, w, right, head, 7.5};
    table_head(d, &t);
    for (size_t i = 0; i < n; i++) {
        const char *cells[2] = {d->a->hosts[r[i].host].name, r[i].reason};
        table_row(d, &t, cells, (int)(i % 2));
    }
}

/* Many nodes: the distribution of each data-quality column and the nodes
 * with something wrong; the full table is in the attached JSON. */
static void quality_spread(doc *d)
{
    const pm_analysis *a = d->a;
    size_t n = a->nhosts;
    double *col = pm_alloc_array(10 * n, sizeof *col);
    if (!col) {
        d->oom = 1;
        return;
    }
    for (size_t h = 0; h < n; h++) {
        pm_quality_row q;
        pm_quality_row_of(a, h, &q);
        const double v[10] = {q.samples, q.lost, q.interval_s, q.dropped, q.repaired, q.gaps,
                              q.clock_offset_s, q.sampler_cpu_pct, q.sampler_mib, q.missed};
        for (int k = 0; k < 10; k++)
            col[(size_t)k * n + h] = v[k];
    }
    static const char *const label[10] = {"Samples", "Samples lost", "Interval s",
                                          "Dropped (time not increasing)", "Values repaired",
                                          "Missing values", "Clock offset s", "Sampler CPU %",
                                          "Sampler peak MiB", "Samples missed by the sampler"};
    table t = {6, spread_w, spread_right, spread_head, 7.5};
    table_head(d, &t);
    for (int k = 0; k < 10; k++)
        spread_row(d, &t, label[k], col + (size_t)k * n, n, k % 2);
    free(col);
    d->y += 8;
    pm_node_rank worst[PM_SPREAD_OUTLIERS];
    size_t nbad = 0;
    size_t nw = pm_quality_worst(a, worst, PM_SPREAD_OUTLIERS, &nbad);
    char buf[400];
    if (nw) {
        outlier_table(d, "Worst nodes: what their profile lacks or had mended", worst, nw);
        d->y += 4;
        char which[64] = "";
        if (nw < nbad)
            snprintf(which, sizeof which, " (the %zu worst above)", nw);
        snprintf(buf, sizeof buf, "%zu of %zu nodes %s something to report%s; the other %zu "
                 "%s every sample, no correction and a clock within a second.", nbad, n,
                 nbad == 1 ? "has" : "have", which, n - nbad, n - nbad == 1 ? "has" : "have");
    } else {
        snprintf(buf, sizeof buf, "All %zu nodes have every sample, no correction and a clock "
                 "within a second.", n);
    }
    paragraph(d, buf, 8.5);
    paragraph(d, "Every node's row is in the attached perfmon-stats.json and in perfmon-analyze "
                 "--stats.", 8.5);
}

static void quality_page(doc *d)
{
    const pm_analysis *a = d->a;
    new_page(d);
    heading(d, "Data quality", 1);
    if (a->nhosts > PM_SPREAD_MIN_NODES) {
        char buf[400];
        snprintf(buf, sizeof buf, "Over the %zu nodes: samples analysed, samples the job's span "
                 "should hold but a node lacks, samples dropped, values repaired, missing values, "
                 "the offset of each node's clock against the others, and what the sampler itself "
                 "cost; then the nodes with something wrong.", a->nhosts);
        paragraph(d, buf, 8.5);
        d->y += 4;
        quality_spread(d);
    } else {
        paragraph(d, "Per node: samples analysed, samples dropped for a non-increasing timestamp, "
                     "values repaired (counter resets), missing values, the estimated offset of the "
                     "node's clock against the others, and what the sampler itself cost.", 8.5);
        d->y += 4;
        quality_table(d);
    }
    d->y += 10;
    int any = 0;
    for (size_t m = 0; m < a->nmetrics; m++) {
        const pm_metric_result *r = &a->metrics[m];
        if (r->repaired || r->wraps || r->qc.n[PM_Q_DROPPED])
            any = 1;
    }
    subheading(d, "Metrics with corrected values");
    if (!any) {
        paragraph(d, "No counter wrapped or reset: every plotted value is as recorded.", 8.5);
    } else {
        static const double w2[5] = {191, 80, 80, 80, 80};
        static const int r2[5] = {0, 1, 1, 1, 1};
        static const char *const h2[5] = {"Metric", "Repaired", "Wraps", "Dropped",
                                          "Interpolated"};
        table t2 = {5, w2, r2, h2, 8};
        table_head(d, &t2);
        size_t row = 0;
        for (size_t m = 0; m < a->nmetrics; m++) {
            const pm_metric_result *r = &a->metrics[m];
            if (!(r->repaired || r->wraps || r->qc.n[PM_Q_DROPPED]))
                continue;
            char c[5][64];
            snprintf(c[0], 64, "%s", r->def->name);
            snprintf(c[1], 64, "%zu", r->repaired);
            snprintf(c[2], 64, "%zu", r->wraps);
            snprintf(c[3], 64, "%llu", (unsigned long long)r->qc.n[PM_Q_DROPPED]);
            snprintf(c[4], 64, "%zu", r->agg.interpolated);
            const char *cells[5] = {c[0], c[1], c[2], c[3], c[4]};
            table_row(d, &t2, cells, (int)(row++ % 2));
        }
    }
    if (a->nwarnings) {
        d->y += 8;
        subheading(d, "Input problems");
        for (size_t i = 0; i < a->nwarnings && i < 60; i++)
            paragraph(d, a->warnings[i], 7.5);
        if (a->nwarnings > 60) {
            char buf[64];
            snprintf(buf, sizeof buf, "... and %zu more.", a->nwarnings - 60);
            paragraph(d, buf, 7.5);
        }
    }
}

/* One line of hardware description per host, folded when identical. */
static void hardware_page(doc *d)
{
    const pm_analysis *a = d->a;
    /* Below the data-quality table when it leaves room (it does up to
     * some 40 nodes): a page less to turn. */
    if (d->y + 140 > PAGE_H - BOTTOM)
        new_page(d);
    else
        d->y += 14;
    heading(d, "Hardware", 1);
    static const double w[6] = {150, 66, 56, 88, 118, 33};
    static const int right[6] = {0, 0, 1, 0, 0, 1};
    static const char *const head[6] = {"CPU", "Sockets x cores", "Memory GiB", "Kernel",
                                        "OS / interconnect / RAPL", "Nodes"};
    table t = {6, w, right, head, 7.5};
    table_head(d, &t);
    char (*rows)[6][160] = calloc(a->nhosts ? a->nhosts : 1, sizeof *rows);
    size_t *count = calloc(a->nhosts ? a->nhosts : 1, sizeof *count);
    char **first = calloc(a->nhosts ? a->nhosts : 1, sizeof *first);
    size_t nrows = 0;
    if (!rows || !count || !first) {
        d->oom = 1;
        free(rows);
        free(count);
        free(first);
        return;
    }
    for (size_t h = 0; h < a->nhosts; h++) {
        char r[6][160];
        memset(r, 0, sizeof r);
        const pm_profile *p = a->hosts[h].prof;
        cJSON *j = p && p->meta_json ? cJSON_Parse(p->meta_json) : NULL;
        const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(j, "cpu");
        const cJSON *x;
        snprintf(r[0], 160, "%s", "unknown");
        if ((x = cJSON_GetObjectItemCaseSensitive(cpu, "model_name")) && cJSON_IsString(x))
            snprintf(r[0], 160, "%s", x->valuestring);
        const cJSON *so = cJSON_GetObjectItemCaseSensitive(cpu, "sockets");
        const cJSON *co = cJSON_GetObjectItemCaseSensitive(cpu, "cores");
        const cJSON *th = cJSON_GetObjectItemCaseSensitive(cpu, "threads");
        if (cJSON_IsNumber(so) && cJSON_IsNumber(co))
            snprintf(r[1], 160, "%d x %d (%d thr)", so->valueint,
                     so->valueint ? co->valueint / so->valueint : co->valueint,
                     cJSON_IsNumber(th) ? th->valueint : 0);
        else
            snprintf(r[1], 160, "-");
        num(a->hosts[h].mem_total / 1073741824.0, r[2], 160);
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "kernel")) && cJSON_IsString(x))
            snprintf(r[3], 160, "%s", x->valuestring);
        const cJSON *os = cJSON_GetObjectItemCaseSensitive(j, "os");
        const cJSON *ib = cJSON_GetObjectItemCaseSensitive(j, "infiniband_ports");
        const cJSON *rapl = cJSON_GetObjectItemCaseSensitive(j, "rapl_domains");
        snprintf(r[4], 160, "%s; IB ports %d; RAPL %d", cJSON_IsString(os) ? os->valuestring : "-",
                 cJSON_IsArray(ib) ? cJSON_GetArraySize(ib) : 0,
                 cJSON_IsArray(rapl) ? cJSON_GetArraySize(rapl) : 0);
        if (!j)
            snprintf(r[4], 160, "no metadata (%s input)", a->hosts[h].format);
        cJSON_Delete(j);
        size_t k;
        for (k = 0; k < nrows; k++)
            if (memcmp(rows[k], r, sizeof r) == 0)
                break;
        if (k == nrows) {
            memcpy(rows[nrows], r, sizeof r);
            first[nrows] = a->hosts[h].name;
            nrows++;
        }
        count[k]++;
    }
    /* The commonest configurations first, at most HW_MAX_ROWS of them: a
     * job on many nodes gets a few lines, not one per node. */
    size_t shown = 0, rest = 0;
    for (size_t r = 0; r < nrows; r++) {
        size_t k = 0;
        for (size_t j = 1; j < nrows; j++)
            if (count[j] > count[k])
                k = j;
        if (r < HW_MAX_ROWS) {
            char n[32];
            snprintf(n, sizeof n, "%zu", count[k]);
            const char *cells[6] = {rows[k][0], rows[k][1], rows[k][2], rows[k][3], rows[k][4], n};
            table_row(d, &t, cells, (int)(r % 2));
            shown++;
        } else {
            rest += count[k];
        }
        count[k] = 0;
    }
    d->y += 6;
    char buf[256];
    if (shown < nrows)
        snprintf(buf, sizeof buf, "%zu distinct configurations over %zu nodes; the %zu above "
                 "cover %zu nodes, %zu more configurations the other %zu.", nrows, a->nhosts,
                 shown, a->nhosts - rest, nrows - shown, rest);
    else
        snprintf(buf, sizeof buf, "%zu distinct configuration%s over %zu node%s.", nrows,
                 nrows == 1 ? "" : "s", a->nhosts, a->nhosts == 1 ? "" : "s");
    paragraph(d, buf, 8.5);
    free(rows);
    free(count);
    free(first);
}

/* ---- plot pages: rendered by workers ahead of the layout ---------------- */

/* One image of the plot pages, in page order. */
typedef struct plot_item {
    size_t group;          /* layout group, or SIZE_MAX for a colour map */
    size_t metric;
    int all;               /* all-node chart (1) or per-node (0) */
    double w, h;           /* size on the page, points */
    /* Set by the worker: */
    int state;             /* 0 waiting, 1 rendering, 2 done */
    int rc;                /* 0, PM_ENOENT (nothing to draw) or an error */
    pm_canvas *cv;
} plot_item;

typedef struct plot_queue {
    const pm_analysis *a;
    int elapsed;
    plot_item *items;
    size_t n;
    size_t next;           /* next item for a worker */
    size_t consumed;       /* items the layout has taken */
    size_t ahead;          /* how far workers may render ahead (memory bound) */
    int stop;
    pthread_mutex_t lock;
    pthread_cond_t cond;
} plot_queue;

static void render_item(const plot_queue *q, plot_item *it)
{
    pm_error err;
    if (it->group != SIZE_MAX) {
        pm_chart c;
        int rc = pm_chart_build(q->a, it->metric, it->all, q->elapsed, &c, &err);
        if (rc) {
            it->rc = rc;
            return;
        }
        it->cv = render_canvas(draw_chart, &c.plot, it->w, it->h);
        pm_chart_free(&c);
    } else {
        pm_heatmap_data hd;
        if (pm_heatmap_build(q->a, it->metric, q->elapsed, 1200, &hd, &err) != 0) {
            it->rc = PM_ENOENT;
            return;
        }
        it->cv = render_canvas(draw_heat, &hd.hm, it->w, it->h);
        pm_heatmap_data_free(&hd);
    }
    it->rc = it->cv ? 0 : PM_ENOMEM;
}

static void *plot_worker(void *arg)
{
    plot_queue *q = arg;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (!q->stop && q->next < q->n && q->next >= q->consumed + q->ahead)
            pthread_cond_wait(&q->cond, &q->lock);
        if (q->stop || q->next >= q->n)
            break;
        plot_item *it = &q->items[q->next++];
        it->state = 1;
        pthread_mutex_unlock(&q->lock);
        render_item(q, it);
        pthread_mutex_lock(&q->lock);
        it->state = 2;
        pthread_cond_broadcast(&q->cond);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

/* Item i, rendered.  While a worker is still drawing it, the layout
 * thread draws the next untaken item instead of waiting idle. */
static plot_item *take_item(plot_queue *q, size_t i)
{
    plot_item *it = &q->items[i];
    pthread_mutex_lock(&q->lock);
    while (it->state != 2) {
        if (q->next < q->n && (q->next == i || q->next < i + q->ahead)) {
            plot_item *mine = &q->items[q->next++];
            mine->state = 1;
            pthread_mutex_unlock(&q->lock);
            render_item(q, mine);
            pthread_mutex_lock(&q->lock);
            mine->state = 2;
            pthread_cond_broadcast(&q->cond);
            continue;
        }
        pthread_cond_wait(&q->cond, &q->lock);
    }
    q->consumed = i + 1;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
    return it;
}

static int metric_in_group(const pm_metric_result *r, const char *page)
{
    return strcmp(r->def->page, page) == 0;
}

/* Flat within noise: every node's series stays within this fraction of
 * its largest magnitude (an all-zero series is flat). */
#define FLAT_REL 1e-3

/* Whether every node's series of r is flat; lo..hi: the range of the
 * nodes' levels.  A metric without a finite value is not constant (it has
 * no data). */
static int metric_constant(const pm_metric_result *r, size_t nhosts, double *lo, double *hi)
{
    int any = 0;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t h = 0; h < nhosts; h++) {
        const pm_series *s = r->host[h];
        if (!s)
            continue;
        double mn = INFINITY, mx = -INFINITY;
        for (size_t i = 0; i < s->n; i++) {
            double v = s->v[i];
            if (!isfinite(v))
                continue;
            if (v < mn)
                mn = v;
            if (v > mx)
                mx = v;
        }
        if (!(mx >= mn))
            continue;
        if (mx - mn > FLAT_REL * fmax(fabs(mn), fabs(mx)))
            return 0;
        any = 1;
        if (mn < *lo)
            *lo = mn;
        if (mx > *hi)
            *hi = mx;
    }
    return any;
}

typedef struct flat_metric {
    size_t metric, group;
    double lo, hi;
} flat_metric;

/* One row per constant metric instead of its plots, then the sections
 * the job has no data for, on one line. */
static void constant_table(doc *d, const flat_metric *fl, size_t nfl, const char *missing)
{
    const pm_analysis *a = d->a;
    if (nfl) {
        if (d->y + 80 > PAGE_H - BOTTOM)
            new_page(d);
        else
            d->y += 6;
        heading(d, "Constant over the job", 1);
        paragraph(d, "Each of these metrics stayed flat (within 0.1 % on every node) for the whole "
                     "job, so it is given as a number instead of a plot.", 8.5);
        d->y += 4;
        static const double w[4] = {110, 200, 131, 70};
        static const int right[4] = {0, 0, 1, 1};
        static const char *const head[4] = {"Section", "Metric", "Value", "Nodes"};
        table t = {4, w, right, head, 8};
        table_head(d, &t);
        for (size_t i = 0; i < nfl; i++) {
            const pm_metric_result *r = &a->metrics[fl[i].metric];
            const char *u = strcmp(r->def->unit, "1") == 0 ? "" : r->def->unit;
            char v1[32], v2[32], val[96], nodes[48];
            pm_fmt_title_num(fl[i].lo, v1, sizeof v1);
            pm_fmt_title_num(fl[i].hi, v2, sizeof v2);
            if (strcmp(v1, v2) == 0)
                snprintf(val, sizeof val, "%s%s%s", v1, *u ? " " : "", u);
            else
                snprintf(val, sizeof val, "%s to %s%s%s", v1, v2, *u ? " " : "", u);
            snprintf(nodes, sizeof nodes, "%zu of %zu", r->nhosts_with_data, a->nhosts);
            const char *cells[4] = {d->l->groups[fl[i].group].title, r->def->name, val, nodes};
            table_row(d, &t, cells, (int)(i % 2));
        }
        d->y += 6;
    }
    if (*missing) {
        char line[600];
        snprintf(line, sizeof line, "No data on this job for: %s.", missing);
        if (!nfl)
            d->y += 6;
        paragraph(d, line, 8.5);
    }
}

/* The plot pages in the layout's order: per group all-node charts, then
 * per-node charts, plots_per_page to a page; then the colour maps.  A
 * metric of one node gets its per-node chart only (the all-node one would
 * be the same curve), a constant metric a table row instead of plots. */
static int plot_pages(doc *d, pm_error *err)
{
    const pm_analysis *a = d->a;
    int ppp = d->l->plots_per_page;
    double avail = PAGE_H - TOP - BOTTOM - 30;
    double slot = avail / ppp;
    size_t cap = 2 * a->nmetrics * (d->l->ngroups ? d->l->ngroups : 1) + d->l->nheatmaps + 1;
    plot_queue q;
    memset(&q, 0, sizeof q);
    q.a = a;
    q.elapsed = d->o->elapsed;
    q.items = calloc(cap, sizeof *q.items);
    flat_metric *fl = calloc(a->nmetrics ? a->nmetrics : 1, sizeof *fl);
    char *flat = calloc(a->nmetrics ? a->nmetrics : 1, 1);
    if (!q.items || !fl || !flat) {
        free(q.items);
        free(fl);
        free(flat);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    size_t nfl = 0;
    char missing[512] = "";
    for (size_t g = 0; g < d->l->ngroups; g++) {
        int seen = 0;
        for (size_t m = 0; m < a->nmetrics; m++) {
            const pm_metric_result *r = &a->metrics[m];
            if (!metric_in_group(r, d->l->groups[g].page) || r->nhosts_with_data == 0)
                continue;
            seen = 1;
            double lo, hi;
            if (metric_constant(r, a->nhosts, &lo, &hi)) {
                flat[m] = 1;
                fl[nfl++] = (flat_metric){m, g, lo, hi};
            }
        }
        if (!seen) {
            size_t ml = strlen(missing);
            snprintf(missing + ml, sizeof missing - ml, "%s%s", ml ? ", " : "", d->l->groups[g].title);
        }
    }
    for (size_t g = 0; g < d->l->ngroups; g++)
        for (int all = 1; all >= 0; all--)
            for (size_t m = 0; m < a->nmetrics; m++)
                if (metric_in_group(&a->metrics[m], d->l->groups[g].page) && !flat[m] &&
                    !(all && a->metrics[m].nhosts_with_data <= 1))
                    q.items[q.n++] = (plot_item){g, m, all, CONTENT_W, slot - 8, 0, 0, NULL};
    if (a->nhosts > PM_HEATMAP_MIN_HOSTS)
        for (size_t i = 0; i < d->l->nheatmaps; i++) {
            int m = pm_analysis_metric(a, d->l->heatmaps[i]);
            /* A flat metric is a row of the constant table, not a map. */
            if (m >= 0 && !flat[m])
                q.items[q.n++] = (plot_item){SIZE_MAX, (size_t)m, 0, CONTENT_W, (avail - 10) / 2,
                                             0, 0, NULL};
        }
    size_t nt = pm_thread_count(q.n);
    q.ahead = 4 * (nt ? nt : 1);
    pthread_mutex_init(&q.lock, NULL);
    pthread_cond_init(&q.cond, NULL);
    pthread_t th[64];
    size_t started = 0;
    for (size_t i = 1; i < nt && started < 64; i++)
        if (pthread_create(&th[started], NULL, plot_worker, &q) == 0)
            started++;

    int rc = 0, placed = 0;
    size_t cur_group = SIZE_MAX - 1;
    int cur_all = -1;
    int heat_first = 1;
    for (size_t i = 0; i < q.n && rc == 0; i++) {
        plot_item *it = take_item(&q, i);
        if (it->rc == PM_ENOENT)
            continue;
        if (it->rc) {
            rc = pm_error_set(err, it->rc, "cannot draw the %s %s", a->metrics[it->metric].def->id,
                              it->group == SIZE_MAX ? "colour map" : "plot");
            break;
        }
        if (it->group != SIZE_MAX) {
            int first = it->group != cur_group || it->all != cur_all;
            /* A new section starts under the last one when its heading and
             * first plot fit there: no page with one plot and a blank half. */
            if (first && placed > 0 && placed < ppp && d->y + 24 + it->h + 8 <= PAGE_H - BOTTOM) {
                d->y += 4;
                char title[160];
                snprintf(title, sizeof title, "%s: %s", d->l->groups[it->group].title,
                         it->all ? "all nodes" : "per node");
                heading(d, title, 1);
                cur_group = it->group;
                cur_all = it->all;
            } else if (first || placed == ppp || d->y + it->h > PAGE_H - BOTTOM) {
                new_page(d);
                char title[160];
                snprintf(title, sizeof title, "%s: %s%s", d->l->groups[it->group].title,
                         it->all ? "all nodes" : "per node", first ? "" : " (continued)");
                heading(d, title, first);
                placed = 0;
                cur_group = it->group;
                cur_all = it->all;
            }
        } else if (heat_first || placed == 2) {
            new_page(d);
            heading(d, heat_first ? "Imbalance: time x node" : "Imbalance: time x node (continued)",
                    heat_first);
            placed = 0;
            heat_first = 0;
            cur_group = SIZE_MAX;
        }
        rc = place_canvas(d, it->cv, it->h);
        pm_canvas_free(it->cv);
        it->cv = NULL;
        if (rc)
            rc = pm_error_set(err, rc, "cannot place the %s plot (PDF library error 0x%04X, "
                              "detail %u)", a->metrics[it->metric].def->id,
                              (unsigned)d->hpdf_error, (unsigned)d->hpdf_detail);
        d->y += it->group == SIZE_MAX ? 10 : 8;
        placed++;
    }
    pthread_mutex_lock(&q.lock);
    q.stop = 1;
    pthread_cond_broadcast(&q.cond);
    pthread_mutex_unlock(&q.lock);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    for (size_t i = 0; i < q.n; i++)
        pm_canvas_free(q.items[i].cv);
    free(q.items);
    pthread_cond_destroy(&q.cond);
    pthread_mutex_destroy(&q.lock);
    if (rc == 0)
        constant_table(d, fl, nfl, missing);
    free(fl);
    free(flat);
    return rc;
}

/* The phases: a timeline of every node's phases, the per-kind table and
 * the marks that did not pair. */
static int phases_page(doc *d, pm_error *err)
{
    const pm_analysis *a = d->a;
    const pm_phase_stats *st = a->phase_stats;
    if (!st || a->phases.n == 0)
        return 0;
    const pm_phase_set *ps = &a->phases;
    const char **rows = pm_alloc_array(ps->n + a->nhosts, sizeof *rows);
    const char **kinds = pm_alloc_array(st->nkinds, sizeof *kinds);
    pm_timeline_bar *bars = pm_alloc_array(ps->n, sizeof *bars);
    if (!rows || !kinds || !bars) {
        free(rows);
        free(kinds);
        free(bars);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    /* Rows: the analysis hosts that have phases, in host order, then the
     * hosts only phases name (Scanner nodes). */
    size_t nrows = 0;
    for (size_t h = 0; h < a->nhosts; h++)
        for (size_t i = 0; i < ps->n; i++)
            if (strcmp(ps->v[i].host, a->hosts[h].name) == 0) {
                rows[nrows++] = a->hosts[h].name;
                break;
            }
    double t0 = a->t_start, t1 = a->t_end;
    for (size_t i = 0; i < ps->n; i++) {
        const pm_phase *p = &ps->v[i];
        size_t r;
        for (r = 0; r < nrows; r++)
            if (strcmp(rows[r], p->host) == 0)
                break;
        if (r == nrows)
            rows[nrows++] = p->host;
        size_t k;
        for (k = 0; k < st->nkinds; k++)
            if (strcmp(st->kinds[k].name, p->name) == 0)
                break;
        bars[i] = (pm_timeline_bar){r, k, p->t0, p->t1};
        t0 = fmin(t0, p->t0);
        t1 = fmax(t1, p->t1);
    }
    for (size_t k = 0; k < st->nkinds; k++)
        kinds[k] = st->kinds[k].name;
    pm_timeline tl = {"Phases per node", d->o->elapsed ? PM_AXIS_ELAPSED : PM_AXIS_CLOCK,
                      a->t_start, t0, t1, rows, nrows, kinds, st->nkinds, bars, ps->n};
    new_page(d);
    heading(d, "Phases", 1);
    double h = fmin(PAGE_H - TOP - BOTTOM - 230, 140 + 9.0 * (double)nrows);
    pm_canvas *cv = render_canvas(draw_timeline, &tl, CONTENT_W, h);
    int rc = cv ? place_canvas(d, cv, h) : PM_ENOMEM;
    pm_canvas_free(cv);
    free(rows);
    free(kinds);
    free(bars);
    if (rc)
        return pm_error_set(err, rc, "cannot draw the phase timeline");
    d->y += 10;
    static const double w[7] = {131, 50, 50, 70, 70, 70, 70};
    static const int right[7] = {0, 1, 1, 1, 1, 1, 1};
    static const char *const head[7] = {"Phase", "Nodes", "Count", "Total s", "Avg/node s",
                                        "Max/node s", "Start spread s"};
    table t = {7, w, right, head, 8};
    table_head(d, &t);
    for (size_t k = 0; k < st->nkinds; k++) {
        const pm_phase_kind_stats *ks = &st->kinds[k];
        char c[7][64];
        snprintf(c[0], 64, "%s", ks->name);
        snprintf(c[1], 64, "%zu", ks->hosts);
        snprintf(c[2], 64, "%zu", ks->count);
        num(ks->total_s, c[3], 64);
        num(ks->avg_host_s, c[4], 64);
        num(ks->max_host_s, c[5], 64);
        num(ks->start_spread_s, c[6], 64);
        const char *cells[7] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
        table_row(d, &t, cells, (int)(k % 2));
    }
    if (ps->nproblems) {
        d->y += 8;
        subheading(d, "Marks that did not pair");
        for (size_t i = 0; i < ps->nproblems && i < 30; i++)
            paragraph(d, ps->problems[i], 8);
        if (ps->nproblems > 30) {
            char buf[64];
            snprintf(buf, sizeof buf, "... and %zu more.", ps->nproblems - 30);
            paragraph(d, buf, 8);
        }
    }
    return 0;
}

static void figure_head(const pm_figure *f, char *out, size_t cap)
{
    if (strcmp(f->unit, "1") == 0)
        snprintf(out, cap, "%s", f->title);
    else
        snprintf(out, cap, "%s (%s)", f->title, f->unit);
}

/* Few nodes: one row per figure, one column per node (and the job). */
static void statistics_by_figure(doc *d)
{
    const pm_analysis *a = d->a;
    size_t nh = a->nhosts;
    double w[2 + STATS_MAX_COLS];
    int right[2 + STATS_MAX_COLS];
    const char *head[2 + STATS_MAX_COLS];
    w[0] = 171;
    right[0] = 0;
    head[0] = "Figure";
    for (size_t h = 0; h < nh; h++) {
        w[1 + h] = fmin(90, (CONTENT_W - 171) / (double)(nh + 1));
        right[1 + h] = 1;
        head[1 + h] = a->hosts[h].name;
    }
    w[1 + nh] = w[1];
    right[1 + nh] = 1;
    head[1 + nh] = "Job";
    table t = {2 + nh, w, right, head, 7.5};
    table_head(d, &t);
    for (size_t i = 0; i < PM_NFIGURES; i++) {
        const pm_figure *f = &PM_FIGURES[i];
        char c[2 + STATS_MAX_COLS][64];
        const char *cells[2 + STATS_MAX_COLS];
        figure_head(f, c[0], sizeof c[0]);
        for (size_t h = 0; h < nh; h++)
            num(pm_figure_value(&a->nodes[h], f), c[1 + h], sizeof c[0]);
        num(pm_figure_value(&a->job, f), c[1 + nh], sizeof c[0]);
        for (size_t k = 0; k < 2 + nh; k++)
            cells[k] = c[k];
        table_row(d, &t, cells, (int)(i % 2));
    }
}

/* Many nodes: one row per node, the figures in blocks of columns. */
static void statistics_by_node(doc *d)
{
    const pm_analysis *a = d->a;
    const size_t per = STATS_MAX_COLS;
    for (size_t f0 = 0; f0 < PM_NFIGURES; f0 += per) {
        size_t nf = PM_NFIGURES - f0 < per ? PM_NFIGURES - f0 : per;
        double w[1 + STATS_MAX_COLS];
        int right[1 + STATS_MAX_COLS];
        const char *head[1 + STATS_MAX_COLS];
        char heads[STATS_MAX_COLS][96];
        w[0] = 91;
        right[0] = 0;
        head[0] = "Host";
        for (size_t i = 0; i < nf; i++) {
            w[1 + i] = (CONTENT_W - 91) / (double)per;
            right[1 + i] = 1;
            figure_head(&PM_FIGURES[f0 + i], heads[i], sizeof heads[i]);
            head[1 + i] = heads[i];
        }
        table t = {1 + nf, w, right, head, 7};
        table_head(d, &t);
        for (size_t h = 0; h <= a->nhosts; h++) {
            /* The last row is the job. */
            const pm_node_summary *s = h < a->nhosts ? &a->nodes[h] : &a->job;
            char c[1 + STATS_MAX_COLS][48];
            const char *cells[1 + STATS_MAX_COLS];
            snprintf(c[0], 48, "%s", h < a->nhosts ? a->hosts[h].name : "Job");
            cells[0] = c[0];
            for (size_t i = 0; i < nf; i++) {
                num(pm_figure_value(s, &PM_FIGURES[f0 + i]), c[1 + i], 48);
                cells[1 + i] = c[1 + i];
            }
            table_row(d, &t, cells, (int)(h % 2));
        }
        d->y += 10;
    }
}

/* Many nodes: each figure's distribution across the nodes and the job's
 * value, then the least and the most busy nodes with the reason; every
 * node's row stays in the attached JSON and --stats. */
static void statistics_spread(doc *d)
{
    const pm_analysis *a = d->a;
    size_t n = a->nhosts;
    double *v = pm_alloc_array(n ? n : 1, sizeof *v);
    if (!v) {
        d->oom = 1;
        return;
    }
    static const double w[7] = {155, 57, 57, 57, 57, 57, 71};
    static const int right[7] = {0, 1, 1, 1, 1, 1, 1};
    static const char *const head[7] = {"Figure", "Min", "5th pct", "Median", "95th pct", "Max",
                                        "Job"};
    table t = {7, w, right, head, 7.5};
    table_head(d, &t);
    size_t row = 0;
    for (size_t i = 0; i < PM_NFIGURES; i++) {
        const pm_figure *f = &PM_FIGURES[i];
        for (size_t h = 0; h < n; h++)
            v[h] = pm_figure_value(&a->nodes[h], f);
        pm_spread sp;
        if (pm_spread_of(v, n, &sp) != 0) {
            d->oom = 1;
            break;
        }
        if (sp.n == 0)
            continue;
        char c[7][64];
        const double vals[6] = {sp.min, sp.p5, sp.median, sp.p95, sp.max,
                                pm_figure_value(&a->job, f)};
        /* Bytes scaled to their size, each on its own (as the key figures). */
        double bytes = !strcmp(f->unit, "MiB") ? 1048576.0 : !strcmp(f->unit, "B") ? 1.0 : 0;
        if (bytes > 0)
            snprintf(c[0], sizeof c[0], "%s", f->title);
        else
            figure_head(f, c[0], sizeof c[0]);
        for (int k = 0; k < 6; k++) {
            if (bytes > 0 && isfinite(vals[k]))
                pm_fmt_bytes(vals[k] * bytes, c[1 + k], 64);
            else
                num(vals[k], c[1 + k], 64);
        }
        const char *cells[7] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
        table_row(d, &t, cells, (int)(row++ % 2));
    }
    free(v);
    d->y += 8;
    pm_node_rank worst[PM_SPREAD_OUTLIERS], best[PM_SPREAD_OUTLIERS];
    size_t nw = 0, nb = 0;
    if (pm_usage_outliers(a, worst, &nw, best, &nb, PM_SPREAD_OUTLIERS) != 0) {
        d->oom = 1;
        return;
    }
    if (nw) {
        char title[96];
        snprintf(title, sizeof title, "The %zu least busy nodes (most idle time first; idle: "
                 "CPU below %.0f %%)", nw, PM_IDLE_BELOW_PCT);
        outlier_table(d, title, worst, nw);
        d->y += 8;
    }
    if (nb) {
        char title[96];
        snprintf(title, sizeof title, "The %zu busiest nodes", nb);
        outlier_table(d, title, best, nb);
        d->y += 8;
    }
}

static void statistics_pages(doc *d)
{
    new_page(d);
    heading(d, "Statistics per node", 1);
    if (d->a->nhosts > PM_SPREAD_MIN_NODES)
        paragraph(d, "The per-node figures of perfmon-analyze --stats as their distribution "
                     "across the nodes (every node's value is in the attached perfmon-stats.json "
                     "and in --stats); the job column sums, averages or takes the maximum as each "
                     "figure requires (see docs/analysis.md).",
                  8.5);
    else
        paragraph(d, "The per-node figures of perfmon-analyze --stats, the same numbers as the "
                     "attached perfmon-stats.json; the job column sums, averages or takes the "
                     "maximum as each figure requires (see docs/analysis.md).",
                  8.5);
    d->y += 4;
    if (d->a->nhosts <= STATS_MAX_COLS - 1)
        statistics_by_figure(d);
    else if (d->a->nhosts <= PM_SPREAD_MIN_NODES)
        statistics_by_node(d);
    else
        statistics_spread(d);
}

/* ---- comparison with another job (--compare) ----------------------------- */

static int verdict_rank(int v)
{
    /* Plotted in this order: worse, better, changed, noise, same (missing: nothing to overlay). */
    static const int rank[] = {4, 3, 2, 1, 0, 5};
    return v >= 0 && v <= PM_VERDICT_MISSING ? rank[v] : 7;
}

static void compare_table(doc *d, const pm_comparison *c)
{
    static const double w[6] = {181, 48, 74, 74, 58, 76};
    static const int right[6] = {0, 0, 1, 1, 1, 0};
    static const char *const head[6] = {"Figure or metric", "Unit", "A", "B", "B - A", "Verdict"};
    table t = {6, w, right, head, 8};
    table_head(d, &t);
    int shade = 0;
    size_t hidden = 0;
    for (size_t i = 0; i < c->nrows; i++) {
        const pm_compare_row *r = &c->rows[i];
        if (r->kind == PM_CMP_PHASE_METRIC && r->verdict == PM_VERDICT_SAME) {
            hidden++;
            continue;
        }
        char name[200], ca[48], cb[48], cp[48];
        if (r->phase[0])
            snprintf(name, sizeof name, "%s: %s", r->phase, r->name);
        else
            snprintf(name, sizeof name, "%s", r->name);
        /* Bytes as MiB: ten-digit byte counts do not read. */
        int bytes = strcmp(r->unit, "B") == 0;
        double sc = bytes ? 1.0 / 1048576 : 1;
        num(r->a.mean * sc, ca, sizeof ca);
        num(r->b.mean * sc, cb, sizeof cb);
        pm_compare_pct_text(r->pct, cp, sizeof cp);
        const char *cells[6] = {name, bytes ? "MiB" : pm_unit_shown(r->unit), ca, cb, cp,
                                pm_verdict_name(r->verdict)};
        table_row(d, &t, cells, shade);
        shade = !shade;
    }
    if (hidden) {
        char buf[160];
        snprintf(buf, sizeof buf, "%zu resource figures during phases are within the threshold "
                 "and not listed.", hidden);
        d->y += 4;
        paragraph(d, buf, 8);
    }
}

/* The comparison section: both jobs, the verdict, the table, then the
 * overlays of every metric, the ones judged worse first. */
static int compare_pages(doc *d, pm_error *err)
{
    const pm_comparison *c = d->o->compare;
    char buf[1024], la[600], lb[600];
    new_page(d);
    heading(d, "Comparison with another job", 1);
    pm_compare_job_label(c, 0, la, sizeof la);
    pm_compare_job_label(c, 1, lb, sizeof lb);
    snprintf(buf, sizeof buf, "%s is the reference; %s is the job of this report.", la, lb);
    paragraph(d, buf, 9);
    snprintf(buf, sizeof buf,
             "A difference counts when it exceeds %.3g%% of A's value (or the metric's own threshold "
             "in compare.json) and %.3g standard errors of the sample-to-sample noise of both jobs; "
             "worse or better follows each metric's better direction, changed means it has none. "
             "Series values are time-weighted means of the all-node series (Total or Average).",
             c->threshold_pct, c->z);
    paragraph(d, buf, 9);
    if (c->count[PM_VERDICT_WORSE])
        snprintf(buf, sizeof buf, "Verdict: B is worse than A in %zu of %zu comparisons.",
                 c->count[PM_VERDICT_WORSE], c->nrows);
    else
        snprintf(buf, sizeof buf, "Verdict: B is not worse than A in any of %zu comparisons.",
                 c->nrows);
    d->y += 2;
    text(d, MARGIN_X, d->y, 10, 1, buf);
    d->y += 16;
    snprintf(buf, sizeof buf, "%zu better, %zu changed, %zu within the noise, %zu the same, "
             "%zu in one job only.",
             c->count[PM_VERDICT_BETTER], c->count[PM_VERDICT_CHANGED], c->count[PM_VERDICT_NOISE],
             c->count[PM_VERDICT_SAME], c->count[PM_VERDICT_MISSING]);
    paragraph(d, buf, 9);
    d->y += 6;
    compare_table(d, c);

    size_t *order = pm_alloc_array(c->nrows ? c->nrows : 1, sizeof *order), n = 0;
    if (!order)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    for (int rank = 0; rank <= 5; rank++)
        for (size_t i = 0; i < c->nrows; i++)
            if (c->rows[i].kind == PM_CMP_METRIC && verdict_rank(c->rows[i].verdict) == rank)
                order[n++] = i;
    int ppp = d->l->plots_per_page > 0 ? d->l->plots_per_page : 3;
    double slot = (PAGE_H - TOP - BOTTOM - 30) / ppp;
    int placed = ppp, rc = 0, first = 1;
    for (size_t k = 0; k < n && rc == 0; k++) {
        pm_overlay ov;
        int brc = pm_overlay_build(c, order[k], &ov, err);
        if (brc == PM_ENOENT)
            continue;
        if (brc) {
            rc = brc;
            break;
        }
        if (placed == ppp) {
            new_page(d);
            heading(d, first ? "Comparison: all-node series, A and B on elapsed time"
                             : "Comparison: all-node series (continued)", first);
            first = 0;
            placed = 0;
        }
        pm_canvas *cv = render_canvas(draw_chart, &ov.plot, CONTENT_W, slot - 8);
        if (!cv)
            rc = pm_error_set(err, PM_ENOMEM, "cannot draw the %s overlay", c->rows[order[k]].key);
        else if (place_canvas(d, cv, slot - 8) != 0)
            rc = pm_error_set(err, PM_EIO, "cannot place the %s overlay (PDF library error 0x%04X)",
                              c->rows[order[k]].key, (unsigned)d->hpdf_error);
        pm_canvas_free(cv);
        pm_overlay_free(&ov);
        d->y += 8;
        placed++;
    }
    free(order);
    return rc;
}

static void footers(doc *d)
{
    char buf[64];
    for (size_t i = 0; i < d->npages; i++) {
        d->page = d->pages[i];
        snprintf(buf, sizeof buf, "Page %zu of %zu", i + 1, d->npages);
        set_font(d, 0, 8);
        text(d, PAGE_W / 2 - width_of(d, buf) / 2, PAGE_H - 30, 8, 0, buf);
    }
}

/* The contents on the summary page: one column, or two when long. */
static void contents(doc *d, double y0)
{
    d->page = d->toc_page;
    const double lh = 13;
    size_t rows = (size_t)((PAGE_H - BOTTOM - 6 - y0) / lh);
    int cols = d->ntoc > rows ? 2 : 1;
    double colw = (CONTENT_W - 8) / cols;
    for (size_t i = 0; i < d->ntoc; i++) {
        size_t col = cols == 2 ? i / ((d->ntoc + 1) / 2) : 0, row = i - col * ((d->ntoc + 1) / 2);
        if (row >= rows)
            continue;
        double x = MARGIN_X + 8 + (double)col * (colw + 8), y = y0 + (double)row * lh;
        char pg[32], title[128];
        snprintf(pg, sizeof pg, "%zu", d->toc[i].page + 1);
        set_font(d, 0, 9);
        fit(d, d->toc[i].title, colw - 40, title, sizeof title);
        text(d, x, y, 9, 0, title);
        text_right(d, x + colw - 8, y, 9, 0, pg);
    }
}

/* Attach the statistics JSON as an embedded file named perfmon-stats.json. */
static int attach_stats(doc *d, char *dir, size_t cap, pm_error *err)
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

static void set_info(doc *d)
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
                      tm.tm_sec, 'Z', 0, 0};
    HPDF_SetInfoDateAttr(d->pdf, HPDF_INFO_CREATION_DATE, date);
    HPDF_SetInfoDateAttr(d->pdf, HPDF_INFO_MOD_DATE, date);
    char title[256];
    snprintf(title, sizeof title, "perfmon job report %s",
             pm_analysis_info(d->a, offsetof(pm_profile_info, job_id)));
    HPDF_SetInfoAttr(d->pdf, HPDF_INFO_TITLE, title);
    HPDF_SetInfoAttr(d->pdf, HPDF_INFO_AUTHOR, pm_analysis_info(d->a, offsetof(pm_profile_info, user)));
    HPDF_SetInfoAttr(d->pdf, HPDF_INFO_CREATOR, "perfmon-analyze " PM_VERSION);
    HPDF_SetInfoAttr(d->pdf, HPDF_INFO_SUBJECT, "Resource usage of a batch job");
}

/* libharu 2.3 gives a UTF-8 font the encoder's CMap (code -> CID, with a
 * "begincidrange" that poppler rejects) as its ToUnicode map.  Under the
 * UTF-8 encoder each 2-byte code is the UCS-2 code point itself, so the
 * right map is the identity: replace the stream's contents with a
 * bfrange CMap (one range per high byte, surrogates left out, at most
 * 100 ranges per block as the CMap syntax asks). */
static void fix_to_unicode(doc *d, HPDF_Font font)
{
    if (!font)
        return;
    HPDF_Dict cmap = HPDF_Dict_GetItem((HPDF_Dict)font, "ToUnicode", HPDF_OCLASS_DICT);
    if (!cmap || !cmap->stream) {
        d->oom = 1; /* the layout of libharu changed: fail loudly rather than write bad text */
        return;
    }
    HPDF_Stream s = cmap->stream;
    HPDF_MemStream_FreeData(s);
    HPDF_Stream_WriteStr(s, "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
                            "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
                            "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
                            "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n");
    unsigned hi[256];
    size_t n = 0;
    for (unsigned h = 0; h < 256; h++)
        if (h < 0xD8 || h > 0xDF)
            hi[n++] = h;
    for (size_t i = 0; i < n; i += 100) {
        size_t m = n - i < 100 ? n - i : 100;
        char line[64];
        snprintf(line, sizeof line, "%zu beginbfrange\n", m);
        HPDF_Stream_WriteStr(s, line);
        for (size_t k = i; k < i + m; k++) {
            snprintf(line, sizeof line, "<%02X00> <%02XFF> <%02X00>\n", hi[k], hi[k], hi[k]);
            HPDF_Stream_WriteStr(s, line);
        }
        HPDF_Stream_WriteStr(s, "endbfrange\n");
    }
    HPDF_Stream_WriteStr(s, "endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
}

/* Write the finished document to path through our own checked writes, so
 * that a failure carries the system's reason ("Permission denied", "No
 * space left on device"), not a libharu code. */
static int save_pdf(doc *d, const char *tmp, const char *path, pm_error *err)
{
    if (HPDF_SaveToStream(d->pdf) != HPDF_OK || d->hpdf_error)
        return pm_error_set(err, PM_EIO, "%s: cannot lay out the PDF (PDF library error 0x%04X)",
                            path, (unsigned)d->hpdf_error);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return pm_error_sys(err, PM_EIO, errno, "%s: cannot create", path);
    HPDF_ResetStream(d->pdf);
    unsigned char buf[65536];
    int bad = 0, e = 0;
    for (;;) {
        HPDF_UINT32 len = sizeof buf;
        HPDF_STATUS st = HPDF_ReadFromStream(d->pdf, buf, &len);
        if (len > 0 && fwrite(buf, 1, len, f) != len) {
            bad = 1;
            e = errno;
            break;
        }
        if (st == HPDF_STREAM_EOF)
            break;
        if (st != HPDF_OK) {
            fclose(f);
            return pm_error_set(err, PM_EIO, "%s: cannot read the PDF back from memory", path);
        }
    }
    if (!bad && fflush(f) != 0) {
        bad = 1;
        e = errno;
    }
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad)
        return pm_error_sys(err, PM_EIO, e ? e : EIO, "%s: write failed", path);
    return 0;
}

void pm_report_opts_init(pm_report_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dpi = 200;
    o->creation_time = -1;
}

int pm_report_write(const pm_analysis *a, const pm_report_opts *o, pm_error *err)
{
    doc *d = calloc(1, sizeof *d);
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
    d->pdf = HPDF_New(on_hpdf_error, d);
    char tmpdir[4096] = "";
    if (!d->pdf) {
        rc = pm_error_set(err, PM_ENOMEM, "cannot start a PDF document");
        goto out;
    }
    HPDF_SetCompressionMode(d->pdf, HPDF_COMP_ALL);
    HPDF_UseUTFEncodings(d->pdf);
    HPDF_SetCurrentEncoder(d->pdf, "UTF-8");
    const char *fp = o->font_path ? o->font_path : DEFAULT_FONT;
    const char *bp = o->font_bold_path ? o->font_bold_path : DEFAULT_BOLD;
    const char *fn = access(fp, R_OK) == 0 ? HPDF_LoadTTFontFromFile(d->pdf, fp, HPDF_TRUE) : NULL;
    const char *bn = access(bp, R_OK) == 0 ? HPDF_LoadTTFontFromFile(d->pdf, bp, HPDF_TRUE) : NULL;
    if (!fn || !bn) {
        rc = pm_error_set(err, PM_EIO, "%s: cannot load the report font (install fonts-dejavu-core)",
                          !fn ? fp : bp);
        goto out;
    }
    d->font = HPDF_GetFont(d->pdf, fn, "UTF-8");
    d->bold = HPDF_GetFont(d->pdf, bn, "UTF-8");
    fix_to_unicode(d, d->font);
    fix_to_unicode(d, d->bold);
    d->cv.doc = d->pdf;
    d->cv.font = d->font;
    d->cv.bold = d->bold;
    d->root = HPDF_CreateOutline(d->pdf, NULL, "Report", HPDF_GetEncoder(d->pdf, "UTF-8"));
    HPDF_Outline_SetOpened(d->root, HPDF_TRUE);
    HPDF_SetPageMode(d->pdf, HPDF_PAGE_MODE_USE_OUTLINE);
    set_info(d);
    char start[64];
    utc(a->t_start, start, sizeof start);
    char nodes[64];
    nodes_text(a, nodes, sizeof nodes);
    snprintf(d->header, sizeof d->header, "Job %s  |  User %s  |  %s  |  Start %s",
             or_dash(pm_analysis_info(a, offsetof(pm_profile_info, job_id))),
             or_dash(pm_analysis_info(a, offsetof(pm_profile_info, user))), nodes, start);

    new_page(d);
    bookmark(d, "Summary", 0);
    summary_page(d);
    double toc_y = d->y;
    if (o->compare && (rc = compare_pages(d, err)) != 0)
        goto out;
    quality_page(d);
    hardware_page(d);
    if ((rc = phases_page(d, err)) != 0)
        goto out;
    rc = plot_pages(d, err);
    if (rc)
        goto out;
    statistics_pages(d);
    contents(d, toc_y);
    footers(d);
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
    if ((rc = save_pdf(d, tmp, o->pdf_path, err)) != 0) {
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
