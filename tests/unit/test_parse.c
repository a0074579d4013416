/* Unit tests of the common parsers: strict numbers (parse.h), the /proc
 * tokenizer, durations, file-name sanitising (sampler.h), JSON string
 * escaping (buf.h) and CRC-32C (crc32c.h).  Table-driven; every table has
 * its awkward rows (empty, signs, overflow, trailing garbage, invalid
 * UTF-8). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "perfmon/buf.h"
#include "perfmon/crc32c.h"
#include "perfmon/parse.h"
#include "perfmon/sampler.h"
#include "perfmon/strs.h"

#include "../support/testutil.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* --------------------------------------------------------- pm_parse_u64 */

static void test_parse_u64(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int rc;
        uint64_t v;
    } rows[] = {
        {"0", 0, 0},
        {"42", 0, 42},
        {"007", 0, 7},
        {"18446744073709551615", 0, UINT64_MAX},
        {"18446744073709551616", -1, 0}, /* overflow */
        {"99999999999999999999999", -1, 0},
        {"-1", -1, 0}, /* strtoull would wrap this to UINT64_MAX */
        {"+1", -1, 0},
        {" 1", -1, 0},
        {"1 ", -1, 0},
        {"1\n", -1, 0},
        {"12abc", -1, 0},
        {"0x10", -1, 0},
        {"1.0", -1, 0},
        {"", -1, 0},
        {NULL, -1, 0},
    };
    for (size_t i = 0; i < N(rows); i++) {
        uint64_t v = 12345;
        int rc = pm_parse_u64(rows[i].in, &v);
        if (rc != rows[i].rc)
            fail_msg("pm_parse_u64(\"%s\") = %d, expected %d", rows[i].in ? rows[i].in : "NULL", rc,
                     rows[i].rc);
        if (rc == 0)
            assert_int_equal(v, rows[i].v);
        else
            assert_int_equal(v, 12345); /* untouched on failure */
    }
}

/* --------------------------------------------------------- pm_parse_i64 */

static void test_parse_i64(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int rc;
        int64_t v;
    } rows[] = {
        {"0", 0, 0},
        {"-0", 0, 0},
        {"-42", 0, -42},
        {"+42", 0, 42},
        {"9223372036854775807", 0, INT64_MAX},
        {"-9223372036854775808", 0, INT64_MIN},
        {"9223372036854775808", -1, 0},
        {"-9223372036854775809", -1, 0},
        {"-", -1, 0},
        {"+", -1, 0},
        {"--1", -1, 0},
        {"+-1", -1, 0},
        {" -1", -1, 0},
        {"-1 ", -1, 0},
        {"1.5", -1, 0},
        {"12x", -1, 0},
        {"", -1, 0},
        {NULL, -1, 0},
    };
    for (size_t i = 0; i < N(rows); i++) {
        int64_t v = 12345;
        int rc = pm_parse_i64(rows[i].in, &v);
        if (rc != rows[i].rc)
            fail_msg("pm_parse_i64(\"%s\") = %d, expected %d", rows[i].in ? rows[i].in : "NULL", rc,
                     rows[i].rc);
        if (rc == 0)
            assert_true(v == rows[i].v);
    }
}

/* ------------------------------------------------------ pm_parse_double */

static void test_parse_double(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int rc;
        double v;
    } rows[] = {
        {"0", 0, 0.0},
        {"0.5", 0, 0.5},
        {"-2.25", 0, -2.25},
        {"+3", 0, 3.0},
        {".5", 0, 0.5},
        {"1e3", 0, 1000.0},
        {"1.7976931348623157e308", 0, 1.7976931348623157e308},
        {"1e400", -1, 0}, /* overflow */
        {"-1e400", -1, 0},
        {"nan", -1, 0}, /* not finite */
        {"NaN", -1, 0},
        {"inf", -1, 0},
        {"-Infinity", -1, 0},
        {" 1", -1, 0},
        {"1 ", -1, 0},
        {"1.5x", -1, 0},
        {"1,5", -1, 0},
        {"e5", -1, 0},
        {".", -1, 0},
        {"-", -1, 0},
        {"", -1, 0},
        {NULL, -1, 0},
    };
    for (size_t i = 0; i < N(rows); i++) {
        double v = 12345;
        int rc = pm_parse_double(rows[i].in, &v);
        if (rc != rows[i].rc)
            fail_msg("pm_parse_double(\"%s\") = %d, expected %d", rows[i].in ? rows[i].in : "NULL",
                     rc, rows[i].rc);
        if (rc == 0 && v != rows[i].v)
            fail_msg("pm_parse_double(\"%s\") = %.17g, expected %.17g", rows[i].in, v, rows[i].v);
    }
}

/* ------------------------------------------------ pm_scan_u64 / pm_scan_i64 */

static void test_scan_u64(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int rc;
        uint64_t v;
        size_t consumed; /* on failure: 0, nothing consumed */
    } rows[] = {
        {"42", 0, 42, 2},
        {"  42 rest", 0, 42, 4},
        {"\t7\n", 0, 7, 2},
        {"12abc", 0, 12, 2}, /* stops at the first non-digit */
        {"18446744073709551615", 0, UINT64_MAX, 20},
        {"18446744073709551615 1", 0, UINT64_MAX, 20},
        {"18446744073709551616", -1, 0, 0},
        {"184467440737095516150", -1, 0, 0},
        {"-1", -1, 0, 0},
        {"+1", -1, 0, 0},
        {"abc", -1, 0, 0},
        {"   ", -1, 0, 0},
        {"\n5", -1, 0, 0}, /* a newline is not a blank: lines stay apart */
        {"", -1, 0, 0},
    };
    for (size_t i = 0; i < N(rows); i++) {
        const char *p = rows[i].in;
        uint64_t v = 0;
        int rc = pm_scan_u64(&p, &v);
        if (rc != rows[i].rc)
            fail_msg("pm_scan_u64(\"%s\") = %d, expected %d", rows[i].in, rc, rows[i].rc);
        if (rc == 0)
            assert_int_equal(v, rows[i].v);
        assert_int_equal((size_t)(p - rows[i].in), rows[i].consumed);
    }
    /* Successive scans walk a /proc line. */
    const char *p = "cpu0 10 20  30\t40";
    p += 4;
    uint64_t t[5];
    size_t n = 0;
    while (n < 5 && pm_scan_u64(&p, &t[n]) == 0)
        n++;
    assert_int_equal(n, 4);
    assert_int_equal(t[0], 10);
    assert_int_equal(t[3], 40);
    assert_int_equal(*p, '\0');
}

static void test_scan_i64(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int rc;
        int64_t v;
        size_t consumed;
    } rows[] = {
        {"-5 x", 0, -5, 2},
        {"  17", 0, 17, 4},
        {"-9223372036854775808", 0, INT64_MIN, 20},
        {"9223372036854775807", 0, INT64_MAX, 19},
        {"9223372036854775808", -1, 0, 0},
        {"-9223372036854775809", -1, 0, 0},
        {"-", -1, 0, 0},
        {"--5", -1, 0, 0},
        {"x", -1, 0, 0},
        {"", -1, 0, 0},
    };
    for (size_t i = 0; i < N(rows); i++) {
        const char *p = rows[i].in;
        int64_t v = 0;
        int rc = pm_scan_i64(&p, &v);
        if (rc != rows[i].rc)
            fail_msg("pm_scan_i64(\"%s\") = %d, expected %d", rows[i].in, rc, rows[i].rc);
        if (rc == 0)
            assert_true(v == rows[i].v);
        assert_int_equal((size_t)(p - rows[i].in), rows[i].consumed);
    }
}

static void test_scan_i64_blank_after_sign(void **state)
{
    (void)state;
    /* A lone '-' field followed by a number (e.g. a "-" placeholder
     * column) is not merged with the next field: -1 and nothing consumed,
     * as for "-". */
    static const char *const rows[] = {"- 5", "-\t7", "  - 5", "-+5"};
    for (size_t i = 0; i < N(rows); i++) {
        const char *p = rows[i];
        int64_t v = 0;
        if (pm_scan_i64(&p, &v) != -1)
            fail_msg("pm_scan_i64(\"%s\") accepted %lld", rows[i], (long long)v);
        assert_ptr_equal(p, rows[i]);
    }
}

/* ------------------------------------------------------- pm_split_fields */

static void test_split_fields(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t max;
        size_t n;
        const char *f[5];
    } rows[] = {
        {"a b  c", 8, 3, {"a", "b", "c"}},
        {"  lead\ttab\n", 8, 2, {"lead", "tab"}},
        {"one", 8, 1, {"one"}},
        {"", 8, 0, {NULL}},
        {"   \t \n", 8, 0, {NULL}},
        {"a b c d", 2, 2, {"a", "b"}}, /* at most max fields */
        {"a b", 0, 0, {NULL}},
        {"0.50 0.40 0.30 2/345 12345\n", 5, 5, {"0.50", "0.40", "0.30", "2/345", "12345"}},
        {"x\ny", 8, 2, {"x", "y"}},
    };
    for (size_t i = 0; i < N(rows); i++) {
        char buf[128];
        char *f[8] = {NULL};
        snprintf(buf, sizeof buf, "%s", rows[i].in);
        size_t n = pm_split_fields(buf, f, rows[i].max);
        if (n != rows[i].n)
            fail_msg("pm_split_fields(\"%s\", %zu) = %zu, expected %zu", rows[i].in, rows[i].max, n,
                     rows[i].n);
        for (size_t k = 0; k < n; k++)
            assert_string_equal(f[k], rows[i].f[k]);
        for (size_t k = n; k < 8; k++)
            assert_null(f[k]); /* nothing written past the count */
    }
}

/* --------------------------------------------------------- pm_next_line */

static void test_next_line(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t n;
        const char *lines[5];
    } rows[] = {
        {"a\nb\n\nc", 4, {"a", "b", "", "c"}},
        {"a\nb\n", 2, {"a", "b"}},
        {"no newline", 1, {"no newline"}},
        {"\n", 1, {""}},
        {"\n\n", 2, {"", ""}},
        {"", 0, {NULL}},
    };
    for (size_t i = 0; i < N(rows); i++) {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", rows[i].in);
        char *cur = buf, *line;
        size_t n = 0;
        while ((line = pm_next_line(&cur)) != NULL) {
            assert_true(n < rows[i].n);
            assert_string_equal(line, rows[i].lines[n]);
            n++;
        }
        assert_int_equal(n, rows[i].n);
        assert_null(pm_next_line(&cur)); /* stays at the end */
    }
    char *nul = NULL;
    assert_null(pm_next_line(&nul));
}

/* ------------------------------------------------------------ pm_kv_u64 */

static void test_kv_u64(void **state)
{
    (void)state;
    static const char meminfo[] = "MemTotal:       24683656 kB\n"
                                  "MemFree:        24244604 kB\n"
                                  "SwapCached:            5 kB\n"
                                  "Cached:           267616 kB\n"
                                  "Active(anon):       1536 kB\n"
                                  "Pss_Anon:              3 kB\n"
                                  "Pss:                   4 kB\n"
                                  "Bad:              x kB\n"
                                  "Neg:               -1 kB\n"
                                  "Big:  18446744073709551616 kB\n"
                                  "HugePages_Total:       0\n"
                                  "Last:                  9";
    static const struct {
        const char *key;
        int rc;
        uint64_t v;
    } rows[] = {
        {"MemTotal", 0, 24683656},
        {"MemFree", 0, 24244604},
        {"Cached", 0, 267616}, /* not SwapCached */
        {"SwapCached", 0, 5},
        {"Active(anon)", 0, 1536},
        {"Pss", 0, 4}, /* not Pss_Anon */
        {"HugePages_Total", 0, 0},
        {"Last", 0, 9},   /* no trailing newline */
        {"Mem", -1, 0},   /* prefix of a key */
        {"Total", -1, 0}, /* suffix of a key */
        {"Absent", -1, 0},
        {"Bad", -1, 0},
        {"Neg", -1, 0},
        {"Big", -1, 0},
    };
    for (size_t i = 0; i < N(rows); i++) {
        uint64_t v = 777;
        int rc = pm_kv_u64(meminfo, rows[i].key, &v);
        if (rc != rows[i].rc)
            fail_msg("pm_kv_u64(\"%s\") = %d, expected %d", rows[i].key, rc, rows[i].rc);
        if (rc == 0)
            assert_int_equal(v, rows[i].v);
    }
    uint64_t v;
    assert_int_equal(pm_kv_u64("", "MemTotal", &v), -1);
    /* A key in the middle of a line is not a key. */
    assert_int_equal(pm_kv_u64("xMemTotal: 5\n", "MemTotal", &v), -1);
    /* smaps_rollup: the first line is an address range. */
    assert_int_equal(pm_kv_u64("557eda170000-7ffc3343e000 ---p 00000000 00:00 0 [rollup]\n"
                               "Rss:  1708 kB\nPss:   524 kB\n",
                               "Pss", &v),
                     0);
    assert_int_equal(v, 524);
}

/* ------------------------------------------------- pm_parse_duration_ns */

static void test_parse_duration(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int rc;
        int64_t ns;
    } rows[] = {
        {"0.2", 0, 200000000},
        {"30", 0, 30000000000},
        {"5s", 0, 5000000000},
        {"2m", 0, 120000000000},
        {"1h", 0, 3600000000000},
        {"1.5h", 0, 5400000000000},
        {"1d", 0, 86400000000000},
        {"250ms", 0, 250000000},
        {"0.05", 0, 50000000},
        {"0", 0, 0},
        {"-1", -1, 0},
        {"-1s", -1, 0},
        {"abc", -1, 0},
        {"1e400", -1, 0},
        {"1e12", -1, 0}, /* beyond int64 nanoseconds */
        {"nan", -1, 0},
        {"inf", -1, 0},
        {"", -1, 0},
        {"s", -1, 0},
        {"ms", -1, 0},
        {"5 s", -1, 0},
        {" 5", -1, 0},
        {"5x", -1, 0},
        {"5ss", -1, 0},
        {"5sm", -1, 0},
        {NULL, -1, 0},
    };
    for (size_t i = 0; i < N(rows); i++) {
        int64_t ns = -42;
        int rc = pm_parse_duration_ns(rows[i].in, &ns);
        if (rc != rows[i].rc)
            fail_msg("pm_parse_duration_ns(\"%s\") = %d, expected %d",
                     rows[i].in ? rows[i].in : "NULL", rc, rows[i].rc);
        if (rc == 0 && ns != rows[i].ns)
            fail_msg("pm_parse_duration_ns(\"%s\") = %lld ns, expected %lld", rows[i].in,
                     (long long)ns, (long long)rows[i].ns);
    }
    /* A string longer than the internal buffer is refused, not cut. */
    char lng[200];
    memset(lng, '1', sizeof lng - 1);
    lng[sizeof lng - 1] = '\0';
    int64_t ns;
    assert_int_equal(pm_parse_duration_ns(lng, &ns), -1);
}

/* ------------------------------------------------------ pm_sanitize_name */

static void check_safe_name(const char *in, const char *out, size_t cap)
{
    assert_true(strlen(out) < cap);
    if (cap > 1)
        assert_true(out[0] != '\0');
    assert_true(out[0] != '.');
    for (const char *p = out; *p; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        if (!ok)
            fail_msg("pm_sanitize_name(\"%s\") = \"%s\": bad byte 0x%02x", in ? in : "NULL", out,
                     (unsigned char)c);
    }
}

static void test_sanitize_name(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t cap;
        const char *out;
    } rows[] = {
        {"node-01.cluster_a", 64, "node-01.cluster_a"},
        {"../../etc/passwd", 64, "_._.._etc_passwd"},
        {"/", 64, "_"},
        {"", 64, "unknown"},
        {NULL, 64, "unknown"},
        {".hidden", 64, "_hidden"},
        {".", 64, "_"},
        {"..", 64, "_."},
        {"a b/c\\d", 64, "a_b_c_d"},
        {"h\xc3\xa9llo", 64, "h__llo"},             /* UTF-8: each byte replaced */
        {"\xe8\xae\xa1\xe7\xae\x97", 64, "______"}, /* CJK */
        {"\xff\xfe", 64, "__"},                     /* invalid UTF-8 */
        {"tab\there\nnl", 64, "tab_here_nl"},
        {"12345.job;rm -rf", 64, "12345.job_rm_-rf"},
        {"abcdef", 4, "abc"}, /* at most cap-1 bytes */
        {"abcdef", 2, "a"},
        {"", 4, "unk"},
        {".x", 2, "_"},
    };
    for (size_t i = 0; i < N(rows); i++) {
        char out[64];
        memset(out, 'Z', sizeof out);
        pm_sanitize_name(rows[i].in, out, rows[i].cap);
        if (strcmp(out, rows[i].out) != 0)
            fail_msg("pm_sanitize_name(\"%s\", %zu) = \"%s\", expected \"%s\"",
                     rows[i].in ? rows[i].in : "NULL", rows[i].cap, out, rows[i].out);
        check_safe_name(rows[i].in, out, rows[i].cap);
        if (rows[i].cap < sizeof out)
            assert_int_equal(out[rows[i].cap], 'Z'); /* no write past cap */
    }
    /* cap 0 writes nothing. */
    char z = 'Z';
    pm_sanitize_name("abc", &z, 0);
    assert_int_equal(z, 'Z');
}

/* ------------------------------------------------------- pm_buf_json_str */

static void test_buf_json_str(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        const char *json;    /* exact output */
        const char *decoded; /* what a JSON parser reads back; NULL: same as in */
    } rows[] = {
        {"abc", "\"abc\"", NULL},
        {"", "\"\"", NULL},
        {"a\"b\\c", "\"a\\\"b\\\\c\"", NULL},
        {"/", "\"/\"", NULL},
        {"\n\t\r\x01\x1f", "\"\\u000a\\u0009\\u000d\\u0001\\u001f\"", NULL},
        {"\x7f", "\"\\u007f\"", NULL},
        {"h\xc3\xa9llo", "\"h\xc3\xa9llo\"", NULL},         /* valid 2-byte */
        {"\xe2\x82\xac", "\"\xe2\x82\xac\"", NULL},         /* euro, 3-byte */
        {"\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"", NULL}, /* emoji, 4-byte */
        {"a\xff"
         "b",
         "\"a\xef\xbf\xbd"
         "b\"",
         "a\xef\xbf\xbd"
         "b"},                                        /* invalid byte */
        {"\xc3", "\"\xef\xbf\xbd\"", "\xef\xbf\xbd"}, /* truncated at end */
        {"\xe2\x82"
         "x",
         "\"\xef\xbf\xbd\xef\xbf\xbd"
         "x\"",
         "\xef\xbf\xbd\xef\xbf\xbd"
         "x"},
        {"\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"", "\xef\xbf\xbd\xef\xbf\xbd"}, /* overlong */
        {"\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
         "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* UTF-16 surrogate */
        {"\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
         "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* above U+10FFFF */
        {"\x80", "\"\xef\xbf\xbd\"", "\xef\xbf\xbd"},         /* lone continuation */
    };
    for (size_t i = 0; i < N(rows); i++) {
        pm_buf b;
        pm_buf_init(&b);
        pm_buf_json_str(&b, rows[i].in);
        assert_false(b.oom);
        if (strcmp(b.data, rows[i].json) != 0)
            fail_msg("row %zu: pm_buf_json_str gave %s, expected %s", i, b.data, rows[i].json);
        /* Parse it back. */
        cJSON *j = cJSON_Parse(b.data);
        assert_non_null(j);
        assert_true(cJSON_IsString(j));
        assert_string_equal(j->valuestring, rows[i].decoded ? rows[i].decoded : rows[i].in);
        cJSON_Delete(j);
        pm_buf_free(&b);
    }
    /* NULL is the empty string; appends compose. */
    pm_buf b;
    pm_buf_init(&b);
    pm_buf_puts(&b, "[");
    pm_buf_json_str(&b, NULL);
    pm_buf_puts(&b, ",");
    pm_buf_json_str(&b, "x");
    pm_buf_puts(&b, "]");
    assert_string_equal(b.data, "[\"\",\"x\"]");
    pm_buf_free(&b);
}

static void test_buf_json_num(void **state)
{
    (void)state;
    /* Values beyond int64_t (2^63 and up) are written without converting
     * them to an integer first, which would be undefined behaviour
     * (`make check SAN=1` adds -fsanitize=float-cast-overflow for it). */
    static const struct {
        double v;
        const char *out;
    } rows[] = {
        {0.0, "0"},
        {3.0, "3"},
        {-7.0, "-7"},
        {0.5, "0.5"},
        {0.1, "0.1"},
        {1e300, "1e+300"},
        {NAN, "null"},
        {INFINITY, "null"},
        {-INFINITY, "null"},
        /* around and beyond the int64_t range */
        {-1e300, "-1e+300"},
        {9223372036854775808.0, "9.2233720368547758e+18"},
        {-9223372036854775808.0, "-9.2233720368547758e+18"},
        {1e19, "1e+19"},
        {9.0e15, "9e+15"},
        {8999999999999999.0, "8999999999999999"},
        {-4.0e15, "-4000000000000000"},
    };
    for (size_t i = 0; i < N(rows); i++) {
        pm_buf b;
        pm_buf_init(&b);
        pm_buf_json_num(&b, rows[i].v);
        assert_string_equal(b.data, rows[i].out);
        pm_buf_free(&b);
    }
    /* Round trip: what is written reads back exactly. */
    static const double vals[] = {1.0 / 3.0,          2.0 / 3.0, 123456.789e-10,
                                  9007199254740993.0, -0.000123, 5e-324};
    for (size_t i = 0; i < N(vals); i++) {
        pm_buf b;
        pm_buf_init(&b);
        pm_buf_json_num(&b, vals[i]);
        assert_true(strtod(b.data, NULL) == vals[i]);
        pm_buf_free(&b);
    }
}

/* -------------------------------------------------------------- crc32c */

/* Bit-at-a-time reference (RFC 3720 B.4 polynomial, reflected). */
static uint32_t crc_ref(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
}

static void test_crc32c(void **state)
{
    (void)state;
    unsigned char zeros[32], ones[32], inc[32], dec[32];
    for (int i = 0; i < 32; i++) {
        zeros[i] = 0;
        ones[i] = 0xFF;
        inc[i] = (unsigned char)i;
        dec[i] = (unsigned char)(31 - i);
    }
    static const unsigned char iscsi[48] = {
        0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
        0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    const struct {
        const void *p;
        size_t n;
        uint32_t crc;
    } rows[] = {
        {"123456789", 9, 0xE3069283u}, /* the standard check value */
        {"", 0, 0x00000000u},
        {"a", 1, 0xC1D04330u},
        {zeros, 32, 0x8A9136AAu}, /* RFC 3720 B.4 */
        {ones, 32, 0x62A8AB43u},
        {inc, 32, 0x46DD794Eu},
        {dec, 32, 0x113FDB5Cu},
        {iscsi, 48, 0xD9963A56u}, /* RFC 3720 B.4, iSCSI read command */
    };
    for (size_t i = 0; i < N(rows); i++) {
        uint32_t c = pm_crc32c(0, rows[i].p, rows[i].n);
        if (c != rows[i].crc)
            fail_msg("row %zu: crc32c = 0x%08X, expected 0x%08X", i, c, rows[i].crc);
    }
    /* Continuing a CRC equals one pass. */
    uint32_t part = pm_crc32c(0, "1234", 4);
    assert_int_equal(pm_crc32c(part, "56789", 5), 0xE3069283u);
    /* Every length and alignment against the bitwise reference (the
     * slicing-by-8 loop and its tail). */
    unsigned char buf[200];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 131u + 7u);
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n + off <= 100; n++) {
            assert_int_equal(pm_crc32c(0, buf + off, n), crc_ref(buf + off, n));
            /* The portable version too, wherever the instruction is used. */
            assert_int_equal(pm_crc32c_sw(0, buf + off, n), crc_ref(buf + off, n));
        }
    for (size_t i = 0; i < N(rows); i++)
        assert_int_equal(pm_crc32c_sw(0, rows[i].p, rows[i].n), rows[i].crc);
    fprintf(stderr, "crc32c: %s\n", pm_crc32c_hw_available() ? "SSE4.2 instruction" : "tables");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_u64),     cmocka_unit_test(test_parse_i64),
        cmocka_unit_test(test_parse_double),  cmocka_unit_test(test_scan_u64),
        cmocka_unit_test(test_scan_i64),      cmocka_unit_test(test_scan_i64_blank_after_sign),
        cmocka_unit_test(test_split_fields),  cmocka_unit_test(test_next_line),
        cmocka_unit_test(test_kv_u64),        cmocka_unit_test(test_parse_duration),
        cmocka_unit_test(test_sanitize_name), cmocka_unit_test(test_buf_json_str),
        cmocka_unit_test(test_buf_json_num),  cmocka_unit_test(test_crc32c),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
