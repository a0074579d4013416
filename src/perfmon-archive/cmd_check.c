/* perfmon-archive check: the latest run of a test against its history (archive_check.h,
 * archive_gate.h), in text or JSON; the table of figure semantics and the
 * check options that plot shares. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/archive_gate.h"
#include "archive_cmd.h"

static void help_check(FILE *f)
{
    fprintf(f,
            "usage: " PROG " check --db DB TEST [ENTRY...] [options]\n"
            "Compares each entry of the latest run of TEST (or the ENTRYs named) with\n"
            "its previous N runs: the latest value x, their median m and median\n"
            "absolute deviation MAD.  Beyond its noise is a change in the entry's worse\n"
            "direction with |x - m| / (1.4826 MAD) above the threshold, |x - m| / |m|\n"
            "at least the minimum change and |x - m| above the table's absolute minimum.\n"
            "Directions and gating come from TEMPLATES/compare.json (shared with\n"
            "perfmon-analyze --compare): TensorFlow timings (lower is better) are gated,\n"
            "perfmon job figures are informational unless the table says gate, the\n"
            "sampler's own figures never gate.\n"
            "The entries are weighed together: the lower median of their changes (the\n"
            "whole test) beyond its own noise and its 20 or more earlier ones fails at once.\n"
            "One entry beyond its noise while the test is flat is SUSPECT (exit 6) unless\n"
            "it is beyond anything in the test's history; the next run (or a rerun of the\n"
            "benchmark, archived) confirms it: an entry's last three runs beyond 0.27\n"
            "of the threshold, or its last two beyond it where hits are rare (the whole\n"
            "test's: half of it), fail.  An entry beyond 0.27 of it and 60 %% of the\n"
            "minimum change is SUSPECT too.\n" CHECK_OPTS
            "  --gate NAME[,NAME]     gate these entries too\n"
            "  --no-gate NAME[,NAME]  never gate these entries\n"
            "  --json            the verdicts as JSON: {test, checked, regressions, suspects,\n"
            "                    baseline, whole_test, entries: [{entry, verdict, gated,\n"
            "                    better, previous_runs, latest, median, mad, z, change, why,\n"
            "                    previous_beyond}]}\n"
            "%s%s",
            arc_exit_text,
            "example:\n  " PROG " check --db runs.sqlite nightly --window 10 --json\n");
}

static int is_named(const char *entry, char **names, int nnames)
{
    if (nnames == 0)
        return 1;
    for (int i = 0; i < nnames; i++)
        if (strcmp(names[i], entry) == 0)
            return 1;
    return 0;
}

static void fmt_z(double z, char *buf, size_t size)
{
    if (isinf(z))
        snprintf(buf, size, "%s", z > 0 ? "inf" : "-inf");
    else
        snprintf(buf, size, "%.1f", z);
}

static void print_verdict(const pm_gate_entry *x, const char *entry, const pm_gate_test *t)
{
    const pm_check_result *r = &x->r;
    const pm_check_opts *o = &x->o;
    if (r->verdict == PM_CHECK_SHORT) {
        /* runs archived, the latest included, of the runs a verdict needs */
        printf("baseline    %s: %zu of %zu runs, no verdict yet\n", entry, r->n + 1,
               o->min_history + 1);
        return;
    }
    char z[32];
    fmt_z(r->z, z, sizeof z);
    const char *v = !x->gated                          ? "info"
                    : x->verdict == PM_GATE_REGRESSION ? "REGRESSION"
                    : x->verdict == PM_GATE_SUSPECT    ? "SUSPECT"
                                                       : "ok";
    printf("%-10s  %s: latest %.6g vs median %.6g of %zu runs (%+.1f%%, %s robust sd, %s is "
           "better)",
           v, entry, r->latest, r->median, r->n, r->change * 100, z, pm_better_name(o->better));
    if (x->gated && x->why != PM_GATE_WHY_NONE) {
        printf("; %s", pm_gate_why_text(x->why));
        if (x->why == PM_GATE_WHY_WITHIN || x->why == PM_GATE_WHY_TAIL)
            printf(" (largest earlier change %+.1f%% in %zu entry runs)", t->entry_tail * 100,
                   t->entry_tail_n);
        if (x->verdict == PM_GATE_SUSPECT)
            printf(": rerun to confirm");
    }
    printf("\n");
}

/* The whole-test line: when two or more gated entries were weighed. */
static void print_test(const char *test, const pm_gate_test *t)
{
    if (t->verdict == PM_GATE_SHORT)
        return;
    char z[32];
    fmt_z(t->z, z, sizeof z);
    const char *v = t->verdict == PM_GATE_REGRESSION ? "REGRESSION"
                    : t->verdict == PM_GATE_SUSPECT  ? "SUSPECT"
                                                     : "ok";
    printf("%-10s  %s (whole test): lower median of %zu entries' changes %+.1f%% vs %+.1f%% "
           "over %zu runs (%s robust sd",
           v, test, t->entries, t->change * 100, t->median * 100 - 100, t->n, z);
    if (isfinite(t->tail))
        printf(", largest earlier %+.1f%%", t->tail * 100);
    printf(")");
    if (t->why != PM_GATE_WHY_NONE)
        printf("; %s%s", pm_gate_why_text(t->why),
               t->verdict == PM_GATE_SUSPECT ? ": rerun to confirm" : "");
    printf("\n");
}

static void add_num(cJSON *obj, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(obj, key, v);
    else
        cJSON_AddNullToObject(obj, key);
}

/* One entry's verdict as a JSON object appended to arr (unknown figures
 * and infinite z-scores are null). */
static void verdict_json(cJSON *arr, const char *entry, const pm_gate_entry *x)
{
    const pm_check_result *r = &x->r;
    cJSON *obj = cJSON_CreateObject();
    if (!obj)
        return;
    cJSON_AddItemToArray(arr, obj);
    cJSON_AddStringToObject(obj, "entry", entry);
    cJSON_AddStringToObject(obj, "verdict",
                            !x->gated && r->verdict != PM_CHECK_SHORT
                                ? "informational"
                                : pm_gate_verdict_name(x->gated ? x->verdict : PM_GATE_SHORT));
    cJSON_AddBoolToObject(obj, "gated", x->gated);
    cJSON_AddStringToObject(obj, "better", pm_better_name(x->o.better));
    cJSON_AddNumberToObject(obj, "previous_runs", (double)r->n);
    add_num(obj, "latest", r->latest);
    add_num(obj, "median", r->median);
    add_num(obj, "mad", r->mad);
    add_num(obj, "z", r->z);
    add_num(obj, "change", r->change);
    if (x->gated && x->why != PM_GATE_WHY_NONE)
        cJSON_AddStringToObject(obj, "why", pm_gate_why_text(x->why));
    else
        cJSON_AddNullToObject(obj, "why");
    cJSON_AddBoolToObject(obj, "previous_beyond", x->prev_beyond);
}

static cJSON *test_json(const pm_gate_test *t)
{
    cJSON *obj = cJSON_CreateObject();
    if (!obj)
        return NULL;
    cJSON_AddStringToObject(obj, "verdict", pm_gate_verdict_name(t->verdict));
    cJSON_AddNumberToObject(obj, "entries", (double)t->entries);
    cJSON_AddNumberToObject(obj, "previous_runs", (double)t->n);
    add_num(obj, "change", t->change);
    add_num(obj, "median", isfinite(t->median) ? t->median - 1 : NAN);
    add_num(obj, "mad", t->mad);
    add_num(obj, "z", t->z);
    add_num(obj, "tail", t->tail);
    add_num(obj, "entry_tail", t->entry_tail);
    cJSON_AddNumberToObject(obj, "entry_tail_runs", (double)t->entry_tail_n);
    if (t->why != PM_GATE_WHY_NONE)
        cJSON_AddStringToObject(obj, "why", pm_gate_why_text(t->why));
    else
        cJSON_AddNullToObject(obj, "why");
    return obj;
}

/* A new pipeline: nothing archived yet is a baseline, not a failure. */
static int print_baseline(const common *c, const char *test)
{
    if (c->json) {
        cJSON *root = cJSON_CreateObject();
        if (root) {
            cJSON_AddStringToObject(root, "test", test);
            cJSON_AddNumberToObject(root, "checked", 0);
            cJSON_AddNumberToObject(root, "regressions", 0);
            cJSON_AddBoolToObject(root, "baseline", 1);
            cJSON_AddItemToObject(root, "entries", cJSON_CreateArray());
        }
        return arc_print_json(root);
    }
    printf("%s: baseline: 0 of %zu runs, no verdict yet\n", test, c->check.min_history + 1);
    return arc_flush_out();
}

/* The history's entries, each one slice of v (its values) and of run (the
 * run of each value); runs are the distinct start times, in start order. */
typedef struct entries {
    double *v;
    size_t *run, *runof;
    pm_gate_entry *ge;
    const char **seen; /* each entry's name */
    size_t *first;     /* each entry's first point: the output's order */
    size_t nseen, nruns;
} entries;

static void entries_free(entries *e)
{
    free(e->v);
    free(e->run);
    free(e->runof);
    free(e->ge);
    free(e->seen);
    free(e->first);
}

/* Group the n points p by entry, those named only where names are given;
 * -1: out of memory. */
static int entries_make(entries *e, const pm_store_point *p, size_t n, char **named, int nnamed,
                        const common *c, const pm_compare_cfg *cfg)
{
    memset(e, 0, sizeof *e);
    size_t m = n ? n : 1;
    e->v = malloc(m * sizeof *e->v);
    e->run = malloc(m * sizeof *e->run);
    e->runof = malloc(m * sizeof *e->runof);
    e->ge = calloc(m, sizeof *e->ge);
    e->seen = malloc(m * sizeof *e->seen);
    e->first = malloc(m * sizeof *e->first);
    if (!e->v || !e->run || !e->runof || !e->ge || !e->seen || !e->first)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || p[i].start_us != p[i - 1].start_us)
            e->nruns++;
        e->runof[i] = e->nruns - 1;
    }
    size_t used = 0, *ord = arc_group_by_entry(p, n);
    if (n && !ord)
        return -1;
    for (size_t g = 0; g < n;) {
        const char *entry = p[ord[g]].entry;
        if (!is_named(entry, named, nnamed)) {
            while (g < n && strcmp(p[ord[g]].entry, entry) == 0)
                g++;
            continue;
        }
        pm_gate_entry *x = &e->ge[e->nseen];
        e->first[e->nseen] = ord[g];
        e->seen[e->nseen++] = entry;
        x->v = e->v + used;
        x->run = e->run + used;
        for (; g < n && strcmp(p[ord[g]].entry, entry) == 0; g++) {
            e->v[used] = p[ord[g]].timing;
            e->run[used++] = e->runof[ord[g]];
            x->n++;
        }
        arc_entry_opts(c, cfg, entry, &x->o, &x->gated);
        if (x->run[x->n - 1] != e->nruns - 1 && nnamed == 0)
            x->gated = -1; /* not in the latest run: retired, not checked */
    }
    free(ord);
    for (size_t i = 0; i < e->nseen; i++)
        if (e->ge[i].gated < 0)
            e->ge[i].gated = 0, e->ge[i].n = 0; /* weighed by nothing, shown nowhere */
    return 0;
}

typedef struct tally {
    size_t checked, regressions, suspects, info;
    size_t shortest; /* the fewest runs of an entry still in its baseline */
} tally;

/* Each entry's verdict once, in the order of its first run (then by name),
 * as text or into json; counted in *k.  -1: out of memory. */
static int entries_report(const entries *e, const pm_gate_test *t, int nnamed, cJSON *json,
                          tally *k)
{
    memset(k, 0, sizeof *k);
    k->shortest = SIZE_MAX;
    size_t *order = malloc((e->nseen ? e->nseen : 1) * sizeof *order);
    if (!order)
        return -1;
    for (size_t i = 0; i < e->nseen; i++)
        order[i] = i;
    qsort_r(order, e->nseen, sizeof *order, arc_by_first, e->first);
    for (size_t oi = 0; oi < e->nseen; oi++) {
        size_t i = order[oi];
        const pm_gate_entry *x = &e->ge[i];
        if (x->n == 0)
            continue; /* retired */
        if (x->gated && x->r.verdict == PM_CHECK_SHORT && x->r.n < k->shortest)
            k->shortest = x->r.n;
        if (!x->gated) {
            k->info++;
            if (json)
                verdict_json(json, e->seen[i], x);
            else if (nnamed)
                print_verdict(x, e->seen[i], t); /* asked for by name */
            continue; /* informational: in the JSON, counted in the text */
        }
        if (json)
            verdict_json(json, e->seen[i], x);
        else
            print_verdict(x, e->seen[i], t);
        k->checked++;
        k->regressions += x->verdict == PM_GATE_REGRESSION;
        k->suspects += x->verdict == PM_GATE_SUSPECT;
    }
    free(order);
    return 0;
}

/* The summary: the JSON document around json (taken), or the text lines. */
static int print_summary(const common *c, const char *test, const pm_gate_test *t, const tally *k,
                         cJSON *json)
{
    if (json) {
        cJSON *root = cJSON_CreateObject();
        if (!root) {
            cJSON_Delete(json);
            return arc_print_json(NULL);
        }
        cJSON_AddStringToObject(root, "test", test);
        cJSON_AddNumberToObject(root, "checked", (double)k->checked);
        cJSON_AddNumberToObject(root, "regressions", (double)k->regressions);
        cJSON_AddNumberToObject(root, "suspects", (double)k->suspects);
        cJSON_AddBoolToObject(root, "baseline", k->shortest != SIZE_MAX);
        if (t->verdict != PM_GATE_SHORT)
            cJSON_AddItemToObject(root, "whole_test", test_json(t));
        else
            cJSON_AddNullToObject(root, "whole_test");
        cJSON_AddItemToObject(root, "entries", json);
        return arc_print_json(root);
    }
    print_test(test, t);
    if (k->shortest != SIZE_MAX)
        printf("%s: baseline: %zu of %zu runs, no verdict yet\n", test, k->shortest + 1,
               c->check.min_history + 1);
    printf("%s: %zu entries checked, %zu regressions", test, k->checked, k->regressions);
    if (k->suspects)
        printf(", %zu suspect", k->suspects);
    if (k->info)
        printf(" (%zu informational entries not gated)", k->info);
    printf("\n");
    return 0;
}

/* Every name given on the command line is an entry of the test. */
static int check_named(const entries *e, char **named, int nnamed, const char *test)
{
    for (int i = 0; i < nnamed; i++) {
        int found = 0;
        for (size_t k = 0; k < e->nseen && !found; k++)
            found = strcmp(e->seen[k], named[i]) == 0;
        if (!found) {
            fprintf(stderr, PROG ": no entry \"%s\" in test \"%s\"\n", named[i], test);
            return EXIT_USAGE;
        }
    }
    return 0;
}

int arc_cmd_check(int argc, char **argv, common *c)
{
    int rc = arc_parse_opts(argc, argv, ":h", arc_check_lo, c, help_check, NULL, NULL);
    if (rc >= 0)
        return rc;
    if (argc - optind < 1) {
        fprintf(stderr, PROG " check: give TEST\n");
        return EXIT_USAGE;
    }
    const char *test = argv[optind];
    char **named = argv + optind + 1;
    int nnamed = argc - optind - 1;
    pm_compare_cfg *cfg = arc_load_table(c);
    if (!cfg)
        return EXIT_USAGE;
    pm_store_point *p = NULL;
    size_t n = 0;
    if ((rc = arc_load_history(c, test, NULL, 1, &p, &n)) != 0) {
        pm_compare_cfg_free(cfg);
        return rc;
    }
    if (n == 0 && nnamed == 0) {
        pm_compare_cfg_free(cfg);
        return print_baseline(c, test);
    }
    entries e;
    int made = entries_make(&e, p, n, named, nnamed, c, cfg);
    pm_compare_cfg_free(cfg);
    pm_gate_test t;
    memset(&t, 0, sizeof t);
    tally k = {0};
    cJSON *json = NULL;
    if (made != 0) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = EXIT_DB;
    } else {
        pm_gate_opts go;
        pm_gate_opts_init(&go);
        pm_error err;
        pm_error_clear(&err);
        if (pm_gate_judge(e.ge, e.nseen, e.nruns, &go, &t, &err) != 0) {
            fprintf(stderr, PROG ": %s\n", err.msg);
            rc = EXIT_DB;
        }
    }
    if (rc == 0) {
        json = c->json ? cJSON_CreateArray() : NULL;
        if (entries_report(&e, &t, nnamed, json, &k) != 0) {
            fprintf(stderr, PROG ": out of memory\n");
            rc = EXIT_DB;
        }
    }
    if (rc == 0)
        rc = check_named(&e, named, nnamed, test);
    entries_free(&e);
    if (rc == 0)
        rc = print_summary(c, test, &t, &k, json);
    else
        cJSON_Delete(json);
    pm_store_points_free(p, n);
    if (rc != 0)
        return rc;
    if ((rc = arc_flush_out()) != 0)
        return rc;
    return k.regressions || t.verdict == PM_GATE_REGRESSION ? EXIT_FOUND
           : k.suspects || t.verdict == PM_GATE_SUSPECT     ? EXIT_SUSPECT
                                                            : EXIT_OK;
}
