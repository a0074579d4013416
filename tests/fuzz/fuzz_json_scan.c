/* libFuzzer target: the streaming JSON scanner alone (src/profile/
 * json_scan.c), through every entry point: the top-level object, then
 * each member's value walked with keys, numbers, literals, strings and
 * skips, as the SKA import does.  The cursor must stay inside its span
 * and an error must carry a message.  Seeds: fixtures/fuzz/json_scan/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/json_scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const pm_jscan *s, const char *lo)
{
    if (s->p < lo || s->p > s->e)
        abort();
}

static int failed(int rc, const pm_jscan *s)
{
    if (rc && s->err->msg[0] == '\0')
        abort();
    return rc;
}

/* Walk one value at s->p, reading what can be read and skipping the rest. */
static int walk(pm_jscan *s, int depth)
{
    const char *lo = s->p;
    pm_jscan_ws(s);
    int rc = 0;
    if (s->p >= s->e)
        return 1;
    char c = *s->p;
    if (depth >= 64) {
        rc = pm_jscan_skip(s);
    } else if (c == '{') {
        s->p++;
        pm_jscan_ws(s);
        if (s->p < s->e && *s->p == '}') {
            s->p++;
            return 0;
        }
        for (int more = 1; more && !rc;) {
            char key[16];
            if ((rc = failed(pm_jscan_key(s, key, sizeof key), s)))
                break;
            if (strlen(key) >= sizeof key)
                abort();
            if ((rc = walk(s, depth + 1)))
                break;
            rc = failed(pm_jscan_next(s, &more), s);
        }
    } else if (c == '[') {
        rc = pm_jscan_skip(s);
    } else if (c == '"') {
        rc = pm_jscan_string(s);
    } else if (c == 'n' || c == 't' || c == 'f') {
        rc = pm_jscan_literal(s, c == 'n' ? "null" : c == 't' ? "true" : "false");
    } else {
        double d;
        rc = pm_jscan_number(s, &d);
    }
    inside(s, lo);
    return failed(rc, s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact copy: a read past the end is a read past a heap block */
    char *t = malloc(size ? size : 1);
    if (!t)
        return 0;
    memcpy(t, data, size);
    pm_error err;
    pm_jscan s;

    pm_jscan_init(&s, "fuzz.json", t, size, 0, &err);
    if (failed(pm_jscan_skip(&s), &s) == 0)
        inside(&s, t);

    pm_jscan_init(&s, "fuzz.json", t, size, 0, &err);
    pm_jmember *m = NULL;
    size_t n = 0;
    if (failed(pm_jscan_top(&s, &m, &n), &s) == 0) {
        for (size_t i = 0; i < n; i++) {
            if (m[i].key < t || m[i].val < t || m[i].val + m[i].vlen > t + size)
                abort();
            pm_jscan v = s;
            v.p = m[i].val;
            v.e = m[i].val + m[i].vlen;
            (void)walk(&v, 0);
        }
        free(m);
    }
    free(t);
    return 0;
}
