/* json.c - JSON parsing with a position, numbers or null (see json.h). */
#include "perfmon/json.h"

#include <cJSON.h>
#include <math.h>

void pm_text_position(const char *text, size_t len, size_t offset, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < offset && i < len; i++) {
        if (text[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

cJSON *pm_json_parse(const char *path, const char *text, size_t len, const char *what,
                     pm_error *err)
{
    const char *end = NULL;
    /* The terminating NUL is parsed too, as cJSON_ParseWithOpts does, so
     * that a text cut short fails just past its last byte. */
    cJSON *root = cJSON_ParseWithLengthOpts(text, text[len] ? len : len + 1, &end, 0);
    if (!root) {
        int line, col;
        /* cJSON stops where it gave up, also at its nesting limit. */
        pm_text_position(text, len, end && end >= text ? (size_t)(end - text) : 0, &line, &col);
        pm_error_set(err, PM_EFORMAT, "%s:%d:%d: %s", path, line, col, what);
    }
    return root;
}

void pm_json_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}
