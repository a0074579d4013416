/* Plots recorded as vectors and written into the PDF (see canvas.h). */
#include "perfmon/canvas.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/error.h"
#include "perfmon/vec.h"

enum { SEG_MOVE, SEG_LINE, SEG_CURVE, SEG_CLOSE };

typedef struct rec {
    int kind;
    float rgba[4];
    float lw;
    unsigned char cap, join, ndash, bold;
    float dash[4];
    size_t seg0, nseg;  /* segment codes */
    size_t xy0, nxy;    /* coordinates (x, y pairs), points, y down */
    size_t txt0;        /* text: offset in the string pool */
    float m[6];         /* text: glyph space to canvas (xx yx xy yy x0 y0) */
    unsigned char *img; /* image: packed RGB */
    int iw, ih;
    float ix0, iy0, ix1, iy1;
} rec;

struct pm_canvas {
    cairo_surface_t *surf;
    cairo_t *cr;
    double k; /* points per device unit */
    rec *ops;
    size_t nops, capops;
    unsigned char *seg;
    size_t nseg, capseg;
    float *xy;
    size_t nxy, capxy;
    char *txt;
    size_t ntxt, captxt;
    int status;
};

static const cairo_user_data_key_t canvas_key;

static pm_canvas *canvas_of(cairo_t *cr)
{
    return cairo_get_user_data(cr, &canvas_key);
}

pm_canvas *pm_canvas_new(double w, double h, double dpi)
{
    (void)w;
    (void)h;
    pm_canvas *cv = calloc(1, sizeof *cv);
    if (!cv)
        return NULL;
    /* Nothing is ever drawn on this surface: Cairo only keeps the state
     * and measures text. */
    cv->surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
    cv->cr = cairo_create(cv->surf);
    if (cairo_status(cv->cr) != CAIRO_STATUS_SUCCESS ||
        cairo_set_user_data(cv->cr, &canvas_key, cv, NULL) != CAIRO_STATUS_SUCCESS) {
        pm_canvas_free(cv);
        return NULL;
    }
    double s = dpi > 0 ? dpi / 72.0 : 1.0;
    cv->k = 1.0 / s;
    cairo_scale(cv->cr, s, s);
    cairo_font_options_t *fo = cairo_font_options_create();
    cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    cairo_set_font_options(cv->cr, fo);
    cairo_font_options_destroy(fo);
    return cv;
}

void pm_canvas_free(pm_canvas *cv)
{
    if (!cv)
        return;
    for (size_t i = 0; i < cv->nops; i++)
        free(cv->ops[i].img);
    if (cv->cr)
        cairo_destroy(cv->cr);
    if (cv->surf)
        cairo_surface_destroy(cv->surf);
    free(cv->ops);
    free(cv->seg);
    free(cv->xy);
    free(cv->txt);
    free(cv);
}

cairo_t *pm_canvas_cairo(pm_canvas *cv)
{
    return cv->cr;
}

int pm_canvas_status(const pm_canvas *cv)
{
    return cv->status;
}

static rec *new_op(pm_canvas *cv, int kind)
{
    if (PM_VEC_RESERVE(cv->ops, cv->capops, cv->nops + 1, 64) != 0) {
        cv->status = PM_ENOMEM;
        return NULL;
    }
    rec *r = &cv->ops[cv->nops++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->seg0 = cv->nseg;
    r->xy0 = cv->nxy;
    return r;
}

static void source_rgba(cairo_t *cr, float rgba[4])
{
    double r = 0, g = 0, b = 0, a = 1;
    (void)cairo_pattern_get_rgba(cairo_get_source(cr), &r, &g, &b, &a);
    rgba[0] = (float)r;
    rgba[1] = (float)g;
    rgba[2] = (float)b;
    rgba[3] = (float)a;
}

/* Device units per user unit (the CTM's scale). */
static double ctm_scale(cairo_t *cr)
{
    double dx = 1, dy = 0;
    cairo_user_to_device_distance(cr, &dx, &dy);
    return hypot(dx, dy);
}

static void record_path(cairo_t *cr, pm_canvas *cv, int kind)
{
    rec *r = new_op(cv, kind);
    if (!r) {
        cairo_new_path(cr);
        return;
    }
    source_rgba(cr, r->rgba);
    double s = ctm_scale(cr);
    r->lw = (float)(cairo_get_line_width(cr) * s * cv->k);
    r->cap = (unsigned char)cairo_get_line_cap(cr);
    r->join = (unsigned char)cairo_get_line_join(cr);
    int nd = cairo_get_dash_count(cr);
    if (nd > 0 && nd <= 4) {
        double d[4], off;
        cairo_get_dash(cr, d, &off);
        for (int i = 0; i < nd; i++)
            r->dash[i] = (float)(d[i] * s * cv->k);
        r->ndash = (unsigned char)nd;
    }
    /* The path in device space: Cairo keeps it there; with the identity
     * matrix cairo_copy_path gives it as it is. */
    cairo_save(cr);
    cairo_identity_matrix(cr);
    cairo_path_t *p = cairo_copy_path(cr);
    cairo_restore(cr);
    cairo_new_path(cr);
    if (!p || p->status != CAIRO_STATUS_SUCCESS) {
        cv->status = PM_ENOMEM;
        cairo_path_destroy(p);
        return;
    }
    size_t npts = 0, nseg = 0;
    for (int i = 0; i < p->num_data; i += p->data[i].header.length) {
        nseg++;
        npts += (size_t)(p->data[i].header.length - 1);
    }
    if (PM_VEC_RESERVE(cv->seg, cv->capseg, cv->nseg + nseg, 64) != 0 ||
        PM_VEC_RESERVE(cv->xy, cv->capxy, cv->nxy + 2 * npts, 64) != 0) {
        cv->status = PM_ENOMEM;
        cairo_path_destroy(p);
        return;
    }
    for (int i = 0; i < p->num_data; i += p->data[i].header.length) {
        const cairo_path_data_t *d = &p->data[i];
        int code = d->header.type == CAIRO_PATH_MOVE_TO    ? SEG_MOVE
                   : d->header.type == CAIRO_PATH_LINE_TO  ? SEG_LINE
                   : d->header.type == CAIRO_PATH_CURVE_TO ? SEG_CURVE
                                                           : SEG_CLOSE;
        cv->seg[cv->nseg++] = (unsigned char)code;
        for (int j = 1; j < d->header.length; j++) {
            cv->xy[cv->nxy++] = (float)(d[j].point.x * cv->k);
            cv->xy[cv->nxy++] = (float)(d[j].point.y * cv->k);
        }
    }
    r->nseg = cv->nseg - r->seg0;
    r->nxy = cv->nxy - r->xy0;
    cairo_path_destroy(p);
}

void pm_cv_stroke(cairo_t *cr)
{
    pm_canvas *cv = canvas_of(cr);
    if (cv)
        record_path(cr, cv, PM_CV_STROKE);
    else
        cairo_stroke(cr);
}

void pm_cv_fill(cairo_t *cr)
{
    pm_canvas *cv = canvas_of(cr);
    if (cv)
        record_path(cr, cv, PM_CV_FILL);
    else
        cairo_fill(cr);
}

void pm_cv_clip(cairo_t *cr)
{
    pm_canvas *cv = canvas_of(cr);
    if (cv)
        record_path(cr, cv, PM_CV_CLIP);
    else
        cairo_clip(cr);
}

void pm_cv_save(cairo_t *cr)
{
    pm_canvas *cv = canvas_of(cr);
    cairo_save(cr);
    if (cv)
        (void)new_op(cv, PM_CV_SAVE);
}

void pm_cv_restore(cairo_t *cr)
{
    pm_canvas *cv = canvas_of(cr);
    cairo_restore(cr);
    if (cv)
        (void)new_op(cv, PM_CV_RESTORE);
}

void pm_cv_show_text(cairo_t *cr, const char *s)
{
    pm_canvas *cv = canvas_of(cr);
    if (!cv) {
        cairo_show_text(cr, s);
        return;
    }
    double x = 0, y = 0;
    cairo_get_current_point(cr, &x, &y);
    cairo_user_to_device(cr, &x, &y);
    cairo_new_path(cr);
    size_t n = strlen(s);
    rec *r = new_op(cv, PM_CV_TEXT);
    if (!r)
        return;
    if (PM_VEC_RESERVE(cv->txt, cv->captxt, cv->ntxt + n + 1, 64) != 0) {
        cv->status = PM_ENOMEM;
        cv->nops--;
        return;
    }
    r->txt0 = cv->ntxt;
    memcpy(cv->txt + cv->ntxt, s, n + 1);
    cv->ntxt += n + 1;
    source_rgba(cr, r->rgba);
    cairo_matrix_t fm, ctm, m;
    cairo_get_font_matrix(cr, &fm);
    cairo_get_matrix(cr, &ctm);
    cairo_matrix_multiply(&m, &fm, &ctm);
    r->m[0] = (float)(m.xx * cv->k);
    r->m[1] = (float)(m.yx * cv->k);
    r->m[2] = (float)(m.xy * cv->k);
    r->m[3] = (float)(m.yy * cv->k);
    r->m[4] = (float)(x * cv->k);
    r->m[5] = (float)(y * cv->k);
    cairo_font_face_t *ff = cairo_get_font_face(cr);
    r->bold = cairo_font_face_get_type(ff) == CAIRO_FONT_TYPE_TOY &&
              cairo_toy_font_face_get_weight(ff) == CAIRO_FONT_WEIGHT_BOLD;
}

double pm_cv_hairline(cairo_t *cr, double px)
{
    return canvas_of(cr) ? fmin(px, 72.0 / 150) : px;
}

void pm_cv_paint_image(cairo_t *cr)
{
    pm_canvas *cv = canvas_of(cr);
    cairo_pattern_t *pat = cairo_get_source(cr);
    if (!cv) {
        cairo_pattern_set_filter(pat, CAIRO_FILTER_NEAREST);
        cairo_paint(cr);
        return;
    }
    cairo_surface_t *s = NULL;
    if (cairo_pattern_get_surface(pat, &s) != CAIRO_STATUS_SUCCESS ||
        cairo_image_surface_get_format(s) != CAIRO_FORMAT_RGB24)
        return;
    cairo_surface_flush(s);
    int iw = cairo_image_surface_get_width(s), ih = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s);
    const unsigned char *px = cairo_image_surface_get_data(s);
    if (!px || iw <= 0 || ih <= 0)
        return;
    unsigned char *rgb = malloc((size_t)iw * (size_t)ih * 3);
    rec *r = rgb ? new_op(cv, PM_CV_IMAGE) : NULL;
    if (!r) {
        free(rgb);
        cv->status = PM_ENOMEM;
        return;
    }
    for (int yy = 0; yy < ih; yy++) {
        unsigned char *o = rgb + (size_t)yy * (size_t)iw * 3;
        for (int xx = 0; xx < iw; xx++) {
            uint32_t v;
            memcpy(&v, px + (size_t)yy * (size_t)stride + (size_t)xx * 4, 4);
            *o++ = (unsigned char)(v >> 16);
            *o++ = (unsigned char)(v >> 8);
            *o++ = (unsigned char)v;
        }
    }
    r->img = rgb;
    r->iw = iw;
    r->ih = ih;
    /* The image's corners: pattern space -> user space -> device. */
    cairo_matrix_t pm;
    cairo_pattern_get_matrix(pat, &pm);
    double x0 = 0, y0 = 0, x1 = iw, y1 = ih;
    if (cairo_matrix_invert(&pm) == CAIRO_STATUS_SUCCESS) {
        cairo_matrix_transform_point(&pm, &x0, &y0);
        cairo_matrix_transform_point(&pm, &x1, &y1);
    }
    cairo_user_to_device(cr, &x0, &y0);
    cairo_user_to_device(cr, &x1, &y1);
    r->ix0 = (float)(fmin(x0, x1) * cv->k);
    r->iy0 = (float)(fmin(y0, y1) * cv->k);
    r->ix1 = (float)(fmax(x0, x1) * cv->k);
    r->iy1 = (float)(fmax(y0, y1) * cv->k);
}

/* ---- the record, read ------------------------------------------------------ */

size_t pm_canvas_count(const pm_canvas *cv)
{
    return cv->nops;
}

void pm_canvas_get(const pm_canvas *cv, size_t i, pm_canvas_op *op)
{
    const rec *r = &cv->ops[i];
    memset(op, 0, sizeof *op);
    op->kind = r->kind;
    for (int k = 0; k < 4; k++)
        op->rgba[k] = r->rgba[k];
    op->line_width = r->lw;
    op->npoints = r->nxy / 2;
    op->ymin = INFINITY;
    op->ymax = -INFINITY;
    for (size_t k = 1; k < r->nxy; k += 2) {
        op->ymin = fmin(op->ymin, cv->xy[r->xy0 + k]);
        op->ymax = fmax(op->ymax, cv->xy[r->xy0 + k]);
    }
    if (r->kind == PM_CV_TEXT) {
        op->text = cv->txt + r->txt0;
        op->tx = r->m[4];
        op->ty = r->m[5];
        op->size = sqrt(fabs((double)r->m[0] * r->m[3] - (double)r->m[1] * r->m[2]));
    }
    if (r->kind == PM_CV_IMAGE) {
        op->image_w = r->iw;
        op->image_h = r->ih;
    }
}

void pm_canvas_points(const pm_canvas *cv, size_t i, double *x, double *y, size_t cap)
{
    const rec *r = &cv->ops[i];
    for (size_t k = 0; k < r->nxy / 2 && k < cap; k++) {
        x[k] = cv->xy[r->xy0 + 2 * k];
        y[k] = cv->xy[r->xy0 + 2 * k + 1];
    }
}

/* ---- the record, written as PDF -------------------------------------------- */

typedef struct pen {
    HPDF_Page page;
    double ox, oy; /* PDF x = ox + x; PDF y = oy - y */
    float fill[3], stroke[3], lw, alpha, dash[4];
    int known; /* the fields above hold what the page has */
    int cap, join, ndash;
} pen;

static HPDF_ExtGState alpha_state(pm_canvas_pdf *ctx, double a)
{
    for (size_t i = 0; i < ctx->ngs; i++)
        if (fabs(ctx->alpha[i] - a) < 1e-3)
            return ctx->gs[i];
    HPDF_ExtGState gs = HPDF_CreateExtGState(ctx->doc);
    if (!gs)
        return NULL;
    HPDF_ExtGState_SetAlphaFill(gs, (HPDF_REAL)a);
    HPDF_ExtGState_SetAlphaStroke(gs, (HPDF_REAL)a);
    if (ctx->ngs < sizeof ctx->gs / sizeof ctx->gs[0]) {
        ctx->alpha[ctx->ngs] = a;
        ctx->gs[ctx->ngs++] = gs;
    }
    return gs;
}

static void set_alpha(pm_canvas_pdf *ctx, pen *p, float a)
{
    if (p->known && p->alpha == a)
        return;
    HPDF_ExtGState gs = alpha_state(ctx, a);
    if (gs)
        HPDF_Page_SetExtGState(p->page, gs);
    p->alpha = a;
}

static void emit_path(const pm_canvas *cv, const rec *r, const pen *p)
{
    const float *xy = cv->xy + r->xy0;
    size_t k = 0;
    for (size_t i = 0; i < r->nseg; i++) {
        switch (cv->seg[r->seg0 + i]) {
        case SEG_MOVE:
            HPDF_Page_MoveTo(p->page, (HPDF_REAL)(p->ox + xy[k]), (HPDF_REAL)(p->oy - xy[k + 1]));
            k += 2;
            break;
        case SEG_LINE:
            HPDF_Page_LineTo(p->page, (HPDF_REAL)(p->ox + xy[k]), (HPDF_REAL)(p->oy - xy[k + 1]));
            k += 2;
            break;
        case SEG_CURVE:
            HPDF_Page_CurveTo(p->page, (HPDF_REAL)(p->ox + xy[k]), (HPDF_REAL)(p->oy - xy[k + 1]),
                              (HPDF_REAL)(p->ox + xy[k + 2]), (HPDF_REAL)(p->oy - xy[k + 3]),
                              (HPDF_REAL)(p->ox + xy[k + 4]), (HPDF_REAL)(p->oy - xy[k + 5]));
            k += 6;
            break;
        default: HPDF_Page_ClosePath(p->page); break;
        }
    }
}

static void stroke_style(const rec *r, pen *p)
{
    int same = p->known;
    if (!same || memcmp(p->stroke, r->rgba, sizeof p->stroke) != 0) {
        HPDF_Page_SetRGBStroke(p->page, r->rgba[0], r->rgba[1], r->rgba[2]);
        memcpy(p->stroke, r->rgba, sizeof p->stroke);
    }
    if (!same || p->lw != r->lw) {
        HPDF_Page_SetLineWidth(p->page, r->lw);
        p->lw = r->lw;
    }
    if (!same || p->cap != r->cap) {
        HPDF_Page_SetLineCap(p->page, (HPDF_LineCap)r->cap);
        p->cap = r->cap;
    }
    if (!same || p->join != r->join) {
        HPDF_Page_SetLineJoin(p->page, (HPDF_LineJoin)r->join);
        p->join = r->join;
    }
    if (!same || p->ndash != r->ndash || memcmp(p->dash, r->dash, sizeof p->dash) != 0) {
        /* libharu takes whole points: at least 1 each */
        HPDF_UINT16 d[4];
        for (int i = 0; i < r->ndash; i++) {
            long v = lround(r->dash[i]);
            d[i] = (HPDF_UINT16)(v < 1 ? 1 : v > 1000 ? 1000 : v);
        }
        HPDF_Page_SetDash(p->page, r->ndash ? d : NULL, r->ndash, 0);
        p->ndash = r->ndash;
        memcpy(p->dash, r->dash, sizeof p->dash);
    }
}

void pm_canvas_pdf_write(const pm_canvas *cv, pm_canvas_pdf *ctx, HPDF_Page page, double x,
                         double top, double page_h)
{
    pen p;
    memset(&p, 0, sizeof p);
    p.page = page;
    p.ox = x;
    p.oy = page_h - top;
    HPDF_Page_GSave(page);
    for (size_t i = 0; i < cv->nops; i++) {
        const rec *r = &cv->ops[i];
        switch (r->kind) {
        case PM_CV_SAVE:
            HPDF_Page_GSave(page);
            p.known = 0;
            break;
        case PM_CV_RESTORE:
            HPDF_Page_GRestore(page);
            p.known = 0;
            break;
        case PM_CV_CLIP:
            if (r->nseg == 0)
                break;
            emit_path(cv, r, &p);
            HPDF_Page_Clip(page);
            HPDF_Page_EndPath(page);
            break;
        case PM_CV_STROKE:
        case PM_CV_FILL:
            if (r->nseg == 0 || r->rgba[3] <= 0)
                break;
            set_alpha(ctx, &p, r->rgba[3]);
            if (r->kind == PM_CV_STROKE) {
                stroke_style(r, &p);
            } else if (!p.known || memcmp(p.fill, r->rgba, sizeof p.fill) != 0) {
                HPDF_Page_SetRGBFill(page, r->rgba[0], r->rgba[1], r->rgba[2]);
                memcpy(p.fill, r->rgba, sizeof p.fill);
            }
            if (!p.known) {
                /* what stroke_style or the fill did not set is unknown */
                if (r->kind == PM_CV_STROKE) {
                    p.fill[0] = -1;
                } else {
                    p.stroke[0] = -1;
                    p.lw = -1;
                    p.cap = p.join = p.ndash = -1;
                }
                p.known = 1;
            }
            emit_path(cv, r, &p);
            if (r->kind == PM_CV_STROKE)
                HPDF_Page_Stroke(page);
            else
                HPDF_Page_Fill(page);
            break;
        case PM_CV_TEXT: {
            double a = r->m[0], b = -r->m[1], c = -r->m[2], d = r->m[3];
            double size = sqrt(fabs(a * d - b * c));
            if (!(size > 0))
                break;
            set_alpha(ctx, &p, r->rgba[3]);
            if (!p.known || memcmp(p.fill, r->rgba, sizeof p.fill) != 0) {
                HPDF_Page_SetRGBFill(page, r->rgba[0], r->rgba[1], r->rgba[2]);
                memcpy(p.fill, r->rgba, sizeof p.fill);
            }
            if (!p.known) {
                p.stroke[0] = -1;
                p.lw = -1;
                p.cap = p.join = p.ndash = -1;
                p.known = 1;
            }
            HPDF_Page_BeginText(page);
            HPDF_Page_SetFontAndSize(page, r->bold ? ctx->bold : ctx->font, (HPDF_REAL)size);
            HPDF_Page_SetTextMatrix(page, (HPDF_REAL)(a / size), (HPDF_REAL)(b / size),
                                    (HPDF_REAL)(c / size), (HPDF_REAL)(d / size),
                                    (HPDF_REAL)(p.ox + r->m[4]), (HPDF_REAL)(p.oy - r->m[5]));
            HPDF_Page_ShowText(page, cv->txt + r->txt0);
            HPDF_Page_EndText(page);
            break;
        }
        case PM_CV_IMAGE: {
            HPDF_Image img = HPDF_LoadRawImageFromMem(ctx->doc, r->img, (HPDF_UINT)r->iw,
                                                      (HPDF_UINT)r->ih, HPDF_CS_DEVICE_RGB, 8);
            if (img)
                HPDF_Page_DrawImage(page, img, (HPDF_REAL)(p.ox + r->ix0),
                                    (HPDF_REAL)(p.oy - r->iy1), (HPDF_REAL)(r->ix1 - r->ix0),
                                    (HPDF_REAL)(r->iy1 - r->iy0));
            break;
        }
        default: break;
        }
    }
    HPDF_Page_GRestore(page);
}
