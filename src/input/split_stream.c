/* --stream under mpirun (split.h; docs/analysis.md, "MPI"): rank 0 runs
 * the stream analysis as one process does, and only where a host's
 * profile comes from changes.  At each pass over the hosts, rank 0 tells
 * every rank which pass it is and what to read (the values, or the times
 * alone); host h's rank, 1 + h % (size - 1), reads and decodes it with the
 * read rank 0 would have made (pm_input_host_read: the same files, column
 * projection, clock fix, GPU split and merge) and sends it, its hosts in
 * host order; a thread of rank 0 receives them, in host order, into a
 * window of a few hosts per worker (window.h), from which the workers take host h
 * instead of reading its files (pm_input_host_load).  A sender waits
 * while the window is full (a blocking send), so rank 0 holds a few
 * profiles at a time whatever the job's size.
 *
 * Messages (every integer a varint, strings length-prefixed):
 *   rank 0 to every rank (bcast):
 *     HOSTS  u8 5, hosts, then per host its name, u8 gpu, files, each file;
 *     PASS   u8 6, pass, u8 values, hosts;
 *     STOP   u8 7;
 *   a rank > 0 to rank 0, at each pass, for each of its hosts in order:
 *     HOST   u8 4, pass, host, -rc, message, then (rc 0) pm_profile_pack.
 * A host that cannot be read travels as its error, which rank 0's worker
 * reports as its own read's; rank 0 receives every host of a pass before
 * the next request, and STOP ends every rank's part before the status. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exchange.h"
#include "perfmon/clock.h"
#include "perfmon/invariant.h"
#include "perfmon/pack.h"
#include "perfmon/threads.h"
#include "perfmon/window.h"

enum { MSG_HOST = 4, MSG_HOSTS = 5, MSG_PASS = 6, MSG_STOP = 7 };

typedef struct pm_remote pm_remote;

/* One received host's message, waiting in the window for its worker. */
typedef struct rmsg {
    void *buf;
    size_t len;
} rmsg;

struct pm_remote {
    pm_split *sp;
    size_t nhosts;
    size_t cap;            /* the window's slots: a few hosts per worker */
    pthread_mutex_t start; /* one worker begins a pass */
    pthread_mutex_t lock;  /* rc, err and the split's counts */
    pthread_t thr;
    int running; /* thr is to be joined */
    int begun;   /* a pass was asked for */
    size_t pass; /* in->stream_pass of the pass being served */
    int values;  /* its profiles hold the values (not the times alone) */
    /* this pass's hosts (window.h): host h is item h, claimed and put by
     * the receiving thread in host order, taken by rank 0's workers */
    pm_window win;
    int win_open;
    int rc; /* receiving failed (err); the window is stopped */
    pm_error err;
};

static int owner(const pm_split *sp, size_t h)
{
    PM_ASSERT(sp->size > 1);
    return 1 + (int)(h % (size_t)(sp->size - 1));
}

/* --- rank 0 ---------------------------------------------------------------- */

static void drop_msg(void *entry, void *user)
{
    (void)user;
    free(((rmsg *)entry)->buf);
}

/* Receiving failed (rc, e): say why to the workers that wait. */
static void recv_fail(pm_remote *r, int rc, const pm_error *e)
{
    pthread_mutex_lock(&r->lock);
    if (!r->rc) {
        r->rc = rc;
        r->err = *e;
    }
    pthread_mutex_unlock(&r->lock);
    pm_window_stop(&r->win);
}

/* The pass's thread: the request to every rank, then every host in order. */
static void *receiver(void *arg)
{
    pm_remote *r = arg;
    pm_split *sp = r->sp;
    pm_buf b;
    pm_buf_init(&b);
    pm_pack_u8(&b, MSG_PASS);
    pm_pack_varint(&b, r->pass);
    pm_pack_u8(&b, (unsigned)r->values);
    pm_pack_varint(&b, r->nhosts);
    void *p = b.data;
    size_t len = b.len;
    int rc = b.oom ? PM_ENOMEM : sp->bcast(sp->user, &p, &len);
    pm_buf_free(&b);
    pm_error e;
    if (rc) {
        recv_fail(r, pm_error_set(&e, rc, "cannot ask the other ranks for the hosts"), &e);
        return NULL;
    }
    for (size_t h = 0; h < r->nhosts; h++) {
        /* waits while the worker of host h - cap has not taken it; once
         * the pass is over (the window stopped), what comes is dropped */
        size_t i = SIZE_MAX;
        int keep = pm_window_claim(&r->win, &i);
        /* the hosts arrive in host order, each in its own slot */
        PM_ASSERT(!keep || i == h);
        int from = owner(sp, h);
        rmsg m = {NULL, 0};
        rc = sp->recv(sp->user, &from, &m.buf, &m.len);
        if (rc || from != owner(sp, h)) {
            free(m.buf);
            recv_fail(r,
                      pm_error_set(&e, rc ? rc : PM_EFORMAT, "cannot receive host %zu from rank %d",
                                   h, owner(sp, h)),
                      &e);
            break;
        }
        pthread_mutex_lock(&r->lock);
        sp->hosts_received++;
        sp->host_bytes += m.len;
        pthread_mutex_unlock(&r->lock);
        if (!keep || pm_window_put(&r->win, h, &m) != 0)
            free(m.buf);
    }
    return NULL;
}

/* The pass is over: drop what was not taken and what still comes. */
static void pass_stop(pm_remote *r)
{
    if (!r->win_open)
        return;
    pm_window_stop(&r->win);
    if (r->running)
        pthread_join(r->thr, NULL);
    r->running = 0;
    pm_window_destroy(&r->win, drop_msg, NULL);
    r->win_open = 0;
}

/* The first worker of a pass asks for it (in->stream_pass tells passes
 * apart: every pass over the hosts sets a new one). */
static int pass_begin(pm_remote *r, size_t pass, int values, pm_error *err)
{
    int rc = 0;
    pthread_mutex_lock(&r->start);
    if (!r->begun || r->pass != pass) {
        pass_stop(r);
        r->begun = 1;
        r->pass = pass;
        r->values = values;
        r->rc = 0;
        r->sp->passes++;
        if (pm_window_init(&r->win, r->nhosts, r->cap, sizeof(rmsg)) != 0) {
            r->rc = pm_error_set(&r->err, PM_ENOMEM, "out of memory");
        } else {
            r->win_open = 1;
            pm_error e;
            if (pthread_create(&r->thr, NULL, receiver, r) != 0)
                recv_fail(r, pm_error_set(&e, PM_ENOMEM, "cannot start a thread"), &e);
            else
                r->running = 1;
        }
    } else if (r->values != values) {
        rc = pm_error_set(err, PM_EFORMAT, "pass %zu reads both values and times alone", pass);
    }
    if (!rc && !r->win_open) {
        rc = r->rc;
        *err = r->err;
    }
    pthread_mutex_unlock(&r->start);
    return rc;
}

/* Host h's message, once received. */
static int take(pm_remote *r, size_t h, void **m, size_t *len, pm_error *err)
{
    rmsg got = {NULL, 0};
    double t0 = pm_mono_s();
    int rc = pm_window_take(&r->win, h, &got);
    pthread_mutex_lock(&r->lock);
    r->sp->wait_s += pm_mono_s() - t0;
    if (rc == PM_EUSAGE) {
        rc = pm_error_set(err, PM_EFORMAT, "host %zu is not to be taken (twice?)", h);
    } else if (rc) {
        rc = r->rc ? r->rc : PM_EFORMAT;
        if (r->rc)
            *err = r->err;
        else
            pm_error_set(err, rc, "host %zu was asked for after its pass", h);
    }
    pthread_mutex_unlock(&r->lock);
    *m = got.buf;
    *len = got.len;
    return rc;
}

int pm_remote_fetch(const pm_inputs *in, size_t h, int values, pm_profile **out, pm_error *err)
{
    pm_remote *r = in->remote;
    *out = NULL;
    void *m = NULL;
    size_t len = 0;
    int rc = pass_begin(r, in->stream_pass, values, err);
    if (rc || (rc = take(r, h, &m, &len, err)))
        return rc;
    const unsigned char *b = m;
    size_t at = 0;
    unsigned kind = 0;
    uint64_t pass = 0, host = 0, v = 0;
    char *msg = NULL;
    char what[64];
    snprintf(what, sizeof what, "rank %d's host %zu", owner(r->sp, h), h);
    if (pm_unpack_u8(b, len, &at, &kind) || kind != MSG_HOST ||
        pm_unpack_varint(b, len, &at, &pass) || pm_unpack_varint(b, len, &at, &host) ||
        pm_unpack_varint(b, len, &at, &v) || v > 100 ||
        pm_unpack_str(b, len, &at, sizeof err->msg - 1, &msg)) {
        rc = pm_error_set(err, PM_EFORMAT, "%s: offset %zu: malformed message", what, at);
    } else if (pass != r->pass || host != h) {
        rc = pm_error_set(err, PM_EFORMAT,
                          "%s: holds host %llu of pass %llu where host %zu of pass %zu was "
                          "expected",
                          what, (unsigned long long)host, (unsigned long long)pass, h, r->pass);
    } else if (v) {
        rc = pm_error_set(err, -(int)v, "%s", msg);
    } else {
        pm_read_hint hint;
        pm_input_host_hint(in, values, &hint);
        rc = pm_profile_unpack(what, b, len, &at, &hint, out, err);
        if (!rc && at != len) {
            pm_profile_free(*out);
            *out = NULL;
            rc = pm_error_set(err, PM_EFORMAT, "%s: offset %zu: %zu bytes too many", what, at,
                              len - at);
        }
    }
    free(msg);
    free(m);
    return rc;
}

void pm_remote_drop(const pm_inputs *in, size_t h)
{
    pm_remote *r = in->remote;
    void *m = NULL;
    size_t len = 0;
    pm_error e;
    /* (the fold's workers read the values) */
    if (pass_begin(r, in->stream_pass, 1, &e) == 0 && take(r, h, &m, &len, &e) == 0)
        free(m);
}

int pm_remote_begin(pm_inputs *in, pm_split *sp, pm_error *err)
{
    pm_buf b;
    pm_buf_init(&b);
    pm_pack_u8(&b, MSG_HOSTS);
    pm_pack_varint(&b, in->nhosts);
    for (size_t h = 0; h < in->nhosts; h++) {
        const pm_host *ho = &in->hosts[h];
        pm_pack_str(&b, ho->name);
        pm_pack_u8(&b, ho->gpu != 0);
        pm_pack_varint(&b, ho->nfiles);
        for (size_t f = 0; f < ho->nfiles; f++)
            pm_pack_str(&b, ho->files[f]);
    }
    pm_remote *r = calloc(1, sizeof *r);
    if (b.oom || !r) {
        pm_buf_free(&b);
        free(r);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    void *p = b.data;
    size_t len = b.len;
    int rc = sp->bcast(sp->user, &p, &len);
    pm_buf_free(&b);
    if (rc) {
        free(r);
        return pm_error_set(err, rc, "cannot send the hosts to the other ranks");
    }
    r->sp = sp;
    r->nhosts = in->nhosts;
    r->cap = pm_thread_count(in->nhosts) + 2;
    pthread_mutex_init(&r->start, NULL);
    pthread_mutex_init(&r->lock, NULL);
    in->remote = r;
    return 0;
}

int pm_remote_end(pm_inputs *in, pm_split *sp, int rc, pm_error *err)
{
    pm_remote *r = in ? in->remote : NULL;
    if (r) {
        pass_stop(r);
        pthread_mutex_destroy(&r->lock);
        pthread_mutex_destroy(&r->start);
        free(r);
        in->remote = NULL;
    }
    unsigned char stop = MSG_STOP;
    void *p = &stop;
    size_t len = 1;
    int t = sp->bcast(sp->user, &p, &len);
    if (t && !rc)
        rc = pm_error_set(err, t, "cannot tell the other ranks that the analysis is over");
    return pm_split_finish(sp, rc, err);
}

/* --- the other ranks ------------------------------------------------------- */

/* The hosts rank 0 found, into in->hosts (what pm_input_host_read reads). */
static int hosts_unpack(pm_inputs *in, const unsigned char *m, size_t len, size_t at, pm_error *err)
{
    uint64_t n = 0;
    if (pm_unpack_varint(m, len, &at, &n) || n > len - at)
        goto bad;
    in->hosts = calloc(n ? (size_t)n : 1, sizeof *in->hosts);
    if (!in->hosts)
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    for (size_t h = 0; h < n; h++) {
        pm_host *ho = &in->hosts[h];
        in->nhosts = h + 1;
        unsigned gpu = 0;
        uint64_t nf = 0;
        if (pm_unpack_str(m, len, &at, PM_MAX_STRING, &ho->name) ||
            pm_unpack_u8(m, len, &at, &gpu) || gpu > 1 || pm_unpack_varint(m, len, &at, &nf) ||
            nf > len - at)
            goto bad;
        ho->gpu = (int)gpu;
        ho->files = calloc(nf ? (size_t)nf : 1, sizeof *ho->files);
        if (!ho->files)
            return pm_error_set(err, PM_ENOMEM, "out of memory");
        for (size_t f = 0; f < nf; f++) {
            if (pm_unpack_str(m, len, &at, 4 * PM_MAX_STRING, &ho->files[f]))
                goto bad;
            ho->nfiles = f + 1;
        }
    }
    if (at == len)
        return 0;
bad:
    return pm_error_set(err, PM_EFORMAT, "rank 0's hosts: offset %zu: malformed message", at);
}

/* One pass of a rank > 0: its hosts read on its worker threads, a few
 * ahead (window.h: this rank's k-th host is item k, its message the
 * entry), and sent by the calling thread in host order (the transport is
 * called by that thread alone). */
typedef struct serve {
    pm_inputs *in;
    pm_split *sp;
    uint64_t pass;
    int values;
    size_t nhosts, nmine; /* the job's hosts, this rank's */
    int table_rc;         /* the hosts did not come (table_err) */
    const pm_error *table_err;
    pm_window win;
    /* buffers sent, kept for the next hosts (a fresh one costs a page
     * fault per 4 KiB on each host), under lock */
    pthread_mutex_t lock;
    pm_buf *spare;
    size_t nspare, capspare;
} serve;

/* This rank's k-th host's message into b: its profile, or why not. */
static void host_message(serve *v, size_t k, pm_buf *b)
{
    pm_split *sp = v->sp;
    size_t h = (size_t)sp->rank - 1 + k * (size_t)(sp->size - 1);
    PM_ASSERT(k < v->nmine && owner(sp, h) == sp->rank);
    pm_profile *p = NULL;
    pm_error e;
    pm_error_clear(&e);
    int rc;
    if (v->table_rc || h >= v->in->nhosts) {
        rc = v->table_rc ? v->table_rc : PM_EFORMAT;
        e = *v->table_err;
        if (!v->table_rc)
            pm_error_set(&e, rc, "rank %d: rank 0 asks for host %zu of %zu", sp->rank, h,
                         v->in->nhosts);
    } else {
        rc = pm_input_host_read(v->in, h, v->values, &p, &e);
    }
    for (int t = 0; t < 2; t++) {
        pm_pack_u8(b, MSG_HOST);
        pm_pack_varint(b, v->pass);
        pm_pack_varint(b, h);
        pm_pack_varint(b, (uint64_t) - (int64_t)rc);
        pm_pack_str(b, rc ? e.msg : "");
        if (rc || (pm_profile_pack(p, b) == 0 && !b->oom) || t)
            break;
        /* out of memory packing it: say so instead */
        pm_buf_reset(b);
        b->oom = 0;
        rc = pm_error_set(&e, PM_ENOMEM, "rank %d: %s: cannot pack its profile (out of memory)",
                          sp->rank, v->in->hosts[h].name);
    }
    pm_profile_free(p);
}

/* Item k's message, made into a spare buffer and put in the window. */
static void serve_make(serve *v, size_t k)
{
    pm_buf b;
    pthread_mutex_lock(&v->lock);
    if (v->nspare)
        b = v->spare[--v->nspare];
    else
        pm_buf_init(&b);
    pthread_mutex_unlock(&v->lock);
    host_message(v, k, &b);
    if (pm_window_put(&v->win, k, &b) != 0)
        pm_buf_free(&b);
}

static void *serve_worker(void *arg)
{
    serve *v = arg;
    size_t k;
    while (pm_window_claim(&v->win, &k))
        serve_make(v, k);
    return NULL;
}

static void drop_buf(void *entry, void *user)
{
    (void)user;
    pm_buf_free(entry);
}

static int serve_pass(pm_inputs *in, pm_split *sp, uint64_t pass, int values, size_t nhosts,
                      int table_rc, const pm_error *table_err)
{
    size_t first = (size_t)sp->rank - 1, step = (size_t)sp->size - 1;
    serve v = {.in = in,
               .sp = sp,
               .pass = pass,
               .values = values,
               .nhosts = nhosts,
               .nmine = nhosts > first ? (nhosts - first - 1) / step + 1 : 0,
               .table_rc = table_rc,
               .table_err = table_err};
    size_t nt = pm_thread_count(v.nmine);
    if (pm_window_init(&v.win, v.nmine, nt + 1, sizeof(pm_buf)) != 0)
        return PM_ENOMEM;
    v.capspare = nt + 1;
    v.spare = calloc(v.capspare, sizeof *v.spare);
    if (!v.spare)
        v.capspare = 0;
    pthread_t *thr = calloc(nt ? nt : 1, sizeof *thr);
    size_t started = 0;
    pthread_mutex_init(&v.lock, NULL);
    for (size_t i = 0; thr && i < nt; i++)
        if (pthread_create(&thr[i], NULL, serve_worker, &v) == 0)
            started++;
    int rc = 0;
    for (size_t k = 0; k < v.nmine && !rc; k++) {
        pm_buf b;
        size_t j;
        int t;
        /* no thread: this one makes each host before sending it */
        while ((t = pm_window_take_or_claim(&v.win, k, &b, started ? NULL : &j)) == 1)
            serve_make(&v, j);
        /* (nothing stops the window before the last host is taken) */
        PM_ASSERT(t == 0);
        if (t) {
            rc = PM_EFORMAT;
            break;
        }
        rc = b.oom ? PM_ENOMEM : sp->send(sp->user, b.data, b.len);
        pthread_mutex_lock(&v.lock);
        if (!b.oom && v.nspare < v.capspare) {
            pm_buf_reset(&b);
            v.spare[v.nspare++] = b;
        } else {
            pm_buf_free(&b);
        }
        pthread_mutex_unlock(&v.lock);
    }
    pm_window_stop(&v.win);
    for (size_t i = 0; i < started; i++)
        pthread_join(thr[i], NULL);
    pm_window_destroy(&v.win, drop_buf, NULL);
    for (size_t i = 0; i < v.nspare; i++)
        pm_buf_free(&v.spare[i]);
    free(v.spare);
    pthread_mutex_destroy(&v.lock);
    free(thr);
    return rc;
}

int pm_remote_serve(pm_inputs *in, pm_split *sp, int rc, pm_error *err)
{
    (void)rc; /* (its survey's failure went to rank 0, which says it) */
    int table_rc = PM_EFORMAT, trc = 0;
    pm_error table_err;
    pm_error_set(&table_err, PM_EFORMAT, "rank %d: the hosts did not come from rank 0", sp->rank);
    for (;;) {
        void *m = NULL;
        size_t len = 0, at = 0;
        unsigned kind = 0, values = 0;
        uint64_t pass = 0, n = 0;
        if ((trc = sp->bcast(sp->user, &m, &len)))
            break; /* the transport failed: nothing more will come */
        const unsigned char *b = m;
        if (pm_unpack_u8(b, len, &at, &kind) || kind == MSG_STOP) {
            free(m);
            break;
        }
        if (kind == MSG_HOSTS) {
            table_rc = hosts_unpack(in, b, len, at, &table_err);
        } else if (kind == MSG_PASS && !pm_unpack_varint(b, len, &at, &pass) &&
                   !pm_unpack_u8(b, len, &at, &values) && !pm_unpack_varint(b, len, &at, &n) &&
                   n <= SIZE_MAX) {
            trc = serve_pass(in, sp, pass, values != 0, (size_t)n, table_rc, &table_err);
        } else {
            trc = PM_EFORMAT; /* not from this build's rank 0 */
        }
        free(m);
        if (trc)
            break;
    }
    if (trc)
        pm_error_set(err, trc, "rank %d: the exchange with rank 0 failed", sp->rank);
    return pm_split_finish(sp, trc, err);
}
