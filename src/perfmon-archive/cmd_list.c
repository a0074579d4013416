/* perfmon-archive list: the archived tests, or one test's entries. */

#include "archive_cmd.h"

static void help_list(FILE *f)
{
    fprintf(f,
            "usage: " PROG " list --db DB [TEST] [--json]\n"
            "Every archived test: runs, distinct entries, first and latest start;\n"
            "with TEST, the names of its entries.\n"
            "%s%s",
            arc_exit_text, "example:\n  " PROG " list --db runs.sqlite nightly\n");
}

/* list TEST: the entry names of one test (closes s). */
static int list_entries(const common *c, pm_store *s, const char *test)
{
    char **names = NULL;
    size_t n = 0;
    pm_error err;
    pm_error_clear(&err);
    int rc = pm_store_entries(s, test, &names, &n, &err);
    pm_store_close(s);
    if (rc) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return EXIT_DB;
    }
    if (n == 0) {
        fprintf(stderr, PROG ": no entries of test \"%s\" in the archive\n", test);
        return EXIT_USAGE;
    }
    if (c->json) {
        cJSON *root = cJSON_CreateArray();
        for (size_t i = 0; root && i < n; i++)
            cJSON_AddItemToArray(root, cJSON_CreateString(names[i]));
        pm_store_names_free(names, n);
        return arc_print_json(root);
    }
    for (size_t i = 0; i < n; i++)
        printf("%s\n", names[i]);
    pm_store_names_free(names, n);
    return arc_flush_out();
}

int arc_cmd_list(int argc, char **argv, common *c)
{
    static const struct option lo[] = {{"db", required_argument, NULL, O_DB},
                                       {"json", no_argument, NULL, O_JSON},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    int rc = arc_parse_opts(argc, argv, ":h", lo, c, help_list, NULL, NULL);
    if (rc >= 0)
        return rc;
    if (argc - optind > 1) {
        fprintf(stderr, PROG " list: unexpected argument %s\n", argv[optind + 1]);
        return EXIT_USAGE;
    }
    pm_store *s = NULL;
    if ((rc = arc_open_store(c, &s, 1)) != 0)
        return rc;
    if (optind < argc)
        return list_entries(c, s, argv[optind]);
    pm_store_test *t = NULL;
    size_t n = 0;
    pm_error err;
    pm_error_clear(&err);
    rc = pm_store_tests(s, &t, &n, &err);
    pm_store_close(s);
    if (rc) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return EXIT_DB;
    }
    char a[40], b[40];
    if (c->json) {
        cJSON *root = cJSON_CreateArray();
        for (size_t i = 0; root && i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddItemToArray(root, o);
            pm_arch_format_time(t[i].first_us, a, sizeof a);
            pm_arch_format_time(t[i].last_us, b, sizeof b);
            cJSON_AddStringToObject(o, "test", t[i].test);
            cJSON_AddNumberToObject(o, "runs", (double)t[i].runs);
            cJSON_AddNumberToObject(o, "entries", (double)t[i].entries);
            cJSON_AddStringToObject(o, "first", a);
            cJSON_AddStringToObject(o, "latest", b);
        }
        pm_store_tests_free(t, n);
        return arc_print_json(root);
    }
    printf("%-40s %6s %7s  %-20s  %s\n", "test", "runs", "entries", "first", "latest");
    for (size_t i = 0; i < n; i++) {
        pm_arch_format_time(t[i].first_us, a, sizeof a);
        pm_arch_format_time(t[i].last_us, b, sizeof b);
        printf("%-40s %6zu %7zu  %-20s  %s\n", t[i].test, t[i].runs, t[i].entries, a, b);
    }
    pm_store_tests_free(t, n);
    return arc_flush_out();
}
