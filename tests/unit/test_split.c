/* Reading on several ranks without MPI: pm_profile_pack/unpack against
 * the profile the reader gives (every field, every bit), every truncated
 * message refused, and pm_analysis_run split over 2-4 simulated ranks
 * (a queue for the transport) against one process: the same --stats
 * --json bytes, and each way the ranks can disagree or fail reported on
 * rank 0; and --stream over 2-4 ranks run at once as threads (mailboxes
 * for the transport): the same bytes as one process, in memory and
 * streamed, each pass's hosts received from the other ranks, and the
 * errors of a file damaged after the survey, of a message cut short and
 * of a bad file said as one process says them, every rank ending. */
#include <math.h>
#include <pthread.h>
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

#include "../support/testutil.h"
#include "perfmon/analysis.h"
#include "perfmon/export.h"
#include "perfmon/pack.h"
#include "perfmon/split.h"
#include "synth.h"

/* A new temporary directory, its name copied into tmp. */
static void fresh_dir(char *tmp, size_t cap)
{
    const char *made = pm_test_tmpdir();
    assert_non_null(made);
    snprintf(tmp, cap, "%s", made);
}

/* --- pack ---------------------------------------------------------------- */

static int want_some(const char *column, void *ctx)
{
    (void)ctx;
    return strncmp(column, "cpu.", 4) == 0 || strncmp(column, "net.", 4) == 0;
}

static void same_profile(const pm_profile *a, const pm_profile *b)
{
    assert_string_equal(a->path, b->path);
    assert_int_equal(a->format, b->format);
    assert_memory_equal(&a->info, &b->info, sizeof a->info);
    assert_int_equal(a->ncols, b->ncols);
    assert_memory_equal(a->cols, b->cols, a->ncols * sizeof *a->cols);
    assert_int_equal(a->n, b->n);
    assert_memory_equal(a->t_mono_ns, b->t_mono_ns, a->n * 8);
    assert_memory_equal(a->t_wall_ns, b->t_wall_ns, a->n * 8);
    for (size_t c = 0; c < a->ncols; c++) {
        int ua = a->unread && a->unread[c], ub = b->unread && b->unread[c];
        assert_int_equal(ua, ub);
        if (!ua)
            assert_memory_equal(a->values[c], b->values[c], a->n * 8);
    }
    assert_int_equal(a->has_end, b->has_end);
    if (a->has_end)
        assert_memory_equal(&a->end, &b->end, sizeof a->end);
    assert_true((a->meta_json == NULL) == (b->meta_json == NULL));
    if (a->meta_json)
        assert_string_equal(a->meta_json, b->meta_json);
    assert_int_equal(a->nnotes, b->nnotes);
    assert_int_equal(a->nwarnings, b->nwarnings);
    for (size_t i = 0; i < a->nwarnings; i++)
        assert_string_equal(a->warnings[i], b->warnings[i]);
    assert_int_equal(a->bad_records, b->bad_records);
    assert_int_equal(a->skipped_bytes, b->skipped_bytes);
}

static void pack_round_trip(const char *path, const pm_read_hint *hint)
{
    pm_profile *p = NULL, *q = NULL;
    pm_error err;
    pm_read_buf rb = {0};
    if (pm_profile_read_hinted(path, hint, &rb, &p, &err))
        fail_msg("%s", err.msg);
    pm_read_buf_free(&rb);
    pm_buf b;
    pm_buf_init(&b);
    assert_int_equal(pm_profile_pack(p, &b), 0);
    /* Two in a row: each unpack stops at its own end. */
    assert_int_equal(pm_profile_pack(p, &b), 0);
    size_t pos = 0, one = 0;
    const unsigned char *m = (const unsigned char *)b.data;
    for (int k = 0; k < 2; k++) {
        if (pm_profile_unpack("test", m, b.len, &pos, hint, &q, &err))
            fail_msg("%s", err.msg);
        same_profile(p, q);
        pm_profile_free(q);
        if (k == 0)
            one = pos;
    }
    assert_int_equal(pos, b.len);
    /* Every prefix of one is refused, never read past. */
    for (size_t cut = 0; cut < one; cut += cut < 4096 ? 1 : 997) {
        unsigned char *t = malloc(cut ? cut : 1);
        assert_non_null(t);
        memcpy(t, m, cut);
        pos = 0;
        q = NULL;
        assert_int_equal(pm_profile_unpack("cut", t, cut, &pos, hint, &q, &err), PM_EFORMAT);
        assert_null(q);
        assert_non_null(strstr(err.msg, "cut: offset "));
        free(t);
    }
    pm_buf_free(&b);
    pm_profile_free(p);
}

static void test_pack(void **state)
{
    (void)state;
    char tmp[256];
    fresh_dir(tmp, sizeof tmp);
    char path[512];
    pm_error err;
    pm_synth s;
    pm_synth_init(&s, "packed");
    s.n = 300;
    s.gap_at = 17;   /* a NaN (not recorded) */
    s.reset_at = 40; /* a counter reset */
    s.wall_step_s = 2.5;
    s.rss_growth = 1000;
    snprintf(path, sizeof path, "%s/a.pmp", tmp);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    pack_round_trip(path, NULL);
    pm_read_hint hint = {.want = want_some};
    pack_round_trip(path, &hint);
    s.format = PM_FMT_JSONL;
    s.with_end = 0;
    snprintf(path, sizeof path, "%s/b.jsonl", tmp);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    pack_round_trip(path, NULL);
    /* A torn file: its warnings travel too. */
    char torn[4096];
    snprintf(torn, sizeof torn, "%s/perfmon/torn.pmp", pm_test_fixtures());
    pack_round_trip(torn, NULL);
    pm_test_rmrf(tmp);
}

/* --- the split, ranks simulated in turn ---------------------------------- */

typedef struct msg {
    int from;
    size_t len;
    unsigned char *data;
} msg;

typedef struct queue {
    msg m[4096];
    size_t n, head;
    int sender;  /* the rank now sending */
    int status;  /* what status() answers a rank > 0 */
    int corrupt; /* cut the next FILE message short */
} queue;

static int q_send(void *user, const void *buf, size_t len)
{
    queue *q = user;
    if (q->n >= sizeof q->m / sizeof *q->m)
        return PM_ELIMIT;
    msg *m = &q->m[q->n++];
    m->from = q->sender;
    m->len = len;
    if (q->corrupt && len > 64 && ((const unsigned char *)buf)[0] == 1) {
        m->len = len / 2;
        q->corrupt = 0;
    }
    m->data = malloc(len);
    if (!m->data)
        return PM_ENOMEM;
    memcpy(m->data, buf, len);
    return 0;
}

static int q_recv(void *user, int *from, void **buf, size_t *len)
{
    queue *q = user;
    if (q->head >= q->n)
        return PM_EIO; /* would wait for ever */
    msg *m = &q->m[q->head++];
    *from = m->from;
    *buf = m->data;
    *len = m->len;
    m->data = NULL;
    return 0;
}

static int q_status(void *user, int rc)
{
    queue *q = user;
    return q->sender ? q->status : rc;
}

static void q_free(queue *q)
{
    for (size_t i = 0; i < q->n; i++)
        free(q->m[i].data);
    free(q);
}

static char g_cat[4096];
static int g_no_catalog = -1; /* this rank's catalog is missing */

static void opts(pm_analyze_opts *o)
{
    snprintf(g_cat, sizeof g_cat, "%s/../templates/metrics.json", pm_test_fixtures());
    pm_analyze_opts_init(o);
    o->catalog_path = g_cat;
}

/* Run ranks size-1 .. 1 on their inputs (paths_of[rank], or paths), then
 * rank 0; returns rank 0's status, its --stats --json in *json. */
static int run_split(queue *q, int size, const char *paths, const char *const *paths_of, int strict,
                     char **json, pm_error *err, pm_split *out0)
{
    pm_analyze_opts o;
    *json = NULL;
    for (int r = size - 1; r >= 0; r--) {
        opts(&o);
        o.strict = strict;
        if (r == g_no_catalog)
            o.catalog_path = "/nonexistent/metrics.json";
        pm_split sp = {
            .rank = r, .size = size, .send = q_send, .recv = q_recv, .status = q_status, .user = q};
        o.split = &sp;
        q->sender = r;
        const char *p = paths_of && paths_of[r] ? paths_of[r] : paths;
        pm_analysis *a = NULL;
        pm_error e;
        pm_error_clear(&e);
        int rc = pm_analysis_run(&p, 1, &o, &a, &e);
        assert_true(sp.done);
        if (r > 0) {
            assert_null(a);
            continue;
        }
        if (out0)
            *out0 = sp;
        *err = e;
        if (rc)
            return rc;
        *json = pm_stats_json_string(a);
        pm_analysis_free(a);
        return 0;
    }
    return -1;
}

static char *alone(const char *path)
{
    pm_analyze_opts o;
    opts(&o);
    pm_analysis *a = NULL;
    pm_error err;
    if (pm_analysis_run(&path, 1, &o, &a, &err))
        fail_msg("%s", err.msg);
    char *js = pm_stats_json_string(a);
    pm_analysis_free(a);
    return js;
}

/* Five hosts, one of them in two files of two formats, and a file that
 * is not a profile. */
static void make_job(const char *tmp)
{
    char path[512];
    pm_error err;
    pm_synth s;
    for (int h = 0; h < 5; h++) {
        char host[16];
        snprintf(host, sizeof host, "n%d", h);
        pm_synth_init(&s, host);
        s.n = 200 + 10 * (size_t)h;
        s.start_s += 0.1 * h;
        s.cpu_wave = 20;
        s.wave_period_s = 60;
        s.gap_at = h == 2 ? 50 : 0;
        snprintf(path, sizeof path, "%s/n%d.pmp", tmp, h);
        assert_int_equal(pm_synth_write(path, &s, &err), 0);
    }
    pm_synth_init(&s, "n1");
    s.n = 100;
    s.start_s += 210;
    s.format = PM_FMT_JSONL;
    snprintf(path, sizeof path, "%s/n1-part2.jsonl", tmp);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    snprintf(path, sizeof path, "%s/notes.txt", tmp);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("not a profile\n", f);
    assert_int_equal(fclose(f), 0);
}

static void test_split_same(void **state)
{
    (void)state;
    char tmp[256];
    fresh_dir(tmp, sizeof tmp);
    pm_error err;
    make_job(tmp);
    char base[4096];
    snprintf(base, sizeof base, "%s/compare/base", pm_test_fixtures());
    const char *dirs[] = {tmp, base};
    for (size_t d = 0; d < 2; d++) {
        char *want = alone(dirs[d]);
        for (int size = 2; size <= 4; size++) {
            queue *q = calloc(1, sizeof *q);
            assert_non_null(q);
            char *got = NULL;
            pm_split s0;
            int rc = run_split(q, size, dirs[d], NULL, 0, &got, &err, &s0);
            if (rc)
                fail_msg("%d ranks: %s", size, err.msg);
            assert_string_equal(got, want);
            /* Rank 0 read every size-th file and got the others. */
            assert_int_equal(q->head, q->n);
            assert_true(s0.files_read >= 1 && s0.files_received >= 1);
            free(got);
            q_free(q);
        }
        free(want);
    }
    pm_test_rmrf(tmp);
}

static void test_split_errors(void **state)
{
    (void)state;
    char good[4096], other[4096], bad[4096], missing[4096];
    snprintf(good, sizeof good, "%s/compare/base", pm_test_fixtures());
    snprintf(other, sizeof other, "%s/perfmon", pm_test_fixtures());
    snprintf(bad, sizeof bad, "%s/compare/base/node-2.pmp", pm_test_fixtures());
    snprintf(missing, sizeof missing, "%s/no-such-dir", pm_test_fixtures());
    /* Each way to fail: the ranks, their inputs (NULL: good), the rank
     * without a catalog, whether a message is cut, and what rank 0 says;
     * rank 0 always receives every message. */
    static const struct {
        int size, no_catalog, corrupt, rc;
        int which; /* the rank given `other` or `missing` instead */
        int missing;
        const char *says;
    } cases[] = {
        {2, -1, 0, PM_EUSAGE, 1, 0, "do not see the same"}, /* other files */
        {3, -1, 0, PM_ENOENT, 2, 1, "no-such-dir"},         /* rank 2's input gone */
        {3, -1, 0, PM_ENOENT, 0, 1, "no-such-dir"},         /* rank 0's input gone */
        {3, 1, 0, 0, -1, 0, "/nonexistent/metrics.json"},   /* fails before reading */
        {2, -1, 1, PM_EFORMAT, -1, 0, "rank 1's message"},  /* a message cut short */
    };
    pm_error err;
    char *js = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        queue *q = calloc(1, sizeof *q);
        assert_non_null(q);
        const char *in[3] = {NULL, NULL, NULL};
        if (cases[i].which >= 0)
            in[cases[i].which] = cases[i].missing ? missing : other;
        g_no_catalog = cases[i].no_catalog;
        q->corrupt = cases[i].corrupt;
        int rc = run_split(q, cases[i].size, good, in, 0, &js, &err, NULL);
        g_no_catalog = -1;
        if (cases[i].rc)
            assert_int_equal(rc, cases[i].rc);
        else
            assert_int_not_equal(rc, 0);
        if (!strstr(err.msg, cases[i].says))
            fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err.msg, cases[i].says);
        assert_int_equal(q->head, q->n);
        q_free(q);
    }
    /* A file rank 1 cannot read, with --strict: its error, as one
     * process reports it. */
    char tmp[256];
    fresh_dir(tmp, sizeof tmp);
    char path[512];
    pm_synth s;
    pm_synth_init(&s, "ok");
    snprintf(path, sizeof path, "%s/a.pmp", tmp);
    assert_int_equal(pm_synth_write(path, &s, &err), 0);
    snprintf(path, sizeof path, "%s/b.pmp", tmp);
    FILE *f = fopen(path, "w");
    FILE *in = fopen(bad, "rb");
    assert_non_null(f);
    assert_non_null(in);
    char head[40];
    assert_int_equal(fread(head, 1, sizeof head, in), sizeof head);
    fwrite(head, 1, sizeof head, f); /* a header cut short */
    fclose(in);
    assert_int_equal(fclose(f), 0);
    pm_analyze_opts o;
    opts(&o);
    o.strict = 1;
    pm_analysis *a = NULL;
    pm_error e1;
    const char *p = tmp;
    int want = pm_analysis_run(&p, 1, &o, &a, &e1);
    assert_int_not_equal(want, 0);
    queue *q = calloc(1, sizeof *q);
    assert_int_equal(run_split(q, 2, tmp, NULL, 1, &js, &err, NULL), want);
    assert_string_equal(err.msg, e1.msg);
    assert_non_null(strstr(err.msg, "b.pmp"));
    q_free(q);
    pm_test_rmrf(tmp);
}

/* --- --stream: the ranks run at once, as threads ----------------------- */

/* Rank 0 asks for each pass and the others answer, so the ranks run at
 * once: a transport of per-rank mailboxes between threads.  A message
 * from one rank keeps its order, as in MPI. */
enum { T_P2P, T_BCAST, T_STATUS };

typedef struct tmsg {
    struct tmsg *next;
    int from, tag, rc;
    size_t len;
    unsigned char *data;
} tmsg;

typedef struct tnet {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    tmsg *box[4]; /* each rank's mailbox, oldest first */
    int size;
    int cut_host; /* cut this rank's first HOST message short */
    int hosts_sent;
} tnet;

typedef struct tend {
    tnet *net;
    int rank;
} tend;

static void t_put(tnet *n, int to, int from, int tag, int rc, const void *buf, size_t len)
{
    tmsg *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->from = from;
    m->tag = tag;
    m->rc = rc;
    m->len = len;
    m->data = malloc(len ? len : 1);
    assert_non_null(m->data);
    if (len)
        memcpy(m->data, buf, len);
    pthread_mutex_lock(&n->lock);
    tmsg **t = &n->box[to];
    while (*t)
        t = &(*t)->next;
    *t = m;
    pthread_cond_broadcast(&n->cond);
    pthread_mutex_unlock(&n->lock);
}

/* The oldest message to rank `to` with tag (and sender from, -1 any). */
static tmsg *t_get(tnet *n, int to, int tag, int from)
{
    pthread_mutex_lock(&n->lock);
    for (;;) {
        for (tmsg **t = &n->box[to]; *t; t = &(*t)->next)
            if ((*t)->tag == tag && (from < 0 || (*t)->from == from)) {
                tmsg *m = *t;
                *t = m->next;
                pthread_mutex_unlock(&n->lock);
                return m;
            }
        pthread_cond_wait(&n->cond, &n->lock);
    }
}

static int t_send(void *user, const void *buf, size_t len)
{
    tend *e = user;
    tnet *n = e->net;
    if (len && ((const unsigned char *)buf)[0] == 4 && e->rank == n->cut_host) { /* HOST */
        pthread_mutex_lock(&n->lock);
        int k = ++n->hosts_sent;
        pthread_mutex_unlock(&n->lock);
        if (k == 1)
            len /= 2;
    }
    t_put(n, 0, e->rank, T_P2P, 0, buf, len);
    return 0;
}

static int t_recv(void *user, int *from, void **buf, size_t *len)
{
    tend *e = user;
    tmsg *m = t_get(e->net, 0, T_P2P, *from);
    *from = m->from;
    *buf = m->data;
    *len = m->len;
    free(m);
    return 0;
}

static int t_bcast(void *user, void **buf, size_t *len)
{
    tend *e = user;
    if (e->rank == 0) {
        for (int r = 1; r < e->net->size; r++)
            t_put(e->net, r, 0, T_BCAST, 0, *buf, *len);
        return 0;
    }
    tmsg *m = t_get(e->net, e->rank, T_BCAST, 0);
    *buf = m->data;
    *len = m->len;
    free(m);
    return 0;
}

static int t_status(void *user, int rc)
{
    tend *e = user;
    if (e->rank == 0) {
        for (int r = 1; r < e->net->size; r++)
            t_put(e->net, r, 0, T_STATUS, rc, NULL, 0);
        return rc;
    }
    tmsg *m = t_get(e->net, e->rank, T_STATUS, 0);
    rc = m->rc;
    free(m->data);
    free(m);
    return rc;
}

typedef struct trank {
    pthread_t thr;
    tend end;
    pm_split sp;
    pm_analyze_opts o;
    const char *path;
    int rc;
    pm_error err;
    char *json;
} trank;

static void *t_rank(void *arg)
{
    trank *t = arg;
    pm_analysis *a = NULL;
    pm_error_clear(&t->err);
    t->rc = pm_analysis_run(&t->path, 1, &t->o, &a, &t->err);
    if (!t->rc && a)
        t->json = pm_stats_json_string(a);
    if (t->end.rank > 0 && a)
        t->rc = -999; /* a rank > 0 gives no analysis */
    pm_analysis_free(a);
    return NULL;
}

/* Ranks 0..size-1 at once on path (paths_of[rank] where given), each with
 * o (rank 0 also with its progress callback, the others without); rank
 * 0's status, error, --stats --json and counts.  Every rank must end. */
static int run_ranks(int size, const char *path, const char *const *paths_of,
                     const pm_analyze_opts *o, int cut_host, int threads, char **json,
                     pm_error *err, pm_split *out0)
{
    tnet *n = calloc(1, sizeof *n);
    trank *t = calloc((size_t)size, sizeof *t);
    assert_non_null(n);
    assert_non_null(t);
    pthread_mutex_init(&n->lock, NULL);
    pthread_cond_init(&n->cond, NULL);
    n->size = size;
    n->cut_host = cut_host;
    for (int r = 0; r < size; r++) {
        t[r].end = (tend){n, r};
        t[r].sp = (pm_split){.rank = r,
                             .size = size,
                             .send = t_send,
                             .recv = t_recv,
                             .bcast = t_bcast,
                             .status = t_status,
                             .user = &t[r].end,
                             .threads = threads};
        t[r].o = *o;
        t[r].o.split = &t[r].sp;
        if (r) {
            t[r].o.progress = NULL;
            if (r == g_no_catalog)
                t[r].o.catalog_path = "/nonexistent/metrics.json";
        }
        t[r].path = paths_of && paths_of[r] ? paths_of[r] : path;
        assert_int_equal(pthread_create(&t[r].thr, NULL, t_rank, &t[r]), 0);
    }
    for (int r = 0; r < size; r++)
        assert_int_equal(pthread_join(t[r].thr, NULL), 0);
    int rc = t[0].rc;
    *err = t[0].err;
    *json = t[0].json;
    if (out0)
        *out0 = t[0].sp;
    for (int r = 1; r < size; r++) {
        assert_true(t[r].sp.done);
        assert_int_not_equal(t[r].rc, -999);
        /* every rank ends with rank 0's status */
        assert_int_equal(t[r].rc, rc);
        assert_null(t[r].json);
    }
    /* nothing left unread */
    for (int r = 0; r < size; r++)
        if (n->box[r])
            fail_msg("rank %d: a message left from rank %d (tag %d, %zu bytes, kind %u)", r,
                     n->box[r]->from, n->box[r]->tag, n->box[r]->len, n->box[r]->data[0]);
    pthread_cond_destroy(&n->cond);
    pthread_mutex_destroy(&n->lock);
    free(n);
    free(t);
    return rc;
}

/* One process, with o: its status, error and --stats --json. */
static int one(const char *path, const pm_analyze_opts *o, char **json, pm_error *err)
{
    pm_analysis *a = NULL;
    *json = NULL;
    int rc = pm_analysis_run(&path, 1, o, &a, err);
    if (!rc)
        *json = pm_stats_json_string(a);
    pm_analysis_free(a);
    return rc;
}

static void test_stream_ranks_same(void **state)
{
    (void)state;
    char tmp[256];
    fresh_dir(tmp, sizeof tmp);
    make_job(tmp);
    char base[4096];
    snprintf(base, sizeof base, "%s/compare/base", pm_test_fixtures());
    const char *dirs[] = {tmp, base};
    pm_error err;
    for (size_t d = 0; d < 2; d++) {
        /* whole, and a window (the survey's times take a second pass) */
        for (int win = 0; win < 2; win++) {
            pm_analyze_opts o;
            opts(&o);
            if (win) {
                o.has_start = o.has_end = 1;
                o.start_rel = o.end_rel = 1;
                o.start = 20;
                o.end = 150;
            }
            char *mem = NULL, *want = NULL;
            if (one(dirs[d], &o, &mem, &err))
                fail_msg("%s", err.msg);
            o.stream = 1;
            if (one(dirs[d], &o, &want, &err))
                fail_msg("%s", err.msg);
            assert_string_equal(want, mem);
            size_t nhosts = d == 0 ? 5 : 2;
            for (int size = 2; size <= 4; size++) {
                char *got = NULL;
                pm_split s0;
                int rc = run_ranks(size, dirs[d], NULL, &o, 0, 1, &got, &err, &s0);
                if (rc)
                    fail_msg("%d ranks: %s", size, err.msg);
                assert_string_equal(got, want);
                /* every host of every pass came from the other ranks: the
                 * survey's times (twice with a window) and the fold (the
                 * refine passes read rank 0's spill of the fold's values) */
                assert_int_equal(s0.passes, 2 + (size_t)win);
                assert_int_equal(s0.hosts_received, s0.passes * nhosts);
                assert_true(s0.host_bytes > 0);
                free(got);
            }
            free(mem);
            free(want);
        }
    }
    pm_test_rmrf(tmp);
}

/* A file damaged between the survey and the fold (rank 0's progress
 * callback at the fold's start): the rank that reads it for rank 0 sends
 * its error, which rank 0 says as one process does. */
static char g_damage[512];

static void damage_at_fold(const pm_progress *p, void *user)
{
    (void)user;
    if (p->pass != 2 || p->hosts_done != 0 || !g_damage[0])
        return;
    FILE *f = fopen(g_damage, "r+b");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), 40), 0); /* a header cut short */
    assert_int_equal(fclose(f), 0);
    g_damage[0] = 0;
}

static void test_stream_ranks_errors(void **state)
{
    (void)state;
    char tmp[256], path[512], bad[4096];
    fresh_dir(tmp, sizeof tmp);
    pm_error err, e1;
    char *js = NULL, *want = NULL;
    pm_analyze_opts o;
    opts(&o);
    o.stream = 1;
    /* Damaged after the survey: host n1 (index 1) is read by rank 2 of 3. */
    char job[400];
    snprintf(job, sizeof job, "%s/job", tmp);
    int rc1 = 0;
    for (int k = 0; k < 2; k++) {
        if (k)
            pm_test_rmrf(job);
        assert_int_equal(mkdir(job, 0700), 0);
        make_job(job);
        snprintf(g_damage, sizeof g_damage, "%s/n1.pmp", job);
        o.progress = damage_at_fold;
        if (k == 0) {
            rc1 = one(job, &o, &want, &e1);
            assert_int_not_equal(rc1, 0);
            assert_non_null(strstr(e1.msg, "n1.pmp"));
            continue;
        }
        int rc = run_ranks(3, job, NULL, &o, 0, 1, &js, &err, NULL);
        assert_int_not_equal(rc, 0);
        assert_int_equal(rc, rc1);
        assert_string_equal(err.msg, e1.msg);
        assert_null(js);
        assert_int_equal(g_damage[0], 0); /* (damaged at the fold's start) */
    }
    o.progress = NULL;
    pm_test_rmrf(tmp);
    fresh_dir(tmp, sizeof tmp);
    make_job(tmp);
    /* A host's message cut short: rank 0 names the rank and the host. */
    int rc = run_ranks(3, tmp, NULL, &o, 2, 1, &js, &err, NULL);
    assert_int_equal(rc, PM_EFORMAT);
    if (!strstr(err.msg, "rank 2's host 1: offset "))
        fail_msg("%s", err.msg);
    /* A bad file in the survey, with --strict: its error, as one process. */
    snprintf(path, sizeof path, "%s/n3.pmp", tmp);
    snprintf(bad, sizeof bad, "%s", path);
    assert_int_equal(truncate(bad, 40), 0);
    o.strict = 1;
    int want_rc = one(tmp, &o, &want, &e1);
    assert_int_not_equal(want_rc, 0);
    for (int size = 2; size <= 4; size++) {
        rc = run_ranks(size, tmp, NULL, &o, 0, 1, &js, &err, NULL);
        assert_int_equal(rc, want_rc);
        assert_string_equal(err.msg, e1.msg);
    }
    o.strict = 0;
    /* Without --strict a warning, and the others the same as alone. */
    want_rc = one(tmp, &o, &want, &e1);
    assert_int_equal(want_rc, 0);
    rc = run_ranks(3, tmp, NULL, &o, 0, 1, &js, &err, NULL);
    assert_int_equal(rc, 0);
    assert_string_equal(js, want);
    free(js);
    free(want);
    /* Rank 2's input missing; rank 1 without a catalog; an MPI without
     * threads: every rank ends, rank 0 says why. */
    char missing[4096];
    snprintf(missing, sizeof missing, "%s/no-such-dir", pm_test_fixtures());
    const char *in[4] = {NULL, NULL, missing, NULL};
    rc = run_ranks(3, tmp, in, &o, 0, 1, &js, &err, NULL);
    assert_int_equal(rc, PM_ENOENT);
    assert_non_null(strstr(err.msg, "no-such-dir"));
    g_no_catalog = 1;
    rc = run_ranks(3, tmp, NULL, &o, 0, 1, &js, &err, NULL);
    g_no_catalog = -1;
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err.msg, "/nonexistent/metrics.json"));
    rc = run_ranks(4, tmp, NULL, &o, 0, 0, &js, &err, NULL);
    assert_int_equal(rc, PM_EUSAGE);
    assert_non_null(strstr(err.msg, "MPI_THREAD_SERIALIZED"));
    pm_test_rmrf(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack),
        cmocka_unit_test(test_split_same),
        cmocka_unit_test(test_split_errors),
        cmocka_unit_test(test_stream_ranks_same),
        cmocka_unit_test(test_stream_ranks_errors),
    };
    alarm(600); /* a rank that waits for ever fails the test */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
