/* perfmon-archive plot: one entry's history drawn (archive_plot.h). */
#include <stdlib.h>
#include <string.h>

#include "perfmon/archive_plot.h"
#include "archive_cmd.h"

static void help_plot(FILE *f)
{
    fprintf(f,
            "usage: " PROG " plot --db DB TEST ENTRY -o FILE.png|FILE.pdf|FILE.svg [options]\n"
            "The history of ENTRY, each run a point; the runs beyond their noise (each\n"
            "judged alone against the runs before it) are ringed in red; the change\n"
            "points that history lists are drawn as a level line with a shaded band at\n"
            "each step, labelled with its size.\n"
            "  -o, --output FILE  PNG, or PDF when FILE ends in .pdf\n" CHECK_OPTS "%s%s",
            arc_exit_text,
            "example:\n  " PROG " plot --db runs.sqlite nightly wall_time_s -o wall.png\n");
}

int arc_cmd_plot(int argc, char **argv, common *c)
{
    int rc = arc_parse_opts(argc, argv, ":ho:", arc_check_lo, c, help_plot, NULL, NULL);
    if (rc >= 0)
        return rc;
    if (argc - optind != 2 || !c->out) {
        fprintf(stderr, PROG " plot: give TEST, ENTRY and -o FILE\n");
        return EXIT_USAGE;
    }
    if (!pm_arch_plot_kind(c->out)) {
        fprintf(stderr, PROG " plot: -o %s: give a file name ending in .png, .pdf or .svg\n",
                c->out);
        return EXIT_USAGE;
    }
    const char *test = argv[optind], *entry = argv[optind + 1];
    pm_store_point *p = NULL;
    size_t n = 0;
    if ((rc = arc_load_history(c, test, entry, 0, &p, &n)) != 0)
        return rc;
    pm_compare_cfg *cfg = arc_load_table(c);
    if (!cfg) {
        pm_store_points_free(p, n);
        return EXIT_USAGE;
    }
    pm_check_opts o;
    int gated;
    arc_entry_opts(c, cfg, entry, &o, &gated);
    const pm_figure *fig = pm_figure_find(entry);
    pm_compare_cfg_free(cfg);
    pm_error err;
    pm_error_clear(&err);
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        pm_store_points_free(p, n);
        fprintf(stderr, PROG ": out of memory\n");
        return EXIT_DB;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = p[i].timing;
    pm_cp_opts co;
    pm_cp_opts_init(&co);
    if (o.min_change > 0)
        co.min_step = o.min_change;
    pm_cp *cp = NULL;
    size_t ncp = 0;
    if (pm_cp_find(v, n, &co, &cp, &ncp, &err) != 0 && err.code == PM_ENOMEM) {
        free(v);
        pm_store_points_free(p, n);
        fprintf(stderr, PROG ": %s\n", err.msg);
        return EXIT_DB;
    }
    free(v);
    pm_error_clear(&err);
    size_t nreg = 0;
    rc = pm_arch_plot(c->out, test, entry,
                      fig                           ? fig->unit
                      : strncmp(entry, "phase:", 6) ? "s/iteration"
                                                    : "s",
                      p, n, &o, gated, cp, ncp, &nreg, &err);
    free(cp);
    pm_store_points_free(p, n);
    if (rc) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return EXIT_DB;
    }
    return EXIT_OK;
}
