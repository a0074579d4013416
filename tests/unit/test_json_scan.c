/* The streaming JSON scanner (src/profile/json_scan.c): tokens, nesting
 * limits, numbers (against the C library's strtod), strings with escapes,
 * errors with their line and column counted by hand, and white space that
 * runs up to the end of a buffer that is not NUL-terminated (each text is
 * copied into a heap block of exactly its length, so that ASan and
 * valgrind see a read past it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfmon/json_scan.h"

/* text copied to a block of exactly strlen(text) bytes, no NUL after it */
static char *exact(const char *text, size_t *len)
{
    *len = strlen(text);
    char *b = malloc(*len ? *len : 1);
    assert_non_null(b);
    memcpy(b, text, *len);
    return b;
}

static void test_tokens(void **state)
{
    (void)state;
    const char *doc =
        "{\"a\": [1, 2.5, -3e2, null, true, false, \"x\"],\n \"b\" : {\"c\": 7},\"\": 0}";
    size_t len;
    char *t = exact(doc, &len);
    pm_error err;
    pm_jscan s;
    pm_jscan_init(&s, "t.json", t, len, 0, &err);
    pm_jmember *m = NULL;
    size_t n = 0;
    assert_int_equal(pm_jscan_top(&s, &m, &n), 0);
    assert_int_equal(n, 3);
    /* names and spans as written, found here by hand */
    assert_int_equal(m[0].klen, 1);
    assert_memory_equal(m[0].key, "a", 1);
    assert_ptr_equal(m[0].val, t + (strchr(doc, '[') - doc));
    assert_int_equal(m[0].vlen, strlen("[1, 2.5, -3e2, null, true, false, \"x\"]"));
    assert_memory_equal(m[1].key, "b", 1);
    assert_int_equal(m[1].vlen, strlen("{\"c\": 7}"));
    assert_int_equal(m[2].klen, 0);
    assert_int_equal(m[2].vlen, 1);

    /* the list, element by element */
    pm_jscan v = s;
    v.p = m[0].val + 1;
    v.e = m[0].val + m[0].vlen;
    double d;
    const double want[] = {1, 2.5, -300};
    for (int i = 0; i < 3; i++) {
        pm_jscan_ws(&v);
        assert_int_equal(pm_jscan_number(&v, &d), 0);
        assert_true(d == want[i]);
        pm_jscan_ws(&v);
        assert_int_equal(*v.p, ',');
        v.p++;
    }
    const char *lit[] = {"null", "true", "false"};
    for (int i = 0; i < 3; i++) {
        pm_jscan_ws(&v);
        assert_int_equal(pm_jscan_literal(&v, lit[i]), 0);
        assert_int_equal(*v.p, ',');
        v.p++;
    }
    pm_jscan_ws(&v);
    assert_int_equal(pm_jscan_string(&v), 0);
    assert_int_equal(*v.p, ']');
    assert_ptr_equal(v.p + 1, v.e);

    /* the object: key, value, next */
    pm_jscan o = s;
    o.p = m[1].val + 1;
    o.e = m[1].val + m[1].vlen;
    char key[8];
    int more = -1;
    assert_int_equal(pm_jscan_key(&o, key, sizeof key), 0);
    assert_string_equal(key, "c");
    assert_int_equal(pm_jscan_number(&o, &d), 0);
    assert_true(d == 7);
    assert_int_equal(pm_jscan_next(&o, &more), 0);
    assert_int_equal(more, 0);
    assert_ptr_equal(o.p, o.e);
    free(m);
    free(t);
}

/* "[[[...1...]]]" nested `depth` deep, then the scan's result */
static int nested(int depth, pm_error *err)
{
    size_t len = 2 * (size_t)depth + 1;
    char *b = malloc(len);
    assert_non_null(b);
    memset(b, '[', (size_t)depth);
    b[depth] = '1';
    memset(b + depth + 1, ']', (size_t)depth);
    pm_jscan s;
    pm_jscan_init(&s, "deep.json", b, len, 0, err);
    int rc = pm_jscan_skip(&s);
    if (rc == 0)
        assert_ptr_equal(s.p, b + len);
    free(b);
    return rc;
}

static void test_nesting(void **state)
{
    (void)state;
    pm_error err;
    assert_int_equal(nested(1, &err), 0);
    assert_int_equal(nested(PM_JSCAN_MAX_DEPTH, &err), 0);
    assert_int_equal(nested(PM_JSCAN_MAX_DEPTH + 1, &err), PM_EFORMAT);
    /* the 257th bracket is byte 257, column 257 of line 1 */
    char want[80];
    snprintf(want, sizeof want, "deep.json:1:%d: nesting too deep", PM_JSCAN_MAX_DEPTH + 1);
    assert_string_equal(err.msg, want);

    const char *bad[][2] = {
        {"[1}", "b.json:1:3: mismatched bracket"},
        {"{\"a\": [1, 2}", "b.json:1:12: mismatched bracket"},
        {"[1, 2", "b.json:1:6: unexpected end of input"},
        {"[1, #]", "b.json:1:5: unexpected character"},
        {"", "b.json:1:1: unexpected end of input, expected a value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len;
        char *t = exact(bad[i][0], &len);
        pm_jscan s;
        pm_jscan_init(&s, "b.json", t, len, 0, &err);
        assert_int_equal(pm_jscan_skip(&s), PM_EFORMAT);
        assert_string_equal(err.msg, bad[i][1]);
        free(t);
    }
}

static void test_numbers(void **state)
{
    (void)state;
    /* each against strtod, bit for bit: the fast path (up to 15
     * significant digits, no exponent) and the strtod path */
    const char *ok[] = {"0",
                        "-0",
                        "7",
                        "123",
                        "0.1",
                        "0.3",
                        "3.14159",
                        "-2.5",
                        "1e10",
                        "1E-5",
                        "-2.5e+3",
                        "123456789012345",
                        "0.000000000000000000001",
                        "9007199254740993",
                        "1234567890123456789012",
                        "0.1000000000000000055511",
                        "2.2250738585072014e-308",
                        "1.7976931348623157e308",
                        "100.00000000000001",
                        "4.35",
                        "1700000000.123456",
                        "12345678",
                        "123456789",
                        "-98765432.1",
                        "1234567812345678",
                        "100000000000000.5",
                        "10.0000123456789",
                        "0.0000000012345678"};
    pm_error err;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        size_t len;
        char *t = exact(ok[i], &len);
        pm_jscan s;
        pm_jscan_init(&s, "n.json", t, len, 0, &err);
        double d = -1;
        assert_int_equal(pm_jscan_number(&s, &d), 0);
        double want = strtod(ok[i], NULL);
        if (memcmp(&d, &want, sizeof d) != 0)
            fail_msg("%s: read %.17g, strtod %.17g", ok[i], d, want);
        assert_ptr_equal(s.p, t + len);
        free(t);
    }
    /* random decimals of 1 to 18 digits, a point anywhere or none, each
     * bit for bit against strtod (the eight-digit steps and their edges) */
    unsigned long long rng = 88172645463325252ull;
    for (int i = 0; i < 20000; i++) {
        char num[32];
        size_t k = 0;
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        int ndig = 1 + (int)(rng % 18), point = (int)((rng >> 8) % (unsigned)(ndig + 3));
        if ((rng >> 16) & 1)
            num[k++] = '-';
        for (int j = 0; j < ndig; j++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            num[k++] = (char)('0' + (j == 0 && ndig > 1 && point != 1 ? 1 + rng % 9 : rng % 10));
            if (j + 1 == point && j + 1 < ndig)
                num[k++] = '.';
        }
        num[k] = 0;
        size_t len;
        char *t = exact(num, &len);
        pm_jscan s;
        pm_jscan_init(&s, "n.json", t, len, 0, &err);
        double d = -1;
        assert_int_equal(pm_jscan_number(&s, &d), 0);
        double want = strtod(num, NULL);
        if (memcmp(&d, &want, sizeof d) != 0)
            fail_msg("%s: read %.17g, strtod %.17g", num, d, want);
        assert_ptr_equal(s.p, t + len);
        free(t);
    }
    /* malformed: the message and the column of the offending byte */
    const char *bad[][2] = {
        {"-", "n.json:1:1: malformed JSON: expected a number"},
        {".5", "n.json:1:1: malformed JSON: expected a number"},
        {"1.", "n.json:1:3: malformed JSON: expected a digit"},
        {"1.x", "n.json:1:3: malformed JSON: expected a digit"},
        {"1e", "n.json:1:3: malformed JSON: expected an exponent"},
        {"-2E+", "n.json:1:5: malformed JSON: expected an exponent"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len;
        char *t = exact(bad[i][0], &len);
        pm_jscan s;
        pm_jscan_init(&s, "n.json", t, len, 0, &err);
        double d;
        assert_int_equal(pm_jscan_number(&s, &d), PM_EFORMAT);
        assert_string_equal(err.msg, bad[i][1]);
        free(t);
    }
    /* a number stops at the first byte that is not its own: "01" is 0 */
    size_t len;
    char *t = exact("01", &len);
    pm_jscan s;
    pm_jscan_init(&s, "n.json", t, len, 0, &err);
    double d;
    assert_int_equal(pm_jscan_number(&s, &d), 0);
    assert_true(d == 0);
    assert_ptr_equal(s.p, t + 1);
    free(t);
    /* a literal that is not there */
    t = exact("nul", &len);
    pm_jscan_init(&s, "n.json", t, len, 0, &err);
    assert_int_equal(pm_jscan_literal(&s, "null"), PM_EFORMAT);
    assert_string_equal(err.msg, "n.json:1:1: malformed JSON: unexpected value");
    free(t);
}

/* pm_jscan_plain_numbers: the run of plain numbers after '[' or ',',
 * and where it leaves the cursor for the caller's general steps. */
static void test_plain_numbers(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t cap;
        size_t want;      /* numbers read */
        int closed;       /* the ']' read */
        const char *rest; /* the text at the cursor afterwards */
        double v[4];
    } rows[] = {
        {"1, 2.5,\n    -3]", 8, 3, 1, "", {1, 2.5, -3}},
        {"\n            1700000000,\n            1700000001]",
         8,
         2,
         1,
         "",
         {1700000000, 1700000001}},
        {"1, \"2\", 3]", 8, 1, 0, " \"2\", 3]", {1}},
        {"1, null]", 8, 1, 0, " null]", {1}},
        {"1,2,3]", 2, 2, 0, "3]", {1, 2}},
        {"1e5, 2]", 8, 0, 0, "1e5, 2]", {0}},
        {"1 2]", 8, 0, 0, "1 2]", {0}},
        {"7, 1234567890123456, 1]", 8, 1, 0, " 1234567890123456, 1]", {7}},
        {"0.25, 01]", 8, 1, 0, " 01]", {0.25}},
        {"5", 8, 0, 0, "5", {0}},
        {"]", 8, 0, 0, "]", {0}},
        {"-0.0000001, 12345678.5]", 8, 2, 1, "", {-0.0000001, 12345678.5}},
    };
    pm_error err;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t len;
        char *t = exact(rows[i].text, &len);
        pm_jscan s;
        pm_jscan_init(&s, "l.json", t, len, 0, &err);
        double v[8];
        int closed = -1;
        size_t n = pm_jscan_plain_numbers(&s, v, rows[i].cap, &closed);
        size_t left = (size_t)(t + len - s.p);
        if (n != rows[i].want || closed != rows[i].closed || strlen(rows[i].rest) != left ||
            memcmp(rows[i].rest, s.p, left) != 0)
            fail_msg("%s: %zu numbers, closed %d, rest \"%.*s\"", rows[i].text, n, closed,
                     (int)(t + len - s.p), s.p);
        for (size_t k = 0; k < n; k++) {
            double want = rows[i].v[k];
            if (memcmp(&v[k], &want, sizeof want) != 0)
                fail_msg("%s: number %zu is %.17g, not %.17g", rows[i].text, k, v[k], want);
        }
        free(t);
    }
}

/* pm_jscan_skip over a list of numbers laid out as json.dump writes it,
 * with one byte that is not plain JSON put at each place in turn: every
 * such byte is found, whichever 16-byte step it falls in. */
static void test_skip_every_byte(void **state)
{
    (void)state;
    const char *list = "[\n    1700000000,\n    12.5,\n    -3,\n    4e+2,\n    0.25\n]";
    size_t n = strlen(list);
    pm_error err;
    for (int b = 1; b < 256; b++) {
        int plain = (b >= '0' && b <= '9') || ((b | 0x20) >= 'a' && (b | 0x20) <= 'z') ||
                    strchr(" \t\n\r,:-+.", b) != NULL;
        if (plain || strchr("\"[]{}", b))
            continue;
        for (size_t at = 1; at + 1 < n; at++) {
            char *t = malloc(n);
            assert_non_null(t);
            memcpy(t, list, n);
            t[at] = (char)b;
            pm_jscan s;
            pm_error_clear(&err);
            pm_jscan_init(&s, "b.json", t, n, 0, &err);
            if (pm_jscan_skip(&s) != PM_EFORMAT || !strstr(err.msg, "unexpected character"))
                fail_msg("byte 0x%02x at %zu: not found (%s)", (unsigned)b, at, err.msg);
            free(t);
        }
    }
}

static void test_strings(void **state)
{
    (void)state;
    pm_error err;
    /* escapes, quotes and brackets inside strings are not structure */
    const char *doc = "{\"k\\\"ey\": \"a\\\"b\\\\c\\u00e9 ] } [\", \"x\": \"\\\\\"}";
    size_t len;
    char *t = exact(doc, &len);
    pm_jscan s;
    pm_jscan_init(&s, "s.json", t, len, 0, &err);
    pm_jmember *m = NULL;
    size_t n = 0;
    assert_int_equal(pm_jscan_top(&s, &m, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(m[0].klen, strlen("k\\\"ey"));
    assert_int_equal(m[0].vlen, strlen("\"a\\\"b\\\\c\\u00e9 ] } [\""));
    assert_int_equal(m[1].vlen, strlen("\"\\\\\""));
    const char *val0 = m[0].val;
    free(m);
    /* an escaped member name is given as "" (never matches a field) */
    pm_jscan k = s;
    k.p = t + 1;
    char key[16];
    assert_int_equal(pm_jscan_key(&k, key, sizeof key), 0);
    assert_string_equal(key, "");
    assert_ptr_equal(k.p, val0);
    free(t);
    /* a name as long as the buffer is "" too; one byte shorter fits */
    t = exact("\"abcd\": 1", &len);
    pm_jscan_init(&s, "s.json", t, len, 0, &err);
    assert_int_equal(pm_jscan_key(&s, key, 4), 0);
    assert_string_equal(key, "");
    pm_jscan_init(&s, "s.json", t, len, 0, &err);
    assert_int_equal(pm_jscan_key(&s, key, 5), 0);
    assert_string_equal(key, "abcd");
    free(t);

    const char *bad[][2] = {
        {"\"abc", "s.json:1:1: unterminated string"},
        {"\"ab\\", "s.json:1:1: unterminated string"},
        {"\"a\tb\"", "s.json:1:3: control character in string"},
        {"\"a\nb\"", "s.json:1:3: control character in string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        t = exact(bad[i][0], &len);
        pm_jscan_init(&s, "s.json", t, len, 0, &err);
        assert_int_equal(pm_jscan_string(&s), PM_EFORMAT);
        assert_string_equal(err.msg, bad[i][1]);
        free(t);
    }
}

/* Errors in a document of several lines: line and column as an editor
 * shows them (both from 1, a tab one column). */
static void test_error_positions(void **state)
{
    (void)state;
    const char *doc[][2] = {
        {"{\n  \"a\": [1, 2],\n  \"b\" 3\n}", "p.json:3:7: expected ':'"},
        {"{\n  \"a\": 1\n  \"b\": 2\n}", "p.json:3:3: expected ',' or '}'"},
        {"{\"a\": 1}\n\n\tx", "p.json:3:2: trailing characters after the top-level object"},
        {"\n\n[1]", "p.json:3:1: expected a JSON object"},
        {"{\"a\": 1, 2: 3}", "p.json:1:10: expected a member name"},
        {"{\"a\":\n\"b\nc\"}", "p.json:2:3: control character in string"},
    };
    for (size_t i = 0; i < sizeof doc / sizeof doc[0]; i++) {
        size_t len;
        char *t = exact(doc[i][0], &len);
        pm_error err;
        pm_jscan s;
        pm_jscan_init(&s, "p.json", t, len, 0, &err);
        pm_jmember *m = (pm_jmember *)1;
        size_t n = 99;
        assert_int_equal(pm_jscan_top(&s, &m, &n), PM_EFORMAT);
        assert_string_equal(err.msg, doc[i][1]);
        free(t);
    }
    /* a NUL after the object ends the text (a string read into a buffer) */
    const char ok[] = "{\"a\": 1}\n\0junk";
    pm_error err;
    pm_jscan s;
    pm_jscan_init(&s, "p.json", ok, sizeof ok - 1, 0, &err);
    pm_jmember *m = NULL;
    size_t n = 0;
    assert_int_equal(pm_jscan_top(&s, &m, &n), 0);
    assert_int_equal(n, 1);
    free(m);
}

/* White space of every length from 0 to 40 (across the 16-byte steps)
 * before a value, and running to the very end of the buffer. */
static void test_whitespace_at_ends(void **state)
{
    (void)state;
    const char ws[] = " \n\t\r";
    for (size_t k = 0; k <= 40; k++) {
        /* k bytes of white space, "5", k bytes of white space */
        size_t len = 2 * k + 1;
        char *b = malloc(len);
        assert_non_null(b);
        for (size_t i = 0; i < k; i++)
            b[i] = b[k + 1 + i] = ws[(i * 7 + k) % 4];
        b[k] = '5';
        pm_error err;
        pm_jscan s;
        pm_jscan_init(&s, "w.json", b, len, 0, &err);
        pm_jscan_ws(&s);
        assert_ptr_equal(s.p, b + k);
        double d;
        assert_int_equal(pm_jscan_number(&s, &d), 0);
        assert_true(d == 5);
        pm_jscan_ws(&s);
        assert_ptr_equal(s.p, b + len);
        /* a value expected where only white space is left */
        pm_jscan_init(&s, "w.json", b + k + 1, k, 0, &err);
        assert_int_equal(pm_jscan_skip(&s), PM_EFORMAT);
        free(b);
        /* an object followed by white space to the end */
        char *o = malloc(k + 8);
        assert_non_null(o);
        memcpy(o, "{\"a\":[]}", 8);
        memset(o + 8, ' ', k);
        pm_jscan_init(&s, "w.json", o, k + 8, 0, &err);
        pm_jmember *m = NULL;
        size_t n = 0;
        assert_int_equal(pm_jscan_top(&s, &m, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(m[0].vlen, 2);
        free(m);
        free(o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens),          cmocka_unit_test(test_nesting),
        cmocka_unit_test(test_numbers),         cmocka_unit_test(test_plain_numbers),
        cmocka_unit_test(test_skip_every_byte), cmocka_unit_test(test_strings),
        cmocka_unit_test(test_error_positions), cmocka_unit_test(test_whitespace_at_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
