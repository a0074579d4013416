/* The PDF layout toolkit: text, rules, pages with a running header,
 * the outline and contents, tables that continue across pages, cell
 * formatting, plots placed as vectors, page footers, the ToUnicode fix
 * and the checked save (interface and order of calls in pdf_doc.h).
 *
 * Nothing here knows what a report says: the pages (report_*.c) call
 * these with their text and tables.  Coordinates are points from the top
 * of the page (libharu's are from the bottom: Y() turns one into the
 * other).
 */
#include "pdf_doc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfmon/mem.h"
#include "perfmon/units.h"
#include "perfmon/vec.h"

#define DEFAULT_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
#define DEFAULT_BOLD "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"

static void pdf_on_error(HPDF_STATUS error_no, HPDF_STATUS detail_no, void *user)
{
    pdf_doc *d = user;
    if (!d->hpdf_error) {
        d->hpdf_error = error_no;
        d->hpdf_detail = detail_no;
    }
}

static double Y(double top)
{
    return PAGE_H - top;
}

void pdf_set_font(pdf_doc *d, int bold, double size)
{
    HPDF_Page_SetFontAndSize(d->page, bold ? d->bold : d->font, (HPDF_REAL)size);
}

double pdf_width(pdf_doc *d, const char *s)
{
    return HPDF_Page_TextWidth(d->page, s);
}

/* Text at (x, top) in the current font, its baseline 0.8 em below top. */
void pdf_text(pdf_doc *d, double x, double top, double size, int bold, const char *s)
{
    pdf_set_font(d, bold, size);
    HPDF_Page_SetRGBFill(d->page, (HPDF_REAL)d->ink[0], (HPDF_REAL)d->ink[1], (HPDF_REAL)d->ink[2]);
    HPDF_Page_BeginText(d->page);
    HPDF_Page_TextOut(d->page, (HPDF_REAL)x, (HPDF_REAL)Y(top + size * 0.8), s);
    HPDF_Page_EndText(d->page);
}

void pdf_text_right(pdf_doc *d, double xr, double top, double size, int bold, const char *s)
{
    pdf_set_font(d, bold, size);
    pdf_text(d, xr - pdf_width(d, s), top, size, bold, s);
}

/* Shorten s (UTF-8) with an ellipsis to fit w at the current font. */
void pdf_fit(pdf_doc *d, const char *s, double w, char *out, size_t cap)
{
    snprintf(out, cap, "%s", s);
    if (pdf_width(d, out) <= w)
        return;
    size_t n = strlen(out);
    while (n > 1) {
        n--;
        while (n > 0 && ((unsigned char)out[n] & 0xC0) == 0x80)
            n--;
        if (n + 4 > cap)
            continue;
        memcpy(out + n, "\xe2\x80\xa6", 4);
        if (pdf_width(d, out) <= w)
            return;
    }
}

void pdf_rule(pdf_doc *d, double top, double gray, double lw)
{
    HPDF_Page_SetGrayStroke(d->page, (HPDF_REAL)gray);
    HPDF_Page_SetLineWidth(d->page, (HPDF_REAL)lw);
    HPDF_Page_MoveTo(d->page, (HPDF_REAL)MARGIN_X, (HPDF_REAL)Y(top));
    HPDF_Page_LineTo(d->page, (HPDF_REAL)(PAGE_W - MARGIN_X), (HPDF_REAL)Y(top));
    HPDF_Page_Stroke(d->page);
}

void pdf_progress(const pdf_doc *d)
{
    if (!d->o || !d->o->progress)
        return;
    pm_progress p = {.stage = PM_STAGE_REPORT,
                     .plots_done = d->plots_done,
                     .plots_total = d->plots_total,
                     .pages_done = d->npages};
    d->o->progress(&p, d->o->progress_user);
}

void pdf_new_page(pdf_doc *d)
{
    if (PM_VEC_RESERVE(d->pages, d->cap, d->npages + 1, 32) != 0) {
        d->oom = 1;
        return;
    }
    d->page = HPDF_AddPage(d->pdf);
    HPDF_Page_SetSize(d->page, HPDF_PAGE_SIZE_A4, HPDF_PAGE_PORTRAIT);
    d->pages[d->npages++] = d->page;
    pdf_progress(d);
    double ink[3];
    memcpy(ink, d->ink, sizeof ink);
    memset(d->ink, 0, sizeof d->ink);
    pdf_text(d, MARGIN_X, 24, 8, 0, d->header);
    pdf_text_right(d, PAGE_W - MARGIN_X, 24, 8, 1, "perfmon");
    memcpy(d->ink, ink, sizeof ink);
    pdf_rule(d, 36, 0.6, 0.5);
    d->y = TOP;
}

static void need(pdf_doc *d, double h)
{
    if (d->y + h > PAGE_H - BOTTOM)
        pdf_new_page(d);
}

/* An outline entry (bookmark) at the cursor, and a contents line. */
void pdf_bookmark(pdf_doc *d, const char *title, int toc)
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
void pdf_heading(pdf_doc *d, const char *title, int toc)
{
    need(d, 60);
    pdf_text(d, MARGIN_X, d->y, 14, 1, title);
    pdf_bookmark(d, title, toc);
    d->y += 24;
}

void pdf_subheading(pdf_doc *d, const char *title)
{
    need(d, 40);
    pdf_text(d, MARGIN_X, d->y, 10.5, 1, title);
    d->y += 17;
}

void pdf_paragraph(pdf_doc *d, const char *s, double size)
{
    /* Greedy word wrap to the content width. */
    pdf_set_font(d, 0, size);
    char line[1024];
    size_t ll = 0;
    const char *p = s;
    while (*p) {
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        /* A number keeps its unit on its line ("154 MiB", "52 %"). */
        static const char *const units[] = {"B",   "KiB", "MiB", "GiB", "TiB",
                                            "PiB", "%",   "s",   "min", "h"};
        if (*p == ' ' && p > w && p[-1] >= '0' && p[-1] <= '9') {
            const char *u = p + 1, *ue = u;
            while (*ue && *ue != ' ')
                ue++;
            size_t ul = (size_t)(ue - u);
            while (ul &&
                   (u[ul - 1] == '.' || u[ul - 1] == ',' || u[ul - 1] == ';' || u[ul - 1] == ')'))
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
        if (ll && pdf_width(d, trial) > CONTENT_W) {
            need(d, size * 1.4);
            pdf_text(d, MARGIN_X, d->y, size, 0, line);
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
        pdf_text(d, MARGIN_X, d->y, size, 0, line);
        d->y += size * 1.35;
    }
}

/* ---- tables --------------------------------------------------------------- */

typedef struct table {
    size_t ncols;
    const double *w;  /* column widths (points) */
    const int *right; /* right-aligned columns */
    const char *const *head;
    double size;
} table;

/* Split a header into at most two lines that fit w (the second shortened
 * with an ellipsis when it still does not). */
static int head_lines(pdf_doc *d, const char *h, double w, char *l1, char *l2, size_t cap)
{
    snprintf(l1, cap, "%s", h);
    l2[0] = 0;
    if (pdf_width(d, l1) <= w)
        return 1;
    size_t best = 0;
    for (size_t i = 1; h[i]; i++) {
        if (h[i] != ' ')
            continue;
        snprintf(l1, cap, "%.*s", (int)i, h);
        if (pdf_width(d, l1) <= w)
            best = i;
    }
    if (!best) {
        pdf_fit(d, h, w, l1, cap);
        return 1;
    }
    snprintf(l1, cap, "%.*s", (int)best, h);
    pdf_fit(d, h + best + 1, w, l2, cap);
    return 2;
}

void pdf_table_head(pdf_doc *d, const pdf_table *t)
{
    char l1[256], l2[256];
    int lines = 1;
    pdf_set_font(d, 1, t->size);
    for (size_t c = 0; c < t->ncols; c++)
        if (head_lines(d, t->head[c], t->w[c] - 4, l1, l2, sizeof l1) == 2)
            lines = 2;
    double hh = t->size * (0.6 + 1.1 * lines);
    need(d, hh + t->size * 3);
    HPDF_Page_SetGrayFill(d->page, 0.92);
    HPDF_Page_Rectangle(d->page, (HPDF_REAL)MARGIN_X, (HPDF_REAL)Y(d->y + hh), (HPDF_REAL)CONTENT_W,
                        (HPDF_REAL)hh);
    HPDF_Page_Fill(d->page);
    HPDF_Page_SetGrayFill(d->page, 0);
    double x = MARGIN_X;
    for (size_t c = 0; c < t->ncols; c++) {
        pdf_set_font(d, 1, t->size);
        int n = head_lines(d, t->head[c], t->w[c] - 4, l1, l2, sizeof l1);
        /* Bottom-align: a one-line header sits on the second line. */
        double top = d->y + t->size * 0.3 + (lines == 2 && n == 1 ? t->size * 1.1 : 0);
        for (int k = 0; k < n; k++) {
            const char *s = k ? l2 : l1;
            double yy = top + k * t->size * 1.1;
            if (t->right[c])
                pdf_text_right(d, x + t->w[c] - 2, yy, t->size, 1, s);
            else
                pdf_text(d, x + 2, yy, t->size, 1, s);
        }
        x += t->w[c];
    }
    d->y += hh + t->size * 0.1;
}

void pdf_table_row(pdf_doc *d, const pdf_table *t, const char *const *cells, int shade)
{
    if (d->y + t->size * 1.5 > PAGE_H - BOTTOM) {
        pdf_new_page(d);
        pdf_table_head(d, t);
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
        pdf_set_font(d, 0, t->size);
        pdf_fit(d, cells[c] ? cells[c] : "", t->w[c] - 4, s, sizeof s);
        if (t->right[c])
            pdf_text_right(d, x + t->w[c] - 2, d->y + t->size * 0.25, t->size, 0, s);
        else
            pdf_text(d, x + 2, d->y + t->size * 0.25, t->size, 0, s);
        x += t->w[c];
    }
    d->y += t->size * 1.45;
}

/* ---- numbers and times ---------------------------------------------------- */

void pdf_num(double v, char *out, size_t cap)
{
    pm_fmt_num(v, out, cap); /* the formatter --stats uses too */
}

void pdf_utc(double t, char *out, size_t cap)
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

void pdf_duration(double s, char *out, size_t cap)
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

/* ---- plots --------------------------------------------------------------- */

/* Write a canvas of w x h points at the cursor, as PDF paths and text. */
int pdf_place_canvas(pdf_doc *d, const pm_canvas *cv, double h)
{
    pm_canvas_pdf_write(cv, &d->cv, d->page, MARGIN_X, d->y, PAGE_H);
    if (d->hpdf_error)
        return PM_EIO;
    d->y += h;
    return 0;
}

/* ---- the end of the document ---------------------------------------------- */

void pdf_footers(pdf_doc *d)
{
    char buf[64];
    for (size_t i = 0; i < d->npages; i++) {
        d->page = d->pages[i];
        snprintf(buf, sizeof buf, "Page %zu of %zu", i + 1, d->npages);
        pdf_set_font(d, 0, 8);
        pdf_text(d, PAGE_W / 2 - pdf_width(d, buf) / 2, PAGE_H - 30, 8, 0, buf);
    }
}

/* The contents on the summary page: one column, or two when long. */
void pdf_contents(pdf_doc *d, double y0)
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
        pdf_set_font(d, 0, 9);
        pdf_fit(d, d->toc[i].title, colw - 40, title, sizeof title);
        pdf_text(d, x, y, 9, 0, title);
        pdf_text_right(d, x + colw - 8, y, 9, 0, pg);
    }
}

/* libharu 2.3 gives a UTF-8 font the encoder's CMap (code -> CID, with a
 * "begincidrange" that poppler rejects) as its ToUnicode map.  Under the
 * UTF-8 encoder each 2-byte code is the UCS-2 code point itself, so the
 * right map is the identity: replace the stream's contents with a
 * bfrange CMap (one range per high byte, surrogates left out, at most
 * 100 ranges per block as the CMap syntax asks). */
static void pdf_fix_to_unicode(pdf_doc *d, HPDF_Font font)
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
    HPDF_Stream_WriteStr(
        s, "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
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
int pdf_save(pdf_doc *d, const char *tmp, const char *path, pm_error *err)
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

/* ---- the document -------------------------------------------------------- */

int pdf_open(pdf_doc *d, const char *font, const char *bold, pm_error *err)
{
    d->pdf = HPDF_New(pdf_on_error, d);
    if (!d->pdf)
        return pm_error_set(err, PM_ENOMEM, "cannot start a PDF document");
    HPDF_SetCompressionMode(d->pdf, HPDF_COMP_ALL);
    HPDF_UseUTFEncodings(d->pdf);
    HPDF_SetCurrentEncoder(d->pdf, "UTF-8");
    const char *fp = font ? font : DEFAULT_FONT;
    const char *bp = bold ? bold : DEFAULT_BOLD;
    /* A font the user named is a usage matter: name the option; the
     * default one missing is a package to install. */
    for (int b = 0; b < 2; b++) {
        const char *given = b ? bold : font, *path = b ? bp : fp;
        if (access(path, R_OK) == 0)
            continue;
        int e = errno;
        if (given)
            return pm_error_sys(err, PM_EUSAGE, e, "%s: %s: cannot read the font file", path,
                                b ? "--bold-font" : "--font");
        return pm_error_sys(err, PM_EIO, e,
                            "%s: cannot read the report's default font (install "
                            "fonts-dejavu-core, or give --font and --bold-font)",
                            path);
    }
    const char *fn = HPDF_LoadTTFontFromFile(d->pdf, fp, HPDF_TRUE);
    const char *bn = HPDF_LoadTTFontFromFile(d->pdf, bp, HPDF_TRUE);
    if (!fn || !bn)
        return pm_error_set(err, (!fn ? font : bold) ? PM_EUSAGE : PM_EIO,
                            "%s: not a TrueType font that the PDF library can embed",
                            !fn ? fp : bp);
    d->font = HPDF_GetFont(d->pdf, fn, "UTF-8");
    d->bold = HPDF_GetFont(d->pdf, bn, "UTF-8");
    pdf_fix_to_unicode(d, d->font);
    pdf_fix_to_unicode(d, d->bold);
    d->cv.doc = d->pdf;
    d->cv.font = d->font;
    d->cv.bold = d->bold;
    d->root = HPDF_CreateOutline(d->pdf, NULL, "Report", HPDF_GetEncoder(d->pdf, "UTF-8"));
    HPDF_Outline_SetOpened(d->root, HPDF_TRUE);
    HPDF_SetPageMode(d->pdf, HPDF_PAGE_MODE_USE_OUTLINE);
    return 0;
}
