/* The HTML report's encoders (html_enc.c): names from input as HTML text
 * and as JSON inside a script element, table-driven with the hostile rows
 * (markup, "</script", "<!--", U+2028/2029, control bytes, bytes that are
 * not UTF-8); base64 against RFC 4648's vectors; SHA-256 against FIPS
 * 180-2's and the lengths around the padding's block edge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>
#include <zlib.h>

#include "perfmon/html.h"

typedef struct esc_case {
    const char *in, *html, *json;
} esc_case;

static const esc_case CASES[] = {
    {"node-1", "node-1", "\"node-1\""},
    {"", "", "\"\""},
    {"</script><script>document.title='x'</script>",
     "&lt;/script&gt;&lt;script&gt;document.title=&#39;x&#39;&lt;/script&gt;",
     "\"\\u003c/script\\u003e\\u003cscript\\u003edocument.title='x'\\u003c/script\\u003e\""},
    {"\"><img src=x onerror=alert(1)>", "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;",
     "\"\\\"\\u003e\\u003cimg src=x onerror=alert(1)\\u003e\""},
    {"<!-- a -->", "&lt;!-- a --&gt;", "\"\\u003c!-- a --\\u003e\""},
    {"a&b", "a&amp;b", "\"a\\u0026b\""},
    {"back\\slash", "back\\slash", "\"back\\\\slash\""},
    {"line\nbreak\ttab", "line\nbreak\ttab", "\"line\\nbreak\\ttab\""},
    {"bell\x07"
     "del\x7f",
     "bell\xEF\xBF\xBD"
     "del\xEF\xBF\xBD",
     "\"bell\\u0007del\\u007f\""},
    {"ls\xE2\x80\xA8ps\xE2\x80\xA9", "ls\xE2\x80\xA8ps\xE2\x80\xA9", "\"ls\\u2028ps\\u2029\""},
    {"\xC3\xBCn\xC3\xAF\xC3\xA7ode \xF0\x9F\x96\xA5",
     "\xC3\xBCn\xC3\xAF\xC3\xA7ode \xF0\x9F\x96\xA5",
     "\"\xC3\xBCn\xC3\xAF\xC3\xA7ode \xF0\x9F\x96\xA5\""},
    /* not UTF-8: a lone continuation byte, an overlong '<', a surrogate,
     * a truncated sequence at the end */
    {"a\x80z", "a\xEF\xBF\xBDz", "\"a\\ufffdz\""},
    {"\xC0\xBCscript", "\xEF\xBF\xBD\xEF\xBF\xBDscript", "\"\\ufffd\\ufffdscript\""},
    {"\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", "\"\\ufffd\\ufffd\\ufffd\""},
    {"x\xE2\x80", "x\xEF\xBF\xBD\xEF\xBF\xBD", "\"x\\ufffd\\ufffd\""},
};

static void test_escapers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        pm_buf b;
        pm_buf_init(&b);
        pm_html_text(&b, CASES[i].in);
        const char *got = b.len ? b.data : "";
        if (strcmp(got, CASES[i].html) != 0)
            fail_msg("row %zu: pm_html_text gave \"%s\", want \"%s\"", i, got, CASES[i].html);
        pm_buf_reset(&b);
        pm_html_json_str(&b, CASES[i].in);
        if (strcmp(b.data, CASES[i].json) != 0)
            fail_msg("row %zu: pm_html_json_str gave %s, want %s", i, b.data, CASES[i].json);
        pm_buf_free(&b);
    }
}

/* Whatever the bytes, neither encoding holds markup that ends a script
 * element or starts a tag, and the JSON form has no raw U+2028/2029. */
static void test_escapers_all_bytes(void **state)
{
    (void)state;
    char s[3 * 256 + 1];
    for (int i = 1; i < 256; i++) {
        s[3 * (i - 1)] = (char)i;
        s[3 * (i - 1) + 1] = '<';
        s[3 * (i - 1) + 2] = '/';
    }
    s[3 * 255] = 0;
    pm_buf b;
    pm_buf_init(&b);
    pm_html_text(&b, s);
    assert_null(memchr(b.data, '<', b.len));
    assert_null(memchr(b.data, '>', b.len));
    assert_null(memchr(b.data, '"', b.len));
    pm_buf_reset(&b);
    pm_html_json_str(&b, "\xE2\x80\xA8</script><!--\xE2\x80\xA9");
    assert_null(memchr(b.data, '<', b.len));
    assert_null(strstr(b.data, "\xE2\x80\xA8"));
    assert_null(strstr(b.data, "\xE2\x80\xA9"));
    pm_buf_free(&b);
}

static void test_base64(void **state)
{
    (void)state;
    static const char *const want[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
                                       "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t n = 0; n <= 6; n++) {
        pm_buf b;
        pm_buf_init(&b);
        pm_base64(&b, "foobar", n);
        const char *got = b.len ? b.data : "";
        if (strcmp(got, want[n]) != 0)
            fail_msg("base64 of %zu bytes of \"foobar\": \"%s\", want \"%s\"", n, got, want[n]);
        pm_buf_free(&b);
    }
}

static void hex(const uint8_t h[32], char out[65])
{
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", h[i]);
}

static void test_sha256(void **state)
{
    (void)state;
    struct {
        const char *in;
        size_t repeat;
        const char *want;
    } v[] = {
        {"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
        /* 55, 56 and 64 bytes: the length fits the last block, does not,
         * and a whole block before the padding (sha256sum's values) */
        {"a", 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
        {"a", 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
        {"a", 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        size_t n = strlen(v[i].in) * v[i].repeat;
        char *buf = malloc(n + 1);
        assert_non_null(buf);
        for (size_t k = 0; k < v[i].repeat; k++)
            memcpy(buf + k * strlen(v[i].in), v[i].in, strlen(v[i].in));
        uint8_t h[32];
        char got[65];
        pm_sha256(buf, n, h);
        hex(h, got);
        free(buf);
        if (strcmp(got, v[i].want) != 0)
            fail_msg("sha256 row %zu (%zu bytes): %s, want %s", i, n, got, v[i].want);
    }
}

/* The series' packing: the shuffle puts byte j of every element in plane
 * j (a tail shorter than an element kept); shuffled and deflated float32
 * series inflate (zlib, as the browser's DecompressionStream) and
 * unshuffle to the same bytes, and a smooth series packs to far fewer
 * bytes than it has; the same input gives the same stream. */
static void test_pack(void **state)
{
    (void)state;
    const unsigned char in[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    const unsigned char want[] = {1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12, 13, 14};
    unsigned char got[sizeof in];
    pm_html_shuffle(in, sizeof in, 4, got);
    assert_memory_equal(got, want, sizeof want);
    pm_html_shuffle(in, sizeof in, 1, got);
    assert_memory_equal(got, in, sizeof in);

    enum { N = 4096 };
    float *v = malloc(N * sizeof *v);
    unsigned char *sh = malloc(N * 4), *back = malloc(N * 4), *un = malloc(N * 4);
    assert_non_null(v);
    assert_non_null(sh);
    assert_non_null(back);
    assert_non_null(un);
    for (int i = 0; i < N; i++)
        v[i] = (float)floor(50 + 40 * sin(i / 100.0)); /* a gauge in whole units */
    v[7] = NAN;
    pm_html_shuffle(v, N * 4, 4, sh);
    unsigned char *z = NULL, *z2 = NULL;
    size_t zl = 0, zl2 = 0;
    assert_int_equal(pm_html_deflate(sh, N * 4, &z, &zl), 0);
    assert_int_equal(pm_html_deflate(sh, N * 4, &z2, &zl2), 0);
    assert_true(zl == zl2 && memcmp(z, z2, zl) == 0);
    assert_true(zl < N * 4 / 8);
    uLongf bl = N * 4;
    assert_int_equal(uncompress(back, &bl, z, zl), Z_OK);
    assert_int_equal(bl, N * 4);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < N; i++)
            un[i * 4 + j] = back[j * N + i];
    assert_memory_equal(un, v, N * 4);
    free(z);
    free(z2);
    free(v);
    free(sh);
    free(back);
    free(un);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapers), cmocka_unit_test(test_escapers_all_bytes),
        cmocka_unit_test(test_base64),   cmocka_unit_test(test_sha256),
        cmocka_unit_test(test_pack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
