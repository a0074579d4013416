/* The sampler's schema and sample rows (source.h): the columns the sources
 * add, each with its name, unit, kind, group and wrap range, refused when a
 * name repeats or is too long; and one row of values per sample. */
#include <stdlib.h>
#include <string.h>

#include "perfmon/mem.h"
#include "perfmon/source.h"
#include "perfmon/vec.h"

void pm_schema_init(pm_schema *s)
{
    memset(s, 0, sizeof *s);
}

void pm_schema_free(pm_schema *s)
{
    free(s->cols);
    pm_schema_init(s);
}

int pm_schema_add(pm_schema *s, const char *name, const char *unit, int kind, int type,
                  const char *group, uint64_t wrap)
{
    if (s->n >= PM_MAX_COLUMNS)
        return PM_ELIMIT;
    if (strlen(name) >= sizeof s->cols[0].name || strlen(unit) >= sizeof s->cols[0].unit ||
        strlen(group) >= sizeof s->cols[0].group || !*name)
        return PM_EUSAGE;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->cols[i].name, name) == 0)
            return PM_EUSAGE;
    if (PM_VEC_RESERVE(s->cols, s->cap, s->n + 1, 64) != 0)
        return PM_ENOMEM;
    pm_column *c = &s->cols[s->n];
    memset(c, 0, sizeof *c);
    strcpy(c->name, name);
    strcpy(c->unit, unit);
    strcpy(c->group, group);
    c->kind = (uint8_t)kind;
    c->type = (uint8_t)type;
    c->wrap = wrap;
    return (int)s->n++;
}

int pm_sample_init(pm_sample *s, size_t ncols)
{
    memset(s, 0, sizeof *s);
    s->ncols = ncols;
    s->v = calloc(ncols ? ncols : 1, sizeof *s->v);
    s->present = calloc((ncols + 7) / 8 + 1, 1);
    if (!s->v || !s->present) {
        pm_sample_free(s);
        return PM_ENOMEM;
    }
    return 0;
}

void pm_sample_free(pm_sample *s)
{
    free(s->v);
    free(s->present);
    memset(s, 0, sizeof *s);
}

void pm_sample_clear(pm_sample *s)
{
    memset(s->present, 0, (s->ncols + 7) / 8 + 1);
}
