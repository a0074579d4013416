/* Strings written for gnuplot (export.h: pm_gp_quote), below the files
 * that write them: the --data scripts (gnuplot.c), the phase timeline
 * (phase_timeline.c) and the phase timings (phases_out.c). */
#include <stdio.h>
#include <string.h>

#include "perfmon/export.h"

/* The one quoting rule for every string perfmon writes for gnuplot (scripts
 * and data files): a double-quoted string in which every byte outside
 * letters, digits, space and inert punctuation is a three-digit octal
 * escape.  gnuplot decodes \ooo in double-quoted strings of scripts and
 * data files alike, so any name (quotes, backslashes, newlines, a
 * backquote, which gnuplot would run as a command outside single quotes,
 * '@' macros, UTF-8) is read back as the same bytes.  A name longer than
 * max bytes (0: no limit) is shown as its start and "..." (display only). */
void pm_gp_quote(FILE *f, const char *s, size_t max)
{
    static const char inert[] = " -_.,:;/+=()[]{}%#&*!?~^<>|";
    size_t len = strlen(s), keep = len;
    if (max >= 4 && len > max) {
        keep = max - 3;
        while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
            keep--; /* not inside a UTF-8 character */
    }
    fputc('"', f);
    for (size_t i = 0; i < keep; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            (c && strchr(inert, c)))
            fputc(c, f);
        else
            fprintf(f, "\\%03o", c);
    }
    if (keep < len)
        fputs("...", f);
    fputc('"', f);
}
