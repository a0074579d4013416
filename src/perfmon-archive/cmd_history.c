/* perfmon-archive history: a test's timings, oldest first, with its change points;
 * the history loading that check and plot share. */
#include <stdlib.h>
#include <string.h>

#include "perfmon/archive_changepoint.h"
#include "perfmon/templates.h"
#include "archive_cmd.h"

static void help_history(FILE *f)
{
    fprintf(f,
            "usage: " PROG " history --db DB TEST [ENTRY] [--since DATE] [--json]\n"
            "The timings of TEST (of one ENTRY), oldest first: start, entry, timing;\n"
            "then a 'change point' line where an entry's level changed (a windowed rank\n"
            "test: the step, the medians and the runs on each side).\n"
            "  --since DATE   from DATE: seconds since the epoch, YYYY-MM-DD or\n"
            "                 YYYY-MM-DDTHH:MM:SS[Z] (UTC)\n"
            "  --json         an array of {start, start_us, entry, timing[, change_point:\n"
            "                 {step, median_before, median_after, runs_before, runs_after, z}]}\n"
            "%s%s",
            arc_exit_text,
            "example:\n  " PROG
            " history --db runs.sqlite nightly wall_time_s --since 2026-01-01\n");
}

/* The table of figure semantics, or NULL without a word (history: the
 * change points' smallest step then stays 5 %). */
static pm_compare_cfg *load_table_quiet(const common *c)
{
    char dir[4096], path[4200];
    pm_find_template_dir(c->templates, "compare.json", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/compare.json", dir);
    pm_compare_cfg *cfg = NULL;
    pm_error err;
    pm_error_clear(&err);
    return pm_compare_cfg_load(path, &cfg, &err) == 0 ? cfg : NULL;
}

int arc_cmd_history(int argc, char **argv, common *c)
{
    static const struct option lo[] = {{"db", required_argument, NULL, O_DB},
                                       {"json", no_argument, NULL, O_JSON},
                                       {"since", required_argument, NULL, O_SINCE},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    int rc = arc_parse_opts(argc, argv, ":h", lo, c, help_history, NULL, NULL);
    if (rc >= 0)
        return rc;
    int npos = argc - optind;
    if (npos < 1 || npos > 2) {
        fprintf(stderr, PROG " history: give TEST and optionally ENTRY\n");
        return EXIT_USAGE;
    }
    const char *test = argv[optind], *entry = npos == 2 ? argv[optind + 1] : NULL;
    pm_store_point *p = NULL;
    size_t n = 0;
    if ((rc = arc_load_history(c, test, entry, 0, &p, &n)) != 0)
        return rc;
    /* Change points, per entry: cp[i] is set on the point that starts a
     * new level. */
    const pm_cp **cpat = calloc(n ? n : 1, sizeof *cpat);
    double *v = malloc((n ? n : 1) * sizeof *v);
    size_t *idx = malloc((n ? n : 1) * sizeof *idx), *ord = arc_group_by_entry(p, n);
    pm_cp *all = NULL;
    size_t nall = 0;
    pm_compare_cfg *cfg = load_table_quiet(c);
    int bad = !cpat || !v || !idx || !ord;
    for (size_t g = 0; !bad && g < n;) {
        const char *name = p[ord[g]].entry;
        size_t m = 0;
        for (; g < n && strcmp(p[ord[g]].entry, name) == 0; g++) {
            v[m] = p[ord[g]].timing;
            idx[m++] = ord[g];
        }
        pm_cp_opts co;
        pm_cp_opts_init(&co);
        pm_check_opts o;
        int gated;
        if (cfg) {
            arc_entry_opts(c, cfg, name, &o, &gated);
            if (o.min_change > 0)
                co.min_step = o.min_change;
        }
        pm_cp *cp = NULL;
        size_t ncp = 0;
        pm_error err;
        pm_error_clear(&err);
        if (pm_cp_find(v, m, &co, &cp, &ncp, &err) != 0)
            continue; /* a non-finite timing: no change points for it */
        pm_cp *grown = ncp ? realloc(all, (nall + ncp) * sizeof *all) : all;
        if (ncp && !grown) {
            free(cp);
            bad = 1;
            break;
        }
        all = grown;
        for (size_t k = 0; k < ncp; k++) {
            all[nall] = cp[k];
            all[nall].at = idx[cp[k].at]; /* the index into p */
            nall++;
        }
        free(cp);
    }
    free(ord);
    pm_compare_cfg_free(cfg);
    free(v);
    free(idx);
    if (bad) {
        free(cpat);
        free(all);
        pm_store_points_free(p, n);
        fprintf(stderr, PROG ": out of memory\n");
        return EXIT_DB;
    }
    for (size_t k = 0; k < nall; k++)
        cpat[all[k].at] = &all[k];
    char when[40];
    if (c->json) {
        cJSON *root = cJSON_CreateArray();
        for (size_t i = 0; root && i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddItemToArray(root, o);
            pm_arch_format_time(p[i].start_us, when, sizeof when);
            cJSON_AddStringToObject(o, "start", when);
            cJSON_AddNumberToObject(o, "start_us", (double)p[i].start_us);
            cJSON_AddStringToObject(o, "entry", p[i].entry);
            cJSON_AddNumberToObject(o, "timing", p[i].timing);
            if (cpat[i]) {
                cJSON *cp = cJSON_AddObjectToObject(o, "change_point");
                if (cp) {
                    cJSON_AddNumberToObject(cp, "step", cpat[i]->step);
                    cJSON_AddNumberToObject(cp, "median_before", cpat[i]->median_before);
                    cJSON_AddNumberToObject(cp, "median_after", cpat[i]->median_after);
                    cJSON_AddNumberToObject(cp, "runs_before", (double)cpat[i]->before);
                    cJSON_AddNumberToObject(cp, "runs_after", (double)cpat[i]->after);
                    cJSON_AddNumberToObject(cp, "z", cpat[i]->z);
                }
            }
        }
        free(cpat);
        free(all);
        pm_store_points_free(p, n);
        return arc_print_json(root);
    }
    for (size_t i = 0; i < n; i++) {
        pm_arch_format_time(p[i].start_us, when, sizeof when);
        printf("%s  %s  %.9g\n", when, p[i].entry, p[i].timing);
    }
    /* The change points after the points, so that a script reading the
     * three columns can stop at the first line that is not one. */
    for (size_t i = 0; i < n; i++) {
        if (!cpat[i])
            continue;
        pm_arch_format_time(p[i].start_us, when, sizeof when);
        printf("change point %s  %s: %+.1f%%, median %.6g -> %.6g (%zu runs before, %zu from "
               "it on; rank z %.1f)\n",
               when, p[i].entry, cpat[i]->step * 100, cpat[i]->median_before, cpat[i]->median_after,
               cpat[i]->before, cpat[i]->after, cpat[i]->z);
    }
    free(cpat);
    free(all);
    pm_store_points_free(p, n);
    return arc_flush_out();
}
