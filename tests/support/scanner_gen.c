/* Writes Scanner binary profiles for the tests (see scanner_gen.h). */
#include "scanner_gen.h"

#include <stdio.h>
#include <string.h>

typedef struct out {
    unsigned char *buf;
    size_t cap, len;
} out;

static void put(out *o, const void *p, size_t n)
{
    if (o->buf && o->len < o->cap)
        memcpy(o->buf + o->len, p, o->len + n <= o->cap ? n : o->cap - o->len);
    o->len += n;
}

static void put_i64(out *o, int64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)v >> (8 * i));
    put(o, b, 8);
}

static void put_u8(out *o, unsigned v)
{
    unsigned char b = (unsigned char)v;
    put(o, &b, 1);
}

static void put_str(out *o, const char *s)
{
    put(o, s, strlen(s) + 1);
}

static void put_worker(out *o, const pm_sgen_worker *w)
{
    put_i64(o, w->node);
    put_str(o, w->type);
    put_str(o, w->tag);
    put_i64(o, w->number);
    /* Dictionary: keys in order of first use, index = position. */
    const char *keys[256];
    size_t nkeys = 0;
    for (size_t i = 0; i < w->niv; i++) {
        size_t k = 0;
        while (k < nkeys && strcmp(keys[k], w->iv[i].key) != 0)
            k++;
        if (k == nkeys && nkeys < 256)
            keys[nkeys++] = w->iv[i].key;
    }
    put_i64(o, w->bad_key_count ? w->bad_key_count : (int64_t)nkeys);
    for (size_t k = 0; k < nkeys; k++) {
        put_str(o, keys[k]);
        put_u8(o, (unsigned)k);
    }
    put_i64(o, (int64_t)w->niv);
    for (size_t i = 0; i < w->niv; i++) {
        size_t k = 0;
        while (k < nkeys && strcmp(keys[k], w->iv[i].key) != 0)
            k++;
        put_u8(o, (unsigned)k);
        put_i64(o, w->iv[i].start);
        put_i64(o, w->iv[i].end);
    }
    put_i64(o, w->bad_counter_count ? w->bad_counter_count : (int64_t)w->nct);
    for (size_t i = 0; i < w->nct; i++) {
        put_str(o, w->ct[i].name);
        put_i64(o, w->ct[i].value);
    }
}

size_t pm_sgen_encode(const pm_sgen_file *f, unsigned char *buf, size_t cap)
{
    out o = {buf, cap, 0};
    put_i64(&o, f->start_ns);
    put_i64(&o, f->end_ns);
    put_worker(&o, f->first);
    if (f->master)
        return o.len;
    put_u8(&o, f->nload);
    for (unsigned i = 0; i < f->nload; i++)
        put_worker(&o, &f->load[i]);
    put_u8(&o, f->neval);
    put_u8(&o, f->per_chain);
    for (unsigned i = 0; i < f->neval * f->per_chain; i++)
        put_worker(&o, &f->eval[i]);
    put_u8(&o, f->nsave);
    for (unsigned i = 0; i < f->nsave; i++)
        put_worker(&o, &f->save[i]);
    return o.len;
}

int pm_sgen_write(const char *path, const pm_sgen_file *f, size_t len)
{
    size_t n = pm_sgen_encode(f, NULL, 0);
    unsigned char buf[1 << 16];
    if (n > sizeof buf)
        return -1;
    pm_sgen_encode(f, buf, sizeof buf);
    if (len < n)
        n = len;
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    int bad = fwrite(buf, 1, n, fp) != n;
    return fclose(fp) != 0 || bad ? -1 : 0;
}

/* ---- the example job ------------------------------------------------------- */

#define MS 1000000LL

static const pm_sgen_interval JOB_IV[] = {{"setup", 0, 500 * MS}, {"task", 500 * MS, 9500 * MS}};
static const pm_sgen_counter JOB_CT[] = {{"tasks", 4}};
static const pm_sgen_interval LOAD_IV[] = {
    {"io", 500 * MS, 1500 * MS}, {"idle", 1500 * MS, 5000 * MS}, {"io", 5000 * MS, 5800 * MS}};
static const pm_sgen_counter LOAD_CT[] = {{"io_read", 1048576}, {"rows", 1000}};
static const pm_sgen_interval PRE_IV[2][1] = {{{"decode", 1500 * MS, 2500 * MS}},
                                              {{"decode", 1600 * MS, 2600 * MS}}};
static const pm_sgen_interval EVAL_IV[2][1] = {{{"evaluate", 2500 * MS, 6500 * MS}},
                                               {{"evaluate", 2600 * MS, 6600 * MS}}};
static const pm_sgen_interval POST_IV[2][1] = {{{"encode", 6500 * MS, 7000 * MS}},
                                               {{"encode", 6600 * MS, 7100 * MS}}};
static const pm_sgen_counter EVAL_CT[] = {{"rows", 500}};
static const pm_sgen_interval SAVE_IV[] = {{"io", 7000 * MS, 8000 * MS}};
static const pm_sgen_counter SAVE_CT[] = {{"io_write", 524288}};
static const pm_sgen_interval MASTER_IV[] = {{"schedule", 0, 9800 * MS}};
static const pm_sgen_counter MASTER_CT[] = {{"jobs", 1}};

void pm_sgen_example(int node, int64_t start_ns, pm_sgen_file *f)
{
    /* Two nodes' worth of workers, built on first use (tests are serial). */
    static pm_sgen_worker first[2], load[2], eval[2][6], save[2], master;
    memset(f, 0, sizeof *f);
    if (node < 0) {
        master = (pm_sgen_worker){0, "master", "", 0, MASTER_IV, 1, MASTER_CT, 1, 0, 0};
        f->start_ns = start_ns;
        f->end_ns = start_ns + 10000 * MS;
        f->first = &master;
        f->master = 1;
        return;
    }
    int n = node ? 1 : 0;
    first[n] = (pm_sgen_worker){n, "process_job", "", 0, JOB_IV, 2, JOB_CT, 1, 0, 0};
    load[n] = (pm_sgen_worker){n, "load", "", 0, LOAD_IV, 3, LOAD_CT, 2, 0, 0};
    static const char *const tags[3] = {"pre", "eval", "post"};
    for (int pu = 0; pu < 2; pu++)
        for (int g = 0; g < 3; g++) {
            const pm_sgen_interval *iv = g == 0 ? PRE_IV[pu] : g == 1 ? EVAL_IV[pu] : POST_IV[pu];
            eval[n][pu * 3 + g] =
                (pm_sgen_worker){n, "eval", tags[g], pu, iv, 1, EVAL_CT, g == 1, 0, 0};
        }
    save[n] = (pm_sgen_worker){n, "save", "", 0, SAVE_IV, 1, SAVE_CT, 1, 0, 0};
    /* Node 1 starts 200 ms after node 0. */
    f->start_ns = start_ns + n * 200 * MS;
    f->end_ns = f->start_ns + 10000 * MS;
    f->first = &first[n];
    f->load = &load[n];
    f->nload = 1;
    f->eval = eval[n];
    f->neval = 2;
    f->per_chain = 3;
    f->save = &save[n];
    f->nsave = 1;
}
