/* html.h - the job report as one self-contained, interactive HTML file.
 *
 * pm_html_write writes what the PDF's first page says (the verdict and
 * what the profile cannot tell, from the same builders, verdict.c), the
 * job's facts, key figures, efficiency notes and the constant metrics as
 * plain HTML, and every chart the PDF draws (pm_chart_build) as data for
 * the chart library (uPlot, vendored under TEMPLATES/html/vendor/) and the
 * report's own script (TEMPLATES/html/report.js), all inline.  A
 * Content-Security-Policy forbids every fetch and allows only the file's
 * own script and style elements, by their SHA-256.  Series are float32
 * little-endian arrays, each distinct array once, byte-shuffled and
 * deflated into one zlib stream in base64.
 * docs/report.md, "The HTML report", says what it shows and where the
 * bytes go.
 *
 * The encoders below are what the writer uses for names from input (host,
 * job, user, phase, metric, command): each is safe for the one place it
 * names.  Ownership: nothing is kept after a call returns.
 */
#ifndef PERFMON_HTML_H
#define PERFMON_HTML_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/analysis.h"
#include "perfmon/buf.h"
#include "perfmon/error.h"

typedef struct pm_html_opts {
    const char *path;         /* the file to write */
    const char *layout_path;  /* templates/report.json */
    const char *template_dir; /* holds html/report.js, html/report.css, html/vendor/ */
    int elapsed;              /* time axis as elapsed time */
    long long creation_time;  /* seconds since the epoch; < 0 = SOURCE_DATE_EPOCH or now */
    /* --compare: not NULL, the report is of its job B (the analysis given
     * to pm_html_write) with a comparison section, on elapsed time. */
    const struct pm_comparison *compare;
} pm_html_opts;

void pm_html_opts_init(pm_html_opts *o);

/* Write the report to o->path (through a temporary name renamed into
 * place).  Returns 0, PM_EIO (a template missing or damaged, or the file
 * not written; err says which) or PM_ENOMEM. */
int pm_html_write(const pm_analysis *a, const pm_html_opts *o, pm_error *err) PM_WUR;

/* Read and check the templates pm_html_write needs under dir (the chart
 * library against its SHA256SUMS): 0, or PM_EIO naming the file, so that
 * a program can refuse before the analysis. */
int pm_html_check_templates(const char *dir, pm_error *err) PM_WUR;

/* Append s as HTML text or as the value of a double-quoted attribute:
 * & < > " ' as character references, control bytes other than tab and
 * newline and bytes that are not UTF-8 as U+FFFD. */
void pm_html_text(pm_buf *b, const char *s);

/* Append s as a JSON string literal that is also safe inside a <script>
 * element: < > & as \u003c \u003e \u0026 (so no "</script" or "<!--"),
 * U+2028 and U+2029 escaped, bytes that are not UTF-8 as U+FFFD. */
void pm_html_json_str(pm_buf *b, const char *s);

/* The byte shuffle of n bytes of elements of elem bytes: first byte 0 of
 * every element, then byte 1, ... (a tail shorter than one element copied
 * as it is); out holds n bytes.  Neighbouring float32 values share their
 * sign and exponent bytes, which so come together and deflate well. */
void pm_html_shuffle(const void *in, size_t n, size_t elem, void *out);

/* n bytes as a zlib stream (RFC 1950, deflate at level 6): *out (malloc'd,
 * the caller frees) of *outlen bytes.  The same bytes for the same input
 * and zlib.  Returns 0, PM_ENOMEM or PM_ELIMIT (over 4 GiB). */
int pm_html_deflate(const void *in, size_t n, unsigned char **out, size_t *outlen) PM_WUR;

/* SHA-256 (FIPS 180-4) of n bytes. */
void pm_sha256(const void *data, size_t n, uint8_t out[32]);

/* Append n bytes as base64 (RFC 4648, with padding). */
void pm_base64(pm_buf *b, const void *data, size_t n);

#endif
