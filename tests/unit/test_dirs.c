/* pm_mkdir_p: each directory made is checked with stat(2) by the test
 * itself; an existing directory, a trailing slash, a file in the way, an
 * empty and an overlong name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfmon/dirs.h"

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_mkdir_p(void **state)
{
    (void)state;
    char root[] = "/tmp/pm_test_dirs.XXXXXX";
    assert_non_null(mkdtemp(root));
    char p[512];
    pm_error err;
    snprintf(p, sizeof p, "%s/a/b/c", root);
    assert_int_equal(pm_mkdir_p(p, &err), 0);
    char q[512];
    snprintf(q, sizeof q, "%s/a", root);
    assert_true(is_dir(q));
    snprintf(q, sizeof q, "%s/a/b", root);
    assert_true(is_dir(q));
    assert_true(is_dir(p));
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755 & ~(mode_t)umask(022));
    /* again: nothing to make, still fine; a trailing slash too */
    assert_int_equal(pm_mkdir_p(p, &err), 0);
    snprintf(q, sizeof q, "%s/a/b/d/", root);
    assert_int_equal(pm_mkdir_p(q, &err), 0);
    assert_true(is_dir(q));

    /* a file where a directory should be */
    snprintf(q, sizeof q, "%s/file", root);
    FILE *f = fopen(q, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(pm_mkdir_p(q, &err), PM_EIO);
    char want[600];
    snprintf(want, sizeof want, "%s: not a directory", q);
    assert_string_equal(err.msg, want);
    snprintf(p, sizeof p, "%s/file/x", root);
    assert_int_equal(pm_mkdir_p(p, &err), PM_EIO);
    assert_non_null(strstr(err.msg, ": cannot create directory"));
    assert_false(is_dir(p));

    assert_int_equal(pm_mkdir_p("", &err), PM_EUSAGE);
    char *longp = malloc(5000);
    assert_non_null(longp);
    memset(longp, 'x', 4999);
    longp[4999] = 0;
    assert_int_equal(pm_mkdir_p(longp, &err), PM_EUSAGE);
    free(longp);

    unlink(q);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mkdir_p),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
