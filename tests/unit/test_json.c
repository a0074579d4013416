/* pm_json_parse and pm_text_position: the line and column of a JSON error
 * are those of the offending byte, counted by hand in the text below; a
 * text cut short points past its last byte; numbers that are not finite
 * become null. */
#include <cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/json.h"

static void parse_fails(const char *text, size_t len, const char *want)
{
    pm_error err = {0};
    cJSON *j = pm_json_parse("f.json", text, len, "malformed JSON", &err);
    assert_null(j);
    assert_int_equal(err.code, PM_EFORMAT);
    assert_string_equal(err.msg, want);
}

static void test_positions(void **state)
{
    (void)state;
    /* line 3 is "  x]}": the x is its 3rd byte */
    const char *t = "{\"a\": [1, 2,\n\n  x]}\n";
    parse_fails(t, strlen(t), "f.json:3:3: malformed JSON");
    /* the first byte */
    parse_fails("hello", 5, "f.json:1:1: malformed JSON");
    /* cut short: "{\"a\": [1, 2" is 11 bytes, cJSON gives up just past them */
    parse_fails("{\"a\": [1, 2", 11, "f.json:1:12: malformed JSON");
    /* a length shorter than the string: the rest is not read, and cJSON
     * gives up at the start of the last value it had ("2", offset 4) */
    parse_fails("[1, 2]", 5, "f.json:1:5: malformed JSON");
    /* columns count bytes: "é" is two */
    const char *u = "[\"\xc3\xa9\", ?]";
    parse_fails(u, strlen(u), "f.json:1:8: malformed JSON");
    int line, col;
    pm_text_position("ab\ncd\n", 6, 4, &line, &col);
    assert_int_equal(line, 2);
    assert_int_equal(col, 2);
    /* offset past len stops at len */
    pm_text_position("ab\ncd\n", 2, 100, &line, &col);
    assert_int_equal(line, 1);
    assert_int_equal(col, 3);
}

static void test_ok(void **state)
{
    (void)state;
    pm_error err = {0};
    const char *t = "{\"a\": [1, 2.5]} trailing";
    cJSON *j = pm_json_parse("f.json", t, 15, "malformed JSON", &err);
    assert_non_null(j);
    assert_int_equal(err.code, 0);
    cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "a");
    assert_int_equal(cJSON_GetArraySize(a), 2);
    assert_true(cJSON_GetArrayItem(a, 1)->valuedouble == 2.5);
    cJSON_Delete(j);
}

static void test_num(void **state)
{
    (void)state;
    cJSON *o = cJSON_CreateObject();
    pm_json_num(o, "x", 1.5);
    pm_json_num(o, "nan", NAN);
    pm_json_num(o, "inf", -INFINITY);
    char *s = cJSON_PrintUnformatted(o);
    assert_string_equal(s, "{\"x\":1.5,\"nan\":null,\"inf\":null}");
    free(s);
    cJSON_Delete(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_ok),
        cmocka_unit_test(test_num),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
