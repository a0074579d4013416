/* A streaming JSON scanner over a text in memory: the cursor steps over
 * white space, strings, numbers, literals and whole values without building
 * a tree, so that a 1 GB document costs one pass and no copy.  The SKA
 * import (src/profile/ska_reader.c) is built on it.
 *
 * What it checks: bracket nesting (at most PM_JSCAN_MAX_DEPTH deep),
 * strings (closed, no raw control characters), the JSON number grammar
 * where a number is read, literals where one is expected.  What it does
 * not: scalars inside a skipped value are only checked to be made of
 * plain bytes (digits, letters, separators), and string escapes are not
 * decoded (pm_jscan_key gives an escaped name as "").
 *
 * Order of calls:
 *
 *     pm_jscan s;
 *     pm_jscan_init(&s, path, text, len, release, &err);
 *     pm_jscan_top(&s, &members, &n);    top-level object: name and span
 *                                        of each member, values skipped
 *   then, for one member's value (a copy of s with p = val, e = val + vlen):
 *     pm_jscan_ws(&s);                   step over white space
 *     pm_jscan_key(&s, key, cap);        "name" : of an object's member
 *     pm_jscan_number / _literal / _string / _skip   the value
 *     pm_jscan_next(&s, &more);          ',' or '}' after a member
 *     pm_jscan_release(&s, s.p);         drop the pages read (release only)
 *
 * Errors: every function that can fail returns 0 or a pm_error code and
 * fills s->err with "path:line:col: what", line and column counted in the
 * text up to the offending byte (the text need not be NUL-terminated).
 * The text is never written; the scanner keeps no state outside the
 * struct, so each thread may scan its own copy over one shared text.
 */
#ifndef PERFMON_JSON_SCAN_H
#define PERFMON_JSON_SCAN_H

#include <stddef.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "perfmon/error.h"

#define PM_JSCAN_MAX_DEPTH 256

typedef struct pm_jscan {
    const char *path; /* for messages */
    const char *text; /* the whole document: line and column count from here */
    const char *p;    /* the cursor */
    const char *e;    /* end of what this scan may read */
    pm_error *err;
    int release;          /* text is a private file mapping: drop pages once read */
    const char *released; /* everything below this was released */
} pm_jscan;

/* One member of the top-level object: its name as written (escapes not
 * decoded) and the span of its value, both pointing into the text. */
typedef struct pm_jmember {
    const char *key; /* points into text, after the quote */
    size_t klen;
    const char *val;
    size_t vlen;
} pm_jmember;

/* Start a scan of text[0..len) with the cursor at its first byte.  With
 * release, text must be a read-only private mapping (see pm_jscan_release). */
void pm_jscan_init(pm_jscan *s, const char *path, const char *text, size_t len, int release,
                   pm_error *err);

/* Record an error at `at` (a pointer into the text): "path:line:col: what".
 * Returns PM_EFORMAT. */
int pm_jscan_fail(pm_jscan *s, const char *at, const char *what) PM_WUR;

/* Give back the mapping's pages below `to`; nothing unless s->release. */
void pm_jscan_release(pm_jscan *s, const char *to);

/* Step over a string at the cursor (which is on its opening quote). */
int pm_jscan_string(pm_jscan *s) PM_WUR;

/* Step over one value (after white space): a string, an object or a list
 * (nesting checked), or a run of plain bytes (a number or a literal). */
int pm_jscan_skip(pm_jscan *s) PM_WUR;

/* Scan the top-level object: *out (owned by the caller, free()) gets its
 * members in order; white space only (or a NUL) may follow it. */
int pm_jscan_top(pm_jscan *s, pm_jmember **out, size_t *nout) PM_WUR;

/* Read a JSON number at the cursor into *out: exact for up to 15
 * significant digits without an exponent, strtod otherwise. */
int pm_jscan_number(pm_jscan *s, double *out) PM_WUR;

/* Inside a list, the cursor after '[' or a ',': read the run of plain
 * numbers that follows (up to 15 significant digits, no exponent), each
 * with the ',' after it, into dst[0..cap); *closed is set to 1 when the
 * list's ']' followed the last one (and was read).  Returns how many were
 * read; the cursor stops before the first element that is anything else
 * (a string, a literal, another number, an error: each for the caller to
 * read with the steps above, which report errors), and after cap. */
size_t pm_jscan_plain_numbers(pm_jscan *s, double *dst, size_t cap, int *closed);

/* Step over the literal lit ("null", "true", "false") at the cursor. */
int pm_jscan_literal(pm_jscan *s, const char *lit) PM_WUR;

/* Read a member name and its ':' into key (an escaped name, or one of cap
 * bytes or more, gives ""); the cursor ends on the value. */
int pm_jscan_key(pm_jscan *s, char *key, size_t cap) PM_WUR;

/* After a member's value: ',' sets *more to 1, the closing '}' to 0. */
int pm_jscan_next(pm_jscan *s, int *more) PM_WUR;

static inline int pm_jscan_is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Python's json.dump(indent=4) puts every number of a list on its own line
 * after 12 spaces: skipping them a byte at a time was a third of reading
 * such a file, so runs of white space are skipped 16 bytes at a time
 * (SSE2, part of x86-64's base instruction set). */
static inline void pm_jscan_ws(pm_jscan *s)
{
    const char *p = s->p, *e = s->e;
    if (p < e && !pm_jscan_is_ws(*p))
        return;
#if defined(__SSE2__)
    const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n'), tab = _mm_set1_epi8('\t'),
                  cr = _mm_set1_epi8('\r');
    while (e - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, sp), _mm_cmpeq_epi8(x, nl)),
                                 _mm_or_si128(_mm_cmpeq_epi8(x, tab), _mm_cmpeq_epi8(x, cr)));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask != 0xFFFF) {
            s->p = p + __builtin_ctz(~mask);
            return;
        }
        p += 16;
    }
#endif
    while (p < e && pm_jscan_is_ws(*p))
        p++;
    s->p = p;
}

#endif
