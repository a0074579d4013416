/* The report layout file (templates/report.json, docs/report.md): which
 * plot pages the report has and in what order (groups, each naming the
 * catalog page of its metrics), how many plots go on a page, the figures
 * of the key-figures table and the metrics given colour maps.
 *
 * Interface (report.h): pm_layout_load(path, &l, err) reads and checks the
 * file (errors as path:line:col for JSON, path: what for the rest);
 * pm_layout_free(l).  pm_report_write loads it once per report.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/fileio.h"
#include "perfmon/mem.h"
#include "perfmon/report.h"

void pm_layout_free(pm_layout *l)
{
    if (!l)
        return;
    free(l->groups);
    free(l->figures);
    for (size_t i = 0; i < l->nheatmaps; i++)
        free(l->heatmaps[i]);
    free(l->heatmaps);
    free(l);
}

static void copy_json_str(const cJSON *o, const char *key, char *dst, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsString(v))
        snprintf(dst, cap, "%s", v->valuestring);
}

int pm_layout_load(const char *path, pm_layout **out, pm_error *err)
{
    *out = NULL;
    char *text;
    size_t len;
    int rc = pm_read_whole(path, 1u << 20, &text, &len, err);
    if (rc)
        return rc;
    const char *ep = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, &ep, 0);
    if (!j) {
        int line = 1, col = 1;
        for (const char *p = text; ep && p < ep && *p; p++) {
            if (*p == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        free(text);
        return pm_error_set(err, PM_EFORMAT, "%s:%d:%d: not valid JSON", path, line, col);
    }
    free(text);
    pm_layout *l = calloc(1, sizeof *l);
    if (!l) {
        cJSON_Delete(j);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    l->plots_per_page = 3;
    const cJSON *ppp = cJSON_GetObjectItemCaseSensitive(j, "plots_per_page");
    if (ppp) {
        if (!cJSON_IsNumber(ppp) || !(ppp->valuedouble >= 1 && ppp->valuedouble <= 6) ||
            ppp->valuedouble != floor(ppp->valuedouble)) {
            cJSON_Delete(j);
            pm_layout_free(l);
            return pm_error_set(err, PM_EFORMAT,
                                "%s: plots_per_page must be a whole number "
                                "from 1 to 6",
                                path);
        }
        l->plots_per_page = (int)ppp->valuedouble;
    }
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(j, "groups");
    const cJSON *figs = cJSON_GetObjectItemCaseSensitive(j, "key_figures");
    const cJSON *heat = cJSON_GetObjectItemCaseSensitive(j, "heatmaps");
    if (!cJSON_IsArray(groups) || !cJSON_IsArray(figs)) {
        cJSON_Delete(j);
        pm_layout_free(l);
        return pm_error_set(err, PM_EFORMAT, "%s: needs arrays 'groups' and 'key_figures'", path);
    }
    size_t ng = (size_t)cJSON_GetArraySize(groups), nf = (size_t)cJSON_GetArraySize(figs);
    size_t nh = cJSON_IsArray(heat) ? (size_t)cJSON_GetArraySize(heat) : 0;
    l->groups = calloc(ng + 1, sizeof *l->groups);
    l->figures = calloc(nf + 1, sizeof *l->figures);
    l->heatmaps = calloc(nh + 1, sizeof *l->heatmaps);
    if (!l->groups || !l->figures || !l->heatmaps) {
        cJSON_Delete(j);
        pm_layout_free(l);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    const cJSON *x;
    size_t i = 0;
    cJSON_ArrayForEach(x, groups) {
        copy_json_str(x, "page", l->groups[i].page, sizeof l->groups[i].page);
        copy_json_str(x, "title", l->groups[i].title, sizeof l->groups[i].title);
        if (!l->groups[i].page[0]) {
            cJSON_Delete(j);
            pm_layout_free(l);
            return pm_error_set(err, PM_EFORMAT, "%s: groups[%zu] has no 'page'", path, i);
        }
        i++;
    }
    l->ngroups = i;
    i = 0;
    cJSON_ArrayForEach(x, figs) {
        pm_layout_figure *f = &l->figures[i];
        copy_json_str(x, "key", f->key, sizeof f->key);
        copy_json_str(x, "label", f->label, sizeof f->label);
        copy_json_str(x, "unit", f->unit, sizeof f->unit);
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(x, "scale");
        f->scale = cJSON_IsNumber(sc) ? sc->valuedouble : 1.0;
        if (!pm_figure_find(f->key)) {
            /* The message quotes f->key: set it before l is freed. */
            int rc2 = pm_error_set(err, PM_EFORMAT, "%s: key_figures[%zu]: unknown figure '%s'",
                                   path, i, f->key);
            cJSON_Delete(j);
            pm_layout_free(l);
            return rc2;
        }
        i++;
    }
    l->nfigures = i;
    i = 0;
    cJSON_ArrayForEach(x, heat) {
        if (cJSON_IsString(x) && (l->heatmaps[i] = pm_strdup(x->valuestring)) != NULL)
            i++;
    }
    l->nheatmaps = i;
    cJSON_Delete(j);
    *out = l;
    return 0;
}
