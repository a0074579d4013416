/* The HTML report's data (see html_int.h): each distinct array of the
 * report once, as float32 (or a colour map's bytes), by its SHA-256. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_int.h"
#include "perfmon/mem.h"

/* ---- the data: distinct float32 arrays ------------------------------------ */

static void put_f32(unsigned char *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    p[0] = (unsigned char)u;
    p[1] = (unsigned char)(u >> 8);
    p[2] = (unsigned char)(u >> 16);
    p[3] = (unsigned char)(u >> 24);
}

/* The index of p[0..len) (malloc'd; taken) among the blobs, added when
 * new; SIZE_MAX when out of memory (p freed). */
size_t html_take_blob(html_ctx *c, unsigned char *p, size_t len, size_t elem)
{
    uint8_t h[32];
    pm_sha256(p, len, h);
    for (size_t i = 0; i < c->nblobs; i++)
        if (c->blobs[i].len == len && c->blobs[i].elem == elem &&
            memcmp(c->blobs[i].sha, h, 32) == 0 && memcmp(c->blobs[i].bytes, p, len) == 0) {
            free(p);
            return i;
        }
    if (c->nblobs == c->capblobs) {
        size_t cap = c->capblobs ? 2 * c->capblobs : 64;
        blob *nb = pm_realloc_array(c->blobs, cap, sizeof *nb);
        if (!nb) {
            free(p);
            return SIZE_MAX;
        }
        c->blobs = nb;
        c->capblobs = cap;
    }
    blob *b = &c->blobs[c->nblobs];
    memcpy(b->sha, h, 32);
    b->bytes = p;
    b->len = len;
    b->elem = elem;
    return c->nblobs++;
}

/* The index of v[0..n) - off as float32 among the blobs (added when new);
 * SIZE_MAX when out of memory. */
static size_t add_blob(html_ctx *c, const double *v, size_t n, double off)
{
    if (n > SIZE_MAX / 4)
        return SIZE_MAX;
    unsigned char *p = malloc(n ? 4 * n : 1);
    if (!p)
        return SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        put_f32(p + 4 * i, pm_report_f32(v[i] - off));
    return html_take_blob(c, p, 4 * n, 4);
}

void html_json_f32(html_ctx *c, const char *k, const float *v, size_t n)
{
    unsigned char *p = n <= SIZE_MAX / 4 ? malloc(n ? 4 * n : 1) : NULL;
    size_t i = SIZE_MAX;
    if (p) {
        for (size_t j = 0; j < n; j++)
            put_f32(p + 4 * j, v[j]);
        i = html_take_blob(c, p, 4 * n, 4);
    }
    if (i == SIZE_MAX) {
        c->oom = 1;
        return;
    }
    html_json_key(&c->data, k, 0);
    pm_buf_printf(&c->data, "%zu", i);
}

void html_json_key(pm_buf *b, const char *k, int first)
{
    pm_buf_printf(b, "%s\"%s\":", first ? "" : ",", k);
}

/* "key":index of the array, or sets c->oom. */
void html_json_blob(html_ctx *c, const char *k, const double *v, size_t n, double off)
{
    size_t i = add_blob(c, v, n, off);
    if (i == SIZE_MAX) {
        c->oom = 1;
        return;
    }
    html_json_key(&c->data, k, 0);
    pm_buf_printf(&c->data, "%zu", i);
}
